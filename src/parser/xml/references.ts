/**
 * Values that point elsewhere in the file: Ref (an Item's referent attribute) and
 * SharedString / NetAssetRef (a SharedString definition's md5 key), plus the
 * SharedStrings table itself.
 */
import { fail, warn, type DecodeContext, type Decoder, type WarningLog } from './context.js';
import { base64Bytes } from './scalars.js';
import { attributeOf, childrenOf, tagOf, textOf, type XmlNode } from './tree.js';

/** The sequential referent of an Item referent string; -1 for `null`, empty, or (with a warning) unknown. */
export function resolveReferent(ctx: DecodeContext, text: string): number {
  const key = text.trim();
  if (key === '' || key === 'null') return -1;
  const referent = ctx.referents.get(key);
  if (referent !== undefined) return referent;
  warn(ctx.warnings, 'Ref to a referent no Item has, read as none', `${ctx.className}.${ctx.propertyName} = ${key.slice(0, 60)}`);
  return -1;
}

const ref: Decoder = (children, ctx) => ({ type: 'Ref', value: resolveReferent(ctx, textOf(children)) });

/** An index into Dom.sharedStrings; an unknown key skips the property with a warning. */
const sharedString: Decoder = (children, ctx) => {
  const key = textOf(children).trim();
  const index = ctx.sharedStringKeys.get(key);
  if (index !== undefined) return { type: 'SharedString', value: index };
  warn(ctx.warnings, 'SharedString key with no definition, property skipped', `${ctx.className}.${ctx.propertyName} = ${key.slice(0, 60)}`);
  ctx.skipped.add(ctx.className, ctx.propertyName, 'a SharedString key the file does not define');
  return undefined;
};

export const REFERENCE_DECODERS: [string, Decoder][] = [
  ['Ref', ref],
  ['SharedString', sharedString],
  // Binary files store NetAssetRef exactly like SharedString, under its type id.
  ['NetAssetRef', sharedString],
];

/**
 * Reads <SharedStrings>: each <SharedString md5="key"> holds base64 bytes. Returns the
 * bytes in file order and the key → index map.
 */
export function readSharedStrings(
  ctx: DecodeContext,
  tables: XmlNode[],
  warnings: WarningLog,
): { strings: Uint8Array[]; keys: Map<string, number> } {
  const strings: Uint8Array[] = [];
  const keys = new Map<string, number>();
  for (const table of tables) {
    for (const definition of childrenOf(table, 'SharedStrings')) {
      if (tagOf(definition) !== 'SharedString') continue;
      const key = attributeOf(definition, 'md5');
      ctx.element = definition;
      ctx.propertyName = key ?? '';
      if (key === undefined) fail(ctx, '<SharedString> definition has no md5 attribute');
      if (keys.has(key)) {
        warn(warnings, 'SharedString key defined twice, the first definition kept', key);
        continue;
      }
      keys.set(key, strings.length);
      strings.push(base64Bytes(ctx, textOf(childrenOf(definition, 'SharedString'))));
    }
  }
  return { strings, keys };
}
