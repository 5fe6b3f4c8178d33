// Repository permissions through the daemon (settings.permissions "code-host" with grants
// from the configuration): a member sees public repositories and what a grant gives them,
// on the repository list, in search and on browsing, and an unseen repository answers like
// one that does not exist. A member with a grant sees it, so the test cannot pass by
// hiding everything. (The full differential over every endpoint is to come with permission
// sync; this pins the first piece.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { call, startTestDaemon } from '../helpers/daemon.ts';

test('code-host permissions: public and granted repositories only, on the list, in search and on browsing', async () => {
  const d = await startTestDaemon({
    settings: { permissions: 'code-host' },
    config: { permissions: { groups: { vault: ['Grace@example.com'] }, grants: [{ groups: ['vault'], repos: ['sec*'] }] } },
  });
  try {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: () => {}, now: () => new Date() };
    const dd = ['--data-dir', d.dataDir];
    await usersCommand(['add', '--email', 'grace@example.com', ...dd], io);
    await usersCommand(['add', '--email', 'max@example.com', ...dd], io);
    await keysCommand(['create', '--user', 'grace@example.com', ...dd], io);
    const grace = lines.at(-1)!;
    await keysCommand(['create', '--user', 'max@example.com', ...dd], io);
    const max = lines.at(-1)!;
    const ask = (key: string, path: string, json?: unknown) =>
      call(`${d.url}${path}`, { headers: { authorization: `Bearer ${key}` }, ...(json ? { json } : {}) });

    const names = async (key: string) => ((await ask(key, '/api/repos')).json as Array<{ repoName: string }>).map((r) => r.repoName).sort();
    assert.deepEqual(await names(grace), ['secret', 'widgets']);
    assert.deepEqual(await names(max), ['widgets']);

    const searched = async (key: string, query: string) =>
      [
        ...new Set(((await ask(key, '/api/search', { query, matches: 100 })).json as { files: Array<{ repository: string }> }).files.map((f) => f.repository)),
      ].sort();
    assert.deepEqual(await searched(grace, 'widget'), ['secret', 'widgets']);
    assert.deepEqual(await searched(max, 'widget'), ['widgets']);

    const source = (key: string) => ask(key, '/api/source?repo=secret&path=vault.c');
    assert.equal((await source(grace)).status, 200);
    const hidden = await source(max);
    assert.equal(hidden.status, 404);
    assert.equal(hidden.json.errorCode, 'REPOSITORY_NOT_FOUND');
    const unknown = await ask(max, '/api/source?repo=no-such-repo&path=vault.c');
    assert.equal(unknown.json.message.replace('no-such-repo', 'secret'), hidden.json.message, 'an unseen repository answers like one that does not exist');
  } finally {
    await d.cleanup();
  }
});
