// The 3D view of a project: its scene.glb (fetched with the user's credentials) in three.js
// with orbit controls. three.js and its loader come from the service (/api-rbxl/vendor/three/),
// never from a CDN. Roblox's frame is glTF's: studs, +Y up.
import {
  ACESFilmicToneMapping, AmbientLight, Box3, Color, DirectionalLight, HemisphereLight, PerspectiveCamera, Scene, SRGBColorSpace, Vector3, WebGLRenderer,
} from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

/**
 * Shows the GLB `bytes` in `canvas`; resolves once the first frame is drawn with what was
 * loaded: { nodes } (glTF nodes now in the scene graph), { meshes }, and what the file says
 * of itself (scene.glb's `asset.extras`): { parts, placeholders: {reason: count}, notes }.
 */
export async function showScene(canvas, bytes) {
  const renderer = new WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(Math.min(2, window.devicePixelRatio || 1));
  renderer.outputColorSpace = SRGBColorSpace;
  renderer.toneMapping = ACESFilmicToneMapping;
  const scene = new Scene();
  scene.background = new Color(0xb9d4ee);
  scene.add(new HemisphereLight(0xdde8ff, 0x5a5040, 1.2), new AmbientLight(0xffffff, 0.4));
  const sun = new DirectionalLight(0xffffff, 2.2);
  sun.position.set(-0.35, 1, 0.45);
  scene.add(sun);

  const gltf = await new GLTFLoader().parseAsync(bytes, '');
  scene.add(gltf.scene);
  // Which glTF nodes ended up in the scene graph (the loader maps objects to node indices).
  const nodes = new Set();
  let meshes = 0;
  gltf.scene.traverse((object) => {
    const association = gltf.parser.associations.get(object);
    if (association && association.nodes !== undefined) nodes.add(association.nodes);
    if (object.isMesh) meshes++;
  });

  // Frame the map as the analysis's picture does (src/render/picture.ts): the box of the
  // parts' centres between their 2nd and 98th percentiles, so a 2,048-stud baseplate or a far
  // spawn does not shrink the map to a dot; the whole scene's box sets the clipping planes.
  const whole = new Box3().setFromObject(gltf.scene);
  const frame = frameBox(gltf, whole);
  const aspect = (canvas.clientWidth || 800) / (canvas.clientHeight || 450);
  const camera = new PerspectiveCamera(45, aspect, 1, 2);
  const { position, distance } = fitCamera(frame, aspect, camera.fov);
  const reach = whole.isEmpty() ? 0 : whole.getSize(new Vector3()).length();
  camera.near = Math.max(0.05, distance / 1000);
  camera.far = distance * 4 + reach * 2;
  camera.position.copy(position);
  const centre = frame.getCenter(new Vector3());
  const controls = new OrbitControls(camera, canvas);
  controls.target.copy(centre);
  controls.listenToKeyEvents(canvas); // the canvas takes focus (tabindex): keys act only while it has it
  controls.update();

  const resize = () => {
    const width = canvas.clientWidth || 800, height = canvas.clientHeight || 450;
    renderer.setSize(width, height, false);
    camera.aspect = width / height;
    camera.updateProjectionMatrix();
  };
  const draw = () => renderer.render(scene, camera);
  resize();
  const observer = new ResizeObserver(() => { resize(); draw(); });
  observer.observe(canvas);
  controls.addEventListener('change', draw);
  draw();
  const extras = gltf.parser.json.asset?.extras ?? {};
  return {
    nodes: nodes.size,
    meshes,
    parts: Number.isFinite(extras.parts) ? extras.parts : null,
    placeholders: extras.placeholders && typeof extras.placeholders === 'object' ? extras.placeholders : {},
    notes: Array.isArray(extras.notes) ? extras.notes.map(String) : [],
    dispose: () => { observer.disconnect(); controls.dispose(); renderer.dispose(); },
  };
}

/** The view's direction: from the south-east and above (+X +Z, 32° down), towards the map. */
const VIEW = new Vector3(0.8, 0.7, 0.8).normalize();

/**
 * The box to frame: per axis, the 2nd to 98th percentile of the parts' centres, each part
 * weighted by its footprint (clamped to 1..64), as the picture's, grown to the parts centred
 * in it; at least 16 studs each way plus 5%. With no parts (terrain only), the whole scene's box.
 */
