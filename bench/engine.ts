// The engine benchmark: index builds (trawl content only and with symbols, vs cindex),
// query latency (trawl in process vs csearch and rg) on one corpus, written as JSON and as
// a Markdown table.
//   node --import tsx bench/engine.ts --corpus DIR [--queries FILE] [--out FILE]
//     [--markdown FILE] [--baseline FILE] [--iterations N] [--runs N] [--peer-timeout S]
//     [--no-peers] [--quick] [--keep]
// See bench/README.md for what each number means.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildCindex, buildTrawl, type CindexBuild } from './build.ts';
import { corpusIdentity } from './corpus.ts';
import { measureTrawl, MATCH_LIMIT } from './latency.ts';
import { cpuMark, environment, foreignCores, ioStallMicros, settleIo } from './machine.ts';
import { measurePeer, peerCommand, type PeerResults } from './peers.ts';
import { loadQueries } from './queries.ts';
import { compare, comparisonMarkdown, markdown, summarize, type Comparison, type EarlierResult } from './report.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const log = (s: string) => process.stderr.write(`${s}\n`);

function positive(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} must be a positive integer, got "${v}"`);
  return n;
}

function localDate(d = new Date()): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string' },
      queries: { type: 'string', default: join(ROOT, 'bench/queries/linux.json') },
      out: { type: 'string' },
      markdown: { type: 'string' },
      baseline: { type: 'string' },
      iterations: { type: 'string' },
      runs: { type: 'string' },
      'peer-timeout': { type: 'string' },
      'no-peers': { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
  });
  if (!values.corpus) throw new Error('--corpus DIR is required (e.g. --corpus corpus/linux-6.1, from scripts/fetch-linux.sh)');
  const corpus = resolve(values.corpus);
  if (!statSync(corpus).isDirectory()) throw new Error(`--corpus ${corpus}: not a directory`);
  const iterations = positive('--iterations', values.iterations, values.quick ? 5 : 30);
  const peerRuns = positive('--runs', values.runs, values.quick ? 1 : 3);
  const peerTimeoutMs = positive('--peer-timeout', values['peer-timeout'], 300) * 1000;
  const withPeers = !values['no-peers'];
  const queries = loadQueries(values.queries);
  // Read first, so that a wrong path fails before the long run.
  const baseline = values.baseline ? { file: resolve(values.baseline), data: JSON.parse(readFileSync(resolve(values.baseline), 'utf8')) as EarlierResult } : null;
  const date = localDate();
  const startedAt = new Date().toISOString();

  const env = environment(ROOT);
  // Other processes on the machine skew every figure: the CPU they used during each phase
  // is kept, so that a contended run can be recognised. So is the share of the phase's wall
  // time during which some task (this run's included) waited for I/O (Linux PSI).
  const contention: Record<string, number | null> = {};
  const ioPressure: Record<string, number | null> = {};
  let mark = cpuMark();
  let ioMark = ioStallMicros();
  let wallMark = performance.now();
  const phaseStart = () => {
    mark = cpuMark();
    ioMark = ioStallMicros();
    wallMark = performance.now();
  };
  const phaseDone = (phase: string) => {
    const now = cpuMark();
    const io = ioStallMicros();
    contention[phase] = foreignCores(mark, now);
    ioPressure[phase] = io === null || ioMark === null ? null : (io - ioMark) / 1000 / (performance.now() - wallMark);
    mark = now;
    ioMark = io;
    wallMark = performance.now();
  };
  // Each build writes an index; the next phase starts once the disk is quiet again.
  const settle = async () => {
    const waited = await settleIo();
    if (waited >= 1) log(`(waited ${waited.toFixed(0)} s for the disk to go quiet)`);
    phaseStart();
  };
  log(`machine: ${env.machine.cpuModel}, ${env.machine.cores} cores; node ${env.node}; trawl ${env.trawlVersion} (${env.gitCommit})`);
  log(`corpus: hashing ${corpus} …`);
  const identity = corpusIdentity(corpus);
  phaseDone('corpusHash');
  log(`corpus: ${identity.files} files, ${identity.totalBytes} bytes, sha256 ${identity.sha256} (${identity.seconds.toFixed(1)} s; the page cache is now warm for the builds)`);

  const tmp = mkdtempSync(join(tmpdir(), 'trawl-bench-'));
  try {
    // Content only first (what cindex does, and what the build target compares), then
    // cindex, then the default build with symbols, which the queries run on.
    await settle();
    log('build: trawl index --no-symbols …');
    const content = buildTrawl(ROOT, corpus, identity.totalBytes, join(tmp, 'data-content'), tmp, false);
    phaseDone('trawlBuildContent');
    log(`build: trawl --no-symbols ${content.seconds.toFixed(1)} s, ${content.files} files, ${content.contentBytes} content bytes, index ${content.indexBytes} bytes (${content.sizeRatio.toFixed(2)}×)`);
    let cindex: CindexBuild | null = null;
    if (withPeers) {
      await settle();
      log('build: cindex …');
      cindex = buildCindex(corpus, identity.totalBytes, join(tmp, 'csindex'), tmp);
      phaseDone('cindexBuild');
      log(cindex ? `build: cindex ${cindex.seconds.toFixed(1)} s, index ${cindex.indexBytes} bytes` : 'build: cindex not installed, skipped');
    }
    await settle();
    log('build: trawl index (with symbols) …');
    const symbols = buildTrawl(ROOT, corpus, identity.totalBytes, join(tmp, 'data'), tmp, true);
    phaseDone('trawlBuildSymbols');
    log(`build: trawl with symbols ${symbols.seconds.toFixed(1)} s, ${symbols.symbolCount ?? '?'} symbols, index ${symbols.indexBytes} bytes (${symbols.sizeRatio.toFixed(2)}×)`);
    const builds = { content, symbols };

    await settle();
    log(`queries: ${queries.length} from ${values.queries}, ${iterations} timed runs each`);
    const { queries: trawl, coldStartMs, warmupPassMs } = await measureTrawl(join(tmp, 'data'), queries, iterations, log);
    phaseDone('trawlQueries');
    const peers: PeerResults[] = [];
    if (withPeers) {
      for (const peer of ['csearch', 'rg'] as const) {
        const r = measurePeer(peer, queries, { corpus, csearchIndex: cindex?.indexPath, runs: peerRuns, timeoutMs: peerTimeoutMs }, log);
        if (r.note) log(`${peer}: skipped (${r.note})`);
        peers.push(r);
      }
    }

    if (withPeers) phaseDone('peerQueries');
    log(`contention (cores used by other processes): ${JSON.stringify(contention)}; I/O pressure (share of wall time): ${JSON.stringify(ioPressure)}`);
    const summary = summarize(queries, trawl, builds, cindex, peers);
    const comparison: Comparison | null = baseline ? compare(baseline.file, baseline.data, identity, queries, trawl, peers, builds, cindex) : null;
    const report = {
      benchmark: 'trawl-engine',
      startedAt,
      finishedAt: new Date().toISOString(),
      options: { iterations, peerRuns, peerTimeoutMs, matches: MATCH_LIMIT, peers: withPeers, queriesFile: values.queries, baseline: baseline?.file ?? null },
      environment: env,
      foreignCores: contention,
      ioPressure,
      corpus: identity,
      index: { trawlContentOnly: content, trawl: symbols, cindex },
      searcher: { coldStartMs, warmupPassMs },
      queries: queries.map((q) => ({
        ...q,
        trawl: trawl.find((t) => t.name === q.name),
        peers: Object.fromEntries(peers.filter((p) => p.available).map((p) => [p.peer, p.queries.find((r) => r.name === q.name)])),
      })),
      peers: peers.map((p) => ({ peer: p.peer, available: p.available, note: p.note, example: queries[0] ? peerCommand(p.peer, queries[0], corpus) : [] })),
      summary,
      comparison,
    };
    const out = resolve(values.out ?? join(ROOT, 'bench/results', `${date}-${identity.name}.json`));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(report, null, 2) + '\n');
    log(`wrote ${out}`);
    const md = markdown({ date, env, contention, ioPressure, corpus: identity, builds, cindex, queries, trawl, peers, summary, iterations, peerRuns, coldStartMs }) + (comparison ? comparisonMarkdown(comparison) : '');
    if (values.markdown) {
      writeFileSync(resolve(values.markdown), md);
      log(`wrote ${resolve(values.markdown)}`);
    }
    process.stdout.write(md);
  } finally {
    if (values.keep) log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  log(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
