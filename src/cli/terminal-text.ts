/** Text for the terminal, from a file or the service, with its control characters made harmless. */

/**
 * Text from the service as the terminal gets it: control characters other than line
 * breaks and tabs (an escape sequence could retitle the window or clear the screen),
 * DEL and the C1 controls are written as `\u00XX`, which also keeps JSON output valid.
 */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this replaces
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A message as one terminal line: what terminalSafe escapes, and line breaks, tabs and
 * bidirectional controls as well (a name from a file may hold any of them).
 */
export function terminalLine(text: string): string {
  return terminalSafe(text).replace(/[\t\n\r\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
