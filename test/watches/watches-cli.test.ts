// `trawl watches` end to end, as an operator runs it (bin/trawl.js in a child process) on a
// data dir a git repository made here was indexed into with `trawl index`: bad arguments
// (one line on stderr, exit 2), refusals (exit 1: too broad, the member's limit, a URL
// inside the network, an unknown member or watch), the add / list / events / rm round
// trip with names escaped, and a watch made by the command line evaluated by a daemon
// started on the same data dir: the change indexed before it started is recorded once
// (the command line checked no other watch), its POST signed with the secret the command
// printed; a watch added while the daemon runs is evaluated at the next re-index.

import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeControl } from '../../daemon/cli/format.ts';
import { UsageError } from '../../daemon/cli/usage.ts';
import { usersCommand } from '../../daemon/cli/users-command.ts';
import { watchesCommand } from '../../daemon/cli/watches-command.ts';
import { loadConfig } from '../../daemon/config/load.ts';
import { ServiceError } from '../../daemon/errors.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { openStore } from '../../daemon/store/open.ts';
import { tempDir } from '../helpers/corpus.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import { runTrawl, type TrawlRun } from '../helpers/trawl-cli.ts';
import { hookReceiver } from '../helpers/hook-receiver.ts';

interface Setup {
  dir: string;
  dataDir: string;
  repo: TestRepo;
  /** `trawl ARGS --data-dir DATA --config CONFIG` in a child process (CONFIG: trawl.json, allowPrivateUrls on, unless another is given). */
  trawl(args: string[], config?: string): Promise<TrawlRun>;
  /** The same `trawl watches ARGS` in this process (a child process takes seconds on a busy machine). */
  watches(args: string[], config?: string): Promise<Ran>;
  config: string;
  cleanup(): void;
}

/** A git repository indexed into a fresh data dir, and a configuration beside it. */
async function setup(prefix: string): Promise<Setup> {
  const dir = tempDir(prefix);
  const repo = TestRepo.init(join(dir.path, 'app'));
  repo.commit({ 'main.go': 'package main\n\n// watch_token one\nfunc main() {}\n', 'util.go': 'package main\n\nfunc helper() {}\n' });
  const dataDir = join(dir.path, 'data');
  const config = join(dir.path, 'trawl.json');
  writeFileSync(config, JSON.stringify({ settings: { symbols: false, watches: { allowPrivateUrls: true, retryBaseMs: 50 } } }));
  const trawl = (args: string[], with_ = config) => runTrawl([...args, '--data-dir', dataDir, '--config', with_], dir.path);
  const watches = (args: string[], with_ = config) => inProcess([...args, '--data-dir', dataDir, '--config', with_]);
  const indexed = await runTrawl(['index', repo.path, '--no-symbols', '--data-dir', dataDir], dir.path);
  assert.equal(indexed.code, 0, indexed.stderr);
  return { dir: dir.path, dataDir, repo, trawl, watches, config, cleanup: dir.cleanup };
}

type Ran = Pick<TrawlRun, 'code' | 'stdout' | 'stderr'>;

/**
 * `trawl watches ARGS` run in this process, its error shown and its exit status chosen as
 * the command line's main.ts does: a UsageError or a malformed option 2, any other error 1,
 * a ServiceError as "CODE: message", one escaped line.
 */
async function inProcess(args: string[]): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const text = (lines: string[]) => lines.map((l) => `${l}\n`).join('');
  const io = { out: (l: string) => void out.push(l), err: (l: string) => void err.push(l), now: () => new Date() };
  try {
    const code = await watchesCommand(args, io);
    return { code, stdout: text(out), stderr: text(err) };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const usage = e instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'));
    const message = e instanceof ServiceError ? `${e.errorCode}: ${e.message}` : (e as Error).message;
    return { code: usage ? 2 : 1, stdout: text(out), stderr: `trawl: ${escapeControl(message.trimEnd())}\n` };
  }
}

