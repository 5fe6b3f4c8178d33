// Language detection for indexed files, driven by GitHub linguist's language
// data (the `linguist-languages` package) so that names match what users know
// from GitHub and what a `lang:` filter will accept.
//
// Order of evidence: exact base name (Makefile, Dockerfile), then the longest
// matching extension, then a few name prefixes linguist lacks (Kconfig.debug,
// Dockerfile.dev), then the `#!` interpreter. Where linguist maps one key to
// several languages we resolve it once, when the tables are built, so a
// lookup is a plain Map hit.

// linguist's data is one module per language (hundreds of them). The compiled build bundles
// them into one chunk (scripts/compile.js), which loads at once; as separate modules
// (under tsx) each is resolved and loaded on its own, many times slower.
import * as linguist from 'linguist-languages';

interface LanguageInfo {
  readonly name: string;
  readonly type: string;
  readonly extensions?: readonly string[];
  readonly filenames?: readonly string[];
  readonly aliases?: readonly string[];
  readonly interpreters?: readonly string[];
}

// Languages linguist does not know but that large C code bases are full of
// (the Linux tree has thousands of Kconfig files and of device tree sources).
const EXTRA_LANGUAGES: readonly LanguageInfo[] = [
  { name: 'Kconfig', type: 'data', filenames: ['Kconfig'] },
  { name: 'Device Tree', type: 'data', extensions: ['.dts', '.dtsi', '.dtso'], aliases: ['dts'] },
];

// Names like "Kconfig.debug", "Makefile.build" or "Dockerfile.dev" are
// variants of a well-known file; used only when the extension is unknown.
const NAME_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['Kconfig.', 'Kconfig'],
  ['Makefile.', 'Makefile'],
  ['Dockerfile.', 'Dockerfile'],
  ['Containerfile.', 'Dockerfile'],
];

// Ambiguous extensions: the language most repositories mean by them.
// Keys are lower case. Anything not listed falls back to rankCandidates().
const EXTENSION_PREFERENCE: Readonly<Record<string, string>> = {
  '.h': 'C', // C, C++ and Objective-C all use it; C is the common denominator
  '.m': 'Objective-C', // MATLAB when the content says so (CONTENT_HINTS)
  '.pl': 'Perl', // not Prolog or Raku
  '.pm': 'Perl',
  '.t': 'Perl', // Perl test scripts
  '.cgi': 'Perl',
  '.ts': 'TypeScript', // not Qt Linguist XML
  '.tsx': 'TSX', // linguist's own name; grouped under TypeScript
  '.md': 'Markdown', // not GCC machine descriptions
  '.inc': 'C++', // LLVM/Chromium-style fragments; PHP when it starts with <?
  '.cls': 'Apex', // Salesforce classes; TeX when it looks like LaTeX
  '.v': 'Verilog', // not Coq/Rocq or V
  '.sql': 'SQL', // dialects (PLSQL, TSQL, ...) are not distinguishable by name
  '.ddl': 'SQL',
  '.prc': 'SQL',
  '.s': 'Assembly',
  '.asm': 'Assembly',
  '.i': 'SWIG', // SWIG interfaces are the .i files people commit
  '.d': 'D', // make dependency files are build output, not source
  '.l': 'Lex',
  '.pp': 'Puppet',
  '.pro': 'QMake',
  '.ml': 'OCaml',
  '.fs': 'F#',
  '.f': 'Fortran',
  '.for': 'Fortran',
  '.frag': 'GLSL', // shader fragments, not JavaScript
  '.cfg': 'INI',
  '.properties': 'Java Properties',
  '.spec': 'RPM Spec',
  '.bb': 'BitBake',
  '.ex': 'Elixir',
  '.cl': 'OpenCL',
  '.json': 'JSON',
  '.yml': 'YAML',
  '.yaml': 'YAML',
  '.txt': 'Text',
  '.html': 'HTML',
  '.php': 'PHP',
  '.rs': 'Rust',
  '.cs': 'C#',
  '.es': 'JavaScript',
  '.plist': 'XML Property List',
  '.lean': 'Lean 4',
  '.nu': 'Nushell',
};

// Ambiguous file names.
const FILENAME_PREFERENCE: Readonly<Record<string, string>> = {
  '.eslintrc': 'JSON with Comments',
  '.releaserc': 'JSON',
  hosts: 'Hosts File',
  HOSTS: 'Hosts File',
};

