// A local repository's origin URL and the branch its HEAD names, read from its files, for
// the plain layout nearly every local repository has: a `.git` directory (or a bare
// repository), a HEAD that names a branch or a commit, a configuration without includes
// or URL rewriting. Listing thousands of local repositories through libgit2 cost a thread
// pool round trip and a repository open each (a third of a sync where nothing changed);
// these are three small reads.
//
// Anything else — a gitfile, a worktree, an include, an `insteadOf` rule here or in the
// user's or system's git configuration, a value this reader does not take exactly as git
// does (a continued line, a repeated url) — answers undefined, and the caller asks
// libgit2, which follows all of it. The answer must be the one libgit2 gives: the
// repository's name comes from its origin (test/repos/plain-head.test.ts compares them).

import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readBoundedText } from '../bounded-read.ts';

export interface RepositoryHead {
  /** The origin remote's URL, when there is one. */
  origin?: string;
  /** The branch HEAD names (its short name), unless HEAD is detached or the branch has no commit yet. */
  branch?: string;
}

/** HEAD and a line of packed-refs are short; a configuration or packed-refs larger than this is left to libgit2. */
const HEAD_MAX_BYTES = 4096;
const CONFIG_MAX_BYTES = 256 * 1024;
const PACKED_REFS_MAX_BYTES = 4 * 1024 * 1024;

export function readPlainHead(dir: string): RepositoryHead | undefined {
  if (globalConfigRewrites()) return undefined;
  const gitDir = plainGitDir(dir);
  if (gitDir === undefined) return undefined;
  try {
    const out: RepositoryHead = {};
    const head = readBoundedText(join(gitDir, 'HEAD'), HEAD_MAX_BYTES);
    const ref = /^ref: (refs\/[^\n]+)\n?$/.exec(head)?.[1];
    if (ref !== undefined) {
      if (!ref.startsWith('refs/heads/')) return undefined;
      const born = refExists(gitDir, ref);
      if (born === undefined) return undefined;
      if (born) out.branch = ref.slice('refs/heads/'.length);
    } else if (!/^[0-9a-f]{40}([0-9a-f]{24})?\n?$/.test(head)) return undefined;
    const origin = originUrl(readBoundedText(join(gitDir, 'config'), CONFIG_MAX_BYTES));
    if (origin === null) return undefined;
    if (origin !== undefined && origin !== '') out.origin = origin;
    return out;
  } catch {
    return undefined;
  }
}

/** The git directory of a plain repository: `.git` as a directory, or the directory itself when bare; undefined for a gitfile or a worktree. */
function plainGitDir(dir: string): string | undefined {
  const dotGit = join(dir, '.git');
  const kind = fileKind(dotGit);
  const gitDir = kind === 'dir' ? dotGit : kind === undefined ? dir : undefined;
  if (gitDir === undefined || fileKind(join(gitDir, 'commondir')) !== undefined) return undefined;
  return gitDir;
}

/** Whether `ref` has a commit (its file, or a line of packed-refs); undefined when that cannot be told here. */
function refExists(gitDir: string, ref: string): boolean | undefined {
  const kind = fileKind(join(gitDir, ref));
  if (kind === 'file') return true;
  if (kind === 'dir') return undefined;
  if (fileKind(join(gitDir, 'packed-refs')) === undefined) return false;
  const packed = readBoundedText(join(gitDir, 'packed-refs'), PACKED_REFS_MAX_BYTES);
  return packed.split('\n').some((line) => line.endsWith(` ${ref}`) && /^[0-9a-f]{40}([0-9a-f]{24})? /.test(line));
}

/**
 * The url of `[remote "origin"]` in a configuration file: the value, undefined when there
 * is none, null when the file holds what this reader leaves to libgit2 (includes, URL
 * rewriting, continued lines, a url given twice, a line it cannot read).
 */
export function originUrl(config: string): string | undefined | null {
  let section = '';
  let url: string | undefined;
  for (const raw of config.split('\n')) {
    const line = raw.replace(/\r$/, '').trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    if (line.startsWith('[')) {
      const m = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(?:[#;].*)?$/.exec(line);
      if (!m) return null;
      const name = m[1]!.toLowerCase();
      if (name === 'include' || name === 'includeif' || name === 'url' || name.includes('.')) return null;
      section = m[2] === undefined ? name : `${name} ${m[2].replace(/\\(.)/g, '$1')}`;
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!kv) return null;
    if (section !== 'remote origin' || kv[1]!.toLowerCase() !== 'url') continue;
    const value = kv[2] === undefined ? null : configValue(kv[2]);
    if (value === null || url !== undefined) return null;
    url = value;
  }
  return url;
}

/** A configuration value as git reads it (quotes, escapes, a trailing comment); null for a continued line or an unknown escape. */
function configValue(text: string): string | null {
  let out = '';
  let quoted = false;
  let pending = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      const e = text[++i];
      const map: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t', b: '\b' };
      if (e === undefined || map[e] === undefined) return null;
      out += pending + map[e];
      pending = '';
    } else if (c === '"') {
      out += pending;
      pending = '';
      quoted = !quoted;
    } else if (!quoted && (c === '#' || c === ';')) break;
    else if (!quoted && (c === ' ' || c === '\t')) pending += c;
    else {
      out += pending + c;
      pending = '';
    }
  }
  return quoted ? null : out;
}

function fileKind(path: string): 'file' | 'dir' | 'other' | undefined {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st === undefined) return undefined;
    return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
  } catch {
    return 'other';
  }
}

let rewrites: boolean | undefined;

/**
 * Whether the user's or the system's git configuration could change what a repository's
 * files say (URL rewriting, includes, remotes): then libgit2 reads every repository. Read
 * once per process.
 */
function globalConfigRewrites(): boolean {
  if (rewrites !== undefined) return rewrites;
  if (Object.keys(process.env).some((k) => k.startsWith('GIT_CONFIG'))) return (rewrites = true);
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  const files = [join(homedir(), '.gitconfig'), join(xdg, 'git', 'config'), '/etc/gitconfig'];
  rewrites = false;
  for (const f of files) {
    try {
      if (fileKind(f) === undefined) continue;
      if (/insteadof|\[\s*include|\[\s*remote|\[\s*url/i.test(readBoundedText(f, CONFIG_MAX_BYTES))) rewrites = true;
    } catch {
      rewrites = true;
    }
  }
  return rewrites;
}
