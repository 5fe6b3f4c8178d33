// Bare mirrors of remote repositories in the data dir, kept with nodegit (libgit2) only.
// A mirror's branches and tags are exactly the remote's: a fetch force-updates them and
// prunes what the remote no longer has, and HEAD follows the remote's default branch.
// http(s) traffic goes through a loopback relay in this process so that a stalled server
// can be cut off (see "The relay"); several choices below work around libgit2 1.9 and
// nodegit bugs, each explained where it is made.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { basename, dirname, isAbsolute, join, parse as parsePath, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import NodeGit from 'nodegit';
import { acquireLock } from '../runtime/lock-file.ts';
import { removeLeftoverTemps } from '../runtime/owner.ts';
import { isGitRepository } from './git.ts';

export interface MirrorOptions {
  /** Basic-auth credentials for http(s) remotes (token hosts: see daemon/repos/hosts/types.ts GitCredentials). */
  credentials?: { username: string; password: string };
  /** Abort a clone/fetch that makes no progress for this long (default 10 min). */
  timeoutMs?: number;
  onProgress?: (p: { receivedObjects: number; totalObjects: number; receivedBytes: number }) => void;
}

export interface MirrorResult {
  /** Absolute path of the bare repository. */
  path: string;
  /** The remote's default branch (its HEAD's target, short name), when it has one. */
  defaultBranch?: string;
  /** True when this call created the mirror (first clone). */
  cloned: boolean;
}

const REFSPECS = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'];
const DEFAULT_TIMEOUT_MS = 10 * 60_000;
// libgit2 asks for credentials again after every 401, up to its replay limit of 15
// requests. Right credentials are accepted at the first offer (one more is allowed for a
// server that wants them again on a later request); a third ask means they are wrong.
const MAX_CREDENTIAL_ASKS = 2;
// Progress callbacks cross from libgit2's thread to JS; one every 100 ms is plenty.
const PROGRESS_THROTTLE_MS = 100;
const TMP_MARK = '.tmp-';

/** Syncs of one destination run one after another: two fetches into one repository would race on its refs. */
const busy = new Map<string, Promise<unknown>>();

/** Creates `dest` (bare) from `url` on first use, else fetches into it. */
export async function syncMirror(url: string, dest: string, options: MirrorOptions = {}): Promise<MirrorResult> {
  const path = resolve(dest);
  const previous = busy.get(path) ?? Promise.resolve();
  const run = previous.then(
    () => syncNow(url, path, options),
    () => syncNow(url, path, options),
  );
  busy.set(path, run);
  const forget = (): void => {
    if (busy.get(path) === run) busy.delete(path);
  };
  run.then(forget, forget);
  return run;
}

/**
 * One process at a time fetches into a mirror: the lock file `<dest>.lock` (runtime/lock-file.ts)
 * is held for the whole clone or fetch. Holding it, this process knows that nothing else
 * writes there, so whatever a killed sync left is removed first: its temporary clone and
 * libgit2's own lock files and temporary packs inside the mirror, which would otherwise
 * make every later fetch fail ("failed to lock file").
 */
async function syncNow(url: string, path: string, options: MirrorOptions): Promise<MirrorResult> {
  const verb = existsSync(path) ? 'fetch' : 'clone';
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (err) {
    const remote = parseRemote(url, verb, options.credentials);
    throw remote.error(`cannot create ${dirname(path)} (${errorText(err)})`, err);
  }
  const release = await acquireLock(`${path}.lock`, `the mirror ${path}`);
  try {
    removeLeftoverTemps(dirname(path), basename(path));
    removeGitLeftovers(path);
    return await syncLocked(url, path, options);
  } finally {
    release();
  }
}