// Ambiguous interpreters.
const INTERPRETER_PREFERENCE: Readonly<Record<string, string>> = {
  node: 'JavaScript',
  bun: 'JavaScript',
  deno: 'TypeScript',
  perl: 'Perl',
  perl6: 'Raku',
  lua: 'Lua',
  ocaml: 'OCaml',
};

// A look at the first bytes settles a few extensions the table cannot.
const CONTENT_HINTS: Readonly<Record<string, ReadonlyArray<readonly [RegExp, string]>>> = {
  '.inc': [[/^\s*<\?/, 'PHP']],
  '.cls': [[/\\(?:NeedsTeXFormat|ProvidesClass|documentclass)\b|^\s*%/, 'TeX']],
  '.m': [[/^\s*(?:%|function\b)/, 'MATLAB']],
};

// Tie-break for clashes not in the tables: widely used languages first, then
// programming over markup/prose/data, then linguist's (alphabetical) order.
const POPULAR = [
  'C',
  'C++',
  'Java',
  'JavaScript',
  'TypeScript',
  'Python',
  'Go',
  'Rust',
  'Shell',
  'PHP',
  'Ruby',
  'C#',
  'Kotlin',
  'Swift',
  'Objective-C',
  'Perl',
  'Scala',
  'Lua',
  'R',
  'Dart',
  'Elixir',
  'Haskell',
  'HTML',
  'CSS',
  'Markdown',
  'SQL',
  'Makefile',
  'Assembly',
  'YAML',
  'JSON',
  'XML',
];
const TYPE_RANK: Readonly<Record<string, number>> = { programming: 0, markup: 1, prose: 2, data: 3 };

interface Tables {
  byFilename: Map<string, string>;
  byExtension: Map<string, string>;
  byExtensionLower: Map<string, string>;
  byInterpreter: Map<string, string>;
  byLowerName: Map<string, string>;
}

let tables: Tables | undefined;

function getTables(): Tables {
  tables ??= buildTables();
  return tables;
}

function buildTables(): Tables {
  const all: LanguageInfo[] = [...(Object.values(linguist) as LanguageInfo[]), ...EXTRA_LANGUAGES];
  const order = new Map<string, number>();
  const types = new Map<string, string>();
  all.forEach((l, i) => {
    order.set(l.name, i);
    types.set(l.name, l.type);
  });

  const filenames = new Map<string, string[]>();
  const extensions = new Map<string, string[]>();
  const extensionsLower = new Map<string, string[]>();
  const interpreters = new Map<string, string[]>();
  for (const l of all) {
    for (const f of l.filenames ?? []) push(filenames, f, l.name);
    for (const e of l.extensions ?? []) {
      push(extensions, e, l.name);
      push(extensionsLower, e.toLowerCase(), l.name);
    }
    for (const p of l.interpreters ?? []) push(interpreters, p, l.name);
  }

  const rank = (name: string): [number, number, number] => {
    const p = POPULAR.indexOf(name);
    return [p < 0 ? POPULAR.length : p, TYPE_RANK[types.get(name) ?? ''] ?? 4, order.get(name) ?? 0];
  };
  const resolve = (multi: Map<string, string[]>, prefs: Readonly<Record<string, string>>, lowerKeys: boolean) => {
    const out = new Map<string, string>();
    for (const [key, names] of multi) {
      const pref = prefs[lowerKeys ? key.toLowerCase() : key];
      out.set(key, pref !== undefined && names.includes(pref) ? pref : pickBest(names, rank));
    }
    return out;
  };

  const byLowerName = new Map<string, string>();
  // Aliases first so that a real language name always wins a clash.
  for (const l of all) for (const a of l.aliases ?? []) if (!byLowerName.has(a.toLowerCase())) byLowerName.set(a.toLowerCase(), l.name);
  for (const l of all) byLowerName.set(l.name.toLowerCase(), l.name);

  return {
    byFilename: resolve(filenames, FILENAME_PREFERENCE, false),
    byExtension: resolve(extensions, EXTENSION_PREFERENCE, true),
    byExtensionLower: resolve(extensionsLower, EXTENSION_PREFERENCE, true),
    byInterpreter: resolve(interpreters, INTERPRETER_PREFERENCE, false),
    byLowerName,
  };
}

function push(m: Map<string, string[]>, key: string, name: string): void {
  const list = m.get(key);
  if (list === undefined) m.set(key, [name]);
  else if (!list.includes(name)) list.push(name);
}

