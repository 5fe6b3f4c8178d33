// A repository's history for the HTTP API: one commit, commit logs and their authors
// (filtered and paged), read through nodegit. Blame is in blame.ts, diffs in diff.ts.
//
// Messages: `message` is the subject, the first line (leading blank lines skipped,
// trimmed); `body` is everything after that first line, trimmed: for the usual
// "subject, blank line, body" layout that is the text after the blank line. Dates are
// author dates in UTC ISO 8601 (the author's time zone is not kept).
import NodeGit from 'nodegit';
import { ServiceError } from '../errors.ts';
import { isTreeMode } from './browse.ts';
import { withRepository } from './git-repo-cache.ts';
import { checkRepoPath } from './repo-path.ts';
import { parseHistoryDate } from './history-dates.ts';
import { compareBytes } from './byte-order.ts';
import { decorationsByCommit, resolveCommit, type RevisionOptions } from './revision.ts';

export interface CommitSummary {
  hash: string;
  date: string;
  message: string;
  /** The refs pointing at exactly this commit as git's `%D` decoration ("HEAD -> main, tag: v1"; revision.ts). */
  refs: string;
  body: string;
  authorName: string;
  authorEmail: string;
  /** authorName and authorEmail again, under the names the published `@sourcebot/mcp` 1.0.x server reads commits by. */
  author_name: string;
  author_email: string;
}

export interface CommitDetails extends CommitSummary {
  parents: string[];
}

export interface Page<T> {
  items: T[];
  /** Every match (within the walk limit), not only this page's. */
  total: number;
}

export interface HistoryFilter extends RevisionOptions {
  /** Only commits that changed this file or directory (see changedPath). */
  path?: string;
  /** 1-based. */
  page: number;
  perPage: number;
}

export interface CommitFilter extends HistoryFilter {
  /** Case-insensitive substring of the whole message. */
  query?: string;
  /** Case-insensitive substring of the author's name or email. */
  author?: string;
  /** Inclusive bounds on the author date (history-dates.ts: ISO 8601 or relative forms; a date alone is its start). */
  since?: string;
  until?: string;
  /** The instant relative bounds count back from (epoch ms); default now. */
  now?: number;
}

export interface AuthorSummary {
  name: string;
  email: string;
  commitCount: number;
}

/**
 * History walks stop after this many commits: a log request costs at most this much
 * however long the history is. Totals then count the matches among the newest
 * MAX_WALK commits only.
 */
export const MAX_WALK = 100_000;
// Commits per native call: large enough that the per-call cost vanishes, small enough
// that the commit objects of one call stay few.
const WALK_BATCH = 1000;

export async function commitInfo(dir: string, options: RevisionOptions): Promise<CommitDetails> {
  return withRepository(dir, async (repo) => {
    const commit = await resolveCommit(repo, options.ref, options);
    const refs = await decorationsByCommit(repo);
    const parents: string[] = [];
    for (let i = 0; i < commit.parentcount(); i++) parents.push(commit.parentId(i).tostrS());
    return { ...summarize(commit, refs), parents };
  });
}

/** The commits reachable from the ref that pass the filters, newest first, paged. */
export async function commits(dir: string, options: CommitFilter): Promise<Page<CommitSummary>> {
  checkPaging(options);
  const path = options.path === undefined ? undefined : checkRepoPath(options.path, { allowEmpty: true });
  const now = options.now ?? Date.now();
  const since = options.since === undefined ? undefined : parseHistoryDate(options.since, 'since', now);
  const until = options.until === undefined ? undefined : parseHistoryDate(options.until, 'until', now);
  const query = options.query?.toLowerCase();
  const author = options.author?.toLowerCase();
  return withRepository(dir, async (repo) => {
    const start = await resolveCommit(repo, options.ref, options);
    const matches = (c: NodeGit.Commit): boolean => {
      if (since !== undefined || until !== undefined) {
        const t = c.author().when().time() * 1000;
        if ((since !== undefined && t < since) || (until !== undefined && t > until)) return false;
      }
      if (author !== undefined) {
        const a = c.author();
        if (!a.name().toLowerCase().includes(author) && !a.email().toLowerCase().includes(author)) return false;
      }
      return query === undefined || c.message().toLowerCase().includes(query);
    };
    const found = await walk(repo, start, path || undefined, (c) => (matches(c) ? c.sha() : undefined));
    const first = (options.page - 1) * options.perPage;
    const page = await Promise.all(found.slice(first, first + options.perPage).map((sha) => NodeGit.Commit.lookup(repo, sha)));
    const refs = page.length === 0 ? new Map<string, string>() : await decorationsByCommit(repo);
    return { items: page.map((c) => summarize(c, refs)), total: found.length };
  });
}

