import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectLanguage, shebangInterpreter } from '../../daemon/index/language.ts';
import { isKnownLanguage } from '../../daemon/index/language-names.ts';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

// [path, head or undefined, expected language]
const cases: Array<[string, string | undefined, string]> = [
  ['foo.c', undefined, 'C'],
  ['include/linux/bar.h', undefined, 'C'],
  ['src/x.cc', undefined, 'C++'],
  ['src/x.hpp', undefined, 'C++'],
  ['config.h.in', undefined, 'C'],
  ['main.go', undefined, 'Go'],
  ['go.mod', undefined, 'Go Module'],
  ['src/lib.rs', undefined, 'Rust'],
  ['app/index.ts', undefined, 'TypeScript'],
  ['types/index.d.ts', undefined, 'TypeScript'],
  ['ui/App.tsx', undefined, 'TSX'],
  ['web/app.js', undefined, 'JavaScript'],
  ['web/app.mjs', undefined, 'JavaScript'],
  ['tool.py', undefined, 'Python'],
  ['Makefile', undefined, 'Makefile'],
  ['scripts/Makefile.build', undefined, 'Makefile'],
  ['rules.mk', undefined, 'Makefile'],
  ['Dockerfile', undefined, 'Dockerfile'],
  ['docker/Dockerfile.dev', undefined, 'Dockerfile'],
  ['drivers/net/Kconfig', undefined, 'Kconfig'],
  ['lib/Kconfig.debug', undefined, 'Kconfig'],
  ['arch/arm64/boot/dts/foo.dtsi', undefined, 'Device Tree'],
  ['run.sh', undefined, 'Shell'],
  ['.bashrc', undefined, 'Shell'],
  ['ci.yml', undefined, 'YAML'],
  ['deploy.yaml', undefined, 'YAML'],
  ['package.json', undefined, 'JSON'],
  ['README.md', undefined, 'Markdown'],
  ['NOTES.MD', undefined, 'Markdown'], // case-insensitive fallback
  ['FOO.C', undefined, 'C'],
  ['script.pl', undefined, 'Perl'],
  ['View.m', undefined, 'Objective-C'],
  ['solve.m', '% MATLAB script\nx = 1;\n', 'MATLAB'],
  ['schema.sql', undefined, 'SQL'],
  ['rtl/top.v', undefined, 'Verilog'],
  ['X86GenInstrInfo.inc', undefined, 'C++'],
  ['header.inc', '<?php echo 1;', 'PHP'],
  ['.gitignore', undefined, 'Ignore List'],
  ['CMakeLists.txt', undefined, 'CMake'],
  ['notes.txt', undefined, 'Text'],
  ['arch/x86/entry/entry_64.S', undefined, 'Assembly'],
  // shebangs
  ['bin/tool', '#!/usr/bin/env python3\nprint(1)\n', 'Python'],
  ['bin/tool2', '#!/usr/bin/python3.11 -u\n', 'Python'],
  ['bin/build', '#!/bin/bash\nset -e\n', 'Shell'],
  ['bin/serve', '#!/usr/bin/env -S node --enable-source-maps\n', 'JavaScript'],
  ['bin/t', '#!/usr/bin/env FOO=1 perl -w\n', 'Perl'],
  ['bin/x.sh', '#!/usr/bin/env python3\n', 'Shell'], // the extension wins
  // unknown
  ['data.qqqzzz', undefined, ''],
  ['LICENSE-unknown-thing', undefined, ''],
  ['bin/blob', '\x7fELF\x02\x01', ''],
  ['bin/weird', '#!/opt/nothing/frobnicate\n', ''],
];

test('detectLanguage table', () => {
  for (const [path, head, want] of cases) {
    assert.equal(detectLanguage(path, head === undefined ? undefined : bytes(head)), want, path);
  }
});

test('shebangInterpreter', () => {
  assert.equal(shebangInterpreter(bytes('#!/usr/bin/env python3')), 'python3');
  assert.equal(shebangInterpreter(bytes('#! /bin/sh\n')), 'sh');
  assert.equal(shebangInterpreter(bytes('#!/usr/bin/env -u HOME ruby\n')), 'ruby');
  assert.equal(shebangInterpreter(bytes('# not a shebang')), undefined);
  assert.equal(shebangInterpreter(bytes('')), undefined);
});

test('isKnownLanguage is case-insensitive and knows aliases', () => {
  assert.equal(isKnownLanguage('python'), 'Python');
  assert.equal(isKnownLanguage('C'), 'C');
  assert.equal(isKnownLanguage('c++'), 'C++');
  assert.equal(isKnownLanguage('cpp'), 'C++');
  assert.equal(isKnownLanguage('golang'), 'Go');
  assert.equal(isKnownLanguage('TYPESCRIPT'), 'TypeScript');
  assert.equal(isKnownLanguage('kconfig'), 'Kconfig');
  assert.equal(isKnownLanguage('no-such-language'), undefined);
});
