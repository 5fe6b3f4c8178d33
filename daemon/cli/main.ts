// The `trawl` command line: dispatches to one file per command, and renders every
// error as one line on stderr (a stack trace only with --verbose).

import { diskFullError, ServiceError } from '../errors.ts';
import { ConfigError } from '../config/load.ts';
import { indexCommand } from './index-command.ts';
import { reposCommand } from './repos-command.ts';
import { syncCommand } from './sync-command.ts';
import { searchCommand } from './search-command.ts';
import { serveCommand } from './serve-command.ts';
import { keysCommand, usersCommand } from './users-command.ts';
import { LICENSE_HELP, licenseCli } from './license-command.ts';
import { OAUTH_HELP, oauthCommand } from './oauth-command.ts';
import { SESSIONS_HELP, sessionsCommand } from './sessions-command.ts';
import { AUDIT_HELP, auditCommand } from './audit-command.ts';
import { HELP, UsageError } from './usage.ts';

HELP.license = LICENSE_HELP;
HELP.oauth = OAUTH_HELP;
HELP.sessions = SESSIONS_HELP;
HELP.audit = AUDIT_HELP;

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  index: indexCommand,
  search: searchCommand,
  sync: syncCommand,
  repos: reposCommand,
  serve: serveCommand,
  users: (argv) => usersCommand(argv),
  keys: (argv) => keysCommand(argv),
  sessions: (argv) => sessionsCommand(argv),
  license: licenseCli,
  oauth: (argv) => oauthCommand(argv),
  audit: (argv) => auditCommand(argv),
  // Loaded on demand: the benchmark's dependencies (tinybench, autocannon) stay out of the daemon.
  bench: async (argv) => (await import('./bench-command.ts')).benchCommand(argv),
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP.main + '\n');
    return command === undefined ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown command "${command}" (see trawl --help)`);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write((HELP[command] ?? HELP.main) + '\n');
    return 0;
  }
  return run(rest);
}

const verbose = process.argv.includes('--verbose');
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  const e = err as Error & { code?: string };
  // parseArgs reports unknown or malformed options with ERR_PARSE_ARGS_* codes.
  const usage = err instanceof UsageError || (typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS'));
  // A full disk, whichever writer hit it (the store, an index run, a mirror), says so plainly.
  const full = err instanceof ServiceError ? undefined : diskFullError(err);
  const message = err instanceof ServiceError ? `${err.errorCode}: ${err.message}` : full ? full.message : e.message;
  // A configuration file's problems are all listed, one per line, so that one edit fixes them.
  const lines = err instanceof ConfigError ? message.split('\n') : [message.split('\n')[0]!];
  for (const line of lines) process.stderr.write(`trawl: ${line}\n`);
  if (verbose && e.stack) process.stderr.write(e.stack + '\n');
  process.exitCode = usage ? 2 : 1;
}
