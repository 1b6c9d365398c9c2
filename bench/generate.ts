/**
 * Realistic synthetic places of any size, for tests and benchmarks that need large
 * inputs without committing large files. `generatePlace` builds the DOM directly
 * (DataModel services as roots, a Workspace of models full of Parts and MeshParts
 * with Decals, Textures, Sounds and ParticleEmitters, Luau scripts old and new, a
 * sky and a GUI), with property names and types as Studio writes them (taken from
 * the places in ../shared/corpus). `encode` turns it into an .rbxl.
 *
 * The same seed gives the same place. Properties live in one column table per
 * class, backed by typed arrays (or a single value while a column stays constant),
 * so 200k parts stay far below one JS object per property value.
 *
 * CLI: node dist/bench/generate.js --parts N --scripts M --assets K [--seed S]
 *      [--script-lines L] [--copies C] [--uncompressed] --out FILE
 */
import { realpathSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Column, Dom } from '../src/parser/dom.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import type { CFrameValue, Matrix3, PropType, Value, Vec3 } from '../src/parser/values.js';
import { encode } from '../src/parser/writer/index.js';

export interface GenerateOptions {
  /** BaseParts (Part and MeshPart, the Baseplate included). */
  parts: number;
  /** Script, LocalScript and ModuleScript instances. */
  scripts: number;
  /** Distinct asset ids referenced (every one is used when there are enough references). */
  uniqueAssets: number;
  seed?: number;
  /** Approximate lines per script (default 200). */
  scriptLines?: number;
  /** Share of parts made UnionOperations (collision hulls in PhysicalConfigData, an AssetId when there are assets); default 0. */
  unionShare?: number;
  /**
   * Extra copies of one old free-model Script (a spinner whose loop never yields) in the
   * Workspace's models, every fourth disabled, as maps built from free models have
   * (default 0: none, and the place is what it was without this option).
   */
  freeModelCopies?: number;
}

// ---------------------------------------------------------------------------
// Deterministic randomness

export type Random = () => number;

