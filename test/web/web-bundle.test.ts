// The web UI's script budget: the search page loads the entry script and the chunks it
// imports statically (a module graph the browser fetches before the page runs), and that
// must stay at most 40 KB gzipped; CodeMirror and the grammars must be chunks it reaches
// only through import(), loaded by the pages that show code. Sizes, not times: this test
// cannot flake on a busy machine.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { buildAssets, type Asset } from '../../daemon/web/assets.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUDGET_GZIP_BYTES = 40 * 1024;

/** The chunks a module imports statically (`import ... from "./chunk-X.js"`, `import "./chunk-X.js"`), not through import(). */
function staticImports(js: string): string[] {
  const out: string[] = [];
  for (const m of js.matchAll(/(?:\bfrom|\bimport)\s*"\.\/(chunk-[A-Z0-9]+\.js)"/g)) out.push(m[1]!);
  return out;
}

/** The chunks `import("./chunk-X.js")` loads on demand. */
function dynamicImports(js: string): string[] {
  return [...js.matchAll(/\bimport\(\s*"\.\/(chunk-[A-Z0-9]+\.js)"\s*\)/g)].map((m) => m[1]!);
}

test("static and dynamic imports are told apart in esbuild's output", () => {
  const js = 'import{a as b}from"./chunk-AB12.js";import"./chunk-CD34.js";const x=()=>import("./chunk-EF56.js");';
  assert.deepEqual(staticImports(js), ['chunk-AB12.js', 'chunk-CD34.js']);
  assert.deepEqual(dynamicImports(js), ['chunk-EF56.js']);
});

test("the search page's JavaScript is at most 40 KB gzipped; CodeMirror and the grammars load on demand", async () => {
  const assets = await buildAssets(ROOT);
  const byName = new Map<string, Asset>(assets.chunks.map((c) => [c.path.slice('/-/static/'.length), c]));
  const closure = new Set<string>();
  const visit = (js: string) => {
    for (const name of staticImports(js)) {
      if (closure.has(name)) continue;
      const chunk = byName.get(name);
      assert.ok(chunk, `${name} is imported but not served`);
      closure.add(name);
      visit(chunk.body.toString());
    }
  };
  visit(assets.script.body.toString());
  const loaded = [assets.script, ...[...closure].map((n) => byName.get(n)!)];
  const gzip = loaded.reduce((n, a) => n + a.gzip.length, 0);
  assert.ok(gzip <= BUDGET_GZIP_BYTES, `the search page loads ${gzip} bytes of gzipped JavaScript (${loaded.length} files), over ${BUDGET_GZIP_BYTES}`);
  const text = loaded.map((a) => a.body.toString()).join('\n');
  assert.doesNotMatch(text, /cm-scroller/, "CodeMirror's view is not on the search page");
  assert.ok(dynamicImports(assets.script.body.toString()).length >= 1, 'the entry loads the code pages on demand');
  // Every grammar is a chunk of its own: the TypeScript one is reachable only through import().
  const grammars = assets.chunks.filter((c) => /typescript/i.test(c.body.toString()) && /jsxText|JSXText/.test(c.body.toString()));
  assert.ok(grammars.length >= 1, 'the JavaScript/TypeScript grammar is a chunk');
  for (const g of grammars) assert.ok(!closure.has(g.path.slice('/-/static/'.length)), `${g.path} is not loaded by the search page`);
});
