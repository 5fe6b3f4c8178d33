// Canonical language names for what users type after `lang:`, from a table generated out
// of linguist's data (language.ts languageNameTable; scripts/language-names.ts writes
// language-names.json beside this file and test/index/language-names.test.ts fails when it
// is stale). Read on first use only: a query without `lang:` never loads it.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INSTALL_ROOT } from '../install-root.ts';

/** Where the table is, from the install root (this module may be bundled anywhere). */
export const LANGUAGE_NAMES_FILE = join(INSTALL_ROOT, 'daemon', 'index', 'language-names.json');

let names: Map<string, string> | undefined;

/**
 * Canonical language name for a user-typed one ("python", "golang", "c++"),
 * matching names and linguist aliases case-insensitively.
 */
export function isKnownLanguage(name: string): string | undefined {
  names ??= new Map(Object.entries(JSON.parse(readFileSync(LANGUAGE_NAMES_FILE, 'utf8')) as Record<string, string>));
  return names.get(name.trim().toLowerCase());
}
