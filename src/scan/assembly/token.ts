/**
 * The token stream layout, shared with the host (lexer.ts on the JavaScript
 * side reads it): four i32s per token, `kind | word << 8`, start and end byte
 * offsets (for strings, of their contents) and the 1-based line it starts on.
 */
export const TOKEN_BYTES = 16;
/** EOF tokens after the last real one, for lookahead without bounds tests. */
export const TOKEN_PADDING = 4;

let tokens: usize = 0;

/** Points the readers below at a stream. */
export function useTokens(stream: usize): void {
  tokens = stream;
}

@inline export function writeToken(stream: usize, i: i32, kindWord: i32, start: i32, end: i32, line: i32): void {
  const o = stream + (<usize>i << 4);
  store<i32>(o, kindWord);
  store<i32>(o, start, 4);
  store<i32>(o, end, 8);
  store<i32>(o, line, 12);
}

@inline export function kindAt(i: i32): i32 {
  return load<i32>(tokens + (<usize>i << 4)) & 0xff;
}

@inline export function wordAt(i: i32): i32 {
  return load<i32>(tokens + (<usize>i << 4)) >>> 8;
}

@inline export function startAt(i: i32): i32 {
  return load<i32>(tokens + (<usize>i << 4), 4);
}

@inline export function endAt(i: i32): i32 {
  return load<i32>(tokens + (<usize>i << 4), 8);
}

@inline export function lineAt(i: i32): i32 {
  return load<i32>(tokens + (<usize>i << 4), 12);
}
