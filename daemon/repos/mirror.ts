// Bare mirrors of remote repositories in the data dir, kept with nodegit (libgit2) only.
// A mirror's branches and tags are exactly the remote's: a fetch force-updates them and
// prunes what the remote no longer has, and HEAD follows the remote's default branch.
// http(s) traffic goes through a loopback relay in this process so that a stalled server
// can be cut off (relay.ts); several choices below work around libgit2 1.9 and nodegit
// bugs, each explained where it is made. A mirror's refs are read by refs.ts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, parse as parsePath, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import NodeGit from 'nodegit';
import { errorText } from '../errors.ts';
import { acquireLock } from '../runtime/lock-file.ts';
import { removeLeftoverTemps } from '../runtime/left-behind.ts';
import { isGitRepository } from './git-dir.ts';
import { startRelay, type Relay } from './relay.ts';

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
  // same data dir) are kept (runtime/left-behind.ts).
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
      const text = redact(`cannot ${verb} ${display}: ${reason}`, secrets)
        .replace(/\s*\n\s*/g, ' ')
        .trim();
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
async function fetchInto(repoPath: string, remote: RemoteSpec, options: MirrorOptions, create: boolean): Promise<{ defaultBranch?: string }> {
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

function remoteCallbacks(remote: RemoteSpec, options: MirrorOptions, state: SyncState, poke: () => void, relay: Relay | undefined): NodeGit.RemoteCallbacks {
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
function failureReason(err: unknown, state: SyncState, relay: Relay | undefined, timeoutMs: number, hasCredentials: boolean): string {
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

function isErrno(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}
