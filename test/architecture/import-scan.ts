// The import scan of the house test (floors.test.ts): every relative import of every
// source file under some folders, resolved to the file it names.
//
// Read from the text, not from a compiler: TypeScript 7 has no JS API, and esbuild drops
// type-only imports, which are dependencies of meaning like any other. What counts as an
// import: a statement that starts a line with `import` or `export` and names a module
// (`import x from`, `import type {..} from`, `export * from`, `import './side-effect'`,
// multi-line lists included), and a dynamic `import('...')` with a literal. Lines that are
// comments are skipped. Package imports (no leading dot) are not the house's business.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export interface Import {
  /** The importing file, relative to the root, '/'-separated. */
  from: string;
  /** The specifier as written. */
  spec: string;
  /** The imported file (or what the specifier names when no file has that name), relative to the root. */
  to: string;
  /** 1-based line of the statement. */
  line: number;
}

const SOURCE = /\.(ts|js|mjs)$/;
const STATEMENT = /^(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"\n]+)['"]|^import\s*['"]([^'"\n]+)['"]|\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/gm;

/** The specifiers imported by `source`, with their lines. */
export function importsOf(source: string): Array<{ spec: string; line: number }> {
  // Comment lines become empty (same line count), so a commented-out import is no import.
  const text = source
    .split('\n')
    .map((l) => (/^\s*(\/\/|\/\*|\*)/.test(l) ? '' : l))
    .join('\n');
  const out: Array<{ spec: string; line: number }> = [];
  for (const m of text.matchAll(STATEMENT)) {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    out.push({ spec, line: text.slice(0, m.index).split('\n').length });
  }
  return out;
}

/** Every source file under `dirs` (relative to `root`), skipping `skip` (relative paths). */
export function sourceFiles(root: string, dirs: string[], skip: string[] = []): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    if (skip.includes(rel)) return;
    const abs = join(root, rel);
    if (statSync(abs).isDirectory()) {
      for (const name of readdirSync(abs).sort()) walk(rel === '' ? name : `${rel}/${name}`);
    } else if (SOURCE.test(rel)) {
      out.push(rel);
    }
  };
  for (const d of dirs) walk(d);
  return out;
}

/** The relative imports of `files` (relative to `root`), each resolved to a file. */
export function scanImports(root: string, files: string[]): Import[] {
  const out: Import[] = [];
  for (const from of files) {
    for (const { spec, line } of importsOf(readFileSync(join(root, from), 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      out.push({ from, spec, to: resolveSpec(root, from, spec), line });
    }
  }
  return out;
}

/** The file a relative specifier names: as written, or (AssemblyScript) with .ts or /index.ts added. */
function resolveSpec(root: string, from: string, spec: string): string {
  const abs = resolve(root, dirname(from), spec);
  const found = [abs, `${abs}.ts`, join(abs, 'index.ts')].find((p) => existsSync(p) && statSync(p).isFile()) ?? abs;
  return relative(root, found).split(sep).join('/');
}

/**
 * The circles of a directed graph: its strongly connected components of more than one
 * node (Tarjan), each with its nodes sorted. A node that imports itself is no circle here.
 */
export function circles(edges: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}
