/**
 * What an import brings into the project and what it leaves out, in counts a person
 * can read before creating (the analyze report) and find again in the project
 * document (`import`): `imported` by category, `not_imported` as
 * `[{class, property?, count, reason}]`.
 *
 * Left out, and named: Terrain.PhysicsGrid (the engine rebuilds it from the voxels),
 * properties of a type the decoder does not know, references to instances that are
 * not in the file (written as null), script sources that are not UTF-8 (packed with
 * U+FFFD), and in `skip` mode every script with the instances inside it.
 */
import { findService, type Dom } from '../parser/dom.js';
import type { Value } from '../parser/values.js';
import { shownName } from '../parser/warnings.js';
import {
  BASE_PART_CLASSES, BODY_MOVER_CLASSES, CONSTRAINT_CLASSES, CSG_CLASSES, IMAGE_CLASSES, JOINT_CLASSES, LIGHT_CLASSES,
  MESH_OBJECT_CLASSES, PARTICLE_CLASSES, REMOTE_CLASSES, SKY_AND_EFFECT_CLASSES, isGuiClass, isScriptClass, isSoundClass,
  isValueClass,
} from './classes.js';
import { parseAssetUri, uriOf } from '../assets/refs.js';
import type { Assemblies, SurfaceJoints } from './joints.js';
import { stringByteLength } from './map-scripts.js';

export interface Imported {
  /** The map's instances the project holds (the generated joints, `joints_generated`, come on top). */
  instances: number;
  parts_in_workspace: number;
  /** Parts outside the Workspace (ReplicatedStorage, ServerStorage, StarterPack...): templates scripts clone. */
  parts_in_storage: number;
  scripts: number;
  /** Joints the map holds (Weld, Snap, Motor6D, WeldConstraint...). */
  joints: number;
  /** Joints the import computed from surface types, as Roblox made them at load (old places). */
  joints_generated: number;
  constraints: number;
  body_movers: number;
  lights: number;
  /** Sky, Atmosphere, Clouds and post-processing effects. */
  sky_and_effects: number;
  sounds: number;
  guis: number;
  /** IntValue, StringValue, ObjectValue... */
  values: number;
  /** RemoteEvent, RemoteFunction, BindableEvent... */
  remotes: number;
  humanoids: number;
  /** Decals, Textures, SurfaceAppearances. */
  images: number;
  particles: number;
  unions: number;
  /** MeshParts, plus SpecialMesh/FileMesh objects that name a mesh file. */
  meshes: number;
  /** The Terrain's voxels (SmoothGrid) are in the project; `report.terrain` has their statistics. */
  terrain: boolean;
  /** Instances inside scripts (a script's own Values, modules...): `skip` mode leaves them out with their script. */
  instances_inside_scripts: number;
  /** Unanchored parts in the Workspace, and how many of them are joined to an anchored part; the rest move or fall when the game runs, as they do in Roblox. */
  unanchored_parts: number;
  unanchored_parts_joined_to_anchored: number;
}

export interface NotImported {
  class: string;
  property?: string;
  count: number;
  reason: string;
}

/**
 * Entries of `not_imported` kept before the rest are summed in one: an XML file can give
 * each of 100,000 items its own dangling Ref property, or its own class inside a skipped
 * script, and each would be an entry.
 */
export const MAX_NOT_IMPORTED_ENTRIES = 300;

/** The entries with the file's names shown bounded (entries that then read the same are one), at most MAX_NOT_IMPORTED_ENTRIES. */
function boundedEntries(entries: NotImported[]): NotImported[] {
  const merged = new Map<string, NotImported>();
  for (const entry of entries) {
    const shown: NotImported = { ...entry, class: shownName(entry.class), ...(entry.property !== undefined ? { property: shownName(entry.property) } : {}) };
    const key = `${shown.class}\u0000${shown.property ?? ''}\u0000${shown.reason}`;
    const same = merged.get(key);
    if (same) same.count += shown.count;
    else merged.set(key, shown);
  }
  const list = [...merged.values()];
  if (list.length <= MAX_NOT_IMPORTED_ENTRIES) return list;
  const rest = list.slice(MAX_NOT_IMPORTED_ENTRIES - 1);
  return [
    ...list.slice(0, MAX_NOT_IMPORTED_ENTRIES - 1),
    { class: '*', count: rest.reduce((sum, entry) => sum + entry.count, 0), reason: `${rest.length} more entries of other classes and properties, not listed` },
  ];
}

