// `trawl users ...` and `trawl keys ...` (OPERATOR.md): organization members and their API
// keys, in the data dir's store. A new key is printed once, alone on its stdout line;
// only its keyed hash is kept (auth/credentials.ts). Every change is recorded in the audit
// log with it (audit/log.ts), as the operating-system account that ran the command.

import { parseArgs } from 'node:util';
import { AuditLog, cliActor } from '../audit/log.ts';
import { credentialHash, keyHint, newApiKey, serverSecret } from '../auth/credentials.ts';
import { resolveDataDir } from '../index/data-dir.ts';
import { openStore } from '../store/open.ts';
import { StoreConflictError, type Role, type Store, type UserRecord } from '../store/store.ts';
import { UsageError } from './usage.ts';

const ROLES: Role[] = ['owner', 'member'];
const EMAIL = /^[^\s@]+@[^\s@]+$/;

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  now: () => Date;
}

const defaultIo: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), now: () => new Date() };

export async function usersCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' }, 'data-dir': { type: 'string' }, verbose: { type: 'boolean' } },
  });
  return withStore(values['data-dir'], (store) => {
    const now = io.now().toISOString();
    const audit = new AuditLog(store, io.now);
    const actor = cliActor();
    switch (sub) {
      case 'add': {
        none(positionals, 'users add');
        const email = values.email;
        if (!email || !EMAIL.test(email)) throw new UsageError(`users add needs --email ADDRESS${email ? `, got "${email}"` : ''}`);
        const role = (values.role ?? 'member') as Role;
        if (!ROLES.includes(role)) throw new UsageError(`--role must be owner or member, got "${values.role}"`);
        try {
          const u = audit.change(
            () => store.createUser({ email, name: values.name ?? email.slice(0, email.indexOf('@')), role }, now),
            (u) => ({ action: 'user.added', actor, target: { type: 'user', id: u.id }, details: { email: u.email, role: u.role } }),
          );
          io.out(`user ${u.id} ${u.email} (${u.role}) added`);
        } catch (err) {
          if (err instanceof StoreConflictError) throw new Error(`a user with the email ${email} exists already`);
          throw err;
        }
        return 0;
      }
      case 'list': {
        none(positionals, 'users list');
        const users = store.listUsers();
        if (values.json) {
          io.out(JSON.stringify(users));
          return 0;
        }
        if (users.length === 0) io.out('no users (add one with trawl users add --email ADDRESS --role owner)');
        for (const u of users) {
          const state = u.suspendedAt ? `suspended since ${u.suspendedAt}` : 'active';
          const limit = u.dailyLimit === undefined ? 'default limit' : `${u.dailyLimit} requests/day`;
          io.out(`${u.id}  ${u.email}  ${u.name}  ${u.role}  ${state}  ${limit}  last active ${u.lastActivityAt ?? 'never'}`);
        }
        return 0;
      }
      case 'suspend':
      case 'unsuspend': {
        const u = userByEmail(store, one(positionals, `users ${sub} EMAIL`));
        // Recorded when the state changes (suspending a suspended user changes nothing).
        const changes = (u.suspendedAt === undefined) === (sub === 'suspend');
        const updated = audit.change(
          () => store.updateUser(u.id, { suspendedAt: sub === 'suspend' ? (u.suspendedAt ?? now) : null }, now),
          () => (changes ? { action: sub === 'suspend' ? 'user.suspended' : 'user.unsuspended', actor, target: { type: 'user', id: u.id }, details: { email: u.email } } : undefined),
        );
        io.out(sub === 'suspend' ? `${updated.email} suspended: their API keys stop working now` : `${updated.email} is active again`);
        return 0;
      }
      case 'limit': {
        if (positionals.length !== 2) throw new UsageError('usage: trawl users limit EMAIL N (N requests per day, or "default")');
        const u = userByEmail(store, positionals[0]!);
        const text = positionals[1]!;
        const n = text === 'default' ? null : Number(text);
        if (n !== null && (!Number.isInteger(n) || n < 0)) throw new UsageError(`the limit must be a whole number of requests per day or "default", got "${text}"`);
        const was = u.dailyLimit ?? null;
        audit.change(
          () => store.updateUser(u.id, { dailyLimit: n }, now),
          () => (was === n ? undefined : { action: 'user.limit_changed', actor, target: { type: 'user', id: u.id }, details: { email: u.email, from: was ?? 'default', to: n ?? 'default' } }),
        );
        io.out(n === null ? `${u.email}: the default daily limit applies` : `${u.email}: ${n} requests per day`);
        return 0;
      }
      default:
        throw new UsageError(`users takes add, list, suspend, unsuspend or limit${sub ? `, not "${sub}"` : ''}`);
    }
  });
}

