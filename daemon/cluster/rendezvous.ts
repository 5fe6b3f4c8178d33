// Rendezvous (highest random weight) hashing: which nodes hold a shard. Every node scores
// every (node, shard) pair with the same hash and a shard goes to the `replicas` nodes with
// the highest scores. Each node computes this alone from the list of live nodes, with no
// coordination, and all agree. When a node leaves, only its shards move (each to the node
// that scored next for it); when one joins, it takes from each other node a fair share.
//
// The score mixes a 32-bit hash of the shard's key with one of the node's id (FNV-1a over
// UTF-16 units, then the 32-bit finaliser of MurmurHash3 on their combination): a
// placement of 80k repositories × 10 shards over 5 nodes is ~4M scores, which this does in
// well under a second, where a cryptographic hash per pair would take seconds. Ties (equal
// scores, ~1 in 4 billion) go to the smaller node id, so the order is total.

/** FNV-1a, 32-bit, over the string's UTF-16 code units. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's finaliser: every input bit reaches every output bit. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The score of `node` (hash32 of its id) for a shard (hash32 of its key). */
export function score(shardHash: number, nodeHash: number): number {
  return mix((shardHash ^ mix(nodeHash + 0x9e3779b9)) >>> 0);
}

/** Nodes, each with its id's hash computed once. */
export interface Candidates {
  ids: readonly string[];
  hashes: Uint32Array;
}

export function candidates(nodeIds: Iterable<string>): Candidates {
  const ids = [...new Set(nodeIds)].sort();
  return { ids, hashes: Uint32Array.from(ids, hash32) };
}

/**
 * The `replicas` nodes that hold the shard keyed `key`, best first (all of them when there
 * are fewer). The first is the shard's primary.
 */
export function owners(key: string, nodes: Candidates, replicas: number): string[] {
  return ranked(hash32(key), nodes).slice(0, replicas);
}

/** Every node, in the shard's order of preference (owners() is its head). */
export function ranked(shardHash: number, nodes: Candidates): string[] {
  const order = nodes.ids.map((id, i) => ({ id, s: score(shardHash, nodes.hashes[i]!) }));
  order.sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return order.map((o) => o.id);
}