/**
 * The authors of the commits reachable from the ref (that changed `path`, when given),
 * grouped by email, case-insensitively; named as in their newest commit. Most commits
 * first, then by name and email.
 */
export async function authors(dir: string, options: HistoryFilter): Promise<Page<AuthorSummary>> {
  checkPaging(options);
  const path = options.path === undefined ? undefined : checkRepoPath(options.path, { allowEmpty: true });
  return withRepository(dir, async (repo) => {
    const start = await resolveCommit(repo, options.ref, options);
    const byEmail = new Map<string, AuthorSummary>();
    const signatures = await walk(repo, start, path || undefined, (c) => {
      const a = c.author();
      return { name: a.name(), email: a.email() };
    });
    for (const { name, email } of signatures) {
      const key = email.toLowerCase();
      const known = byEmail.get(key);
      if (known === undefined) byEmail.set(key, { name, email, commitCount: 1 });
      else known.commitCount++; // the walk is newest first: the first name seen stays
    }
    const all = [...byEmail.values()].sort((x, y) => y.commitCount - x.commitCount || compareBytes(x.name, y.name) || compareBytes(x.email, y.email));
    const first = (options.page - 1) * options.perPage;
    return { items: all.slice(first, first + options.perPage), total: all.length };
  });
}

/**
 * `pick`'s values for the commits reachable from `start` (newest first: commit time,
 * parents after children) for which it returns one and, when `path` is given, that
 * changed it. At most MAX_WALK commits are looked at. Only the picked values are kept,
 * not the commits (a commit object holds its whole message).
 *
 * "Changed" is git log's simple sense without rename following: the entry at `path`
 * (a file, or a directory: any change below it) differs in id or mode from the first
 * parent's, or, for a root commit, exists. Comparing entry ids needs no diff: git
 * stores equal content as equal ids, so a changed subtree has a new id.
 */
async function walk<T>(repo: NodeGit.Repository, start: NodeGit.Commit, path: string | undefined, pick: (c: NodeGit.Commit) => T | undefined): Promise<T[]> {
  const newWalker = (): NodeGit.Revwalk => {
    const w = repo.createRevWalk();
    w.sorting(NodeGit.Revwalk.SORT.TIME, NodeGit.Revwalk.SORT.TOPOLOGICAL);
    w.push(start.id());
    return w;
  };
  // For commits with at most one parent, nodegit's fileHistoryWalk applies exactly that
  // rule (entry id and mode compared; an added or deleted entry counts) over the same
  // walk, in one native call: an order of magnitude faster than reading every commit's
  // tree from here. For merges it hides a
  // commit unchanged against any parent (git log's rule), so merges are checked below.
  // Both walks run at once, on separate native threads.
  const touchedWalk = path === undefined ? undefined : newWalker().fileHistoryWalk(path, MAX_WALK);
  const walker = newWalker();
  const candidates: Array<{ sha: string; value: T; merge?: { tree: string; parent: string } }> = [];
  try {
    for (let walked = 0; walked < MAX_WALK; ) {
      const batch = await walker.commitWalk(Math.min(WALK_BATCH, MAX_WALK - walked));
      if (batch.length === 0) break;
      walked += batch.length;
      for (const c of batch) {
        const value = pick(c);
        if (value === undefined) continue;
        const merge = c.parentcount() > 1 ? { tree: c.treeId().tostrS(), parent: c.parentId(0).tostrS() } : undefined;
        candidates.push(merge === undefined ? { sha: c.sha(), value } : { sha: c.sha(), value, merge });
      }
    }
  } finally {
    await touchedWalk?.catch(() => undefined); // settled before the repository is handed on
  }
  if (path === undefined || touchedWalk === undefined) return candidates.map((c) => c.value);
  const touched = new Set((await touchedWalk).map((e) => e.commit.sha()));
  const changedInMerge = mergeCheck(repo, path);
  const changed = await Promise.all(candidates.map((c) => (c.merge !== undefined ? changedInMerge(c.merge) : touched.has(c.sha))));
  return candidates.filter((_, i) => changed[i]).map((c) => c.value);
}

