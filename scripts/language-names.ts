// Writes daemon/index/language-names.json, the table of language names and aliases that
// `lang:` accepts (daemon/index/language-names.ts), from linguist's data as language.ts
// reads it. Run after upgrading linguist-languages or editing language.ts's extra
// languages:  node --import tsx scripts/language-names.ts

import { writeFileSync } from 'node:fs';
import { languageNameTable } from '../daemon/index/language.ts';
import { LANGUAGE_NAMES_FILE } from '../daemon/index/language-names.ts';

writeFileSync(LANGUAGE_NAMES_FILE, `${JSON.stringify(languageNameTable(), null, 1)}\n`);
console.log(`wrote ${LANGUAGE_NAMES_FILE}`);
