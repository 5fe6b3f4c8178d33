#!/usr/bin/env node
// Entry point of the `trawl` command (bin/trawl chooses the Node). Runs the JavaScript that scripts/setup.sh compiles into dist/
// when it is the build of the current sources; otherwise (a checkout edited since, or never
// set up) the TypeScript sources themselves through tsx's loader, which is slower to start
// (~1.5 s) but never runs stale code. Said on stderr when a person is watching.
import { isFresh } from '../scripts/compile.js';

if (isFresh()) {
  await import('../dist/daemon/cli/main.js');
} else {
  if (process.stderr.isTTY) {
    process.stderr.write(
      'trawl: the compiled build is missing or older than the sources; running them through tsx (slow start). ./scripts/setup.sh rebuilds it.\n',
    );
  }
  // Told to what runs (trawl bench notes it: its figures would not be a release's).
  process.env.TRAWL_FROM_SOURCES = '1';
  const { register } = await import('tsx/esm/api');
  register();
  await import('../daemon/cli/main.ts');
}
