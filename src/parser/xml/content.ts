/**
 * Content-like values: the legacy content id (<url>/<null>, a String in binary
 * files), the newer Content struct (<uri>/<null>/an object), and Font, whose family
 * and cached face are content ids.
 */
import { FONT_STYLES, FONT_WEIGHTS, type FontValue } from '../values.js';
import { warn, type DecodeContext, type Decoder } from './context.js';
import { int32, readFields } from './fields.js';
import { parseInteger } from './numbers.js';
import { resolveReferent } from './references.js';
import { stringText } from './scalars.js';
import { childrenOf, findChild, firstElement, tagOf, textOf, type XmlNode } from './tree.js';

type ContentPart =
  | { kind: 'none' }
  | { kind: 'url' | 'uri' | 'object'; text: string }
  | { kind: 'unknown'; tag: string };

/** What a content element holds: its one child element, or bare text in hand-written files. */
function contentPart(ctx: DecodeContext, children: XmlNode[]): ContentPart {
  const child = firstElement(children);
  if (!child) {
    const text = stringText(ctx, children);
    return text.trim() === '' ? { kind: 'none' } : { kind: 'url', text };
  }
  const tag = tagOf(child)!;
  switch (tag) {
    // Older files wrote <binary> and <hash>; rbx-dom's spec reads them as an empty content id.
    case 'null': case 'binary': case 'hash': return { kind: 'none' };
    case 'url': return { kind: 'url', text: stringText(ctx, childrenOf(child, tag)) };
    case 'uri': return { kind: 'uri', text: stringText(ctx, childrenOf(child, tag)) };
    case 'Object': case 'object': case 'Ref': case 'ref':
      return { kind: 'object', text: textOf(childrenOf(child, tag)) };
    default: return { kind: 'unknown', tag };
  }
}

/**
 * Studio writes both content kinds under the tag <Content>, and an empty value as
 * <null> in both. The newer Content properties are all named "...Content" (or
 * PackageLink's "PackageContentSerialize") in rbx-dom's reflection database; no
 * legacy content id is.
 */
function isContentStruct(propertyName: string): boolean {
  return propertyName.endsWith('Content') || propertyName.endsWith('ContentSerialize');
}

const content: Decoder = (children, ctx) => {
  const part = contentPart(ctx, children);
  switch (part.kind) {
    case 'url': return { type: 'String', value: part.text };
    case 'uri': return { type: 'Content', value: { Uri: part.text } };
    case 'object': return { type: 'Content', value: { Object: resolveReferent(ctx, part.text) } };
    case 'none': return isContentStruct(ctx.propertyName) ? { type: 'Content', value: 'None' } : { type: 'String', value: '' };
    case 'unknown':
      warn(ctx.warnings, 'Content holding an unknown element, property skipped', `${ctx.className}.${ctx.propertyName} <${part.tag}>`);
      ctx.skipped.add(ctx.className, ctx.propertyName, `a Content value the decoder cannot read (<${part.tag}>)`);
      return undefined;
  }
};

/** <ContentId> (what Studio release 645 wrote for legacy content): always a String. */
const contentId: Decoder = (children, ctx) => {
  const part = contentPart(ctx, children);
  if (part.kind === 'unknown') {
    warn(ctx.warnings, 'ContentId holding an unknown element, property skipped', `${ctx.className}.${ctx.propertyName} <${part.tag}>`);
    ctx.skipped.add(ctx.className, ctx.propertyName, `a ContentId value the decoder cannot read (<${part.tag}>)`);
    return undefined;
  }
  return { type: 'String', value: part.kind === 'none' ? '' : part.text };
};

/** rbx-dom's Font::default(), for the empty <Font> elements older Studio versions wrote. */
const DEFAULT_FONT: FontValue = {
  family: 'rbxasset://fonts/families/SourceSansPro.json', weight: 'Regular', style: 'Normal', cachedFaceId: null,
};

function contentText(ctx: DecodeContext, children: XmlNode[]): string {
  const part = contentPart(ctx, children);
  return part.kind === 'url' || part.kind === 'uri' || part.kind === 'object' ? part.text : '';
}

/**
 * Family and CachedFaceId are content ids; Weight a number (named as binary files'
 * decoding names it, unknown weights as Regular); Style a name. A missing or empty
 * CachedFaceId is null, as binary files' empty string decodes.
 */
const font: Decoder = (children, ctx) => {
  if (!firstElement(children)) return { type: 'Font', value: { ...DEFAULT_FONT } };
  const [family, weight, style] = readFields(ctx, children, ['Family', 'Weight', 'Style']);
  const weightNumber = int32(ctx, textOf(weight!), 'Weight');
  const styleText = textOf(style!).trim();
  const styleNumber = parseInteger(styleText, 0, 255);
  const cached = findChild(children, 'CachedFaceId');
  const cachedFaceId = cached ? contentText(ctx, childrenOf(cached, 'CachedFaceId')) : '';
  return {
    type: 'Font',
    value: {
      family: contentText(ctx, family!),
      weight: FONT_WEIGHTS[weightNumber] ?? 'Regular',
      style: styleNumber !== undefined
        ? FONT_STYLES[styleNumber] ?? 'Normal'
        : (FONT_STYLES as readonly string[]).includes(styleText) ? styleText : 'Normal',
      cachedFaceId: cachedFaceId === '' ? null : cachedFaceId,
    },
  };
};

export const CONTENT_DECODERS: [string, Decoder][] = [
  ['Content', content],
  ['ContentId', contentId],
  ['Font', font],
];
