// A git repository with a history that exercises what a history index must get right:
// branches merged back (merge commits with two parents), renames, deletions, binary
// files, a symbolic link, an empty commit, a tag, and a branch that was force-pushed (its
// old commits unreachable). Content is lines of the differential tests' words, so that
// random queries find something. Seeded: the same seed makes the same trees.

import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WORDS, prng } from './corpus.ts';
import { git, gitAt, TestRepo } from './git.ts';

export interface HistoryRepo {
  repo: TestRepo;
  /** Every commit the indexed refs (main, tags) reach, oldest first. */
  commits: string[];
  /** A commit that was on a branch before it was force-pushed away (unreachable now). */
  dropped: string;
}

function lines(r: ReturnType<typeof prng>, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: 1 + r.int(6) }, () => r.pick(WORDS));
    out.push(`${' '.repeat(r.int(3) * 2)}${words.join(r.chance(0.3) ? '_' : ' ')}${r.chance(0.2) ? '();' : ''}`);
  }
  return `${out.join('\n')}\n`;
}

/**
 * Makes the repository at `path` (a work tree, branch main): `rounds` changes, files of `scale` times
 * a few dozen lines. Each commit is made a day after
 * the one before, from 2020-01-01 (so that `at:` names one commit per day).
 */
export function makeHistoryRepo(path: string, seed: number, rounds = 24, scale = 1): HistoryRepo {
  const r = prng(seed);
  const repo = new DatedRepo(TestRepo.init(path).path);
  const paths = ['src/a.c', 'src/b.c', 'README.md', 'lib/util.ts', 'docs/guide.txt'];
  repo.commit(Object.fromEntries(paths.map((p) => [p, lines(r, scale * (5 + r.int(20)))])), 'initial');
  let n = 0;
  for (let round = 0; round < rounds; round++) {
    const kind = r.int(8);
    if (kind === 0 && paths.length > 2) {
      // A rename (git sees a delete and an add).
      const from = paths.splice(r.int(paths.length), 1)[0]!;
      const to = `moved/${n++}-${from.split('/').pop()}`;
      mkdirSync(join(path, 'moved'), { recursive: true });
      git(path, 'mv', from, to);
      paths.push(to);
      repo.commit({}, `rename ${from}`);
    } else if (kind === 1 && paths.length > 3) {
      const gone = paths.splice(r.int(paths.length), 1)[0]!;
      repo.commit({ [gone]: null }, `delete ${gone}`);
    } else if (kind === 2) {
      // A side branch with two commits, merged back with a merge commit.
      const side = `side-${round}`;
      repo.checkout(side, true);
      const p = r.pick(paths);
      repo.commit({ [p]: lines(r, 8) }, `side change of ${p}`);
      const added = `side/${n++}.go`;
      paths.push(added);
      repo.commit({ [added]: lines(r, 6) }, 'side file');
      repo.checkout('main');
      const q = paths.find((x) => x !== p && x !== added) ?? p;
      repo.commit({ [q]: lines(r, 7) }, `main change of ${q}`);
      gitAt(path, repo.nextDate(), 'merge', '-q', '--no-ff', '-X', 'theirs', '-m', `merge ${side}`, side);
    } else if (kind === 3) {
      const bin = `assets/${n++}.bin`;
      repo.commit({ [bin]: Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + round) & 0xff) }, 'binary');
    } else if (kind === 4) {
      repo.commit({}, 'empty');
    } else {
      const p = r.pick(paths);
      repo.commit({ [p]: lines(r, scale * (3 + r.int(25))) }, `change ${p}`);
    }
    if (round === 5) repo.tag('v0.1', true);
    if (round === 8) {
      symlinkSync('src/a.c', join(path, 'link-to-a'));
      repo.commit({}, 'a symbolic link');
    }
  }
  // A branch force-pushed: its first commit is left unreachable.
  repo.checkout('gone', true);
  const dropped = repo.commit({ 'src/dropped.c': lines(r, 4) }, 'to be dropped');
  repo.checkout('main');
  git(path, 'branch', '-q', '-D', 'gone');
  git(path, 'reflog', 'expire', '--expire=now', '--all');
  for (const b of git(path, 'branch', '--format=%(refname:short)').split('\n')) if (b.startsWith('side-')) git(path, 'branch', '-q', '-D', b);
  const commits = git(path, 'rev-list', '--reverse', '--topo-order', 'main', 'v0.1').trim().split('\n');
  return { repo, commits, dropped };
}

/** A test repository whose commits are a day apart. */
class DatedRepo extends TestRepo {
  private day = 0;

  nextDate(): string {
    return `${Date.UTC(2020, 0, 1) / 1000 + 86_400 * this.day++} +0000`;
  }

  override commit(files: Record<string, string | Uint8Array | null>, message = 'change'): string {
    return super.commit(files, message, { author: 'Test <test@example.com>', date: this.nextDate() });
  }
}
