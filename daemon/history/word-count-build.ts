// Builds a repository's word counts (word-counts.ts, the format) from its history index's
// documents, read through the shard reader: a shard's documents in order, so a path's
// versions come one after another and each is rebuilt from the one before with one delta
// (index/stored-versions.ts keeps the last ones). A chain's first version is counted whole;
// each later one only where it differs from the version before: the bytes both share at the
// start and at the end, cut back to whole lines (no word holds a "\n"), hold the same words,
// so the change of every count is the words of the new middle less those of the old; of a
// large middle, those of the lines it does not hold as many times in both (countChanges).
//
// An update (a history that gained a delta shard) reads the file it had and counts the new
// shards' documents alone, appended after the old ones; the result is the file a build from
// scratch of the same shards makes, byte for byte (test/history/word-counts.test.ts). When
// the shards the file covers are not the first ones the manifest names (a full rebuild of
// the index, or no file), it is built from scratch.

import { loadManifest, shardFiles, type Manifest } from '../index/manifest.ts';
import { startTsWorker } from '../runtime/ts-worker.ts';
import { Shard } from '../index/shard-reader.ts';
import {
  emptyModel,
  type Latin1,
  modelOf,
  shardsCounted,
  MIN_WORD,
  OID_BYTES,
  readWordCounts,
  removeWordCounts,
  writeWordCounts,
  type WordCounts,
  type WordCountsModel,
} from './word-counts.ts';

/** What an update did. */
export interface WordCountsSummary {
  /** 'unchanged': the file covered the shards already; 'updated': new shards appended; 'built': from scratch; 'none': no history index. */
  action: 'unchanged' | 'updated' | 'built' | 'none';
  /** Documents counted now. */
  docs: number;
  ms: number;
}

/**
 * Per byte: 1 for the ASCII word bytes [A-Za-z0-9_]; 2 for the first byte of K (E2 84 AA)
 * and of ſ (C5 BF), which are word characters here when the rest follows (word-counts.ts).
 */
const WORD_BYTE = new Uint8Array(256);
for (let b = 0; b < 256; b++) WORD_BYTE[b] = /[A-Za-z0-9_]/.test(String.fromCharCode(b)) ? 1 : 0;
WORD_BYTE[0xe2] = 2;
WORD_BYTE[0xc5] = 2;
const NL = 0x0a;
const ZERO_OID = Buffer.alloc(OID_BYTES);

/** What updateWordCounts is given, as its thread gets it (word-count-thread.ts). */
export interface WordCountsJob {
  historyRoot: string;
  repoId: number;
  path: string;
}

/** The thread's module (started by path: an entry point of the compiled build). */
const THREAD = 'daemon/history/word-count-thread.ts';

/**
 * updateWordCounts in a thread of its own, at the priority of bulk work: what a sync in
 * the daemon calls, so that its event loop goes on serving requests meanwhile.
 */
export function updateWordCountsInThread(job: WordCountsJob): Promise<WordCountsSummary> {
  // A file already current (most syncs) is told here, without a thread.
  const started = performance.now();
  const start = startOf(job.historyRoot, job.repoId, job.path);
  if (start.kind === 'current') return Promise.resolve({ action: 'unchanged', docs: start.docs, ms: performance.now() - started });
  return new Promise((resolve, reject) => {
    const thread = startTsWorker(THREAD, { ...job });
    let answered = false;
    thread.once('message', (m: { summary?: WordCountsSummary; error?: string }) => {
      answered = true;
      if (m.summary !== undefined) resolve(m.summary);
      else reject(new Error(`the word counts of repository ${job.repoId} were not made: ${m.error}`));
    });
    thread.once('error', (err) => {
      answered = true;
      reject(err);
    });
    thread.once('exit', (code) => {
      if (!answered) reject(new Error(`the word counts' thread exited with code ${code} before answering`));
    });
  });
}

/**
 * Brings the word counts at `path` in line with the history index of `repoId` in the
 * history data dir `historyRoot`: appends the new shards' documents, or builds the file from
 * scratch. A history whose manifest cannot be read has its file removed.
 */
