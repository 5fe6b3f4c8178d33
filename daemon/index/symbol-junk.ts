// Files whose definitions are noise, skipped by rule before ctags sees them: ctags tags
// every key of a lock file or of a generated JSON document and every identifier of a
// minified bundle, which floods `sym:` with names nobody defined by hand and costs ctags
// time out of proportion (a large package-lock.json: tens of thousands of "definitions").
// A JSON document whose top level is an array is a table of records, generated or not:
// ctags tags each record's keys again (Linux's small perf event tables: tens of thousands
// of "definitions", most of them BriefDescription, EventCode, ...). The file itself is
// indexed as any other: only its symbols are left out.

const LOCK_FILE =
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lock|Cargo\.lock|go\.sum|composer\.lock|Gemfile\.lock|poetry\.lock|Pipfile\.lock|uv\.lock|mix\.lock|pubspec\.lock|Podfile\.lock|flake\.lock|packages\.lock\.json|gradle\.lockfile)$/i;
const MINIFIED_NAME = /[.-]min\.(js|mjs|cjs|css)$|\.(js|mjs|cjs|css)\.map$/i;
const SCRIPT = /\.(js|mjs|cjs|jsx|ts|tsx|css|scss|less)$/i;
const DATA = /\.(json|jsonc|json5|geojson|jsonl|ndjson|webmanifest)$/i;

/** JSON bigger than this is taken for generated data; a hand-written configuration is smaller. */
const DATA_MAX_BYTES = 16 * 1024;
/** How much of a script is looked at for minification. */
const SAMPLE_BYTES = 64 * 1024;
/** A script sample whose lines average longer than this is minified (hand-written code's lines are far shorter). */
const MINIFIED_AVERAGE_LINE = 250;

export type SymbolsJunk = 'lock file' | 'minified' | 'generated data';

/** Why `path` gets no symbols, or undefined when ctags should read it. */
export function symbolsJunk(path: string, content: Uint8Array): SymbolsJunk | undefined {
  if (LOCK_FILE.test(path)) return 'lock file';
  if (MINIFIED_NAME.test(path)) return 'minified';
  if (DATA.test(path)) return content.length > DATA_MAX_BYTES || topLevelArray(content) ? 'generated data' : undefined;
  if (SCRIPT.test(path) && content.length > 1024) {
    const n = Math.min(content.length, SAMPLE_BYTES);
    let lines = 1;
    for (let i = 0; i < n; i++) if (content[i] === 0x0a) lines++;
    if (n / lines > MINIFIED_AVERAGE_LINE) return 'minified';
  }
  return undefined;
}

/** Whether a JSON document's first byte that is not whitespace (nor a byte order mark) opens an array. */
function topLevelArray(content: Uint8Array): boolean {
  let i = content.length >= 3 && content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf ? 3 : 0;
  while (i < content.length && (content[i] === 0x20 || content[i] === 0x09 || content[i] === 0x0a || content[i] === 0x0d)) i++;
  return i < content.length && content[i] === 0x5b;
}
