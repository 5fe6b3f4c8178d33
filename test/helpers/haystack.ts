// A corpus for searches that take a while and stream a lot: `files` files of `lines` lines,
// each line `needle_<file>_<line>` and 80 x's, so that `needle` matches every line and
// `needle_[0-9]+_7 ` exactly one line of every file, and its index; also the two small readers of the
// daemon's /metrics that tests poll.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';

export function writeHaystack(root: string, files: number, lines: number): void {
  for (let f = 0; f < files; f++) {
    const sub = join(root, `d${f % 20}`);
    mkdirSync(sub, { recursive: true });
    let text = '';
    for (let l = 0; l < lines; l++) text += `needle_${f}_${l} ${'x'.repeat(80)}\n`;
    writeFileSync(join(sub, `f${f}.txt`), text);
  }
}

/**
 * A haystack of `files` files of `lines` lines under `dir`, indexed without symbols in
 * shards of about `shardTargetBytes`: built on the first call (once per test file), its
 * data dir on every call.
 */
export function haystackIndex(dir: string, files: number, lines: number, shardTargetBytes: number): () => Promise<string> {
  let indexed: Promise<string> | undefined;
  return () =>
    (indexed ??= (async () => {
      const corpus = join(dir, 'haystack');
      const dataDir = join(dir, 'data');
      writeHaystack(corpus, files, lines);
      await indexLocal(corpus, { dataDir, symbols: false, shardTargetBytes });
      return dataDir;
    })());
}

/** One sample of a metric without labels (0 when absent). */
export async function metric(url: string, name: string): Promise<number> {
  return (await metrics(url, [name]))[name]!;
}

/** Samples of several metrics without labels, from one scrape (0 when absent). */
export async function metrics(url: string, names: string[]): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const name of names) {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    out[name] = line ? Number(line.split(' ').pop()) : 0;
  }
  return out;
}

/**
 * Polls `check` every 25 ms until it holds; throws after `ms` (by default 30 s: a bound for
 * a loaded machine, not a measure of how soon; a check that holds returns at once).
 */
export async function until(what: string, check: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
