// The surface joints a 2006-era place gets at load (src/project/joints.ts), rule by
// rule on hand-built parts: which surface types join into which class, the tolerances
// of each, the faces round and sloped parts join by, the axle of a hinge, pairs the
// file already joins; and the same joints whether the values come from a hand DOM's
// arrays or from a binary file's columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Column, Dom } from '../src/parser/dom.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import { arrayColumn } from '../src/parser/columns/column.js';
import { analyzeDom, buildProject, readInstances } from '../src/project/index.js';
import { decode } from '../src/parser/index.js';
import type { CFrameValue, PropType, Value } from '../src/parser/values.js';
import { encode } from '../src/parser/writer/index.js';
import { JOINT_OVERLAP_MIN, SEARCH_BOUNDS, searchSurfaceJoints, surfaceJoints, type SurfaceJoint } from '../src/project/joints.js';
import { handDom, part, type HandNode } from './support/hand-dom.js';

// Enum.SurfaceType
const SMOOTH = 0, GLUE = 1, WELD = 2, STUDS = 3, INLET = 4, UNIVERSAL = 5, HINGE = 6, MOTOR = 7, STEPPING_MOTOR = 8;

type Surfaces = Partial<Record<'TopSurface' | 'BottomSurface' | 'LeftSurface' | 'RightSurface' | 'FrontSurface' | 'BackSurface', number>>;
type Matrix = CFrameValue['orientation'];

function brick(name: string, y: number, surfaces: Surfaces, options: { x?: number; size?: [number, number, number]; rotation?: Matrix; extra?: Record<string, [PropType, Value]>; className?: string } = {}): HandNode {
  const extra: Record<string, [PropType, Value]> = { ...options.extra };
  for (const [face, type] of Object.entries(surfaces)) extra[face] = ['Enum', type];
  return part(name, [options.x ?? 0, y, 0], options.size ?? [4, 1, 2], extra, options.className ?? 'Part', options.rotation);
}

/** A lower brick (top face at y = 1) and an upper one resting on it, `gap` above. */
function stack(lower: Surfaces, upper: Surfaces, gap = 0, upperOptions: Parameters<typeof brick>[3] = {}): HandNode[] {
  return [brick('Lower', 0.5, lower), brick('Upper', 1.5 + gap, upper, upperOptions)];
}

interface Found { class: string; part0: string; part1: string; joint: SurfaceJoint }

/** The joints of a Workspace holding `parts`, by part name; the same from the hand DOM and from its binary file (whose rows differ). */
function joints(parts: HandNode[], workspaceProps: Record<string, [PropType, Value]> = {}): Found[] {
  const dom = handDom([{ class: 'Workspace', props: workspaceProps, children: parts }]);
  const named = (of: Dom): Found[] => surfaceJoints(of).map((joint) => ({ class: joint.className, part0: of.name(joint.part0), part1: of.name(joint.part1), joint: { ...joint, part0: 0, part1: 0 } }));
  const found = named(dom);
  assert.deepEqual(named(decode(encode(dom))), found, 'the binary file\'s columns give the same joints');
  for (const joint of surfaceJoints(dom)) {
    // Part0.CFrame · C0 = Part1.CFrame · C1: the two frames meet in the world.
    const world0 = compose(cframeOf(dom, joint.part0), joint.c0), world1 = compose(cframeOf(dom, joint.part1), joint.c1);
    for (let i = 0; i < 3; i++) {
      assert.ok(Math.abs(world0.position[i]! - world1.position[i]!) < 1e-5, 'positions meet');
      for (let j = 0; j < 3; j++) assert.ok(Math.abs(world0.orientation[i]![j]! - world1.orientation[i]![j]!) < 1e-5, 'rotations meet');
    }
  }
  return found;
}

function cframeOf(dom: Dom, row: number): CFrameValue {
  return dom.table(dom.tableOf(row)).columns.get('CFrame')!.get(dom.rowInTable(row)) as CFrameValue;
}

function compose(a: CFrameValue, b: CFrameValue): CFrameValue {
  const r = a.orientation, s = b.orientation;
  const orientation = [0, 1, 2].map((i) => [0, 1, 2].map((j) => r[i]![0] * s[0][j]! + r[i]![1] * s[1][j]! + r[i]![2] * s[2][j]!)) as Matrix;
  const position = [0, 1, 2].map((i) => r[i]![0] * b.position[0] + r[i]![1] * b.position[1] + r[i]![2] * b.position[2] + a.position[i]!) as CFrameValue['position'];
  return { position, orientation };
}

