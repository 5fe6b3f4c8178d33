// `history:yes` on a file search: each match range of a file found on a repository's
// default branch, in a repository whose history is indexed, gets `introduced`, the commit
// since which its line is there (line-introduced.ts). One git log per file, for the first
// MAX_DATED_FILES files of an answer (in its order); the others are left as they are.

import type { ShapedFile } from '../search/file-json.ts';
import type { FileResult } from '../search/types.ts';
import { linesIntroduced } from './line-introduced.ts';

/** Files of one answer whose matches are dated (one git log each). */
export const MAX_DATED_FILES = 50;

/** A repository with a history index: where git reads it, and its default branch. */
export interface DatedRepo {
  source: string;
  defaultRef: string;
  tip: string;
}

/** Adds `introduced` to the matches of the files found on a default branch (in place). */
export async function dateMatches(files: readonly FileResult[], repos: ReadonlyMap<number, DatedRepo>): Promise<void> {
  let dated = 0;
  for (const f of files) {
    if (dated >= MAX_DATED_FILES) return;
    const repo = repos.get(f.repositoryId);
    if (repo === undefined || (f.branches.length > 0 && !f.branches.includes(repo.defaultRef))) continue;
    const ranges = f.chunks.flatMap((c) => {
      const lines = c.content.split('\n');
      return c.matchRanges.map((range) => ({ range, text: lines[range.start.lineNumber - c.contentStart.lineNumber] }));
    });
    const texts = [...new Set(ranges.flatMap((r) => (r.text === undefined ? [] : [r.text])))];
    if (texts.length === 0) continue;
    dated++;
    const since = await linesIntroduced(repo.source, repo.tip, f.fileName.text, texts);
    for (const { range, text } of ranges) {
      const found = text === undefined ? undefined : since.get(text);
      if (found !== undefined) range.introduced = found;
    }
  }
}

/** dateMatches for files in their wire form: those dated are written again. */
export async function dateShapedMatches(files: readonly ShapedFile[], repos: ReadonlyMap<number, DatedRepo>): Promise<ShapedFile[]> {
  const parsed = files.slice(0, MAX_DATED_FILES).map((f) => JSON.parse(Buffer.from(f.json).toString('utf8')) as FileResult);
  await dateMatches(parsed, repos);
  return files.map((f, i) => (i < parsed.length ? { ...f, json: Buffer.from(JSON.stringify(parsed[i]), 'utf8') } : f));
}
