// The compiled build's generated configuration validator (scripts/compile.js,
// configValidatorCode) must accept exactly what the runtime validator (schema.ts) accepts:
// it answers isValidConfig for every command that reads a configuration file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { configValidatorCode } from '../../scripts/compile.js';
import { validator } from '../../daemon/config/schema.ts';
import { INSTALL_ROOT } from '../../daemon/install-root.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

async function generated(): Promise<(doc: unknown) => boolean> {
  const code = await configValidatorCode();
  assert.ok(code, 'the checkout has the schema');
  const module = { exports: {} as { default?: (doc: unknown) => boolean } };
  new Function('require', 'module', 'exports', code)(createRequire(join(INSTALL_ROOT, 'package.json')), module, module.exports);
  return module.exports.default!;
}

/** Small random edits of a valid document: values of other types, keys removed or made up, enums and numbers off. */
function mutate(doc: Json, rand: () => number): Json {
  const copy = structuredClone(doc);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const odd: Json[] = [null, true, 0, -1, 1.5, 1e9, '', 'x', 'https://h/', [], {}, ['a'], { env: 'X' }, { type: 'git' }];
  for (let edits = 1 + Math.floor(rand() * 3); edits > 0; edits--) {
    // Walk to a random object or array inside the copy.
    let node: Json = copy;
    for (let depth = 0; depth < 6; depth++) {
      const kids = node !== null && typeof node === 'object' ? Object.values(node).filter((v) => v !== null && typeof v === 'object') : [];
      if (kids.length === 0 || rand() < 0.3) break;
      node = pick(kids as Json[]);
    }
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      if (node.length > 0 && rand() < 0.5) node.splice(Math.floor(rand() * node.length), 1);
      else node.push(structuredClone(pick(odd)));
      continue;
    }
    const keys = Object.keys(node);
    const r = rand();
    if (keys.length > 0 && r < 0.35) delete node[pick(keys)];
    else if (keys.length > 0 && r < 0.8) node[pick(keys)] = structuredClone(pick(odd));
    else node[pick(['extra', 'type', 'url', 'token', 'revisions', 'exclude', 'settings'])] = structuredClone(pick(odd));
  }
  return copy;
}

test('the generated validator accepts exactly what the runtime validator accepts', async () => {
  const quick = await generated();
  const full = validator();
  const example = JSON.parse(readFileSync(join(INSTALL_ROOT, 'daemon/config/example.trawl.json'), 'utf8')) as Json;
  const docs: Json[] = [example, {}, { settings: {} }, { connections: {} }, null, [], 'x', { unknown: 1 }];
  let seed = 20261124;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let i = 0; i < 1500; i++) docs.push(mutate(example, rand));
  let valid = 0;
  for (const doc of docs) {
    const want = full(doc);
    assert.equal(quick(doc), want, JSON.stringify(doc));
    if (want) valid++;
  }
  // Both answers occur often enough for the agreement to mean something.
  assert.ok(valid > 50 && valid < docs.length - 50, `${valid} of ${docs.length} valid`);
});