/** One line on stderr, saying `message`, and the exit status. */
function refused(r: Ran, code: number, message: RegExp): void {
  assert.equal(r.code, code, `exit status: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.split('\n').length, 2, `one line: ${JSON.stringify(r.stderr)}`);
  assert.match(r.stderr, message);
}

test('trawl watches: bad arguments are one line on stderr and exit status 2', async (t) => {
  const s = await setup('watches-cli-usage');
  t.after(() => s.cleanup());
  const add = ['add', '--user', 'a@example.com', '--name', 'n', '--query', 'q'];
  const cases: Array<[string[], RegExp]> = [
    [[], /^trawl: watches takes list, add, events or rm\n$/],
    [['frob'], /^trawl: watches takes list, add, events or rm, not "frob"\n$/],
    [['list', 'extra'], /^trawl: watches list takes no arguments, got "extra"\n$/],
    [['list', '--bogus'], /^trawl: Unknown option '--bogus'/],
    [['list', '--user', ''], /^trawl: --user needs an EMAIL\n$/],
    [['add', '--name', 'n', '--query', 'q'], /^trawl: watches add needs --user EMAIL, --name NAME and --query QUERY\n$/],
    [['add', '--user', 'a@example.com', '--query', 'q'], /needs --user EMAIL, --name NAME and --query QUERY\n$/],
    [['add', '--user', 'a@example.com', '--name', 'n'], /needs --user EMAIL, --name NAME and --query QUERY\n$/],
    [[...add, 'extra'], /^trawl: watches add takes no arguments, got "extra"\n$/],
    [[...add, '--limit', '3'], /^trawl: Unknown option '--limit'/],
    [['rm'], /^trawl: usage: trawl watches rm ID\n$/],
    [['rm', '1', '2'], /^trawl: usage: trawl watches rm ID\n$/],
    [['rm', 'abc'], /^trawl: a watch id is a positive whole number, got "abc"\n$/],
    [['rm', '0'], /^trawl: a watch id is a positive whole number, got "0"\n$/],
    [['events'], /^trawl: usage: trawl watches events ID/],
    [['events', '1', '--limit', '0'], /^trawl: --limit must be a whole number between 1 and 1000, got "0"\n$/],
    [['events', '1', '--limit', '1001'], /^trawl: --limit must be a whole number between 1 and 1000, got "1001"\n$/],
    [['events', '1', '--after=-1'], /^trawl: --after must be a whole number between 0 and \d+, got "-1"\n$/],
    [['events', '1', '--after', '1.5'], /^trawl: --after must be a whole number/],
    [['events', '1', '--url', 'https://example.com/'], /^trawl: Unknown option '--url'/],
  ];
  for (const [args, message] of cases) {
    const r = await inProcess(args.length === 0 ? [] : [...args, '--data-dir', s.dataDir, '--config', s.config]);
    assert.equal(r.code, 2, `trawl watches ${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '', args.join(' '));
    assert.equal(r.stderr.split('\n').length, 2, `one line for ${args.join(' ')}: ${JSON.stringify(r.stderr)}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  // The same through bin/trawl.js: the exit status and the line main.ts writes; the help.
  const [none, unknown, help, main] = await Promise.all([
    runTrawl(['watches'], s.dir),
    s.trawl(['watches', 'rm', '1', '--bogus']),
    s.trawl(['watches', '--help']),
    runTrawl(['--help'], s.dir),
  ]);
  refused(none, 2, /^trawl: watches takes list, add, events or rm\n$/);
  refused(unknown, 2, /^trawl: Unknown option '--bogus'/);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: trawl watches list \[--user EMAIL\] \[--json\]/);
  assert.match(main.stdout, /^ {2}watches +members' watches/m);
});

test('trawl watches: add, list, events and rm; refusals exit 1; names are escaped', async (t) => {
  const s = await setup('watches-cli-round');
  t.after(() => s.cleanup());
  const where = ['--data-dir', s.dataDir];
  await newUserKey('alice@example.com', where, 'member');
  await newUserKey('bob@example.com', where, 'member');

  const empty = await s.watches(['list']);
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /^no watches \(trawl watches add/);

  // Without a url: the id alone on stdout, what was made on stderr.
  const made = await s.trawl(['watches', 'add', '--user', 'alice@example.com', '--name', 'tokens', '--query', 'watch_token']);
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stdout, /^\d+\n$/);
  const id = Number(made.stdout);
  assert.equal(made.stderr, `trawl: watch ${id} (tokens) for alice@example.com: 1 matching line now (its baseline)\n`);
  // With a url, its secret on the next line, once.
  const hooked = await s.watches([
    'add',
    '--user',
    'bob@example.com',
    '--name',
    'helpers',
    '--query',
    'func \\w+\\(',
    '--regex',
    '--case',
    '--url',
    'http://127.0.0.1:9/hook',
  ]);
  assert.equal(hooked.code, 0, hooked.stderr);
  const [hookedId, secret, rest] = hooked.stdout.split('\n');
  assert.match(hookedId!, /^\d+$/);
  assert.match(secret!, /^whsec_[A-Za-z0-9_-]{43}$/);
  assert.equal(rest, '');
  assert.match(
    hooked.stderr,
    /: 2 matching lines now \(its baseline\); its changes are POSTed to http:\/\/127\.0\.0\.1:9\/hook, signed with the secret printed above: shown once/,
  );

  // A name an older version may have stored with a control character is shown escaped.
  const store = openStore(s.dataDir);
  const alice = (await store.getUserByEmail('alice@example.com'))!;
  const evil = await store.watches.create(
    { userId: alice.id, name: 'red\x1b[31m\nline', query: 'nothing_matches', isRegexEnabled: false, isCaseSensitivityEnabled: false, salt: 's' },
    [],
    new Date().toISOString(),
  );
  await store.close();

  const list = await s.trawl(['watches', 'list']);
  assert.equal(list.code, 0, list.stderr);
  const lines = list.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^ID +OWNER +NAME +QUERY +URL +DELIVERED +DEAD LETTERS +LAST CHANGED$/);
  assert.equal(lines.length, 4);
  assert.match(lines[1]!, new RegExp(`^${id} +alice@example\\.com +tokens +watch_token +- +0 +0 +never$`));
  assert.match(lines[2]!, /^\d+ +bob@example\.com +helpers +func \\w\+\\\( \(regex, case-sensitive\) +http:\/\/127\.0\.0\.1:9\/hook +0 +0 +never$/);
  assert.ok(lines[3]!.includes('red\\x1b[31m\\nline'), lines[3]);
  assert.ok(!list.stdout.includes('\x1b'));
  const bobs = JSON.parse((await s.watches(['list', '--user', 'bob@example.com', '--json'])).stdout) as Array<Record<string, unknown>>;
  assert.deepEqual(
    bobs.map((w) => [w.id, w.name, w.query, w.isRegexEnabled, w.isCaseSensitivityEnabled, w.url, w.ownerEmail, w.secret]),
    [[Number(hookedId), 'helpers', 'func \\w+\\(', true, true, 'http://127.0.0.1:9/hook', 'bob@example.com', undefined]],
  );
  assert.equal((await s.watches(['list', '--user', 'carol@example.com'])).code, 1);

  const events = await s.watches(['events', String(id)]);
  assert.equal(events.code, 0, events.stderr);
  assert.equal(events.stdout, `no changes recorded for watch ${id} (tokens)\n`);
  assert.equal((await s.watches(['events', String(id), '--json'])).stdout, '[]\n');

  // Refusals: exit status 1, one line, nothing made.
  const alices = ['add', '--user', 'alice@example.com', '--name', 'n'];
  const strict = join(s.dir, 'strict.json');
  writeFileSync(strict, JSON.stringify({ settings: { watches: { maxMatches: 1 } } }));
  refused(
    await s.watches([...alices, '--query', 'func', '--url', 'http://127.0.0.1/hook'], strict),
    1,
    /^trawl: INVALID_REQUEST_BODY: url points inside the network \(127\.0\.0\.1\)/,
  );
  refused(
    await s.watches([...alices, '--query', 'x', '--url', 'ftp://example.com/'], strict),
    1,
    /^trawl: INVALID_REQUEST_BODY: url must be http or https, got ftp\n$/,
  );
  refused(
    await s.trawl(['watches', ...alices, '--query', 'package'], strict),
    1,
    /^trawl: WATCH_TOO_BROAD: the query matches more than 1 lines now: narrow it/,
  );
  refused(await s.watches([...alices, '--query', 'type:diff x'], strict), 1, /^trawl: FAILED_TO_PARSE_QUERY: a watch watches the code as indexed/);
  refused(await s.watches([...alices, '--query', 'foo(', '--regex'], strict), 1, /^trawl: FAILED_TO_PARSE_QUERY: /);
  refused(
    await s.watches([...alices.slice(0, 4), 'bad\u202ename', '--query', 'x']),
    1,
    /^trawl: INVALID_REQUEST_BODY: --name may not contain control or bidirectional-override characters \(U\+202E at character 4\)\n$/,
  );
  refused(await s.watches([...alices.slice(0, 4), 'x'.repeat(101), '--query', 'x']), 1, /--name must be 1 to 100 characters, got 101/);
  refused(await s.watches(['add', '--user', 'carol@example.com', '--name', 'n', '--query', 'x']), 1, /^trawl: no user with the email carol@example\.com/);
  const limited = join(s.dir, 'limited.json');
  writeFileSync(limited, JSON.stringify({ settings: { watches: { maxPerUser: 2 } } }));
  refused(
    await s.watches([...alices, '--query', 'x'], limited),
    1,
    /^trawl: WATCH_LIMIT_REACHED: alice@example\.com has 2 watches, the most settings\.watches\.maxPerUser allows/,
  );
  const quiet = { out: () => {}, err: () => {}, now: () => new Date() };
  assert.equal(await usersCommand(['suspend', 'alice@example.com', ...where], quiet), 0);
  refused(await s.watches([...alices, '--query', 'x']), 1, /^trawl: alice@example\.com is suspended: their watches are not evaluated/);
  assert.equal(await usersCommand(['unsuspend', 'alice@example.com', ...where], quiet), 0);
  assert.equal(JSON.parse((await s.watches(['list', '--json'])).stdout).length, 3, 'nothing refused was made');

  // rm: gone, with its events; a second rm, and events of a watch that is not there, exit 1.
  const rm = await s.trawl(['watches', 'rm', String(evil.id)]);
  assert.equal(rm.code, 0, rm.stderr);
  assert.equal(rm.stdout, `watch ${evil.id} (red\\x1b[31m\\nline) of alice@example.com deleted, with its matches and events\n`);
  refused(await s.watches(['rm', String(evil.id)]), 1, new RegExp(`^trawl: no watch with id ${evil.id} \\(trawl watches list shows them\\)\\n$`));
  refused(await s.watches(['events', String(evil.id)]), 1, /^trawl: no watch with id/);
  assert.deepEqual(
    (JSON.parse((await s.watches(['list', '--json'])).stdout) as Array<{ id: number }>).map((w) => w.id),
    [id, Number(hookedId)],
  );
});

test('trawl watches: a watch the command line made is evaluated by a daemon on the same data dir, once, signed with the secret it printed', async (t) => {
  const s = await setup('watches-cli-daemon');
  t.after(() => s.cleanup());
  await newUserKey('alice@example.com', ['--data-dir', s.dataDir], 'member');
  const hook = await hookReceiver();
  t.after(() => hook.close());
  const add = (name: string, query: string, url?: string) =>
    s.trawl(['watches', 'add', '--user', 'alice@example.com', '--name', name, '--query', query, ...(url ? ['--url', url] : [])]);
  const reindex = async () => {
    const r = await runTrawl(['index', s.repo.path, '--no-symbols', '--data-dir', s.dataDir], s.dir);
    assert.equal(r.code, 0, r.stderr);
  };
  const eventsOf = async (id: number) => {
    const r = await s.watches(['events', String(id), '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Array<{ id: number; added: unknown[]; removed: unknown[]; delivery?: { state: string } }>;
  };

  const first = await add('tokens', 'watch_token', hook.url);
  assert.equal(first.code, 0, first.stderr);
  const [tokensText, secret] = first.stdout.split('\n');
  const tokens = Number(tokensText);
  // A matching line indexed with no daemon running; the next add checks no other watch.
  s.repo.commit({ 'util.go': 'package main\n\n// watch_token two\nfunc helper() {}\n' });
  await reindex();
  const second = await add('helpers', 'helper');
  assert.equal(second.code, 0, second.stderr);
  const helpers = Number(second.stdout);
  assert.deepEqual(await eventsOf(tokens), [], 'the command line recorded no change of another watch');

  const d = await startDaemon({ config: loadConfig(s.config), dataDir: s.dataDir, host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1 });
  t.after(() => d.close());
  await until('the change POSTed', () => hook.got.length >= 1, 20_000);
  const posted = hook.got[0]!;
  assert.equal(posted.headers['x-trawl-signature-256'], `sha256=${createHmac('sha256', secret!).update(posted.body).digest('hex')}`);
  const event = JSON.parse(posted.body) as { id: number; added: unknown[]; removed: unknown[]; watch: { id: number } };
  assert.equal(event.watch.id, tokens);
  assert.deepEqual(event.added, [{ path: 'util.go', line: 3, text: '// watch_token two' }]);
  assert.deepEqual(event.removed, []);
  await until('delivered', async () => (await eventsOf(tokens))[0]?.delivery?.state === 'delivered');
  assert.equal((await eventsOf(tokens)).length, 1, 'recorded once');
  assert.deepEqual(await eventsOf(helpers), [], 'its baseline held the change already');

  // Added while the daemon runs, then evaluated by it after the next re-index.
  const third = await add('mains', 'func main');
  assert.equal(third.code, 0, third.stderr);
  const mains = Number(third.stdout);
  s.repo.commit({ 'main.go': 'package main\n\n// watch_token one\nfunc start() {}\n', 'util.go': 'package main\n\nfunc helper() {}\n' });
  await reindex();
  await until('the re-index evaluated', async () => (await eventsOf(mains)).length === 1 && (await eventsOf(tokens)).length === 2, 20_000);
  const text = await s.watches(['events', String(tokens)]);
  assert.equal(text.code, 0, text.stderr);
  const out = text.stdout.trimEnd().split('\n');
  assert.match(out[0]!, new RegExp(`^event ${event.id} +\\S+ +app @ [0-9a-f]{12} +delivered \\(1 attempt\\)$`));
  assert.equal(out[1], '  + util.go:3: // watch_token two');
  assert.match(out[2]!, /^event \d+ +\S+ +app @ [0-9a-f]{12} +(delivered|pending) /);
  assert.equal(out[3], '  - util.go:3: // watch_token two');
  assert.equal(out.length, 4);
  assert.deepEqual(await eventsOf(helpers), [], 'helper() stayed');
  const after = await s.watches(['events', String(tokens), '--after', String(event.id), '--json']);
  assert.equal(JSON.parse(after.stdout).length, 1);
  const listed = (JSON.parse((await s.watches(['list', '--json'])).stdout) as Array<{ id: number; lastChangedAt?: string }>).find((w) => w.id === tokens);
  assert.ok(listed?.lastChangedAt, 'last changed is set');
});
