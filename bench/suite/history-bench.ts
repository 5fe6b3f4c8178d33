// The history index measured side by side with git on the same repository, in one run
// (docs/design.md "The history index"):
//
// 1. Build: the tip index of the default branch (with symbols), then the history index of
//    every commit it reaches (with symbols): seconds and bytes on disk of each.
// 2. New commits, one at a time (--commits, 5 by default): a commit added on the default
//    branch, then the tip and the history brought up to date: the history's seconds, each
//    and their median (one alone varies by half on this kind of machine).
// 3. Latency, as the daemon searches (a worker thread for the tips, one for the history),
//    in process: distinct identifiers drawn from the repository, each sent once: at the
//    tip (`IDENT`), and at a random commit of the history (`IDENT rev:COMMIT`, each with its
//    own identifier and commit). The first search of each kind opens the index (not counted);
//    then a warm-up (--warmup searches, untimed) on identifiers of its own, none of them
//    timed later, brings the process to a running daemon's state: its code compiled by V8,
//    its heap grown to its working size, its caches holding what other searches read.
// 4. The same (identifier, commit) pairs with `git grep -F -l -e IDENT COMMIT`, and with
//    trawl, each once: the ratio of medians. Then as many other pairs the same way, the
//    versions cache emptied before each trawl search (no version read is cached).
// 5. `history:yes IDENT` against `git log --first-parent --no-renames -SIDENT` for some of
//    those identifiers, each once: the ratio of medians, and whether the commits agree.
//
// Usage: trawl bench history --repo PATH [--queries 100] [--pairs 30] [--spans 10]
//        [--commits 5] [--warmup 2000] [--seed 1] [--out bench/results/NAME]
// PATH is a git repository (it is cloned first: the bench commits into its clone). git in
// phases 4 to 6 runs through the spawner, as the daemon runs it (peerGit says why).
// Writes NAME.json and NAME.md. Run through `trawl`, the bench is the compiled build's,
// as the daemon runs (its threads start from dist/, not from sources under tsx).

import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { historyBeside, type HistorySearch } from '../../daemon/history/history-search.ts';
import { historyDataDir } from '../../daemon/index/data-dir.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { dropVersions } from '../../daemon/index/version-cache.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { corpusIdentifiers, drawSets } from './identifiers.ts';
import { environment } from './machine.ts';
import { median, quantile } from './percentiles.ts';
import type { Warmup } from './result.ts';
import { seededRandom } from './stats.ts';
import { warmUp } from './warm-up.ts';
import { UsageError } from '../../daemon/cli/usage.ts';
import { spawnSmall, warmSpawner } from '../../daemon/runtime/spawner.ts';
import { INSTALL_ROOT } from '../../daemon/install-root.ts';

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** The history data dir's bytes by what holds them: index shards, their symbols files, commit records, diff records, word counts. */
function historyParts(dir: string): { shards: number; symbols: number; commits: number; diffs: number; words: number } {
  const parts = {
    shards: 0,
    symbols: 0,
    commits: bytesUnder(join(dir, 'commits')),
    diffs: bytesUnder(join(dir, 'diffs')),
    words: bytesUnder(join(dir, 'words')),
  };
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else if (name.endsWith('.symbols')) parts.symbols += s.size;
      else parts.shards += s.size;
    }
  };
  walk(join(dir, 'shards'));
  return parts;
}

/** The result table's row of the history's size against the tip's, by part. */
function sizeRow(ratio: number, parts: ReturnType<typeof historyParts>, tipBytes: number): string {
  return `| history size / tip size | ${ratio.toFixed(1)}× (index ${mb(parts.shards)}, symbols ${mb(parts.symbols)}, commit records ${mb(parts.commits)}, diff records ${mb(parts.diffs)}, word counts ${mb(parts.words)}; the index and its symbols alone: ${((parts.shards + parts.symbols) / tipBytes).toFixed(1)}×) | ≤ 3× |`;
}

function bytesUnder(path: string): number {
  let total = 0;
  for (const name of readdirSync(path)) {
    const p = join(path, name);
    const s = statSync(p);
    total += s.isDirectory() ? bytesUnder(p) : s.size;
  }
  return total;
}

const GIT_BENCH_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28, env: GIT_BENCH_ENV });
}

