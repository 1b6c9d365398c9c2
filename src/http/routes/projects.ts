/**
 * GET /api-rbxl/projects/{id} (the document) and /api-rbxl/projects/{id}/assets/{sha256}
 * (an asset's bytes): the owner only; anyone else gets the same 404 as for nothing.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { assetPath, isSha256, readAssetMeta } from '../../assets/store.js';
import { isProjectId } from '../../store/projects.js';
import { notFound, unauthorized } from '../errors.js';
import { sendError, sendFile, type Exchange } from '../exchange.js';
import type { ServiceContext } from '../context.js';

async function ownedProject(ctx: ServiceContext, exchange: Exchange, id: string) {
  if (!isProjectId(id)) throw notFound('project');
  const meta = await ctx.projects.getMeta(id);
  if (!meta || meta.owner !== exchange.user) throw notFound('project');
  return meta;
}

export function handleProject(ctx: ServiceContext, res: HttpResponse, req: HttpRequest): void {
  const exchange = ctx.begin(res, req);
  const id = req.getParameter(0) ?? '';
  exchange.user = ctx.authenticate((name) => req.getHeader(name));
  void (async () => {
    if (!exchange.user) throw unauthorized();
    await ownedProject(ctx, exchange, id);
    await sendFile(exchange, ctx.projects.documentPath(id), { 'Content-Type': 'application/json; charset=utf-8' });
  })().catch((error) => sendError(exchange, error, ctx.logError));
}

export function handleProjectAsset(ctx: ServiceContext, res: HttpResponse, req: HttpRequest): void {
  const exchange = ctx.begin(res, req);
  const id = req.getParameter(0) ?? '';
  const sha256 = req.getParameter(1) ?? '';
  exchange.user = ctx.authenticate((name) => req.getHeader(name));
  void (async () => {
    if (!exchange.user) throw unauthorized();
    const meta = await ownedProject(ctx, exchange, id);
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
  })().catch((error) => sendError(exchange, error, ctx.logError));
}