async function syncLocked(url: string, path: string, options: MirrorOptions): Promise<MirrorResult> {
  const exists = existsSync(path);
  const remote = parseRemote(url, exists ? 'fetch' : 'clone', options.credentials);
  if (exists) {
    if (!isGitRepository(path)) throw remote.error(`${path} exists and is not a git repository (remove it to clone afresh)`);
    return { path, cloned: false, ...(await fetchInto(path, remote, options, false)) };
  }

  // The clone is made beside `dest` and renamed into place only when complete, so a
  // crash leaves a temporary directory (removed by a later call), never a half mirror.
  const tmp = `${path}${TMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const fetched = await fetchInto(tmp, remote, options, true);
    try {
      renameSync(tmp, path);
    } catch (err) {
      // Someone else (another process on the same data dir) finished a clone first: theirs
      // stands, and this call brings it up to date instead.
      if (!isErrno(err, 'ENOTEMPTY') && !isErrno(err, 'EEXIST')) {
        throw remote.error(`cannot move the new mirror into ${path} (${errorText(err)})`, err);
      }
      rmSync(tmp, { recursive: true, force: true });
      return { path, cloned: false, ...(await fetchInto(path, parseRemote(url, 'fetch', options.credentials), options, false)) };
    }
    return { path, cloned: true, ...fetched };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Every branch (refs/heads/*) and tag (refs/tags/*, annotated tags peeled to their commit) of a (bare or not) repository, with its commit id. */
export async function listRefs(
  repoPath: string,
): Promise<{ branches: Map<string, string>; tags: Map<string, string>; head?: string }> {
  let repo: NodeGit.Repository;
  try {
    repo = await NodeGit.Repository.open(repoPath);
  } catch (err) {
    throw new Error(`not a git repository: ${repoPath} (${errorText(err)})`, { cause: err });
  }
  try {
    const branches = new Map<string, string>();
    const tagRefs: NodeGit.Reference[] = [];
    // One native call for all references. Symbolic ones come back resolved and named as
    // their targets (refs/heads/alias -> refs/heads/main is seen as main).
    for (const ref of await repo.getReferences()) {
      const name = ref.name();
      if (name.startsWith('refs/heads/')) branches.set(name.slice('refs/heads/'.length), ref.target().tostrS());
      else if (name.startsWith('refs/tags/')) tagRefs.push(ref);
    }
    // A tag names a commit directly (lightweight) or through a tag object (annotated):
    // peeling follows tag objects down to the commit. Tags of trees or blobs name no
    // commit and are left out. A chunk of peels at a time keeps libgit2's threads busy.
    const tags = new Map<string, string>();
    const peeled: Array<[string, string | undefined]> = [];
    for (let i = 0; i < tagRefs.length; i += 64) {
      const chunk = tagRefs.slice(i, i + 64);
      peeled.push(
        ...(await Promise.all(
          chunk.map(async (ref): Promise<[string, string | undefined]> => {
            const name = ref.name().slice('refs/tags/'.length);
            try {
              return [name, (await ref.peel(NodeGit.Object.TYPE.COMMIT)).id().tostrS()];
            } catch {
              return [name, undefined];
            }
          }),
        )),
      );
    }
    for (const [name, id] of peeled.sort(byName)) if (id !== undefined) tags.set(name, id);
    const sortedBranches = new Map([...branches].sort(byName));

    const result: { branches: Map<string, string>; tags: Map<string, string>; head?: string } = {
      branches: sortedBranches,
      tags,
    };
    const head = await headBranch(repo);
    if (head !== undefined && sortedBranches.has(head)) result.head = head;
    return result;
  } catch (err) {
    throw new Error(`repository ${repoPath}: cannot list references (${errorText(err)})`, { cause: err });
  } finally {
    repo.cleanup().catch(() => {});
  }
}

function byName(a: [string, unknown], b: [string, unknown]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/** Short name of the branch HEAD points at; undefined when HEAD is detached or missing. */
async function headBranch(repo: NodeGit.Repository): Promise<string | undefined> {
  let head: NodeGit.Reference;
  try {
    head = await NodeGit.Reference.lookup(repo, 'HEAD');
  } catch {
    return undefined;
  }
  if (head.type() !== NodeGit.Reference.TYPE.SYMBOLIC) return undefined;
  const target = head.symbolicTarget();
  return target?.startsWith('refs/heads/') === true ? target.slice('refs/heads/'.length) : undefined;
}

/**
 * Removes a mirror directory (used when a repository is deleted). Not while a sync of it
 * runs: a first clone still in flight would put the mirror back when it completes.
 */
export function removeMirror(dest: string): void {
  const path = resolve(dest);
  // A guard against a misconfigured data dir: never delete a filesystem root.
  if (parsePath(path).root === path) throw new Error(`refusing to remove ${path}: not a mirror directory`);
  rmSync(path, { recursive: true, force: true });
  // Clones cut short by a crash; those of live processes (ours, or a second daemon on the
  // same data dir) are kept (runtime/owner.ts).
  removeLeftoverTemps(dirname(path), basename(path));
}

/**
 * Files libgit2 leaves in a repository when it is killed mid-write: lock files (`HEAD.lock`,
 * `packed-refs.lock`, `refs/heads/main.lock`, ...), which it creates exclusively and so
 * would refuse every later update with; and temporary packs and objects (`*_git2_*`).
 * Called only while holding the mirror's lock, when no libgit2 of ours writes there.
 */
function removeGitLeftovers(path: string): void {
  if (!existsSync(path)) return;
  const walk = (dir: string, leftover: (name: string) => boolean, deep: boolean): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const at = join(dir, e.name);
      if (e.isDirectory()) {
        if (deep) walk(at, leftover, deep);
      } else if (leftover(e.name)) {
        rmSync(at, { force: true });
      }
    }
  };
  const lock = (name: string) => name.endsWith('.lock');
  walk(path, lock, false);
  walk(join(path, 'refs'), lock, true);
  walk(join(path, 'objects'), (name) => name.includes('_git2_'), true);
}

// ---------------------------------------------------------------------------------------
// Remote URLs

interface RemoteSpec {
  /** What libgit2 fetches from: an absolute path or an http(s) URL. */
  source: string;
  /** The URL without credentials, for messages. */
  display: string;
  http?: URL;
  verb: 'clone' | 'fetch';
  /** Strings never to show (the password and a token-like user name). */
  secrets: string[];
  /** The one-line error for this remote. */
  error(reason: string, cause?: unknown): Error;
}

function parseRemote(url: string, verb: 'clone' | 'fetch', credentials: MirrorOptions['credentials']): RemoteSpec {
  const secrets: string[] = [];
  if (credentials !== undefined) {
    secrets.push(credentials.password);
    // Some hosts take the token as the user name; a short one ("git", "oauth2") is no secret.
    if (credentials.username.length >= 16) secrets.push(credentials.username);
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  let display = url;
  let http: URL | undefined;
  if (scheme === 'http' || scheme === 'https') {
    try {
      http = new URL(url);
    } catch {
      http = undefined;
    }
    if (http !== undefined) {
      if (http.password !== '') secrets.push(http.password, safeDecode(http.password));
      const shown = new URL(http.href);
      shown.username = '';
      shown.password = '';
      display = shown.href;
    } else {
      display = stripUserinfo(url);
    }
  }
  const spec: RemoteSpec = {
    source: url,
    display,
    verb,
    secrets,
    error(reason: string, cause?: unknown): Error {
      // One line, whatever libgit2 put in its message.
      const text = redact(`cannot ${verb} ${display}: ${reason}`, secrets).replace(/\s*\n\s*/g, ' ').trim();
      return new Error(text, cause === undefined ? undefined : { cause });
    },
  };
  if (scheme === 'http' || scheme === 'https') {
    if (http === undefined || http.hostname === '') throw spec.error('invalid URL');
    spec.http = http;
    return spec;
  }
  let localPath: string;
  if (scheme === 'file') {
    try {
      localPath = fileURLToPath(url);
    } catch (err) {
      throw spec.error(`invalid file URL (${errorText(err)})`, err);
    }
  } else if (isAbsolute(url) && scheme === undefined) {
    localPath = url;
  } else {
    throw spec.error('unsupported URL (use an absolute path, a file:// URL or an http(s):// URL)');
  }
  // libgit2's own message for these is about its search for a repository; these say what is wrong.
  let st: Stats | undefined;
  try {
    st = statSync(localPath, { throwIfNoEntry: false });
  } catch (err) {
    throw spec.error(`cannot read it (${errorText(err)})`, err);
  }
  if (st === undefined) throw spec.error('no such directory');
  if (!st.isDirectory() || !isGitRepository(localPath)) throw spec.error('not a git repository');
  spec.source = localPath;
  return spec;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function stripUserinfo(text: string): string {
  return text.replace(/\/\/[^/\s@]*@/g, '//');
}

/**
 * Strips user info from URLs in `text` and masks the secrets wherever else they appear
 * (libgit2 has no reason to echo them, so this is a second line of defence). Very short
 * secrets are left alone: masking them would mangle words ("p" in "https").
 */
function redact(text: string, secrets: string[]): string {
  let out = stripUserinfo(text);
  for (const s of secrets) if (s.length >= 6) out = out.split(s).join('***');
  return out;
}

// ---------------------------------------------------------------------------------------
// Fetching

/**
 * Fetches every branch and tag of `remote` into the bare repository at `repoPath`
 * (created first when `create`), pruning what the remote no longer has, then points
 * HEAD at the remote's default branch. Returns that branch, when the remote has one.
 */
async function fetchInto(
  repoPath: string,
  remote: RemoteSpec,
  options: MirrorOptions,
  create: boolean,
): Promise<{ defaultBranch?: string }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const state: SyncState = { asks: 0, authRefused: false, timedOut: false };
  let repo: NodeGit.Repository | undefined;
  let relay: Relay | undefined;
  let watchdog: Watchdog | undefined;
  try {
    repo = create ? await NodeGit.Repository.init(repoPath, 1) : await NodeGit.Repository.openBare(repoPath);
    let git: NodeGit.Remote | undefined;
    watchdog = new Watchdog(timeoutMs, () => {
      state.timedOut = true;
      git?.stop();
      relay?.abort();
    });
    const poke = watchdog.poke;
    let proxyOpts: NodeGit.ProxyOptions | null = null;
    if (remote.http !== undefined) {
      relay = await startRelay(remote.http, poke);
      proxyOpts = { type: NodeGit.Proxy.PROXY.SPECIFIED, url: relay.proxyUrl };
    }
    // An in-memory remote: the URL (which may carry credentials) is never written to
    // the mirror's config, and a changed clone URL needs no config update.
    git = await NodeGit.Remote.createAnonymous(repo, relay?.source ?? remote.source);
    const callbacks = remoteCallbacks(remote, options, state, poke, relay);

    await git.connect(NodeGit.Enums.DIRECTION.FETCH, callbacks, proxyOpts, []);
    let head: string | undefined;
    try {
      head = await git.defaultBranch();
    } catch {
      head = undefined; // an empty repository, or a detached HEAD libgit2 cannot match to a branch
    }
    // The fetch reuses the connection, so it gets the refs whose HEAD was just read.
    await git.fetch(
      REFSPECS,
      {
        callbacks,
        prune: NodeGit.Fetch.PRUNE.GIT_FETCH_PRUNE,
        // Tags come through the refspec; auto-following would only add work.
        downloadTags: NodeGit.Remote.AUTOTAG_OPTION.DOWNLOAD_TAGS_NONE,
        updateFetchhead: 0,
        ...(proxyOpts === null ? {} : { proxyOpts }),
      },
      // An explicit reflog message: libgit2's default names the URL, credentials and all.
      'trawl: mirror sync',
    );
    // Throttling may have skipped the last progress call; this one has the totals.
    reportProgress(options.onProgress, git.stats());
    if (head === undefined || !head.startsWith('refs/heads/')) return {};
    await repo.setHead(head);
    return { defaultBranch: head.slice('refs/heads/'.length) };
  } catch (err) {
    throw remote.error(failureReason(err, state, relay, timeoutMs, options.credentials !== undefined), err);
  } finally {
    watchdog?.stop();
    await relay?.close();
    // Releases pack file handles now rather than at GC (the clone is renamed next).
    await repo?.cleanup().catch(() => {});
  }
}

interface SyncState {
  /** Times libgit2 asked for credentials. */
  asks: number;
  authRefused: boolean;
  timedOut: boolean;
  /** The host whose certificate did not verify. */
  badCertificate?: string;
}

function remoteCallbacks(
  remote: RemoteSpec,
  options: MirrorOptions,
  state: SyncState,
  poke: () => void,
  relay: Relay | undefined,
): NodeGit.RemoteCallbacks {
  const onProgress = options.onProgress;
  const callbacks: NodeGit.RemoteCallbacks = {
    transferProgress: {
      callback: (stats: NodeGit.IndexerProgress): number => {
        poke();
        reportProgress(onProgress, stats);
        return 0;
      },
      throttle: PROGRESS_THROTTLE_MS,
      // The stats object is libgit2's own, valid only while it waits for the callback.
      waitForResult: true,
    },
    // "Counting objects" and the like: the other side is working, though nothing arrives
    // yet (a local source's pack is built by libgit2 here, reporting through this). Not
    // throttled: a call nodegit skips gets its default answer, which for this callback is
    // 1, and libgit2's pack builder takes that for "stop" and, after inserting a tree,
    // silently leaves out the tree's blobs (the fetch succeeds; the mirror lacks objects).
    sidebandProgress: { callback: (): number => (poke(), 0), throttle: 0, waitForResult: true },
  };
  const credentials = options.credentials;
  if (remote.http !== undefined && credentials !== undefined) {
    callbacks.credentials = (_url: string, _user: string, allowed: number): NodeGit.Credential | Error => {
      state.asks++;
      if (state.asks > MAX_CREDENTIAL_ASKS || (allowed & NodeGit.Credential.TYPE.USERPASS_PLAINTEXT) === 0) {
        state.authRefused = true;
        return new Error('authentication failed'); // makes libgit2 give up
      }
      return NodeGit.Credential.userpassPlaintextNew(credentials.username, credentials.password);
    };
  }
  if (remote.http?.protocol === 'https:' && relay !== undefined) {
    // libgit2 verifies the certificate (chain and host name) and passes the verdict as
    // `valid`; a certificate that does not verify is refused. Not by returning an error,
    // though: when the TLS stream runs through a proxy, libgit2 1.9 then closes the proxy
    // stream before the TLS stream wrapped around it, and the TLS shutdown writes to freed
    // memory (the fetch hangs forever; so does libgit2's own check without a callback).
    // Instead the tunnel is cut (and the relay refuses any new one) before libgit2 is
    // let go: the request it then writes, credentials included, reaches no one, and its
    // read fails on an ordinary path.
    callbacks.certificateCheck = {
      callback: (_cert: unknown, valid: number, host: string): number => {
        if (valid !== 1) {
          state.badCertificate = host;
          relay.abort();
        }
        return 0;
      },
      waitForResult: true,
    };
  }
  // For plain https without the relay (never, today) certificateCheck would stay unset,
  // which keeps libgit2's own verification.
  return callbacks;
}

function reportProgress(onProgress: MirrorOptions['onProgress'], stats: NodeGit.IndexerProgress | undefined): void {
  if (onProgress === undefined || stats === undefined) return;
  try {
    onProgress({
      receivedObjects: stats.receivedObjects(),
      totalObjects: stats.totalObjects(),
      receivedBytes: stats.receivedBytes(),
    });
  } catch {
    // A faulty listener must not fail the fetch (a throw in a callback would abort it).
  }
}

/** The reason part of a failure message: what an operator can act on. */
function failureReason(
  err: unknown,
  state: SyncState,
  relay: Relay | undefined,
  timeoutMs: number,
  hasCredentials: boolean,
): string {
  if (state.badCertificate !== undefined) {
    return `the TLS certificate of ${state.badCertificate} does not verify (certificate rejected)`;
  }
  if (state.timedOut) return `no progress for ${formatDuration(timeoutMs)} (timed out)`;
  if (state.authRefused) return 'authentication failed (check the token)';
  if (relay?.upstreamError !== undefined) return relay.upstreamError;
  // libgit2 knows the server by the relay's address (plain http); name the real one.
  const message = relay === undefined ? errorText(err) : errorText(err).split(relay.localOrigin).join(relay.remoteOrigin);
  if (/authentication required|no callback set|status code: 401/i.test(message)) {
    return hasCredentials ? 'authentication failed (check the token)' : 'authentication required (no credentials configured)';
  }
  const status = /unexpected http status code: (\d{3})/i.exec(message)?.[1];
  if (status === '404') return 'repository not found (HTTP 404)';
  if (status === '403') return 'access denied (HTTP 403)';
  if (status !== undefined) return `the server answered HTTP ${status}`;
  if (/certificate/i.test(message)) return `TLS certificate rejected (${message})`;
  return message;
}

function formatDuration(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}

/** Calls `onExpire` once no poke came for `ms`. */
class Watchdog {
  private last = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly onExpire: () => void,
  ) {
    this.arm(ms);
  }

  readonly poke = (): void => {
    this.last = Date.now();
  };

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  // One timer re-armed for the time left, rather than a new timer on every poke.
  private arm(delay: number): void {
    this.timer = setTimeout(() => {
      const idle = Date.now() - this.last;
      if (idle >= this.ms) {
        this.timer = undefined;
        this.onExpire();
      } else {
        this.arm(this.ms - idle);
      }
    }, delay);
    this.timer.unref();
  }
}

// ---------------------------------------------------------------------------------------
// The relay

/**
 * libgit2 waits on its sockets with no timeout (its server-timeout option is not exposed
 * by nodegit), and git_remote_stop only sets a flag it checks between reads: a server
 * that stops answering would hang the fetch, and one of nodegit's few threads, forever.
 * So http(s) traffic goes through this loopback relay, which owns the sockets: it sees
 * every byte (progress for the watchdog) and can close them all, which makes libgit2's
 * read fail at once. It serves one fetch, and only the remote's host.
 *
 * https: libgit2 is given the relay as its proxy and opens a CONNECT tunnel through it;
 * the bytes in the tunnel are TLS between libgit2 and the server, so the certificate is
 * checked as without the relay. Plain http: libgit2 1.9 ignores the proxy for http URLs
 * (it connects to the server itself and only formats the request for a proxy), so it is
 * given the relay's address as the server instead, and the relay forwards each request
 * to the real server with the real Host header (a reverse proxy).
 */
interface Relay {
  /** The proxy URL for libgit2. */
  proxyUrl: string;
  /** The URL libgit2 fetches from: the remote's, or for http the relay's own address in its place. */
  source: string;
  /** "http://127.0.0.1:<port>" and the remote's origin, to translate libgit2's messages. */
  localOrigin: string;
  remoteOrigin: string;
  /** Why the relay could not reach the server, when that is what failed. */
  upstreamError?: string;
  abort(): void;
  close(): Promise<void>;
}

// Not forwarded: they describe one connection (or the proxy), not the request.
const HOP_BY_HOP = new Set([
  'connection',
  'expect',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

function bareHost(host: string): string {
  return (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();
}

async function startRelay(remote: URL, onBytes: () => void): Promise<Relay> {
  const allowed = bareHost(remote.hostname);
  const sockets = new Set<net.Socket>();
  const agent = new http.Agent({ keepAlive: true });
  const track = (s: net.Socket): void => {
    if (aborted) {
      s.destroy();
      return;
    }
    if (sockets.has(s)) return; // a kept-alive socket, reused
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  // Once aborted the relay stays shut: libgit2 may try to reconnect, and must fail.
  let aborted = false;
  const relay: Relay = {
    proxyUrl: '',
    source: remote.href,
    localOrigin: '',
    remoteOrigin: remote.origin,
    abort(): void {
      aborted = true;
      for (const s of sockets) s.destroy();
      agent.destroy();
    },
    async close(): Promise<void> {
      relay.abort();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  const refuse = (where: string): void => {
    relay.upstreamError ??= `the server redirected to ${where}, another host, which is not followed`;
  };
  const upstreamFailed = (err: unknown, where: string): void => {
    relay.upstreamError ??= `cannot reach ${where} (${networkErrorText(err)})`;
  };

  const server = http.createServer((req, res) => {
    if (aborted) {
      res.destroy();
      return;
    }
    let target: URL;
    try {
      // Origin-form ("/org/repo.git/info/refs?...") or, as libgit2 formats requests when
      // it has a proxy, absolute-form naming the relay; both mean the remote's server.
      target = new URL(req.url ?? '/', relay.localOrigin);
      if (target.origin === relay.localOrigin) {
        if (remote.protocol !== 'http:') throw new Error('https is tunnelled, not forwarded');
        target = new URL(target.pathname + target.search, remote.origin);
      }
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (target.protocol !== 'http:' || bareHost(target.hostname) !== allowed) {
      refuse(target.origin);
      res.writeHead(403).end();
      return;
    }
    req.on('data', onBytes);
    const headers = endToEnd(req.headers);
    headers['host'] = target.host;
    const up = http.request(
      {
        host: bareHost(target.hostname),
        port: target.port === '' ? 80 : Number(target.port),
        method: req.method,
        path: target.pathname + target.search,
        headers,
        agent,
      },
      (upRes) => {
        const back = endToEnd(upRes.headers);
        // A redirect within the server stays on the relay.
        const location = upRes.headers.location;
        if (location !== undefined && location.startsWith(remote.origin + '/')) {
          back['location'] = relay.localOrigin + location.slice(remote.origin.length);
        }
        res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, back);
        upRes.on('data', onBytes);
        upRes.on('error', () => res.destroy());
        upRes.pipe(res);
      },
    );
    up.on('socket', track);
    up.on('error', (err) => {
      upstreamFailed(err, target.host);
      res.destroy();
    });
    req.pipe(up);
  });
  server.on('connection', track);
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    track(client);
    if (aborted) return;
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? '');
    if (m === null || bareHost(m[1]!) !== allowed) {
      refuse(req.url ?? '?');
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const up = net.connect(Number(m[2]), bareHost(m[1]!));
    track(up);
    up.on('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on('data', onBytes);
    client.on('data', onBytes);
    up.on('error', (err) => {
      upstreamFailed(err, req.url ?? '?');
      client.destroy();
    });
    client.on('error', () => up.destroy());
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(0, '127.0.0.1', () => listening());
  });
  const { port } = server.address() as net.AddressInfo;
  relay.localOrigin = `http://127.0.0.1:${port}`;
  relay.proxyUrl = relay.localOrigin;
  if (remote.protocol === 'http:') {
    const local = new URL(remote.href); // keeps user info, path and query
    local.hostname = '127.0.0.1';
    local.port = String(port);
    relay.source = local.href;
  }
  return relay;
}

function networkErrorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'network unreachable';
    default:
      return errorText(err);
  }
}

function isErrno(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