/**
 * A git command timed as a peer: started through the spawner (runtime/spawner.ts), a small
 * process, never forked from this one. Forking this process (the searchers, their
 * mappings, hundreds of MB) marks its memory copy-on-write, and its next writes fault page
 * by page: the search timed right after a `git` started from here took about twice as long
 * as after one started elsewhere, a cost of the bench's own making that a daemon, which
 * starts git through its spawner too, never pays. The time is git's from the request to
 * its exit, the spawner's pipes included (a fraction of a millisecond).
 */
function peerGit(repo: string, args: string[]): Promise<{ ms: number; stdout: string; code: number | null }> {
  const start = performance.now();
  const child = spawnSmall('git', ['-C', repo, ...args], GIT_BENCH_ENV);
  child.stdin.on('error', () => {});
  child.stdin.end();
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => parts.push(d));
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 4096) err += d.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code: number | null) => {
      const ms = performance.now() - start;
      // 0: found; 1: git grep found nothing; anything else failed.
      if (code !== 0 && code !== 1) reject(new Error(`git ${args.join(' ')} failed (${code}): ${err.trim().split('\n')[0] ?? ''}`));
      else resolve({ ms, stdout: Buffer.concat(parts).toString('utf8'), code });
    });
  });
}

function summary(ms: number[]): { n: number; p50: number; p90: number; p99: number } {
  return { n: ms.length, p50: median(ms), p90: quantile(ms, 0.9), p99: quantile(ms, 0.99) };
}

const request = (query: string) => ({ query, matches: 1000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });

type Service = Pick<HistorySearch, 'search'>;

/**
 * The warm-up before the timed searches: at least this many, for at least this long. A
 * process fresh from opening its indexes answers its first thousand or so searches slower
 * than it answers later ones (V8 still compiling the search's code, the heap's young
 * generation still growing into new pages), which a running daemon is past.
 */
const WARMUP: Warmup = { runs: 2000, ms: 3000 };
/** Identifiers the warm-up takes its searches from, each at the tip and then at a commit, over again. */
const WARMUP_IDENTIFIERS = 200;

/**
 * Searches `identifiers` untimed until `w` is met: each at the tip, then at a random commit
 * (a generator of its own: the timed searches' commits are those of a run without it).
 */
async function warmUpHistory(service: Service, identifiers: ReadonlyArray<{ name: string }>, commits: readonly string[], w: Warmup, seed: number) {
  if (identifiers.length === 0) return { searches: 0, ms: 0 };
  const random = seededRandom(seed + 2);
  let searches = 0;
  const ms = await warmUp(w, async () => {
    const ident = identifiers[(searches >> 1) % identifiers.length]!.name;
    const query = searches % 2 === 0 ? ident : `${ident} rev:${commits[Math.floor(random() * commits.length)]!}`;
    searches++;
    await service.search(request(query));
  });
  return { searches, ms: Math.round(ms) };
}

/** `git grep -F -l` and trawl's `IDENT rev:COMMIT` on the same pairs, each once; files trawl found that git grep did not. */
async function gitGrepPhase(repo: string, service: Service, pairList: Array<{ ident: string; commit: string }>, beforeEach?: () => void) {
  const gitMs: number[] = [];
  const trawlMs: number[] = [];
  // The process's CPU time per search beside its wall time: steadier than the wall time on
  // a shared machine, where other tenants' load moves the latter from run to run. (It counts
  // every thread of the process: the history's worker, when a search uses it, and V8's.)
  const trawlCpuMs: number[] = [];
  let disagreements = 0;
  for (const { ident, commit } of pairList) {
    const grepped = await peerGit(repo, ['grep', '-F', '-I', '-l', '-e', ident, commit]);
    gitMs.push(grepped.ms);
    const grep = grepped.stdout;
    beforeEach?.();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await service.search({ ...request(ident), matches: 100_000, query: `${ident} rev:${commit}` });
    trawlMs.push(performance.now() - t0);
    const cpu = process.cpuUsage(c0);
    trawlCpuMs.push((cpu.user + cpu.system) / 1000);
    const gitFiles = grep
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.slice(commit.length + 1));
    // git grep reads files trawl leaves out (over the size limit, too many trigrams): counted, not fatal.
    if (r.files.some((f) => !gitFiles.includes(f.fileName.text))) disagreements++;
  }
  return { gitMs, trawlMs, trawlCpuMs, disagreements };
}

