// Definitions in device tree sources (.dts, .dtsi), by a scanner of our own instead of
// universal-ctags: in Linux they were the largest share of what ctags still read once C was
// the C scanner's (docs/design.md "Symbols" has the figures).
//
// What it gives, with ctags' kinds:
//   label   every label of a node (`uart0: serial@1000 { ... };`: uart0, from its line to
//           the line of the node's closing brace) and of a property (`lp: prop = <1>;`: to
//           the line of its `;`); its parent is the innermost enclosing node that has a
//           label, named as ctags names it: the first labels of the labelled nodes around
//           it from the outermost, joined by dots (`soc.uart0`);
//   macro   `#define NAME`, from its line to its last continuation line, as ctags gives it.
// Labels inside property values (`reg = <l: 1>;`) are not read, as ctags does not read
// them; nor are references (`&uart0 { ... };`), which define nothing. Like ctags, lines in
// `#if 0` are read: a device tree source is preprocessed by the build, not by the reader.
//
// Where it differs from ctags 5.9 (test/symbols/dts-definitions.test.ts), ctags is wrong:
// it tags only the first of several labels (`a: b: node {`), none after
// `/omit-if-no-ref/`, and no label of a node opened on the same line as its parent's brace
// (`i: n { j: m { }; };`: no j); and a property's label makes it end its enclosing node
// late and take the following nodes as its children.

import type { SymbolDef } from './ctags.ts';
import { bufferView } from '../runtime/buffer-view.ts';

/** Whether ctags would read `path` as DTS (its map: *.dts, *.dtsi). */
export function isDtsPath(path: string): boolean {
  return /\.dtsi?$/i.test(path);
}

const LF = 0x0a;
const CR = 0x0d;
const SLASH = 0x2f;
const STAR = 0x2a;
const BACKSLASH = 0x5c;

function isLabelStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}

function isLabelPart(c: number): boolean {
  return isLabelStart(c) || (c >= 0x30 && c <= 0x39);
}

/** Characters of a `/keyword/` (dts-v1, delete-node, omit-if-no-ref, ...). */
function isKeywordPart(c: number): boolean {
  return isLabelPart(c) || c === 0x2d;
}

/** An open node: the definitions of its labels (their end lines set at its `}`) and the parent its children name. */
interface OpenNode {
  labels: SymbolDef[];
  scope: { name: string; kind: string } | undefined;
}

