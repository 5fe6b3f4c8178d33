// The configuration's `signIn` section (docs/configuration.md, docs/identity.md "Single
// sign-on"): the rules the schema cannot express, and the section completed with its
// defaults. load.ts calls both.
//
// A provider's address is where trawl learns who signs in, so it must be https: over plain
// http anyone on the network path could answer for the provider and sign in as anybody.
// Only a loopback address may be http (a provider on the same machine, and the tests).

import type { HostSignInProvider, SignInConfig, SignInProvider } from './types.ts';

/** The scopes asked for when the file names none: enough to read who signed in, and with a connection what their account can read. */
export const DEFAULT_SCOPES = {
  oidc: ['openid', 'email', 'profile'],
  github: ['read:user', 'user:email'],
  gitlab: ['read_user'],
} as const;

/** What a host provider with a connection asks for besides: the repositories its account can read (the permission sync needs them). */
export const CONNECTION_SCOPES = { github: ['repo'], gitlab: ['read_api'] } as const;

/** The default web URLs and button labels of the host providers. */
export const HOST_PROVIDER_DEFAULTS = {
  github: { url: 'https://github.com', displayName: 'GitHub' },
  gitlab: { url: 'https://gitlab.com', displayName: 'GitLab' },
} as const;

export const DEFAULT_SIGN_IN: SignInConfig = { providers: {}, defaultRole: 'member', provision: true };

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** The schema's oauthScope. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

type Add = (pointer: string, message: string) => void;

/**
 * Problems of the section that relate two values: the public URL the providers send people
 * back to, the scheme of each provider's address, OpenID Connect's "openid" scope, and the
 * connection a host provider links accounts of. Works on unvalidated data (the schema's
 * errors are reported separately), so it guards every access.
 */
export function signInChecks(value: Record<string, unknown>, add: Add): void {
  const signIn = isObject(value.signIn) ? value.signIn : undefined;
  const providers = signIn && isObject(signIn.providers) ? signIn.providers : {};
  const names = Object.keys(providers);
  if (names.length === 0) return;
  const settings = isObject(value.settings) ? value.settings : {};
  if (settings.publicUrl === undefined)
    add(
      '/signIn/providers',
      `settings.publicUrl must be set when a sign-in provider is configured: the providers send people back to <publicUrl>/auth/${names[0]}/callback, the redirect URI registered with them`,
    );
  const connections = isObject(value.connections) ? value.connections : {};
  for (const [name, p] of Object.entries(providers)) {
    if (!isObject(p)) continue;
    const at = `/signIn/providers/${name}`;
    const address = p.type === 'oidc' ? 'issuer' : 'url';
    if (typeof p[address] === 'string' && insecure(p[address]))
      add(
        `${at}/${address}`,
        `must be https:// (http:// only on a loopback address): over plain http anyone on the network path could answer for the provider, and sign in as anybody`,
      );
    // Only of a list the schema accepts: a malformed one is reported as that alone.
    const scopes = Array.isArray(p.scopes) && p.scopes.length > 0 && p.scopes.every((s) => typeof s === 'string' && SCOPE.test(s)) ? p.scopes : undefined;
    if (p.type === 'oidc' && scopes && !scopes.includes('openid'))
      add(`${at}/scopes`, 'must include "openid": without it the provider answers with no ID token, and so does not say who signed in');
    if ((p.type === 'github' || p.type === 'gitlab') && typeof p.connection === 'string') connectionCheck(p, `${at}/connection`, connections, add);
  }
}

/** A host provider's connection: configured, of the provider's type, on the provider's host. */
function connectionCheck(p: Record<string, unknown>, at: string, connections: Record<string, unknown>, add: Add): void {
  const name = p.connection as string;
  const c = connections[name];
  if (!isObject(c)) {
    add(at, `no connection ${JSON.stringify(name)} in /connections: the accounts of people who sign in are linked to that connection's host`);
    return;
  }
  const type = p.type as 'github' | 'gitlab';
  if (c.type !== type) {
    add(at, `connection ${JSON.stringify(name)} is of type ${JSON.stringify(c.type)}: a ${type} provider links accounts of a ${type} connection`);
    return;
  }
  const mine = originOf(typeof p.url === 'string' ? p.url : HOST_PROVIDER_DEFAULTS[type].url);
  const theirs = originOf(typeof c.url === 'string' ? c.url : HOST_PROVIDER_DEFAULTS[type].url);
  if (mine !== undefined && theirs !== undefined && mine !== theirs)
    add(at, `connection ${JSON.stringify(name)} is on ${theirs}, this provider on ${mine}: an account on one host says nothing of the other`);
}

/** The section as the daemon holds it: defaults filled in, URLs without a trailing "/", domains in lower case. */
export function completeSignIn(file: FileSignIn | undefined): SignInConfig {
  const providers: Record<string, SignInProvider> = {};
  for (const [name, p] of Object.entries(file?.providers ?? {})) providers[name] = completeProvider(p);
  const out: SignInConfig = {
    providers,
    defaultRole: file?.defaultRole ?? DEFAULT_SIGN_IN.defaultRole,
    provision: file?.provision ?? DEFAULT_SIGN_IN.provision,
  };
  if (file?.allowedDomains) out.allowedDomains = file.allowedDomains.map((d) => d.toLowerCase());
  return out;
}

function completeProvider(p: FileSignInProvider): SignInProvider {
  const client = { clientId: p.clientId, clientSecret: { env: p.clientSecret.env } };
  if (p.type === 'oidc') {
    // The issuer stays exactly as written: the discovery document must name the same one.
    return { type: 'oidc', issuer: p.issuer!, ...client, displayName: p.displayName!, scopes: [...(p.scopes ?? DEFAULT_SCOPES.oidc)] };
  }
  const defaults = HOST_PROVIDER_DEFAULTS[p.type];
  const scopes = p.scopes ?? [...DEFAULT_SCOPES[p.type], ...(p.connection === undefined ? [] : CONNECTION_SCOPES[p.type])];
  const out: HostSignInProvider = {
    type: p.type,
    url: (p.url ?? defaults.url).replace(/\/+$/, ''),
    ...client,
    displayName: p.displayName ?? defaults.displayName,
    scopes: [...scopes],
  };
  if (p.connection !== undefined) out.connection = p.connection;
  return out;
}

/** The section as the file holds it once validated. */
export interface FileSignIn {
  providers?: Record<string, FileSignInProvider>;
  allowedDomains?: string[];
  defaultRole?: 'member' | 'owner';
  provision?: boolean;
}

interface FileSignInProvider {
  type: SignInProvider['type'];
  issuer?: string;
  url?: string;
  clientId: string;
  clientSecret: { env: string };
  displayName?: string;
  scopes?: string[];
  connection?: string;
}

/** Whether `url` is plain http to a host that is not loopback. */
function insecure(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' && !LOOPBACK.has(u.hostname);
  } catch {
    return false; // the schema's pattern reports it
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
