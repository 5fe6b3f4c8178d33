// `trawl bench run`'s options as parsed (bench-command.ts parseRunArgs), without running
// anything: what each new option becomes, the defaults of those that may go without a
// value, and the combinations refused with the message a user sees.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRunArgs, withDefaultValues } from '../../bench/suite/command.ts';
import { UsageError } from '../../daemon/cli/usage.ts';
import { dropCachesRefused } from '../../bench/suite/page-cache.ts';

describe('bench run: options that may go without a value', () => {
  const table: Array<{ args: string[]; want: string[] }> = [
    { args: ['--corpus-repos'], want: ['--corpus-repos', '2000'] },
    { args: ['--tiny-repos'], want: ['--tiny-repos', '20000'] },
    { args: ['--corpus-repos', '--tiny-repos'], want: ['--corpus-repos', '2000', '--tiny-repos', '20000'] },
    { args: ['--corpus-repos', '50', '--tiny-repos', '7'], want: ['--corpus-repos', '50', '--tiny-repos', '7'] },
    { args: ['--tiny-repos', '--quick'], want: ['--tiny-repos', '20000', '--quick'] },
    { args: ['--corpus-repos=12'], want: ['--corpus-repos=12'] },
    { args: ['--corpus', 'x'], want: ['--corpus', 'x'] },
  ];
  for (const t of table) {
    it(t.args.join(' '), () => assert.deepEqual(withDefaultValues(t.args), t.want));
  }
});

describe('bench run: options parsed', () => {
  const table: Array<{ args: string[]; want: Record<string, unknown> }> = [
    {
      args: ['--corpus', 'linux'],
      want: { corpus: 'linux', cold: undefined, distinct: undefined, corpusRepos: undefined, tinyRepos: undefined, only: undefined },
    },
    { args: ['--corpus', 'linux', '--distinct', '50', '--cold'], want: { distinct: 50, cold: true } },
    { args: ['--corpus', 'linux', '--corpus-repos'], want: { corpusRepos: 2000, tinyRepos: undefined } },
    { args: ['--corpus', 'linux', '--corpus-repos', '50'], want: { corpusRepos: 50 } },
    { args: ['--corpus', 'linux', '--tiny-repos', '--only', 'many-repos'], want: { tinyRepos: 20000, only: 'many-repos', cluster: false } },
    {
      args: ['--corpus', 't', '--only', 'many-repos', '--corpus-repos', '5', '--tiny-repos', '5', '--many-dir', '/tmp/m'],
      want: { corpusRepos: 5, tinyRepos: 5, manyDir: '/tmp/m' },
    },
    { args: ['--corpus', 't', '--only', 'many-repos', '--tiny-repos', '9', '--cold', '--no-peers'], want: { tinyRepos: 9, cold: true, peers: false } },
    { args: ['--corpus', 't', '--corpus-repos', '3', '--out', 'r.json'], want: { corpusRepos: 3 } },
  ];
  for (const t of table) {
    it(t.args.join(' '), () => {
      const { options } = parseRunArgs(t.args);
      for (const [k, v] of Object.entries(t.want)) assert.deepEqual((options as unknown as Record<string, unknown>)[k], v, k);
    });
  }
  it('keeps --out apart from the run options', () => assert.equal(parseRunArgs(['--corpus', 't', '--out', 'r.json']).out, 'r.json'));
});

describe('bench run: options refused', () => {
  const table: Array<{ args: string[]; error: RegExp }> = [
    { args: ['--corpus', 't', '--distinct', '0'], error: /^--distinct must be a positive integer, got "0"$/ },
    { args: ['--corpus', 't', '--corpus-repos', 'many'], error: /^--corpus-repos must be a positive integer, got "many"$/ },
    { args: ['--corpus', 't', '--tiny-repos=-3'], error: /^--tiny-repos must be a positive integer, got "-3"$/ },
    { args: ['--corpus', 't', '--only', 'many-repos'], error: /^--only many-repos needs --corpus-repos N or --tiny-repos N/ },
    {
      args: ['--corpus', 't', '--only', 'many-repos', '--tiny-repos', '5', '--cluster'],
      error: /^--only many-repos runs the many-repositories phase alone: drop --cluster$/,
    },
    { args: ['--corpus', 't', '--only', 'many-repos', '--tiny-repos', '5', '--auth'], error: /--auth, --web and --reindex need the core phases/ },
    {
      args: ['--corpus', 't', '--only', 'cluster', '--tiny-repos', '5'],
      error: /^--only cluster runs that phase alone: drop --corpus-repos and --tiny-repos$/,
    },
    { args: ['--corpus', 't', '--only', 'viewer', '--cold'], error: /^--only viewer times no held-out identifiers: drop --cold and --distinct$/ },
    { args: ['--corpus', 't', '--many-dir', '/tmp/m'], error: /^--many-dir is for the many-repositories phase/ },
    { args: ['--corpus', 't', '--only', 'web'], error: /^--only takes "cluster", "viewer", "many-repos"/ },
    { args: ['--tiny-repos', '5'], error: /needs --corpus DIR/ },
  ];
  for (const t of table) {
    it(t.args.join(' '), () => {
      assert.throws(
        () => parseRunArgs(t.args),
        (err: Error) => err instanceof UsageError && t.error.test(err.message),
      );
    });
  }
});

describe('--cold: the page cache file', () => {
  it('is refused with a clear message where it cannot be written', () => {
    assert.match(
      dropCachesRefused('/nonexistent-dir/drop_caches')!,
      /^--cold empties the page cache through \/nonexistent-dir\/drop_caches, which does not exist here/,
    );
  });
});
