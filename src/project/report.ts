/**
 * The analyze report: what a person deciding how to import a map needs to know,
 * computed from the decoded DOM in a few linear passes (no per-part closures).
 *
 * `analyzeDom` also returns the map's asset ids, so the create step can download
 * them without reading the map again.
 */
import { collectAssetRefs, parseAssetUri, uriOf, type AssetKind } from '../assets/refs.js';
import { findService, getValue, type Column, type Dom } from '../parser/dom.js';
import type { Value, Vec3 } from '../parser/values.js';
import { shownName } from '../parser/warnings.js';
import { FINDING_CODES, isHangRisk, type Finding } from '../scan/index.js';
import { SCANNER_VERSION } from '../scan/version.js';
import { BASE_PART_CLASSES, CSG_CLASSES, MESH_OBJECT_CLASSES, SCRIPT_CLASSES, type ScriptClass } from './classes.js';
import { addPartBox, asCFrame, asVec3, finishBounds, newBounds, type Bounds } from './geometry.js';
import { readMapScripts, stringByteLength, type MapScript } from './map-scripts.js';
import { scanMapScripts } from './script-findings.js';
import { readTerrainGrid } from '../scene/terrain.js';
import { terrainStats, type TerrainStats } from '../terrain/stats.js';
import type { SmoothGrid } from '../terrain/smooth-grid.js';
import { summariseImport, type Imported, type NotImported } from './imported.js';
import { assemblies, searchSurfaceJoints } from './joints.js';

export { scanMapScript, scanMapScripts } from './script-findings.js';

/** At most this many entries in `scripts_at_risk` (copies of one script are one entry). */
export const MAX_SCRIPTS_AT_RISK = 200;
/** JSON characters `scripts_at_risk` holds at most (its first entry always). */
export const MAX_AT_RISK_CHARS = 256 * 1024;
/** Paths of a script's copies named in its `scripts_at_risk` entry. */
export const MAX_COPY_PATHS = 10;
/** At most this many warnings; one more line says how many were left out. */
export const MAX_WARNINGS = 50;
/** Classes the report lists by name (`classes`). */
export const MAX_REPORT_CLASSES = 2000;
/** Kind conflicts named one by one in the warnings; the rest are summed up in one line. */
const MAX_CONFLICT_WARNINGS = 10;
/** An empty SmoothGrid is its 2-byte header; more means the map has terrain voxels. */
const EMPTY_SMOOTH_GRID_BYTES = 2;

/** The report's terrain: its statistics (terrain/stats.ts) and the grids' sizes. */
export interface TerrainSummary extends TerrainStats {
  /** The map has terrain voxels: a Terrain whose SmoothGrid holds more than its empty header. */
  present: boolean;
  smooth_grid_bytes: number;
  physics_grid_bytes: number;
}

export interface ScriptAtRisk {
  path: string;
  class: ScriptClass;
  /** Every finding of the script (the scanner caps them per script), by code priority (hang risks first), then line. */
  findings: Finding[];
  /** Scripts in the map with this same source, class and run context, this one included (listed once). */
  copies: number;
  /** How many of those copies the map itself has disabled. */
  disabled: number;
  /** Up to MAX_COPY_PATHS paths of the other copies, in DOM order. */
  copy_paths: string[];
}

/** Scripts that hold at least one finding of a code, and how many of them the map leaves enabled. */
export interface ScriptsWithFinding {
  scripts: number;
  enabled: number;
  /** Scripts whose most severe finding (FINDING_CODES order) is this code, and how many of them are enabled. */
  most_severe: number;
  most_severe_enabled: number;
}

export type RunContextCounts = { Legacy: number; Server: number; Client: number; Plugin?: number };

