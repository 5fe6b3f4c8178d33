// The `trawl` command line: dispatches to one file per command, and renders every
// error as one line on stderr (a stack trace only with --verbose).

import { diskFullError, ServiceError } from '../errors.ts';
import { HELP, UsageError } from './usage.ts';

type Command = (argv: string[]) => Promise<number>;

/**
 * Each command's module is loaded when that command runs, so a command pays only for what
 * it uses (`--help` loads no native module, `search` no HTTP server, and the benchmark
 * suite's packages stay out of the daemon). `help` is the command's own usage text
 * where its module keeps it (else usage.ts's HELP).
 */
const COMMANDS: Record<string, () => Promise<{ run: Command; help?: string }>> = {
  index: async () => ({ run: (await import('./index-command.ts')).indexCommand }),
  search: async () => {
    // One search, then exit: msgpackr's native string decoder costs this process more to
    // load than it saves (its documented switch, read when msgpackr loads).
    process.env.MSGPACKR_NATIVE_ACCELERATION_DISABLED ??= 'true';
    return { run: (await import('./search-command.ts')).searchCommand };
  },
  sync: async () => ({ run: (await import('./sync-command.ts')).syncCommand }),
  repos: async () => ({ run: (await import('./repos-command.ts')).reposCommand }),
  serve: async () => ({ run: (await import('./serve-command.ts')).serveCommand }),
  users: async () => {
    const { usersCommand } = await import('./users-command.ts');
    return { run: (argv) => usersCommand(argv) };
  },
  keys: async () => {
    const { keysCommand } = await import('./users-command.ts');
    return { run: (argv) => keysCommand(argv) };
  },
  sessions: async () => {
    const m = await import('./sessions-command.ts');
    return { run: (argv) => m.sessionsCommand(argv), help: m.SESSIONS_HELP };
  },
  watches: async () => {
    const m = await import('./watches-command.ts');
    return { run: (argv) => m.watchesCommand(argv), help: m.WATCHES_HELP };
  },
  license: async () => {
    const m = await import('./license-command.ts');
    return { run: m.licenseCli, help: m.LICENSE_HELP };
  },
  oauth: async () => {
    const m = await import('./oauth-command.ts');
    return { run: (argv) => m.oauthCommand(argv), help: m.OAUTH_HELP };
  },
  audit: async () => {
    const m = await import('./audit-command.ts');
    return { run: m.auditCommand, help: m.AUDIT_HELP };
  },
  bench: async () => {
    // The benchmark suite (bench/suite/) is a tool beside the product, a floor above the
    // command line (it reads its usage errors and figures from here): loaded by path, as a
    // worker thread is, so that no import of the product's ever reaches it.
    const { runnableModule } = await import('../install-root.ts');
    const m = (await import(runnableModule('bench/suite/command.ts').href)) as { benchCommand: Command };
    return { run: m.benchCommand };
  },
  cluster: async () => {
    const m = await import('./cluster-command.ts');
    return { run: (argv) => m.clusterCommand(argv), help: m.CLUSTER_HELP };
  },
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${HELP.main}\n`);
    return command === undefined ? 2 : 0;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!load) throw new UsageError(`unknown command "${command}" (see trawl --help)`);
  const { run, help } = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${help ?? HELP[command] ?? HELP.main}\n`);
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
  // A configuration file's problems are all listed, one per line, so that one edit fixes
  // them. Any other message is one line: what it quotes (an id, a name, a library's text)
  // is shown escaped, a newline in it as \n.
  const { ConfigError } = await import('../config/load.ts');
  const { escapeControl } = await import('./format.ts');
  const lines = err instanceof ConfigError ? message.split('\n') : [message.trimEnd()];
  for (const line of lines) process.stderr.write(`trawl: ${escapeControl(line)}\n`);
  if (verbose && e.stack) process.stderr.write(`${e.stack}\n`);
  process.exitCode = usage ? 2 : 1;
}
