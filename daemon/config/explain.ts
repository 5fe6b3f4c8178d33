// Turns ajv's validation errors into one readable problem each: what is wrong, in the
// schema's own words (its descriptions and lists), with a guess at what a typo meant, at
// the JSON pointer of the value at fault and its position in the file.

import type { ErrorObject } from 'ajv/dist/2020.js';
import { escapePointer } from './json-positions.ts';
import { defs, type JsonObject } from './schema.ts';

/** The types of a union chosen by "type", in the schema's order (for messages: the schema is the one list). */
function typesOf(union: JsonObject): readonly string[] {
  return (union.oneOf as Array<{ $ref: string }>).map((branch) => {
    const def = defs[branch.$ref.replace('#/$defs/', '')]!;
    return (def.properties as Record<string, JsonObject>).type!.const as string;
  });
}

const CONNECTION_TYPES = typesOf(defs.connection!);

/** The unions chosen by "type": what their kinds are called, and which there are. */
const UNIONS = new Map<unknown, { what: string; types: readonly string[] }>([
  [defs.connection, { what: 'connection type', types: CONNECTION_TYPES }],
  [defs.signInProvider, { what: 'sign-in provider type', types: typesOf(defs.signInProvider!) }],
]);

/** A problem at a JSON pointer, and where that value is in the file when known. */
export interface PointedProblem {
  pointer: string;
  message: string;
  offset?: number;
}

