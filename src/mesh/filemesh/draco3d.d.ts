/** The part of draco3d's Emscripten decoder module this project calls (the package ships no types). */
declare module 'draco3d' {
  interface DracoObject { readonly ptr: number }
  interface DecoderBuffer extends DracoObject { Init(data: Int8Array, length: number): void }
  interface Status extends DracoObject { ok(): boolean; error_msg(): string }
  interface Mesh extends DracoObject { num_faces(): number; num_points(): number }
  interface PointAttribute extends DracoObject { num_components(): number }
  interface Decoder extends DracoObject {
    GetEncodedGeometryType(buffer: DecoderBuffer): number;
    DecodeBufferToMesh(buffer: DecoderBuffer, mesh: Mesh): Status;
    GetAttributeId(mesh: Mesh, type: number): number;
    GetAttribute(mesh: Mesh, id: number): PointAttribute;
    GetAttributeDataArrayForAllPoints(mesh: Mesh, attribute: PointAttribute, dataType: number, byteLength: number, ptr: number): boolean;
    GetTrianglesUInt32Array(mesh: Mesh, byteLength: number, ptr: number): boolean;
  }
  export interface DecoderModule {
    Decoder: new () => Decoder;
    DecoderBuffer: new () => DecoderBuffer;
    Mesh: new () => Mesh;
    destroy(object: DracoObject): void;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    HEAPU8: Uint8Array;
    HEAPU32: Uint32Array;
    HEAPF32: Float32Array;
    TRIANGULAR_MESH: number;
    POSITION: number;
    NORMAL: number;
    COLOR: number;
    TEX_COORD: number;
    DT_FLOAT32: number;
    DT_UINT8: number;
  }
  const draco3d: { createDecoderModule(options: object): Promise<DecoderModule> };
  export default draco3d;
}
