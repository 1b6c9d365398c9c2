/** The comparison rules of ../shared/conformance/README.md. */

/** Returns a path to the first difference, or null when `actual` matches `expected`. */
export function conformanceDiff(expected: unknown, actual: unknown, floatKind: 'Float32' | 'Float64' | null = null, path = '$'): string | null {
  if (expected === 'NaN') return typeof actual === 'number' && Number.isNaN(actual) ? null : `${path}: expected NaN, got ${show(actual)}`;
  if (expected === 'Infinity' || expected === '-Infinity') {
    const want = expected === 'Infinity' ? Infinity : -Infinity;
    return actual === want ? null : `${path}: expected ${expected}, got ${show(actual)}`;
  }
  if (typeof expected === 'number') {
    if (typeof actual === 'string' && /^-?\d+$/.test(actual)) return BigInt(actual) === BigInt(expected) ? null : `${path}: ${expected} != ${actual}`;
    if (typeof actual !== 'number') return `${path}: expected ${expected}, got ${show(actual)}`;
    const want = floatKind === 'Float32' ? Math.fround(expected) : expected;
    return Object.is(want, actual) || want === actual ? null : `${path}: expected ${want}, got ${actual}`;
  }
  if (typeof expected === 'string' && /^-?\d+$/.test(expected) && (typeof actual === 'number' || typeof actual === 'string')) {
    return BigInt(expected) === BigInt(actual) ? null : `${path}: ${expected} != ${actual}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${show(actual)}`;
    if (expected.length !== actual.length) return `${path}: expected ${expected.length} elements, got ${actual.length}`;
    for (let i = 0; i < expected.length; i++) {
      const diff = conformanceDiff(expected[i], actual[i], floatKind, `${path}[${i}]`);
      if (diff) return diff;
    }
    return null;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: expected an object, got ${show(actual)}`;
    const e = expected as Record<string, unknown>, a = actual as Record<string, unknown>;
    const keys = new Set([...Object.keys(e), ...Object.keys(a)]);
    // Float32 applies to every float inside a value of a float-based type.
    const kind = typeof e.prop_type === 'string' ? floatKindOf(e.prop_type) : floatKind;
    for (const key of keys) {
      if (!(key in e)) return `${path}.${key}: unexpected member`;
      if (!(key in a)) return `${path}.${key}: missing`;
      const diff = conformanceDiff(e[key], a[key], key === 'values' ? kind : floatKind, `${path}.${key}`);
      if (diff) return diff;
    }
    return null;
  }
  return Object.is(expected, actual) ? null : `${path}: expected ${show(expected)}, got ${show(actual)}`;
}

function floatKindOf(type: string): 'Float32' | 'Float64' | null {
  if (type === 'Float64') return 'Float64';
  if (['Int32', 'Int64', 'Enum', 'BrickColor', 'Ref', 'SharedString', 'SecurityCapabilities', 'Vector3int16', 'Color3uint8', 'Bool', 'String'].includes(type)) return null;
  return 'Float32';
}

function show(value: unknown): string {
  return JSON.stringify(value)?.slice(0, 120) ?? String(value);
}
