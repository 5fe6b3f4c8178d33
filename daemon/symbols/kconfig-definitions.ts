// Definitions in Kconfig files (Kconfig, Kconfig.*), by a scanner of our own instead of
// universal-ctags: ctags' Kconfig parser is a set of line rules (an optlib), cheap per line,
// but each file still cost a round trip through ctags (Linux 6.1: 1,704 files, ~0.45 core-
// seconds). This scanner follows the same rules, line by line, with ctags' kinds:
//   config     `config NAME` and `menuconfig NAME` alone on their line (a comment after the
//              name, or a name with other characters, is not one, as for ctags), each given
//              twice, as NAME and as CONFIG_NAME (how C code and .config files spell it);
//   menu       `menu "Title"`, to its `endmenu`;
//   choice     `choice NAME`, to its `endchoice`; an anonymous `choice` gives no definition
//              but is the parent of what it holds, named `choice` + a hash, as ctags names
//              it (with a hash of its own, as for C's anonymous scopes);
//   mainMenu   `mainmenu "Title"`.
// Menus and choices are the parents of what they hold, named as ctags names them: the
// titles and names from the outermost, joined by `""` (`General setup""NAMED`). Lines whose
// first word is `#` are comments; help text is read as any line, as ctags reads it. A scope
// left open ends at the last line.
//
// Where it differs from ctags 5.9 (on Linux 6.1: 40,952 of ctags' 41,278 definitions the
// same, anonymous names aside): a named choice is `choice NAME` alone on its line, where
// ctags takes any line that starts so, help text included ("choice and suitable for most
// users" opens a choice `and` in arch/x86/Kconfig, which then holds the rest of its menu);
// and a Kconfig file whose name ends like another language's (Kconfig.x86) is read as
// Kconfig, where ctags reads it as assembly.

import type { SymbolDef } from './ctags.ts';
import { pathHash } from './c-definitions.ts';
import { bufferView } from '../runtime/buffer-view.ts';

/** Whether ctags would read `path` as Kconfig (its map: a base name matching Kconfig*). */
export function isKconfigPath(path: string): boolean {
  return path.slice(path.lastIndexOf('/') + 1).startsWith('Kconfig');
}

/** ctags' number for the choice kind, the last part of an anonymous choice's name. */
const CHOICE_KIND_CODE = '04';

function isNameByte(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f;
}

const isBlank = (c: number | undefined): boolean => c === 0x20 || c === 0x09;

/** The definitions of a Kconfig file (unsorted). Never throws: every line is read on its own. */
export function kconfigDefinitions(path: string, content: Uint8Array): SymbolDef[] {
  const s = content;
  const text = bufferView(s);
  const defs: SymbolDef[] = [];
  /** Open menus and choices: the definition whose end line their end sets (none for an anonymous choice), and the parent they are. */
  const open: Array<{ def: SymbolDef | undefined; scope: { name: string; kind: string } }> = [];
  let anonymous = 0;
  let line = 0;
  const parent = () => open[open.length - 1]?.scope;
  /** Adds `d`, in the open menu or choice. */
  const define = (d: SymbolDef): SymbolDef => {
    const scope = parent();
    if (scope) d.parent = scope;
    defs.push(d);
    return d;
  };
  /**
   * The name (maybe empty) that starts after the blanks at `from` and is followed by nothing
   * but blanks up to `end`, or undefined when something else follows it.
   */
  const nameAlone = (from: number, end: number): [number, number] | undefined => {
    let n = from;
    while (n < end && isBlank(s[n])) n++;
    let e = n;
    while (e < end && isNameByte(s[e]!)) e++;
    let rest = e;
    while (rest < end && isBlank(s[rest])) rest++;
    return rest === end ? [n, e] : undefined;
  };
  const push = (def: SymbolDef | undefined, name: string, kind: string): void => {
    const outer = parent();
    open.push({ def, scope: { name: outer ? `${outer.name}""${name}` : name, kind } });
  };
  const pop = (): void => {
    const top = open.pop();
    if (top?.def) top.def.endLine = line;
  };
  let start = s.length >= 3 && s[0] === 0xef && s[1] === 0xbb && s[2] === 0xbf ? 3 : 0;
  while (start < s.length) {
    let end = s.indexOf(0x0a, start);
    if (end < 0) end = s.length;
    line++;
    // The line without its indentation and without a \r before its newline.
    let a = start;
    while (a < end && isBlank(s[a])) a++;
    const b = end > a && s[end - 1] === 0x0d ? end - 1 : end;
    start = end + 1;
    if (a >= b || s[a] === 0x23 /* # */) continue;
    // Its first word, and what follows it.
    let w = a;
    while (w < b && s[w]! >= 0x61 && s[w]! <= 0x7a) w++;
    const word = text.toString('latin1', a, w);
    const blankAfter = w < b && isBlank(s[w]);
    if (word === 'config' || word === 'menuconfig') {
      const found = blankAfter ? nameAlone(w, b) : undefined;
      if (!found || found[0] === found[1]) continue;
      const [n, e] = found;
      const name = text.toString('latin1', n, e);
      define({ name, kind: 'config', line, endLine: line, at: n });
      // CONFIG_NAME is not spelled in the file: no offset for it (name-range.ts finds none either).
      define({ name: `CONFIG_${name}`, kind: 'config', line, endLine: line });
    } else if (word === 'menu' || word === 'mainmenu') {
      if (!blankAfter) continue;
      let q = w;
      while (q < b && isBlank(s[q])) q++;
      if (s[q] !== 0x22 /* " */) continue;
      const close = s.indexOf(0x22, q + 1);
      if (close < 0 || close >= b || close === q + 1) continue;
      const title = text.toString('utf8', q + 1, close);
      // The main menu has no parent, as ctags gives it.
      if (word === 'mainmenu') defs.push({ name: title, kind: 'mainMenu', line, endLine: line, at: q + 1 });
      else push(define({ name: title, kind: 'menu', line, endLine: line, at: q + 1 }), title, 'menu');
    } else if (word === 'choice') {
      const found = nameAlone(w, b);
      if (!found || (found[1] > found[0] && !blankAfter)) continue;
      const [n, e] = found;
      if (e === n) {
        anonymous++;
        push(undefined, `choice${pathHash(path)}${anonymous.toString(16).padStart(2, '0')}${CHOICE_KIND_CODE}`, 'choice');
        continue;
      }
      const name = text.toString('latin1', n, e);
      push(define({ name, kind: 'choice', line, endLine: line, at: n }), name, 'choice');
    } else if (word === 'endmenu' || word === 'endchoice') {
      if (w === b || blankAfter) pop();
    }
  }
  // Left open: they end at the last line.
  while (open.length > 0) pop();
  return defs;
}
