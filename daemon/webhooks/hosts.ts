// The code hosts trawl takes push webhooks from: one route each (POST /api/webhooks/HOST),
// and which configured connections a route's deliveries may come for.

import type { Connection, SecretRef } from '../config/types.ts';

/** The code hosts, and `git`: a plain git server's push notices (a post-receive hook that signs them as GitHub does). */
export const WEBHOOK_HOSTS = ['github', 'gitlab', 'gitea', 'bitbucket-cloud', 'bitbucket-server', 'azuredevops', 'gerrit', 'git'] as const;
export type WebhookHost = (typeof WEBHOOK_HOSTS)[number];

/** A connection whose deliveries come to `host`'s route, with a webhook secret configured. */
export function receivesFrom(host: WebhookHost, c: Connection): c is Connection & { webhookSecret: SecretRef } {
  if (c.webhookSecret === undefined) return false;
  switch (host) {
    case 'bitbucket-cloud':
      return c.type === 'bitbucket' && c.deploymentType === 'cloud';
    case 'bitbucket-server':
      return c.type === 'bitbucket' && c.deploymentType === 'server';
    default:
      return c.type === host;
  }
}
