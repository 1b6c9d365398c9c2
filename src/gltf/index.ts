/** The one glTF 2.0 writer: build a document, write it as GLB. */
export {
  createGltf, addGeometry, addMaterial, addMesh, addTexture, addNode, addSkin, multiply, invert,
  type GltfDocument, type GltfMaterial, type GltfNode, type Quat,
} from './document.js';
export { glbPieces, glbBytes, writeGlbFile, type GlbPieces } from './glb.js';
export { quaternionOf, srgbToLinear, partMaterial, type PartLook } from './convert.js';
