/**
 * AssemblyScript, for `npm run bench:wasm-writer` only (the service does not use it):
 * the number-heavy fields of the project document's scene parts, written from flat
 * arrays with the algorithms of src/project/json-writer.ts (integers by digits, float32
 * in the shortest text that reads back, fractions' text cached by bit pattern), so the
 * benchmark can put the same text from JavaScript and from WebAssembly side by side.
 *
 * Memory is the host's (imported); the host lays out the inputs, the fixed texts and
 * the cache and passes their addresses. Fixed texts are [length u8][bytes] in slots of
 * FIXED_SLOT bytes: position, rotation, size, shape-and-colour, then the four flag texts.
 * The material table has one [offset u32][length u32] entry per material value.
 */
const POWERS_OF_TEN: StaticArray<f64> = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
const CACHE_BITS: u32 = 14;
const CACHED_BYTES: u32 = 16;
const FIXED_SLOT: usize = 48;
const MINUS: u8 = 0x2d, DOT: u8 = 0x2e, ZERO: u8 = 0x30, COMMA: u8 = 0x2c, OPEN: u8 = 0x5b, CLOSE: u8 = 0x5d;

let cacheKeys: usize = 0;
let cacheLengths: usize = 0;
let cacheText: usize = 0;
/** Values the fast path declined (the JavaScript writer's slow path would take them). */
export let declined: i32 = 0;

/** Bytes the cache needs at `at`. */
export function cacheBytes(): usize {
  return (4 + 1 + <usize>CACHED_BYTES) << CACHE_BITS;
}

/** Places the float text cache at `at` (cacheBytes() bytes) and empties it. */
export function resetCache(at: usize): void {
  cacheKeys = at;
  cacheLengths = at + (4 << CACHE_BITS);
  cacheText = cacheLengths + (1 << CACHE_BITS);
  memory.fill(cacheLengths, 0, 1 << CACHE_BITS);
  declined = 0;
}

function writeDigits(at: usize, n: u64, decimals: i32): usize {
  let count: i32 = 1;
  for (let p: u64 = 10; p <= n; p *= 10) count++;
  if (count <= decimals) count = decimals + 1;
  const end = at + <usize>count + (decimals > 0 ? 1 : 0);
  let i = end;
  let written: i32 = 0;
  while (written < count) {
    const q = n / 10;
    store<u8>(--i, <u8>(<u64>ZERO + n - q * 10));
    n = q;
    if (++written == decimals) store<u8>(--i, DOT);
  }
  return end;
}

function writeInteger(at: usize, n: i64): usize {
  if (n < 0) { store<u8>(at++, MINUS); n = -n; }
  return writeDigits(at, <u64>n, 0);
}

@inline function readsBack(x: f32, magnitude: f64, k: i32): bool {
  const power = unchecked(POWERS_OF_TEN[k]);
  const scaled = Math.round(magnitude * power);
  return <f32>((x < 0 ? -scaled : scaled) / power) == x;
}

/** A float32's text at `at`; where it ends (where it started, counted in `declined`, when the fast path declines it). */
function writeFloat32(at: usize, x: f32): usize {
  const whole = <i32>x;
  if (<f32>whole == x && Mathf.abs(x) < 2147483648.0) {
    if (x == 0 && 1 / x < 0) store<u8>(at++, MINUS);
    return writeInteger(at, whole);
  }
  const bits = reinterpret<u32>(x);
  const slot = <usize>((bits * 0x9e3779b1) >>> (32 - CACHE_BITS));
  const length = <usize>load<u8>(cacheLengths + slot);
  if (length != 0 && load<u32>(cacheKeys + (slot << 2)) == bits) {
    memory.copy(at, cacheText + slot * <usize>CACHED_BYTES, length);
    return at + length;
  }
  const end = writeFraction(at, x);
  if (end != at && end - at <= <usize>CACHED_BYTES) {
    store<u32>(cacheKeys + (slot << 2), bits);
    store<u8>(cacheLengths + slot, <u8>(end - at));
    memory.copy(cacheText + slot * <usize>CACHED_BYTES, at, end - at);
  }
  return end;
}

