// The configuration file's JSON Schema (trawl.schema.json, shipped beside this file) and
// its compiled validator. The schema is the one description of the file: the loader
// validates against it, and the error explainer (explain.ts) takes its words from it.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { COMPILED, INSTALL_ROOT } from '../install-root.ts';
import type { Ajv2020, Options, ValidateFunction } from 'ajv/dist/2020.js';

export type JsonObject = { readonly [key: string]: unknown };

/** The configuration file's JSON Schema, as shipped (deep-frozen: shared by the validator, the explainer and the tests). */
export const configSchema: JsonObject = deepFreeze(JSON.parse(readFileSync(join(INSTALL_ROOT, 'daemon/config/trawl.schema.json'), 'utf8')) as JsonObject);

/** The schema's definitions ($defs), by name. */
export const defs = configSchema.$defs as Record<string, JsonObject>;

/**
 * The options that decide what the validator accepts, in a file of their own because the
 * compiled build generates a validator from them too (scripts/compile.js): `discriminator`
 * for the connection union; `strictRequired` off because `required` is used where the
 * properties are declared elsewhere (the union's "type" in its branches, the selection
 * rules' lists beside the anyOf).
 */
export const VALIDATION_OPTIONS = JSON.parse(readFileSync(join(INSTALL_ROOT, 'daemon/config/validator-options.json'), 'utf8')) as Options;

// ajv, slow to load and slower to compile this schema for a command's start, is loaded only
// to explain a problem, or under tsx (docs/design.md, "Compiled at install, TypeScript in
// development"). CommonJS: require() gives the module's exports synchronously.
const require = createRequire(join(INSTALL_ROOT, 'package.json'));

let compiled: ValidateFunction | undefined;

/** Compiled on first use: compiling costs milliseconds that most commands (search, index) never need. */
export function validator(): ValidateFunction {
  if (compiled) return compiled;
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 };
  compiled = new Ajv({
    ...VALIDATION_OPTIONS,
    allErrors: true,
    // `verbose` gives each error its schema object, which is how explain.ts recognises
    // problems (schema paths are unstable: ajv inlines some $refs and not others).
    verbose: true,
    // Unoptimised code compiles in ~half the time and checks one small document as fast as
    // matters.
    code: { optimize: false },
  }).compile(configSchema);
  return compiled;
}

/** The compiled build's generated validator (scripts/compile.js); made from VALIDATION_OPTIONS and this schema. */
export const GENERATED_VALIDATOR = 'dist/config-validator.cjs';

let quick: ((doc: unknown) => boolean) | undefined;

/**
 * Whether `doc` is a valid configuration, as validator() decides, without compiling it
 * when the compiled build ships it as generated code (quick to load; the build's stamp
 * covers the schema and the options, so it is never older than they are). Only an invalid
 * document needs validator() itself, for the errors explain.ts words.
 */
export function isValidConfig(doc: unknown): boolean {
  if (!quick) {
    const generated = join(INSTALL_ROOT, GENERATED_VALIDATOR);
    quick = COMPILED && existsSync(generated) ? (require(generated) as { default: (d: unknown) => boolean }).default : validator();
  }
  return quick(doc);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
