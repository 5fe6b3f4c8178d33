// What each node holds: for every repository it serves, the generation of its local
// manifest and the shard files that manifest names. Written by the node itself from its
// manifests (after each build or copy), read by every node that fans searches out
// (a shard is asked of a node that holds it at the generation being searched) and by the
// replicators (whether a shard has enough copies for another to drop its own).
//
//   <name>:holds:<id>   hash: repository id → "<generation>|<1: the whole build, 0: a subset>|<file>,<file>,..."
//
// A node's record (membership.ts) carries holdsVersion, changed with every write: readers
// re-read the hash of a node only when it changed.

import type { Redis } from 'ioredis';
import type { LoadedManifest } from '../index/manifest.ts';
import type { ClusterKeys } from './redis-keys.ts';
import type { NodeInfo } from './membership.ts';

export interface Holding {
  generation: number;
  /** Shard files (their names) of that generation's manifest that the node holds. */
  files: string[];
  /** The node holds the whole build (it built it), not a subset. */
  whole: boolean;
}

/** What a node's manifests hold (manifests without shards hold nothing). */
export function holdingsOf(manifests: Iterable<LoadedManifest>): Map<number, Holding> {
  const out = new Map<number, Holding>();
  for (const m of manifests) {
    if (m.version !== 2 || m.shards.length === 0) continue;
    out.set(m.repoId, { generation: m.generation, files: m.shards.map((s) => s.file), whole: m.subset !== true });
  }
  return out;
}

function encode(h: Holding): string {
  return `${h.generation}|${h.whole ? 1 : 0}|${h.files.join(',')}`;
}

function decode(text: string): Holding | undefined {
  const [g, whole, files] = text.split('|');
  const generation = Number(g);
  if (!Number.isSafeInteger(generation) || files === undefined) return undefined;
  return { generation, whole: whole === '1', files: files === '' ? [] : files.split(',') };
}

export class Holdings {
  /** Node id → its holdings, as last read (this node's: as last written). */
  readonly #byNode = new Map<string, Map<number, Holding>>();
  /** Node id → the holdsVersion read with them. */
  readonly #versions = new Map<string, string>();
  /** What this node last wrote, encoded, by repository. */
  #written = new Map<number, string>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly self: string,
  ) {}

  /** Writes this node's holdings (only what changed); true when something did. */
  async write(local: Map<number, Holding>): Promise<boolean> {
    const next = new Map([...local].map(([id, h]) => [id, encode(h)]));
    const set: string[] = [];
    for (const [id, text] of next) if (this.#written.get(id) !== text) set.push(String(id), text);
    const gone = [...this.#written.keys()].filter((id) => !next.has(id)).map(String);
    this.#byNode.set(this.self, local);
    if (set.length === 0 && gone.length === 0) return false;
    const key = this.keys.holds(this.self);
    const tx = this.redis.multi();
    // The first write replaces whatever an earlier life of this node left.
    if (this.#written.size === 0) tx.del(key);
    if (set.length > 0) tx.hset(key, ...set);
    if (gone.length > 0) tx.hdel(key, ...gone);
    await tx.exec();
    this.#written = next;
    return true;
  }

  /**
   * Re-reads the holdings of the nodes whose holdsVersion changed (`all`: of every node: the
   * versions read with the heartbeats may trail a change); forgets nodes no longer listed.
   * True when something was read.
   */
  async refresh(nodes: readonly NodeInfo[], all = false): Promise<boolean> {
    const listed = new Set(nodes.map((n) => n.id));
    for (const id of [...this.#byNode.keys()]) {
      if (!listed.has(id) && id !== this.self) {
        this.#byNode.delete(id);
        this.#versions.delete(id);
      }
    }
    const stale = nodes.filter((n) => n.id !== this.self && (all || this.#versions.get(n.id) !== n.holdsVersion));
    if (stale.length === 0) return false;
    const pipeline = this.redis.pipeline();
    for (const n of stale) pipeline.hgetall(this.keys.holds(n.id));
    const replies = (await pipeline.exec()) ?? [];
    stale.forEach((n, i) => {
      const [err, raw] = replies[i] ?? [new Error('no reply'), undefined];
      if (err) return;
      const held = new Map<number, Holding>();
      for (const [id, text] of Object.entries(raw as Record<string, string>)) {
        const h = decode(text);
        if (h) held.set(Number(id), h);
      }
      this.#byNode.set(n.id, held);
      this.#versions.set(n.id, n.holdsVersion);
    });
    return true;
  }

  /** What `node` holds of the repository, as last read. */
  of(node: string, repoId: number): Holding | undefined {
    return this.#byNode.get(node)?.get(repoId);
  }

  /** Whether `node` holds shard file `file` of the repository at `generation`. */
  holds(node: string, repoId: number, generation: number, file: string): boolean {
    const h = this.of(node, repoId);
    return h !== undefined && h.generation === generation && h.files.includes(file);
  }

  /** The nodes among `among` that hold that shard at that generation. */
  holders(among: readonly string[], repoId: number, generation: number, file: string): string[] {
    return among.filter((n) => this.holds(n, repoId, generation, file));
  }
}
