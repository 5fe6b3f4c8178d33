// Webhook deliveries shaped like each code host's documented payloads (their headers, the
// fields trawl reads and a few it does not), signed as the host signs them: for the
// receiver's tests and the end-to-end ones.

import { createHmac, randomUUID } from 'node:crypto';
import type { WebhookHost } from '../../daemon/webhooks/hosts.ts';

export interface Delivery {
  headers: Record<string, string>;
  /** The query string's parameters (Gerrit's secret). */
  query: Record<string, string>;
  body: Buffer;
}

export type DeliveryKind = 'push' | 'repository' | 'ping' | 'other';

export interface DeliveryOptions {
  /** The host's name of the repository ("acme/api", "PROJ/api", "org/project/repo", a Gerrit project). */
  path: string;
  kind?: DeliveryKind;
  /** The secret to sign with; undefined: unsigned. */
  secret?: string;
  /** The host's delivery id (a new one by default, where the host has ids). */
  id?: string;
  /** A rename's former path (repository events). */
  oldPath?: string;
}

const ZERO = '0'.repeat(40);
const hmac = (secret: string, body: Buffer) => createHmac('sha256', secret).update(body).digest('hex');

/** A delivery of `host`, as its hook would post it. */
export function delivery(host: WebhookHost, o: DeliveryOptions): Delivery {
  const kind = o.kind ?? 'push';
  const id = o.id ?? randomUUID();
  const after = 'a'.repeat(40);
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const [first, ...rest] = o.path.split('/');
  switch (host) {
    case 'github': {
      const event = { push: 'push', repository: 'repository', ping: 'ping', other: 'issues' }[kind];
      const repository = {
        id: 1296269,
        name: rest.at(-1),
        full_name: o.path,
        private: false,
        html_url: `https://github.com/${o.path}`,
        default_branch: 'main',
      };
      const body = json(
        kind === 'push'
          ? {
              ref: 'refs/heads/main',
              before: ZERO,
              after,
              created: false,
              deleted: false,
              forced: false,
              repository,
              pusher: { name: 'octocat' },
              commits: [{ id: after, message: 'one line' }],
            }
          : kind === 'repository'
            ? { action: 'renamed', changes: { repository: { name: { from: o.oldPath ?? 'old' } } }, repository }
            : kind === 'ping'
              ? { zen: 'Design for failure.', hook_id: 42, repository }
              : { action: 'opened', issue: { number: 1 }, repository },
      );
      return {
        headers: {
          'x-github-event': event,
          'x-github-delivery': id,
          'user-agent': 'GitHub-Hookshot/abc',
          ...(o.secret ? { 'x-hub-signature-256': `sha256=${hmac(o.secret, body)}` } : {}),
        },
        query: {},
        body,
      };
    }
    case 'gitlab': {
      const project = { id: 15, name: rest.at(-1), path_with_namespace: o.path, web_url: `https://gitlab.example.com/${o.path}`, default_branch: 'main' };
      const [header, payload] =
        kind === 'push'
          ? [
              'Push Hook',
              { object_kind: 'push', event_name: 'push', before: ZERO, after, ref: 'refs/heads/main', project, commits: [], total_commits_count: 1 },
            ]
          : kind === 'repository'
            ? [
                'System Hook',
                {
                  event_name: 'project_rename',
                  name: rest.at(-1),
                  path: rest.at(-1),
                  path_with_namespace: o.path,
                  old_path_with_namespace: o.oldPath ?? `${first}/old`,
                  project_id: 15,
                },
              ]
            : ['Issue Hook', { object_kind: 'issue', event_type: 'issue', project }];
      return {
        headers: { 'x-gitlab-event': header, 'x-gitlab-event-uuid': id, ...(o.secret ? { 'x-gitlab-token': o.secret } : {}) },
        query: {},
        body: json(payload),
      };
    }
    case 'gitea': {
      const repository = { id: 1, name: rest.at(-1), full_name: o.path, html_url: `https://gitea.example.com/${o.path}`, default_branch: 'main' };
      const event = { push: 'push', repository: 'repository', ping: 'push', other: 'issues' }[kind];
      const body = json(
        kind === 'repository'
          ? { action: 'created', repository }
          : kind === 'other'
            ? { action: 'opened', repository }
            : { ref: 'refs/heads/main', before: ZERO, after, repository, commits: [] },
      );
      return {
        headers: { 'x-gitea-event': event, 'x-gitea-delivery': id, ...(o.secret ? { 'x-gitea-signature': hmac(o.secret, body) } : {}) },
        query: {},
        body,
      };
    }
    case 'bitbucket-cloud': {
      const repository = {
        type: 'repository',
        name: rest.at(-1),
        full_name: o.path,
        uuid: '{0c1d}',
        links: { html: { href: `https://bitbucket.org/${o.path}` } },
      };
      const event = { push: 'repo:push', repository: 'repo:updated', ping: 'diagnostics:ping', other: 'pullrequest:created' }[kind];
      const body = json(
        kind === 'push'
          ? { push: { changes: [{ new: { type: 'branch', name: 'main' }, old: { type: 'branch', name: 'main' } }] }, repository, actor: { display_name: 'A' } }
          : kind === 'repository'
            ? { changes: { full_name: { old: o.oldPath ?? `${first}/old`, new: o.path } }, repository }
            : { repository },
      );
      return {
        headers: {
          'x-event-key': event,
          'x-request-uuid': id,
          'x-hook-uuid': 'hook-1',
          ...(o.secret ? { 'x-hub-signature': `sha256=${hmac(o.secret, body)}` } : {}),
        },
        query: {},
        body,
      };
    }
    case 'bitbucket-server': {
      const repo = (p: string) => ({ slug: p.split('/')[1], name: p.split('/')[1], project: { key: p.split('/')[0], name: 'Project' } });
      const event = { push: 'repo:refs_changed', repository: 'repo:modified', ping: 'diagnostics:ping', other: 'pr:opened' }[kind];
      const body = json(
        kind === 'push'
          ? {
              eventKey: event,
              date: '2026-11-30T10:00:00+0000',
              repository: repo(o.path),
              changes: [{ ref: { id: 'refs/heads/main', type: 'BRANCH' }, fromHash: ZERO, toHash: after, type: 'UPDATE' }],
            }
          : kind === 'repository'
            ? { eventKey: event, old: repo(o.oldPath ?? `${first}/old`), new: repo(o.path) }
            : kind === 'ping'
              ? { test: true }
              : { eventKey: event, pullRequest: { id: 1 } },
      );
      return {
        headers: { 'x-event-key': event, 'x-request-id': id, ...(o.secret ? { 'x-hub-signature': `sha256=${hmac(o.secret, body)}` } : {}) },
        query: {},
        body,
      };
    }
    case 'azuredevops': {
      const [org, project, name] = o.path.split('/');
      const repository = {
        id: '278d5cd2-584d-4b63-824a-2ba458937249',
        name,
        url: `https://dev.azure.com/${org}/_apis/git/repositories/278d5cd2-584d-4b63-824a-2ba458937249`,
        project: { id: '6ce954b1', name: project, url: `https://dev.azure.com/${org}/_apis/projects/6ce954b1` },
        remoteUrl: `https://dev.azure.com/${org}/${project}/_git/${name}`,
      };
      const eventType = { push: 'git.push', repository: 'git.repo.renamed', ping: 'git.push', other: 'workitem.created' }[kind];
      const body = json({
        subscriptionId: '00000000-0000-0000-0000-000000000000',
        notificationId: 3,
        id,
        eventType,
        publisherId: 'tfs',
        resource: { refUpdates: [{ name: 'refs/heads/main', oldObjectId: ZERO, newObjectId: after }], repository },
        resourceVersion: '1.0',
        resourceContainers: { account: { id: 'f844ec47', baseUrl: `https://dev.azure.com/${org}/` }, project: { id: '6ce954b1' } },
        createdDate: '2026-11-30T10:00:00Z',
      });
      return {
        headers: { 'content-type': 'application/json', ...(o.secret ? { authorization: `Basic ${Buffer.from(`trawl:${o.secret}`).toString('base64')}` } : {}) },
        query: {},
        body,
      };
    }
    case 'gerrit': {
      const body = json(
        kind === 'push'
          ? {
              type: 'ref-updated',
              submitter: { name: 'A' },
              refUpdate: { oldRev: ZERO, newRev: after, refName: 'refs/heads/master', project: o.path },
              eventCreatedOn: Date.now() / 1000 + Math.random(),
            }
          : kind === 'repository'
            ? { type: 'project-created', projectName: o.path, headName: 'refs/heads/master', eventCreatedOn: 1700000000 }
            : { type: 'patchset-created', change: { project: o.path, number: 1 }, eventCreatedOn: 1700000000 },
      );
      return { headers: { 'content-type': 'application/json' }, query: o.secret ? { secret: o.secret } : {}, body };
    }
    case 'git': {
      // As the post-receive hook of docs/configuration.md sends it: the name, and the pushed refs.
      const body = json({ repository: o.path, refs: [{ ref: 'refs/heads/main', before: ZERO, after }] });
      return {
        headers: {
          'content-type': 'application/json',
          'x-trawl-delivery': id,
          ...(o.secret ? { 'x-trawl-signature-256': `sha256=${hmac(o.secret, body)}` } : {}),
        },
        query: {},
        body,
      };
    }
  }
}
