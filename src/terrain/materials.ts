/**
 * Terrain materials: the SmoothGrid's 6-bit material index (smooth-grid.md), their
 * names, and their colours from `Terrain.MaterialColors` (binary-strings.md).
 */
import { DecodeError } from '../parser/errors.js';

/** Index → name; the index is what a SmoothGrid voxel stores. */
export const TERRAIN_MATERIALS = [
  'Air', 'Water', 'Grass', 'Slate', 'Concrete', 'Brick', 'Sand', 'WoodPlanks', 'Rock', 'Glacier', 'Snow',
  'Sandstone', 'Mud', 'Basalt', 'Ground', 'CrackedLava', 'Asphalt', 'Cobblestone', 'Ice', 'LeafyGrass', 'Salt',
  'Limestone', 'Pavement',
] as const;

export const AIR = 0;
export const WATER = 1;
/** A voxel's material index has 6 bits. */
export const MATERIAL_SLOTS = 64;

/** The name of a material index; indices past the table (a newer engine's) read `Material<n>`. */
export function terrainMaterialName(index: number): string {
  return TERRAIN_MATERIALS[index] ?? `Material${index}`;
}

/** `MaterialColors` is 23 RGB triples, one per material index (the first two, Air and Water, unused). */
export const MATERIAL_COLORS_BYTES = 69;

/**
 * Studio's default MaterialColors (as Roblox's own templates store them), used when a
 * place has none. The Water slot holds Terrain.WaterColor's default.
 */
export const DEFAULT_MATERIAL_COLORS: Readonly<Uint8Array> = Uint8Array.from([
  0, 0, 0, 12, 84, 92, 111, 126, 62, 88, 89, 86, 152, 152, 152, 138, 97, 73, 207, 203, 167, 172, 148, 108,
  99, 100, 102, 221, 228, 229, 235, 253, 255, 148, 124, 95, 121, 112, 98, 75, 74, 74, 140, 130, 104,
  255, 24, 67, 80, 84, 84, 134, 134, 118, 204, 210, 223, 106, 134, 64, 255, 255, 254, 255, 243, 192,
  143, 144, 135,
]);

/** Colour of materials past the table. */
const UNKNOWN_MATERIAL_COLOR = [128, 128, 128] as const;

/**
 * A place's terrain palette: RGB (sRGB bytes) per material index, 64 entries. Absent
 * or empty `MaterialColors` gives the defaults; `waterColor` (Terrain.WaterColor, 0..1)
 * fills the Water slot. A blob of any other length than 69 bytes is malformed.
 */
export function terrainPalette(materialColors?: Uint8Array | null, waterColor?: readonly number[] | null): Uint8Array {
  const palette = new Uint8Array(MATERIAL_SLOTS * 3);
  for (let i = 0; i < MATERIAL_SLOTS; i++) palette.set(UNKNOWN_MATERIAL_COLOR, i * 3);
  palette.set(DEFAULT_MATERIAL_COLORS, 0);
  if (materialColors && materialColors.length > 0) {
    if (materialColors.length !== MATERIAL_COLORS_BYTES) {
      throw new DecodeError(`MaterialColors is ${materialColors.length} bytes; it must be ${MATERIAL_COLORS_BYTES} (23 RGB triples)`, { property: 'Terrain.MaterialColors' });
    }
    // The first two triples are reserved (Air, Water): keep the defaults there.
    palette.set(materialColors.subarray(6), 6);
  }
  if (waterColor && waterColor.length === 3 && waterColor.every((c) => Number.isFinite(c))) {
    for (let c = 0; c < 3; c++) palette[WATER * 3 + c] = Math.max(0, Math.min(255, Math.round(waterColor[c]! * 255)));
  }
  return palette;
}
