// ctags asked ahead without blocking (warmCtags) gives the answers the blocking questions
// give: its version's first line, and whether it can serve (this file's own process, so
// nothing asked them before).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ctagsAvailable, ctagsVersion, warmCtags } from '../../daemon/symbols/ctags.ts';

test('warmCtags answers what ctagsVersion and ctagsAvailable would', async () => {
  await warmCtags();
  // The blocking questions, asked in a process of their own.
  const module = fileURLToPath(new URL('../../daemon/symbols/ctags.ts', import.meta.url));
  const blocking = JSON.parse(
    execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { ctagsAvailable, ctagsVersion } from ${JSON.stringify(module)}; console.log(JSON.stringify({ available: ctagsAvailable(), version: ctagsVersion() }));`,
      ],
      { encoding: 'utf8' },
    ),
  ) as { available: boolean; version: string };
  assert.deepEqual({ available: ctagsAvailable(), version: ctagsVersion() }, blocking);
  await warmCtags(); // once in, asked nothing again
});