/** Whether a merge commit's entry at `path` differs (id or mode) from its first parent's. */
function mergeCheck(repo: NodeGit.Repository, path: string): (merge: { tree: string; parent: string }) => Promise<boolean> {
  const parts = path.split('/');
  const entryIds = new Map<string, Promise<string | null>>();
  // The entry at parts[depth..] below the tree `treeId`, as "mode id", or null. Cached by
  // tree id: the parents of merges share most subtrees.
  const entryKey = (treeId: string, depth: number): Promise<string | null> => {
    const cacheKey = `${treeId}:${depth}`;
    let known = entryIds.get(cacheKey);
    if (known === undefined) {
      known = NodeGit.Tree.lookup(repo, treeId).then((tree) => {
        const e = tree._entryByName(parts[depth]!);
        if (e === undefined) return null;
        if (depth === parts.length - 1) return `${e.filemode()} ${e.id().tostrS()}`;
        return isTreeMode(e.filemode()) ? entryKey(e.id().tostrS(), depth + 1) : null;
      });
      entryIds.set(cacheKey, known);
    }
    return known;
  };
  return async ({ tree, parent }) => {
    const parentTree = (await NodeGit.Commit.lookup(repo, parent)).treeId().tostrS();
    const [here, there] = await Promise.all([entryKey(tree, 0), entryKey(parentTree, 0)]);
    return here !== there;
  };
}

function summarize(c: NodeGit.Commit, refs: Map<string, string>): CommitSummary {
  const a = c.author();
  const { subject, body } = splitMessage(c.message());
  return {
    hash: c.sha(),
    date: isoDate(a.when().time()),
    message: subject,
    refs: refs.get(c.sha()) ?? '',
    body,
    ...authorFields(a),
  };
}

/** A commit's author under both spellings clients read: authorName/authorEmail, and author_name/author_email (`@sourcebot/mcp` 1.0.x). */
export function authorFields(a: NodeGit.Signature): { authorName: string; authorEmail: string; author_name: string; author_email: string } {
  const name = a.name();
  const email = a.email();
  return { authorName: name, authorEmail: email, author_name: name, author_email: email };
}

/** Seconds since the epoch in ISO 8601; a time beyond what Date holds (a damaged commit) reads as the epoch. */
export function isoDate(seconds: number): string {
  const d = new Date(seconds * 1000);
  return Number.isNaN(d.getTime()) ? new Date(0).toISOString() : d.toISOString();
}

export function splitMessage(message: string): { subject: string; body: string } {
  const text = message.replace(/^\s*\n/, '');
  const nl = text.indexOf('\n');
  if (nl < 0) return { subject: text.trim(), body: '' };
  return { subject: text.slice(0, nl).trim(), body: text.slice(nl + 1).trim() };
}

function checkPaging({ page, perPage }: { page: number; perPage: number }): void {
  if (!Number.isSafeInteger(page) || page < 1) {
    throw new ServiceError('INVALID_QUERY_PARAMS', `page must be a whole number of at least 1 (got ${String(page)})`);
  }
  if (!Number.isSafeInteger(perPage) || perPage < 1) {
    throw new ServiceError('INVALID_QUERY_PARAMS', `perPage must be a whole number of at least 1 (got ${String(perPage)})`);
  }
}
