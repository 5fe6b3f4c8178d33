// JSON objects that hold files in their wire form (file-json.ts): the fields around the
// files are serialised here and the files' bytes go in as they are, so a file is never
// parsed or serialised again on the main thread. The output is byte for byte what
// JSON.stringify gives for the same object with the files parsed.

import type { ShapedFile } from './file-json.ts';

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
 * copies a batch once, into its message. `withScore`: each file gets its ranking score as
 * a last field, `"score":…` (a stream's files: types.ts StreamedFile), its bytes still
 * not copied here.
 */
export function jsonPartsWithFiles(fields: Array<[string, unknown]>, files: ShapedFile[], withScore = false): Uint8Array[] {
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
      if (withScore) pushScored(parts, f);
      else parts.push(f.json);
    });
    text = ']';
  }
  parts.push(Buffer.from(`${text}}`));
  return parts;
}

const CLOSE_BRACE = 0x7d;

/**
 * A file's JSON object with `"score":<its score>` added before its closing brace. JSON
 * writes a double so that parsing gives the same double back: a client that compares the
 * parsed scores compares exactly what the searcher compared.
 */
function pushScored(parts: Uint8Array[], f: ShapedFile): void {
  const json = f.json;
  // The writers (file-json.ts, file-json-cut.ts) write one compact object: a file whose JSON
  // is anything else is a bug upstream, not something to send half-edited.
  if (json.length < 2 || json[json.length - 1] !== CLOSE_BRACE) throw new Error(`a file's JSON is not an object (${f.repository}/${f.path})`);
  parts.push(json.subarray(0, json.length - 1));
  parts.push(Buffer.from(`${json.length > 2 ? ',' : ''}"score":${JSON.stringify(f.score)}}`));
}