export interface ImportSummary {
  imported: Imported;
  not_imported: NotImported[];
}

export interface SummaryOptions {
  /** Rows the document leaves out (skip mode's scripts and what is inside them). */
  excluded?: Uint8Array;
  /** The document drops scripts (skip): they are named as not imported. */
  scriptsSkipped?: boolean;
  joints: SurfaceJoints;
  /** Joinable parts left without surface joints because the search stopped at its bounds (joints.ts SEARCH_BOUNDS). */
  unsearchedParts?: number;
  assemblies: Assemblies;
  /** Scripts whose source is not valid UTF-8, per class. */
  nonUtf8Scripts: ReadonlyMap<string, number>;
}

const EMPTY_SMOOTH_GRID_BYTES = 2;

/** Script instances and everything inside them (1 = in a script's subtree). */
export function scriptSubtrees(dom: Dom): Uint8Array {
  const marks = new Uint8Array(dom.count);
  const scriptTables = dom.tables.map(({ className }) => isScriptClass(className));
  for (let row = dom.firstRoot; row !== -1;) {
    if (scriptTables[dom.tableOf(row)]) {
      for (let inside = row; inside !== -1; inside = dom.next(inside, row)) marks[inside] = 1;
      row = dom.after(row);
    } else {
      row = dom.next(row);
    }
  }
  return marks;
}

export function summariseImport(dom: Dom, options: SummaryOptions): ImportSummary {
  const { excluded } = options;
  const imported: Imported = {
    instances: 0, parts_in_workspace: 0, parts_in_storage: 0, scripts: 0,
    joints: 0, joints_generated: options.joints.count, constraints: 0, body_movers: 0, lights: 0, sky_and_effects: 0,
    sounds: 0, guis: 0, values: 0, remotes: 0, humanoids: 0, images: 0, particles: 0, unions: 0, meshes: 0,
    terrain: false, instances_inside_scripts: 0,
    unanchored_parts: options.assemblies.unanchored, unanchored_parts_joined_to_anchored: options.assemblies.held,
  };
  const notImported: NotImported[] = [];
  const inScripts = scriptSubtrees(dom);
  const workspace = findService(dom, 'Workspace');
  const inWorkspace = new Uint8Array(dom.count);
  if (workspace !== -1) for (let row = workspace; row !== -1; row = dom.next(row, workspace)) inWorkspace[row] = 1;
  const skippedByClass = new Map<string, number>();

  for (const { className, columns, rows } of dom.tables) {
    // What the class counts as is told once per table: the rows only split parts by where they stand.
    const category = categoryOf(className);
    const script = isScriptClass(className);
    const meshId = category === 'mesh_object' ? columns.get('MeshId') ?? columns.get('MeshContent') : undefined;
    let skipped = 0;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (excluded?.[row]) { skipped++; continue; }
      imported.instances++;
      if (inScripts[row] && !script) imported.instances_inside_scripts++;
      switch (category) {
        case null: break;
        case 'part': case 'mesh_part': case 'union':
          if (inWorkspace[row]) imported.parts_in_workspace++;
          else imported.parts_in_storage++;
          if (category === 'mesh_part') imported.meshes++;
          else if (category === 'union') imported.unions++;
          break;
        case 'mesh_object':
          if (meshId && namesMeshFile(meshId.get(i))) imported.meshes++;
          break;
        case 'terrain': {
          const smooth = columns.get('SmoothGrid');
          if (smooth && stringByteLength(smooth.get(i)) > EMPTY_SMOOTH_GRID_BYTES) imported.terrain = true;
          const physics = columns.get('PhysicsGrid');
          if (physics && stringByteLength(physics.get(i)) > 0) {
            notImported.push({ class: 'Terrain', property: 'PhysicsGrid', count: 1, reason: 'the engine rebuilds it from the terrain voxels (SmoothGrid), which are imported' });
          }
          break;
        }
        default: imported[category]++;
      }
    }
    if (skipped) skippedByClass.set(className, (skippedByClass.get(className) ?? 0) + skipped);
  }

  for (const { className, property, count, reason } of dom.skipped) notImported.push({ class: className, property, count, reason });
  notImported.push(...danglingReferences(dom, excluded));
  if (options.unsearchedParts) {
    notImported.push({
      class: 'BasePart', count: options.unsearchedParts,
      reason: 'surface joints not made: so many of these parts overlap or touch that the search stopped at its bounds; unanchored parts may fall apart',
    });
  }
  for (const [className, count] of options.nonUtf8Scripts) {
    notImported.push({ class: className, property: 'Source', count, reason: 'not valid UTF-8, which JSON cannot carry: packed with U+FFFD replacement characters' });
  }
  if (options.scriptsSkipped) {
    for (const [className, count] of skippedByClass) {
      notImported.push({
        class: className, count,
        reason: isScriptClass(className)
          ? 'scripts_mode skip: scripts are not imported (the instance, its source and its entry in scripts[])'
          : 'inside a script that scripts_mode skip leaves out, left out with it',
      });
    }
  }
  return { imported, not_imported: boundedEntries(notImported) };
}

