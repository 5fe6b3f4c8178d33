// What a route is: its method and path, the schemas of its input and output (which the
// server validates with and openapi.ts publishes), the error codes it documents, whether
// it is authenticated and rate limited, and its handler.

import type { ErrorCode } from '../errors.ts';
import type { Identity } from '../auth/identity.ts';
import type { Reply } from './respond.ts';
import type { HttpLogger } from './logging.ts';

export interface RouteContext {
  /** The request id (X-Request-Id), in every log line and response of the request. */
  id: string;
  identity: Identity;
  /** The validated body (defaults filled in), when the route has one. */
  body: unknown;
  /** The validated query parameters, when the route has them. */
  query: unknown;
  /** The query string as sent (without "?"), for a route that reads its own (OAuth). */
  rawQuery: string;
  /** The body as bytes, for a route with `rawBody` (the tool server parses its own). */
  rawBody?: Buffer;
  /** Path parameters (`{id}` segments). */
  params: Record<string, string>;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  /** The client's network address (client-address.ts: the peer, or what a trusted proxy reports); '' when a tool calls the route in-process. */
  clientAddress: string;
  reply: Reply;
  /**
   * Aborted when the client goes away, or when the server's shutdown deadline passes (then
   * with a ServiceError 503 SERVICE_UNAVAILABLE as its reason, to be answered with).
   */
  signal: AbortSignal;
  log: HttpLogger;
  /** The node of the cluster that forwarded this request (forward-endpoint.ts): it is not forwarded again. */
  forwardedFrom?: string;
}

/** A JSON answer; `undefined` when the handler wrote the response itself (streaming). */
export type RouteResult = { status?: number; body: unknown; headers?: Array<[string, string]> } | undefined;

export interface RouteResponse {
  status: number;
  description: string;
  /** A schema name under components; absent for a response without a body. */
  schema?: string;
  /** Default application/json. */
  contentType?: string;
  /** Headers the response carries, for the document. */
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

export interface Route {
  /** PATCH: a partial change of one record (its body names only what changes); PUT: the whole record, created or replaced. */
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** `/api/...`; `{name}` marks a path parameter. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Schema name of the JSON body. */
  body?: string;
  /** Schema name of the query parameters (an object schema). */
  query?: string;
  /** The POST body is read (size limit applies) but neither parsed nor validated: ctx.rawBody. */
  rawBody?: boolean;
  response: RouteResponse;
  /** Other documented outcomes (besides the error codes). */
  otherResponses?: RouteResponse[];
  /** Error codes this route answers with, besides the ones every route may give. */
  errors: ErrorCode[];
  /** Counted against the caller's daily limit (docs/http-api.md 8.9). */
  rateLimited: boolean;
  /**
   * Readable by scripts of any origin (CORS, `*`), with preflight answered: the tool server
   * and OAuth, which browser-based MCP clients call. Safe because these routes take bearer
   * credentials only, never cookies, so a page can send nothing its user did not give it.
   */
  cors?: boolean;
  /**
   * Answered while the server shuts down, too (health, which then says so); every other
   * request then gets 503 SERVICE_UNAVAILABLE.
   */
  answersWhileDraining?: boolean;
  /**
   * Reads a repository's source (forward.ts readingRepository): in a cluster, a node that
   * cannot read it has another run the request, and runs it for another.
   */
  forwardable?: boolean;
  /** Goes through authentication; false only for the system endpoints. */
  authenticated: boolean;
  handle(ctx: RouteContext): Promise<RouteResult>;
}
