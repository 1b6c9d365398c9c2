/**
 * GET /api-rbxl/projects/{id} (the document), DELETE /api-rbxl/projects/{id},
 * GET /api-rbxl/projects/{id}/summary (what the project page shows) and
 * GET /api-rbxl/projects/{id}/assets/{sha256} (an asset's bytes): the owner only;
 * anyone else gets the same 404 as for nothing.
 */
import type { HttpRequest } from 'uWebSockets.js';
import { acceptsDocumentEncoding, documentDecompressor } from '../../project/compression.js';
import { send, sendJson, sendObject, sendStream, type Exchange } from '../exchange.js';
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
    const acceptsStored = acceptsDocumentEncoding(headerList(req, 'accept-encoding'));
    const { meta, stream } = await ctx.service.projects.document(exchange.user!, id);
    const json = { 'Content-Type': 'application/json; charset=utf-8' };
    if (meta.encoding === undefined) {
      await sendObject(exchange, stream.body, stream.size, json);
    } else if (acceptsStored) {
      await sendObject(exchange, stream.body, stream.size, { ...json, 'Content-Encoding': meta.encoding, Vary: 'Accept-Encoding' });
    } else {
      const inflate = documentDecompressor();
      stream.body.on('error', (error) => inflate.destroy(error));
      inflate.on('close', () => stream.body.destroy());
      await sendStream(exchange, stream.body.pipe(inflate), { ...json, Vary: 'Accept-Encoding' });
    }
  };
}

/**
 * A list header's value as RFC 9110 5.3 reads it: every field line of that name, joined
 * with commas. getHeader gives the first line only, and `Accept-Encoding: *` followed by
 * `Accept-Encoding: br;q=0` (a refusal) was answered with `Content-Encoding: br`.
 */
function headerList(req: HttpRequest, name: string): string {
  const values: string[] = [];
  req.forEach((key, value) => {
    if (key === name) values.push(value);
  });
  return values.join(', ');
}

export function projectSummaryRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const id = req.getParameter(0) ?? '';
    const { meta, stream } = await ctx.service.projects.summary(exchange.user!, id);
    if (stream !== undefined) {
      // Streamed with back-pressure: a summary of a map with 100,000 assets is megabytes,
      // and held whole for each client that reads slowly it cost the main thread 12 MB each.
      await sendObject(exchange, stream.body, stream.size, { 'Content-Type': 'application/json; charset=utf-8' });
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

/** Media types an asset keeps when served: images (SVG aside), sound, video, meshes, fonts. */
const INERT_ASSET_TYPE = /^(?:image\/(?!svg)[a-z0-9.+-]+|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+|model\/[a-z0-9.+-]+|font\/[a-z0-9.+-]+|application\/octet-stream)$/;

/**
 * The Content-Type an asset is served with: its stored type when inert, else
 * application/octet-stream. Any `+xml` type is a document a browser may run script in
 * (model/x3d+xml too), whatever its top-level type.
 */
export function servedAssetType(stored: string): string {
  return INERT_ASSET_TYPE.test(stored) && !stored.endsWith('+xml') ? stored : 'application/octet-stream';
}

export function projectAssetRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const id = req.getParameter(0) ?? '';
    const sha256 = req.getParameter(1) ?? '';
    const { meta, stream } = await ctx.service.projects.asset(exchange.user!, id, sha256);
    // The upstream's content type is not trusted to render: never inline, never sniffed,
    // and never a type a page could run (a script's or a document's), whatever it said.
    await sendObject(exchange, stream.body, stream.size, {
      'Content-Type': servedAssetType(meta.contentType),
      'Content-Disposition': `attachment; filename="${sha256}"`,
      'Content-Security-Policy': "default-src 'none'; sandbox",
      ETag: `"${sha256}"`,
    });
  };
}
