// Request validation with the API's JSON Schemas (schemas/), the same objects openapi.ts
// publishes. Every failure becomes a ServiceError whose message names the field, what it
// must be (read from its schema) and what it was, e.g.
//   matches must be an integer between 1 and 100000, got -3
// Bodies: 400 INVALID_REQUEST_BODY. Query strings: 400 MISSING_REQUIRED_QUERY_PARAMETER or
// INVALID_QUERY_PARAMS; their values arrive as strings and integers are coerced.

import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { NO_CONTROL_CHARACTERS } from '../auth/control-characters.ts';
import { ServiceError } from '../errors.ts';
import { COMPONENTS, type JsonSchema } from './schemas/common.ts';

const DOC_ID = 'https://trawl.invalid/api';

export type Validate<T> = (value: unknown) => T;

export class Validators {
  private readonly body: Ajv2020;
  private readonly query: Ajv2020;

  constructor(schemas: Record<string, JsonSchema>) {
    // Formats (date-time) describe responses; requests carry none that need checking.
    const common = { strict: true, allErrors: false, verbose: true, useDefaults: true, validateFormats: false } as const;
    this.body = new Ajv2020(common);
    this.query = new Ajv2020({ ...common, coerceTypes: true });
    // The schemas sit where the OpenAPI document has them, so their $refs resolve in both.
    for (const ajv of [this.body, this.query]) {
      ajv.addKeyword({ keyword: 'components', schemaType: 'object' });
      ajv.addSchema({ $id: DOC_ID, components: { schemas } });
    }
  }

  /** A validator of a JSON body against the named schema; returns the value with defaults filled in. */
  forBody<T>(name: string): Validate<T> {
    const fn = this.compile(this.body, name);
    return (value) => {
      if (fn(value)) return value as T;
      throw new ServiceError('INVALID_REQUEST_BODY', describe(fn.errors![0]!, 'body'));
    };
  }

  /** A validator of parsed query parameters (each once) against the named object schema. */
  forQuery<T>(name: string): Validate<T> {
    const fn = this.compile(this.query, name);
    return (value) => {
      if (fn(value)) {
        // Coercion reads "1e999" and "Infinity" as numbers that pass `integer`: refuse them.
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          if (typeof v === 'number' && !Number.isFinite(v)) throw new ServiceError('INVALID_QUERY_PARAMS', `${k} must be a finite number, got ${v}`);
        }
        return value as T;
      }
      const e = fn.errors![0]!;
      throw new ServiceError(e.keyword === 'required' ? 'MISSING_REQUIRED_QUERY_PARAMETER' : 'INVALID_QUERY_PARAMS', describe(e, 'query'));
    };
  }

  private compile(ajv: Ajv2020, name: string): ValidateFunction {
    const fn = ajv.getSchema(`${DOC_ID}${COMPONENTS}${name}`);
    if (!fn) throw new Error(`no schema named ${name}`);
    return fn;
  }
}

/** One line for people: which field, what it must be, what it was. */
function describe(e: ErrorObject, where: 'body' | 'query'): string {
  const field = fieldName(e.instancePath, where);
  const schema = (e.parentSchema ?? {}) as JsonSchema;
  switch (e.keyword) {
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      return where === 'query' ? `missing required query parameter "${missing}"` : `${joinField(field, missing)} is required`;
    }
    case 'additionalProperties': {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      const allowed = Object.keys((schema.properties ?? {}) as object);
      const what = where === 'query' ? 'query parameter' : 'field';
      return `unknown ${what} "${joinField(field, extra)}"; allowed: ${allowed.length > 0 ? allowed.join(', ') : 'none'}`;
    }
    default:
      if (e.instancePath === '' && where === 'body') return `the request body must be ${expected(schema)}`;
      return `${field} must be ${expected(schema)}, got ${shown(e.data)}`;
  }
}

function fieldName(pointer: string, where: 'body' | 'query'): string {
  if (pointer === '') return where === 'body' ? 'the request body' : 'the query';
  return pointer
    .slice(1)
    .split('/')
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : `${i > 0 ? '.' : ''}${p.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('');
}

function joinField(parent: string, child: string): string {
  return parent === 'the request body' || parent === 'the query' ? child : `${parent}.${child}`;
}

/** What a value must be, in words, from its schema. */
export function expected(s: JsonSchema): string {
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  const type = Array.isArray(s.type) ? s.type.join(' or ') : (s.type as string | undefined);
  switch (type) {
    case 'integer':
    case 'number': {
      const noun = type === 'integer' ? 'an integer' : 'a number';
      if (typeof s.minimum === 'number' && typeof s.maximum === 'number') return `${noun} between ${s.minimum} and ${s.maximum}`;
      if (typeof s.minimum === 'number') return `${noun} of at least ${s.minimum}`;
      if (typeof s.maximum === 'number') return `${noun} of at most ${s.maximum}`;
      return noun;
    }
    case 'string': {
      const parts: string[] = [];
      if (typeof s.minLength === 'number' && s.minLength > 0) parts.push('non-empty');
      let out = `a ${parts.join(' ')}${parts.length ? ' ' : ''}string`;
      if (typeof s.maxLength === 'number') out += ` of at most ${s.maxLength} characters`;
      if (s.pattern === NO_CONTROL_CHARACTERS) out += ' without control or bidirectional-override characters';
      else if (typeof s.pattern === 'string') out += ` matching ${s.pattern}`;
      return out;
    }
    case 'boolean':
      return 'a boolean (true or false)';
    case 'array': {
      const items = (s.items ?? {}) as JsonSchema;
      const of = items.type === 'string' ? ' of strings' : items.type === 'integer' ? ' of integers' : '';
      if (typeof s.minItems === 'number' && s.minItems > 0 && typeof s.maxItems === 'number') return `an array${of} with ${s.minItems} to ${s.maxItems} items`;
      if (typeof s.maxItems === 'number') return `an array${of} of at most ${s.maxItems} items`;
      if (typeof s.minItems === 'number' && s.minItems > 0) return `an array${of} with at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`;
      return `an array${of}`;
    }
    case 'object':
      return 'a JSON object';
    default:
      return type ? `of type ${type}` : 'valid';
  }
}

/** The offending value, shortened: messages must stay one readable line. */
function shown(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    // Nested too deeply to serialize (String() would overflow the stack again).
    return Array.isArray(v) ? 'a deeply nested array' : typeof v === 'object' ? 'a deeply nested object' : typeof v;
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
