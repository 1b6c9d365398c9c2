/**
 * `npm start` / `rbxl-import serve`: the service with its configuration from the
 * environment, stopped gracefully on SIGTERM/SIGINT.
 */
import { pathToFileURL } from 'node:url';
import { configFromEnv, ConfigError } from './config.js';
import { startServer } from './http/server.js';

/** Starts the service; false (having said why in one line) when its configuration cannot be used. */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  let config;
  let server;
  // A log reader that goes away (a closed pipe) costs the log, not the service: it says so once and serves on.
  // Listened for before the pool starts: each worker's stdout is piped into this stream (Node raises the
  // limit for its own pipes), so one listener added after ten workers warned of a leak that is none.
  let logLost = false;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (logLost) return;
    logLost = true;
    process.stderr.write(`rbxl-import: the request log can no longer be written (${error.code ?? error.message}); serving on without it\n`);
  });
  try {
    config = configFromEnv(env);
    server = await startServer(config); // the memory budget is checked here (BudgetError is a ConfigError)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`rbxl-import: ${error.message}\n`);
      return false;
    }
    throw error;
  }
  process.stdout.write(JSON.stringify({
    t: new Date().toISOString(), msg: 'listening', url: server.url, page: server.pageUrl, data_dir: config.dataDir,
    auth_mode: config.authMode, workers: config.workers,
  }) + '\n');
  // The one line a person starting the service for the first time needs, apart from the JSON log.
  process.stderr.write(`rbxl-import: import page at ${server.pageUrl}${config.authMode === 'development' ? ' (development sign-in: no token needed)' : ''}\n`);
  const stop = (signal: string): void => {
    process.stdout.write(JSON.stringify({ t: new Date().toISOString(), msg: 'shutting down', signal }) + '\n');
    server.close(config.shutdownGraceMs).then(() => process.exit(0), (error) => {
      process.stderr.write(`rbxl-import: shutdown failed: ${(error as Error)?.message}\n`);
      process.exit(1);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && !(await serve())) process.exitCode = 2;
