/** Starts the real service on a free loopback port with a throw-away DATA_DIR. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../src/config.js';
import { startServer } from '../../src/http/server.js';

export interface TestService {
  /** http://127.0.0.1:PORT, without a trailing slash. */
  url: string;
  port: number;
  dataDir: string;
  /** Stops the service and removes its DATA_DIR. */
  close(): Promise<void>;
}

export async function startTestService(overrides: Partial<Config> = {}): Promise<TestService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-import-test-'));
  try {
    const server = await startServer({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      log: false,
      workers: 2,
      // No asset source that leaves the machine: without a key every asset fails fast.
      assetApiKey: null,
      assetUrlTemplate: null,
      ...overrides,
    });
    return {
      url: server.url.replace(/\/+$/, ''),
      port: server.port,
      dataDir,
      async close() {
        try {
          await server.close();
        } finally {
          await rm(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** An unsigned JWT-shaped token whose payload is `payload` (the service in development does not check signatures). */
export function tokenFor(payload: unknown): string {
  const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${segment({ alg: 'none', typ: 'JWT' })}.${segment(payload)}.signature`;
}