function pickBest(names: readonly string[], rank: (n: string) => [number, number, number]): string {
  let best = names[0]!;
  let bestRank = rank(best);
  for (const n of names.slice(1)) {
    const r = rank(n);
    if (r[0] < bestRank[0] || (r[0] === bestRank[0] && (r[1] < bestRank[1] || (r[1] === bestRank[1] && r[2] < bestRank[2])))) {
      best = n;
      bestRank = r;
    }
  }
  return best;
}

/** Linguist language name for a file, or "" when nothing identifies it. */
export function detectLanguage(path: string, head?: Uint8Array): string {
  const named = byName(path);
  if (named !== undefined) return named.ext !== undefined ? refineByContent(named.ext, named.lang, head) : named.lang;
  if (head !== undefined) {
    const interpreter = shebangInterpreter(head);
    if (interpreter !== undefined) return interpreterLanguage(getTables(), interpreter);
  }
  return '';
}

/** Whether a file's content can change its language: its name alone does not decide it (a `#!` line, or hints for its extension, do). */
export function languageNeedsContent(path: string): boolean {
  const named = byName(path);
  return named === undefined || (named.ext !== undefined && CONTENT_HINTS[named.ext] !== undefined);
}

/** The language a file's name gives, and the extension (lower case) that gave it, whose content hints may refine it. */
function byName(path: string): { lang: string; ext?: string } | undefined {
  const t = getTables();
  const base = path.slice(path.lastIndexOf('/') + 1);

  const byFilename = t.byFilename.get(base);
  if (byFilename !== undefined) return { lang: byFilename };

  // Longest suffix first: "foo.h.in" is C via ".h.in" before ".in" is tried.
  // A leading dot counts too, as in linguist (".gitignore" is an extension).
  for (let i = base.indexOf('.'); i >= 0; i = base.indexOf('.', i + 1)) {
    const ext = base.slice(i);
    const lang = t.byExtension.get(ext) ?? t.byExtensionLower.get(ext.toLowerCase());
    if (lang !== undefined) return { lang, ext: ext.toLowerCase() };
  }

  for (const [prefix, lang] of NAME_PREFIXES) if (base.startsWith(prefix)) return { lang };
  return undefined;
}

function refineByContent(ext: string, lang: string, head: Uint8Array | undefined): string {
  const hints = CONTENT_HINTS[ext];
  if (hints === undefined || head === undefined || head.length === 0) return lang;
  const text = new TextDecoder('utf-8').decode(head.subarray(0, 512));
  for (const [re, hinted] of hints) if (re.test(text)) return hinted;
  return lang;
}

/** The program named by a `#!` line: "#!/usr/bin/env -S python3 -u" → "python3". */
export function shebangInterpreter(head: Uint8Array): string | undefined {
  if (head.length < 3 || head[0] !== 0x23 || head[1] !== 0x21) return undefined;
  let end = head.indexOf(0x0a);
  if (end < 0) end = head.length;
  const line = new TextDecoder('utf-8').decode(head.subarray(2, Math.min(end, 512)));
  const words = line.trim().split(/\s+/);
  let program = basename(words[0] ?? '');
  if (program === 'env') {
    // env's own flags (-S, -i, -u NAME) and VAR=value assignments precede the program.
    let i = 1;
    while (i < words.length && (words[i]!.startsWith('-') || words[i]!.includes('='))) {
      if (words[i] === '-u' || words[i] === '--unset') i++;
      i++;
    }
    program = basename(words[i] ?? '');
  }
  return program === '' ? undefined : program;
}

function interpreterLanguage(t: Tables, program: string): string {
  // "python3.11" → try "python3.11", "python3", then "python".
  let candidate = program;
  for (;;) {
    const lang = t.byInterpreter.get(candidate);
    if (lang !== undefined) return lang;
    const shorter = candidate.replace(/\.\d+$/, '');
    if (shorter !== candidate) {
      candidate = shorter;
      continue;
    }
    const bare = candidate.replace(/[\d.-]+$/, '');
    if (bare === candidate || bare === '') return '';
    candidate = bare;
  }
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/**
 * Every name and linguist alias, lower case, with the language it names: the table
 * language-names.json holds (written by scripts/language-names.ts, checked by a test), so
 * that reading a query's `lang:` does not load linguist's data (most of a short command's start).
 */
export function languageNameTable(): Record<string, string> {
  return Object.fromEntries([...getTables().byLowerName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
