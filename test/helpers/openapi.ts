// Checks responses against the daemon's own OpenAPI document: the status must be one the
// operation documents, and a JSON body must validate against the schema documented for
// that status (ajv, JSON Schema 2020-12, formats checked). Also validates the document
// itself with a standard OpenAPI validator.

import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }> }>>;
  components: unknown;
};

export async function validateDocument(doc: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  return new Validator().validate(doc as Record<string, unknown>);
}

export class ResponseChecker {
  private readonly ajv: Ajv2020;
  private readonly doc: Doc;

  constructor(doc: unknown) {
    this.doc = doc as Doc;
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema({ $id: 'https://trawl.invalid/openapi', components: this.doc.components });
  }

  /** Asserts the response is documented for `method path` and its JSON body has the documented shape. */
  check(method: string, path: string, status: number, body: unknown, contentType = 'application/json'): void {
    const op = this.doc.paths[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${path} is not in the OpenAPI document`);
    const res = op.responses[String(status)];
    if (!res) throw new Error(`${method} ${path} answered ${status}, which the document does not list (${Object.keys(op.responses).join(', ')})`);
    if (status === 204) return; // no body
    const media = res.content?.[contentType];
    if (!media) throw new Error(`${method} ${path} ${status}: no ${contentType} body documented`);
    this.validate(media.schema.$ref, body, `${method} ${path} ${status}`);
  }

  /** Validates a value against a named component schema. */
  validate(ref: string | undefined, value: unknown, what: string): void {
    if (!ref) return; // documented as any object
    const fn = this.ajv.getSchema(`https://trawl.invalid/openapi${ref}`);
    if (!fn) throw new Error(`no schema ${ref}`);
    if (!fn(value)) throw new Error(`${what}: body does not match ${ref}: ${this.ajv.errorsText(fn.errors)}`);
  }
}
