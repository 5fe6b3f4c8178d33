// Control characters: which ones, once. A terminal or a log viewer acts on them instead of
// showing them (a newline starts a line that looks like the next record, ESC [2J clears
// the screen, a bidirectional override makes a name read differently from what it is), so
// every name a caller or an operator gives (an API key's, a user's and their email, an
// OAuth client's, a license's licensee) refuses them, and the command line shows any that
// older data still holds escaped (cli/format.ts). Nothing else here: the web UI's bundle
// may import it.
//
// The class: C0 (U+0000-U+001F), DEL, C1 (U+0080-U+009F); the Arabic letter mark and the
// left-to-right and right-to-left marks; the line and paragraph separators, which some
// viewers break lines at; the bidirectional embeddings, overrides and isolates.

const CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';

/** A JSON Schema `pattern` (ECMA-262) that a string matches when it holds none of them. */
export const NO_CONTROL_CHARACTERS = `^[^${CLASS}]*$`;

const ANY = new RegExp(`[${CLASS}]`);
const EVERY = new RegExp(`[${CLASS}]`, 'g');

/**
 * Why `text` is refused as `what` ("name", "--email"), naming the first such character
 * and where it is; undefined when it holds none.
 */
export function controlCharacterProblem(what: string, text: string): string | undefined {
  const found = ANY.exec(text);
  if (found === null) return undefined;
  const code = `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  return `${what} may not contain control or bidirectional-override characters (${code} at character ${found.index + 1})`;
}

/** `text` with each of them replaced by what `by` makes of it. */
export function replaceControlCharacters(text: string, by: (char: string) => string): string {
  return text.replace(EVERY, by);
}
