/**
 * The map as pictures and geometry: GET /api-rbxl/previews/{hash}/image.png (the
 * analysis's picture, to the preview's uploaders), GET /api-rbxl/projects/{id}/scene.glb
 * (the project's scene, to its owner; built on first request), and the 3D viewer's
 * library files (three.js from the npm package, served here: the page loads no CDN).
 * Anyone else gets the same 404 as for nothing.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { HttpRequest } from 'uWebSockets.js';
import { notFound } from '../errors.js';
import { sendFile, sendObject, type Exchange } from '../exchange.js';
import type { HttpContext } from '../context.js';
import type { RouteHandler } from '../route.js';

export function pictureRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const hash = req.getParameter(0) ?? '';
    const picture = await ctx.service.analyses.picture(exchange.user!, hash);
    // Kept by the browser for an hour, but per signed-in user: a cache shared by two accounts
    // must not hand one the other's picture without the owner check.
    await sendObject(exchange, picture.body, picture.size, {
      'Content-Type': 'image/png', 'Cache-Control': 'private, max-age=3600', Vary: 'Authorization, X-User-Id, X-Auth-Override', ETag: `"${hash}"`,
    });
  };
}

export function sceneRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const id = req.getParameter(0) ?? '';
    const scene = await ctx.service.projects.scene(exchange.user!, id);
    await sendObject(exchange, scene.body, scene.size, {
      'Content-Type': 'model/gltf-binary',
      'Content-Disposition': `attachment; filename="${id}.glb"`,
      'Cache-Control': 'private, no-cache',
    });
  };
}

/**
 * The files of the `three` package the viewer imports, at /api-rbxl/vendor/three/<path
 * in the package> (so the package's own relative imports resolve): an allowlist,
 * nothing else of node_modules is reachable.
 */
const THREE_ROOT = join(dirname(createRequire(import.meta.url).resolve('three')), '..');
export const VENDOR_PREFIX = '/api-rbxl/vendor/three/';
const VENDOR = new Set([
  'build/three.module.js', 'build/three.core.js',
  'examples/jsm/loaders/GLTFLoader.js', 'examples/jsm/utils/BufferGeometryUtils.js', 'examples/jsm/utils/SkeletonUtils.js',
  'examples/jsm/controls/OrbitControls.js',
]);

export function vendorRoute(_ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const url = req.getUrl();
    const file = url.startsWith(VENDOR_PREFIX) ? url.slice(VENDOR_PREFIX.length) : '';
    if (!VENDOR.has(file)) throw notFound('file');
    const path = join(THREE_ROOT, file);
    await sendFile(exchange, path, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=86400' });
  };
}
