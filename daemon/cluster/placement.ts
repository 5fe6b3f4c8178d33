// Which nodes should hold each shard of the published index: the `replicationFactor` live
// nodes that rank highest for it (rendezvous.ts), among those serving (a node that is
// leaving takes no shard). A shard is keyed by its repository and file name, so the shards
// of one repository spread over the nodes like those of different repositories: a
// repository larger than one node's share is split over several. A compound shard, which
// serves many repositories, is keyed by its file name alone (unique in the cluster): all
// its members place it on the same nodes, which hold the file once.

import { PACK_NAME } from '../index/manifest.ts';
import { candidates, hash32, ranked, type Candidates } from './rendezvous.ts';

export const unitKey = (repoId: number, file: string): string => (PACK_NAME.test(file) ? file : `${repoId}/${file}`);

export class Placement {
  readonly #nodes: Candidates;

  constructor(
    serving: Iterable<string>,
    readonly replicas: number,
  ) {
    this.#nodes = candidates(serving);
  }

  /** Every serving node, best first for the shard (owners() is the head). */
  ranked(repoId: number, file: string): string[] {
    return ranked(hash32(unitKey(repoId, file)), this.#nodes);
  }

  /** The nodes that should hold the shard. */
  owners(repoId: number, file: string): string[] {
    return this.ranked(repoId, file).slice(0, this.replicas);
  }

  get size(): number {
    return this.#nodes.ids.length;
  }
}