/** mulberry32: a tiny, well-mixed 32-bit PRNG; values in [0, 1). */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (rng: Random, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(rng: Random, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const chance = (rng: Random, p: number): boolean => rng() < p;
const hex = (rng: Random, digits: number): string => {
  let out = '';
  for (let i = 0; i < digits; i++) out += '0123456789abcdef'[Math.floor(rng() * 16)];
  return out;
};

// ---------------------------------------------------------------------------
// Columns: typed planes per property, a single value while the column is constant

interface Layout {
  width: number;
  plane: (length: number) => Float32Array | Float64Array | Int32Array | Uint32Array | Uint8Array;
  put: (plane: { [i: number]: number }, at: number, value: Value) => void;
  get: (plane: ArrayLike<number>, at: number) => Value;
}

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');
const f32 = (width: number, put: Layout['put'], get: Layout['get']): Layout => ({ width, plane: (n) => new Float32Array(n), put, get });
const vecLayout = (width: 2 | 3): Layout => width === 2
  ? f32(2, (p, at, v) => { p[at] = (v as number[])[0]!; p[at + 1] = (v as number[])[1]!; }, (p, at) => [p[at]!, p[at + 1]!])
  : f32(3, (p, at, v) => { p[at] = (v as number[])[0]!; p[at + 1] = (v as number[])[1]!; p[at + 2] = (v as number[])[2]!; },
    (p, at) => [p[at]!, p[at + 1]!, p[at + 2]!]);

const LAYOUTS: Partial<Record<PropType, Layout>> = {
  Bool: { width: 1, plane: (n) => new Uint8Array(n), put: (p, at, v) => { p[at] = v ? 1 : 0; }, get: (p, at) => p[at] === 1 },
  Int32: { width: 1, plane: (n) => new Int32Array(n), put: (p, at, v) => { p[at] = v as number; }, get: (p, at) => p[at]! },
  Ref: { width: 1, plane: (n) => new Int32Array(n), put: (p, at, v) => { p[at] = v as number; }, get: (p, at) => p[at]! },
  Enum: { width: 1, plane: (n) => new Uint32Array(n), put: (p, at, v) => { p[at] = v as number; }, get: (p, at) => p[at]! },
  BrickColor: { width: 1, plane: (n) => new Uint32Array(n), put: (p, at, v) => { p[at] = v as number; }, get: (p, at) => p[at]! },
  SharedString: { width: 1, plane: (n) => new Uint32Array(n), put: (p, at, v) => { p[at] = v as number; }, get: (p, at) => p[at]! },
  Float32: f32(1, (p, at, v) => { p[at] = v as number; }, (p, at) => p[at]!),
  Float64: { width: 1, plane: (n) => new Float64Array(n), put: (p, at, v) => { p[at] = v as number; }, get: (p, at) => p[at]! },
  Vector2: vecLayout(2),
  Vector3: vecLayout(3),
  Color3: vecLayout(3),
  NumberRange: vecLayout(2),
  Color3uint8: {
    width: 3, plane: (n) => new Uint8Array(n),
    put: (p, at, v) => { const c = v as number[]; p[at] = c[0]!; p[at + 1] = c[1]!; p[at + 2] = c[2]!; },
    get: (p, at) => [p[at]!, p[at + 1]!, p[at + 2]!],
  },
  CFrame: f32(12, (p, at, v) => {
    const { position, orientation } = v as CFrameValue;
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) p[at + r * 3 + c] = orientation[r]![c]!;
    p[at + 9] = position[0]; p[at + 10] = position[1]; p[at + 11] = position[2];
  }, (p, at) => ({
    position: [p[at + 9]!, p[at + 10]!, p[at + 11]!],
    orientation: [[p[at]!, p[at + 1]!, p[at + 2]!], [p[at + 3]!, p[at + 4]!, p[at + 5]!], [p[at + 6]!, p[at + 7]!, p[at + 8]!]],
  })),
  /** 32 hex digits as four u32 words. */
  UniqueId: {
    width: 4, plane: (n) => new Uint32Array(n),
    put: (p, at, v) => { for (let k = 0; k < 4; k++) p[at + k] = parseInt((v as string).slice(k * 8, k * 8 + 8), 16); },
    get: (p, at) => hex8(p[at]!) + hex8(p[at + 1]!) + hex8(p[at + 2]!) + hex8(p[at + 3]!),
  },
};

interface ColumnBuilder {
  push(value: Value): void;
  set(row: number, value: Value): void;
  finish(): Column;
}

type Plane = ArrayLike<number> & { [i: number]: number; length: number; set(source: ArrayLike<number>): void };

/**
 * Keeps one value while every row has it; from the first different row on, stores
 * rows in a typed plane (the layouts above), as ids into a table of distinct
 * strings (String values that are text), or in a plain array (anything else).
 */
function columnBuilder(type: PropType): ColumnBuilder {
  const layout = LAYOUTS[type];
  let mode: 'constant' | 'plane' | 'strings' | 'values' = 'constant';
  let length = 0;
  let constant: Value = null;
  let plane: Plane = new Uint8Array(0);
  const strings: string[] = [];
  const stringIds = new Map<string, number>();
  let values: Value[] = [];

  const ensure = (rows: number, width: number, make: (size: number) => Plane) => {
    if (plane.length >= rows * width) return;
    const next = make(Math.max(16, rows * 2) * width);
    next.set(plane);
    plane = next;
  };
  const read = (row: number): Value =>
    mode === 'constant' ? constant : mode === 'plane' ? layout!.get(plane, row * layout!.width)
      : mode === 'strings' ? strings[plane[row]!]! : values[row]!;
  const write = (row: number, value: Value) => {
    if (mode === 'plane') {
      ensure(row + 1, layout!.width, layout!.plane);
      layout!.put(plane, row * layout!.width, value);
    } else if (mode === 'strings' && typeof value === 'string') {
      ensure(row + 1, 1, (size) => new Int32Array(size));
      let id = stringIds.get(value);
      if (id === undefined) { id = strings.push(value) - 1; stringIds.set(value, id); }
      plane[row] = id;
    } else {
      if (mode !== 'values') values = Array.from({ length }, (_, r) => read(r));
      mode = 'values';
      values[row] = value;
    }
  };
  /** Leaves constant mode, writing the constant into every row so far. */
  const spread = (next: Value) => {
    const kept = constant;
    mode = layout ? 'plane' : (type === 'String' || type === 'Bytecode') && typeof kept === 'string' && typeof next === 'string' ? 'strings' : 'values';
    if (mode === 'values') values = new Array<Value>(length).fill(kept);
    else for (let row = 0; row < length; row++) write(row, kept);
  };

  return {
    push(value) {
      if (mode === 'constant' && (length === 0 || value === constant)) { constant = value; length++; return; }
      if (mode === 'constant') spread(value);
      write(length++, value);
    },
    set(row, value) {
      if (mode === 'constant' && value === constant) return;
      if (mode === 'constant') spread(value);
      write(row, value);
    },
    finish(): Column {
      const n = length;
      switch (mode) {
        case 'constant': { const value = constant; return { type, length: n, get: () => value }; }
        case 'plane': { const p = plane, { width, get } = layout!; return { type, length: n, get: (row) => get(p, row * width) }; }
        case 'strings': { const p = plane, table = strings; return { type, length: n, get: (row) => table[p[row]!]! }; }
        case 'values': { const v = values; return { type, length: n, get: (row) => v[row]! }; }
      }
    },
  };
}

// ---------------------------------------------------------------------------
// Class schemas (property names and types as Studio writes them)

type Schema = Record<string, [PropType, Value]>;

const IDENTITY: Matrix3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
const ORIGIN: CFrameValue = { position: [0, 0, 0], orientation: IDENTITY };
const ZERO3: Vec3 = [0, 0, 0];
const WHITE: Vec3 = [1, 1, 1];
const NO_ID = '00000000000000000000000000000000';

const INSTANCE: Schema = {
  AttributesSerialize: ['String', ''], Capabilities: ['SecurityCapabilities', 0], DefinesCapabilities: ['Bool', false],
  HistoryId: ['UniqueId', NO_ID], Name: ['String', ''], SourceAssetId: ['Int64', -1], Tags: ['String', ''],
  UniqueId: ['UniqueId', NO_ID],
};

const surfaces = (): Schema => {
  const out: Schema = {};
  for (const face of ['Back', 'Bottom', 'Front', 'Left', 'Right', 'Top']) {
    out[`${face}ParamA`] = ['Float32', -0.5];
    out[`${face}ParamB`] = ['Float32', 0.5];
    out[`${face}Surface`] = ['Enum', 0];
    out[`${face}SurfaceInput`] = ['Enum', 0];
  }
  return out;
};

const BASE_PART: Schema = {
  ...INSTANCE, ...surfaces(),
  Anchored: ['Bool', true], AudioCanCollide: ['Bool', true], CFrame: ['CFrame', ORIGIN], CanCollide: ['Bool', true],
  CanQuery: ['Bool', true], CanTouch: ['Bool', true], CastShadow: ['Bool', true], CollisionGroup: ['String', 'Default'],
  CollisionGroupId: ['Int32', 0], Color3uint8: ['Color3uint8', [163, 162, 165]], CustomPhysicalProperties: ['PhysicalProperties', 'Default'],
  EnableFluidForces: ['Bool', true], Locked: ['Bool', false], Massless: ['Bool', false], Material: ['Enum', 256],
  MaterialVariantSerialized: ['String', ''], PivotOffset: ['CFrame', ORIGIN], Reflectance: ['Float32', 0],
  RootPriority: ['Int32', 0], RotVelocity: ['Vector3', ZERO3], Transparency: ['Float32', 0], Velocity: ['Vector3', ZERO3],
  size: ['Vector3', [4, 1, 2]],
};

const SCRIPT_BASE: Schema = { ...INSTANCE, LinkedSource: ['String', ''], ScriptGuid: ['String', ''], Source: ['String', ''] };

const SERVICE_ORDER = [
  'Workspace', 'Players', 'Lighting', 'MaterialService', 'ReplicatedFirst', 'ReplicatedStorage', 'ServerScriptService',
  'ServerStorage', 'StarterGui', 'StarterPack', 'StarterPlayer', 'Teams', 'SoundService', 'TextChatService', 'Chat',
  'CollectionService', 'HttpService', 'TweenService',
] as const;

const SCHEMAS: Record<string, Schema> = {
  Workspace: {
    ...INSTANCE, AirDensity: ['Float32', Math.fround(0.0012)], AllowThirdPartySales: ['Bool', false],
    ClientAnimatorThrottling: ['Enum', 0], CollisionGroupData: ['String', { base64: 'AQEABP////8HRGVmYXVsdA==' }],
    CurrentCamera: ['Ref', -1], DistributedGameTime: ['Float64', 0], ExplicitAutoJoints: ['Bool', true],
    FallenPartsDestroyHeight: ['Float32', -500], GlobalWind: ['Vector3', ZERO3], Gravity: ['Float32', Math.fround(196.2)],
    ModelMeshCFrame: ['CFrame', ORIGIN], ModelMeshData: ['SharedString', 0], ModelMeshSize: ['Vector3', ZERO3],
    PrimaryPart: ['Ref', -1], StreamingEnabled: ['Bool', true], StreamingMinRadius: ['Int32', 64],
    StreamingTargetRadius: ['Int32', 1024], TerrainWeldsFixed: ['Bool', true], WorldPivotData: ['OptionalCFrame', ORIGIN],
  },
  Lighting: {
    ...INSTANCE, Ambient: ['Color3', [0.27450981736183167, 0.27450981736183167, 0.27450981736183167]], Brightness: ['Float32', 3],
    ColorShift_Bottom: ['Color3', ZERO3], ColorShift_Top: ['Color3', ZERO3], EnvironmentDiffuseScale: ['Float32', 1],
    EnvironmentSpecularScale: ['Float32', 1], ExposureCompensation: ['Float32', 0],
    FogColor: ['Color3', [0.7529411911964417, 0.7529411911964417, 0.7529411911964417]], FogEnd: ['Float32', 100000],
    FogStart: ['Float32', 0], GeographicLatitude: ['Float32', 0], GlobalShadows: ['Bool', true],
    OutdoorAmbient: ['Color3', [0.27450981736183167, 0.27450981736183167, 0.27450981736183167]], Outlines: ['Bool', false],
    ShadowSoftness: ['Float32', Math.fround(0.2)], Technology: ['Enum', 3], TimeOfDay: ['String', '14:30:00'],
  },
  StarterPlayer: {
    ...INSTANCE, AllowCustomAnimations: ['Bool', true], AutoJumpEnabled: ['Bool', true], CameraMaxZoomDistance: ['Float32', 400],
    CameraMinZoomDistance: ['Float32', 0.5], CameraMode: ['Enum', 0], CharacterJumpHeight: ['Float32', Math.fround(7.2)],
    CharacterJumpPower: ['Float32', 50], CharacterWalkSpeed: ['Float32', 16], GameSettingsAssetIDFace: ['Int64', 0],
    GameSettingsScaleRangeHead: ['NumberRange', [Math.fround(0.95), 1]], LoadCharacterAppearance: ['Bool', true],
  },
  StarterGui: { ...INSTANCE, ResetPlayerGuiOnSpawn: ['Bool', true], ScreenOrientation: ['Enum', 4], ShowDevelopmentGui: ['Bool', true] },
  Players: { ...INSTANCE, CharacterAutoLoads: ['Bool', true], MaxPlayersInternal: ['Int32', 8], PreferredPlayersInternal: ['Int32', 0], RespawnTime: ['Float32', 5] },
  SoundService: { ...INSTANCE, AmbientReverb: ['Enum', 0], DistanceFactor: ['Float32', Math.fround(3.33)], DopplerScale: ['Float32', 1], RolloffScale: ['Float32', 1] },
  Camera: {
    ...INSTANCE, CFrame: ['CFrame', ORIGIN], CameraSubject: ['Ref', -1], CameraType: ['Enum', 0], FieldOfView: ['Float32', 70],
    FieldOfViewMode: ['Enum', 0], Focus: ['CFrame', ORIGIN], HeadLocked: ['Bool', true], HeadScale: ['Float32', 1],
  },
  Terrain: {
    ...BASE_PART, AcquisitionMethod: ['Enum', 0], Decoration: ['Bool', true], GrassLength: ['Float32', Math.fround(0.7)], Locked: ['Bool', true],
    MaterialColors: ['String', { base64: 'AAAAAAAAb34+WFlWmJiYimFJz8unrJRsY2Rm3eTl6/3/lHxfeXBiS0pKjIJo/xhDUFRUhoZ2zNLfaoZA///+//PAj5CH' }],
    PhysicsGrid: ['String', '\u0002\u0003\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000'],
    SmoothGrid: ['String', '\u0001\u0005'], WaterColor: ['Color3', [0.0470588244497776, 0.3294117748737335, 0.3607843220233917]],
    WaterReflectance: ['Float32', 1], WaterTransparency: ['Float32', Math.fround(0.3)], WaterWaveSize: ['Float32', Math.fround(0.15)],
    WaterWaveSpeed: ['Float32', 10], size: ['Vector3', [2044, 252, 2044]],
  },
  Part: { ...BASE_PART, formFactorRaw: ['Enum', 1], shape: ['Enum', 1] },
  SpawnLocation: {
    ...BASE_PART, AllowTeamChangeOnTouch: ['Bool', false], Duration: ['Int32', 10], Enabled: ['Bool', true], Neutral: ['Bool', true],
    TeamColor: ['BrickColor', 194], formFactorRaw: ['Enum', 1], shape: ['Enum', 1],
  },
  MeshPart: {
    ...BASE_PART, CollisionFidelity: ['Enum', 0], DoubleSided: ['Bool', false], FluidFidelityInternal: ['Enum', 0],
    HasJointOffset: ['Bool', false], HasSkinnedMesh: ['Bool', false], InitialSize: ['Vector3', [1, 1, 1]],
    JointOffset: ['Vector3', ZERO3], LODData: ['String', ''], MeshId: ['String', ''], PhysicalConfigData: ['SharedString', 0],
    PhysicsData: ['String', ''], RenderFidelity: ['Enum', 1], TextureID: ['String', ''], VertexCount: ['Int32', 0],
  },
  UnionOperation: {
    ...BASE_PART, AssetId: ['String', ''], ChildData: ['String', ''], CollisionFidelity: ['Enum', 0], FluidFidelityInternal: ['Enum', 0],
    FormFactor: ['Enum', 3], InitialSize: ['Vector3', [1, 1, 1]], MeshData: ['String', ''], PhysicalConfigData: ['SharedString', 0],
    PhysicsData: ['String', ''], RenderFidelity: ['Enum', 1], SmoothingAngle: ['Float32', 0], UsePartColor: ['Bool', false],
  },
  Model: {
    ...INSTANCE, LevelOfDetail: ['Enum', 0], ModelMeshCFrame: ['CFrame', ORIGIN], ModelMeshData: ['SharedString', 0],
    ModelMeshSize: ['Vector3', ZERO3], ModelStreamingMode: ['Enum', 0], NeedsPivotMigration: ['Bool', false],
    PrimaryPart: ['Ref', -1], ScaleFactor: ['Float32', 1], WorldPivotData: ['OptionalCFrame', null],
  },
  Folder: { ...INSTANCE },
  StarterPlayerScripts: { ...INSTANCE },
  StarterCharacterScripts: { ...INSTANCE },
  Decal: {
    ...INSTANCE, Color3: ['Color3', WHITE], Face: ['Enum', 5], Texture: ['String', ''], Transparency: ['Float32', 0], ZIndex: ['Int32', 1],
  },
  Texture: {
    ...INSTANCE, Color3: ['Color3', WHITE], Face: ['Enum', 5], OffsetStudsU: ['Float32', 0], OffsetStudsV: ['Float32', 0],
    StudsPerTileU: ['Float32', 8], StudsPerTileV: ['Float32', 8], Texture: ['String', ''], Transparency: ['Float32', 0], ZIndex: ['Int32', 1],
  },
  Sound: {
    ...INSTANCE, EmitterSize: ['Float32', 10], Looped: ['Bool', false], PlayOnRemove: ['Bool', false], PlaybackSpeed: ['Float32', 1],
    Playing: ['Bool', false], RollOffMaxDistance: ['Float32', 10000], RollOffMinDistance: ['Float32', 10], RollOffMode: ['Enum', 0],
    SoundGroup: ['Ref', -1], SoundId: ['String', ''], TimePosition: ['Float64', 0], Volume: ['Float32', 0.5],
  },
  ParticleEmitter: {
    ...INSTANCE, Acceleration: ['Vector3', ZERO3], Brightness: ['Float32', 1],
    Color: ['ColorSequence', { keypoints: [{ time: 0, color: WHITE }, { time: 1, color: WHITE }] }],
    Drag: ['Float32', 0], EmissionDirection: ['Enum', 1], Enabled: ['Bool', true], Lifetime: ['NumberRange', [5, 10]],
    LightEmission: ['Float32', 0], LightInfluence: ['Float32', 0], LockedToPart: ['Bool', false], Rate: ['Float32', 20],
    RotSpeed: ['NumberRange', [0, 0]], Rotation: ['NumberRange', [0, 0]], Shape: ['Enum', 0],
    Size: ['NumberSequence', { keypoints: [{ time: 0, value: 1, envelope: 0 }, { time: 1, value: 1, envelope: 0 }] }],
    Speed: ['NumberRange', [5, 5]], SpreadAngle: ['Vector2', [0, 0]],
    Squash: ['NumberSequence', { keypoints: [{ time: 0, value: 0, envelope: 0 }, { time: 1, value: 0, envelope: 0 }] }],
    Texture: ['String', 'rbxasset://textures/particles/sparkles_main.dds'], TimeScale: ['Float32', 1],
    Transparency: ['NumberSequence', { keypoints: [{ time: 0, value: 0, envelope: 0 }, { time: 1, value: 0, envelope: 0 }] }],
    VelocityInheritance: ['Float32', 0], ZOffset: ['Float32', 0],
  },
  Sky: {
    ...INSTANCE, CelestialBodiesShown: ['Bool', true], MoonAngularSize: ['Float32', 11], MoonTextureId: ['String', ''],
    SkyboxBk: ['String', ''], SkyboxDn: ['String', ''], SkyboxFt: ['String', ''], SkyboxLf: ['String', ''],
    SkyboxRt: ['String', ''], SkyboxUp: ['String', ''], StarCount: ['Int32', 3000], SunAngularSize: ['Float32', 21],
    SunTextureId: ['String', ''],
  },
  Atmosphere: {
    ...INSTANCE, Color: ['Color3', [0.7803921699523926, 0.7803921699523926, 0.7803921699523926]],
    Decay: ['Color3', [0.4156862795352936, 0.43921568989753723, 0.4901960790157318]], Density: ['Float32', Math.fround(0.3)],
    Glare: ['Float32', 0], Haze: ['Float32', 0], Offset: ['Float32', 0.25],
  },
  Script: { ...SCRIPT_BASE, Disabled: ['Bool', false], RunContext: ['Enum', 0] },
  LocalScript: { ...SCRIPT_BASE, Disabled: ['Bool', false], RunContext: ['Enum', 0] },
  ModuleScript: { ...SCRIPT_BASE },
  ScreenGui: {
    ...INSTANCE, AutoLocalize: ['Bool', true], ClipToDeviceSafeArea: ['Bool', true], DisplayOrder: ['Int32', 0], Enabled: ['Bool', true],
    IgnoreGuiInset: ['Bool', false], ResetOnSpawn: ['Bool', true], RootLocalizationTable: ['Ref', -1],
    SafeAreaCompatibility: ['Enum', 1], ScreenInsets: ['Enum', 2], ZIndexBehavior: ['Enum', 1],
  },
  ImageLabel: {
    ...INSTANCE, Active: ['Bool', false], AnchorPoint: ['Vector2', [0, 0]], AutoLocalize: ['Bool', true], AutomaticSize: ['Enum', 0],
    BackgroundColor3: ['Color3', WHITE], BackgroundTransparency: ['Float32', 1], BorderColor3: ['Color3', [0.10588236153125763, 0.16470588743686676, 0.20784315466880798]],
    BorderMode: ['Enum', 0], BorderSizePixel: ['Int32', 0], ClipsDescendants: ['Bool', false], Draggable: ['Bool', false],
    Image: ['String', ''], ImageColor3: ['Color3', WHITE], ImageRectOffset: ['Vector2', [0, 0]], ImageRectSize: ['Vector2', [0, 0]],
    ImageTransparency: ['Float32', 0], LayoutOrder: ['Int32', 0], NextSelectionDown: ['Ref', -1], NextSelectionLeft: ['Ref', -1],
    NextSelectionRight: ['Ref', -1], NextSelectionUp: ['Ref', -1], Position: ['UDim2', [[0, 0], [0, 0]]], ResampleMode: ['Enum', 0],
    RootLocalizationTable: ['Ref', -1], Rotation: ['Float32', 0], ScaleType: ['Enum', 0], Selectable: ['Bool', false],
    SelectionImageObject: ['Ref', -1], Size: ['UDim2', [[0, 100], [0, 100]]], SizeConstraint: ['Enum', 0],
    SliceCenter: ['Rect', [[0, 0], [0, 0]]], SliceScale: ['Float32', 1], TileSize: ['UDim2', [[1, 0], [1, 0]]], Visible: ['Bool', true],
    ZIndex: ['Int32', 1],
  },
};

/** Services with nothing special beyond the Instance properties. */
const PLAIN = (className: string): Schema => SCHEMAS[className] ?? INSTANCE;

// ---------------------------------------------------------------------------
// The DOM under construction

interface ClassTable {
  /** The table's id in the DomBuilder. */
  readonly table: number;
  readonly names: string[];
  readonly defaults: Value[];
  readonly builders: ColumnBuilder[];
  readonly index: Map<string, number>;
}

/** Instances are rows (their referent is the row too); -1 is "no parent". */
interface PlaceBuilder {
  add(className: string, name: string, parent: number, values?: Record<string, Value>): number;
  set(row: number, property: string, value: Value): void;
  finish(sharedStrings: Uint8Array[]): Dom;
}

function placeBuilder(rng: Random): PlaceBuilder {
  const dom = new DomBuilder('binary');
  const classes = new Map<string, ClassTable>();
  const rowClass: ClassTable[] = [];
  const rowInTable: number[] = [];
  // UniqueIds as Studio makes them: one random and time per session, a running index.
  const idPrefix = hex(rng, 16) + (0x02e00000 + int(rng, 0, 0xfffff)).toString(16).padStart(8, '0');
  let nextIndex = int(rng, 0x1000, 0x8000);

  const classTable = (className: string): ClassTable => {
    let entry = classes.get(className);
    if (!entry) {
      const schema = PLAIN(className);
      const names = Object.keys(schema).sort();
      entry = {
        table: dom.addTable(className), names, defaults: names.map((n) => schema[n]![1]),
        builders: names.map((n) => columnBuilder(schema[n]![0])), index: new Map(names.map((n, i) => [n, i])),
      };
      classes.set(className, entry);
    }
    return entry;
  };

  return {
    add(className, name, parent, values) {
      const entry = classTable(className);
      const rowValues = entry.defaults.slice();
      rowValues[entry.index.get('Name')!] = name;
      rowValues[entry.index.get('UniqueId')!] = idPrefix + (nextIndex++).toString(16).padStart(8, '0');
      if (values) {
        for (const prop in values) {
          const at = entry.index.get(prop);
          if (at === undefined) throw new Error(`generator: ${className} has no property ${prop}`);
          rowValues[at] = values[prop]!;
        }
      }
      for (let i = 0; i < rowValues.length; i++) entry.builders[i]!.push(rowValues[i]!);
      rowInTable.push(dom.tableLength(entry.table));
      rowClass.push(entry);
      return dom.add(entry.table, parent);
    },
    set(row, property, value) {
      const entry = rowClass[row]!;
      const at = entry.index.get(property);
      if (at === undefined) throw new Error(`generator: this class has no property ${property}`);
      entry.builders[at]!.set(rowInTable[row]!, value);
    },
    finish(sharedStrings) {
      for (const entry of classes.values()) {
        const columns = dom.columns(entry.table);
        entry.names.forEach((name, i) => columns.set(name, entry.builders[i]!.finish()));
      }
      return dom.build({ metadata: [['ExplicitAutoJoints', 'true']], sharedStrings });
    },
  };
}

// ---------------------------------------------------------------------------
// Assets: K distinct ids, each used once before any repeats

interface AssetPool {
  readonly size: number;
  /** An asset id; the first K calls return K distinct ids. */
  next(): number;
  /** An asset id as a content string, in one of the forms places carry. */
  uri(): string;
  /** Ids not handed out yet. */
  unused(): number[];
}

function assetPool(rng: Random, size: number): AssetPool {
  const ids: number[] = [];
  const seen = new Set<number>();
  while (ids.length < size) {
    const id = int(rng, 100_000, 18_000_000_000);
    if (!seen.has(id)) { seen.add(id); ids.push(id); }
  }
  let used = 0;
  const next = () => {
    if (size === 0) throw new Error('generator: asset pool is empty');
    return used < size ? ids[used++]! : pick(rng, ids);
  };
  return {
    size,
    next,
    uri: () => {
      const id = next();
      return chance(rng, 0.85) ? `rbxassetid://${id}` : `http://www.roblox.com/asset/?id=${id}`;
    },
    unused: () => ids.slice(used),
  };
}

// ---------------------------------------------------------------------------
// Geometry and appearance

const MATERIALS = [256, 256, 256, 272, 272, 288, 512, 528, 784, 800, 816, 832, 848, 864, 880, 1040, 1056, 1088, 1280, 1296, 1312, 1536, 1568];
const COLORS: Vec3[] = [
  [163, 162, 165], [91, 93, 105], [27, 42, 53], [242, 243, 243], [196, 40, 28], [13, 105, 172], [75, 151, 75],
  [245, 205, 48], [218, 133, 65], [124, 92, 70], [106, 57, 9], [161, 165, 162], [99, 95, 98], [255, 176, 0],
];
const BASIC_TURNS: Matrix3[] = [
  [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], [[-1, 0, 0], [0, 1, 0], [0, 0, -1]], [[0, 0, -1], [0, 1, 0], [1, 0, 0]],
  [[1, 0, 0], [0, 0, -1], [0, 1, 0]], [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
];

const f = Math.fround;

/** Mostly axis-aligned, some quarter turns, some arbitrary yaw with a little tilt. */
function orientation(rng: Random): Matrix3 {
  const roll = rng();
  if (roll < 0.7) return IDENTITY;
  if (roll < 0.85) return pick(rng, BASIC_TURNS);
  return yawPitch(rng() * Math.PI * 2, (rng() - 0.5) * 0.3);
}

/** Ry(yaw) * Rx(pitch), rounded to 32-bit floats as a file stores them. */
function yawPitch(yaw: number, pitch: number): Matrix3 {
  const cy = Math.cos(yaw), sy = Math.sin(yaw), cp = Math.cos(pitch), sp = Math.sin(pitch);
  return [[f(cy), f(sy * sp), f(sy * cp)], [0, f(cp), f(-sp)], [f(-sy), f(cy * sp), f(cy * cp)]];
}

const half = (rng: Random, min: number, max: number): number => int(rng, min * 2, max * 2) / 2;

// ---------------------------------------------------------------------------
// Luau sources

const SERVICES = ['Players', 'ReplicatedStorage', 'RunService', 'TweenService', 'UserInputService', 'DataStoreService',
  'HttpService', 'Debris', 'SoundService', 'CollectionService', 'Lighting', 'ServerStorage'];
const NOUNS = ['player', 'part', 'door', 'coin', 'enemy', 'weapon', 'zone', 'pet', 'round', 'shop', 'score', 'item', 'npc', 'tool'];
const VERBS = ['update', 'spawn', 'reset', 'handle', 'give', 'check', 'load', 'save', 'open', 'close', 'fire', 'apply'];
const SCRIPT_NAMES = ['Main', 'GameLoop', 'DataHandler', 'KillBrick', 'DoorController', 'ShopServer', 'Leaderstats',
  'CoinCollector', 'RoundManager', 'Teleporter', 'SpinScript', 'Sprint', 'CameraController', 'Util', 'Config', 'Signal'];

const camel = (a: string, b: string) => a + b[0]!.toUpperCase() + b.slice(1);

interface SourceOptions { kind: 'Script' | 'LocalScript' | 'ModuleScript'; legacy: boolean; lines: number; pool: AssetPool }

/**
 * Plausible Luau: services, a config table, functions, loops and event handlers.
 * Legacy scripts use the patterns an importer flags (wait, spawn, delay, :connect,
 * game.Players.LocalPlayer, require(assetId), Instance.new with a parent).
 */
function luauSource(rng: Random, { kind, legacy, lines, pool }: SourceOptions): string {
  const out: string[] = [];
  const services = new Set<string>();
  const serviceCount = int(rng, 2, 5);
  while (services.size < serviceCount) services.add(pick(rng, SERVICES));
  for (const service of services) {
    out.push(legacy && chance(rng, 0.4) ? `local ${service} = game.${service}` : `local ${service} = game:GetService("${service}")`);
  }
  if (kind === 'LocalScript') out.push(legacy ? 'local player = game.Players.LocalPlayer' : 'local player = game:GetService("Players").LocalPlayer');
  const assets = pool.size > 0;
  if (legacy && assets && chance(rng, 0.6)) out.push(`local Library = require(${pool.next()})`);
  else if (kind !== 'ModuleScript') out.push('local Shared = require(game:GetService("ReplicatedStorage"):WaitForChild("Modules"):WaitForChild("Util"))');
  out.push('');
  if (kind === 'ModuleScript') out.push('local Module = {}', '');
  out.push('local CONFIG = {');
  const keys: string[] = [];
  for (let i = int(rng, 3, 8); i > 0; i--) {
    const key = camel(pick(rng, NOUNS), pick(rng, ['speed', 'damage', 'cooldown', 'range', 'amount', 'count']));
    keys.push(key[0]!.toUpperCase() + key.slice(1));
    out.push(`\t${keys.at(-1)} = ${int(rng, 1, 250)},`);
  }
  out.push('}', '');

  const wait = (s: string) => (legacy ? `wait(${s})` : `task.wait(${s})`);
  const connect = legacy ? 'connect' : 'Connect';
  const blocks: (() => string[])[] = [
    () => {
      const fn = camel(pick(rng, VERBS), pick(rng, NOUNS));
      const head = kind === 'ModuleScript' ? `function Module.${fn}(target, amount)` : `local function ${fn}(target, amount)`;
      return [head, '\tif not target then', '\t\treturn nil', '\tend', '\tlocal total = 0',
        `\tfor i = 1, amount or CONFIG.${pick(rng, keys)} do`,
        '\t\ttotal += i * 2', '\tend', `\tprint("${fn}", target, total)`, '\treturn total', 'end', ''];
    },
    () => legacy
      ? ['while true do', `\t${wait('1')}`, `\tfor _, v in pairs(workspace:GetChildren()) do`, '\t\tif v.Name == "Coin" then', '\t\t\tv.Transparency = 0', '\t\tend', '\tend', 'end', '']
      : ['task.spawn(function()', `\twhile ${wait('1')} do`, '\t\tfor _, v in workspace:GetChildren() do', '\t\t\tif v.Name == "Coin" then', '\t\t\t\tv.Transparency = 0', '\t\t\tend', '\t\tend', '\tend', 'end)', ''],
    () => [legacy ? 'spawn(function()' : 'task.spawn(function()', `\t${wait(String(int(rng, 1, 5)))}`, `\tprint("ready", ${int(rng, 1, 99)})`, 'end)', ''],
    () => [legacy ? `delay(${int(rng, 1, 10)}, function()` : `task.delay(${int(rng, 1, 10)}, function()`, '\tlocal p = Instance.new("Part"' + (legacy ? ', workspace)' : ')'), '\tp.Anchored = true',
      '\tp.Position = Vector3.new(0, 10, 0)', ...(legacy ? [] : ['\tp.Parent = workspace']), '\tgame:GetService("Debris"):AddItem(p, 5)', 'end)', ''],
    () => [`script.Parent.Touched:${connect}(function(hit)`, '\tlocal humanoid = hit.Parent:FindFirstChild("Humanoid")', '\tif humanoid then',
      `\t\thumanoid.Health = humanoid.Health - ${int(rng, 5, 100)}`, '\tend', 'end)', ''],
    () => [`game.Players.PlayerAdded:${connect}(function(player)`, '\tlocal stats = Instance.new("Folder")', '\tstats.Name = "leaderstats"',
      '\tlocal coins = Instance.new("IntValue")', '\tcoins.Name = "Coins"', '\tcoins.Parent = stats', '\tstats.Parent = player', 'end)', ''],
    () => ['local cache = {}', `for i = 1, ${int(rng, 5, 50)} do`, '\tcache[i] = { id = i, name = "entry" .. i, value = math.random(1, 100) }', 'end',
      'table.sort(cache, function(a, b) return a.value < b.value end)', ''],
    () => [`local image = "rbxassetid://${pool.next()}"`, `local sound = Instance.new("Sound")`, `sound.SoundId = "rbxassetid://${pool.next()}"`, 'sound.Parent = workspace', ''],
  ];
  if (!assets) blocks.pop();
  // Every script gets a loop, a spawn and an event handler (the patterns an importer looks for), then random blocks.
  for (const block of [blocks[1]!, blocks[2]!, blocks[4]!]) out.push(...block());
  while (out.length < lines - 2) out.push(...pick(rng, blocks)());
  if (kind === 'ModuleScript') out.push('return Module');
  return out.join('\n');
}

// ---------------------------------------------------------------------------
// The place

const guid = (rng: Random): string =>
  `{${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-${hex(rng, 4)}-${hex(rng, 12)}}`.toUpperCase();

export function generatePlace(options: GenerateOptions): Dom {
  const { parts, scripts, uniqueAssets } = options;
  for (const [name, value] of Object.entries({ parts, scripts, uniqueAssets })) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`generatePlace: ${name} must be a non-negative integer, got ${value}`);
  }
  const rng = mulberry32(options.seed ?? 1);
  const scriptLines = options.scriptLines ?? 200;
  const pool = assetPool(rng, uniqueAssets);
  const assetUri = () => (uniqueAssets > 0 ? pool.uri() : '');
  const place = placeBuilder(rng);
  const add = place.add;

  // Shared strings: an empty one (model mesh data) and one physics blob per mesh id.
  const sharedStrings: Uint8Array[] = [new Uint8Array(0)];
  const meshes = new Map<string, number>();
  const meshShared = (meshId: string): number => {
    let at = meshes.get(meshId);
    if (at === undefined) {
      const blob = new Uint8Array(int(rng, 48, 192));
      for (let i = 0; i < blob.length; i++) blob[i] = int(rng, 0, 255);
      blob.set([0x43, 0x53, 0x47, 0x50, 0x48, 0x53]); // "CSGPHS", as physics data starts
      at = sharedStrings.push(blob) - 1;
      meshes.set(meshId, at);
    }
    return at;
  };

  // Services, in the order Studio lists them.
  const service: Record<string, number> = {};
  for (const className of SERVICE_ORDER) service[className] = add(className, className, -1);
  const workspace = service.Workspace!;

  const camera = add('Camera', 'Camera', workspace, {
    CFrame: { position: [-20, 15, -20], orientation: yawPitch(-Math.PI * 0.75, -0.45) },
    Focus: { position: [0, 10, 0], orientation: IDENTITY },
  });
  place.set(workspace, 'CurrentCamera', camera);
  add('Terrain', 'Terrain', workspace);

  // Parts: the Baseplate, then models of parts spread over zones.
  const mapRadius = Math.max(64, Math.round(Math.sqrt(parts) * 8));
  let placed = 0;
  if (parts > 0) {
    add('Part', 'Baseplate', workspace, {
      CFrame: { position: [0, -8, 0], orientation: IDENTITY }, Color3uint8: [91, 91, 91], Locked: true,
      size: [mapRadius * 2, 16, mapRadius * 2],
    });
    placed = 1;
  }
  const map = add('Folder', 'Map', workspace);
  const zones: number[] = [];
  const zoneCount = Math.max(1, Math.min(64, Math.ceil((parts - placed) / 3000)));
  for (let z = 0; z < zoneCount && placed < parts; z++) zones.push(add('Folder', `Zone${z + 1}`, map));
  const models: number[] = [];
  const modelKinds = ['House', 'Tree', 'Tower', 'Bridge', 'Crate', 'Lamp', 'Fence', 'Rock', 'Car', 'Obby'];

  while (placed < parts) {
    const zone = zones[models.length % zones.length]!;
    const origin: Vec3 = [int(rng, -mapRadius, mapRadius), 0, int(rng, -mapRadius, mapRadius)];
    const model = add('Model', `${pick(rng, modelKinds)}${models.length + 1}`, zone, {
      WorldPivotData: { position: [f(origin[0]), f(4), f(origin[2])], orientation: IDENTITY },
    });
    models.push(model);
    const size = Math.min(parts - placed, int(rng, 3, 30));
    for (let i = 0; i < size; i++, placed++) {
      const mesh = chance(rng, 0.3) && uniqueAssets > 0;
      const partSize: Vec3 = [half(rng, 0.5, 12), half(rng, 0.5, 8), half(rng, 0.5, 12)];
      const cframe: CFrameValue = {
        position: [f(origin[0] + half(rng, -20, 20)), f(partSize[1] / 2 + half(rng, 0, 30)), f(origin[2] + half(rng, -20, 20))],
        orientation: orientation(rng),
      };
      const common: Record<string, Value> = {
        Anchored: chance(rng, 0.9), CanCollide: chance(rng, 0.85), CFrame: cframe, Color3uint8: pick(rng, COLORS),
        Material: pick(rng, MATERIALS), Transparency: chance(rng, 0.85) ? 0 : pick(rng, [f(0.5), 1, f(0.3)]), size: partSize,
        CastShadow: chance(rng, 0.95),
      };
      if (chance(rng, 0.02)) common.CustomPhysicalProperties = { density: f(0.7), friction: f(0.3), elasticity: f(0.5), frictionWeight: 1, elasticityWeight: 1, acousticAbsorption: 1 };
      let part: number;
      if (!mesh && options.unionShare && chance(rng, options.unionShare)) {
        // A union: its collision hulls (two boxes side by side, in its space at InitialSize) in the file, its model an asset.
        part = add('UnionOperation', pick(rng, ['Union', 'Arch', 'Window', 'Wheel']), model, {
          ...common, InitialSize: partSize, PhysicalConfigData: sharedStrings.push(unionHulls(partSize)) - 1,
          AssetId: uniqueAssets > 0 ? pool.uri() : '', UsePartColor: chance(rng, 0.5),
        });
      } else if (mesh) {
        const meshId = pool.uri();
        part = add('MeshPart', pick(rng, ['MeshPart', 'Trunk', 'Leaves', 'Wheel', 'Handle', 'Body']), model, {
          ...common, InitialSize: partSize, MeshId: meshId, TextureID: chance(rng, 0.7) ? pool.uri() : '',
          PhysicalConfigData: meshShared(meshId), RenderFidelity: pick(rng, [0, 1, 1, 2]), CollisionFidelity: pick(rng, [0, 1, 2, 3]),
          DoubleSided: chance(rng, 0.1), VertexCount: int(rng, 24, 20000),
        });
      } else {
        part = add('Part', pick(rng, ['Part', 'Wall', 'Floor', 'Roof', 'Step', 'Pillar', 'Plank', 'Window']), model, {
          ...common, shape: pick(rng, [1, 1, 1, 1, 0, 2, 3]),
        });
      }
      if (i === 0) place.set(model, 'PrimaryPart', part);
      if (uniqueAssets > 0) {
        if (chance(rng, 0.05)) add('Decal', 'Decal', part, { Face: int(rng, 0, 5), Texture: pool.uri(), Transparency: chance(rng, 0.8) ? 0 : f(0.25) });
        if (chance(rng, 0.03)) add('Texture', 'Texture', part, { Face: int(rng, 0, 5), Texture: pool.uri(), StudsPerTileU: pick(rng, [2, 4, 8]), StudsPerTileV: pick(rng, [2, 4, 8]) });
        if (chance(rng, 0.01)) add('Sound', pick(rng, ['Ambience', 'Hit', 'Music', 'Click']), part, { SoundId: pool.uri(), Looped: chance(rng, 0.5), Volume: f(rng()) });
        if (chance(rng, 0.01)) {
          add('ParticleEmitter', pick(rng, ['Sparkles', 'Smoke', 'Fire']), part, {
            Texture: pool.uri(), Rate: int(rng, 1, 100), Lifetime: [1, int(rng, 2, 8)],
            Transparency: { keypoints: [{ time: 0, value: f(0.2), envelope: 0 }, { time: 1, value: 1, envelope: 0 }] },
            Color: { keypoints: [{ time: 0, color: [1, f(0.5), 0] }, { time: 1, color: [1, 0, 0] }] },
          });
        }
      }
    }
  }

  // Lighting and the sky.
  const lighting = service.Lighting!;
  const skyIds = Array.from({ length: 6 }, assetUri);
  add('Sky', 'Sky', lighting, {
    SkyboxBk: skyIds[0]!, SkyboxDn: skyIds[1]!, SkyboxFt: skyIds[2]!, SkyboxLf: skyIds[3]!, SkyboxRt: skyIds[4]!, SkyboxUp: skyIds[5]!,
    SunTextureId: assetUri(), MoonTextureId: assetUri(),
  });
  add('Atmosphere', 'Atmosphere', lighting);

  // Scripts: server scripts (some inside models, old free-model style), modules, local scripts.
  const starterPlayerScripts = add('StarterPlayerScripts', 'StarterPlayerScripts', service.StarterPlayer!);
  add('StarterCharacterScripts', 'StarterCharacterScripts', service.StarterPlayer!);
  const modules = add('Folder', 'Modules', service.ReplicatedStorage!);
  const gui = add('ScreenGui', 'HUD', service.StarterGui!, { ResetOnSpawn: false, IgnoreGuiInset: true });
  const imageLabels = Math.min(50, 3 + Math.ceil(parts / 2000));
  for (let i = 0; i < imageLabels; i++) {
    add('ImageLabel', `Icon${i + 1}`, gui, {
      Image: assetUri(), Position: [[0, 10 + (i % 10) * 60], [0, 10 + Math.floor(i / 10) * 60]], Size: [[0, 48], [0, 48]],
      BackgroundTransparency: 1, ScaleType: pick(rng, [0, 1, 3]),
    });
  }
  const made = { Script: 0, ModuleScript: 0, LocalScript: 0 };
  for (let i = 0; i < scripts; i++) {
    const slot = i % 10;
    const kind = slot < 4 ? 'Script' : slot < 7 ? 'ModuleScript' : 'LocalScript';
    // The first of each kind is legacy, the second modern, then about a third legacy.
    const nth = made[kind]++;
    const legacy = nth === 0 || (nth > 1 && chance(rng, 0.35));
    const name = i === 0 && kind === 'Script' ? 'Main' : `${pick(rng, SCRIPT_NAMES)}${i + 1}`;
    let parent: number;
    if (kind === 'Script') parent = models.length && chance(rng, 0.25) ? pick(rng, models) : service.ServerScriptService!;
    else if (kind === 'ModuleScript') parent = i === 4 ? modules : chance(rng, 0.8) ? modules : service.ReplicatedStorage!;
    else parent = chance(rng, 0.75) ? starterPlayerScripts : gui;
    const values: Record<string, Value> = {
      Source: luauSource(rng, { kind, legacy, lines: scriptLines, pool }), ScriptGuid: guid(rng),
    };
    if (kind !== 'ModuleScript') {
      values.Disabled = chance(rng, 0.1);
      values.RunContext = kind === 'Script' ? pick(rng, [0, 0, 0, 1, 2]) : 0;
    }
    add(kind, i === 4 && kind === 'ModuleScript' ? 'Util' : name, parent, values);
  }
  const spinner = 'local part = script.Parent\nlocal angle = 0\nwhile true do\n\tangle = angle + 1\n\tpart.CFrame = part.CFrame * CFrame.Angles(0, 0.01, 0)\nend\n';
  for (let i = 0; i < (options.freeModelCopies ?? 0); i++) {
    add('Script', 'Spinner', models.length ? models[i % models.length]! : service.Workspace!, {
      Source: spinner, ScriptGuid: guid(rng), Disabled: i % 4 === 0, RunContext: 0,
    });
  }

  // Ids no property used yet are preloaded from ServerStorage, so the place carries exactly K of them.
  const unused = pool.unused();
  if (unused.length) {
    const preload = add('Folder', 'Preload', service.ServerStorage!);
    for (const id of unused) add('Decal', 'Decal', preload, { Texture: `rbxassetid://${id}` });
  }
  return place.finish(sharedStrings);
}

