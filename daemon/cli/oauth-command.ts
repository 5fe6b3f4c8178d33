// `trawl oauth list` and `trawl oauth revoke` (docs/command-line.md): the applications
// users have let in through the OAuth consent page (oauth/), one grant per consent, and
// revoking one: every access and refresh token of that grant stops working at once, in
// every daemon sharing the store.

import { parseArgs } from 'node:util';
import { AuditLog, cliActor, firstTime } from '../audit/log.ts';
import { resolveDataDir } from '../index/data-dir.ts';
import { openStore } from '../store/open.ts';
import { escaped, jsonText } from './format.ts';
import { UsageError } from './usage.ts';

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  now: () => Date;
}

const defaultIo: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), now: () => new Date() };

export const OAUTH_HELP = `usage: trawl oauth list [--user EMAIL] [--json]
       trawl oauth revoke GRANT_ID

Applications (MCP clients) that users let in through the OAuth consent page, with the
"oauth" entitlement: one grant per consent that is still usable (a token that has neither
expired nor been revoked), newest first. "revoke" ends a grant: its access and refresh
tokens stop working at once; the application has to ask the user again.

  --user EMAIL       only this user's grants
  --json             one JSON array
  --data-dir DIR     data directory`;

export async function oauthCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { user: { type: 'string' }, json: { type: 'boolean' }, 'data-dir': { type: 'string' }, verbose: { type: 'boolean' } },
  });
  const store = openStore(resolveDataDir(values['data-dir']));
  try {
    const now = io.now().toISOString();
    switch (sub) {
      case 'list': {
        if (positionals.length > 0) throw new UsageError(`oauth list takes no arguments, got "${positionals[0]}"`);
        let userId: string | undefined;
        if (values.user !== undefined) {
          const u = await store.getUserByEmail(values.user);
          if (!u) throw new Error(`no user with the email ${values.user} (trawl users list shows them)`);
          userId = u.id;
        }
        const grants = await store.oauth.listLiveGrants(now, userId);
        const emails = new Map((await store.listUsers()).map((u) => [u.id, u.email]));
        if (values.json) {
          io.out(jsonText(grants.map((g) => ({ ...g, userEmail: emails.get(g.userId) }))));
          return 0;
        }
        if (grants.length === 0) io.out('no OAuth grants in use');
        for (const g of grants)
          io.out(escaped`${g.id}  ${emails.get(g.userId) ?? g.userId}  "${g.clientName}" (${g.clientId})  scope ${g.scope}  since ${g.createdAt}`);
        return 0;
      }
      case 'revoke': {
        if (positionals.length !== 1) throw new UsageError('usage: trawl oauth revoke GRANT_ID');
        const id = positionals[0]!;
        // Recorded in the audit log with the revocation, when it takes effect.
        const g = await new AuditLog(store, io.now).change(
          async () => firstTime((await store.oauth.getGrant(id))?.revokedAt, await store.oauth.revokeGrant(id, now)),
          (g) =>
            g?.first
              ? {
                  action: 'oauth_grant.revoked',
                  actor: cliActor(),
                  target: { type: 'oauth_grant', id: g.id },
                  details: { reason: 'operator', userId: g.userId, clientId: g.clientId },
                }
              : undefined,
        );
        if (!g) throw new Error(`no OAuth grant with id ${id} (trawl oauth list shows them)`);
        io.out(escaped`grant ${g.id} revoked at ${g.revokedAt}: its tokens no longer work`);
        return 0;
      }
      default:
        throw new UsageError(`oauth takes list or revoke${sub ? `, not "${sub}"` : ''}`);
    }
  } finally {
    await store.close();
  }
}