/** Phase 3: each identifier of `tip` at the tip, and each of `rev` at a commit of `pickCommit`, in turn, each once. */
async function latencyPhase(
  timed: (query: string) => Promise<{ ms: number; files: number }>,
  tip: ReadonlyArray<{ name: string }>,
  rev: ReadonlyArray<{ name: string }>,
  pickCommit: () => string,
) {
  const out = { tipMs: [] as number[], revMs: [] as number[], tipFiles: 0, revFiles: 0 };
  for (let i = 0; i < Math.min(tip.length, rev.length); i++) {
    const a = await timed(tip[i]!.name);
    out.tipMs.push(a.ms);
    out.tipFiles += a.files;
    const b = await timed(`${rev[i]!.name} rev:${pickCommit()}`);
    out.revMs.push(b.ms);
    out.revFiles += b.files;
  }
  return out;
}

/**
 * Phase 4 again on other pairs (their identifiers drawn after the warm-up's, their commits
 * from a generator of their own), the asking thread's versions cache emptied before each
 * search: every version a search reads is rebuilt from its chain, as when no search before
 * it read one near it. (The history's worker, which searches when a commit's candidates
 * are many, keeps its cache.)
 */
async function uncachedPhase(repo: string, service: Service, idents: ReadonlyArray<{ name: string }>, commits: readonly string[], seed: number) {
  const random = seededRandom(seed + 3);
  const pairList = idents.map((p) => ({ ident: p.name, commit: commits[Math.floor(random() * commits.length)]! }));
  const { gitMs, trawlMs, disagreements } = await gitGrepPhase(repo, service, pairList, dropVersions);
  return { pairs: pairList.length, git: summary(gitMs), trawl: summary(trawlMs), ratio: median(gitMs) / median(trawlMs), filesOnlyTrawlFound: disagreements };
}

/**
 * A search whose results name commits (`type:diff IDENT`, `type:commit WORD`: each result's
 * `commit.id`) against the git command that lists the same commits, each once: the times,
 * and how many queries' commits differ.
 */
async function commitsPhase(repo: string, service: Service, cases: Array<{ query: string; git: string[] }>) {
  const trawlMs: number[] = [];
  const gitMs: number[] = [];
  let differences = 0;
  for (const c of cases) {
    const t0 = performance.now();
    const r = await service.search({ ...request(c.query), matches: 1_000_000 });
    trawlMs.push(performance.now() - t0);
    const peer = await peerGit(repo, c.git);
    gitMs.push(peer.ms);
    const theirs = peer.stdout
      .trim()
      .split('\n')
      .filter((l) => l !== '');
    const ours = new Set(r.files.map((f) => (f as { commit?: { id: string } }).commit?.id).filter((id) => id !== undefined));
    if (ours.size !== new Set(theirs).size || theirs.some((id) => !ours.has(id))) differences++;
  }
  return { trawl: summary(trawlMs), git: summary(gitMs), ratio: median(gitMs) / median(trawlMs), differences, queries: cases.length };
}

/** `history:yes IDENT` and `git log --first-parent --no-renames -SIDENT`, each once; identifiers whose commits differ. */
async function spansPhase(repo: string, service: Service, idents: readonly string[]) {
  const spanMs: number[] = [];
  const pickaxeMs: number[] = [];
  let spanDifferences = 0;
  for (const ident of idents) {
    const t0 = performance.now();
    const r = await service.search({ ...request(`history:yes ${ident}`), matches: 1_000_000 });
    spanMs.push(performance.now() - t0);
    const peer = await peerGit(repo, ['log', '--first-parent', '--no-renames', `-S${ident}`, '--format=%H', 'HEAD']);
    pickaxeMs.push(peer.ms);
    const theirs = peer.stdout
      .trim()
      .split('\n')
      .filter((l) => l !== '');
    const ours = new Set(r.files.flatMap((f) => f.history?.changes.map((c) => c.id) ?? []));
    if (ours.size !== theirs.length || theirs.some((c) => !ours.has(c))) spanDifferences++;
  }
  return { spanMs, pickaxeMs, spanDifferences };
}

