// Answers that cost a walk of a whole repository (POST /api/files, POST /api/tree,
// GET /api/folder_contents), kept as the JSON bytes sent, per repository, index generation
// and what was asked (the resolved commit id, the paths): the same question at the same
// commit has the same answer, so it is built once, in time slices, and every later request
// is a write of bytes made before. Requests that ask at once share one build; at most
// MAX_BUILDS builds run at a time (each holds its repository's whole list while it runs).
//
// Bounded by bytes, least recently used first out. A repository's answers of an older
// index generation go when a newer one is asked about (a re-indexed directory has new
// files; a git repository's source may have moved). An answer larger than the whole bound
// is sent but not kept.

import { RawJson } from './respond.ts';

/** What a build makes: the answer's JSON, and the value it was made from when a caller in process (the tool server) reads it. */
export interface BuiltAnswer {
  bytes: Buffer;
  value?: unknown;
}

export interface AnswerScope {
  repoId: number;
  generation: number;
}

/** The bound of a daemon's kept answers (docs/operations.md). */
export const ANSWER_CACHE_BYTES = 128 * 1024 * 1024;

/** Builds running at once; the others wait their turn. */
const MAX_BUILDS = 2;

/** A value kept beside its JSON (a list of file entries) takes more of V8's heap than the JSON's bytes: counted as twice them. */
const VALUE_COST = 2;

interface Entry {
  repoId: number;
  generation: number;
  bytes: Buffer;
  value: unknown;
  cost: number;
}

interface Build {
  promise: Promise<BuiltAnswer>;
  /** Requests waiting for it; a build that nobody waits for any more when its turn comes is not run. */
  waiters: number;
}

export class AnswerCache {
  /** By key; a Map iterates in insertion order, so re-inserting on use keeps the least recently used first. */
  private readonly entries = new Map<string, Entry>();
  private readonly building = new Map<string, Build>();
  /** The newest index generation asked about, by repository. */
  private readonly newest = new Map<number, number>();
  private held = 0;
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(readonly maxBytes: number) {}

  /** The bytes the kept answers count for (at most maxBytes). */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * The answer to `question` about the repository at `scope`: kept, being built for another
   * request, or built now by `build`. A caller whose `signal` fires stops waiting (with the
   * signal's reason); the build goes on for the others, and is kept.
   */
  async answer(scope: AnswerScope, question: string, build: () => Promise<BuiltAnswer>, signal?: AbortSignal): Promise<RawJson> {
    this.noteGeneration(scope);
    const key = `${scope.repoId}:${scope.generation}:${question}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return new RawJson(hit.bytes, hit.value);
    }
    let job = this.building.get(key);
    if (!job) job = this.start(key, scope, build);
    job.waiters++;
    try {
      const built = await untilAborted(job.promise, signal);
      return new RawJson(built.bytes, built.value);
    } finally {
      job.waiters--;
    }
  }

  private start(key: string, scope: AnswerScope, build: () => Promise<BuiltAnswer>): Build {
    const job: Build = { waiters: 0, promise: Promise.resolve({ bytes: Buffer.alloc(0) }) };
    job.promise = (async () => {
      await this.turn();
      try {
        if (job.waiters === 0) throw new Error('no request waits for this answer any more');
        const built = await build();
        this.keep(key, scope, built);
        return built;
      } finally {
        this.building.delete(key);
        this.release();
      }
    })();
    // Its waiters see a failure; one that nobody waits for any more is not an error.
    job.promise.catch(() => undefined);
    this.building.set(key, job);
    return job;
  }

  private keep(key: string, scope: AnswerScope, built: BuiltAnswer): void {
    // Asked about a newer generation while this one was built: the answer is stale already.
    if (this.newest.get(scope.repoId) !== scope.generation) return;
    const cost = built.bytes.byteLength * (built.value === undefined ? 1 : 1 + VALUE_COST) + key.length;
    if (cost > this.maxBytes) return;
    this.entries.set(key, { repoId: scope.repoId, generation: scope.generation, bytes: built.bytes, value: built.value, cost });
    this.held += cost;
    for (const [k, e] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.drop(k, e);
    }
  }

  /** A newer generation of a repository drops the answers of the older ones. */
  private noteGeneration(scope: AnswerScope): void {
    const known = this.newest.get(scope.repoId);
    if (known !== undefined && known >= scope.generation) return;
    this.newest.set(scope.repoId, scope.generation);
    if (known === undefined) return;
    for (const [k, e] of this.entries) if (e.repoId === scope.repoId) this.drop(k, e);
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.held -= e.cost;
  }

  private async turn(): Promise<void> {
    if (this.running >= MAX_BUILDS) await new Promise<void>((go) => this.queue.push(go));
    else this.running++;
  }

  private release(): void {
    // The slot passes straight to the next build waiting, if any.
    const next = this.queue.shift();
    if (next !== undefined) next();
    else this.running--;
  }
}

/** `promise`, or the signal's reason once it fires first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason as Error);
    signal.addEventListener('abort', stop, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', stop);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(err as Error);
      },
    );
  });
}
