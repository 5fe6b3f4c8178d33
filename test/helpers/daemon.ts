// A real daemon on a random loopback port over real git repositories made for the test:
// `startTestDaemon()` builds two repositories (one public with branches, tags, a rename,
// a binary file and several authors; one private), indexes them, and starts the daemon.
// Requests go through `call()` (fetch), which returns status, headers and parsed body.
// `extraRepos` adds more repositories, built by the caller and indexed the same way;
// `secret: false` leaves the private one out (a daemon with no private repository).

import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon, type Daemon, type DaemonOptions } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { indexPath } from '../../daemon/index/indexer.ts';
import { indexLocal, registerLocal } from '../../daemon/sync/local-repos.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { Store } from '../../daemon/store/store.ts';
import { tempDir } from './corpus.ts';
import { git, TestRepo } from './git.ts';

export interface TestDaemon {
  daemon: Daemon;
  url: string;
  dataDir: string;
  /** The public repository's work tree. */
  repoPath: string;
  /** Names as the API reports them. */
  publicRepo: string;
  privateRepo: string;
  cleanup(): Promise<void>;
}

/** A repository besides widgets and secret (startTestDaemon's `extraRepos`). */
export interface ExtraRepo {
  /** Its directory, and so the name the API reports. */
  name: string;
  /** Default public; private ones are registered like "secret". */
  visibility?: 'public' | 'private';
  /** Branches to index besides the default one. */
  branches?: string[];
  /** Makes its history (the work tree starts empty, on branch main). */
  build(repo: TestRepo): void;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when it is not JSON. */
  json: any;
}

export async function call(url: string, init: RequestInit & { json?: unknown } = {}): Promise<Answer> {
  const { json, ...rest } = init;
  const req: RequestInit = { ...rest };
  if (json !== undefined) {
    req.method ??= 'POST';
    req.body = JSON.stringify(json);
    req.headers = { 'content-type': 'application/json', ...(rest.headers as Record<string, string> | undefined) };
  }
  const res = await fetch(url, req);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: parsed };
}

export async function startTestDaemon(
  options: {
    settings?: Record<string, unknown>;
    config?: Record<string, unknown>;
    daemon?: Partial<DaemonOptions>;
    extraRepos?: ExtraRepo[];
    /** Index the private repository "secret" (default true). */
    secret?: boolean;
    /** The data directory (a filesystem of the test's own); default: one in the temporary directory. */
    dataDir?: string;
    /** Runs on the store once everything is indexed, before the daemon starts (records the catalog reads at start). */
    prepare?: (store: Store) => Promise<void>;
  } = {},
): Promise<TestDaemon> {
  const dir = tempDir('daemon');
  const dataDir = options.dataDir ?? join(dir.path, 'data');
  const repoPath = join(dir.path, 'repos', 'widgets');
  const repo = TestRepo.init(repoPath);
  repo.commit(
    { 'src/main.c': 'int main(void) {\n  return widget_count();\n}\n', 'README.md': '# Widgets\n\nwidget docs\n' },
    'Initial import\n\nThe first widgets.',
  );
  repo.commit({ 'src/widget.c': 'int widget_count(void) {\n  return 42;\n}\n', 'logo.bin': new Uint8Array([0, 1, 2, 3, 0, 255]) }, 'Add widget_count');
  repo.tag('v1.0', true);
  // A second author, a rename and a deletion.
  git(repoPath, 'mv', 'README.md', 'README.txt');
  repo.commit({}, 'Rename the readme', { author: 'Bea Author <bea@example.com>', date: new Date().toISOString() });
  repo.checkout('dev', true).commit({ 'src/dev.c': 'int widget_dev_only(void) { return widget_count(); }\n' }, 'Dev work');
  repo.checkout('main');
  const secret = options.secret === false ? undefined : TestRepo.init(join(dir.path, 'repos', 'secret'));
  secret?.commit({ 'vault.c': 'int widget_secret_sauce;\n' });

  const extras = (options.extraRepos ?? []).map((x) => {
    const r = TestRepo.init(join(dir.path, 'repos', x.name));
    x.build(r);
    return { ...x, path: r.path };
  });

  const store = openStore(dataDir);
  try {
    await indexLocal(repoPath, { dataDir, store, symbols: true, revisions: { branches: ['dev'], tags: ['v*'] } });
    // The second repository is private: anonymous callers must never see it.
    const register = registerLocal(store);
    const indexPrivate = (path: string, branches?: string[]) =>
      indexPath(path, {
        dataDir,
        symbols: true,
        ...(branches ? { revisions: { branches } } : {}),
        register: async (d) => {
          const r = await register(d);
          await store.updateRepo(r.repoId, { visibility: 'private', state: 'indexed' });
          return { repoId: r.repoId, repo: { ...r.repo, visibility: 'private' } };
        },
      });
    if (secret) await indexPrivate(secret.path);
    for (const x of extras) {
      if (x.visibility === 'private') await indexPrivate(x.path, x.branches);
      else await indexLocal(x.path, { dataDir, store, symbols: true, ...(x.branches ? { revisions: { branches: x.branches } } : {}) });
    }
    await options.prepare?.(store);
  } finally {
    await store.close();
  }

  const config = parseConfig(
    JSON.stringify({ ...(options.config ?? {}), settings: { anonymousAccess: true, symbols: true, ...(options.settings ?? {}) } }),
    join(dir.path, 'trawl.json'),
  );
  const daemon = await startDaemon({
    config,
    dataDir,
    host: '127.0.0.1',
    port: 0,
    logger: silentHttpLogger,
    workers: 1,
    sync: false,
    ...(options.daemon ?? {}),
  });
  return {
    daemon,
    url: daemon.url,
    dataDir,
    repoPath,
    publicRepo: 'widgets',
    privateRepo: 'secret',
    async cleanup() {
      await daemon.close();
      dir.cleanup();
    },
  };
}