/** Turns ajv's errors into one readable problem each. */
export function explain(errors: readonly ErrorObject[], offsets: ReadonlyMap<string, number>): PointedProblem[] {
  // `if`/`then` rules (Bitbucket Server): the then-errors carry the condition; the if-error itself says nothing more.
  const conditions = errors
    .filter((e) => e.keyword === 'if' && (e.params as { failingKeyword?: string }).failingKeyword === 'then')
    .map((e) => ({
      instancePath: e.instancePath,
      prefix: e.schemaPath.replace(/\/if$/, '/then/'),
      text: describeCondition((e.parentSchema as JsonObject | undefined)?.if),
    }));
  const conditionOf = (e: ErrorObject): string | undefined =>
    conditions.find((c) => within(e.instancePath, c.instancePath) && e.schemaPath.startsWith(c.prefix))?.text;

  // anyOf failures are reported once, as the rule they express; the failures of each branch would only repeat it.
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  // A branch that is a $ref (settings.metrics.auth's secretRef) is compiled on its own:
  // its errors carry that definition's paths, so they are told by their schema object.
  const refsOf = (a: ErrorObject): unknown[] =>
    Array.isArray(a.schema)
      ? a.schema
          .map((b) => (b as JsonObject).$ref)
          .filter((r): r is string => typeof r === 'string')
          .map((r) => defs[r.replace('#/$defs/', '')])
      : [];
  const insideAnyOf = (e: ErrorObject): boolean =>
    anyOfs.some(
      (a) =>
        a !== e &&
        within(e.instancePath, a.instancePath) &&
        (e.schemaPath.startsWith(`${a.schemaPath}/`) || refsOf(a).some((def) => def !== undefined && e.parentSchema === def)),
    );

  const out: PointedProblem[] = [];
  const add = (pointer: string, message: string): void => {
    const offset = offsets.get(pointer) ?? nearestOffset(pointer, offsets);
    out.push(offset === undefined ? { pointer, message } : { pointer, message, offset });
  };

  for (const e of errors) {
    if (e.keyword === 'if' || e.keyword === 'propertyNames' || insideAnyOf(e)) continue;
    const schema = e.parentSchema as JsonObject | undefined;
    const when = conditionOf(e);
    const suffix = when ? ` when ${when}` : '';

    if (e.propertyName !== undefined) {
      // Inside propertyNames: the fault is the key itself.
      const pointer = `${e.instancePath}/${escapePointer(e.propertyName)}`;
      const what = e.instancePath === '/connections' ? 'connection name' : e.instancePath === '/signIn/providers' ? 'provider name' : 'property name';
      const rule = patternRule(schema);
      add(pointer, `invalid ${what} ${JSON.stringify(e.propertyName)}: ${rule ? `must be ${rule}` : (e.message ?? 'not allowed')}`);
      continue;
    }

    if (schema === defs.secretRef && (e.keyword === 'type' || e.keyword === 'required')) {
      add(e.instancePath, `must be {"env": "NAME"}: secrets are never written in the file; name the environment variable that holds it`);
      continue;
    }

    switch (e.keyword) {
      case 'additionalProperties': {
        const name = (e.params as { additionalProperty: string }).additionalProperty;
        const allowed = Object.keys((schema?.properties as JsonObject | undefined) ?? {});
        const guess = closest(name, allowed);
        let message = `unknown property ${JSON.stringify(name)}`;
        if (schema === defs.secretRef) message += ': a secret is only {"env": "NAME"}; secrets are never written in the file';
        else if (guess) message += ` (did you mean ${JSON.stringify(guess)}?)`;
        else message += `; allowed here: ${quoteList(allowed)}`;
        add(`${e.instancePath}/${escapePointer(name)}`, message);
        break;
      }
      case 'required': {
        const name = (e.params as { missingProperty: string }).missingProperty;
        let message = `missing required property ${JSON.stringify(name)}`;
        const union = UNIONS.get(schema);
        if (name === 'type' && union) message += `, one of ${quoteList(union.types)}`;
        add(e.instancePath, when ? `${message} (required when ${when})` : message);
        break;
      }
      case 'discriminator': {
        const { error, tagValue } = e.params as { error: string; tagValue?: unknown };
        const data = e.data as JsonObject | undefined;
        if (error === 'tag' && data?.type === undefined) break; // the `required` error says it
        const value = error === 'mapping' ? tagValue : data?.type;
        const union = UNIONS.get(schema) ?? { what: 'type', types: [] };
        const guess = typeof value === 'string' ? closest(value, union.types) : undefined;
        add(
          `${e.instancePath}/type`,
          `unknown ${union.what} ${describeValue(value)}${guess ? ` (did you mean ${JSON.stringify(guess)}?)` : ''}; allowed types: ${quoteList(union.types)}`,
        );
        break;
      }
      case 'anyOf':
        add(e.instancePath, `${describeAnyOf(e.schema, e.data)}${when ? ` (since ${when})` : ''}`);
        break;
      case 'false schema':
        add(e.instancePath, `not allowed${suffix}`);
        break;
      case 'type': {
        const expected = String((e.params as { type: string }).type)
          .split(',')
          .map((t) => TYPE_NAMES[t] ?? t)
          .join(' or ');
        add(e.instancePath, `must be ${expected}, not ${describeValue(e.data)}`);
        break;
      }
      case 'enum': {
        const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
        const guess =
          typeof e.data === 'string'
            ? closest(
                e.data,
                allowed.filter((v): v is string => typeof v === 'string'),
              )
            : undefined;
        add(
          e.instancePath,
          `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}, not ${describeValue(e.data)}${guess ? ` (did you mean ${JSON.stringify(guess)}?)` : ''}`,
        );
        break;
      }
      case 'const':
        add(e.instancePath, `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}, not ${describeValue(e.data)}`);
        break;
      case 'minimum':
      case 'maximum': {
        const limit = (e.params as { limit: number }).limit;
        add(e.instancePath, `must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${limit}, not ${describeValue(e.data)}`);
        break;
      }
      case 'minLength':
      case 'minItems':
        add(e.instancePath, (e.params as { limit: number }).limit === 1 ? 'must not be empty' : (e.message ?? 'too short'));
        break;
      case 'minProperties': {
        const names = Object.keys((schema?.properties as JsonObject | undefined) ?? {});
        add(e.instancePath, `must not be empty: give at least one of ${quoteList(names)}`);
        break;
      }
      case 'uniqueItems': {
        const { i } = e.params as { i: number };
        add(`${e.instancePath}/${i}`, `${describeValue((e.data as unknown[])[i])} is listed twice`);
        break;
      }
      case 'pattern': {
        let message = `must be ${patternRule(schema) ?? `a string matching ${JSON.stringify((e.params as { pattern: string }).pattern)}`}, not ${describeValue(e.data)}`;
        // A URL with user:password@ is a secret in the file.
        if (schema === defs.httpUrl && typeof e.data === 'string' && /^[a-z]+:\/\/[^/]*@/i.test(e.data)) {
          message += '; credentials go in "token": {"env": "NAME"}, never in the file';
        }
        add(e.instancePath, message);
        break;
      }
      default:
        add(e.instancePath, `${e.message ?? 'is invalid'}${suffix}`);
    }
  }
  return out;
}

