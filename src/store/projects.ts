/**
 * The project store: one JSON document per project under `<dataDir>/projects/`,
 * written atomically, named by a random id that is safe in URLs and paths.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { directoryMaker, isNotFound, writeFileAtomic } from './atomic.js';

export interface ProjectStoreOptions {
  dataDir: string;
}

export interface ProjectStore {
  /** Stores a new project document and returns its id ('p_' and 20 base32 characters). */
  save(doc: object & { owner: string }): Promise<string>;
  /** The document, or undefined when unknown or `id` is not a project id. Ownership is the caller's check. */
  get(id: string): Promise<Record<string, unknown> | undefined>;
  /**
   * Stores a document already serialised (by a worker, so the main thread never
   * stringifies a large scene) with a small sidecar the HTTP layer checks ownership
   * and asset access against without parsing the document.
   */
  saveSerialized(json: string, meta: ProjectMeta): Promise<string>;
  getMeta(id: string): Promise<ProjectMeta | undefined>;
  /** Where the document's JSON lives (for streaming it out). Throws on a malformed id. */
  documentPath(id: string): string;
}

export interface ProjectMeta {
  owner: string;
  /** SHA-256 of every asset the project references, so only those are served. */
  assets: string[];
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const PROJECT_ID = /^p_[a-z2-7]{20}$/;

export function isProjectId(id: string): boolean {
  return PROJECT_ID.test(id);
}

/** 100 random bits: collisions are not a practical concern, so ids are not checked for reuse. */
export function newProjectId(): string {
  const bytes = randomBytes(20);
  let id = 'p_';
  for (const byte of bytes) id += ALPHABET[byte & 31];
  return id;
}

export function createProjectStore(options: ProjectStoreOptions): ProjectStore {
  const dir = join(options.dataDir, 'projects');
  const ready = directoryMaker(dir);
  const pathOf = (id: string): string => join(dir, `${id}.json`);
  const metaPathOf = (id: string): string => join(dir, `${id}.meta`);

  async function save(doc: object & { owner: string }): Promise<string> {
    if (typeof doc.owner !== 'string' || doc.owner === '') throw new TypeError('a project document needs an owner');
    const id = newProjectId();
    await ready();
    await writeFileAtomic(pathOf(id), JSON.stringify(doc));
    return id;
  }

  async function get(id: string): Promise<Record<string, unknown> | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    let text: string;
    try {
      text = await readFile(pathOf(id), 'utf8');
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    return JSON.parse(text) as Record<string, unknown>;
  }

  async function saveSerialized(json: string, meta: ProjectMeta): Promise<string> {
    if (typeof meta.owner !== 'string' || meta.owner === '') throw new TypeError('a project needs an owner');
    const id = newProjectId();
    await ready();
    // Document first: a meta file always points at a complete document.
    await writeFileAtomic(pathOf(id), json);
    await writeFileAtomic(metaPathOf(id), JSON.stringify(meta));
    return id;
  }

  async function getMeta(id: string): Promise<ProjectMeta | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    try {
      return JSON.parse(await readFile(metaPathOf(id), 'utf8')) as ProjectMeta;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  function documentPath(id: string): string {
    if (!PROJECT_ID.test(id)) throw new RangeError(`not a project id: ${JSON.stringify(id)}`);
    return pathOf(id);
  }

  return { save, get, saveSerialized, getMeta, documentPath };
}
