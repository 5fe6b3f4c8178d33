// `trawl search QUERY`: searches the data dir in-process (no daemon).

import { existsSync, writeSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { historyDataDir, resolveDataDir } from '../index/data-dir.ts';
import { IndexView } from '../index/index-health.ts';
import { shardFiles } from '../index/manifest.ts';
import { validateSearchRequest } from '../search/request.ts';
import { Searcher } from '../search/searcher.ts';
import { HistorySearch } from '../history/history-search.ts';
import type { CommitResult } from '../history/commit-results.ts';
import { planSearch } from '../search/plan-cache.ts';
import type { SearchResponse } from '../search/types.ts';
import { escaped } from './format.ts';
import { UsageError } from './usage.ts';

export async function searchCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      regex: { type: 'boolean' },
      case: { type: 'boolean' },
      matches: { type: 'string', default: '100' },
      context: { type: 'string', default: '0' },
      whole: { type: 'boolean' },
      brute: { type: 'boolean' },
      'data-dir': { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('search takes exactly one QUERY argument (quote it if it has spaces)');
  const req = validateSearchRequest({
    query: positionals[0],
    matches: cliInt('--matches', values.matches!),
    contextLines: cliInt('--context', values.context!),
    whole: values.whole === true,
    isRegexEnabled: values.regex === true,
    isCaseSensitivityEnabled: values.case === true,
  });
  const dataDir = resolveDataDir(values['data-dir']);
  // webUrl fields name the daemon: $TRAWL_PUBLIC_URL, else its default address.
  const publicUrl = process.env.TRAWL_PUBLIC_URL?.replace(/\/+$/, '');
  const view = new IndexView(dataDir, {
    onBroken: (b) =>
      process.stderr.write(
        `${escaped`trawl: repository ${b.name ?? b.repoId}: its index is damaged (${b.reason}); left out until it is re-indexed (trawl index, trawl sync)`}\n`,
      ),
  });
  // No more worker threads than shards, and none for one shard (the search runs in this
  // thread): a worker takes longer to start than a one-shard search takes (docs/design.md,
  // "Compiled at install, TypeScript in development").
  // (A compound shard is named by each of its repositories' manifests: counted once.)
  const shards = new Set(view.current().manifests.flatMap((m) => m.shards.map((s) => shardFiles(dataDir, m.repoId, s).path))).size;
  const workers = shards <= 1 ? 0 : Math.min(availableParallelism(), shards);
  const searcher = new Searcher(publicUrl ? { dataDir, baseUrl: publicUrl, view, workers } : { dataDir, view, workers });
  if (searcher.shardCount === 0 && searcher.brokenCount === 0) throw new Error(`nothing is indexed in ${dataDir}: run trawl index PATH first`);
  // Searches at a commit of an indexed history (rev:<commit>, at:<time>) read the history
  // indexes too, on a thread of their own (a search worker serves one searcher per thread).
  // type:commit searches the histories' commit records, whichever exist (none: no result).
  const planned = planSearch(req);
  const past =
    existsSync(historyDataDir(dataDir)) || planned.plan.type === 'commit'
      ? new HistorySearch(searcher, () => new Searcher({ dataDir: historyDataDir(dataDir), workers: 1, ...(publicUrl ? { baseUrl: publicUrl } : {}) }), dataDir)
      : undefined;
  const service = past ?? searcher;
  try {
    const res = await service.search(req, { planned, brute: values.brute === true });
    writeStdout(values.json ? `${JSON.stringify(res)}\n` : planned.plan.type === 'commit' ? formatCommits(res) : formatText(res));
    if (res.stats.crashes > 0) process.stderr.write(`trawl: ${res.stats.crashes} shard(s) failed during the search; results are incomplete\n`);
  } finally {
    await Promise.all([searcher.close(), past?.close()]);
  }
  return 0;
}

/**
 * Writes to fd 1 directly: process.stdout is built on first use (its stream classes, a
 * pipe's socket), a cost larger than a search on a small index (docs/design.md, "Compiled
 * at install, TypeScript in development"). A reader that went away (`| head`) ends the
 * output quietly, as it does for grep.
 */
function writeStdout(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < bytes.length) {
    try {
      off += writeSync(1, bytes, off);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      // A non-blocking pipe that is full: wait a millisecond for the reader.
      if (code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      else throw err;
    }
  }
}

function cliInt(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n)) throw new UsageError(`${flag} must be an integer, got "${v}"`);
  return n;
}

/**
 * grep-like: repo/path:line:text for matched lines, repo/path-line-text for context. The
 * repository's and the file's names are shown escaped (a file name may hold a newline);
 * the lines are the file's own, as grep prints them.
 */
function formatText(res: SearchResponse): string {
  const out: string[] = [];
  for (const f of res.files) {
    const where = escaped`${f.repository}/${f.fileName.text}`;
    // A type:diff result: its commit first; a history:yes result: when the file held matches.
    if (f.commit) out.push(escaped`${where}: commit ${f.commit.id} ${f.commit.committer.date} ${f.commit.author.name}`);
    if (f.history) {
      const spans = f.history.spans.map(
        (s) =>
          `from ${s.appeared.id.slice(0, 10)} (${s.appeared.date.slice(0, 10)}) ${s.gone ? `until ${s.gone.id.slice(0, 10)} (${s.gone.date.slice(0, 10)})` : 'until now'}`,
      );
      const n = f.history.changes.length;
      out.push(`${where}: held matches ${spans.join(', ')}; ${n} ${n === 1 ? 'change' : 'changes'}`);
    }
    for (const c of f.chunks) {
      const matched = new Set<number>();
      for (const r of c.matchRanges) for (let l = r.start.lineNumber; l <= r.end.lineNumber; l++) matched.add(l);
      c.content.split('\n').forEach((text, i) => {
        const line = c.contentStart.lineNumber + i;
        out.push(`${where}${matched.has(line) ? ':' : '-'}${line}${matched.has(line) ? ':' : '-'}${text}`);
      });
    }
  }
  out.push(summary(res, 'file'));
  return `${out.join('\n')}\n`;
}

/**
 * type:commit: per commit a line with its repository, id, committer date and author, then
 * its message's lines that matched, indented, `line:text` (`line-text` for context); a
 * commit matched by its author or time alone shows its first line.
 */
function formatCommits(res: SearchResponse): string {
  const out: string[] = [];
  for (const f of res.files as CommitResult[]) {
    const c = f.commit;
    out.push(escaped`${f.repository} ${c.id} ${c.committer.date} ${c.author.name} <${c.author.email}>`);
    if (f.chunks.length === 0) out.push(escaped`    ${c.message.split('\n')[0] ?? ''}`);
    for (const ch of f.chunks) {
      const matched = new Set<number>();
      for (const r of ch.matchRanges) for (let l = r.start.lineNumber; l <= r.end.lineNumber; l++) matched.add(l);
      ch.content.split('\n').forEach((text, i) => {
        const line = ch.contentStart.lineNumber + i;
        out.push(escaped`    ${line}${matched.has(line) ? ':' : '-'}${text}`);
      });
    }
  }
  out.push(summary(res, 'commit'));
  return `${out.join('\n')}\n`;
}

function summary(res: SearchResponse, what: 'file' | 'commit'): string {
  const s = res.stats;
  return (
    `${s.actualMatchCount} match${s.actualMatchCount === 1 ? '' : 'es'} in ${s.fileCount} ${what}${s.fileCount === 1 ? '' : 's'}` +
    `${res.isSearchExhaustive ? '' : ' (more exist: raise --matches)'} in ${(s.duration / 1e6).toFixed(1)} ms`
  );
}
