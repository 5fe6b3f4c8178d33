// Whether a commit matches a type:commit plan, and where in its message: content terms
// match the message (the search's own matcher, search/matcher.ts, so literals, regexes and
// case rules mean what they mean for files), author: and committer: match "Name <email>"
// case-insensitively, after: and before: bound the committer time (at or after, at or
// before: as `git log --after/--before` compare it), and the repository filters (repo:,
// archived:, fork:, visibility:) decide per repository.

import RE2 from 're2';
import type { PlanNode } from '../query/plan.ts';
import { parseHistoryDate } from '../repos/history-dates.ts';
import { repoAtom, type RepoFlags } from '../search/match-tree.ts';
import { Matcher } from '../search/matcher.ts';
import type { CommitRecord } from './commit-records.ts';

/** A commit as matching reads it: its record and the forms of it the filters test. */
export interface SearchedCommit {
  record: CommitRecord;
  /** Committer time, epoch milliseconds. */
  time: number;
  /** "Name <email>" of the author and of the committer. */
  author: string;
  committer: string;
  /** The message as UTF-8: match ranges are byte offsets into it. */
  message: Buffer;
}

export function searchedCommit(record: CommitRecord): SearchedCommit {
  return {
    record,
    time: Date.parse(record.committer.date),
    author: `${record.author.name} <${record.author.email}>`,
    committer: `${record.committer.name} <${record.committer.email}>`,
    message: Buffer.from(record.message, 'utf8'),
  };
}

/** Decides a commit: its match ranges in the message (flat [start, end, ...], ascending), or undefined when it does not match. */
export type CommitTest = (c: SearchedCommit) => number[] | undefined;

/** More ranges than any message holds: a commit's matches are all found (the caller cuts them to its budget). */
const ALL_RANGES = 1 << 30;

/** Compiles a plan's root for the commits of one repository (its flags decide the repository filters); `now` anchors relative times. */
export function commitTest(root: PlanNode, repo: RepoFlags, now: number): CommitTest {
  // Each node: whether the commit matches; given `ranges` (a node not under a NOT), a
  // matching content term adds its ranges there, as the file search highlights them.
  type Node = (c: SearchedCommit, ranges: number[][] | undefined) => boolean;
  const build = (n: PlanNode): Node => {
    switch (n.op) {
      case 'and': {
        const cs = n.children.map(build);
        return (c, r) => {
          if (r === undefined) return cs.every((f) => f(c, undefined));
          // A conjunction that fails (under an OR) adds none of its children's ranges.
          const mine: number[][] = [];
          if (!cs.every((f) => f(c, mine))) return false;
          r.push(...mine);
          return true;
        };
      }
      case 'or': {
        const cs = n.children.map(build);
        return (c, r) => {
          if (r === undefined) return cs.some((f) => f(c, undefined));
          // Every alternative runs: each matching one's ranges are wanted.
          let any = false;
          for (const f of cs) if (f(c, r)) any = true;
          return any;
        };
      }
      case 'not': {
        const child = build(n.child);
        return (c) => !child(c, undefined);
      }
      case 'const':
        return () => n.value;
      case 'content': {
        const m = new Matcher(n.term);
        return (c, r) => {
          if (r === undefined) return m.exists(c.message);
          const found = m.find(c.message, ALL_RANGES);
          if (found.length === 0) return false;
          r.push(found);
          return true;
        };
      }
      case 'author':
      case 'committer': {
        const re = new RE2(n.pattern, 'iu');
        const field = n.op;
        return (c) => re.test(c[field]);
      }
      case 'after': {
        const at = parseHistoryDate(n.time, 'after:', now);
        return (c) => c.time >= at;
      }
      case 'before': {
        const at = parseHistoryDate(n.time, 'before:', now);
        return (c) => c.time <= at;
      }
      case 'repo':
      case 'archived':
      case 'fork':
      case 'visibility': {
        const holds = repoAtom(n, repo, '');
        return () => holds;
      }
      case 'file':
      case 'sym':
      case 'lang':
      case 'branch':
        // The parser refuses them with type:commit.
        throw new Error(`a ${n.op}: filter reached a search of commits`);
    }
  };
  const top = build(root);
  return (c) => {
    const ranges: number[][] = [];
    if (!top(c, ranges)) return undefined;
    return mergeRanges(ranges);
  };
}

/** The terms' ranges as one ascending list without overlaps (overlapping ones joined). */
function mergeRanges(lists: number[][]): number[] {
  if (lists.length === 0) return [];
  if (lists.length === 1) return lists[0]!;
  const pairs: Array<[number, number]> = [];
  for (const l of lists) for (let i = 0; i < l.length; i += 2) pairs.push([l[i]!, l[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: number[] = [];
  for (const [s, e] of pairs) {
    const last = out.length - 1;
    if (last > 0 && s < out[last]!) out[last] = Math.max(out[last]!, e);
    else out.push(s, e);
  }
  return out;
}
