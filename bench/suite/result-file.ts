// Reading a `trawl bench run` result back: JSON, checked against bench/result.schema.json
// (the format's one description), so that compare works on what it expects or says which
// field of which file is wrong.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { INSTALL_ROOT } from '../../daemon/install-root.ts';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { hasCorePhases, RESULT_FORMAT, type AnyBenchResult, type BenchResult } from './result.ts';

export const RESULT_SCHEMA_URL = pathToFileURL(join(INSTALL_ROOT, 'bench/result.schema.json'));

let validator: ValidateFunction | undefined;

/** The schema's validator ("format": "date-time" is checked by the run that writes it, not here). */
export function resultValidator(): ValidateFunction {
  if (!validator) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, validateFormats: false });
    validator = ajv.compile(JSON.parse(readFileSync(RESULT_SCHEMA_URL, 'utf8')) as object);
  }
  return validator;
}

const describe = (e: ErrorObject) =>
  `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : ''}`;

/** The schema's complaints about a parsed result, one per line; empty when it is valid. */
export function resultErrors(data: unknown): string[] {
  const validate = resultValidator();
  return validate(data) ? [] : (validate.errors ?? []).map(describe);
}

/** A result file of any run: every core phase, or the cluster phase alone (`--only cluster`). */
export function readResultFile(file: string): AnyBenchResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
  const format = (data as { format?: unknown } | null)?.format;
  if (format !== RESULT_FORMAT) {
    throw new Error(
      `${file}: not a trawl bench run result (format ${JSON.stringify(format ?? null)}, expected "${RESULT_FORMAT}"; the older per-issue scripts' files cannot be compared)`,
    );
  }
  const errors = resultErrors(data);
  if (errors.length > 0)
    throw new Error(
      `${file}: does not match bench/result.schema.json: ${errors.slice(0, 3).join('; ')}${errors.length > 3 ? ` (and ${errors.length - 3} more)` : ''}`,
    );
  return data as AnyBenchResult;
}

/** A result file with every core phase; throws for one of the cluster phase alone. */
export function readResult(file: string): BenchResult {
  const r = readResultFile(file);
  if (!hasCorePhases(r))
    throw new Error(`${file}: a run of the ${r.options.only ?? 'cluster'} phase alone (--only ${r.options.only ?? 'cluster'}): it has none of the core phases`);
  return r;
}