/**
 * CSGPHS version 3 with two box hulls filling the box of `size` (its left and right
 * halves), as a union's PhysicalConfigData holds them: local space, at InitialSize.
 */
function unionHulls(size: Vec3): Uint8Array {
  const [hx, hy, hz] = [size[0] / 2, size[1] / 2, size[2] / 2];
  const boxes: [number, number][] = [[-hx, 0], [0, hx]];
  const parts: number[] = [];
  const bytes: Uint8Array[] = [new TextEncoder().encode('CSGPHS'), u32(3)];
  for (const [x0, x1] of boxes) {
    const points: number[] = [];
    for (let i = 0; i < 8; i++) points.push(i & 1 ? x1 : x0, i & 2 ? hy : -hy, i & 4 ? hz : -hz);
    const faces = [0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4, 2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5];
    bytes.push(u32(16), new Uint8Array(16), u32(16), new Uint8Array(16), u32(points.length), u32(4), new Uint8Array(Float32Array.from(points).buffer));
    bytes.push(u32(faces.length), new Uint8Array(Uint32Array.from(faces).buffer));
    parts.push(points.length);
  }
  const out = new Uint8Array(bytes.reduce((sum, b) => sum + b.length, 0));
  let at = 0;
  for (const b of bytes) { out.set(b, at); at += b.length; }
  return out;
}

