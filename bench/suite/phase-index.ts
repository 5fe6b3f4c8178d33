// Indexing: `trawl index CORPUS` into an empty data dir, `runs` times, each in a child
// process timed from spawn to exit (Node start-up included, as an operator sees it), with
// the child's peak RSS. The last build's data dir is kept: the search and HTTP phases
// read it.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildTrawl } from './build.ts';
import { settleIo } from './machine.ts';
import type { IndexRun } from './result.ts';

export interface IndexPhaseOptions {
  root: string;
  corpus: string;
  corpusBytes: number;
  /** Index every branch (a git corpus). */
  git: boolean;
  symbols: boolean;
  runs: number;
  work: string;
}

export async function indexPhase(o: IndexPhaseOptions, log: (s: string) => void): Promise<{ runs: IndexRun[]; dataDir: string }> {
  const runs: IndexRun[] = [];
  const dataDir = join(o.work, 'data');
  for (let i = 1; i <= o.runs; i++) {
    rmSync(dataDir, { recursive: true, force: true });
    // The previous build's writes would otherwise slow this one's reads.
    const waited = await settleIo();
    if (waited > 1) log(`index   waited ${waited.toFixed(0)} s for disk I/O to settle`);
    const b = buildTrawl({
      root: o.root,
      corpus: o.corpus,
      totalBytes: o.corpusBytes,
      dataDir,
      tmp: o.work,
      symbols: o.symbols,
      extraArgs: o.git ? ['--branches', '*'] : [],
    });
    runs.push({
      seconds: b.seconds,
      mbPerSecond: b.mbPerSecond,
      peakRssBytes: b.peakRssBytes,
      indexBytes: b.indexBytes,
      contentBytes: b.contentBytes,
      sizeRatio: b.sizeRatio,
      files: b.files,
      skipped: b.skipped,
      shards: b.shards,
      symbolCount: b.symbolCount,
      contentSeconds: b.contentSeconds,
    });
    log(
      `index   run ${i}/${o.runs}: ${b.seconds.toFixed(2)} s${b.contentSeconds !== null && b.contentSeconds < b.seconds ? ` (content searchable after ${b.contentSeconds.toFixed(2)} s)` : ''}, ${b.mbPerSecond.toFixed(1)} MB/s, ${b.files} files, index ${(b.indexBytes / 1e6).toFixed(1)} MB (${b.sizeRatio.toFixed(2)}× content)`,
    );
  }
  return { runs, dataDir };
}
