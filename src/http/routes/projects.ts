/**
 * GET /api-rbxl/projects/{id} (the document), DELETE /api-rbxl/projects/{id},
 * GET /api-rbxl/projects/{id}/summary (what the project page shows) and
 * GET /api-rbxl/projects/{id}/assets/{sha256} (an asset's bytes): the owner only;
 * anyone else gets the same 404 as for nothing.
 */
import { createReadStream } from 'node:fs';
import type { HttpRequest } from 'uWebSockets.js';
import { assetPath, isSha256, readAssetMeta } from '../../assets/store.js';
import { acceptsDocumentEncoding, documentDecompressor } from '../../project/compression.js';
import { notFound } from '../errors.js';
import { send, sendFile, sendJson, sendStream, type Exchange } from '../exchange.js';
import type { HttpContext } from '../context.js';
import type { RouteHandler } from '../route.js';

/**
 * The document as stored: compressed documents (version 2) go out with
 * `Content-Encoding: br` to clients that accept it, and are decompressed on the way
 * (chunked) for those that do not; plain ones (version 1, stored before) as they are.
 */
export function projectRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const id = req.getParameter(0) ?? '';
    const acceptsStored = acceptsDocumentEncoding(req.getHeader('accept-encoding'));
    const meta = await ctx.service.projects.owned(exchange.user!, id);
    const path = ctx.service.projects.documentPath(id);
    const json = { 'Content-Type': 'application/json; charset=utf-8' };
    if (meta.encoding === undefined) {
      await sendFile(exchange, path, json);
    } else if (acceptsStored) {
      await sendFile(exchange, path, { ...json, 'Content-Encoding': meta.encoding, Vary: 'Accept-Encoding' });
    } else {
      const file = createReadStream(path);
      const inflate = documentDecompressor();
      file.on('error', (error) => inflate.destroy(error));
      await sendStream(exchange, file.pipe(inflate), { ...json, Vary: 'Accept-Encoding' });
    }
  };
}

export function projectSummaryRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const id = req.getParameter(0) ?? '';
    const { meta, text } = await ctx.service.projects.summary(exchange.user!, id);
    if (text !== undefined) {
      send(exchange, 200, text, { 'Content-Type': 'application/json; charset=utf-8' });
      return;
    }
    // A project created before summaries were kept: what its sidecar knows.
    sendJson(exchange, 200, {
      project_id: id,
      created_at: meta.createdAt !== undefined ? new Date(meta.createdAt).toISOString() : null,
      document_bytes: meta.bytes ?? null,
      assets: null,
      report: null,
    });
  };
}

export function deleteProjectRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const id = req.getParameter(0) ?? '';
    await ctx.service.projects.delete(exchange.user!, id);
    send(exchange, 204, '', {});
  };
}

export function projectAssetRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const id = req.getParameter(0) ?? '';
    const sha256 = req.getParameter(1) ?? '';
    const meta = await ctx.service.projects.owned(exchange.user!, id);
    if (!isSha256(sha256) || !meta.assets.includes(sha256)) throw notFound('asset');
    const asset = await readAssetMeta(ctx.config.dataDir, sha256);
    if (!asset) throw notFound('asset');
    // The upstream's content type is not trusted to render: never inline, never sniffed.
    await sendFile(exchange, assetPath(ctx.config.dataDir, sha256), {
      'Content-Type': asset.contentType,
      'Content-Disposition': `attachment; filename="${sha256}"`,
      'Content-Security-Policy': "default-src 'none'; sandbox",
      ETag: `"${sha256}"`,
    });
  };
}
