// The cluster's status read straight from its Redis by someone who is no node of it
// (`trawl cluster status`): the same view a node keeps (cluster-view.ts), filled once by a
// reader that joins nothing (Membership.observe), and the same computation GET
// /api/cluster answers with (status.ts). It needs the configuration's cluster section
// only: no node has to run, no credential is asked (whoever has the file reaches Redis).

import type { ClusterSettings } from '../config/types.ts';
import { closeRedis, connectRedis } from '../runtime/redis-client.ts';
import { ClusterView } from './cluster-view.ts';
import { Holdings } from './holdings.ts';
import { ClusterKeys } from './redis-keys.ts';
import { Membership, OBSERVER } from './membership.ts';
import { PublishedIndexes } from './published.ts';
import { clusterStatus, type ClusterStatus } from './status.ts';

export interface ObservedStatus {
  status: Omit<ClusterStatus, 'self'>;
  /** Redis's clock when the membership was read (ms since the epoch): what a heartbeat's age is measured against. */
  readAt: number;
}

export async function observeCluster(settings: ClusterSettings): Promise<ObservedStatus> {
  const redis = await connectRedis(settings.redis, { what: "the cluster's Redis" });
  try {
    const keys = new ClusterKeys(settings.name);
    const membership = await Membership.observe({ redis, keys, nodeTimeoutMs: settings.nodeTimeoutMs });
    const view = new ClusterView(OBSERVER, membership, new PublishedIndexes(redis, keys), new Holdings(redis, keys, OBSERVER), settings.replicationFactor);
    await view.refresh();
    return { status: clusterStatus(view, settings.name), readAt: membership.readAt };
  } finally {
    await closeRedis(redis);
  }
}
