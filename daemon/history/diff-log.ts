// The added and removed lines of commits, as git itself shows them: one `git log -p -U0`
// over the commits, parsed. What git shows is what `git log -G` searches (its pickaxe runs
// on the same diffs: rename detection as the repository's configuration has it, a merge
// shown without a diff, a root commit against the empty tree, nothing for a binary file),
// so a commit has a line matching a pattern here exactly when `git log -G` lists it.
//
// Output format read (git-log(1), `--format` below, `-p -U0 --no-color`): per commit
//   \x01\x01 <id> \0 \x01\x02
// (the rest of a commit, its parents, people and message, is in the commit records:
// commit-records.ts) then its patch, a `diff --git` block per changed path: header lines
// (`rename from X`, `--- a/X` or `--- /dev/null`, `+++ b/Y`), then hunks:
// `@@ -a[,b] +c[,d] @@...` and their lines, `+text` or `-text`, a line followed by
// `\ No newline at end of file` being the last of its file without a line end. A path git
// quotes ("a/\303\251") is unquoted. No diff line starts with \x01, so the next commit
// starts at the first line that does.

import { runGit } from '../repos/git-command.ts';

/** The largest `git log -p` output read at once (a batch of commits). */
const PATCH_MAX_BYTES = 1024 * 1024 * 1024;
/** Commits per `git log` run: their ids are its arguments. */
const BATCH = 1000;

/** One hunk: its header's numbers and its lines in order. */
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The line's bytes without its sign and line end; `added` false: removed; `noEol`: the file's last line, without a line end. */
  lines: DiffLine[];
}

export interface DiffLine {
  added: boolean;
  text: Buffer;
  noEol?: true;
}

/** A changed path of a commit with lines (a binary, mode-only or pure rename change has none and is left out). */
export interface DiffFile {
  /** The path after the change (before it, for a deletion). */
  path: string;
  /** The path before a rename or copy. */
  oldPath?: string;
  hunks: DiffHunk[];
}

export interface LoggedDiff {
  /** The commit's id. */
  id: string;
  files: DiffFile[];
}

const FORMAT = '--format=%x01%x01%H%x00%x01%x02';

/** The `git log` options of the output parsePatchLog reads. */
export const PATCH_OPTIONS: readonly string[] = ['-p', '-U0', '--no-color', '--no-ext-diff', '--no-textconv', '--src-prefix=a/', '--dst-prefix=b/', FORMAT];

/** The diffs of commits `ids` of the repository at `gitDir` (each once, in no set order). */
export async function logDiffs(gitDir: string, ids: readonly string[]): Promise<LoggedDiff[]> {
  const out: LoggedDiff[] = [];
  for (let at = 0; at < ids.length; at += BATCH) {
    const log = await runGit(
      gitDir,
      ['-c', 'log.showSignature=false', 'log', '--no-walk=unsorted', ...PATCH_OPTIONS, ...ids.slice(at, at + BATCH), '--'],
      PATCH_MAX_BYTES,
    );
    out.push(...parsePatchLog(log));
  }
  return out;
}

