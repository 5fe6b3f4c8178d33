// A real git repository for tests, driven by the git CLI with a clean environment (the
// developer's global configuration, hooks and signing must not leak in).

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...ENV, HOME: cwd } });
}

/** git with author and committer dates set (ISO 8601 or git's "<seconds> +0000"). */
export function gitAt(cwd: string, date: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...ENV, HOME: cwd, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } });
}

/**
 * A bare repository at `path` whose branch `main` holds `files` (path, content) in one
 * commit made by git fast-import: one pack, not a loose object per file, so that a
 * repository of tens of thousands of files takes seconds.
 */
export function fastImportRepo(path: string, files: ReadonlyArray<readonly [string, string]>): void {
  git(dirname(path), 'init', '-q', '--bare', '-b', 'main', path);
  const stream = [`commit refs/heads/main\ncommitter Test <test@example.com> 1700000000 +0000\ndata 10\nmany files\n`];
  for (const [file, content] of files) stream.push(`M 100644 inline ${file}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
  execFileSync('git', ['--git-dir', path, 'fast-import', '--quiet'], { input: stream.join(''), env: { ...ENV, HOME: dirname(path) } });
}

export class TestRepo {
  constructor(readonly path: string) {}

  static init(path: string, branch = 'main'): TestRepo {
    mkdirSync(path, { recursive: true });
    git(path, 'init', '-q', '-b', branch);
    return new TestRepo(path);
  }

  /** Checks out `branch` (creating it from the current commit when `create`). */
  checkout(branch: string, create = false): this {
    git(this.path, 'checkout', '-q', ...(create ? ['-b'] : []), branch);
    return this;
  }

  /**
   * Writes (string or bytes) or deletes (null) files, then commits them all, as `as` when
   * given (author "Name <email>", and a fixed date for author and committer). Returns the
   * commit id.
   */
  commit(files: Record<string, string | Uint8Array | null>, message = 'change', as?: { author: string; date: string }): string {
    for (const [path, content] of Object.entries(files)) {
      const abs = join(this.path, path);
      if (content === null) rmSync(abs, { force: true });
      else {
        mkdirSync(dirname(abs), { recursive: true });
        writeFileSync(abs, content);
      }
    }
    git(this.path, 'add', '-A');
    const env: Record<string, string> = {};
    if (as) {
      const [, name, email] = /^(.*) <(.*)>$/.exec(as.author)!;
      Object.assign(env, {
        GIT_AUTHOR_NAME: name,
        GIT_AUTHOR_EMAIL: email,
        GIT_AUTHOR_DATE: as.date,
        GIT_COMMITTER_NAME: 'Committer',
        GIT_COMMITTER_EMAIL: 'committer@example.com',
        GIT_COMMITTER_DATE: as.date,
      });
    }
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', message], { cwd: this.path, env: { ...ENV, HOME: this.path, ...env } });
    return this.head();
  }

  head(): string {
    return git(this.path, 'rev-parse', 'HEAD').trim();
  }

  tag(name: string, annotated = false): this {
    git(this.path, 'tag', ...(annotated ? ['-a', '-m', name] : []), name);
    return this;
  }

  /** Creates many branches at once (refs written by update-ref, not one process each). */
  branches(names: string[], at = this.head()): this {
    execFileSync('git', ['update-ref', '--stdin'], {
      cwd: this.path,
      env: { ...ENV, HOME: this.path },
      input: names.map((n) => `create refs/heads/${n} ${at}\n`).join(''),
    });
    return this;
  }
}
