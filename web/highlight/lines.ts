// The per-line loop shared by the entry point and the tests: split, drop a trailing \r,
// skip over-long lines, run the lexer with its state carried from line to line.
import { escapeRange } from './escape.ts';
import { Out, type Lexer } from './out.ts';

/** Longer lines (minified bundles, data blobs) are escaped but not highlighted. */
export const MAX_LINE = 4000;

/**
 * One HTML string per line of `text`. With `safe`, a lexer error on a line (a bug) costs
 * that line its colours and resets the state instead of breaking the whole view; the
 * tests run with `safe` off so that such bugs fail them.
 */
export function highlightWith(lexer: Lexer | undefined, text: string, safe: boolean): string[] {
  const lines = text.split('\n');
  const res = new Array<string>(lines.length);
  const out = new Out();
  let st = lexer?.start();
  for (let n = 0; n < lines.length; n++) {
    let line = lines[n]!;
    if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
    if (lexer === undefined) {
      res[n] = escapeRange(line, 0, line.length);
      continue;
    }
    if (line.length > MAX_LINE) {
      // Whatever this line opened or closed is unknown: start the next line afresh.
      res[n] = escapeRange(line, 0, line.length);
      st = lexer.start();
      continue;
    }
    out.reset(line);
    if (!safe) lexer.line(line, 0, line.length, st, out);
    else {
      try {
        lexer.line(line, 0, line.length, st, out);
      } catch {
        res[n] = escapeRange(line, 0, line.length);
        st = lexer.start();
        continue;
      }
    }
    res[n] = out.finish();
  }
  return res;
}
