/** Binary property type ids (binary.md "Data Types"; 0x21 SecurityCapabilities per rbx-dom). */
import type { PropType } from './values.js';

export const TYPE_IDS: Readonly<Record<PropType, number>> = {
  String: 0x01, Bool: 0x02, Int32: 0x03, Float32: 0x04, Float64: 0x05, UDim: 0x06, UDim2: 0x07,
  Ray: 0x08, Faces: 0x09, Axes: 0x0a, BrickColor: 0x0b, Color3: 0x0c, Vector2: 0x0d, Vector3: 0x0e,
  CFrame: 0x10, Enum: 0x12, Ref: 0x13, Vector3int16: 0x14, NumberSequence: 0x15, ColorSequence: 0x16,
  NumberRange: 0x17, Rect: 0x18, PhysicalProperties: 0x19, Color3uint8: 0x1a, Int64: 0x1b,
  SharedString: 0x1c, Bytecode: 0x1d, OptionalCFrame: 0x1e, UniqueId: 0x1f, Font: 0x20,
  SecurityCapabilities: 0x21, Content: 0x22,
};

const NAMES = new Map<number, PropType>(Object.entries(TYPE_IDS).map(([name, id]) => [id, name as PropType]));

/** The type's name, or undefined for an id this decoder does not know. */
export function typeName(id: number): PropType | undefined {
  return NAMES.get(id);
}
