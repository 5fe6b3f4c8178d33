// `trawl sessions list --user EMAIL` and `trawl sessions revoke ID` (docs/command-line.md):
// the web UI's browser sessions a user has signed in (the same records as GET /api/keys
// lists), and ending one: that browser is signed out at once, in every daemon sharing the
// store (recorded in the audit log as the operating-system account that ran the command).

import { parseArgs } from 'node:util';
import { AuditLog, cliActor, firstTime } from '../audit/log.ts';
import { escaped, jsonText } from './format.ts';
import { UsageError } from './usage.ts';
import { defaultIo, none, one, sessionLine, userByEmail, withStore, type Io } from './users-command.ts';

export const SESSIONS_HELP = `usage: trawl sessions list --user EMAIL [--json]
       trawl sessions revoke SESSION_ID

Browser sessions of the web UI (signed in with an API key or through single sign-on, 12
hours each). "list" shows the user's live sessions (not ended, not expired, their key not
revoked), newest first, with the API key or the sign-on provider each was signed in with;
"revoke" ends one: that browser is signed out at once. trawl keys revoke ends every session of a key, trawl users sign-out every session
(and scoped token and OAuth grant) of a user.

  --user EMAIL       whose sessions
  --json             one JSON array
  --data-dir DIR     data directory`;

export async function sessionsCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { user: { type: 'string' }, json: { type: 'boolean' }, 'data-dir': { type: 'string' }, verbose: { type: 'boolean' } },
  });
  return withStore(values['data-dir'], async (store) => {
    const now = io.now().toISOString();
    switch (sub) {
      case 'list': {
        none(positionals, 'sessions list');
        if (!values.user) throw new UsageError('sessions list needs --user EMAIL');
        const sessions = await store.listLiveSessions((await userByEmail(store, values.user)).id, now);
        if (values.json) {
          io.out(jsonText(sessions));
          return 0;
        }
        if (sessions.length === 0) io.out('no browser sessions');
        for (const s of sessions) {
          // Signed in with an API key, or through a single sign-on provider (its identity names it).
          const identity = s.identityId === undefined ? undefined : await store.getSignInIdentity(s.identityId);
          const origin =
            s.apiKeyId !== undefined ? escaped`  key ${s.apiKeyId}` : escaped`  single sign-on ${identity?.provider ?? '?'} (${s.identityId ?? ''})`;
          io.out(sessionLine({ ...s, lastUsedAt: s.lastUsedAt ?? null, userAgent: s.userAgent ?? null }) + origin);
        }
        return 0;
      }
      case 'revoke': {
        const id = one(positionals, 'sessions revoke SESSION_ID');
        const before = await store.getSession(id);
        if (!before) throw new Error(`no browser session with id ${id} (trawl sessions list --user EMAIL shows them)`);
        // Recorded with the change, when it takes effect (audit/log.ts).
        const s = await new AuditLog(store, io.now).change(
          async () => firstTime((await store.getSession(id))?.endedAt, await store.endSession(id, now))!,
          (x) =>
            x.first
              ? { action: 'session.ended', actor: cliActor(), target: { type: 'session', id }, details: { reason: 'operator', userId: x.userId } }
              : undefined,
        );
        io.out(
          before.endedAt === undefined
            ? escaped`browser session ${s.id} ended at ${s.endedAt}: that browser is signed out`
            : escaped`browser session ${s.id} had already ended at ${s.endedAt}`,
        );
        return 0;
      }
      default:
        throw new UsageError(`sessions takes list or revoke${sub ? `, not "${sub}"` : ''}`);
    }
  });
}
