// The JSON of a large answer (a whole repository's file list or tree: megabytes) made in
// time slices (runtime/time-slices.ts) rather than by one JSON.stringify, a call that
// cannot be interrupted and holds the thread that serves every request until it is done.
// The bytes are JSON.stringify's exactly: runs of objects without nested content (file
// entries, tree nodes without children) go through JSON.stringify, the arrays and objects
// around them are written here by its rules.

import { nextSlice, sliceUsed } from '../runtime/time-slices.ts';

/** Text is encoded into UTF-8 in pieces of about this many characters. */
const PIECE_CHARS = 64 * 1024;

/** Flat items of an array serialised by one call (well under a slice's time). */
const RUN = 512;

/**
 * JSON.stringify(value) as UTF-8 bytes, for plain data (objects, arrays, strings, numbers,
 * booleans, null; an object with toJSON is handed to JSON.stringify whole).
 */
export async function slicedJson(value: unknown): Promise<Buffer> {
  const out = new Pieces();
  if (sliceUsed()) await nextSlice();
  await write(value, out);
  return out.done();
}

async function write(value: unknown, out: Pieces): Promise<void> {
  if (flat(value)) {
    // undefined at the top: JSON.stringify answers undefined, which is no JSON; null it is.
    out.add(JSON.stringify(value) ?? 'null');
  } else if (Array.isArray(value)) {
    out.add('[');
    let i = 0;
    while (i < value.length) {
      if (sliceUsed()) await nextSlice();
      // A run of flat items (a file list is nothing else) goes through JSON.stringify as an
      // array, its brackets cut off: one native call for the run, not one per item.
      let end = i;
      while (end < value.length && end - i < RUN && flat(value[end])) end++;
      if (end > i) {
        const run = JSON.stringify(value.slice(i, end));
        out.add(i > 0 ? `,${run.slice(1, -1)}` : run.slice(1, -1));
        i = end;
      } else {
        if (i > 0) out.add(',');
        await write(value[i], out);
        i++;
      }
    }
    out.add(']');
  } else {
    const obj = value as Record<string, unknown>;
    out.add('{');
    let first = true;
    for (const key of Object.keys(obj)) {
      const item = obj[key];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      out.add(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      await write(item, out);
    }
    out.add('}');
  }
}

/** Whether JSON.stringify of `value` is cheap: nothing in it holds more than itself. */
function flat(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
  if (Array.isArray(value)) return value.length === 0;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (typeof v === 'object' && v !== null && !empty(v)) return false;
  }
  return true;
}

function empty(value: object): boolean {
  if (Array.isArray(value)) return value.length === 0;
  for (const _ in value) return false;
  return true;
}

/** Text collected into UTF-8 buffers of about PIECE_CHARS characters each. */
class Pieces {
  private text: string[] = [];
  private chars = 0;
  private readonly buffers: Buffer[] = [];

  add(s: string): void {
    this.text.push(s);
    this.chars += s.length;
    if (this.chars >= PIECE_CHARS) this.flush();
  }

  done(): Buffer {
    this.flush();
    return this.buffers.length === 1 ? this.buffers[0]! : Buffer.concat(this.buffers);
  }

  private flush(): void {
    if (this.chars === 0) return;
    this.buffers.push(Buffer.from(this.text.join(''), 'utf8'));
    this.text = [];
    this.chars = 0;
  }
}
