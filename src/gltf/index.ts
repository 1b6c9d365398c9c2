/** The one glTF 2.0 writer: build a document, write it as GLB. */
export {
  createGltf, addGeometry, addMaterial, addMesh, addMeshOf, addTexture, addNode, addSkin, multiply, invert,
  type GltfDocument, type GltfMaterial, type GltfNode, type Quat,
} from './document.js';
export { glbPieces, glbBytes, writeGlbFile, type GlbPieces } from './glb.js';
export { quaternionOf, srgbToLinear, partMaterial, type PartLook } from './convert.js';
export { readGlb, readGlbGeometry, GlbReadError, type GlbContent, type GltfJson } from './read.js';
export { imageMimeType, unembeddable, decodePngChannel, metallicRoughnessPng, ImageError, MAX_IMAGE_PIXELS, type ImageMimeType, type GreyImage } from './images.js';
