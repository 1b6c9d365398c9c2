/**
 * Whether uWebSockets.js runs its native build. The package's loader quietly falls back
 * to a slow JavaScript implementation where it has no binary for the running Node (it
 * ships Node 16, 18 and 20 builds: on Node 22 the service would serve, slowly and with
 * other HTTP behaviour, and nothing would say so). The start refuses that, unless the
 * operator asked for the fallback by name (UWS_USE_FALLBACK, the package's own switch).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface UwsBuildInput {
  platform: string;
  arch: string;
  /** process.versions.modules: the Node ABI a native build is made for. */
  modules: string;
  node: string;
  fallbackRequested: boolean;
  binaryExists: (file: string) => boolean;
}

/** Why the service would run on the fallback, or null when the native build loads. */
export function uwsFallbackReason(input: UwsBuildInput): string | null {
  if (input.fallbackRequested) return null;
  const file = `uws_${input.platform}_${input.arch}_${input.modules}.node`;
  if (input.binaryExists(file)) return null;
  return `uWebSockets.js has no native build for Node ${input.node} on ${input.platform}-${input.arch} (${file}), and its JavaScript fallback is not fit to serve: run the service on Node 20 (or set UWS_USE_FALLBACK=1 to run the fallback anyway)`;
}

/** uwsFallbackReason for this process. */
export function currentUwsFallbackReason(env: NodeJS.ProcessEnv = process.env): string | null {
  const binaries = join(dirname(createRequire(import.meta.url).resolve('uWebSockets.js')), '..', 'binaries');
  return uwsFallbackReason({
    platform: process.platform,
    arch: process.arch,
    modules: process.versions.modules,
    node: process.versions.node,
    fallbackRequested: ['true', 'True', 'TRUE', '1'].includes(env.UWS_USE_FALLBACK ?? ''), // the loader's own test
    binaryExists: (file) => existsSync(join(binaries, file)),
  });
}