export async function keysCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { user: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' }, 'data-dir': { type: 'string' }, verbose: { type: 'boolean' } },
  });
  const dataDir = resolveDataDir(values['data-dir']);
  return withStore(values['data-dir'], (store) => {
    const now = io.now().toISOString();
    const audit = new AuditLog(store, io.now);
    const actor = cliActor();
    switch (sub) {
      case 'create': {
        none(positionals, 'keys create');
        if (!values.user) throw new UsageError('keys create needs --user EMAIL');
        const u = userByEmail(store, values.user);
        const key = newApiKey();
        const hash = credentialHash(serverSecret(dataDir), key);
        const record = audit.change(
          () => store.createApiKey({ userId: u.id, name: values.name ?? 'default', hash, hint: keyHint(key) }, now),
          (k) => ({ action: 'api_key.created', actor, target: { type: 'api_key', id: k.id }, details: { userId: u.id, email: u.email, name: k.name } }),
        );
        io.out(key);
        io.err(`trawl: key ${record.id} (${record.name}) for ${u.email}: shown once, store it now`);
        return 0;
      }
      case 'list': {
        none(positionals, 'keys list');
        if (!values.user) throw new UsageError('keys list needs --user EMAIL');
        const keys = store.listApiKeys(userByEmail(store, values.user).id);
        if (values.json) {
          io.out(JSON.stringify(keys));
          return 0;
        }
        if (keys.length === 0) io.out('no keys');
        for (const k of keys) io.out(`${k.id}  ${k.name}  ${k.hint}...  created ${k.createdAt}  last used ${k.lastUsedAt ?? 'never'}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ''}`);
        return 0;
      }
      case 'revoke': {
        const id = one(positionals, 'keys revoke ID');
        // Recorded when it takes effect: revoking a revoked key again changes nothing.
        const k = audit.change(
          () => store.revokeApiKey(id, now),
          (k) => (k?.revokedAt === now ? { action: 'api_key.revoked', actor, target: { type: 'api_key', id: k.id }, details: { userId: k.userId, name: k.name } } : undefined),
        );
        if (!k) throw new Error(`no API key with id ${id} (trawl keys list --user EMAIL shows them)`);
        io.out(`key ${k.id} (${k.name}) revoked at ${k.revokedAt}`);
        return 0;
      }
      default:
        throw new UsageError(`keys takes create, list or revoke${sub ? `, not "${sub}"` : ''}`);
    }
  });
}

function withStore(dataDirFlag: string | undefined, fn: (store: Store) => number): number {
  const store = openStore(resolveDataDir(dataDirFlag));
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

function userByEmail(store: Store, email: string): UserRecord {
  const u = store.getUserByEmail(email);
  if (!u) throw new Error(`no user with the email ${email} (trawl users list shows them)`);
  return u;
}

function none(positionals: string[], what: string): void {
  if (positionals.length > 0) throw new UsageError(`${what} takes no arguments, got "${positionals[0]}"`);
}

function one(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`usage: trawl ${usage}`);
  return positionals[0]!;
}