const classes = (found: Found[]): string[] => found.map((j) => `${j.class} ${j.part0}-${j.part1}`);

function rotationX(angle: number): Matrix {
  const c = Math.cos(angle), s = Math.sin(angle);
  return [[1, 0, 0], [0, c, -s], [0, s, c]];
}

test('surface types join as the engine joins them: Snap, Weld, Glue, and nothing for the rest', () => {
  assert.deepEqual(classes(joints(stack({ TopSurface: STUDS }, { BottomSurface: INLET }))), ['Snap Lower-Upper']);
  assert.deepEqual(classes(joints(stack({ TopSurface: UNIVERSAL }, { BottomSurface: UNIVERSAL }))), ['Snap Lower-Upper']);
  assert.deepEqual(classes(joints(stack({ TopSurface: STUDS }, { BottomSurface: STUDS }))), [], 'studs on studs do not snap');
  assert.deepEqual(classes(joints(stack({ TopSurface: SMOOTH }, { BottomSurface: SMOOTH }))), []);
  assert.deepEqual(classes(joints(stack({ TopSurface: WELD }, { BottomSurface: SMOOTH }))), ['Weld Lower-Upper']);
  assert.deepEqual(classes(joints(stack({ TopSurface: SMOOTH }, { BottomSurface: GLUE }))), ['Glue Lower-Upper']);
  // Weld is checked before Snap: studs against a welded face weld.
  assert.deepEqual(classes(joints(stack({ TopSurface: STUDS }, { BottomSurface: WELD }))), ['Weld Lower-Upper']);
  // Faces that do not face each other: the upper brick's top is studded, not its bottom.
  assert.deepEqual(classes(joints(stack({ TopSurface: STUDS }, { TopSurface: INLET }))), []);
});

test('tolerances: Glue joins across a 0.03 gap and a 0.02 rad tilt, Snap and Weld do not; faces must overlap by JOINT_OVERLAP_MIN', () => {
  assert.deepEqual(classes(joints(stack({ TopSurface: GLUE }, {}, 0.03))), ['Glue Lower-Upper']);
  assert.deepEqual(classes(joints(stack({ TopSurface: STUDS }, { BottomSurface: INLET }, 0.03))), []);
  assert.deepEqual(classes(joints(stack({ TopSurface: GLUE }, {}, 0.06))), [], 'past Glue\'s 0.05');
  const tilted = { rotation: rotationX(0.02) };
  assert.deepEqual(classes(joints(stack({ TopSurface: GLUE }, {}, 0, tilted))), ['Glue Lower-Upper']);
  assert.deepEqual(classes(joints(stack({ TopSurface: WELD }, {}, 0, tilted))), []);
  // Side by side along X: the upper brick's bottom overlaps the lower's top by `overlap`.
  for (const [overlap, expected] of [[JOINT_OVERLAP_MIN - 0.05, []], [JOINT_OVERLAP_MIN + 0.05, ['Snap Lower-Upper']]] as const) {
    const found = joints([brick('Lower', 0.5, { TopSurface: STUDS }), brick('Upper', 1.5, { BottomSurface: INLET }, { x: 4 - overlap })]);
    assert.deepEqual(classes(found), expected, `overlap ${overlap}`);
  }
});

test('hinges and motors make Rotate, RotateV and RotateP with the hinged part as Part0, the axle', () => {
  assert.deepEqual(classes(joints(stack({ TopSurface: HINGE }, {}))), ['Rotate Lower-Upper']);
  assert.deepEqual(classes(joints(stack({ TopSurface: MOTOR }, {}))), ['RotateV Lower-Upper']);
  assert.deepEqual(classes(joints(stack({ TopSurface: STEPPING_MOTOR }, {}))), ['RotateP Lower-Upper']);
  // The hinge on the later part's face: that part is the axle.
  const [rotate] = joints(stack({}, { BottomSurface: HINGE }, 0, { size: [2, 1, 2] }));
  assert.equal(`${rotate!.class} ${rotate!.part0}-${rotate!.part1}`, 'Rotate Upper-Lower');
  // The hinge's face centre must lie on the other face: a small brick hinged at the wide one's edge does not turn.
  assert.deepEqual(classes(joints([brick('Wide', 0.5, { TopSurface: HINGE }, { size: [8, 1, 2] }), brick('Small', 1.5, {}, { x: 3.5, size: [2, 1, 2] })])), []);
});

