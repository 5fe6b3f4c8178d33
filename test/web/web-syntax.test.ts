// The web UI's syntax layer in Node (no browser): which CodeMirror language a file gets
// from the daemon's linguist name or its file name (web/app/syntax.ts), the highlighted
// lines as escaped HTML (every character of the source escaped, tokens that span lines
// classed on each line), and a diff hunk's two sides woven back with their line numbers
// (web/app/diff-lines.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeLanguage, highlightedLines, loadLanguage } from '../../web/app/syntax.ts';
import { hunkLines, lineCounts } from '../../web/app/diff-lines.ts';

// [linguist name (or undefined), path, CodeMirror language (null: shown plain)]
const LANGUAGES: Array<[string | undefined, string, string | null]> = [
  ['TypeScript', 'src/a.ts', 'TypeScript'],
  ['TSX', 'src/a.tsx', 'TSX'],
  ['JavaScript', 'a.js', 'JavaScript'],
  ['C', 'kernel/sched/core.c', 'C'],
  ['C++', 'a.cc', 'C++'],
  ['Go', 'main.go', 'Go'],
  ['Python', 'setup.py', 'Python'],
  ['Rust', 'lib.rs', 'Rust'],
  ['Java', 'A.java', 'Java'],
  ['Shell', 'scripts/setup.sh', 'Shell'],
  ['Markdown', 'README.md', 'Markdown'],
  ['YAML', '.github/workflows/ci.yml', 'YAML'],
  ['JSON', 'package.json', 'JSON'],
  ['Dockerfile', 'Dockerfile', 'Dockerfile'],
  ['Makefile', 'Makefile', null],
  // linguist names CodeMirror spells otherwise
  ['Protocol Buffer', 'a.proto', 'ProtoBuf'],
  ['Unix Assembly', 'arch/x86/entry.S', 'Gas'],
  ['JSON with Comments', 'tsconfig.json', 'JSON'],
  ['INI', 'setup.cfg', 'Properties files'],
  ['Starlark', 'BUILD.bazel', 'Python'],
  ['Roff', 'man/trawl.1', 'Troff'],
  ['Diff', 'fix.patch', 'diff'],
  // no linguist name: the file name decides
  [undefined, 'Cargo.toml', 'TOML'],
  [undefined, 'src/x.ts', 'TypeScript'],
  ['', 'notes.txt', null],
  // an unknown name falls back to the file name, then to plain text
  ['Klingon', 'a.py', 'Python'],
  ['Klingon', 'a.klingon', null],
];

test("a file's language: the linguist name, else the file name, else plain", () => {
  for (const [name, path, expected] of LANGUAGES) {
    assert.equal(describeLanguage(name, path)?.name ?? null, expected, `${name} ${path}`);
  }
});

test('highlighted lines: escaped, one string per line, a token spanning lines classed on each', async () => {
  const ts = await loadLanguage('TypeScript', 'a.ts');
  assert.ok(ts, 'the TypeScript grammar loads in Node too');
  const lines = highlightedLines('const a = "<b>&";\n/* one\ntwo */\nlet x = 1;\n', ts);
  assert.equal(lines.length, 5, 'a final newline gives a last empty line');
  assert.match(
    lines[0]!,
    /^<span class="tok-keyword">const<\/span> <span class="tok-variableName tok-definition">a<\/span> <span class="tok-operator">=<\/span> <span class="tok-string">&#34;&#60;b&#62;&#38;&#34;<\/span>/,
  );
  assert.equal(lines[1], '<span class="tok-comment">/* one</span>');
  assert.equal(lines[2], '<span class="tok-comment">two */</span>');
  assert.equal(lines[4], '');
  // Without a grammar only the escaping.
  assert.deepEqual(highlightedLines('a < b\n"x"', undefined), ['a &#60; b', '&#34;x&#34;']);
  assert.deepEqual(highlightedLines('', undefined), ['']);
});

test('a diff hunk: each side highlighted whole, woven back with old and new line numbers', async () => {
  const ts = await loadLanguage('TypeScript', 'a.ts');
  const hunk = {
    oldRange: { start: 10, lines: 4 },
    newRange: { start: 10, lines: 4 },
    body: [' /* a comment', '-   old', '+   new', ' */', '-let gone = 1;', '+const kept = 2;', '\\ No newline at end of file'].join('\n'),
  };
  const lines = hunkLines(hunk, ts);
  assert.deepEqual(
    lines.map((l) => [l.kind, l.old ?? null, l.new ?? null]),
    [
      ['context', 10, 10],
      ['del', 11, null],
      ['add', null, 11],
      ['context', 12, 12],
      ['del', 13, null],
      ['add', null, 13],
      ['note', null, null],
    ],
  );
  // The removed and the added line are inside the comment on their own sides.
  assert.equal(lines[1]!.html, '<span class="tok-comment">   old</span>');
  assert.equal(lines[2]!.html, '<span class="tok-comment">   new</span>');
  assert.match(lines[4]!.html, /^<span class="tok-keyword">let<\/span>/);
  assert.match(lines[5]!.html, /^<span class="tok-keyword">const<\/span>/);
  assert.equal(lines[6]!.html, 'No newline at end of file');
  assert.deepEqual(lineCounts([hunk]), { added: 2, removed: 2 });
});