/** A count of `imported` a class adds to by itself, or what its rows decide. */
type CountedCategory = 'scripts' | 'joints' | 'constraints' | 'body_movers' | 'lights' | 'sky_and_effects' | 'sounds' | 'guis' | 'values' | 'remotes' | 'humanoids' | 'images' | 'particles';
type Category = CountedCategory | 'part' | 'mesh_part' | 'union' | 'mesh_object' | 'terrain' | null;

/** What a class counts as, the first that applies in this order (a BasePart is a part whatever else it is). */
function categoryOf(className: string): Category {
  if (BASE_PART_CLASSES.has(className)) return className === 'MeshPart' ? 'mesh_part' : CSG_CLASSES.has(className) ? 'union' : 'part';
  if (isScriptClass(className)) return 'scripts';
  if (JOINT_CLASSES.has(className)) return 'joints';
  if (CONSTRAINT_CLASSES.has(className)) return 'constraints';
  if (BODY_MOVER_CLASSES.has(className)) return 'body_movers';
  if (LIGHT_CLASSES.has(className)) return 'lights';
  if (SKY_AND_EFFECT_CLASSES.has(className)) return 'sky_and_effects';
  if (isSoundClass(className)) return 'sounds';
  if (isGuiClass(className)) return 'guis';
  if (isValueClass(className)) return 'values';
  if (REMOTE_CLASSES.has(className)) return 'remotes';
  if (className === 'Humanoid') return 'humanoids';
  if (IMAGE_CLASSES.has(className)) return 'images';
  if (PARTICLE_CLASSES.has(className)) return 'particles';
  if (MESH_OBJECT_CLASSES.has(className)) return 'mesh_object';
  return className === 'Terrain' ? 'terrain' : null;
}

function namesMeshFile(value: Value | undefined): boolean {
  const uri = uriOf(value);
  return uri !== null && parseAssetUri(uri) !== null;
}

/** Ref and Content-object values of kept instances that point at no instance of the file, or at one left out. */
function danglingReferences(dom: Dom, excluded: Uint8Array | undefined): NotImported[] {
  const counts = new Map<string, NotImported>();
  const add = (className: string, property: string, reason: string) => {
    const key = `${className}\u0000${property}\u0000${reason}`;
    const entry = counts.get(key);
    if (entry) entry.count++;
    else counts.set(key, { class: className, property, count: 1, reason });
  };
  for (const { className, columns, rows } of dom.tables) {
    for (const [name, column] of columns) {
      if (column.type !== 'Ref' && column.type !== 'Content') continue;
      for (let i = 0; i < rows.length; i++) {
        if (excluded?.[rows[i]!]) continue;
        const value = column.get(i);
        const referent = column.type === 'Ref' ? (value as number) : typeof value === 'object' && value !== null && 'Object' in value ? value.Object : -1;
        if (referent === -1) continue;
        const target = dom.rowOf(referent);
        if (target === -1) add(className, name, 'refers to an instance that is not in the file: written as null');
        else if (excluded?.[target]) add(className, name, 'refers to an instance left out with a skipped script: written as null');
      }
    }
  }
  return [...counts.values()];
}
