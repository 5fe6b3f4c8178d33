// A user added and an API key created for it with the CLI's own commands (users add, keys
// create), as an operator does: the key, printed last.

import assert from 'node:assert/strict';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';

/**
 * Adds `email` (with `role`, the CLI's default when absent) to the store that `where`
 * names (`['--data-dir', DIR]` or `['--config', FILE]`) and creates a key for it.
 */
export async function newUserKey(email: string, where: string[], role?: 'owner' | 'member'): Promise<string> {
  const out: string[] = [];
  const io = { out: (l: string) => void out.push(l), err: () => {}, now: () => new Date() };
  assert.equal(await usersCommand(['add', '--email', email, ...(role ? ['--role', role] : []), ...where], io), 0, `users add ${email}`);
  assert.equal(await keysCommand(['create', '--user', email, ...where], io), 0, `keys create --user ${email}`);
  return out.at(-1)!;
}
