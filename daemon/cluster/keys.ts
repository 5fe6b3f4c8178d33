// Where a cluster keeps its shared, fast-changing state in Redis: every key starts with the
// cluster's name (cluster.name, default "trawl"), so that clusters can share one server.
//
//   <name>:nodes              sorted set: node id → its last heartbeat (ms, Redis's clock)
//   <name>:node:<id>          hash: url, state, startedAt, version, holdsVersion (membership.ts)
//   <name>:holds:<id>         hash: repository id → what the node holds of its index (holdings.ts)
//   <name>:indexes            hash: repository id → its published index (published.ts)
//   <name>:events             pub/sub channel: "nodes", "holds", "index:<id>" wake the readers
//   <name>:leader             string with an expiry: the node that lists the connections (leader.ts)
//   <name>:sync:* (BullMQ)    the index job queue, BullMQ's own keys under that prefix (jobs.ts)

export class ClusterKeys {
  readonly nodes: string;
  readonly indexes: string;
  readonly events: string;
  readonly leader: string;
  /** BullMQ's key prefix (its queue name is added after it). */
  readonly queuePrefix: string;

  constructor(readonly name: string) {
    this.nodes = `${name}:nodes`;
    this.indexes = `${name}:indexes`;
    this.events = `${name}:events`;
    this.leader = `${name}:leader`;
    this.queuePrefix = `${name}:sync`;
  }

  node(id: string): string {
    return `${this.name}:node:${id}`;
  }

  holds(id: string): string {
    return `${this.name}:holds:${id}`;
  }
}
