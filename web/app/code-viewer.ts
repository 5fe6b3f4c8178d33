// The file view's code: a read-only CodeMirror 6 editor. CodeMirror draws only the lines in
// view (a 200,000-line file costs what its visible screenful costs) and parses the
// language incrementally in the background, so the page is ready before the grammar is.
//
// What it adds to CodeMirror's read-only editor:
//   - line numbers that are links (#L<n>; shift-click extends to a range #L<a>-L<b>),
//   - the lines a search matched (?hl=) and the exact match ranges marked,
//   - the #L range marked and scrolled to the middle of the view,
//   - the language's grammar, loaded on demand (syntax.ts) and swapped in when it arrives,
//   - a callback when a word is clicked (code navigation, file-page.ts).
// Ctrl-F opens CodeMirror's own search: the browser's cannot find lines that are not drawn.

import { Compartment, EditorState, RangeSetBuilder, StateEffect, StateField, type Extension } from '@codemirror/state';
import { Decoration, EditorView, GutterMarker, drawSelection, gutter, highlightActiveLine, keymap, type DecorationSet } from '@codemirror/view';
import { syntaxHighlighting, type Language } from '@codemirror/language';
import { highlightSelectionMatches, search, searchKeymap } from '@codemirror/search';
import { classHighlighter } from '@lezer/highlight';
import type { Range } from '../../daemon/search/types.ts';
import { styleNonce } from './csp.ts';
import { utf16Index, type LineSpan } from './ranges.ts';

export interface ViewerOptions {
  source: string;
  /** Lines a search matched, marked as a whole (?hl=3,7-9). */
  hitLines: Set<number>;
  /** Exact match ranges (1-based lines, code-point columns, end exclusive). */
  matches: Range[];
  /** Called when a word of the code is clicked: the word and where it was clicked. */
  onWord?: (word: string, at: { line: number; x: number; y: number }) => void;
  /** The #L link of a line number was clicked with shift: extend to this range. */
  onRange?: (span: LineSpan) => void;
}

export interface CodeViewer {
  element: HTMLElement;
  view: EditorView;
  lineCount: number;
  /** Marks `span` (or nothing) and, with `scroll`, brings its first line to the middle. */
  target(span: LineSpan | undefined, scroll: boolean): void;
  setLanguage(language: Language | undefined): void;
  /**
   * Resolves with performance.now() at the first frame in which line `n` is drawn inside
   * the scroller's visible part (for the web benchmark and the tests: CodeMirror scrolls and
   * draws in its own animation frames after a jump).
   */
  whenDrawn(n: number): Promise<number>;
}

class LineLink extends GutterMarker {
  constructor(readonly n: number) {
    super();
  }
  override eq(other: GutterMarker): boolean {
    return other instanceof LineLink && other.n === this.n;
  }
  override toDOM(): Node {
    const a = document.createElement('a');
    a.href = `#L${this.n}`;
    a.textContent = String(this.n);
    a.setAttribute('aria-label', `line ${this.n}`);
    a.tabIndex = -1;
    return a;
  }
}

const setTarget = StateEffect.define<LineSpan | undefined>();

const targetLines = StateField.define<{ span: LineSpan | undefined; deco: DecorationSet }>({
  create: () => ({ span: undefined, deco: Decoration.none }),
  update(value, tr) {
    for (const e of tr.effects) {
      if (!e.is(setTarget)) continue;
      const span = e.value;
      if (!span) return { span, deco: Decoration.none };
      const b = new RangeSetBuilder<Decoration>();
      const last = Math.min(span.to, tr.state.doc.lines);
      for (let n = Math.max(1, span.from); n <= last; n++) b.add(tr.state.doc.line(n).from, tr.state.doc.line(n).from, lineMark('cm-target', n));
      return { span, deco: b.finish() };
    }
    return value;
  },
  provide: (f) => EditorView.decorations.from(f, (v) => v.deco),
});

/** A marked line; data-line says which (drawn lines carry no number of their own). */
function lineMark(cls: string, n: number): Decoration {
  return Decoration.line({ class: cls, attributes: { 'data-line': String(n) } });
}
const MATCH = Decoration.mark({ class: 'cm-match' });

