// The documentation points at things that exist: every relative link of README.md,
// docs/*.md and bench/*.md reaches a file of this repository (and a heading of it,
// for `#anchor` links), no link leaves the repository, and every source path the pages
// name in backticks, or in the folder map of docs/where-things-live.md, is there. A file moved or renamed
// without its documentation fails here, naming the page and the path.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');
const PAGES = [
  'README.md',
  'bench/README.md',
  'bench/METHOD.md',
  'bench/HISTORY.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
/** Top-level folders whose paths the pages name. */
const SOURCE_DIRS = ['bench', 'bin', 'core', 'daemon', 'docs', 'native', 'scripts', 'test', 'web'];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(page: string): Set<string> {
  const text = readFileSync(page, 'utf8').replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** Markdown text without code blocks (fenced or indented) and inline code. */
function prose(text: string): string {
  return text
    .replace(/^(```|~~~)[\s\S]*?^\1/gm, '')
    .split('\n')
    .filter((l) => !l.startsWith('    '))
    .join('\n')
    .replace(/`[^`\n]*`/g, '');
}

test('slug: as GitHub makes heading anchors', () => {
  assert.equal(slug('Seeing and ending credentials'), 'seeing-and-ending-credentials');
  assert.equal(slug('Tool server (MCP) and OAuth'), 'tool-server-mcp-and-oauth');
  assert.equal(slug('`trawl bench compare OLD.json NEW.json`'), 'trawl-bench-compare-oldjson-newjson');
});

for (const page of PAGES) {
  test(`${page}: every relative link reaches a file (and heading) of the repository`, () => {
    const file = join(ROOT, page);
    const problems: string[] = [];
    for (const m of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^(https?:|mailto:)/.test(target)) continue;
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const to = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const rel = relative(ROOT, to);
      if (rel.startsWith('..')) {
        problems.push(`${target}: outside the repository`);
        continue;
      }
      if (!existsSync(to)) {
        problems.push(`${target}: no such file (${rel})`);
        continue;
      }
      if (anchor !== undefined && to.endsWith('.md') && !anchors(to).has(anchor)) problems.push(`${target}: ${rel} has no heading "#${anchor}"`);
    }
    assert.deepEqual(problems, []);
  });

  test(`${page}: every source path it names exists`, () => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const named = new Set<string>();
    for (const m of text.matchAll(/`([^`\s]+)`/g)) {
      const p = m[1]!;
      if (!SOURCE_DIRS.some((d) => p.startsWith(`${d}/`))) continue;
      if (/[<>*…{}$]|\.\.\./.test(p)) continue; // a pattern or a placeholder, not a path
      named.add(p.replace(/[:,.;)]+$/, ''));
    }
    // The folder map of docs/where-things-live.md: one indented line per folder or file.
    if (page === 'docs/where-things-live.md') {
      const map = text.slice(text.indexOf('## What each folder holds'), text.indexOf('## A search'));
      for (const m of map.matchAll(/^ {4}(\S+)/gm)) if (!/[*]/.test(m[1]!)) named.add(m[1]!);
    }
    assert.ok(page !== 'docs/where-things-live.md' || named.size > 20, 'the folder map was read');
    const missing = [...named].filter((p) => !existsSync(join(ROOT, p)));
    assert.deepEqual(missing, [], `${page} names paths that do not exist`);
  });
}