/** Adds `n` commits to `repo` one at a time, each then indexed (tip, then history): the history's seconds of each. */
async function addCommits(repo: string, data: string, n: number, log: (line: string) => void): Promise<number[]> {
  const seconds: number[] = [];
  for (let i = 0; i < n; i++) {
    appendFileSync(join(repo, 'README.md'), `\nhistory_bench_probe_line_${i}\n`);
    git(repo, '-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-am', `bench probe ${i}`);
    const tip = await indexLocal(repo, { dataDir: data, symbols: true });
    const t = performance.now();
    const added = await indexLocalHistory(tip, { dataDir: data, symbols: true });
    seconds.push((performance.now() - t) / 1000);
    log(`new commit ${i + 1}: history ${seconds[i]!.toFixed(2)} s (${added === 'unchanged' ? 'unchanged' : added.mode})`);
  }
  return seconds;
}

/** The command line (the usage at the top). */
function commandLine(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      repo: { type: 'string' },
      queries: { type: 'string' },
      pairs: { type: 'string' },
      spans: { type: 'string' },
      commits: { type: 'string' },
      warmup: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
    },
  });
  if (values.repo === undefined) throw new UsageError('bench history needs --repo PATH (a git repository)');
  const newCommits = Number(values.commits ?? 5);
  if (!Number.isSafeInteger(newCommits) || newCommits < 1 || newCommits > 8)
    throw new UsageError('bench history --commits takes 1 to 8 (more delta shards than that rebuild the history)');
  const warmupRuns = Number(values.warmup ?? WARMUP.runs);
  if (!Number.isSafeInteger(warmupRuns) || warmupRuns < 0) throw new UsageError('bench history --warmup takes a number of searches (0 or more)');
  const warmup: Warmup = warmupRuns === 0 ? { runs: 0, ms: 0 } : { runs: warmupRuns, ms: WARMUP.ms };
  return {
    repo: values.repo,
    out: values.out,
    queries: Number(values.queries ?? 100),
    pairs: Number(values.pairs ?? 30),
    spanCount: Number(values.spans ?? 10),
    newCommits,
    warmup,
    seed: Number(values.seed ?? 1),
  };
}

