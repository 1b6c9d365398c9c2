/** Starts the real service on a free loopback port with a throw-away DATA_DIR. */
import type { Config } from '../../src/config.js';
import { startService } from './service.js';

export interface TestService {
  /** http://127.0.0.1:PORT, without a trailing slash. */
  url: string;
  port: number;
  dataDir: string;
  /** Stops the service and removes its DATA_DIR. */
  close(): Promise<void>;
}

export async function startTestService(overrides: Partial<Config> = {}): Promise<TestService> {
  const { url, port, dataDir, close } = await startService(overrides);
  return { url: url.replace(/\/+$/, ''), port, dataDir, close };
}

/** An unsigned JWT-shaped token whose payload is `payload` (the service in development does not check signatures). */
export function tokenFor(payload: unknown): string {
  const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${segment({ alg: 'none', typ: 'JWT' })}.${segment(payload)}.signature`;
}
