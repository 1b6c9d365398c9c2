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
 * loaded: { nodes } (glTF nodes now in the scene graph), { meshes }.
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

  // Frame the map: a 3/4 view from above, as the analysis's picture.
  const box = new Box3().setFromObject(gltf.scene);
  const size = box.isEmpty() ? new Vector3(32, 32, 32) : box.getSize(new Vector3());
  const centre = box.isEmpty() ? new Vector3() : box.getCenter(new Vector3());
  const radius = Math.max(size.x, size.y, size.z, 8);
  const camera = new PerspectiveCamera(45, 1, radius / 1000, radius * 20);
  camera.position.copy(centre).add(new Vector3(radius * 0.8, radius * 0.7, radius * 0.8));
  const controls = new OrbitControls(camera, canvas);
  controls.target.copy(centre);
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
  return { nodes: nodes.size, meshes, dispose: () => { observer.disconnect(); controls.dispose(); renderer.dispose(); } };
}
