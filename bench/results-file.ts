// A benchmark's result: the JSON record at `out` and its Markdown rendering beside it
// (same name, .md), which also goes to stdout. Returns the Markdown file's path.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export function writeResultFiles(out: string, result: unknown, markdown: string): string {
  mkdirSync(dirname(out), { recursive: true });
  if (result !== undefined) writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  const mdPath = out.replace(/\.json$/, '') + '.md';
  writeFileSync(mdPath, markdown);
  process.stdout.write(markdown);
  return mdPath;
}
