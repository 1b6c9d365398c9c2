/** Locations tests read from: the repository root and ../shared beside it. */
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';

// This file runs as dist/test/support/paths.js: three levels below the repository root.
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const SHARED = process.env.RBXL_SHARED_DIR ?? join(REPO_ROOT, '..', 'shared');
export const CONFORMANCE_DIR = join(SHARED, 'conformance');
export const CORPUS_DIR = join(SHARED, 'corpus');
export const TEST_FILES_DIR = join(CORPUS_DIR, 'rbx-test-files');
export const PLACES_DIR = join(CORPUS_DIR, 'places');
