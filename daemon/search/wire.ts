// JSON objects that hold files in their wire form (shape-file.ts): the fields around the
// files are serialised here and the files' bytes go in as they are, so a file is never
// parsed or serialised again on the main thread. The output is byte for byte what
// JSON.stringify gives for the same object with the files parsed.

import type { ShapedFile } from './shape-file.ts';

/** Stands for the files' place among an object's fields. */
export const FILES = Symbol('files');

const COMMA = Buffer.from(',');

/** JSON bytes (a file in its wire form, a response written here) as a value, for callers in process. */
export function parseJson(bytes: Uint8Array): unknown {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}

/** `{"k":v,...}` with the files as a JSON array where a field's value is FILES; undefined fields are left out. */
export function jsonWithFiles(fields: Array<[string, unknown]>, files: ShapedFile[]): Buffer {
  return Buffer.concat(jsonPartsWithFiles(fields, files));
}

/**
 * The same bytes as jsonWithFiles, in parts (the files' own buffers among them): a stream
 * copies a batch once, into its message.
 */
export function jsonPartsWithFiles(fields: Array<[string, unknown]>, files: ShapedFile[]): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let text = '{';
  let first = true;
  for (const [key, value] of fields) {
    if (value === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (value !== FILES) {
      text += JSON.stringify(value);
      continue;
    }
    parts.push(Buffer.from(`${text}[`));
    files.forEach((f, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(f.json);
    });
    text = ']';
  }
  parts.push(Buffer.from(`${text}}`));
  return parts;
}
