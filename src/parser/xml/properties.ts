/**
 * One Item's <Properties>: each child element is one property, its tag the type.
 * Unknown tags are skipped and counted as warnings, never errors.
 */
import type { Property } from '../values.js';
import { warn, type DecodeContext, type Decoder } from './context.js';
import { CONTENT_DECODERS } from './content.js';
import { REFERENCE_DECODERS } from './references.js';
import { SCALAR_DECODERS } from './scalars.js';
import { STRUCT_DECODERS } from './structs.js';
import { attributeOf, childrenOf, tagOf, type XmlNode } from './tree.js';

const DECODERS = new Map<string, Decoder>([
  ...SCALAR_DECODERS,
  ...STRUCT_DECODERS,
  ...CONTENT_DECODERS,
  ...REFERENCE_DECODERS,
]);

/** The XML tags this decoder reads. */
export const KNOWN_PROPERTY_TAGS: readonly string[] = [...DECODERS.keys()];

/** Decodes every property element under the given <Properties> elements into `into` (the last of a name wins). */
export function decodeProperties(propertiesElements: XmlNode[], ctx: DecodeContext, into: Map<string, Property>): void {
  for (const properties of propertiesElements) {
    for (const element of childrenOf(properties, 'Properties')) {
      const tag = tagOf(element);
      if (tag === undefined) continue; // whitespace between elements
      const name = attributeOf(element, 'name');
      if (name === undefined) {
        warn(ctx.warnings, 'property element without a name attribute, skipped', `${ctx.className} <${tag}>`);
        continue;
      }
      const decoder = DECODERS.get(tag);
      if (!decoder) {
        warn(ctx.warnings, `property of unknown type <${tag}> skipped`, `${ctx.className}.${name}`);
        ctx.skipped.add(ctx.className, name, `a property type the decoder does not know (XML <${tag}>)`);
        continue;
      }
      ctx.propertyName = name;
      ctx.element = element;
      const property = decoder(childrenOf(element, tag), ctx);
      if (property) into.set(name, property);
    }
  }
}
