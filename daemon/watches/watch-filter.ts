// Which watches a change of a repository can have changed, told from the change's text
// alone (changed-text.ts), so that a push is not followed by a search per watch.
//
// Why it is sound: a watch's matches in a file are decided by which of its terms match the
// file's lines and name. A file's lines that did not change keep their term matches, so
// its matches can change only when an added or removed line matches one of the terms
// (positive or negated: removing the line a negated term matched changes the file too), or
// when a file was added or deleted (all its lines are then added or removed, and its path
// is a changed path, which `file:` terms are tested on). What this cannot tell, it answers
// "may have changed": symbol terms (ctags decides, not a line's text), a regular
// expression that can match across lines or anchors at a file's ends (\A, \z), a literal
// holding a newline, and a query of
// filters alone (any file added or removed may match it). A `lang:` filter is decided by a
// file's name, or for some names by its first bytes (a `#!` line, an ambiguous extension's
// hints): a change to a file of such a name may have changed its language, whatever lines
// changed.

import { languageNeedsContent } from '../index/language.ts';
import { Matcher } from '../search/matcher.ts';
import type { PlanNode, Term } from '../query/terms.ts';
import type { ChangedText } from '../repos/changed-text.ts';

/** Whether a change may have changed a watch's matches. */
export type ChangeTest = (changed: ChangedText) => boolean;

const ALWAYS: ChangeTest = () => true;

/** The test of a watch's planned query. */
export function changeTest(root: PlanNode): ChangeTest {
  const content: Term[] = [];
  const names: Term[] = [];
  let opaque = false;
  let language = false;
  const walk = (n: PlanNode): void => {
    switch (n.op) {
      case 'and':
      case 'or':
        for (const c of n.children) walk(c);
        return;
      case 'not':
        walk(n.child);
        return;
      case 'content':
        // (\A and \z anchor at the file's ends, which a changed line's place in the diff is not.)
        if (n.term.kind === 'regex' ? !n.term.lineLocal || /\\[Az]/.test(n.term.pattern) : n.term.pattern.includes('\n')) opaque = true;
        content.push(n.term);
        return;
      case 'file':
        names.push(n.term);
        return;
      case 'sym':
        opaque = true;
        return;
      case 'lang':
        language = true;
        return;
      default:
        return;
    }
  };
  walk(root);
  if (opaque) return ALWAYS;
  if (content.length === 0 && names.length === 0) return (c) => c.paths.length > 0;
  const test = termTest(content, names);
  return language ? (c) => c.paths.some(languageNeedsContent) || test(c) : test;
}

/** Whether the changed lines match one of the content terms, or the changed paths one of the file terms. */
function termTest(content: readonly Term[], names: readonly Term[]): ChangeTest {
  // The reference matchers: what the oracle of the differential tests matches with.
  const lineMatchers = content.map((t) => new Matcher(t, 'reference'));
  const nameMatchers = names.map((t) => new Matcher(t, 'reference'));
  return (c) => {
    for (const m of lineMatchers) if (m.exists(c.lines)) return true;
    if (nameMatchers.length === 0) return false;
    for (const p of c.paths) {
      const name = Buffer.from(p, 'utf8');
      for (const m of nameMatchers) if (m.exists(name)) return true;
    }
    return false;
  };
}