/** Parses `git log -p` output of the format in the header. */
export function parsePatchLog(out: Buffer): LoggedDiff[] {
  const diffs: LoggedDiff[] = [];
  let current: LoggedDiff | undefined;
  let file: { path?: string; oldPath?: string; renamedFrom?: string; hunks: DiffHunk[] } | undefined;
  let hunk: DiffHunk | undefined;
  const endFile = (): void => {
    if (current && file && file.hunks.length > 0) {
      const path = file.path ?? file.oldPath;
      if (path === undefined) throw new Error('git log -p: a hunk without its path');
      const oldPath = file.renamedFrom ?? (file.oldPath !== undefined && file.oldPath !== path && file.path !== undefined ? file.oldPath : undefined);
      current.files.push(oldPath === undefined ? { path, hunks: file.hunks } : { path, oldPath, hunks: file.hunks });
    }
    file = undefined;
    hunk = undefined;
  };
  let at = 0;
  while (at < out.length) {
    if (out[at] === 0x01 && out[at + 1] === 0x01) {
      endFile();
      const end = out.indexOf('\x00\x01\x02', at);
      if (end < 0) throw new Error('git log -p: a commit header without its end');
      const id = out.toString('latin1', at + 2, end);
      if (!COMMIT_ID.test(id)) throw new Error(`git log -p: a commit header without its id: ${JSON.stringify(id.slice(0, 80))}`);
      current = { id, files: [] };
      diffs.push(current);
      at = end + 3;
      continue;
    }
    let eol = out.indexOf(0x0a, at);
    if (eol < 0) eol = out.length;
    const first = out[at];
    if (hunk !== undefined && (first === 0x2b || first === 0x2d)) {
      hunk.lines.push({ added: first === 0x2b, text: out.subarray(at + 1, eol) });
    } else if (hunk !== undefined && first === 0x5c) {
      const last = hunk.lines[hunk.lines.length - 1];
      if (last !== undefined) last.noEol = true;
    } else if (first === 0x40 && out[at + 1] === 0x40) {
      if (file === undefined) throw new Error('git log -p: a hunk outside a file');
      hunk = hunkHeader(out.toString('latin1', at, eol));
      file.hunks.push(hunk);
    } else if (first === 0x64 && startsWith(out, at, 'diff --git ')) {
      endFile();
      file = { hunks: [] };
    } else if (file !== undefined && hunk === undefined) {
      const line = out.toString('utf8', at, eol);
      if (line.startsWith('--- ')) {
        const p = diffPath(line.slice(4), 'a/');
        if (p !== undefined) file.oldPath = p;
      } else if (line.startsWith('+++ ')) {
        const p = diffPath(line.slice(4), 'b/');
        if (p !== undefined) file.path = p;
      } else if (line.startsWith('rename from ') || line.startsWith('copy from ')) {
        file.renamedFrom = unquote(line.slice(line.indexOf(' from ') + 6));
      }
    }
    at = eol + 1;
  }
  endFile();
  return diffs;
}

function startsWith(buf: Buffer, at: number, s: string): boolean {
  return buf.toString('latin1', at, at + s.length) === s;
}

/** A commit id: SHA-1 or SHA-256, in hex. */
const COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function hunkHeader(line: string): DiffHunk {
  const m = HUNK.exec(line);
  if (m === null) throw new Error(`git log -p: unreadable hunk header ${JSON.stringify(line.slice(0, 80))}`);
  return {
    oldStart: Number(m[1]),
    oldLines: m[2] === undefined ? 1 : Number(m[2]),
    newStart: Number(m[3]),
    newLines: m[4] === undefined ? 1 : Number(m[4]),
    lines: [],
  };
}

/** The path of a `---`/`+++` line's value: undefined for /dev/null. Git ends a name holding a space with a tab. */
function diffPath(value: string, prefix: string): string | undefined {
  if (value.endsWith('\t')) value = value.slice(0, -1);
  if (value === '/dev/null') return undefined;
  const path = unquote(value);
  if (!path.startsWith(prefix)) throw new Error(`git log -p: a path without its ${prefix} prefix: ${JSON.stringify(value)}`);
  return path.slice(prefix.length);
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** A name as git writes it: as is, or in double quotes with C escapes and octal bytes. */
export function unquote(s: string): string {
  if (!s.startsWith('"') || !s.endsWith('"') || s.length < 2) return s;
  const bytes: number[] = [];
  const body = Buffer.from(s.slice(1, -1), 'utf8');
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== 0x5c) {
      bytes.push(c);
      continue;
    }
    const e = String.fromCharCode(body[i + 1]!);
    if (e >= '0' && e <= '7') {
      bytes.push(Number.parseInt(body.toString('latin1', i + 1, i + 4), 8));
      i += 3;
    } else {
      const v = ESCAPES[e];
      if (v === undefined) throw new Error(`git log -p: unknown escape \\${e} in ${s}`);
      bytes.push(v);
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
