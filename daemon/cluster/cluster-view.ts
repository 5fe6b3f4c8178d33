// What a node knows of the cluster, read again every heartbeat (and at once when this node
// changes something): who is live (membership.ts), the published index (published.ts), what
// each node holds (holdings.ts), and from those the placement (placement.ts) and the units
// a search asks (fan-out.ts), which are computed once per change, not per search.

import type { PlacedUnit } from './fan-out.ts';
import type { Holdings } from './holdings.ts';
import type { Manifest } from '../index/manifest.ts';
import type { Membership, NodeInfo } from './membership.ts';
import { Placement } from './placement.ts';
import type { PublishedIndex, PublishedIndexes } from './published.ts';

export class ClusterView {
  #placement: Placement;
  #units: PlacedUnit[] | undefined;
  #signature = '';
  /** catalogManifests() and the publication seq it was made at. */
  #manifests: { seq: number; state: { manifests: Manifest[] } } | undefined;

  constructor(
    readonly self: string,
    readonly membership: Membership,
    readonly published: PublishedIndexes,
    readonly holdings: Holdings,
    readonly replicas: number,
  ) {
    this.#placement = new Placement([], replicas);
  }

  /**
   * Reads what changed (published indexes, holdings of nodes whose holdsVersion moved;
   * `allHoldings`: every node's, as a search does whose shards moved under it).
   */
  async refresh(allHoldings = false): Promise<void> {
    const changed = await this.published.refresh();
    const nodes = this.membership.nodes();
    if (await this.holdings.refresh(nodes, allHoldings)) this.#units = undefined;
    const signature = nodes.map((n) => `${n.id}:${n.live ? 1 : 0}:${n.state}:${n.holdsVersion}`).join(',');
    if (changed || signature !== this.#signature) {
      this.#signature = signature;
      this.#placement = new Placement(
        this.serving().map((n) => n.id),
        this.replicas,
      );
      this.#units = undefined;
    }
  }

  /** Changes whenever what refresh() read changes: the published index, the nodes, their states and holdings. */
  get version(): string {
    return `${this.published.seq}|${this.#signature}`;
  }

  /** This node's holdings were rewritten: the units' holders are computed again. */
  invalidate(): void {
    this.#units = undefined;
  }

  get placement(): Placement {
    return this.#placement;
  }

  live(): NodeInfo[] {
    return this.membership.live();
  }

  /** Live nodes that take shards (not leaving). */
  serving(): NodeInfo[] {
    return this.membership.live().filter((n) => n.state === 'serving');
  }

  urlOf(node: string): string | undefined {
    const n = this.membership.node(node);
    return n?.live ? n.url : undefined;
  }

  /** The published indexes that serve (not tombstones, with shards), by repository name then id: the order of a search. */
  indexes(): PublishedIndex[] {
    const out = [...this.published.all()].filter((p) => !p.deleted && p.manifest && p.manifest.shards.length > 0);
    // Published manifests are version 2: each names its repository (the order Searcher uses).
    return out.sort((a, b) => {
      const x = a.manifest!.repo.name;
      const y = b.manifest!.repo.name;
      return x < y ? -1 : x > y ? 1 : a.repoId - b.repoId;
    });
  }

  /**
   * The published indexes as the manifests a node's repository catalog lists
   * (http/catalog.ts), whichever nodes hold their shards: the same object until a
   * publication changes them, so that the catalog derives its list once per change.
   */
  catalogManifests(): { manifests: Manifest[] } {
    const seq = this.published.seq;
    if (this.#manifests?.seq !== seq) {
      // A published manifest lacks only the builder's bookkeeping: no retired files to list.
      this.#manifests = { seq, state: { manifests: this.indexes().map((p) => ({ ...p.manifest!, retired: [] })) } };
    }
    return this.#manifests.state;
  }

  /**
   * The live nodes besides this one that can read a repository's source for a request this
   * node cannot serve (http/forward.ts). `wholeIndex`: it is read from the index (a
   * directory), so the nodes that hold every shard of the published index, its builder
   * first; else from git, which only the builder is known to have (its mirror, or the path
   * it indexed).
   */
  sourceNodes(repoId: number, wholeIndex: boolean): string[] {
    const p = this.published.get(repoId);
    if (!p?.manifest || p.deleted) return [];
    const live = this.live()
      .map((n) => n.id)
      .filter((n) => n !== this.self);
    if (!wholeIndex) return live.includes(p.builtBy) ? [p.builtBy] : [];
    const whole = live.filter((n) => p.manifest!.shards.every((s) => this.holdings.holds(n, repoId, p.generation, s.file)));
    return whole.sort((a, b) => (a === p.builtBy ? -1 : b === p.builtBy ? 1 : a < b ? -1 : 1));
  }

  /**
   * For readiness (http/readiness.ts): the published repositories every shard of which a
   * live node holds, so that a search through any node covers them, and those of them whose
   * symbols are still being added.
   */
  searchable(): { repos: Set<number>; symbolsPending: Set<number> } {
    const missing = new Set(
      this.units()
        .filter((u) => u.holders.length === 0)
        .map((u) => u.repoId),
    );
    const repos = new Set<number>();
    const symbolsPending = new Set<number>();
    for (const p of this.indexes()) {
      if (missing.has(p.repoId)) continue;
      repos.add(p.repoId);
      if (p.manifest!.symbolsPending) symbolsPending.add(p.repoId);
    }
    return { repos, symbolsPending };
  }

  /** Whether every shard of the repository's published index has a live holder (false when nothing is published). */
  servable(repoId: number): boolean {
    const units = this.units().filter((u) => u.repoId === repoId);
    return units.length > 0 && units.every((u) => u.holders.length > 0);
  }

  /** Every unit of the published index in search order, with the live nodes that hold it (this node first, then by rendezvous rank). */
  units(): PlacedUnit[] {
    if (this.#units) return this.#units;
    const live = this.live().map((n) => n.id);
    const out: PlacedUnit[] = [];
    for (const p of this.indexes()) {
      const m = p.manifest!;
      for (const s of m.shards) {
        const holders = this.holdings.holders(live, p.repoId, p.generation, s.file);
        // Its maker holds it from its commit, before the others read the holdings it wrote
        // then (a heartbeat later, at most): a repository copied into a pack would be
        // missing from searches meanwhile.
        const maker = p.packedBy ?? p.builtBy;
        if (holders.length === 0 && live.includes(maker)) holders.push(maker);
        const rank = new Map(this.#placement.ranked(p.repoId, s.file).map((id, i) => [id, i]));
        holders.sort((a, b) => (a === this.self ? -1 : b === this.self ? 1 : (rank.get(a) ?? Infinity) - (rank.get(b) ?? Infinity) || (a < b ? -1 : 1)));
        out.push({ repoId: p.repoId, file: s.file, generation: p.generation, repository: m.repo.name, visibility: m.repo.visibility, holders });
      }
    }
    this.#units = out;
    return out;
  }
}
