// The scrub's thread (section-scrub.ts starts it): verifies the sections of one index file
// at a time that are not yet checked in this process, in slices read through a descriptor
// of its own, and yields to searches between slices.

import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Hash32Stream } from '../../core/index.ts';
import { LOWEST_NICE, lowerThisThreadsPriority } from '../runtime/thread-priority.ts';
import { corruptSection, FAILED, PASSED, sectionStates, UNCHECKED, type Section } from './section-checks.ts';
import { ACTIVE_SEARCHES, STARTED_SEARCHES, type ScrubReply, type ScrubRequest } from './section-scrub.ts';
import { SECTION_NAMES, SHARD_FORMAT, SYMBOLS_FORMAT, SectionKind } from './shard-format.ts';
import { checkShardHeader } from './section-file.ts';
import { ShardError } from './shard-error.ts';

/**
 * What the scrub reads between two looks at the searches (in one read, or several for
 * small sections and files): what a search may wait for behind it when it starts
 * meanwhile (reads under way are not stopped).
 */
const SLICE = 256 << 10;
/** The scrub reads on only once no search has run for this long: a client's next search tends to follow its last one closely. */
const QUIET_MS = 50;
/** How often a waiting scrub looks again. */
const POLL_MS = 10;
/** Under searches that never pause, a slice after this long all the same: the scrub ends, slowly. */
const MAX_WAIT_MS = 1000;

lowerThisThreadsPriority(LOWEST_NICE);

const activity = new Int32Array((workerData as { activity: SharedArrayBuffer }).activity);
const buffer = Buffer.allocUnsafe(SLICE);
let lastStarted = Atomics.load(activity, STARTED_SEARCHES);
let lastBusy = performance.now();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Bytes the scrub may still read before it looks at the searches again (a slice's worth after each wait, whatever the files' and sections' sizes). */
let credit = 0;
/** What a file's header and table of contents count for against `credit`. */
const HEADER_COST = 4096;

/** Waits for the searches (yieldToSearches) once the credit is spent, then takes `bytes` of it. */
async function allow(bytes: number): Promise<void> {
  if (credit <= 0) {
    await yieldToSearches();
    credit = SLICE;
  }
  credit -= bytes;
}

/** Waits until searches have left the disk and the cores alone for QUIET_MS (at most MAX_WAIT_MS). */
async function yieldToSearches(): Promise<void> {
  const from = performance.now();
  for (;;) {
    const now = performance.now();
    const started = Atomics.load(activity, STARTED_SEARCHES);
    if (started !== lastStarted || Atomics.load(activity, ACTIVE_SEARCHES) > 0) {
      lastStarted = started;
      lastBusy = now;
    }
    if (now - lastBusy >= QUIET_MS || now - from >= MAX_WAIT_MS) return;
    await sleep(POLL_MS);
  }
}

/** The xxHash32 of bytes [offset, offset + length) of the file, read slice by slice. */
async function hashRange(fd: number, offset: number, length: number): Promise<number> {
  const h = new Hash32Stream();
  for (let done = 0; done < length; ) {
    const want = Math.min(SLICE, length - done);
    await allow(want);
    const got = readSync(fd, buffer, 0, want, offset + done);
    if (got <= 0) throw new Error(`read ended at byte ${offset + done} of ${offset + length}`);
    h.update(buffer.subarray(0, got));
    done += got;
  }
  return h.digest();
}

/** Verifies the file's sections not yet checked; why it cannot be used, or undefined. */
async function scrub(req: ScrubRequest): Promise<string | undefined> {
  const format = req.kind === 'shard' ? SHARD_FORMAT : SYMBOLS_FORMAT;
  let sections: Map<SectionKind, Section>;
  await allow(HEADER_COST);
  try {
    sections = checkShardHeader(req.path, format);
  } catch (err) {
    // Retired and removed since the searcher listed it: nobody reads it any more.
    if (!existsSync(req.path)) return undefined;
    return (err as Error).message;
  }
  const states = sectionStates(req.checks);
  const fd = openSync(req.path, 'r');
  try {
    for (const [kind, s] of [...sections].sort((a, b) => a[1].offset - b[1].offset)) {
      // The content is checked document by document as it is read (shard-reader.ts).
      if (kind === SectionKind.Content) continue;
      const state = Atomics.load(states, kind);
      if (state === FAILED) return new ShardError(req.path, corruptSection(kind), format.what).message;
      if (state === PASSED) continue;
      let hash: number;
      try {
        hash = await hashRange(fd, s.offset, s.length);
      } catch (err) {
        return new ShardError(req.path, `section ${SECTION_NAMES[kind]} cannot be read: ${(err as Error).message}`, format.what).message;
      }
      if (hash !== s.hash) {
        Atomics.store(states, kind, FAILED);
        return new ShardError(req.path, corruptSection(kind), format.what).message;
      }
      Atomics.compareExchange(states, kind, UNCHECKED, PASSED);
    }
  } finally {
    closeSync(fd);
  }
  return undefined;
}

parentPort!.on('message', (req: ScrubRequest) => {
  // (Another failure, such as the file gone between its header and its opening, leaves it
  // unverified rather than reporting damage nobody has seen.)
  void scrub(req)
    .catch(() => undefined)
    .then((damage) => parentPort!.postMessage({ path: req.path, ...(damage === undefined ? {} : { damage }) } satisfies ScrubReply));
});
