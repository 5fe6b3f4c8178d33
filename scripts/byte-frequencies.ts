// Regenerates core/byte-frequency.ts: how often each byte value occurs in source code,
// counted over a tree (the Linux 6.1 corpus by default: C, headers, assembly, scripts,
// documentation, build files), in parts per million. The literal search probes the
// needle's two rarest bytes by it (core/index.ts).
//
//   node --import tsx scripts/byte-frequencies.ts [TREE]    writes core/byte-frequency.ts

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const tree = process.argv[2] ?? 'corpus/linux-6.1';
const counts = new Float64Array(256);
let total = 0;
const walk = (dir: string): void => {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) walk(path);
    else if (e.isFile()) {
      const bytes = readFileSync(path);
      // Text only: a file with a NUL byte is binary, as the indexer judges (shard-builder.ts).
      if (bytes.includes(0)) continue;
      for (const b of bytes) counts[b]!++;
      total += bytes.length;
    }
  }
};
walk(tree);
const ppm = Array.from(counts, (c) => Math.round((c / total) * 1e6));
writeFileSync(
  'core/byte-frequency.ts',
  `// How often each byte value occurs in source code, in parts per million (index: the byte),
// counted over the Linux 6.1 source tree by scripts/byte-frequencies.ts, which regenerates
// this file. The literal search probes a needle's two rarest bytes by it (core/index.ts).

export const BYTE_FREQUENCY: readonly number[] = [${ppm.join(', ')}];
`,
);
console.log(`${total} bytes counted`);
