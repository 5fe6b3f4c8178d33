// Unified diffs. Each line is one token chosen by its first characters. The hunk header's
// line counts are carried in the state so that inside a hunk a removed line that itself
// starts with "--" (`--- old comment`) is still a deletion, and `--- a/file` / `+++ b/file`
// after the hunk are file headers again.
import type { Lexer, Out } from './out.ts';

export interface DiffState {
  /** Old and new lines still expected in the current hunk (0 outside a hunk, Infinity if the header had no counts). */
  old: number;
  new: number;
}

const HUNK = /^@@+ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

export const diffLexer: Lexer<DiffState> = {
  start: () => ({ old: 0, new: 0 }),
  line(text: string, from: number, to: number, st: DiffState, out: Out): void {
    if (from >= to) {
      // An empty line inside a hunk is a context line whose leading blank was lost.
      if (st.old > 0) st.old--;
      if (st.new > 0) st.new--;
      return;
    }
    const c = text.charCodeAt(from);
    if (st.old > 0 || st.new > 0) {
      if (c === 43 && st.new > 0) {
        st.new--;
        out.tok('add', from, to);
        return;
      }
      if (c === 45 && st.old > 0) {
        st.old--;
        out.tok('del', from, to);
        return;
      }
      if (c === 32) {
        if (st.old > 0) st.old--;
        if (st.new > 0) st.new--;
        return;
      }
      if (c === 92) {
        out.tok('com', from, to); // "\ No newline at end of file"
        return;
      }
      st.old = st.new = 0;
    }
    if (c === 64 && text.startsWith('@@', from)) {
      const m = HUNK.exec(from === 0 && to === text.length ? text : text.slice(from, to));
      st.old = m ? (m[1] === undefined ? 1 : Number(m[1])) : Infinity;
      st.new = m ? (m[2] === undefined ? 1 : Number(m[2])) : Infinity;
      out.tok('hd', from, to);
      return;
    }
    if ((c === 45 && text.startsWith('--- ', from)) || (c === 43 && text.startsWith('+++ ', from)) || text.startsWith('diff ', from) || text.startsWith('index ', from)) {
      out.tok('pre', from, to);
      return;
    }
    // Outside a hunk (a fragment without headers): judge by the first character.
    if (c === 43) out.tok('add', from, to);
    else if (c === 45) out.tok('del', from, to);
    else if (c === 92) out.tok('com', from, to);
  },
};