test('round and sloped parts join only by their flat faces; mesh parts never', () => {
  const under = (className: string, shape?: number, surfaces: Surfaces = { BottomSurface: GLUE }): HandNode =>
    brick('Part', 1.5, surfaces, { className, ...(shape === undefined ? {} : { extra: { shape: ['Enum', shape] } }) });
  // A block's shape is written: the binary writer fills a missing Enum with 0, a ball.
  const base = brick('Base', 0.5, { TopSurface: GLUE }, { extra: { shape: ['Enum', 1] } });
  assert.deepEqual(classes(joints([base, under('Part', 1)])), ['Glue Base-Part'], 'a block');
  assert.deepEqual(classes(joints([base, under('Part', 0)])), [], 'a ball has no flat face');
  assert.deepEqual(classes(joints([base, under('Part', 2)])), [], 'a cylinder\'s bottom is round');
  assert.deepEqual(classes(joints([base, under('WedgePart')])), ['Glue Base-Part'], 'a wedge\'s bottom is flat');
  assert.deepEqual(classes(joints([base, under('MeshPart')])), []);
  // A cylinder joins by its ends (±X): one standing on its end.
  const standing: Matrix = [[0, -1, 0], [1, 0, 0], [0, 0, 1]];
  const cylinder = brick('Cylinder', 3, { LeftSurface: GLUE }, { size: [4, 2, 2], rotation: standing, extra: { shape: ['Enum', 2] } });
  assert.deepEqual(classes(joints([base, cylinder])), ['Glue Base-Cylinder']);
});

test('a joint\'s frames: C0 at Part0\'s face centre with Z along its normal, C1 the same frame in Part1\'s space', () => {
  const [found] = joints(stack({ TopSurface: STUDS }, { BottomSurface: INLET }));
  const { c0, c1 } = found!.joint;
  assert.deepEqual(c0.position, [0, 0.5, 0]);
  // Top face (+Y): X is the next axis (Z), Y = Z × X (X), Z the normal (Y); columns of the rotation.
  assert.deepEqual(c0.orientation, [[0, 1, 0], [0, 0, 1], [1, 0, 0]]);
  assert.deepEqual(c1.position, [0, -0.5, 0]);
  assert.deepEqual(c1.orientation, c0.orientation);
  // From a bottom face (the upper brick comes first, so it is Part0): Z points down, Y = Z × X.
  const [down] = joints([brick('Upper', 1.5, { BottomSurface: STUDS }), brick('Lower', 0.5, { TopSurface: INLET })]);
  assert.equal(`${down!.part0}-${down!.part1}`, 'Upper-Lower');
  assert.deepEqual(down!.joint.c0.position, [0, -0.5, 0]);
  assert.deepEqual(down!.joint.c0.orientation, [[0, -1, 0], [0, 0, -1], [1, 0, 0]]);
  // A turned and tilted pair still meets (the helper checks every joint's frames).
  const turned: Matrix = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]];
  assert.deepEqual(classes(joints([brick('Lower', 0.5, { TopSurface: GLUE }, { rotation: turned, size: [2, 1, 4] }), brick('Upper', 1.5, {}, { rotation: rotationX(0.02) })])), ['Glue Lower-Upper']);
});

test('pairs the file joins already, places that store their joints, and parts outside the Workspace get no joints', () => {
  const parts = stack({ TopSurface: STUDS }, { BottomSurface: INLET });
  const dom = handDom([{ class: 'Workspace', children: [...parts, { class: 'Weld' }] }]);
  assert.equal(surfaceJoints(dom).length, 1);
  // The same parts with a Weld between them in the file.
  const lower = 1, upper = 2;
  const welded = handDom([{ class: 'Workspace', children: [...parts, { class: 'Weld', props: { Part0: ['Ref', dom.referent(lower)], Part1: ['Ref', dom.referent(upper)] } }] }]);
  assert.equal(welded.name(lower), 'Lower');
  assert.deepEqual(surfaceJoints(welded), []);
  assert.deepEqual(joints(parts, { ExplicitAutoJoints: ['Bool', true] }), []);
  assert.deepEqual(surfaceJoints(handDom([{ class: 'Workspace' }, { class: 'ReplicatedStorage', children: parts }])), []);
});

