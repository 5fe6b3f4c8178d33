// `trawl license install FILE | show | sign --key PRIVATE.pem --payload FILE`
// (docs/identity.md "License"). The store and configuration are passed in, so that the
// command is wired to the daemon's Store by main.ts and to a MemoryLicenseStore by tests.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AuditLog, cliActor } from '../audit/log.ts';
import { defaultConfig, loadConfig } from '../config/load.ts';
import type { Config } from '../config/types.ts';
import { resolveDataDir } from '../index/data-dir.ts';
import { openStore } from '../store/open.ts';
import { checkPayload, LicenseError, licenseState, signLicense, trustedKeys, verifyLicense, type License } from '../auth/license.ts';
import { installedLicense } from '../auth/license-store.ts';
import type { LicenseStore } from '../store/store.ts';
import { findConfigFile } from './config-file.ts';
import { escaped, escapeControl } from './format.ts';
import { UsageError } from './usage.ts';

export const LICENSE_HELP = `usage: trawl license install FILE
       trawl license show
       trawl license sign --key PRIVATE.pem --payload FILE

Enterprise features (organization management, scoped access tokens, OAuth) need a license:
a JSON file {"payload": "<base64url JSON>", "signature": "<base64url Ed25519 signature>"}
whose payload names an id, licensee, entitlements, issuedAt and expiresAt (ISO 8601).

  install FILE   verify FILE against the trusted public keys (the project's own key, #1,
                 then the configuration's license.publicKeys, #2...) and install it in
                 place of any previous one; an invalid, expired, not yet valid or untrusted
                 license is refused with the reason
  show           the installed license and whether it is active (exit status 1 when
                 there is none, or it has expired or no longer verifies)
  sign           for vendors and tests: sign the payload FILE (a JSON object with the
                 fields above) with an Ed25519 private key and print the license file

  --key FILE      the signing key (PEM)
  --payload FILE  the payload to sign
  --config FILE   the configuration file (for license.publicKeys)
  --data-dir DIR  data directory`;

export interface LicenseCommandDeps {
  store: LicenseStore;
  /** Records the install in the audit log, in one transaction with it (the data dir's store); tests of the command alone go without. */
  audit?: AuditLog;
  config: Config;
  now?: () => Date;
  out?: (line: string) => void;
}

export async function licenseCommand(argv: string[], deps: LicenseCommandDeps): Promise<number> {
  const out = deps.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const now = deps.now ?? (() => new Date());
  if (argv.includes('--help') || argv.includes('-h')) {
    out(LICENSE_HELP);
    return 0;
  }
  // --config, --data-dir and --verbose are the caller's (it opens the store and loads the
  // configuration); they are accepted here so the whole argv can be passed through.
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      key: { type: 'string' },
      payload: { type: 'string' },
      config: { type: 'string' },
      'data-dir': { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  const [sub, ...args] = positionals;
  if (sub === undefined) throw new UsageError('license needs a subcommand: install FILE, show, or sign (see trawl license --help)');
  if (sub !== 'sign' && (values.key !== undefined || values.payload !== undefined)) {
    throw new UsageError(`--key and --payload belong to "license sign", not "license ${sub}"`);
  }
  switch (sub) {
    case 'install': {
      if (args.length !== 1) throw new UsageError('usage: trawl license install FILE');
      const file = args[0]!;
      const text = readText(file, 'license file');
      let license: License;
      try {
        license = verifyLicense(text, trustedKeys(deps.config), now());
      } catch (err) {
        if (err instanceof LicenseError) throw new Error(`license ${file} refused: ${err.message}`);
        throw err;
      }
      const install = () => deps.store.putLicense(text);
      if (deps.audit) {
        await deps.audit.change(install, () => ({
          action: 'license.installed',
          actor: cliActor(),
          target: { type: 'license', id: license.id },
          details: { licensee: license.licensee, entitlements: license.entitlements, expiresAt: license.expiresAt },
        }));
      } else {
        await install();
      }
      out(escaped`license ${license.id} for ${license.licensee} installed: entitlements ${list(license.entitlements)}; expires ${license.expiresAt}`);
      return 0;
    }
    case 'show': {
      if (args.length !== 0) throw new UsageError(`license show takes no arguments, got "${args[0]}"`);
      const { license, reason } = await installedLicense(deps.store, trustedKeys(deps.config));
      if (!license) {
        out(escapeControl(reason!));
        return 1;
      }
      const state = licenseState(license, now());
      out(escaped`id:           ${license.id}`);
      out(escaped`licensee:     ${license.licensee}`);
      out(escaped`entitlements: ${list(license.entitlements)}`);
      out(escaped`issued:       ${license.issuedAt}`);
      out(escaped`expires:      ${license.expiresAt}`);
      out(escaped`status:       ${state.active ? 'active' : `inactive (${state.reason})`}`);
      return state.active ? 0 : 1;
    }
    case 'sign': {
      if (args.length !== 0) throw new UsageError(`license sign takes no arguments, got "${args[0]}"`);
      if (values.key === undefined || values.payload === undefined) throw new UsageError('usage: trawl license sign --key PRIVATE.pem --payload FILE');
      const key = readText(values.key, 'signing key');
      const payloadText = readText(values.payload, 'payload file');
      let payload: unknown;
      try {
        payload = JSON.parse(payloadText);
      } catch {
        throw new Error(`payload file ${values.payload} is not JSON`);
      }
      try {
        checkPayload(payload);
        out(signLicense(payload as object, key));
      } catch (err) {
        if (err instanceof LicenseError) throw new Error(`cannot sign ${values.payload}: ${err.message}`);
        throw err;
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown license subcommand "${sub}" (install, show or sign)`);
  }
}

function list(names: string[]): string {
  return names.length === 0 ? 'none' : names.join(', ');
}

/** A file's text, or an error naming the file in one line (no stack-trace-shaped noise). */
function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new Error(`cannot read ${what} ${path}: ${why}`);
  }
}

/** `trawl license ...` from the command line: the data dir's store and the configuration (for license.publicKeys). */
export async function licenseCli(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: false, options: { config: { type: 'string' }, 'data-dir': { type: 'string' } } });
  const configPath = findConfigFile(typeof values.config === 'string' ? values.config : undefined);
  const config = configPath === undefined ? defaultConfig() : loadConfig(configPath);
  const store = openStore(resolveDataDir(typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined));
  try {
    return await licenseCommand(argv, { store, config, audit: new AuditLog(store) });
  } finally {
    await store.close();
  }
}
