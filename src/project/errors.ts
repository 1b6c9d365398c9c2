/**
 * Errors of the project layer: a packed script whose header cannot be read, and a
 * script mode outside the contract. `code` is stable; the HTTP layer maps
 * `bad_scripts_mode` to 400.
 */
export type ProjectErrorCode = 'bad_packed_script' | 'bad_scripts_mode';

export class ProjectError extends Error {
  readonly code: ProjectErrorCode;

  constructor(code: ProjectErrorCode, message: string) {
    super(message);
    this.name = 'ProjectError';
    this.code = code;
  }
}

export function isProjectError(error: unknown): error is ProjectError {
  return error instanceof ProjectError;
}