export function updateWordCounts(historyRoot: string, repoId: number, path: string): WordCountsSummary {
  const started = performance.now();
  const start = startOf(historyRoot, repoId, path);
  if (start.kind === 'none') {
    removeWordCounts(path);
    return { action: 'none', docs: 0, ms: performance.now() - started };
  }
  if (start.kind === 'current') return { action: 'unchanged', docs: start.docs, ms: performance.now() - started };
  const { m } = start;
  const action = start.old === undefined ? 'built' : 'updated';
  const model = start.old === undefined ? emptyModel() : modelOf(start.old);
  const paths = new Map(model.paths.map((p, i) => [p, i]));
  for (const entry of m.shards.filter((s) => s.docs > 0).slice(model.shards.length)) {
    const files = shardFiles(historyRoot, repoId, entry);
    const shard = Shard.open(files.path);
    try {
      addShard(model, shard, paths);
    } finally {
      shard.releasePages();
    }
    model.shards.push(entry.file);
  }
  writeWordCounts(path, model);
  return { action, docs: model.docPath.length, ms: performance.now() - started };
}

/**
 * Where bringing the word counts up to date starts: no history index (`none`), the file
 * covering its shards already (`current`), or behind it, with the file to append to when
 * it covers the first of them (else built from scratch). The file is read whole, its
 * frame's checksum and structure checked: a damaged body is made again.
 */
function startOf(
  historyRoot: string,
  repoId: number,
  path: string,
): { kind: 'none' } | { kind: 'current'; docs: number } | { kind: 'behind'; m: Manifest; old: WordCounts | undefined } {
  const m = loadManifest(historyRoot, repoId);
  if (m === undefined || 'unreadable' in m || m.version !== 2 || m.shards.some((s) => s.member !== undefined)) return { kind: 'none' };
  const names = shardsCounted(m.shards);
  try {
    const old = readWordCounts(path);
    if (old !== undefined && old.shards.length <= names.length && old.shards.every((s, i) => s === names[i])) {
      return old.shards.length === names.length ? { kind: 'current', docs: old.docs } : { kind: 'behind', m, old };
    }
  } catch {
    // Damaged or of another version: built again.
  }
  return { kind: 'behind', m, old: undefined };
}

/** Appends a shard's documents to the model. */
export function addShard(model: WordCountsModel, shard: Shard, paths: Map<string, number>): void {
  let prevPath: string | undefined;
  let prev: Buffer | undefined;
  for (let d = 0; d < shard.docCount; d++) {
    const path = shard.name(d);
    const content = shard.contentOf(d);
    const doc = model.docPath.length;
    let p = paths.get(path);
    if (p === undefined) {
      p = model.paths.length;
      model.paths.push(path);
      paths.set(path, p);
    }
    const start = path !== prevPath || prev === undefined;
    model.docPath.push(p);
    model.blobs.push(Buffer.from(shard.oid(d) ?? ZERO_OID.toString('hex'), 'hex'));
    model.starts.push(start);
    const changes = new Map<string, number>();
    if (start) countWords(content, 0, content.length, 1, changes);
    else countChanges(prev!, content, changes);
    for (const [word, delta] of changes) {
      if (delta === 0) continue;
      let list = model.words.get(word);
      if (list === undefined) model.words.set(word, (list = { last: -1, docs: [], deltas: [] }));
      list.docs.push(doc);
      list.deltas.push(delta);
    }
    prevPath = path;
    // (The reader's bytes may be a view into its cache or mapping: kept only until the next document.)
    prev = content;
  }
}

/**
 * Adds to `changes` the change of each word's count from `old` to `now`: the words of their
 * differing middles, and of a large middle only those of the lines it does not hold as many
 * times in both (a version edited in several places: 46 of hono's 78 MB are such middles, 7
 * MB such lines).
 */
