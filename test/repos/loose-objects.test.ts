// Loose blobs read without git (loose-objects.ts): the blob's bytes, or nothing when git
// must be asked (no loose file, another size, a damaged file).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLooseBlob } from '../../daemon/repos/loose-objects.ts';
import { git } from '../helpers/git.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-loose-'));
after(() => rmSync(dir, { recursive: true, force: true }));
git(dir, 'init', '-q', '-b', 'main');
const objects = join(dir, '.git', 'objects');

function blob(bytes: Buffer): string {
  writeFileSync(join(dir, 'f'), bytes);
  return git(dir, 'hash-object', '-w', 'f').trim();
}

test("readLooseBlob: a loose blob's bytes; nothing for another size, a missing object or a damaged file", () => {
  for (const bytes of [Buffer.from('int main(void) { return 0; }\n'), Buffer.alloc(0), Buffer.from([0, 0xff, 0x0a, 0]), Buffer.from('x'.repeat(300_000))]) {
    const oid = blob(bytes);
    assert.deepEqual(Buffer.from(readLooseBlob(objects, oid, bytes.length)!), bytes);
    assert.equal(readLooseBlob(objects, oid, bytes.length + 1), undefined);
  }
  assert.equal(readLooseBlob(objects, '0123456789abcdef0123456789abcdef01234567', 3), undefined);
  assert.equal(readLooseBlob(objects, '../../etc/passwd', 3), undefined);
  const damaged = blob(Buffer.from('will be damaged\n'));
  const path = join(objects, damaged.slice(0, 2), damaged.slice(2));
  chmodSync(path, 0o644);
  writeFileSync(path, 'not zlib at all');
  assert.equal(readLooseBlob(objects, damaged, 16), undefined);
});
