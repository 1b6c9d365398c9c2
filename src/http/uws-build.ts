/**
 * Whether uWebSockets.js runs its native build. The package's loader quietly falls back
 * to a JavaScript implementation where its binary does not load (no build for the
 * running Node: it ships Node 16, 18 and 20 builds; an old or foreign C library; or
 * UWS_USE_FALLBACK set). That fallback lacks calls the service makes (every route would
 * answer 500), so the start refuses it, judged by what was actually loaded.
 */
import { createRequire } from 'node:module';

/** Why the service would run on the fallback, given the paths of the modules loaded; null when a native build is among them. */
export function uwsFallbackReason(loaded: readonly string[], node: string, target: string): string | null {
  if (loaded.some((path) => /[\\/]uWebSockets\.js[\\/].+\.node$/.test(path))) return null;
  return `uWebSockets.js loaded its JavaScript fallback, not a native build, on Node ${node} (${target}); the service cannot serve on it: run it on Node 20 with glibc 2.27 or newer`;
}

/** uwsFallbackReason for this process (call it once uWebSockets.js is imported). */
export function currentUwsFallbackReason(): string | null {
  return uwsFallbackReason(Object.keys(createRequire(import.meta.url).cache), process.versions.node, `${process.platform}-${process.arch}`);
}