/** json-writer.ts's writeFloat32 past its whole-number case; `at` itself when it declines. */
function writeFraction(at: usize, x: f32): usize {
  const magnitude = Math.abs(<f64>x);
  if (!(magnitude < 1e7)) { declined++; return at; } // NaN too
  const first: i32 = magnitude >= 0.1 ? 0 : -<i32>Math.floor(Math.log10(magnitude));
  const last: i32 = min(first + 10, POWERS_OF_TEN.length);
  if (first >= last) { declined++; return at; }
  let lo = first, hi = last;
  if (readsBack(x, magnitude, first)) hi = first;
  else if (readsBack(x, magnitude, first + 1)) { hi = first + 1; lo = first + 1; }
  else lo = first + 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (readsBack(x, magnitude, mid)) hi = mid; else lo = mid + 1;
  }
  if (lo >= last) { declined++; return at; }
  let scaled = <u64>Math.round(magnitude * unchecked(POWERS_OF_TEN[lo]));
  while (lo > 0 && scaled % 10 == 0) { scaled /= 10; lo--; } // as json-writer.ts: no trailing zero
  if (x < 0) store<u8>(at++, MINUS);
  let digits: i32 = 1;
  for (let p: u64 = 10; p <= scaled; p *= 10) digits++;
  if (lo - digits <= 4) return writeDigits(at, scaled, lo);
  at = writeDigits(at, scaled, digits - 1);
  store<u8>(at++, 0x65); // e
  store<u8>(at++, MINUS);
  return writeDigits(at, <u64>(lo - digits + 1), 0);
}

function floats(at: usize, from: usize, count: i32): usize {
  store<u8>(at++, OPEN);
  for (let i = 0; i < count; i++) {
    if (i) store<u8>(at++, COMMA);
    at = writeFloat32(at, load<f32>(from + (<usize>i << 2)));
  }
  store<u8>(at++, CLOSE);
  return at;
}

@inline function fixedText(at: usize, slot: usize): usize {
  const length = <usize>load<u8>(slot);
  memory.copy(at, slot + 1, length);
  return at + length;
}

/**
 * Writes `count` parts' fields at `out`; returns where the text ends, or 0 when some
 * value needed the slow path (the text is then incomplete). Per part: 15 float32 (CFrame position, rotation rows, size),
 * a float32 transparency, a u16 material, three colour bytes and a flags byte.
 */
export function writeParts(count: i32, numbers: usize, transparency: usize, material: usize, colors: usize, flags: usize, fixed: usize, materials: usize, out: usize): usize {
  let at = out;
  for (let i = 0; i < count; i++) {
    const part = numbers + <usize>i * 60;
    at = fixedText(at, fixed);
    at = floats(at, part, 3);
    at = fixedText(at, fixed + FIXED_SLOT);
    at = floats(at, part + 12, 3); store<u8>(at++, COMMA);
    at = floats(at, part + 24, 3); store<u8>(at++, COMMA);
    at = floats(at, part + 36, 3); store<u8>(at++, CLOSE);
    at = fixedText(at, fixed + 2 * FIXED_SLOT);
    at = floats(at, part + 48, 3);
    at = fixedText(at, fixed + 3 * FIXED_SLOT);
    const color = colors + <usize>i * 3;
    at = writeInteger(at, load<u8>(color)); store<u8>(at++, COMMA);
    at = writeInteger(at, load<u8>(color + 1)); store<u8>(at++, COMMA);
    at = writeInteger(at, load<u8>(color + 2));
    const entry = materials + (<usize>load<u16>(material + (<usize>i << 1)) << 3);
    const text = <usize>load<u32>(entry), length = <usize>load<u32>(entry + 4);
    memory.copy(at, text, length);
    at += length;
    at = writeFloat32(at, load<f32>(transparency + (<usize>i << 2)));
    at = fixedText(at, fixed + (4 + <usize>load<u8>(flags + <usize>i)) * FIXED_SLOT);
  }
  return declined > 0 ? 0 : at;
}
