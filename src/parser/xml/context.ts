/**
 * What property decoders share: limits, the referent and SharedString tables, the
 * warning log, and where they are (class, property, element) for error messages.
 * One context is reused for every property, so decoding allocates nothing for it.
 */
import { DecodeError } from '../errors.js';
import type { DecodeLimits } from '../limits.js';
import type { Property } from '../values.js';
import { startIndexOf, type XmlNode } from './tree.js';
import type { WarningLog } from '../warnings.js';
import type { SkipLog } from '../skipped.js';

export interface DecodeContext {
  readonly limits: DecodeLimits;
  /** Item referent attribute → sequential referent. */
  readonly referents: Map<string, number>;
  /** SharedString md5 key → index into Dom.sharedStrings. */
  readonly sharedStringKeys: Map<string, number>;
  readonly warnings: WarningLog;
  /** Properties skipped without a value, per class and name (the import report's "not imported"). */
  readonly skipped: SkipLog;
  /** Byte offset in the file of a character index in the decoded text. */
  readonly byteOffset: (charIndex: number) => number;
  className: string;
  propertyName: string;
  /** The property element being decoded. */
  element: XmlNode;
}

/** Throws the DecodeError for the property being decoded, at its element's offset; `limit` names the cap it passed. */
export function fail(ctx: DecodeContext, message: string, limit?: keyof DecodeLimits): never {
  const start = startIndexOf(ctx.element);
  throw new DecodeError(message, {
    chunk: 'xml',
    property: `${ctx.className}.${ctx.propertyName}`,
    offset: start === undefined ? undefined : ctx.byteOffset(start),
    ...(limit ? { limit } : {}),
  });
}

export { warn, warningLines, type WarningLog } from '../warnings.js';

/** Decodes one property element's children; undefined when the property is skipped (with a warning). */
export type Decoder = (children: XmlNode[], ctx: DecodeContext) => Property | undefined;
