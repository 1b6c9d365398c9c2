/**
 * The scanner's findings for a map's scripts. Maps built from free models
 * hold many copies of one script (a fifth of slime-defense's source bytes
 * are repeats), and a copy has the same findings as its original, so each
 * distinct script is scanned once and its copies share the result.
 */
import { Buffer } from 'node:buffer';
import { scanScript, scanScriptBytes, type Finding } from '../scan/index.js';
import type { MapScript } from './map-scripts.js';

/**
 * Earlier scripts of the same key (a hash of the length and sampled bytes) a
 * script is compared with: bounds the comparisons on a map of many distinct
 * scripts that look alike.
 */
const MAX_CANDIDATES = 8;

interface Scanned {
  script: MapScript;
  findings: Finding[];
}

/**
 * The findings of one map script (the same call for every script the
 * analysis and the project document read). A binary file's source is
 * scanned as the bytes it holds, so the analysis never turns its scripts
 * into strings.
 */
export function scanMapScript(script: MapScript): Finding[] {
  const options = {
    className: script.className,
    runContext: script.runContext,
    ...(script.linkedSource !== undefined ? { linkedSource: script.linkedSource } : {}),
  };
  return script.bytes !== undefined ? scanScriptBytes(script.bytes, options) : scanScript(script.source, options);
}

/**
 * The findings of every script, in order. Copies of a script (same source,
 * class, run context and linked source) share one array: read it, do not
 * change it.
 */
export function scanMapScripts(scripts: readonly MapScript[]): Finding[][] {
  const seen = new Map<number, Scanned[]>();
  return scripts.map((script) => {
    const key = sampleKey(script);
    let candidates = seen.get(key);
    if (candidates === undefined) {
      candidates = [];
      seen.set(key, candidates);
    }
    for (const earlier of candidates) {
      if (sameScript(earlier.script, script)) return earlier.findings;
    }
    const findings = scanMapScript(script);
    if (candidates.length < MAX_CANDIDATES) candidates.push({ script, findings });
    return findings;
  });
}

/** Bytes (or characters) of a source sampled into its key, so that distinct scripts seldom need a full comparison. */
const SAMPLES = 16;

/** A hash of the source's length and a few of its bytes at fixed fractions of it: equal for copies, cheap to take. */
function sampleKey(script: MapScript): number {
  const { bytes } = script;
  const length = bytes !== undefined ? bytes.length : script.source.length;
  let hash = Math.imul(length, 0x9e3779b1);
  if (length > 0) {
    const text = bytes === undefined ? script.source : '';
    for (let i = 0; i < SAMPLES; i++) {
      const at = Math.floor(((i + 0.5) * length) / SAMPLES);
      hash = (Math.imul(hash, 31) + (bytes !== undefined ? bytes[at]! : text.charCodeAt(at))) | 0;
    }
  }
  return hash;
}

/** Whether two scripts have the same findings: the same options and the same source, compared as the file holds it. */
function sameScript(a: MapScript, b: MapScript): boolean {
  if (a.className !== b.className || a.runContext !== b.runContext || a.linkedSource !== b.linkedSource) return false;
  if (a.bytes !== undefined && b.bytes !== undefined) return a.bytes.length === b.bytes.length && Buffer.compare(a.bytes, b.bytes) === 0;
  if (a.bytes === undefined && b.bytes === undefined) return a.source === b.source;
  return false;
}
