// Results of list_commits, get_diff and blame for a language model. What each
// structuredContent is, exactly, is said above each function (the MCP e2e test rebuilds
// it from the REST answer).

import type { BlameCommit, BlameRange } from '../repos/blame.ts';
import type { DiffFile } from '../repos/diff.ts';
import type { CommitSummary } from '../repos/history.ts';
import { clip, structuredPrefix, TextBudget } from './budget.ts';
import { renderPage, type PageArgs } from './render-page.ts';
import { plural, type Rendered } from './render-search.ts';

/** structuredContent: `{ commits, total, page, perPage }` (render-page.ts). */
export function renderCommits(commits: CommitSummary[], total: number, args: PageArgs & { repo: string; ref?: string }): Rendered {
  const title = `of ${args.repo}${args.ref === undefined ? '' : ` at ${args.ref}`}`;
  return renderPage({ tool: 'list_commits', key: 'commits', noun: 'commits', items: commits, total, title }, args, (c) => {
    const refs = c.refs !== '' ? `  (${c.refs})` : '';
    const lines = [`${c.hash} ${c.date} ${c.authorName} <${c.authorEmail}>${refs}`, `    ${clip(c.message, 300)}`];
    // The body on one line and cut: enough to tell what a commit is about.
    const body = c.body.replace(/\s+/g, ' ').trim();
    if (body !== '') lines.push(`    ${clip(body, 300)}`);
    return lines;
  });
}

export interface DiffAnswer {
  files: DiffFile[];
  truncated?: boolean;
}

/**
 * Each file under a header saying what happened to it, then its hunks as unified diff.
 * structuredContent: the REST answer with `files` cut to its first k entries: k = the
 * files the text shows (the first one possibly cut), fewer if their JSON would pass
 * STRUCTURED_BUDGET; `truncated` as REST answered.
 */
export function renderDiff(answer: DiffAnswer, args: { base: string; head: string; path?: string }): Rendered {
  const { files } = answer;
  const out = new TextBudget();
  const scope = args.path === undefined ? '' : ` under ${args.path}`;
  out.add(
    files.length === 0
      ? `No changes between ${args.base} and ${args.head}${scope}.`
      : `${plural(files.length, 'file', 'files')} changed between ${args.base} and ${args.head}${scope}:`,
  );
  const { shown, cut } = out.addBlocks(files.length, (i) => fileDiff(files[i]!));
  const hints: string[] = [];
  if (cut) hints.push(`the diff of ${files[0]!.newPath ?? files[0]!.oldPath} was cut to fit (output limit)`);
  if (shown < files.length)
    hints.push(
      `${files.length - shown} more changed files were not shown (output limit): call get_diff with path=<a file or directory> to see part of the diff`,
    );
  if (answer.truncated) hints.push('the daemon cut this diff (1000 files or 10 MB): call get_diff with path=<a file or directory> to narrow it');
  const k = structuredPrefix({ ...answer, files: [] }, files, shown);
  return { text: out.text(hints), structured: { ...answer, files: files.slice(0, k) } };
}

function fileDiff(f: DiffFile): string[] {
  let header: string;
  if (f.oldPath === null) header = `added ${f.newPath}`;
  else if (f.newPath === null) header = `deleted ${f.oldPath}`;
  else if (f.oldPath !== f.newPath) header = `renamed ${f.oldPath} -> ${f.newPath}`;
  else header = `modified ${f.newPath}`;
  const lines = ['', `## ${header}`];
  if (f.tooLarge) lines.push('(not shown: the file is larger than this server shows (settings.http.maxSourceBytes))');
  else if (f.hunks.length === 0) lines.push('(no text changes: a binary file, or only its name or mode changed)');
  for (const h of f.hunks) {
    lines.push(`@@ -${h.oldRange.start},${h.oldRange.lines} +${h.newRange.start},${h.newRange.lines} @@${h.heading ? ` ${h.heading}` : ''}`);
    for (const line of h.body.split('\n')) lines.push(clip(line));
  }
  return lines;
}

export interface BlameAnswer {
  ranges: BlameRange[];
  commits: Record<string, BlameCommit>;
}

/**
 * The REST answer restricted to lines startLine..endLine (inclusive; absent: to the end):
 * the ranges that overlap them, cut to them (startLine and lineCount adjusted).
 */
export function clipBlame(answer: BlameAnswer, startLine: number, endLine?: number): BlameRange[] {
  const out: BlameRange[] = [];
  for (const r of answer.ranges) {
    const first = Math.max(r.startLine, startLine);
    const last = Math.min(r.startLine + r.lineCount - 1, endLine ?? Infinity);
    if (first <= last) out.push({ ...r, startLine: first, lineCount: last - first + 1 });
  }
  return out;
}

/**
 * One line per run of lines: the lines, the commit, its date, author and subject.
 * structuredContent: `{ ranges, commits }`: ranges = clipBlame(REST answer, startLine,
 * endLine) cut to the first n runs the text shows (and to STRUCTURED_BUDGET); commits =
 * the REST answer's commits that those ranges name, in the REST answer's key order.
 */
export function renderBlame(answer: BlameAnswer, args: { path: string; ref?: string; startLine: number; endLine?: number }): Rendered {
  const ranges = clipBlame(answer, args.startLine, args.endLine);
  const out = new TextBudget();
  const at = args.ref === undefined ? '' : ` at ${args.ref}`;
  const end = ranges.length > 0 ? ranges.at(-1)!.startLine + ranges.at(-1)!.lineCount - 1 : 0;
  if (ranges.length === 0)
    out.add(answer.ranges.length === 0 ? `${args.path}${at} is empty.` : `${args.path}${at} has no line ${args.startLine}: it has ${blameEnd(answer)} lines.`);
  else out.add(`Blame of ${args.path}${at}, lines ${ranges[0]!.startLine}–${end} (line(s)  commit  date  author: subject):`);
  const shown = out.addSome(
    ranges.map((r) => {
      const c = answer.commits[r.hash];
      const lines = r.lineCount === 1 ? `${r.startLine}` : `${r.startLine}–${r.startLine + r.lineCount - 1}`;
      const moved = r.path !== args.path ? `  [then ${r.path}]` : '';
      return c ? `${lines}  ${r.hash}  ${c.date.slice(0, 10)}  ${c.authorName}: ${clip(c.message, 120)}${moved}` : `${lines}  ${r.hash}${moved}`;
    }),
  );
  const hints: string[] = [];
  if (shown < ranges.length)
    hints.push(`lines ${ranges[shown]!.startLine}–${end} were not shown (output limit): call blame with startLine=${ranges[shown]!.startLine}`);
  const base = { ranges: [], commits: {} };
  // The commits count against the budget too: measure ranges with the commit each adds.
  const named = new Set<string>();
  const sized = ranges.slice(0, shown).map((r) => {
    const fresh = !named.has(r.hash) && answer.commits[r.hash] !== undefined;
    named.add(r.hash);
    return fresh ? [r, answer.commits[r.hash]] : r;
  });
  const k = structuredPrefix(base, sized, shown);
  const kept = ranges.slice(0, k);
  const hashes = new Set(kept.map((r) => r.hash));
  const commits = Object.fromEntries(Object.entries(answer.commits).filter(([hash]) => hashes.has(hash)));
  return { text: out.text(hints), structured: { ranges: kept, commits } };
}

function blameEnd(answer: BlameAnswer): number {
  return answer.ranges.reduce((n, r) => Math.max(n, r.startLine + r.lineCount - 1), 0);
}
