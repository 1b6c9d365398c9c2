/**
 * The one error the writer throws: a DOM it cannot turn into a valid file (a value
 * whose shape does not match its property type, duplicate referents...). It names
 * the class, property and instance referent when one was being written.
 */
export interface EncodeErrorContext {
  className?: string;
  property?: string;
  referent?: number;
}

export class EncodeError extends Error {
  readonly className?: string;
  readonly property?: string;
  readonly referent?: number;

  constructor(message: string, context: EncodeErrorContext = {}) {
    super(message + describe(context));
    this.name = 'EncodeError';
    this.className = context.className;
    this.property = context.property;
    this.referent = context.referent;
  }
}

function describe({ className, property, referent }: EncodeErrorContext): string {
  const parts: string[] = [];
  if (className !== undefined) parts.push(property !== undefined ? `property ${className}.${property}` : `class ${className}`);
  else if (property !== undefined) parts.push(`property ${property}`);
  if (referent !== undefined) parts.push(`instance ${referent}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** Thrown by value encoders with the row only; the PROP writer adds class, property and referent. */
export class ValueShapeError extends Error {
  constructor(message: string, readonly row: number) {
    super(message);
    this.name = 'ValueShapeError';
  }
}
