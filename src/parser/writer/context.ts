import type { Value } from '../values.js';
import type { ByteWriter } from './bytes.js';

/** What a value encoder may need beyond the values themselves. */
export interface EncodeContext {
  /** Number of SSTR entries the file will carry (SharedString values index them). */
  readonly sharedStringCount: number;
}

/** Writes the values of one PROP chunk (everything after its type byte). */
export type ValueEncoder = (w: ByteWriter, values: readonly Value[], ctx: EncodeContext) => void;
