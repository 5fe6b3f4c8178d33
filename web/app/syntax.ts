// Syntax highlighting for the file view, blame and diffs: CodeMirror's language packages
// (@codemirror/language-data lists them, each loaded with import() the first time a file in
// it is shown, so a page downloads only the grammars it shows) and Lezer's highlighter,
// which names every token with a `tok-*` class (style.css colours them, for the viewer and
// for the static HTML below alike).
//
// The daemon names a file's language as GitHub's linguist does ("Shell", "C++",
// "Protocol Buffer"); CodeMirror's list has its own names and aliases, mostly the same.
// LINGUIST_NAMES maps the ones that differ; anything else is matched by name, then by the
// file's name (Dockerfile, *.toml), and a file in no known language is shown plain.

import { LanguageDescription, type Language } from '@codemirror/language';
import { languages } from '@codemirror/language-data';
import { classHighlighter, highlightTree } from '@lezer/highlight';
import { escapeHtml } from './html.ts';

/** linguist name → CodeMirror name, where they differ and a grammar fits. */
const LINGUIST_NAMES: Record<string, string> = {
  'Protocol Buffer': 'ProtoBuf',
  'Unix Assembly': 'Gas',
  Assembly: 'Gas',
  'JSON with Comments': 'JSON',
  JSON5: 'JSON',
  INI: 'Properties files',
  'Git Config': 'Properties files',
  'Java Properties': 'Properties files',
  'Shell Session': 'Shell',
  Starlark: 'Python',
  Roff: 'Troff',
  'Roff Manpage': 'Troff',
  Diff: 'diff',
  'Emacs Lisp': 'Common Lisp',
  'HTML+ERB': 'HTML',
  SVG: 'XML',
  'XML Property List': 'XML',
};

/** The language package for a file, or null when none fits (shown as plain text). */
export function describeLanguage(name: string | undefined, path: string): LanguageDescription | null {
  if (name) {
    const exact = LanguageDescription.matchLanguageName(languages, LINGUIST_NAMES[name] ?? name, false);
    if (exact) return exact;
  }
  const base = path.slice(path.lastIndexOf('/') + 1);
  return LanguageDescription.matchFilename(languages, base);
}

/** Loads (once) the language of a file; undefined when none fits or its chunk fails to load. */
export async function loadLanguage(name: string | undefined, path: string): Promise<Language | undefined> {
  const d = describeLanguage(name, path);
  if (!d) return undefined;
  try {
    return (await d.load()).language;
  } catch {
    // A chunk that cannot be fetched (the daemon restarted with a new build): show it plain.
    return undefined;
  }
}

/**
 * `text` as HTML, one string per line (split at "\n"; a final "\n" gives a last empty
 * line), each token in a `<span class="tok-...">`. Every character is escaped here, so the
 * strings may be set as innerHTML. Without a language the lines are only escaped.
 */
export function highlightedLines(text: string, language: Language | undefined): string[] {
  const lines: string[] = [];
  let line = '';
  let at = 0;
  // Text from `at` to `to` with `classes`, broken into lines.
  const put = (to: number, classes: string) => {
    while (at < to) {
      const nl = text.indexOf('\n', at);
      const end = nl < 0 || nl >= to ? to : nl;
      if (end > at) line += classes ? `<span class="${classes}">${escapeHtml(text.slice(at, end))}</span>` : escapeHtml(text.slice(at, end));
      at = end;
      if (end === nl) {
        lines.push(line);
        line = '';
        at++;
      }
    }
  };
  if (language)
    highlightTree(language.parser.parse(text), classHighlighter, (from, to, classes) => {
      put(from, '');
      put(to, classes);
    });
  put(text.length, '');
  lines.push(line);
  return lines;
}
