/**
 * An S3-compatible server for tests: s3rver (a dev dependency, nothing downloaded) in a
 * child process on loopback, storing in a temp folder, with a bucket made up front. It can
 * be killed (SIGKILL: a crashed store, every connection cut) and started again on the same
 * port and folder, so a client made before the crash is the one tested after it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const S3_TEST_ENV = {
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REGION: 'us-east-1',
  S3_FORCE_PATH_STYLE: '1',
} as const;

export interface TestS3Server {
  /** e.g. http://127.0.0.1:41234 */
  endpoint: string;
  port: number;
  bucket: string;
  /** Where s3rver keeps buckets (to look at what is stored, parts included). */
  directory: string;
  /** Called with `METHOD path?query` for every request the server receives (e.g. to kill it mid-upload). */
  onRequest(listener: ((line: string) => void) | undefined): void;
  running(): boolean;
  /** Kills the server process. */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder. */
  start(): Promise<void>;
  /** Stops it and removes the folder. */
  close(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./s3rver-process.js', import.meta.url));

export async function startS3Server(options: { bucket?: string; reportRequests?: boolean } = {}): Promise<TestS3Server> {
  const bucket = options.bucket ?? 'rbxl-test';
  const directory = await mkdtemp(join(tmpdir(), 'rbxl-s3rver-'));
  let port = 0;
  let child: ChildProcess | undefined;
  let listener: ((line: string) => void) | undefined;

  async function start(): Promise<void> {
    if (child !== undefined) return;
    const started = fork(CHILD, [directory, String(port), bucket], {
      execArgv: ['--openssl-legacy-provider'],
      env: { ...process.env, REPORT_REQUESTS: options.reportRequests === false ? '0' : '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child = started;
    port = await new Promise<number>((resolve, reject) => {
      started.on('message', (message: { port?: number; request?: string }) => {
        if (message.port !== undefined) resolve(message.port);
        if (message.request !== undefined) listener?.(message.request);
      });
      started.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before listening`)));
    });
  }

  async function stop(): Promise<void> {
    const running = child;
    if (running === undefined) return;
    child = undefined;
    if (running.exitCode === null && running.signalCode === null) {
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    }
  }

  await start();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    bucket,
    directory,
    onRequest: (fn) => {
      listener = fn;
    },
    running: () => child !== undefined,
    stop,
    start,
    close: async () => {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
