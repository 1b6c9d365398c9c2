/**
 * From Roblox values to glTF ones: a CFrame's rotation as a unit quaternion, sRGB
 * colour bytes as linear factors, and a part's colour, transparency and material as
 * a PBR material.
 */
import type { GltfMaterial, Quat } from './document.js';

/**
 * Unit quaternion [x, y, z, w] of a rotation matrix given as Roblox stores it (rows:
 * `m[i][j]` is row i, column j; column j is the part's own axis j in world space).
 * A matrix that is not quite orthonormal (32-bit floats) gives the nearest rotation.
 */
export function quaternionOf(m: readonly (readonly number[])[]): Quat {
  const m00 = m[0]![0]!, m01 = m[0]![1]!, m02 = m[0]![2]!;
  const m10 = m[1]![0]!, m11 = m[1]![1]!, m12 = m[1]![2]!;
  const m20 = m[2]![0]!, m21 = m[2]![1]!, m22 = m[2]![2]!;
  const trace = m00 + m11 + m22;
  let x: number, y: number, z: number, w: number;
  if (trace > 0) {
    const s = Math.sqrt(trace + 1) * 2;
    w = s / 4; x = (m21 - m12) / s; y = (m02 - m20) / s; z = (m10 - m01) / s;
  } else if (m00 > m11 && m00 > m22) {
    const s = Math.sqrt(1 + m00 - m11 - m22) * 2;
    w = (m21 - m12) / s; x = s / 4; y = (m01 + m10) / s; z = (m02 + m20) / s;
  } else if (m11 > m22) {
    const s = Math.sqrt(1 + m11 - m00 - m22) * 2;
    w = (m02 - m20) / s; x = (m01 + m10) / s; y = s / 4; z = (m12 + m21) / s;
  } else {
    const s = Math.sqrt(1 + m22 - m00 - m11) * 2;
    w = (m10 - m01) / s; x = (m02 + m20) / s; y = (m12 + m21) / s; z = s / 4;
  }
  const length = Math.hypot(x, y, z, w);
  if (!(length > 0) || !Number.isFinite(length)) return [0, 0, 0, 1];
  return [x / length, y / length, z / length, w / length];
}

/** sRGB byte (0..255) to linear 0..1, as glTF factors and vertex colours are linear. */
export function srgbToLinear(byte: number): number {
  const c = Math.min(255, Math.max(0, byte)) / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** Metal-like Roblox materials, and how rough each material reads. */
const METALLIC: Readonly<Record<string, number>> = { Metal: 0.9, DiamondPlate: 0.9, CorrodedMetal: 0.7, Foil: 1 };
const ROUGHNESS: Readonly<Record<string, number>> = {
  SmoothPlastic: 0.3, Plastic: 0.5, Glass: 0.05, Ice: 0.15, Glacier: 0.2, Marble: 0.25, Neon: 0.5, ForceField: 0.5,
  Metal: 0.35, DiamondPlate: 0.4, Foil: 0.2, CorrodedMetal: 0.8,
};

export interface PartLook {
  /** sRGB bytes. */
  color: readonly [number, number, number];
  /** Roblox Transparency, 0 opaque .. 1 invisible. */
  transparency: number;
  /** Enum.Material name (Plastic, Neon, Metal...), null when unknown. */
  material: string | null;
}

/**
 * A part's look as a PBR material: base colour from Color (linear), alpha 1 −
 * Transparency with BLEND below 1, Neon as emissive in its colour, metals metallic,
 * roughness by material (0.8 for rough ones such as Concrete or Grass).
 */
export function partMaterial(look: PartLook): GltfMaterial {
  const [r, g, b] = look.color.map(srgbToLinear) as [number, number, number];
  const alpha = 1 - Math.min(1, Math.max(0, Number.isFinite(look.transparency) ? look.transparency : 0));
  const name = look.material ?? 'Plastic';
  const material: GltfMaterial = {
    name,
    baseColor: [r, g, b, alpha],
    metallic: METALLIC[name] ?? 0,
    roughness: ROUGHNESS[name] ?? 0.8,
  };
  if (name === 'Neon') material.emissive = [r, g, b];
  if (alpha < 1) material.alphaMode = 'BLEND';
  return material;
}
