/**
 * A setting the service cannot use: the start stops with its message as one line (exit 2).
 * In a module of its own so the memory budget, which the configuration's defaults read,
 * can throw it without an import cycle.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
