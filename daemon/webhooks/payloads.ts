// What a verified delivery says, read from the host's documented payload: which event,
// which of the host's repositories it names (as the host names them: "org/name",
// "group/sub/project", "KEY/slug", "org/project/repo", a Gerrit project), and the host's id
// of the delivery, when it gives one (else the receiver uses the body's digest).
//
// Only three kinds of event matter here:
// - 'refs': a repository's branches or tags moved (a push, a branch or tag created or
//   deleted): that repository is synced;
// - 'repository': a repository was created, renamed, moved, deleted or had its settings
//   changed: the connections are listed again, which is what decides such things;
// - 'ping': the host checking the hook; everything else is 'ignored'.

import type { WebhookHost } from './hosts.ts';
import type { Received } from './verify.ts';

export type EventKind = 'refs' | 'repository' | 'ping' | 'ignored';

export interface HostEvent {
  /** The host's name of the event (a header, or the payload's type). */
  event: string;
  kind: EventKind;
  /** The repositories it names, as the host names them (empty for ping and ignored). */
  paths: string[];
  /** The host's id of the delivery, when it gives one. */
  delivery?: string;
}

/** Thrown for a body that is not the JSON object the host sends: answered 400. */
export class MalformedDelivery extends Error {
  override readonly name = 'MalformedDelivery';
}

/** The event `d` (verified) carries, as `host` shapes it. */
export function readEvent(host: WebhookHost, d: Received): HostEvent {
  const body = parse(d.body);
  const h = d.headers;
  switch (host) {
    case 'github':
      return github(h['x-github-event'] ?? '', body, h['x-github-delivery']);
    case 'gitlab':
      return gitlab(h['x-gitlab-event'] ?? '', body, h['idempotency-key'] ?? h['x-gitlab-event-uuid']);
    case 'gitea':
      // Gitea (and Forgejo) name their events, and the fields read here, as GitHub does.
      return github(h['x-gitea-event'] ?? h['x-forgejo-event'] ?? '', body, h['x-gitea-delivery'] ?? h['x-forgejo-delivery']);
    case 'bitbucket-cloud':
      return bitbucketCloud(h['x-event-key'] ?? '', body, h['x-request-uuid']);
    case 'bitbucket-server':
      return bitbucketServer(h['x-event-key'] ?? '', body, h['x-request-id']);
    case 'azuredevops':
      return azureDevOps(body);
    case 'gerrit':
      return gerrit(body);
    case 'git':
      return gitServer(body, h['x-trawl-delivery']);
  }
}

type Json = Record<string, unknown>;

function parse(body: Buffer): Json {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new MalformedDelivery(`the delivery is not valid JSON (${(err as Error).message.replace(/\s+/g, ' ')})`);
  }
  if (!isObject(value)) throw new MalformedDelivery('the delivery is not a JSON object');
  return value;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `o.path[0].path[1]...` when it is a string; else the delivery is malformed. */
function text(o: unknown, ...path: string[]): string {
  const v = optText(o, ...path);
  if (v === undefined) throw new MalformedDelivery(`the delivery has no ${path.join('.')}`);
  return v;
}

