import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { languageNameTable } from '../../daemon/index/language.ts';
import { LANGUAGE_NAMES_FILE } from '../../daemon/index/language-names.ts';

test('language-names.json is the table linguist gives (else: node --import tsx scripts/language-names.ts)', () => {
  assert.deepEqual(JSON.parse(readFileSync(LANGUAGE_NAMES_FILE, 'utf8')), languageNameTable());
});