export interface Report {
  scripts_total: number;
  format: 'binary' | 'xml';
  file_name: string;
  file_size: number;
  instances_total: number;
  /** Instance count per class, classes in name order. */
  classes: Record<string, number>;
  /** BaseParts of every class in `BASE_PART_CLASSES` (Terrain not included), anywhere in the file. */
  parts_total: number;
  /** MeshParts, plus SpecialMesh/FileMesh objects that name a mesh file. */
  meshes_total: number;
  /** CSG parts (PartOperation, UnionOperation, NegateOperation, IntersectOperation). */
  unions_total: number;
  terrain: TerrainSummary;
  scripts: Record<ScriptClass, number>;
  /** Scripts the map itself has disabled (`Disabled` true). */
  scripts_disabled: number;
  /** Script.RunContext; LocalScripts and ModuleScripts (no RunContext) count as Legacy. `Plugin` appears only when some script has it. */
  scripts_by_run_context: RunContextCounts;
  /** Scripts whose code is not in the file: a LinkedSource, or a blank Source. */
  scripts_linked: number;
  script_lines_total: number;
  /** Scripts with at least one finding. */
  scripts_flagged: number;
  /** Number of findings per code over all scripts (every code present, 0 when none). */
  script_findings: Record<string, number>;
  /** Per code (every code present): scripts with at least one such finding, and how many of them are enabled in the map. */
  scripts_by_finding: Record<string, ScriptsWithFinding>;
  /** Flagged scripts, copies of one script listed once, hang risks first. */
  scripts_at_risk: ScriptAtRisk[];
  /** Unique downloadable asset ids. */
  assets_total: number;
  /** Unique ids per kind; they add up to `assets_total`. */
  assets: Record<AssetKind, number>;
  /** Unique `rbxasset://` paths (shipped with the client, never downloaded). */
  assets_builtin: number;
  /** Unique references that are neither (`rbxthumb://`, foreign URLs...): not downloadable. */
  assets_other: number;
  /** Min/max corner of the rotated boxes of the Workspace's parts (all parts for a model file); null when there are none. */
  bounds: Bounds | null;
  /** What the project will hold, by category (imported.ts); with `scripts_mode` skip, scripts and what is inside them are left out. */
  imported: Imported;
  /** What the project will not hold, whatever the script mode: `[{class, property?, count, reason}]`. */
  not_imported: NotImported[];
  warnings: string[];
  /** The picture of the map the analysis drew (set by the service, which knows where it is served); null when none. */
  picture?: { url: string; width: number; height: number } | null;
}

export interface AnalysisAsset {
  id: string;
  kind: AssetKind;
}

export interface Analysis {
  report: Report;
  /** The downloadable asset ids, in order of first use: the create step's download list. */
  assets: AnalysisAsset[];
  /** Each map script's finding codes: the create step packs them instead of scanning every script again. */
  scriptCodes: ScriptCodes;
}

/** The finding codes of a map's scripts, and which scanner found them. */
export interface ScriptCodes {
  /** The scanner's SCANNER_VERSION: codes from another scanner are not used. */
  scanner: string;
  /** One `codeBits` per script, in the order `readMapScripts` gives. */
  bits: number[];
}

export interface AnalyzeOptions {
  fileName: string;
  fileSize: number;
  /** The terrain already read (src/scene/terrain.ts), so the picture and the report read the SmoothGrid once. */
  terrain?: TerrainRead;
  /** Asset ids a create may download (MAX_DOWNLOADED_ASSET_IDS unless given). */
  maxAssetIds?: number;
}

/**
 * Asset ids a create downloads at most, in order of first use; the rest are counted
 * in `assets_total` and named in a warning. A real place names a few hundred (booga:
 * 267); a hostile one could name most of its instances' properties, and a project's
 * summary holds one outcome per id downloaded.
 */
export const MAX_DOWNLOADED_ASSET_IDS = 100_000;

/** A map's terrain as read once for the report and the picture. */
export interface TerrainRead {
  row: number;
  grid: SmoothGrid | null;
  /** Why the SmoothGrid could not be read. */
  error?: string;
}