function u32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value, true);
  return out;
}

// ---------------------------------------------------------------------------
// CLI

function parseArgs(argv: string[]): GenerateOptions & { out: string; compress: boolean } {
  const args = new Map<string, string>();
  let compress = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--uncompressed') { compress = false; continue; }
    if (!arg.startsWith('--') || i + 1 >= argv.length) throw new Error(`unexpected argument ${arg}`);
    args.set(arg.slice(2), argv[++i]!);
  }
  const num = (key: string, fallback?: number): number => {
    const text = args.get(key);
    if (text === undefined) {
      if (fallback === undefined) throw new Error(`--${key} is required`);
      return fallback;
    }
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`--${key} must be a non-negative integer, got ${text}`);
    return value;
  };
  const out = args.get('out');
  if (!out) throw new Error('--out FILE is required');
  return {
    parts: num('parts'), scripts: num('scripts', 0), uniqueAssets: num('assets', 0), seed: num('seed', 1),
    scriptLines: num('script-lines', 200), freeModelCopies: num('copies', 0), out, compress,
  };
}

function main(): void {
  let options: ReturnType<typeof parseArgs>;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\nusage: generate --parts N --scripts M --assets K [--seed S] [--script-lines L] [--copies C] [--uncompressed] --out FILE\n`);
    process.exit(2);
  }
  const started = performance.now();
  const dom = generatePlace(options);
  const bytes = encode(dom, { compress: options.compress });
  writeFileSync(options.out, bytes);
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  process.stdout.write(`${options.out}: ${dom.count} instances, ${bytes.length} bytes in ${seconds}s\n`);
}

const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(realpathSync(entry)).href) main();
