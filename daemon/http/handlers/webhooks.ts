// POST /api/webhooks/{host}: code hosts' push webhooks (webhooks/receiver.ts), one route
// per host type. No trawl credential: a delivery proves itself with the connection's
// webhook secret, checked on the raw body before it is parsed.

import { ServiceError } from '../../errors.ts';
import { WEBHOOK_HOSTS, type WebhookHost } from '../../webhooks/hosts.ts';
import { parseQuery } from '../body.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';

const LABELS: Record<WebhookHost, string> = {
  github: 'GitHub',
  gitlab: 'GitLab',
  gitea: 'Gitea (and Forgejo)',
  'bitbucket-cloud': 'Bitbucket Cloud',
  'bitbucket-server': 'Bitbucket Server and Data Center',
  azuredevops: 'Azure DevOps',
  gerrit: "Gerrit's webhooks plugin",
  git: "a plain git server's (a post-receive hook's)",
};

export function webhookRoutes(s: Services): Route[] {
  return WEBHOOK_HOSTS.map(
    (host): Route => ({
      method: 'POST',
      path: `/api/webhooks/${host}`,
      operationId: `webhook_${host.replace('-', '_')}`,
      summary: `Receives ${LABELS[host]} webhook deliveries (pushes sync their repository)`,
      description:
        "Verified with the webhook secret of a connection of this host type (docs/configuration.md), before the body is parsed. A push queues its repository's sync (202 queued); a repository created, renamed or deleted, a listing of the connections (202 listing); a delivery taken before (its id) is not acted on again (200 replayed). No trawl credential, not rate limited.",
      tag: 'Webhooks',
      rawBody: true,
      response: { status: 202, schema: 'WebhookAnswer', description: 'Acted on: a sync or a listing queued.' },
      otherResponses: [
        {
          status: 200,
          schema: 'WebhookAnswer',
          description: 'Taken, nothing to do: a ping, an event trawl does not act on, a repository no connection lists, a replay.',
        },
      ],
      errors: ['NOT_AUTHENTICATED', 'NOT_FOUND', 'INVALID_REQUEST_BODY', 'INVALID_QUERY_PARAMS', 'REQUEST_TOO_LARGE', 'SERVICE_UNAVAILABLE'],
      rateLimited: false,
      authenticated: false,
      async handle(ctx) {
        const receiver = s.webhooks;
        if (receiver === undefined)
          throw new ServiceError('SERVICE_UNAVAILABLE', 'this server syncs no repositories (it has no connections, or its sync is turned off)');
        // Only Gerrit's deliveries carry something in the query string (their secret).
        const query = host === 'gerrit' ? parseQuery(ctx.rawQuery) : {};
        const answer = await receiver.receive(host, { headers: ctx.headers, query, body: ctx.rawBody ?? Buffer.alloc(0) }, ctx.clientAddress);
        return { status: answer.status, body: answer.body };
      },
    }),
  );
}
