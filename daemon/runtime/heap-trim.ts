// Gives the C heap's free pages back to the system (native/heap-trim: glibc's
// malloc_trim), after the idle collection has freed what a burst held (idle-collector.ts,
// daemon.ts). The addon is built at set-up (scripts/setup.sh); where it is missing (a
// checkout not set up, or a platform without it) trimming does nothing.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { INSTALL_ROOT } from '../install-root.ts';

/** Where setup's node-gyp build leaves the addon. */
export const HEAP_TRIM_ADDON = join(INSTALL_ROOT, 'native/heap-trim/build/Release/heap_trim.node');

/** The addon once looked for (null: not there); undefined until the first trim. */
let addon: { trim(): boolean } | null | undefined;

function load(): { trim(): boolean } | null {
  if (!existsSync(HEAP_TRIM_ADDON)) return null;
  return createRequire(import.meta.url)(HEAP_TRIM_ADDON) as { trim(): boolean };
}

/** Returns free heap pages to the system: whether any were; null without the addon. */
export function trimHeap(): boolean | null {
  if (addon === undefined) addon = load();
  return addon ? addon.trim() : null;
}
