// The commit a benchmark result names (bench/suite/machine.ts gitCommit): "+uncommitted"
// when what runs differs from HEAD, never because of the report being written.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gitCommit } from '../../bench/suite/machine.ts';

describe('gitCommit', () => {
  let root: string;
  let head: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x.invalid', ...args], { cwd: root, encoding: 'utf8' }).trim();

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'trawl-bench-commit-'));
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(join(root, 'main.ts'), 'export {};\n');
    writeFileSync(join(root, 'bench', 'results', 'old.md'), 'an older report\n');
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
    head = git('rev-parse', 'HEAD');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  // Each row changes the tree, checks, and puts it back.
  const rows: Array<{ name: string; change: () => void; undo: () => void; dirty: boolean }> = [
    { name: 'a clean tree', change: () => {}, undo: () => {}, dirty: false },
    {
      name: 'a report being written into bench/results',
      change: () => writeFileSync(join(root, 'bench', 'results', 'new.md'), ''),
      undo: () => rmSync(join(root, 'bench', 'results', 'new.md')),
      dirty: false,
    },
    {
      name: 'a committed report edited',
      change: () => writeFileSync(join(root, 'bench', 'results', 'old.md'), 'notes added\n'),
      undo: () => git('checkout', '--', 'bench/results/old.md'),
      dirty: false,
    },
    {
      name: 'a source file edited',
      change: () => writeFileSync(join(root, 'main.ts'), 'export const x = 1;\n'),
      undo: () => git('checkout', '--', 'main.ts'),
      dirty: true,
    },
    {
      name: 'a new file outside bench/results',
      change: () => writeFileSync(join(root, 'extra.ts'), ''),
      undo: () => rmSync(join(root, 'extra.ts')),
      dirty: true,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      row.change();
      try {
        assert.equal(gitCommit(root), row.dirty ? `${head}+uncommitted` : head);
      } finally {
        row.undo();
      }
    });
  }

  it('says "uncommitted" outside a repository with no commit', () => {
    const bare = mkdtempSync(join(tmpdir(), 'trawl-bench-nocommit-'));
    try {
      execFileSync('git', ['init', '-q'], { cwd: bare });
      assert.equal(gitCommit(bare), 'uncommitted');
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