function optText(o: unknown, ...path: string[]): string | undefined {
  let v: unknown = o;
  for (const k of path) v = isObject(v) ? v[k] : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

const event = (name: string, kind: EventKind, paths: string[], delivery: string | undefined): HostEvent => ({
  event: name,
  kind,
  paths,
  ...(delivery ? { delivery } : {}),
});

/** GitHub's events; Gitea's too (it sends no ping). */
function github(name: string, body: Json, delivery: string | undefined): HostEvent {
  switch (name) {
    case 'ping':
      return event(name, 'ping', [], delivery);
    case 'push':
    case 'create':
    case 'delete':
      return event(name, 'refs', [text(body, 'repository', 'full_name')], delivery);
    case 'repository':
      return event(name, 'repository', [text(body, 'repository', 'full_name')], delivery);
    default:
      return event(name, 'ignored', [], delivery);
  }
}

/** GitLab's project and group hooks (push, tag push), and its system hooks (those and project changes). */
function gitlab(name: string, body: Json, delivery: string | undefined): HostEvent {
  const kind = optText(body, 'event_name') ?? optText(body, 'object_kind') ?? '';
  const label = name === 'System Hook' ? `System Hook ${kind}` : name;
  if (kind === 'push' || kind === 'tag_push' || kind === 'repository_update')
    return event(label, 'refs', [text(body, 'project', 'path_with_namespace')], delivery);
  if (kind.startsWith('project_')) {
    const paths = [text(body, 'path_with_namespace')];
    const old = optText(body, 'old_path_with_namespace');
    if (old !== undefined) paths.push(old);
    return event(label, 'repository', paths, delivery);
  }
  return event(label, 'ignored', [], delivery);
}

function bitbucketCloud(name: string, body: Json, delivery: string | undefined): HostEvent {
  switch (name) {
    case 'repo:push':
      return event(name, 'refs', [text(body, 'repository', 'full_name')], delivery);
    case 'repo:updated':
    case 'repo:transfer':
    case 'repo:deleted':
      return event(name, 'repository', [text(body, 'repository', 'full_name')], delivery);
    case 'diagnostics:ping':
      return event(name, 'ping', [], delivery);
    default:
      return event(name, 'ignored', [], delivery);
  }
}

function bitbucketServer(name: string, body: Json, delivery: string | undefined): HostEvent {
  const path = (r: unknown) => `${text(r, 'project', 'key')}/${text(r, 'slug')}`;
  switch (name) {
    case 'repo:refs_changed':
      return event(name, 'refs', [path(body.repository)], delivery);
    case 'repo:modified':
      return event(name, 'repository', [path(body.new), path(body.old)], delivery);
    case 'diagnostics:ping':
      return event(name, 'ping', [], delivery);
    default:
      return event(name, 'ignored', [], delivery);
  }
}

/** Azure DevOps service hooks: its repositories are "org/project/repo" (the organization from the account's URL). */
function azureDevOps(body: Json): HostEvent {
  const name = text(body, 'eventType');
  const delivery = optText(body, 'id');
  const kind: EventKind = name === 'git.push' ? 'refs' : name.startsWith('git.repo.') ? 'repository' : 'ignored';
  if (kind === 'ignored') return event(name, kind, [], delivery);
  const repo = isObject(body.resource) ? body.resource.repository : undefined;
  const org = azureOrg(optText(body, 'resourceContainers', 'account', 'baseUrl') ?? text(repo, 'url'));
  return event(name, kind, [`${org}/${text(repo, 'project', 'name')}/${text(repo, 'name')}`], delivery);
}

/** The organization of an Azure DevOps URL: dev.azure.com/ORG/... or ORG.visualstudio.com. */
function azureOrg(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new MalformedDelivery(`the delivery's account URL is not a URL: ${url.slice(0, 200)}`);
  }
  const host = u.hostname.toLowerCase();
  const org = host.endsWith('.visualstudio.com') ? host.slice(0, -'.visualstudio.com'.length) : decodeURIComponent(u.pathname.split('/')[1] ?? '');
  if (org === '') throw new MalformedDelivery(`no organization in the delivery's account URL ${url.slice(0, 200)}`);
  return org;
}

/**
 * A plain git server's push notice: `{"repository": NAME}` or `{"repositories": [NAME, ...]}`,
 * each NAME as trawl lists the repository (`trawl repos`), plus whatever else the hook
 * sends (the pushed commits make each notice's body, and so its digest, its own).
 */
function gitServer(body: Json, delivery: string | undefined): HostEvent {
  const one = optText(body, 'repository');
  const many = Array.isArray(body.repositories) ? body.repositories : undefined;
  if (many !== undefined && !many.every((n): n is string => typeof n === 'string' && n !== ''))
    throw new MalformedDelivery("the notice's repositories must be repository names");
  const paths = [...(one === undefined ? [] : [one]), ...(many ?? [])];
  if (paths.length === 0) throw new MalformedDelivery('the notice names no repository: send {"repository": NAME}');
  return event('push', 'refs', paths, delivery);
}

/** Gerrit's stream events, as the webhooks plugin posts them. */
function gerrit(body: Json): HostEvent {
  const name = text(body, 'type');
  if (name === 'ref-updated') return event(name, 'refs', [text(body, 'refUpdate', 'project')], undefined);
  if (name === 'project-created') return event(name, 'repository', [text(body, 'projectName')], undefined);
  return event(name, 'ignored', [], undefined);
}
