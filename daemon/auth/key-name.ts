// The rule of an API key's name, shared by the endpoint (POST /api/keys and its schema),
// `trawl keys create` and the settings page's field, which stops at the bound; nothing
// else here, so the page's bundle can import it.

import { controlCharacterProblem } from './control-characters.ts';

/** Characters in an API key's name at most (after trimming; at least one). */
export const KEY_NAME_MAX_LENGTH = 100;

/** Why `name` (already trimmed) cannot name a key; undefined when it can. */
export function keyNameProblem(name: string): string | undefined {
  if (name === '') return 'name must not be blank: say what the key is for';
  if (name.length > KEY_NAME_MAX_LENGTH) return `name must be at most ${KEY_NAME_MAX_LENGTH} characters, got ${name.length}`;
  return controlCharacterProblem('name', name);
}