/** `trawl bench history`: the report to stdout, progress to stderr; 0 when it ran. */
export async function historyBench(argv: string[]): Promise<number> {
  const values = commandLine(argv);
  const { queries, pairs, spanCount, newCommits, warmup, seed } = values;
  const work = mkdtempSync(join(tmpdir(), 'trawl-history-bench-'));
  try {
    const repo = join(work, basename(resolve(values.repo)));
    git(work, 'clone', '-q', resolve(values.repo), repo);
    const data = join(work, 'data');
    const log = (line: string) => process.stderr.write(`${line}\n`);

    // 1. Build.
    const tip = await indexLocal(repo, { dataDir: data, symbols: true });
    const tipBytes = bytesUnder(join(data, 'shards'));
    const built = await indexLocalHistory(tip, { dataDir: data, symbols: true });
    if (built === 'unchanged') throw new Error('the history was already built');
    const historyBytes = bytesUnder(historyDataDir(data));
    const parts = historyParts(historyDataDir(data));
    log(`build: tip ${tip.seconds.toFixed(1)} s ${tipBytes} B; history ${built.commits} commits ${built.seconds.toFixed(1)} s ${historyBytes} B`);

    // 2. New commits, one at a time.
    const newCommitsSeconds = await addCommits(repo, data, newCommits, log);
    const newCommitSeconds = median(newCommitsSeconds);

    // 3. Latency.
    const commits = git(repo, 'rev-list', 'HEAD').trim().split('\n');
    const random = seededRandom(seed);
    const pickCommit = () => commits[Math.floor(random() * commits.length)]!;
    const idents = corpusIdentifiers(repo);
    const words = [...new Set(git(repo, 'log', '--format=%s', 'HEAD').match(/\b[a-z]{5,12}\b/g) ?? [])];
    // git from here on runs through the spawner (peerGit), started now: its one fork of
    // this process is paid by the first searches, which are not counted.
    warmSpawner();
    // (The warm-up's set is drawn last: the timed sets are those of a run without it.)
    const drawn = drawSets(
      idents,
      { tip: { count: queries }, rev: { count: queries }, pairs: { count: pairs }, warmup: { count: WARMUP_IDENTIFIERS }, uncached: { count: pairs } },
      seed,
    );
    const live = new Searcher({ dataDir: data, workers: 1 });
    const service = historyBeside(live, { dataDir: data });
    const timed = async (query: string): Promise<{ ms: number; files: number }> => {
      const s = performance.now();
      const r = await service.search(request(query));
      return { ms: performance.now() - s, files: r.files.length };
    };
    const first = { tip: (await timed(idents[0]!.name)).ms, rev: (await timed(`${idents[1]!.name} rev:${pickCommit()}`)).ms };
    const warmed = await warmUpHistory(service, drawn.warmup, commits, warmup, seed);
    log(`warm-up: ${warmed.searches} searches, ${warmed.ms} ms`);
    const { tipMs, revMs, tipFiles, revFiles } = await latencyPhase(timed, drawn.tip, drawn.rev, pickCommit);
    // 4. git grep on the same pairs; 5. history:yes against git log -S.
    const pairList = drawn.pairs.map((p) => ({ ident: p.name, commit: pickCommit() }));
    const grep = await gitGrepPhase(repo, service, pairList);
    const uncached = await uncachedPhase(repo, service, drawn.uncached, commits, seed);
    const spanIdents = drawn.pairs.slice(0, Math.min(spanCount, drawn.pairs.length)).map((p) => p.name);
    const spans = await spansPhase(repo, service, spanIdents);
    const { gitMs, trawlMs, trawlCpuMs, disagreements } = grep;
    const { spanMs, pickaxeMs, spanDifferences } = spans;
    // 6. type:diff against git log -G, type:commit against git log --grep, on the same identifiers and on words of the messages.
    const escapeRegex = (t: string) => t.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
    const diffs = await commitsPhase(
      repo,
      service,
      spanIdents.map((id) => ({ query: `type:diff case:yes ${id}`, git: ['log', `-G${escapeRegex(id)}`, '--format=%H', 'HEAD'] })),
    );
    const pickWord = seededRandom(seed + 1);
    const messageWords = Array.from({ length: Math.min(spanCount, words.length) }, () => words[Math.floor(pickWord() * words.length)]!);
    const messages = await commitsPhase(
      repo,
      service,
      messageWords.map((w) => ({ query: `type:commit case:yes ${w}`, git: ['log', '-F', `--grep=${w}`, '--format=%H', 'HEAD'] })),
    );
    await service.close();
    await live.close();

    const result = {
      environment: environment(INSTALL_ROOT),
      repository: basename(resolve(values.repo)),
      commits: built.commits,
      build: {
        tipSeconds: tip.seconds,
        tipBytes,
        historySeconds: built.seconds,
        historyBytes,
        historyFileVersions: built.files,
        historyContentBytes: built.contentBytes,
        sizeRatio: historyBytes / tipBytes,
        historyParts: parts,
      },
      newCommitSeconds,
      newCommitsSeconds,
      latency: {
        firstSearchMs: first,
        warmup: warmed,
        tip: summary(tipMs),
        rev: summary(revMs),
        ratioRevToTip: median(revMs) / median(tipMs),
        files: { tip: tipFiles, rev: revFiles },
      },
      diffs,
      messages,
      spans: {
        identifiers: spanIdents.length,
        trawl: summary(spanMs),
        gitLogS: summary(pickaxeMs),
        ratio: median(pickaxeMs) / median(spanMs),
        differences: spanDifferences,
      },
      gitGrep: {
        pairs: pairList.length,
        git: summary(gitMs),
        trawl: summary(trawlMs),
        trawlCpu: summary(trawlCpuMs),
        ratio: median(gitMs) / median(trawlMs),
        filesOnlyTrawlFound: disagreements,
        uncached,
      },
    };
    const md = [
      `# History index: ${result.repository}`,
      '',
      `${result.environment.machine.cpuModel}, ${result.environment.machine.cores} cores; Node ${result.environment.node}; trawl ${result.environment.gitCommit}; ${git(repo, '--version').trim()}.`,
      '',
      '| measure | value | target |',
      '|---|---|---|',
      `| commits in the history | ${built.commits} | |`,
      `| tip index (default branch, with symbols) | ${tip.seconds.toFixed(1)} s, ${(tipBytes / 1e6).toFixed(1)} MB | |`,
      `| history index (with symbols) | ${built.seconds.toFixed(1)} s, ${(historyBytes / 1e6).toFixed(1)} MB (${built.files} file versions, ${(built.contentBytes / 1e6).toFixed(1)} MB of content) | ≤ 30 s |`,
      sizeRow(result.build.sizeRatio, parts, tipBytes),
      `| one new commit indexed (history), median of ${newCommits} one after another (each) | ${newCommitSeconds.toFixed(2)} s (${newCommitsSeconds.map((x) => x.toFixed(2)).join(', ')}) | ≤ 1 s |`,
      `| identifier at the tip, p50 / p90 / p99 (${queries} distinct, each once) | ${result.latency.tip.p50.toFixed(2)} / ${result.latency.tip.p90.toFixed(2)} / ${result.latency.tip.p99.toFixed(2)} ms | |`,
      `| identifier at a random commit (\`rev:\`), p50 / p90 / p99 (${queries} distinct) | ${result.latency.rev.p50.toFixed(2)} / ${result.latency.rev.p90.toFixed(2)} / ${result.latency.rev.p99.toFixed(2)} ms | |`,
      `| rev: p50 / tip p50 | ${result.latency.ratioRevToTip.toFixed(2)}× | ≤ 2× |`,
      `| first search (opens the index): tip / rev: | ${first.tip.toFixed(1)} / ${first.rev.toFixed(1)} ms | |`,
      `| \`git grep -F -l IDENT COMMIT\` p50 vs trawl \`IDENT rev:COMMIT\` p50 (${pairList.length} pairs, each once) | ${result.gitGrep.git.p50.toFixed(1)} ms vs ${result.gitGrep.trawl.p50.toFixed(2)} ms: ${result.gitGrep.ratio.toFixed(0)}× | ≥ 50× |`,
      `| the same \`rev:\` searches: the process's CPU time per search, p50 / p90 | ${result.gitGrep.trawlCpu.p50.toFixed(2)} / ${result.gitGrep.trawlCpu.p90.toFixed(2)} ms | |`,
      `| the same on ${uncached.pairs} other pairs, the versions cache emptied before each search | ${uncached.git.p50.toFixed(1)} ms vs ${uncached.trawl.p50.toFixed(2)} ms: ${uncached.ratio.toFixed(0)}× | |`,
      `| \`type:diff IDENT\` p50 vs \`git log -GIDENT\` p50 (${diffs.queries} identifiers, each once) | ${diffs.trawl.p50.toFixed(1)} ms vs ${diffs.git.p50.toFixed(1)} ms: ${diffs.ratio.toFixed(0)}×; queries whose commits differ: ${diffs.differences} | ≥ 100×, 0 |`,
      `| \`type:commit WORD\` p50 vs \`git log -F --grep=WORD\` p50 (${messages.queries} words, each once) | ${messages.trawl.p50.toFixed(1)} ms vs ${messages.git.p50.toFixed(1)} ms: ${messages.ratio.toFixed(0)}×; queries whose commits differ: ${messages.differences} | |`,
      `| \`history:yes IDENT\` p50 vs \`git log --first-parent --no-renames -SIDENT\` p50 (${spanIdents.length} identifiers, each once) | ${result.spans.trawl.p50.toFixed(1)} ms vs ${result.spans.gitLogS.p50.toFixed(1)} ms: ${result.spans.ratio.toFixed(0)}×; identifiers whose commits differ: ${spanDifferences} | ≥ 100×, 0 |`,
      '',
      `Latency is in process (the searchers the daemon runs: one worker thread for the tips, one for the history), without HTTP, after a warm-up of ${warmed.searches} untimed searches (${warmed.ms} ms; at the tip and at random commits, in turn, of ${drawn.warmup.length} identifiers none of the timed searches uses). Pairs where trawl found a file git grep did not: ${disagreements + uncached.filesOnlyTrawlFound}.`,
      '',
    ].join('\n');
    if (values.out) {
      mkdirSync(dirname(values.out), { recursive: true });
      writeFileSync(`${values.out}.json`, `${JSON.stringify(result, null, 2)}\n`);
      writeFileSync(`${values.out}.md`, md);
    }
    process.stdout.write(md);
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
