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

  return { save, get };
}