/** The search's marks: whole matched lines and the exact ranges, fixed for the document. */
function searchMarks(state: EditorState, hitLines: Set<number>, matches: Range[]): DecorationSet {
  const doc = state.doc;
  const marks: Array<{ from: number; to: number; deco: Decoration }> = [];
  for (const n of hitLines) if (n >= 1 && n <= doc.lines) marks.push({ from: doc.line(n).from, to: doc.line(n).from, deco: lineMark('cm-hit', n) });
  for (const r of matches) {
    if (r.start.lineNumber < 1 || r.start.lineNumber > doc.lines) continue;
    const endLine = Math.min(r.end.lineNumber, doc.lines);
    const a = doc.line(r.start.lineNumber);
    const b = doc.line(endLine);
    const from = a.from + utf16Index(a.text, r.start.column);
    let to = endLine === r.end.lineNumber ? b.from + utf16Index(b.text, r.end.column) : b.to;
    // An empty match (a zero-width regex) still shows where it is.
    if (to <= from) to = Math.min(from + 1, a.to);
    if (to > from) marks.push({ from, to, deco: MATCH });
  }
  return Decoration.set(
    marks.map((m) => m.deco.range(m.from, m.to)),
    true,
  );
}

/** Token classes (syntax.ts, classHighlighter) of text that is not a name. */
const NOT_A_NAME = /\btok-(keyword|comment|string|string2|number|bool|atom|meta|operator|punctuation|url|regexp|escape)\b/;

/** The word (identifier characters) around document position `pos`, or undefined. */
function wordAt(state: EditorState, pos: number): string | undefined {
  const range = state.wordAt(pos);
  if (!range) return undefined;
  const word = state.sliceDoc(range.from, range.to);
  return /^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(word) ? word : undefined;
}

export function codeViewer(o: ViewerOptions): CodeViewer {
  const source = o.source.endsWith('\n') ? o.source.slice(0, -1) : o.source;
  const language = new Compartment();
  let span: LineSpan | undefined;
  // Built on first draw, then fixed: the document never changes.
  let marks: DecorationSet | undefined;
  const lineLinks = gutter({
    class: 'cm-line-links',
    lineMarker: (view, line) => new LineLink(view.state.doc.lineAt(line.from).number),
    initialSpacer: (view) => new LineLink(view.state.doc.lines),
    domEventHandlers: {
      click(view, line, event) {
        const e = event as MouseEvent;
        if (!e.shiftKey || !span || !o.onRange) return false;
        const n = view.state.doc.lineAt(line.from).number;
        e.preventDefault();
        o.onRange({ from: Math.min(span.from, n), to: Math.max(span.to, n) });
        return true;
      },
    },
  });
  const nonce = styleNonce();
  const extensions: Extension[] = [
    nonce ? EditorView.cspNonce.of(nonce) : [],
    EditorState.readOnly.of(true),
    EditorView.contentAttributes.of({ 'aria-label': 'File content', 'aria-readonly': 'true' }),
    lineLinks,
    drawSelection(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    search({ top: true }),
    keymap.of(searchKeymap),
    syntaxHighlighting(classHighlighter),
    language.of([]),
    targetLines,
    EditorView.decorations.of((view) => marks ?? (marks = searchMarks(view.state, o.hitLines, o.matches))),
  ];
  if (o.onWord) {
    const onWord = o.onWord;
    extensions.push(
      EditorView.domEventHandlers({
        click(event, view) {
          // A click that ends a selection is not a request to navigate.
          if (event.button !== 0 || !view.state.selection.main.empty) return false;
          // Names only: a keyword, a comment, a string or a number has nothing to navigate to.
          const token = (event.target as Element).closest?.('[class*="tok-"]');
          if (token && NOT_A_NAME.test(token.className)) return false;
          const pos = view.posAtCoords({ x: event.clientX, y: event.clientY });
          if (pos === null) return false;
          const word = wordAt(view.state, pos);
          if (!word) return false;
          onWord(word, { line: view.state.doc.lineAt(pos).number, x: event.clientX, y: event.clientY });
          return false;
        },
      }),
    );
  }
  const view = new EditorView({ state: EditorState.create({ doc: source, extensions }) });
  const element = document.createElement('div');
  element.className = 'code-viewer';
  element.append(view.dom);
  return {
    element,
    view,
    lineCount: view.state.doc.lines,
    target(next, scroll) {
      span = next;
      const effects: StateEffect<unknown>[] = [setTarget.of(next)];
      if (next && scroll) {
        const line = view.state.doc.line(Math.min(Math.max(1, next.from), view.state.doc.lines));
        effects.push(EditorView.scrollIntoView(line.from, { y: 'center' }));
      }
      view.dispatch({ effects });
    },
    whenDrawn(n) {
      return new Promise((resolve) => {
        const check = () => {
          const line = view.state.doc.line(Math.min(Math.max(1, n), view.state.doc.lines));
          const box = view.scrollDOM.getBoundingClientRect();
          const at = view.coordsAtPos(line.from);
          if (at && at.top >= box.top - 1 && at.bottom <= box.bottom + 1) resolve(performance.now());
          else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      });
    },
    setLanguage(lang) {
      view.dispatch({ effects: language.reconfigure(lang ? lang.extension : []) });
    },
  };
}