export function analyzeDom(dom: Dom, { fileName, fileSize, terrain: terrainRead, maxAssetIds = MAX_DOWNLOADED_ASSET_IDS }: AnalyzeOptions): Analysis {
  const warnings: string[] = [...dom.warnings];

  // Counted per table (a binary file has one per class); only mesh objects are read row by row.
  const classCounts = new Map<string, number>();
  let partsTotal = 0;
  let meshesTotal = 0;
  let unionsTotal = 0;
  let terrainRow = -1;
  for (const { className, columns, rows } of dom.tables) {
    classCounts.set(className, (classCounts.get(className) ?? 0) + rows.length);
    if (BASE_PART_CLASSES.has(className)) {
      partsTotal += rows.length;
      if (className === 'MeshPart') meshesTotal += rows.length;
      else if (CSG_CLASSES.has(className)) unionsTotal += rows.length;
    } else if (MESH_OBJECT_CLASSES.has(className)) {
      const meshId = columns.get('MeshId');
      const meshContent = columns.get('MeshContent');
      for (let i = 0; i < rows.length; i++) if (namesMeshFile(meshId?.get(i) ?? meshContent?.get(i))) meshesTotal++;
    } else if (className === 'Terrain' && rows.length && (terrainRow === -1 || rows[0]! < terrainRow)) {
      terrainRow = rows[0]!;
    }
  }

  const mapScripts = readMapScripts(dom);
  const scripts = summariseScripts(mapScripts, warnings);
  const refs = collectAssetRefs(dom);
  for (const conflict of refs.kindConflicts.slice(0, MAX_CONFLICT_WARNINGS)) {
    warnings.push(`asset ${conflict}: used as two kinds, counted as the first`);
  }
  if (refs.kindConflicts.length > MAX_CONFLICT_WARNINGS) {
    warnings.push(`${refs.kindConflicts.length - MAX_CONFLICT_WARNINGS} more assets used as two kinds, each counted as its first`);
  }
  if (refs.ids.length > maxAssetIds) {
    warnings.push(`assets: ${refs.ids.length - maxAssetIds} asset ids past the first ${maxAssetIds} are not downloaded`);
  }
  const bounds = mapBounds(dom, warnings);
  const { joints, unsearchedParts } = searchSurfaceJoints(dom);
  const held = assemblies(dom, joints);
  const nonUtf8 = new Map<string, number>();
  for (const script of mapScripts) if (script.nonUtf8) nonUtf8.set(script.className, (nonUtf8.get(script.className) ?? 0) + 1);
  const { imported, not_imported: notImported } = summariseImport(dom, { joints, unsearchedParts, assemblies: held, nonUtf8Scripts: nonUtf8 });

  const report: Report = {
    scripts_total: scripts.total,
    format: dom.format,
    file_name: fileName,
    file_size: fileSize,
    instances_total: dom.count,
    classes: listedClasses(classCounts, warnings),
    parts_total: partsTotal,
    meshes_total: meshesTotal,
    unions_total: unionsTotal,
    terrain: summariseTerrain(dom, terrainRow, terrainRead, warnings),
    scripts: scripts.byClass,
    scripts_disabled: scripts.disabled,
    scripts_by_run_context: scripts.byRunContext,
    scripts_linked: scripts.linked,
    script_lines_total: scripts.lines,
    scripts_flagged: scripts.flagged,
    script_findings: scripts.findings,
    scripts_by_finding: scripts.byFinding,
    scripts_at_risk: scripts.atRisk,
    assets_total: refs.ids.length,
    assets: refs.byKind,
    assets_builtin: refs.builtin,
    assets_other: refs.other,
    bounds,
    imported,
    not_imported: notImported,
    warnings: capWarnings(warnings),
  };
  return { report, assets: refs.ids.slice(0, maxAssetIds).map(({ id, kind }) => ({ id, kind })), scriptCodes: { scanner: SCANNER_VERSION, bits: scripts.codes } };
}

interface ScriptSummary {
  total: number;
  byClass: Record<ScriptClass, number>;
  disabled: number;
  byRunContext: RunContextCounts;
  linked: number;
  lines: number;
  flagged: number;
  findings: Record<string, number>;
  byFinding: Record<string, ScriptsWithFinding>;
  atRisk: ScriptAtRisk[];
  codes: number[];
}