function frameBox(gltf, whole) {
  const centres = [[], [], []];
  const weights = [];
  const boxes = [];
  const size = new Vector3();
  gltf.scene.updateMatrixWorld(true);
  gltf.scene.traverse((object) => {
    // A part is a glTF node with a mesh (its decals may make it a group of meshes); terrain
    // and water are one node each, framed only when there is nothing else.
    const index = gltf.parser.associations.get(object)?.nodes;
    if (index === undefined || gltf.parser.json.nodes?.[index]?.mesh === undefined) return;
    if (object.userData?.kind === 'terrain' || object.userData?.kind === 'water') return;
    const box = new Box3().setFromObject(object);
    if (box.isEmpty()) return;
    const centre = box.getCenter(new Vector3());
    if (!Number.isFinite(centre.x + centre.y + centre.z)) return;
    box.getSize(size);
    centres[0].push(centre.x); centres[1].push(centre.y); centres[2].push(centre.z);
    weights.push(Math.min(64, Math.max(1, Math.sqrt(Math.abs(size.x * size.z)))));
    boxes.push(box);
  });
  if (!weights.length) {
    return whole.isEmpty() ? new Box3(new Vector3(-16, 0, -16), new Vector3(16, 8, 16)) : whole.clone();
  }
  const frame = new Box3();
  for (let axis = 0; axis < 3; axis++) {
    const [low, high] = weightedRange(centres[axis], weights, 0.02, 0.98);
    frame.min.setComponent(axis, low);
    frame.max.setComponent(axis, high);
  }
  // Centres alone cut the outer parts in half: take in the whole of each part centred in the
  // frame, unless it is much larger than the frame (the baseplate under the map).
  const reach = frame.getSize(new Vector3()).multiplyScalar(2).max(new Vector3(32, 32, 32));
  const grown = frame.clone();
  const centre = new Vector3();
  for (const box of boxes) {
    box.getSize(size);
    if (size.x > reach.x || size.y > reach.y || size.z > reach.z || !frame.containsPoint(box.getCenter(centre))) continue;
    grown.union(box);
  }
  const middle = grown.getCenter(new Vector3());
  const half = grown.getSize(new Vector3()).multiplyScalar(0.5 * 1.05).max(new Vector3(8, 8, 8));
  return new Box3(middle.clone().sub(half), middle.clone().add(half));
}

/** The values at two weighted quantiles of `values`. */
function weightedRange(values, weights, low, high) {
  const order = values.map((_, i) => i).sort((a, b) => values[a] - values[b]);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let sum = 0, lo = values[order[0]], hi = values[order.at(-1)], foundLow = false;
  for (const i of order) {
    sum += weights[i];
    if (!foundLow && sum >= total * low) { lo = values[i]; foundLow = true; }
    if (sum >= total * high) { hi = values[i]; break; }
  }
  return [lo, hi];
}

/**
 * Where the camera stands, looking along VIEW at the frame's centre, so that each of the
 * frame's eight corners is inside the view at this aspect (the nearest distance that fits,
 * plus 5%). A sphere around the box would leave a flat map small; the box's largest side
 * alone (the old framing) cut the near corner off.
 */
function fitCamera(frame, aspect, fovDegrees) {
  const centre = frame.getCenter(new Vector3());
  const back = VIEW.clone();
  const right = new Vector3(0, 1, 0).cross(back).normalize();
  const up = back.clone().cross(right);
  const tanV = Math.tan((fovDegrees * Math.PI) / 360);
  const tanH = tanV * aspect;
  let distance = 1;
  const corner = new Vector3();
  for (let k = 0; k < 8; k++) {
    corner.set(k & 1 ? frame.max.x : frame.min.x, k & 2 ? frame.max.y : frame.min.y, k & 4 ? frame.max.z : frame.min.z).sub(centre);
    const x = corner.dot(right), y = corner.dot(up), z = corner.dot(back);
    distance = Math.max(distance, z + Math.abs(x) / tanH, z + Math.abs(y) / tanV);
  }
  distance *= 1.05;
  return { position: centre.clone().addScaledVector(back, distance), distance };
}
