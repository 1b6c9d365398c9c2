/** The preview picture: a software-rendered PNG of the map (no GPU, no browser). */
export { createRenderScene, addPart, EMISSIVE, type RenderScene, type RenderParts, type RenderTerrain } from './scene.js';
export { renderPicture, type Picture, type PictureOptions } from './picture.js';
export { encodePng, encodeIndexedPng, newRaster, type Raster } from './png.js';
export { newPalette, colorIndex, type Palette } from './palette.js';
