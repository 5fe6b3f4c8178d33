// The configuration file's JSON Schema (trawl.schema.json, shipped beside this file) and
// its compiled validator. The schema is the one description of the file: the loader
// validates against it, and the error explainer (explain.ts) takes its words from it.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INSTALL_ROOT } from '../install-root.ts';
// The named export: under Node ESM the default import of this CommonJS module is
// `module.exports`, which TypeScript types as the namespace, not the class.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';

export type JsonObject = { readonly [key: string]: unknown };

/** The configuration file's JSON Schema, as shipped (deep-frozen: shared by the validator, the explainer and the tests). */
export const configSchema: JsonObject = deepFreeze(
  JSON.parse(readFileSync(join(INSTALL_ROOT, 'daemon/config/trawl.schema.json'), 'utf8')) as JsonObject,
);

/** The schema's definitions ($defs), by name. */
export const defs = configSchema['$defs'] as Record<string, JsonObject>;

let compiled: ValidateFunction | undefined;

/** Compiled on first use: compiling costs milliseconds that most commands (search, index) never need. */
export function validator(): ValidateFunction {
  compiled ??= new Ajv2020({
    allErrors: true,
    // `verbose` gives each error its schema object, which is how explain.ts recognises
    // problems (schema paths are unstable: ajv inlines some $refs and not others).
    verbose: true,
    discriminator: true,
    strict: true,
    // `required` is used where the properties are declared elsewhere (the union's "type" in
    // its branches, the selection rules' lists beside the anyOf), which strictRequired rejects.
    strictRequired: false,
    // Unoptimised code compiles in ~half the time (~50 ms, paid by every command that reads
    // a configuration file) and checks one small document as fast as matters.
    code: { optimize: false },
  }).compile(configSchema);
  return compiled;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
