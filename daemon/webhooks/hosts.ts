// The code hosts trawl takes push webhooks from: one route each (POST /api/webhooks/HOST),
// and which configured connections a route's deliveries may come for.

import type { Connection, HostConnection } from '../config/types.ts';

export const WEBHOOK_HOSTS = ['github', 'gitlab', 'gitea', 'bitbucket-cloud', 'bitbucket-server', 'azuredevops', 'gerrit'] as const;
export type WebhookHost = (typeof WEBHOOK_HOSTS)[number];

/** A connection whose deliveries come to `host`'s route, with a webhook secret configured. */
export function receivesFrom(host: WebhookHost, c: Connection): c is HostConnection & { webhookSecret: { env: string } } {
  if (c.type === 'git' || c.webhookSecret === undefined) return false;
  switch (host) {
    case 'bitbucket-cloud':
      return c.type === 'bitbucket' && c.deploymentType === 'cloud';
    case 'bitbucket-server':
      return c.type === 'bitbucket' && c.deploymentType === 'server';
    default:
      return c.type === host;
  }
}
