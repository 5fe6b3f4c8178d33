// Webhook deliveries of every host type (deliveries.ts: shaped like the hosts' documented
// payloads): verification on the raw bytes (signed, unsigned, another secret, a body
// changed after signing, a malformed signature), the event read from a verified body, and
// the window of deliveries seen (seen-deliveries.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WEBHOOK_HOSTS, type WebhookHost } from '../../daemon/webhooks/hosts.ts';
import { MalformedDelivery, readEvent } from '../../daemon/webhooks/payloads.ts';
import { SeenDeliveries } from '../../daemon/webhooks/seen-deliveries.ts';
import { verified } from '../../daemon/webhooks/verify.ts';
import { delivery } from './deliveries.ts';

const SECRET = 'c0ffee-c0ffee-c0ffee-c0ffee';

/** The path each host's tests name (the host's form of a repository name). */
const PATHS: Record<WebhookHost, string> = {
  github: 'acme/api',
  gitlab: 'acme/sub/api',
  gitea: 'acme/api',
  'bitbucket-cloud': 'acme/api',
  'bitbucket-server': 'PROJ/api',
  azuredevops: 'acme/Platform/api',
  gerrit: 'tools/api',
  git: 'api',
};

test('each host: a delivery signed with the secret verifies; unsigned, another secret, or a body changed after signing does not', () => {
  for (const host of WEBHOOK_HOSTS) {
    const d = delivery(host, { path: PATHS[host], secret: SECRET });
    assert.equal(verified(host, SECRET, d), true, `${host}: signed`);
    assert.equal(verified(host, `${SECRET}x`, d), false, `${host}: another secret`);
    assert.equal(verified(host, SECRET, delivery(host, { path: PATHS[host] })), false, `${host}: unsigned`);
    const changed = { ...d, body: Buffer.concat([d.body, Buffer.from(' ')]) };
    // GitLab, Azure DevOps and Gerrit send the secret itself, which says nothing of the body.
    const signsBody = !['gitlab', 'azuredevops', 'gerrit'].includes(host);
    assert.equal(verified(host, SECRET, changed), !signsBody, `${host}: body changed after signing`);
  }
});

test('malformed signatures and credentials are refused, never thrown on', () => {
  const body = Buffer.from('{}');
  const cases: Array<[WebhookHost, Record<string, string>, Record<string, string>]> = [
    ['github', { 'x-hub-signature-256': 'sha256=' }, {}],
    ['github', { 'x-hub-signature-256': `sha1=${'0'.repeat(40)}` }, {}],
    ['github', { 'x-hub-signature-256': `sha256=${'z'.repeat(64)}` }, {}],
    ['github', { 'x-hub-signature-256': `sha256=${'0'.repeat(63)}` }, {}],
    ['gitea', { 'x-gitea-signature': 'not hex' }, {}],
    ['bitbucket-server', { 'x-hub-signature': `sha256=${'0'.repeat(64)}\n` }, {}],
    ['gitlab', { 'x-gitlab-token': '' }, {}],
    ['azuredevops', { authorization: 'Basic !!!' }, {}],
    ['azuredevops', { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` }, {}],
    ['azuredevops', { authorization: `Bearer ${SECRET}` }, {}],
    ['gerrit', {}, { secret: '' }],
  ];
  for (const [host, headers, query] of cases) assert.equal(verified(host, SECRET, { headers, query, body }), false, `${host} ${JSON.stringify(headers)}`);
});

test('each host: a push names its repository, a repository change asks for a listing, the rest is ignored', () => {
  for (const host of WEBHOOK_HOSTS) {
    const path = PATHS[host];
    const push = readEvent(host, delivery(host, { path, secret: SECRET, id: 'd-1' }));
    assert.equal(push.kind, 'refs', `${host} push`);
    assert.deepEqual(push.paths, [path], `${host} push`);
    // The host's delivery id where it has one (Gerrit has none).
    assert.equal(push.delivery, host === 'gerrit' ? undefined : 'd-1', `${host} delivery id`);
    // A git server's notices are pushes only.
    if (host === 'git') continue;
    const renamed = readEvent(host, delivery(host, { path, kind: 'repository', secret: SECRET }));
    assert.equal(renamed.kind, 'repository', `${host} repository event`);
    assert.ok(renamed.paths.includes(path), `${host} repository event names ${path}: ${renamed.paths.join()}`);
    const other = readEvent(host, delivery(host, { path, kind: 'other', secret: SECRET }));
    assert.equal(other.kind, 'ignored', `${host} other event`);
    assert.deepEqual(other.paths, []);
  }
  for (const host of ['github', 'bitbucket-cloud', 'bitbucket-server'] as const) {
    assert.equal(readEvent(host, delivery(host, { path: PATHS[host], kind: 'ping', secret: SECRET })).kind, 'ping', host);
  }
  // GitLab: a system hook's push and a rename's two names.
  const rename = readEvent('gitlab', delivery('gitlab', { path: 'acme/new', oldPath: 'acme/old', kind: 'repository' }));
  assert.deepEqual([rename.event, rename.paths], ['System Hook project_rename', ['acme/new', 'acme/old']]);
  // Azure DevOps on visualstudio.com: the organization from the host name.
  const vs = JSON.parse(delivery('azuredevops', { path: 'acme/Platform/api' }).body.toString());
  vs.resourceContainers.account.baseUrl = 'https://acme.visualstudio.com/';
  assert.deepEqual(readEvent('azuredevops', { headers: {}, query: {}, body: Buffer.from(JSON.stringify(vs)) }).paths, ['acme/Platform/api']);
});

test('a verified body the host would not send is malformed: not JSON, not an object, a field missing', () => {
  const bad: Array<[WebhookHost, Record<string, string>, string]> = [
    ['github', { 'x-github-event': 'push' }, 'not json'],
    ['github', { 'x-github-event': 'push' }, '[1,2]'],
    ['github', { 'x-github-event': 'push' }, '{"repository":{}}'],
    ['gitlab', { 'x-gitlab-event': 'Push Hook' }, '{"object_kind":"push"}'],
    ['bitbucket-server', { 'x-event-key': 'repo:refs_changed' }, '{"repository":{"slug":"api"}}'],
    ['azuredevops', {}, '{"eventType":"git.push","resource":{"repository":{"name":"api","project":{"name":"P"},"url":"::"}}}'],
    ['azuredevops', {}, '{}'],
    ['gerrit', {}, '{"type":"ref-updated"}'],
    ['gitea', { 'x-gitea-event': 'push' }, '"a string"'],
    ['git', {}, '{}'],
    ['git', {}, '{"repositories": ["a", 3]}'],
  ];
  for (const [host, headers, body] of bad) {
    assert.throws(() => readEvent(host, { headers, query: {}, body: Buffer.from(body) }), MalformedDelivery, `${host} ${body}`);
  }
});

test('deliveries seen: a repeat within the window is caught; the window and the bound forget the oldest', () => {
  let now = 0;
  const seen = new SeenDeliveries(3, 1000, () => now);
  assert.equal(seen.firstTime('a'), true);
  assert.equal(seen.firstTime('a'), false);
  now = 999;
  assert.equal(seen.firstTime('a'), false, 'within the window');
  now = 1000;
  assert.equal(seen.firstTime('a'), true, 'the window passed: forgotten');
  for (const id of ['b', 'c', 'd']) assert.equal(seen.firstTime(id), true);
  assert.equal(seen.size, 3, 'bounded');
  assert.equal(seen.firstTime('a'), true, 'the oldest went first');
  assert.equal(seen.firstTime('d'), false);
});
