// Markdown: headings, list and quote markers, code spans, link targets, HTML comments,
// and fenced code blocks highlighted with the fence's language (```ts), the inner
// lexer's state kept in this one's. Emphasis is left alone: it is ambiguous on a single
// line (`a * b * c`) and not worth colouring wrongly.
import type { Lexer, Out } from './out.ts';
import { isBlank, isDigit, restBlank, skipBlanks } from './text.ts';

export interface MdState {
  /** The opening fence (``` or ~~~~...) of the code block we are in, or ''. */
  fence: string;
  inner: Lexer | undefined;
  sub: unknown;
  /** Inside an HTML comment <!-- ... --> spanning lines. */
  com: boolean;
}

function run(text: string, i: number, to: number, c: number): number {
  let j = i;
  while (j < to && text.charCodeAt(j) === c) j++;
  return j - i;
}

/** `resolve` finds the lexer for a fence's info string (a language name or alias). */
export function markdownLexer(resolve: (name: string) => Lexer | undefined): Lexer<MdState> {
  return {
    start: () => ({ fence: '', inner: undefined, sub: undefined, com: false }),
    line(text: string, from: number, to: number, st: MdState, out: Out): void {
      const first = skipBlanks(text, from, to);
      if (st.fence !== '') {
        const f = st.fence;
        const c = f.charCodeAt(0);
        if (text.charCodeAt(first) === c && run(text, first, to, c) >= f.length && restBlank(text, first + run(text, first, to, c), to)) {
          out.tok('pre', first, to);
          st.fence = '';
          st.inner = st.sub = undefined;
        } else if (st.inner !== undefined) st.inner.line(text, from, to, st.sub, out);
        return;
      }
      if (st.com) {
        const k = text.indexOf('-->', from);
        if (k < 0 || k + 3 > to) {
          out.tok('com', from, to);
          return;
        }
        out.tok('com', from, k + 3);
        st.com = false;
        inline(text, k + 3, to, st, out);
        return;
      }
      if (first === to) return;
      const c = text.charCodeAt(first);
      if (c === 96 || c === 126) {
        const n = run(text, first, to, c);
        const info = text.slice(first + n, to).trim();
        if (n >= 3 && !(c === 96 && info.includes('`'))) {
          st.fence = text.slice(first, first + n);
          // "```ts title=x", "```{.python}", "```c++": the first word names the language.
          const name = /^[{.]*([^\s{},]*)/.exec(info)![1]!;
          st.inner = name === '' ? undefined : resolve(name);
          st.sub = st.inner?.start();
          out.tok('pre', first, to);
          return;
        }
      }
      let i = first;
      if (first - from < 4) {
        if (c === 35) {
          const n = run(text, first, to, 35);
          if (n <= 6 && (first + n === to || isBlank(text.charCodeAt(first + n)))) {
            out.tok('hd', first, to);
            return;
          }
        }
        // Setext underline (=== or ---) and thematic breaks (---, ***, ___).
        if (c === 61 || c === 45 || c === 42 || c === 95) {
          let n = 0;
          let k = first;
          while (k < to && (text.charCodeAt(k) === c || isBlank(text.charCodeAt(k)))) {
            if (text.charCodeAt(k) === c) n++;
            k++;
          }
          if (k === to && (c === 61 || n >= 3)) {
            out.tok('hd', first, to);
            return;
          }
        }
      }
      // Block quote and list markers, also nested: "> - item".
      for (;;) {
        const d = text.charCodeAt(i);
        let e = -1;
        if (d === 62) e = i + 1;
        else if ((d === 45 || d === 42 || d === 43) && (i + 1 === to || isBlank(text.charCodeAt(i + 1)))) e = i + 1;
        else if (isDigit(d)) {
          let k = i;
          while (k < to && k - i < 9 && isDigit(text.charCodeAt(k))) k++;
          const p = text.charCodeAt(k);
          if ((p === 46 || p === 41) && (k + 1 === to || isBlank(text.charCodeAt(k + 1)))) e = k + 1;
        }
        if (e < 0) break;
        out.tok('kw', i, e);
        i = skipBlanks(text, e, to);
      }
      inline(text, i, to, st, out);
    },
  };
}

/** Code spans, link targets, autolinks and HTML comments inside a line. */
function inline(text: string, i: number, to: number, st: MdState, out: Out): void {
  while (i < to) {
    const c = text.charCodeAt(i);
    if (c === 92) {
      i += 2; // a backslash escape: \` is no code span
    } else if (c === 96) {
      // A code span closes with a run of exactly as many backticks.
      const n = run(text, i, to, 96);
      let k = i + n;
      let end = -1;
      while (k < to) {
        if (text.charCodeAt(k) === 96) {
          const m = run(text, k, to, 96);
          if (m === n) {
            end = k + m;
            break;
          }
          k += m;
        } else k++;
      }
      if (end >= 0) out.tok('str', i, end);
      i = end >= 0 ? end : i + n;
    } else if (c === 60 && text.startsWith('<!--', i)) {
      const k = text.indexOf('-->', i + 4);
      if (k < 0 || k + 3 > to) {
        out.tok('com', i, to);
        st.com = true;
        return;
      }
      out.tok('com', i, k + 3);
      i = k + 3;
    } else if (c === 60 && (text.startsWith('<http', i) || text.startsWith('<mailto:', i))) {
      let k = i + 1;
      while (k < to && text.charCodeAt(k) !== 62 && !isBlank(text.charCodeAt(k))) k++;
      if (k < to && text.charCodeAt(k) === 62) {
        out.tok('str', i, k + 1);
        i = k + 1;
      } else i = k;
    } else if (c === 93 && text.charCodeAt(i + 1) === 40) {
      // [text](target): the target is a string.
      const k = text.indexOf(')', i + 2);
      if (k >= 0 && k < to) {
        out.tok('str', i + 2, k);
        i = k + 1;
      } else i += 2;
    } else i++;
  }
}