function summariseScripts(scripts: MapScript[], warnings: string[]): ScriptSummary {
  const byClass = Object.fromEntries(SCRIPT_CLASSES.map((c) => [c, 0])) as Record<ScriptClass, number>;
  const byRunContext: RunContextCounts = { Legacy: 0, Server: 0, Client: 0 };
  const findings: Record<string, number> = Object.fromEntries(FINDING_CODES.map((code) => [code, 0]));
  const byFinding: Record<string, ScriptsWithFinding> = Object.fromEntries(
    FINDING_CODES.map((code) => [code, { scripts: 0, enabled: 0, most_severe: 0, most_severe_enabled: 0 }]),
  );
  // One entry per distinct flagged script: copies share their findings array (scanMapScripts), which keys them here.
  const flaggedScripts = new Map<Finding[], { entry: ScriptAtRisk; rank: number }>();
  let flagged = 0;
  let disabled = 0;
  let linked = 0;
  let lines = 0;

  const findingsByScript = scanMapScripts(scripts);
  const codes = findingsByScript.map(codeBits);
  for (let index = 0; index < scripts.length; index++) {
    const script = scripts[index]!;
    byClass[script.className]++;
    byRunContext[script.runContext] = (byRunContext[script.runContext] ?? 0) + 1;
    if (!script.enabled) disabled++;
    if (script.linked) linked++;
    lines += script.lines;
    if (script.nonUtf8) warnings.push(`script ${script.path}: source is not valid UTF-8; scanned with replacement characters`);

    const found = findingsByScript[index]!;
    if (found.length === 0) continue;
    flagged++;
    for (const finding of found) findings[finding.code] = (findings[finding.code] ?? 0) + 1;
    const bits = codes[index]!;
    for (const code of codesOfBits(bits)) {
      const counts = byFinding[code]!;
      counts.scripts++;
      if (script.enabled) counts.enabled++;
    }
    // FINDING_CODES is in severity order, so the lowest bit set is the most severe code.
    const severest = byFinding[FINDING_CODES[31 - Math.clz32(bits & -bits)]!]!;
    severest.most_severe++;
    if (script.enabled) severest.most_severe_enabled++;
    const copy = flaggedScripts.get(found);
    if (copy !== undefined) {
      copy.entry.copies++;
      if (!script.enabled) copy.entry.disabled++;
      if (copy.entry.copy_paths.length < MAX_COPY_PATHS) copy.entry.copy_paths.push(script.path);
      continue;
    }
    const ordered = orderFindings(found);
    flaggedScripts.set(found, {
      entry: { path: script.path, class: script.className, findings: ordered, copies: 1, disabled: script.enabled ? 0 : 1, copy_paths: [] },
      rank: codeRank(ordered[0]!.code),
    });
  }

  // Hang risks first (then the other codes in priority order); DOM order within a rank.
  const distinct = [...flaggedScripts.values()].sort((a, b) => a.rank - b.rank);
  // At most MAX_SCRIPTS_AT_RISK entries and MAX_AT_RISK_CHARS of JSON: each entry carries
  // its findings and up to eleven paths of up to 1,000 characters, so two hundred
  // flagged scripts under one long folder made a 2.5 MB report of a 16 KB file.
  const atRisk: ScriptAtRisk[] = [];
  let chars = 0;
  for (const { entry } of distinct) {
    if (atRisk.length === MAX_SCRIPTS_AT_RISK) break;
    chars += JSON.stringify(entry).length;
    if (chars > MAX_AT_RISK_CHARS && atRisk.length > 0) break;
    atRisk.push(entry);
  }
  if (atRisk.length < distinct.length) {
    warnings.push(`scripts_at_risk lists ${atRisk.length} of ${distinct.length} distinct flagged scripts (${flagged} with copies)`);
  }

  return {
    total: scripts.length,
    byClass,
    disabled,
    byRunContext,
    linked,
    lines,
    flagged,
    findings,
    byFinding,
    atRisk,
    codes,
  };
}

const CODE_RANK = new Map<string, number>(FINDING_CODES.map((code, index) => [code, isHangRisk(code) ? index - FINDING_CODES.length : index]));

function codeRank(code: string): number {
  return CODE_RANK.get(code) ?? FINDING_CODES.length;
}

/** Findings by code priority (hang risks first), then by line. */
export function orderFindings(findings: readonly Finding[]): Finding[] {
  return findings.slice().sort((a, b) => codeRank(a.code) - codeRank(b.code) || a.line - b.line);
}

/** Unique finding codes, hang risks first: what a packed script's metadata carries. */
export function findingCodes(findings: readonly Finding[]): string[] {
  return [...new Set(orderFindings(findings).map((finding) => finding.code))];
}

/** The codes of `findings` as one number: bit i for FINDING_CODES[i]. */
export function codeBits(findings: readonly Finding[]): number {
  let bits = 0;
  for (const finding of findings) bits |= 1 << FINDING_CODES.indexOf(finding.code);
  return bits;
}

/** FINDING_CODES by rank (hang risks first), the order `findingCodes` gives. */
const CODES_BY_RANK = [...FINDING_CODES].sort((a, b) => codeRank(a) - codeRank(b));

/** `findingCodes` of the findings whose `codeBits` are `bits`. */
export function codesOfBits(bits: number): string[] {
  return CODES_BY_RANK.filter((code) => (bits & (1 << FINDING_CODES.indexOf(code))) !== 0);
}

/** Whether `value` is the `scriptCodes` of this scanner for a map of `scriptCount` scripts. */
export function isScriptCodes(value: unknown, scriptCount: number): value is ScriptCodes {
  if (typeof value !== 'object' || value === null) return false;
  const { scanner, bits } = value as Partial<ScriptCodes>;
  const all = (1 << FINDING_CODES.length) - 1;
  return scanner === SCANNER_VERSION && Array.isArray(bits) && bits.length === scriptCount
    && bits.every((entry) => Number.isInteger(entry) && entry >= 0 && entry <= all);
}