/** The definitions of a device tree source (unsorted). Never throws on malformed input: it reads what it can. */
export function dtsDefinitions(content: Uint8Array): SymbolDef[] {
  const s = content;
  const n = s.length;
  const text = bufferView(s);
  const defs: SymbolDef[] = [];
  const open: OpenNode[] = [];
  /** Labels read at the start of the current statement, before its node or property name. */
  let pending: SymbolDef[] = [];
  let line = 1;
  let pos = 0;
  // Only whitespace (and comments) since the last newline: a `#` starts a directive.
  let bol = true;
  // At the start of a statement: a `name:` there is a label.
  let atStart = true;
  // In a property's value (after its `=`): nothing there is read up to its `;`.
  let inValue = false;
  // A UTF-8 byte order mark is not text.
  if (n >= 3 && s[0] === 0xef && s[1] === 0xbb && s[2] === 0xbf) pos = 3;
  const scope = (): OpenNode['scope'] => (open.length > 0 ? open[open.length - 1]!.scope : undefined);
  /** Ends the statement: its labels (a property's, or a node's that never opened) end on this line. */
  const endStatement = (): void => {
    for (const d of pending) {
      d.endLine = line;
      defs.push(d);
    }
    pending = [];
    atStart = true;
    inValue = false;
  };

  while (pos < n) {
    const c = s[pos]!;
    if (c === LF) {
      line++;
      bol = true;
      pos++;
      continue;
    }
    if (c === 0x20 || c === 0x09 || c === CR || c === 0x0b || c === 0x0c) {
      pos++;
      continue;
    }
    if (c === SLASH && pos + 1 < n && s[pos + 1] === STAR) {
      pos += 2;
      while (pos < n && !(s[pos] === STAR && pos + 1 < n && s[pos + 1] === SLASH)) {
        if (s[pos] === LF) line++;
        pos++;
      }
      pos = Math.min(n, pos + 2);
      continue;
    }
    if (c === SLASH && pos + 1 < n && s[pos + 1] === SLASH) {
      while (pos < n && s[pos] !== LF) pos++;
      continue;
    }
    if (c === 0x23 /* # */ && bol) {
      // A directive (or a property such as #address-cells at the start of a line, which
      // holds no label): `#define NAME` is a macro; the line goes, continuations included.
      const startLine = line;
      pos++;
      while (pos < n && (s[pos] === 0x20 || s[pos] === 0x09)) pos++;
      let nameAt = -1;
      let nameEnd = -1;
      if (n - pos > 6 && text.toString('latin1', pos, pos + 6) === 'define' && !isLabelPart(s[pos + 6]!)) {
        pos += 6;
        while (pos < n && (s[pos] === 0x20 || s[pos] === 0x09)) pos++;
        if (pos < n && isLabelStart(s[pos]!)) {
          nameAt = pos;
          while (pos < n && isLabelPart(s[pos]!)) pos++;
          nameEnd = pos;
        }
      }
      while (pos < n && s[pos] !== LF) {
        if (s[pos] === BACKSLASH && pos + 1 < n && (s[pos + 1] === LF || (s[pos + 1] === CR && pos + 2 < n && s[pos + 2] === LF))) {
          pos += s[pos + 1] === LF ? 2 : 3;
          line++;
          continue;
        }
        pos++;
      }
      if (nameAt >= 0) defs.push({ name: text.toString('latin1', nameAt, nameEnd), kind: 'macro', line: startLine, endLine: line, at: nameAt });
      continue;
    }
    bol = false;
    if (c === 0x22 || c === 0x27) {
      // A string or character constant: skipped to its closing quote (or the line's end).
      pos++;
      while (pos < n && s[pos] !== c && s[pos] !== LF) pos += s[pos] === BACKSLASH && pos + 1 < n && s[pos + 1] !== LF ? 2 : 1;
      if (pos < n && s[pos] === c) pos++;
      atStart = false;
      continue;
    }
    if (c === 0x3b /* ; */) {
      endStatement();
      pos++;
      continue;
    }
    if (c === 0x7d /* } */) {
      // A value cannot hold a brace: the `;` was left out.
      if (inValue || pending.length > 0) endStatement();
      const node = open.pop();
      if (node) {
        for (const d of node.labels) {
          d.endLine = line;
          defs.push(d);
        }
      }
      // A `;` should follow; what comes instead starts the next statement.
      atStart = true;
      pos++;
      continue;
    }
    if (inValue) {
      pos++;
      continue;
    }
    if (c === 0x7b /* { */) {
      const labels = pending;
      pending = [];
      const parent = scope();
      // Named as ctags names it: the labelled nodes from the outermost, joined by dots.
      open.push({ labels, scope: labels.length > 0 ? { name: parent ? `${parent.name}.${labels[0]!.name}` : labels[0]!.name, kind: 'label' } : parent });
      atStart = true;
      pos++;
      continue;
    }
    if (c === 0x3d /* = */) {
      inValue = true;
      atStart = false;
      pos++;
      continue;
    }
    if (atStart && isLabelStart(c)) {
      const a = pos;
      while (pos < n && isLabelPart(s[pos]!)) pos++;
      if (pos < n && s[pos] === 0x3a /* : */) {
        const parent = scope();
        const d: SymbolDef = { name: text.toString('latin1', a, pos), kind: 'label', line, endLine: line, at: a };
        if (parent) d.parent = parent;
        pending.push(d);
        pos++;
        continue;
      }
      atStart = false;
      continue;
    }
    if (atStart && c === SLASH && pos + 1 < n && isKeywordPart(s[pos + 1]!)) {
      // A /keyword/ before a statement (/omit-if-no-ref/, /delete-node/): labels may follow.
      let e = pos + 1;
      while (e < n && isKeywordPart(s[e]!)) e++;
      if (e < n && s[e] === SLASH) {
        // `/include/ "file"` is a statement of its own, without a `;`: what follows starts one.
        const include = e - pos - 1 === 7 && text.toString('latin1', pos + 1, e) === 'include';
        pos = e + 1;
        if (include) {
          while (pos < n && (s[pos] === 0x20 || s[pos] === 0x09)) pos++;
          if (pos < n && s[pos] === 0x22) {
            pos++;
            while (pos < n && s[pos] !== 0x22 && s[pos] !== LF) pos++;
            if (pos < n && s[pos] === 0x22) pos++;
          }
        }
        continue;
      }
    }
    atStart = false;
    pos++;
  }
  // Cut short: what is open ends at the last line.
  endStatement();
  while (open.length > 0) {
    for (const d of open.pop()!.labels) {
      d.endLine = line;
      defs.push(d);
    }
  }
  return defs;
}
