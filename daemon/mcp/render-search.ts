// Results of search_code and of the symbol tools for a language model: grep-like lines
// grouped by file under a header of counts, cut to the text budget with a hint that names
// the argument to change. structuredContent is the REST answer with `files` cut to its
// first k entries: k = the files the text shows, fewer if their JSON would pass
// STRUCTURED_BUDGET (every other field as the REST API answered).

import type { FileResult, Range, SearchResponse } from '../search/types.ts';
import { clip, structuredPrefix, TextBudget } from './budget.ts';

export interface Rendered {
  text: string;
  structured: Record<string, unknown>;
}

/** The answer of POST /api/find_definitions and /api/find_references. */
export interface SymbolAnswer {
  stats: { matchCount: number };
  files: Array<{
    fileName: string;
    repository: string;
    repositoryId: number;
    webUrl: string;
    language: string;
    matches: Array<{ lineContent: string; range: Range }>;
  }>;
  repositoryInfo: unknown[];
}

/** The header of a file: the arguments read_file takes for it. */
export function fileHeader(repo: string, path: string, note: string): string {
  return `## repo=${repo} path=${path}  (${note})`;
}

export function renderSearch(answer: SearchResponse, args: { matches: number; contextLines: number }): Rendered {
  const { files, stats } = answer;
  const out = new TextBudget();
  out.add(
    files.length === 0
      ? 'No matches.'
      : `${plural(stats.actualMatchCount, 'match', 'matches')} in ${plural(files.length, 'file', 'files')}${answer.isSearchExhaustive ? '' : ` (not exhaustive: ${stats.totalMatchCount} matches found so far, more may exist)`}:`,
  );
  const { shown, cut } = out.addBlocks(files.length, (i) => ['', ...fileLines(files[i]!)]);
  const hints: string[] = [];
  if (cut) hints.push(`the first file was cut to fit: lower contextLines (now ${args.contextLines}) or read it with read_file`);
  if (shown < files.length) {
    hints.push(
      `${plural(files.length - shown, 'more file was', 'more files were')} not shown (output limit): narrow the query (repo:, file:, lang: filters) or lower contextLines (now ${args.contextLines}) or matches (now ${args.matches})`,
    );
  }
  if (!answer.isSearchExhaustive) hints.push(`more matches exist: raise matches (now ${args.matches}) or narrow the query`);
  const k = structuredPrefix({ ...answer, files: [] }, files, shown);
  return { text: out.text(hints), structured: { ...answer, files: files.slice(0, k) } };
}

/** A file's matches: `line: text` for lines with a match, `line- text` for context, `--` between chunks. */
function fileLines(f: FileResult): string[] {
  const count = f.fileName.matchRanges.length + f.chunks.reduce((n, c) => n + c.matchRanges.length, 0);
  // A type:commit result: the commit instead of a file, its first line when no line matched.
  const c = f.commit;
  const lines =
    c === undefined
      ? [fileHeader(f.repository, f.fileName.text, `${f.language || 'unknown language'}; ${plural(count, 'match', 'matches')}`)]
      : [`## repo=${f.repository} commit=${c.id}  (${c.author.name} <${c.author.email}>, ${c.committer.date}; ${plural(count, 'match', 'matches')})`];
  if (c !== undefined && f.chunks.length === 0) lines.push(`1- ${clip(c.message.split('\n')[0] ?? '')}`);
  if (f.fileName.matchRanges.length > 0) lines.push('(the path matches)');
  f.chunks.forEach((chunk, i) => {
    if (i > 0) lines.push('--');
    const matched = matchedLines(chunk.matchRanges);
    chunk.content.split('\n').forEach((text, j) => {
      const n = chunk.contentStart.lineNumber + j;
      lines.push(`${n}${matched.has(n) ? ':' : '-'} ${clip(text)}`);
    });
  });
  return lines;
}

/** The lines a range covers; an end at column 1 ends before its line (end is exclusive). */
function matchedLines(ranges: Range[]): Set<number> {
  const lines = new Set<number>();
  for (const r of ranges) {
    const last = r.end.column === 1 && r.end.lineNumber > r.start.lineNumber ? r.end.lineNumber - 1 : r.end.lineNumber;
    for (let n = r.start.lineNumber; n <= last; n++) lines.add(n);
  }
  return lines;
}

export function renderSymbols(answer: SymbolAnswer, what: 'definitions' | 'references', symbolName: string): Rendered {
  const { files } = answer;
  const out = new TextBudget();
  out.add(
    files.length === 0
      ? `No ${what} of "${symbolName}" found.`
      : `${answer.stats.matchCount} ${what} of "${symbolName}" in ${plural(files.length, 'file', 'files')}:`,
  );
  const { shown, cut } = out.addBlocks(files.length, (i) => {
    const f = files[i]!;
    const lines = ['', fileHeader(f.repository, f.fileName, `${f.language || 'unknown language'}; ${plural(f.matches.length, 'match', 'matches')}`)];
    // Several matches on one line (a name used twice) are one line of text.
    let previous = 0;
    for (const m of f.matches) {
      const n = m.range.start.lineNumber;
      if (n !== previous) lines.push(`${n}: ${clip(m.lineContent)}`);
      previous = n;
    }
    return lines;
  });
  const hints: string[] = [];
  if (cut) hints.push('the first file was cut to fit: read it with read_file');
  if (shown < files.length) hints.push(`${files.length - shown} more files were not shown (output limit): narrow with repo= or language=`);
  const k = structuredPrefix({ ...answer, files: [] }, files, shown);
  return { text: out.text(hints), structured: { ...answer, files: files.slice(0, k) } };
}

export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