const TYPE_NAMES: Record<string, string> = {
  object: 'an object',
  array: 'a list',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  null: 'null',
};

/**
 * A pattern's rule in words, to follow "must be": the first sentence of the description of
 * the $defs entry that holds it ("A single name (no "/")."), so the schema stays the one place
 * that says what a value may look like.
 */
function patternRule(schema: JsonObject | undefined): string | undefined {
  const description = schema?.description;
  if (typeof description !== 'string' || !Object.values(defs).includes(schema!)) return undefined;
  const text = description.split(/\.(?:\s|$)/)[0]!;
  return /^(A|An) /.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

/** `anyOf: [{required: ["orgs"]}, ...]` is the "select something" rule of a host connection. */
function describeAnyOf(branches: unknown, value: unknown): string {
  // A choice of values or a secret (settings.metrics.auth): name them.
  const forms = Array.isArray(branches)
    ? branches.flatMap((b): string[] => {
        const branch = b as JsonObject;
        if (Array.isArray(branch.enum)) return branch.enum.map((v) => JSON.stringify(v));
        return branch.$ref === '#/$defs/secretRef' ? ['{"env": "NAME"}'] : [];
      })
    : [];
  if (forms.length > 0) return `must be ${forms.slice(0, -1).join(', ')} or ${forms[forms.length - 1]}, not ${describeValue(value)}`;
  const names = Array.isArray(branches)
    ? branches.map((b) => ((b as JsonObject).required as string[] | undefined)?.[0]).filter((n): n is string => typeof n === 'string')
    : [];
  if (names.length === 0) return 'matches none of the allowed forms';
  return `nothing selected to index: add a non-empty ${quoteList(names, 'or')} list`;
}

/** `if: {properties: {deploymentType: {const: "server"}}}` → `"deploymentType" is "server"`. */
function describeCondition(ifSchema: unknown): string | undefined {
  const props = (ifSchema as JsonObject | undefined)?.properties as Record<string, JsonObject> | undefined;
  if (!props) return undefined;
  const parts = Object.entries(props)
    .filter(([, s]) => 'const' in s)
    .map(([k, s]) => `${JSON.stringify(k)} is ${JSON.stringify(s.const)}`);
  return parts.length > 0 ? parts.join(' and ') : undefined;
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'missing';
  if (Array.isArray(v)) return 'a list';
  if (v !== null && typeof v === 'object') return 'an object';
  const text = JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}..."` : text;
}

function quoteList(items: readonly unknown[], last = ''): string {
  const quoted = items.map((i) => JSON.stringify(i));
  if (!last || quoted.length < 2) return quoted.join(', ');
  return `${quoted.slice(0, -1).join(', ')} ${last} ${quoted.at(-1)}`;
}

/** The allowed name a typo most likely meant, if any is close. */
function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.toLowerCase() === name.toLowerCase() ? 0 : editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best !== undefined && bestDistance <= Math.min(2, Math.floor(best.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** The offset of the closest enclosing value that has one. */
function nearestOffset(pointer: string, offsets: ReadonlyMap<string, number>): number | undefined {
  for (let p = pointer; ; p = p.slice(0, p.lastIndexOf('/'))) {
    const o = offsets.get(p);
    if (o !== undefined || p === '') return o;
  }
}

/** Whether JSON pointer `pointer` is `ancestor` or inside it ("/a/b" is inside "/a", "/ab" is not). */
function within(pointer: string, ancestor: string): boolean {
  return pointer === ancestor || pointer.startsWith(`${ancestor}/`);
}
