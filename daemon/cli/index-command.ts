// `trawl index PATH...`

import { parseArgs } from 'node:util';
import { resolveDataDir } from '../index/data-dir.ts';
import type { BuildProgress } from '../index/indexer.ts';
import type { IndexSummary } from '../index/index-summary.ts';
import { indexLocal, indexLocalHistory } from '../sync/local-repos.ts';
import type { HistorySummary } from '../history/history-index.ts';
import { buildProgressLine, escaped, escapeControl, formatBytes, formatCount, symbolsProgressLine, throttled } from './format.ts';
import { UsageError } from './usage.ts';

export async function indexCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      branches: { type: 'string' },
      tags: { type: 'string' },
      full: { type: 'boolean' },
      'max-file-size': { type: 'string' },
      workers: { type: 'string' },
      'no-symbols': { type: 'boolean' },
      'data-dir': { type: 'string' },
      verbose: { type: 'boolean' },
      history: { type: 'boolean' },
      'max-commits': { type: 'string' },
    },
  });
  if (positionals.length === 0) throw new UsageError('index needs at least one PATH (see trawl index --help)');
  if (values.name !== undefined && positionals.length > 1) throw new UsageError('--name applies to one PATH only');
  const dataDir = resolveDataDir(values['data-dir']);
  const maxFileSize = positiveInt('--max-file-size', values['max-file-size']);
  const workers = positiveInt('--workers', values.workers);
  const maxCommits = positiveInt('--max-commits', values['max-commits']);
  if (maxCommits !== undefined && values.history !== true) throw new UsageError('--max-commits applies with --history only');
  const tty = process.stderr.isTTY === true;

  for (const [i, path] of positionals.entries()) {
    // Several paths: which one of how many, before its bar.
    const label = positionals.length > 1 ? `[${i + 1}/${positionals.length}] ${path}` : path;
    const summary = await indexLocal(path, {
      dataDir,
      name: values.name,
      revisions: { branches: globList(values.branches), tags: globList(values.tags) },
      incremental: values.full !== true,
      maxFileSize,
      workers,
      symbols: values['no-symbols'] !== true,
      onProgress: tty
        ? throttled(
            (p: BuildProgress) => process.stderr.write(buildProgressLine(label, p)),
            (p) => p.files >= p.totalFiles,
          )
        : undefined,
      // The content is searchable by now; the symbols come shard by shard.
      onSymbolsProgress: tty ? (p) => process.stderr.write(symbolsProgressLine(label, p)) : undefined,
    });
    if (tty) process.stderr.write('\r\x1b[K');
    process.stdout.write(`${summaryLine(summary)}\n`);
    if (values.history === true) {
      const history = await indexLocalHistory(summary, {
        dataDir,
        maxFileSize,
        workers,
        symbols: values['no-symbols'] !== true,
        ...(maxCommits !== undefined ? { maxCommits } : {}),
      });
      process.stdout.write(`${historyLine(summary, history)}\n`);
    }
  }
  return 0;
}

export function summaryLine(s: IndexSummary): string {
  const reasons = Object.entries(s.skippedByReason)
    .map(([r, n]) => `${r} ${n}`)
    .join(', ');
  const mbps = s.seconds > 0 ? s.totalBytes / 1e6 / s.seconds : 0;
  const refs = s.refs.length > 1 ? ` at ${s.refs.length} refs` : '';
  // The repository's name comes from its origin remote or its directory: escaped.
  const name = escapeControl(s.repoName);
  if (s.mode === 'unchanged') return `${name}: up to date${refs} (${formatCount(s.files)} files), ${s.seconds.toFixed(1)} s`;
  const how = s.mode === 'delta' ? `delta: ${formatCount(s.builtFiles)} changed file versions, ` : s.fullReason ? escaped`full build (${s.fullReason}), ` : '';
  return (
    `indexed ${name} (${s.kind}${refs}): ${how}${formatCount(s.files)} files, ${formatBytes(s.contentBytes)}, ` +
    `${formatCount(s.skipped)} skipped${reasons ? ` (${reasons})` : ''}, ` +
    `${formatCount(s.symbols)} symbols${symbolNotes(s)}, ` +
    `${s.shards} shard${s.shards === 1 ? '' : 's'} written (${s.totalShards} in the index), ` +
    `${s.seconds.toFixed(1)} s${s.contentSeconds !== undefined ? ` (content searchable after ${s.contentSeconds.toFixed(1)} s)` : ''}, ${mbps.toFixed(1)} MB/s`
  );
}

/** What `--history` did, one line. */
export function historyLine(s: IndexSummary, h: HistorySummary | 'unchanged'): string {
  const name = escapeControl(s.repoName);
  if (h === 'unchanged') return `history of ${name}: up to date`;
  const left = h.leftOut > 0 ? ` (${formatCount(h.leftOut)} older commits left out by --max-commits)` : '';
  const how = h.mode === 'delta' ? `delta: ${formatCount(h.builtFiles)} new file versions, ` : '';
  return `history of ${name}: ${formatCount(h.commits)} commits${left}, ${how}${formatCount(h.files)} file versions, ${formatBytes(h.contentBytes)}, ${h.seconds.toFixed(1)} s`;
}

/** ` (taken from the previous index for N files, ctags failed on M files)`, or '' when neither happened. */
function symbolNotes(s: IndexSummary): string {
  const notes: string[] = [];
  if (s.symbolsReused) notes.push(`taken from the previous index for ${formatCount(s.symbolsReused)} files`);
  if (s.symbolFailures) notes.push(`ctags failed on ${formatCount(s.symbolFailures)} files`);
  return notes.length > 0 ? ` (${notes.join(', ')})` : '';
}

/** "main,release/*" -> ["main", "release/*"]; empty items are dropped. */
function globList(v: string | undefined): string[] {
  return v === undefined
    ? []
    : v
        .split(',')
        .map((g) => g.trim())
        .filter((g) => g !== '');
}

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} must be a positive integer, got "${v}"`);
  return n;
}