test('a place whose parts pile up past the search bounds gets no surface joints, and the report and the document say so', () => {
  // 1,500 unanchored bricks in one spot: 1.1 million touching pairs, past SEARCH_BOUNDS.nearPairs.
  const count = 1_500;
  const builder = new DomBuilder('binary');
  const workspace = builder.addTable('Workspace', new Map([['Name', arrayColumn('String', ['Workspace'])]]));
  const parts = builder.addTable('Part', new Map<string, Column>([
    ['Name', arrayColumn('String', Array(count).fill('Brick'))],
    ['CFrame', arrayColumn('CFrame', Array(count).fill({ position: [0, 2, 0], orientation: [[1, 0, 0], [0, 1, 0], [0, 0, 1]] }))],
    ['size', arrayColumn('Vector3', Array(count).fill([4, 4, 4]))],
    ['TopSurface', arrayColumn('Enum', Array(count).fill(2))],
    ['BottomSurface', arrayColumn('Enum', Array(count).fill(2))],
  ]));
  const root = builder.add(workspace, -1);
  for (let i = 0; i < count; i++) builder.add(parts, root);
  const dom = builder.build();
  assert.ok(1_500 * 1_499 / 2 > SEARCH_BOUNDS.nearPairs);
  const stopped = searchSurfaceJoints(dom);
  assert.equal(stopped.joints.count, 0);
  assert.equal(stopped.unsearchedParts, count);
  const expected = { class: 'BasePart', count, reason: 'surface joints not made: so many of these parts overlap or touch that the search stopped at its bounds; unanchored parts may fall apart' };
  const { report } = analyzeDom(dom, { fileName: 'pile.rbxl', fileSize: 1 });
  assert.deepEqual(report.not_imported, [expected]);
  assert.equal(report.imported.joints_generated, 0);
  const doc = buildProject(dom, { title: '', owner: 'o', createdAt: '2026-01-01T00:00:00.000Z', previewHash: '0', fileName: 'pile.rbxl', fileSize: 1, scriptsMode: 'disabled', assets: [] });
  assert.deepEqual(doc.import.not_imported, [expected]);
  // Fewer bricks are searched and joined as before.
  const few = handDom([{ class: 'Workspace', children: Array.from({ length: 3 }, (_, i) => part(`B${i}`, [0, 2 + 4 * i, 0], [4, 4, 4], { TopSurface: ['Enum', 2], BottomSurface: ['Enum', 2] })) }]);
  assert.equal(searchSurfaceJoints(few).joints.count, 2);
  assert.equal(searchSurfaceJoints(few).unsearchedParts, 0);
});

test('a class the map has and the import adds to: its map instances read by its properties, the generated ones by its generated list', () => {
  const parts = stack({ TopSurface: STUDS }, { BottomSurface: INLET });
  const dom = handDom([{ class: 'Workspace', children: [...parts, { class: 'Folder', children: [{ class: 'Snap', name: 'FromTheMap', props: { Custom: ['Int32', 7] } }] }] }]);
  for (const of of [dom, decode(encode(dom))]) {
    const doc = buildProject(of, { title: 't', owner: 'o', createdAt: '2026-01-01T00:00:00.000Z', previewHash: '0'.repeat(64), fileName: 'mixed.rbxl', fileSize: 1, scriptsMode: 'disabled', assets: [] });
    const snap = doc.classes.Snap!;
    assert.deepEqual(snap.properties, { Custom: 'Int32', Name: 'String' });
    assert.deepEqual(snap.generated, { Name: 'String', Part0: 'Ref', Part1: 'Ref', C0: 'CFrame', C1: 'CFrame' });
    const read = [...readInstances(doc)].filter((i) => i.class === 'Snap');
    assert.deepEqual(read.map((i) => [i.name, i.generated, [...i.properties.keys()].sort()]), [
      ['FromTheMap', false, ['Custom', 'Name']],
      ['Snap', true, ['C0', 'C1', 'Name', 'Part0', 'Part1']],
    ]);
    assert.equal(read[0]!.properties.get('Custom')!.value, 7);
    assert.equal(read[1]!.properties.get('Part1')!.value, doc.instances.find((i) => i.name === 'Upper')!.id);
  }
});