/** The terrain's bytes and, from its SmoothGrid, voxels per material, volumes and bounds. */
function summariseTerrain(dom: Dom, terrain: number, read: TerrainRead | undefined, warnings: string[]): TerrainSummary {
  const empty = { chunks: 0, voxels_per_material: {}, solid_voxels: 0, water_voxels: 0, solid_volume: 0, water_volume: 0, bounds: null };
  if (terrain === -1) return { present: false, smooth_grid_bytes: 0, physics_grid_bytes: 0, ...empty };
  const smooth = stringByteLength(getValue(dom, terrain, 'SmoothGrid'));
  const summary: TerrainSummary = {
    present: smooth > EMPTY_SMOOTH_GRID_BYTES,
    smooth_grid_bytes: smooth,
    physics_grid_bytes: stringByteLength(getValue(dom, terrain, 'PhysicsGrid')),
    ...empty,
  };
  if (!summary.present) return summary;
  const { grid, error } = read?.row === terrain ? read : readTerrainGrid(dom, terrain);
  if (error) warnings.push(`terrain: the SmoothGrid cannot be read (${error}); its voxels are not counted or drawn`);
  if (!grid) return summary;
  const { chunks, voxels_per_material, solid_voxels, water_voxels, solid_volume, water_volume, bounds } = terrainStats(grid);
  return { ...summary, chunks, voxels_per_material, solid_voxels, water_voxels, solid_volume, water_volume, bounds };
}

/** A mesh object's MeshId (else MeshContent) names a mesh file. */
function namesMeshFile(value: Value | undefined): boolean {
  const uri = uriOf(value);
  return uri !== null && parseAssetUri(uri) !== null;
}

/** The Workspace's parts (every part when the file has no Workspace, as in a model). */
function mapBounds(dom: Dom, warnings: string[]): Bounds | null {
  const workspace = findService(dom, 'Workspace');
  const bounds = newBounds();
  let skipped = 0;
  let table = -1;
  let isPart = false;
  let cframeColumn: Column | undefined;
  let sizeColumn: Column | undefined;

  const visit = (row: number): void => {
    if (dom.tableOf(row) !== table) {
      table = dom.tableOf(row);
      const { className, columns } = dom.table(table);
      isPart = BASE_PART_CLASSES.has(className);
      cframeColumn = columns.get('CFrame');
      sizeColumn = columns.get('size') ?? columns.get('Size');
    }
    if (!isPart) return;
    const at = dom.rowInTable(row);
    const cframe = asCFrame(cframeColumn?.get(at));
    if (!cframe) return;
    const size: Vec3 | null = asVec3(sizeColumn?.get(at));
    if (!addPartBox(bounds, cframe, size)) skipped++;
  };

  if (workspace !== -1) for (let row = workspace; row !== -1; row = dom.next(row, workspace)) visit(row);
  else for (let row = 0; row < dom.count; row++) visit(row);
  if (skipped) warnings.push(`bounds: ${skipped} part(s) with a non-finite position left out`);
  return finishBounds(bounds);
}

/**
 * `classes`: instances per class, names shown bounded, sorted by name; past
 * MAX_REPORT_CLASSES (a real place has a few hundred; Roblox has about a thousand) the
 * most numerous are listed and a warning says how many are not.
 */
function listedClasses(counts: Map<string, number>, warnings: string[]): Record<string, number> {
  const shown = new Map<string, number>();
  for (const [className, count] of counts) {
    const name = shownName(className);
    shown.set(name, (shown.get(name) ?? 0) + count);
  }
  let listed = [...shown];
  if (listed.length > MAX_REPORT_CLASSES) {
    listed.sort((a, b) => b[1] - a[1]);
    const rest = listed.slice(MAX_REPORT_CLASSES);
    warnings.push(`classes: ${rest.length} more classes (${rest.reduce((sum, [, count]) => sum + count, 0)} instances) not listed`);
    listed = listed.slice(0, MAX_REPORT_CLASSES);
  }
  return Object.fromEntries(listed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function capWarnings(warnings: string[]): string[] {
  if (warnings.length <= MAX_WARNINGS) return warnings;
  return [...warnings.slice(0, MAX_WARNINGS), `… and ${warnings.length - MAX_WARNINGS} more warnings`];
}
