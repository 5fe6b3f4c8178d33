// A matching commit as a result of a type:commit search: the file result's shape (types.ts
// FileResult, so that clients of file results read it), with the commit in `commit`, its
// message's lines holding the matches in `chunks` (ranges in message coordinates: byte
// offsets, lines and columns of the message), no file name and no branches, and the web
// UI's page of the commit as `webUrl`.

import { locateLines } from '../../core/index.ts';
import { commitWebUrl } from '../repos/web-urls.ts';
import { chunkSpans, columnAt, type LineTable } from '../search/range-locations.ts';
import type { Chunk, CommitInfo, FileResult, Location } from '../search/types.ts';
import type { SearchedCommit } from './commit-match.ts';

/** A commit's result: a FileResult with its commit. */
export interface CommitResult extends FileResult {
  commit: CommitInfo;
}

export interface CommitResultRepo {
  id: number;
  name: string;
}

/** The result of commit `c` of `repo` with match ranges `ranges` (flat, ascending) and `contextLines` lines around them. */
export function commitResult(repo: CommitResultRepo, c: SearchedCommit, ranges: number[], contextLines: number, baseUrl: string): CommitResult {
  const r = c.record;
  return {
    fileName: { text: '', matchRanges: [] },
    webUrl: commitWebUrl(baseUrl, repo.name, r.id),
    repository: repo.name,
    repositoryId: repo.id,
    language: '',
    chunks: messageChunks(c.message, ranges, contextLines),
    branches: [],
    commit: { id: r.id, parents: r.parents, author: r.author, committer: r.committer, message: r.message },
  };
}

function messageChunks(message: Buffer, ranges: number[], contextLines: number): Chunk[] {
  if (ranges.length === 0) return [];
  const lines: LineTable = locateLines(message, ranges);
  const at = (i: number): Location => ({ byteOffset: ranges[i]!, lineNumber: lines[2 * i]!, column: columnAt(message, ranges, lines, i) });
  return chunkSpans(message, ranges, lines, contextLines).map((s) => {
    const matchRanges = [];
    for (let k = s.from; k < s.to; k++) matchRanges.push({ start: at(2 * k), end: at(2 * k + 1) });
    return {
      content: message.toString('utf8', s.start, s.end),
      matchRanges,
      contentStart: { byteOffset: s.start, lineNumber: s.firstLine, column: 1 },
      symbols: [],
    };
  });
}
