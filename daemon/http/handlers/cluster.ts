// GET /api/cluster: how a cluster stands (docs/deployment.md), for its owners: the nodes
// with their state and last heartbeat, every repository's shards with the nodes the
// placement names for them and the nodes that hold them, and a summary of replica health.
// A daemon that runs alone answers 404: there is no cluster to describe.

import { ServiceError } from '../../errors.ts';
import { ownerOnly } from './entitled.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';

export function clusterRoutes(s: Services): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/cluster',
      operationId: 'clusterStatus',
      summary: "The cluster's nodes, shard assignments and replica health (owners only)",
      description:
        'Answered by any node from the shared state (Redis). A shard is `ok` with replicationFactor live holders (or as many as there are live nodes), `under-replicated` with fewer, `unavailable` with none: searches then name it in `unavailableShards`. Not rate limited. 404 when the daemon is not part of a cluster.',
      tag: 'System',
      response: { status: 200, schema: 'ClusterStatus', description: 'The cluster as this node sees it now.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'NOT_FOUND'],
      rateLimited: false,
      authenticated: true,
      async handle(ctx) {
        ownerOnly(ctx.identity, "read the cluster's status");
        const node = s.cluster?.();
        if (!node) throw new ServiceError('NOT_FOUND', 'this daemon runs alone: the configuration has no cluster section');
        return { body: await node.status() };
      },
    },
  ];
}
