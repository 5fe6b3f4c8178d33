// Linking members to their accounts on the code hosts, which the permission sync then asks
// about (permission-sync.ts): at sign-in with the host (single sign-on hands over the
// account and the member's token), by an owner naming the member's login on a connection,
// or by the sync itself when a host's verified email matches a member's. Each link and
// unlink is recorded in the audit log with what it was done to (the member and the
// connection), never with the token, which the store keeps sealed (auth/sealed-token.ts).

import type { AuditLog } from '../audit/log.ts';
import type { AuditActorOf } from '../audit/events.ts';
import { type TokenSeal, tokenOwner } from '../auth/sealed-token.ts';
import type { Config } from '../config/types.ts';
import { ServiceError } from '../errors.ts';
import { createCodeHost, HostError, type CodeHostOptions, type HostAccount, type HostPermissions } from '../repos/hosts/index.ts';
import type { ExternalAccountRecord, Store } from '../store/store.ts';
import { StoreConflictError } from '../store/store.ts';

/** A linked account as the API shows it: the token only as whether there is one. */
export type LinkedAccount = Omit<ExternalAccountRecord, 'sealedToken'> & { hasToken: boolean };

/** What single sign-on with a code host hands over: the account the member signed in with, and their token on the host. */
export interface HostSignIn {
  connection: string;
  account: HostAccount;
  token?: string;
}

export interface AccountLinksOptions {
  config: Config;
  store: Store;
  seal: TokenSeal;
  audit: AuditLog;
  now: () => Date;
  hostOptions?: CodeHostOptions;
  /** A member's accounts changed: their permissions should be asked about now. */
  onLinked?: (userId: string) => void;
}

export class AccountLinks {
  readonly #o: AccountLinksOptions;

  constructor(options: AccountLinksOptions) {
    this.#o = options;
  }

  /** Links the host account a member just signed in with (single sign-on), with their token on the host. */
  async linkSignedIn(userId: string, signIn: HostSignIn): Promise<LinkedAccount> {
    this.#permissionsOf(signIn.connection);
    const { account } = signIn;
    return this.#link({ credentialKind: 'system' }, 'sign-in', {
      userId,
      connection: signIn.connection,
      accountId: account.id,
      login: account.login,
      ...(account.email === undefined ? {} : { email: account.email.toLowerCase() }),
      ...(signIn.token === undefined ? {} : { sealedToken: this.#o.seal.seal(signIn.token, tokenOwner(userId, signIn.connection)) }),
    });
  }

  /** An owner links a member to the account with this login on the connection's host. */
  async linkByLogin(actor: AuditActorOf, userId: string, connection: string, login: string, sourceAddress?: string): Promise<LinkedAccount> {
    const permissions = this.#permissionsOf(connection);
    let account: HostAccount | undefined;
    try {
      account = await permissions.accountByLogin(login);
    } catch (err) {
      if (err instanceof HostError)
        throw new ServiceError('CODE_HOST_UNAVAILABLE', `the code host of connection "${connection}" could not be asked: ${err.message}`);
      throw err;
    }
    if (account === undefined) throw new ServiceError('HOST_ACCOUNT_NOT_FOUND', `the code host of connection "${connection}" has no account "${login}"`);
    return this.#link(
      actor,
      'owner',
      {
        userId,
        connection,
        accountId: account.id,
        login: account.login,
        ...(account.email === undefined ? {} : { email: account.email.toLowerCase() }),
      },
      sourceAddress,
    );
  }

  /** Unlinks the member's account on the connection; false when there was none. */
  async unlink(actor: AuditActorOf, userId: string, connection: string, sourceAddress?: string): Promise<boolean> {
    const gone = await this.#o.audit.change(
      () => this.#o.store.permissions.unlinkAccount(userId, connection),
      (done) =>
        done
          ? {
              action: 'host_account.unlinked',
              actor,
              target: { type: 'user', id: userId },
              details: { connection },
              ...(sourceAddress ? { sourceAddress } : {}),
            }
          : undefined,
    );
    if (gone) this.#o.onLinked?.(userId);
    return gone;
  }

  /** The member's linked accounts. */
  async list(userId: string): Promise<LinkedAccount[]> {
    return (await this.#o.store.permissions.listAccounts({ userId })).map(shown);
  }

  async #link(
    actor: AuditActorOf,
    how: ExternalAccountRecord['linkedBy'],
    link: Omit<ExternalAccountRecord, 'linkedAt' | 'linkedBy'>,
    sourceAddress?: string,
  ): Promise<LinkedAccount> {
    let record: ExternalAccountRecord;
    try {
      record = await this.#o.audit.change(
        () => this.#o.store.permissions.linkAccount({ ...link, linkedBy: how }, this.#o.now().toISOString()),
        (r) => ({
          action: 'host_account.linked',
          actor,
          target: { type: 'user', id: r.userId },
          details: { connection: r.connection, login: r.login, linkedBy: how },
          ...(sourceAddress ? { sourceAddress } : {}),
        }),
      );
    } catch (err) {
      if (err instanceof StoreConflictError) throw new ServiceError('HOST_ACCOUNT_LINKED_ELSEWHERE', err.message);
      throw err;
    }
    this.#o.onLinked?.(link.userId);
    return shown(record);
  }

  /** The permission API of a configured connection's host, or a clear refusal. */
  #permissionsOf(connection: string): HostPermissions {
    const config = this.#o.config.connections[connection];
    if (config === undefined) throw new ServiceError('CONNECTION_NOT_FOUND', `no connection "${connection}" is configured`);
    let permissions: HostPermissions | undefined;
    try {
      permissions = createCodeHost(connection, config, this.#o.hostOptions).permissions;
    } catch (err) {
      if (err instanceof HostError) throw new ServiceError('CODE_HOST_UNAVAILABLE', err.message);
      throw err;
    }
    if (permissions === undefined) throw new ServiceError('INVALID_REQUEST_BODY', `connection "${connection}" (type ${config.type}) has no accounts to link`);
    return permissions;
  }
}

function shown(record: ExternalAccountRecord): LinkedAccount {
  const { sealedToken, ...rest } = record;
  return { ...rest, hasToken: sealedToken !== undefined };
}
