// Which configuration file a command reads: --config, else $TRAWL_CONFIG (empty counts as
// unset), else ./trawl.json when it exists; undefined when there is none.

import { existsSync } from 'node:fs';

export function findConfigFile(flag: string | undefined): string | undefined {
  return flag ?? (process.env.TRAWL_CONFIG || undefined) ?? (existsSync('trawl.json') ? 'trawl.json' : undefined);
}
