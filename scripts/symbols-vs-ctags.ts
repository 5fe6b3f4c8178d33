// How one of trawl's symbol scanners (daemon/symbols/: C, device trees, Kconfig) compares
// with universal-ctags on a tree: every file the scanner reads up to the symbol size limit,
// both extractions, each definition compared as (name, kind, line, end line, parent;
// anonymous scopes without their hashes), and as (name, kind, line) alone. Prints the
// agreement, the differences by kind, the scanner's speed, and writes the files that
// differ, with their differences, to --out. The figures in docs/design.md come from
//   node --import tsx scripts/symbols-vs-ctags.ts corpus/linux-6.1 [--scanner c|dts|kconfig]

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { cDefinitions, isCPath } from '../daemon/symbols/c-definitions.ts';
import { dtsDefinitions, isDtsPath } from '../daemon/symbols/dts-definitions.ts';
import { isKconfigPath, kconfigDefinitions } from '../daemon/symbols/kconfig-definitions.ts';
import { SYMBOL_MAX_FILE_BYTES, sortSymbolDefs, type SymbolDef } from '../daemon/symbols/ctags.ts';

/** Each scanner: the files it reads, its definitions (undefined: left to ctags), and the hashed part of its anonymous scopes' names. */
const SCANNERS: Record<
  string,
  { reads: (path: string) => boolean; define: (path: string, content: Buffer) => SymbolDef[] | undefined; anonymous: RegExp; as: string }
> = {
  c: { reads: isCPath, define: cDefinitions, anonymous: /__anon[0-9a-f]+/g, as: '__anon' },
  dts: { reads: isDtsPath, define: (_, content) => dtsDefinitions(content), anonymous: /$^/g, as: '' },
  kconfig: { reads: isKconfigPath, define: kconfigDefinitions, anonymous: /choice[0-9a-f]{12}/g, as: 'choice#' },
};

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1]! : fallback;
};
const which = option('--scanner', 'c');
const out = option('--out', `${which}-symbols-vs-ctags.txt`);
const scanner = SCANNERS[which];
const root = args[0];
if (!root || args.length !== 1 || !scanner) {
  process.stderr.write(`usage: node --import tsx scripts/symbols-vs-ctags.ts DIR [--scanner ${Object.keys(SCANNERS).join('|')}] [--out FILE]\n`);
  process.exit(2);
}

function walk(dir: string, files: string[]): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, files);
    else if (e.isFile() && scanner!.reads(p) && statSync(p).size <= SYMBOL_MAX_FILE_BYTES) files.push(relative(root!, p));
  }
}
const files: string[] = [];
walk(root, files);
files.sort();

// ctags as the indexer ran it (symbols/ctags.ts' options), file by file in one process.
const r = spawnSync('ctags', ['--options=NONE', '--output-format=json', '--fields=NFnKesp', '--extras=F', '--sort=no', '-L', '-', '-f', '-'], {
  cwd: root,
  input: `${files.join('\n')}\n`,
  maxBuffer: 2 ** 31,
  stdio: ['pipe', 'pipe', 'ignore'],
});
if (r.status !== 0) {
  process.stderr.write('ctags failed\n');
  process.exit(1);
}
const byFile = new Map<string, SymbolDef[]>();
for (let at = 0; at < r.stdout.length; ) {
  let nl = r.stdout.indexOf(10, at);
  if (nl < 0) nl = r.stdout.length;
  const line = r.stdout.toString('utf8', at, nl);
  at = nl + 1;
  if (!line) continue;
  const o = JSON.parse(line);
  if (o._type !== 'tag') continue;
  const d: SymbolDef = { name: o.name, kind: o.kind, line: o.line, endLine: typeof o.end === 'number' && o.end >= o.line ? o.end : o.line };
  if (o.scope) d.parent = { name: o.scope, kind: o.scopeKind ?? '' };
  let list = byFile.get(o.path);
  if (!list) byFile.set(o.path, (list = []));
  list.push(d);
}

const key = (d: SymbolDef) =>
  `${d.name}|${d.kind}|${d.line}|${d.endLine}|${d.parent ? `${d.parent.kind}:${d.parent.name.replace(scanner.anonymous, scanner.as)}` : ''}`;
const place = (d: SymbolDef) => `${d.name}|${d.kind}|${d.line}`;
let ctagsCount = 0;
let scannerCount = 0;
let same = 0;
let samePlace = 0;
let toCtags = 0;
let bytes = 0;
let ms = 0;
const missing = new Map<string, number>();
const extra = new Map<string, number>();
const report: string[] = [];
for (const f of files) {
  const content = readFileSync(join(root, f));
  bytes += content.length;
  const t0 = performance.now();
  const defs = scanner.define(f, content);
  ms += performance.now() - t0;
  if (!defs) {
    toCtags++;
    continue;
  }
  const theirDefs = sortSymbolDefs(byFile.get(f) ?? []);
  const ourDefs = sortSymbolDefs(defs);
  const places = new Set(ourDefs.map(place));
  samePlace += theirDefs.filter((d) => places.has(place(d))).length;
  const theirs = theirDefs.map(key);
  const ours = ourDefs.map(key);
  ctagsCount += theirs.length;
  scannerCount += ours.length;
  const left = new Map<string, number>();
  for (const k of theirs) left.set(k, (left.get(k) ?? 0) + 1);
  const plus: string[] = [];
  for (const k of ours) {
    const n = left.get(k) ?? 0;
    if (n > 0) {
      left.set(k, n - 1);
      same++;
    } else plus.push(k);
  }
  const minus = [...left].flatMap(([k, n]) => Array<string>(n).fill(k));
  for (const k of minus) missing.set(k.split('|')[1]!, (missing.get(k.split('|')[1]!) ?? 0) + 1);
  for (const k of plus) extra.set(k.split('|')[1]!, (extra.get(k.split('|')[1]!) ?? 0) + 1);
  if (minus.length + plus.length > 0) report.push(`== ${f}`, ...minus.map((k) => `  - ${k}`), ...plus.map((k) => `  + ${k}`));
}
writeFileSync(out, `${report.join('\n')}\n`);
const pct = (a: number, b: number) => (b === 0 ? '-' : `${((100 * a) / b).toFixed(2)} %`);
console.log(`${files.length} files (${(bytes / 1e6).toFixed(1)} MB); ${toCtags} left to ctags (C headers with C++ or Objective-C)`);
console.log(
  `ctags ${ctagsCount} definitions, the scanner ${scannerCount}; the same: ${same} (${pct(same, ctagsCount)} of ctags', ${pct(same, scannerCount)} of the scanner's); the same name, kind and line: ${samePlace} of ctags'`,
);
console.log(`only ctags, by kind: ${JSON.stringify(Object.fromEntries([...missing].sort((a, b) => b[1] - a[1])))}`);
console.log(`only the scanner, by kind: ${JSON.stringify(Object.fromEntries([...extra].sort((a, b) => b[1] - a[1])))}`);
console.log(`the scanner: ${(bytes / 1e3 / ms).toFixed(0)} MB/s on one core; differences by file in ${out}`);