export function countChanges(old: Buffer, now: Buffer, changes: Map<string, number>): void {
  const max = Math.min(old.length, now.length);
  let p = commonPrefix(old, now, max);
  let s = commonSuffix(old, now, max - p);
  // Back to whole lines: the shared start up to its last "\n", the shared end from its first.
  p = p === 0 ? 0 : old.lastIndexOf(NL, p - 1) + 1;
  if (s > 0) {
    const nl = now.indexOf(NL, now.length - s);
    s = nl === -1 ? 0 : now.length - (nl + 1);
  }
  const was = (old as unknown as Latin1).latin1Slice(p, old.length - s);
  const is = (now as unknown as Latin1).latin1Slice(p, now.length - s);
  if (was.length + is.length < LINE_DIFF_BYTES) {
    countWordsIn(was, -1, changes);
    countWordsIn(is, 1, changes);
    return;
  }
  // Whole lines (the middles start at a line's start and end at one's end): a line as many
  // times in both holds the same words.
  const lines = new Map<string, number>();
  for (const line of was.split('\n')) lines.set(line, (lines.get(line) ?? 0) - 1);
  for (const line of is.split('\n')) lines.set(line, (lines.get(line) ?? 0) + 1);
  for (const [line, n] of lines) if (n !== 0) countWordsIn(line, n, changes);
}

/** Middles shorter than this (both together) are counted whole: their lines would cost more. */
const LINE_DIFF_BYTES = 4096;

/** Bytes `a` and `b` share at their start, at most `max`: compared 256 at a time natively, then byte by byte. */
function commonPrefix(a: Buffer, b: Buffer, max: number): number {
  const STEP = 256;
  let i = 0;
  while (i + STEP <= max && a.compare(b, i, i + STEP, i, i + STEP) === 0) i += STEP;
  while (i < max && a[i] === b[i]) i++;
  return i;
}

/** Bytes `a` and `b` share at their end, at most `max`. */
function commonSuffix(a: Buffer, b: Buffer, max: number): number {
  const STEP = 256;
  const al = a.length;
  const bl = b.length;
  let i = 0;
  while (i + STEP <= max && a.compare(b, bl - i - STEP, bl - i, al - i - STEP, al - i) === 0) i += STEP;
  while (i < max && a[al - 1 - i] === b[bl - 1 - i]) i++;
  return i;
}

/** Adds `sign` to the count of each word of at least MIN_WORD bytes in buf[from, to) (from and to at word boundaries). */
export function countWords(buf: Buffer, from: number, to: number, sign: number, counts: Map<string, number>): void {
  countWordsIn((buf as unknown as Latin1).latin1Slice(from, to), sign, counts);
}

/** countWords over bytes as a latin1 string (a character per byte). */
function countWordsIn(text: string, sign: number, counts: Map<string, number>): void {
  const to = text.length;
  let i = 0;
  while (i < to) {
    // (ASCII decided by the table alone: the sequences are looked at only at their first byte.)
    for (let k = WORD_BYTE[text.charCodeAt(i)]!; i < to && (k === 0 || (k === 2 && wordChar(text, i) === 0)); k = WORD_BYTE[text.charCodeAt(i)]!) i++;
    const start = i;
    while (i < to) {
      const k = WORD_BYTE[text.charCodeAt(i)]!;
      if (k === 1) i++;
      else if (k === 2 && wordChar(text, i) > 0) i += wordChar(text, i);
      else break;
    }
    if (i - start >= MIN_WORD) {
      const word = text.slice(start, i);
      counts.set(word, (counts.get(word) ?? 0) + sign);
    }
  }
}

/** The bytes of the word character at text[i]: 1 for an ASCII word byte, 3 for K, 2 for ſ; 0 when none starts there. */
function wordChar(text: string, i: number): number {
  const c = text.charCodeAt(i);
  const kind = c < 256 ? WORD_BYTE[c]! : 0;
  if (kind !== 2) return kind;
  if (c === 0xe2) return text.charCodeAt(i + 1) === 0x84 && text.charCodeAt(i + 2) === 0xaa ? 3 : 0;
  return text.charCodeAt(i + 1) === 0xbf ? 2 : 0;
}
