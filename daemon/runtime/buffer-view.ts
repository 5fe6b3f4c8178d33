// Bytes as a Buffer (for its indexOf, toString and read methods) without copying them.
// A shard's documents and read files are Buffers already, and making another view of them
// is a slow call: made once per file, it added a noticeable share to the build of a large
// tree.

/** `bytes` itself when it is a Buffer, else a Buffer over the same memory. */
export function bufferView(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
