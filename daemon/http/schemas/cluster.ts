// The schema of GET /api/cluster (handlers/cluster.ts; cluster/status.ts ClusterStatus).

import type { JsonSchema } from './common.ts';

const count = { type: 'integer', minimum: 0 } as const;
const text = { type: 'string' } as const;
const nodeIds = { type: 'array', items: text } as const;

export const clusterSchemas: Record<string, JsonSchema> = {
  ClusterStatus: {
    type: 'object',
    properties: {
      name: { ...text, description: "The cluster's name (cluster.name: the prefix of its Redis keys)." },
      self: { ...text, description: 'The node that answered.' },
      replicationFactor: count,
      nodes: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            id: text,
            url: text,
            state: { enum: ['serving', 'leaving', 'dead'] },
            live: { type: 'boolean' },
            lastHeartbeat: { ...text, description: "ISO 8601, by the Redis server's clock." },
            startedAt: text,
            version: text,
            shards: { ...count, description: 'Shards of the published index it holds.' },
            repositories: count,
          },
          required: ['id', 'url', 'state', 'live', 'lastHeartbeat', 'startedAt', 'version', 'shards', 'repositories'],
          additionalProperties: false,
        },
      },
      repositories: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            repositoryId: count,
            repository: text,
            generation: count,
            builtBy: { ...text, description: 'The node whose build this is.' },
            shards: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  shard: text,
                  owners: { ...nodeIds, description: 'The nodes the placement names for it (rendezvous hashing over the live serving nodes).' },
                  holders: { ...nodeIds, description: 'The live nodes that hold it now.' },
                  replicas: count,
                  health: { enum: ['ok', 'under-replicated', 'unavailable'] },
                },
                required: ['shard', 'owners', 'holders', 'replicas', 'health'],
                additionalProperties: false,
              },
            },
          },
          required: ['repositoryId', 'repository', 'generation', 'builtBy', 'shards'],
          additionalProperties: false,
        },
      },
      summary: {
        type: 'object',
        properties: { shards: count, ok: count, underReplicated: count, unavailable: count },
        required: ['shards', 'ok', 'underReplicated', 'unavailable'],
        additionalProperties: false,
      },
    },
    required: ['name', 'self', 'replicationFactor', 'nodes', 'repositories', 'summary'],
    additionalProperties: false,
  },
};
