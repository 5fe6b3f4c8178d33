// Tool-server sessions (MCP Streamable HTTP). A client's `initialize` POST, sent without an
// Mcp-Session-Id, creates a session: an McpServer with the tools and its own transport, and
// the id the transport hands out. Every later request names the id in Mcp-Session-Id.
//
// Binding: a session belongs to the user who opened it (the anonymous user when anonymous
// access opened it). A request naming a session of another user gets the same 404 as an
// unknown or expired id: ids are not an oracle, and a leaked id is useless to others. Each
// request is authenticated on its own and tools act with that request's identity (a
// scoped token's limits included), not with the opener's.
//
// Tool calls are counted against the caller's daily limit here, before the SDK sees them
// (call.ts).
//
// Lifetime: DELETE ends a session (the transport answers it); a session idle for `idleMs`
// is closed by a sweep. An open GET event stream is use: whatever it carries (the
// transport's keep-alive comments every `streamKeepAliveMs` among it) marks the session
// used, so a client that only waits for notifications (a subscribed watch's changes) is
// not closed as idle while it listens. Closing the daemon closes all.
//
// Caps (docs/mcp.md "Sessions": one user cannot evict everybody else's sessions): sessions
// are counted per group, a user (anonymous callers: per client address, an IPv6 /64 as
// one). A group opening one more than `maxPerUser` closes its own least recently used
// session. When `maxSessions` are open in all, room is made fairly: the group holding the
// most sessions gives up its least recently used one if it holds more than the opener will;
// otherwise the opener's own least recently used one goes; and when the opener has none
// while every other group holds one, the new session is refused (503, Retry-After):
// evicting would take someone's only session.

import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Identity } from '../auth/identity.ts';
import { addressKey } from '../http/client-address.ts';
import type { HttpLogger } from '../http/logging.ts';
import { ServiceError } from '../errors.ts';
import { refuseToolCalls, toolCallIds } from './call.ts';

export interface McpSessionsOptions {
  /** A server with the tools registered, one per session. */
  createServer: () => McpServer;
  idleMs: number;
  /** Open sessions at most, of everyone. */
  maxSessions: number;
  /** Open sessions at most per group (a user; anonymous callers per address). */
  maxPerUser: number;
  now: () => number;
  log: HttpLogger;
  /** Counts one tool call of the caller against the daily limit; throws the ServiceError (429, 503) that refuses it. */
  countToolCall?: (identity: Identity) => Promise<void>;
  /** How often an idle GET event stream carries a keep-alive comment; default the SDK's (15 s). Below idleMs. */
  streamKeepAliveMs?: number;
}

interface Session {
  owner: string;
  /** What the caps count by: the owner, or for anonymous callers the owner and the client's address key. */
  group: string;
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
}

/** The identity of the request, and the client's address, reach the tools through the SDK's authInfo. */
export function authInfoFor(identity: Identity, clientAddress = ''): AuthInfo {
  // `token` is required by the type; the credential itself is never handed on.
  return { token: '', clientId: identity.userId ?? 'anonymous', scopes: [], extra: { identity, clientAddress } };
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly options: McpSessionsOptions) {
    this.sweep = setInterval(() => void this.closeIdle(), Math.min(60_000, options.idleMs));
    this.sweep.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** `clientAddress`: the client's address (http/client-address.ts), whose key groups anonymous callers. */
  async handle(request: Request, identity: Identity, clientAddress?: string): Promise<Response> {
    const owner = identity.userId ?? 'anonymous';
    const group = identity.userId ?? (clientAddress === undefined ? 'anonymous' : `anonymous@${addressKey(clientAddress)}`);
    const authInfo = authInfoFor(identity, clientAddress);
    const id = request.headers.get('mcp-session-id');
    if (id === null) {
      if (request.method !== 'POST')
        return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required (open a session with an initialize request)');
      return this.open(request, owner, group, authInfo);
    }
    const session = this.sessions.get(id);
    if (!session || session.owner !== owner) return jsonRpcError(404, -32001, 'Session not found (expired, closed or unknown): initialize a new session');
    session.lastUsed = this.options.now();
    if (request.method === 'GET') return this.inUseWhileOpen(session, await session.transport.handleRequest(request, { authInfo }));
    if (request.method !== 'POST') return session.transport.handleRequest(request, { authInfo });
    // Parsed once here, for counting, and handed on so the transport does not parse it again.
    let body: unknown;
    try {
      body = await request.clone().json();
    } catch {
      return session.transport.handleRequest(request, { authInfo }); // not JSON: the transport answers that
    }
    const refused = await this.count(body, identity);
    return refused ?? session.transport.handleRequest(request, { authInfo, parsedBody: body });
  }

  /** The open GET event streams' ends (endStreams); undefined once they were ended. */
  private streams: Set<TransformStreamDefaultController<Uint8Array>> | undefined = new Set();

  /**
   * Ends every open GET event stream, and any opened from now on, leaving the sessions
   * and their requests in flight alone: a daemon beginning to shut down lets requests
   * finish, and a stream has no end of its own (it would hold the shutdown for its whole
   * timeout). A client that reconnects after the restart gets a new session.
   */
  endStreams(): void {
    const open = this.streams;
    this.streams = undefined;
    for (const c of open ?? []) c.terminate();
  }

  /** An event stream that marks its session used each time it carries something (the top). */
  private inUseWhileOpen(session: Session, response: Response): Response {
    if (!response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response;
    let end: TransformStreamDefaultController<Uint8Array> | undefined;
    // Ended by the transport, or left by the client: forgotten either way.
    const forget = () => {
      if (end) this.streams?.delete(end);
    };
    const touch = new TransformStream<Uint8Array, Uint8Array>({
      start: (controller) => {
        end = controller;
        if (this.streams) this.streams.add(controller);
        else controller.terminate();
      },
      transform: (chunk, controller) => {
        session.lastUsed = this.options.now();
        controller.enqueue(chunk);
      },
      flush: forget,
      cancel: forget,
    });
    // Cancelled by the client's leaving, the pipe cancels the transport's stream too (which then forgets it).
    return new Response(response.body.pipeThrough(touch), { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  /** Counts the body's tool calls (call.ts says why here); the refusal when one is over the limit. */
  private async count(body: unknown, identity: Identity): Promise<Response | undefined> {
    if (!this.options.countToolCall) return undefined;
    const ids = toolCallIds(body);
    try {
      for (let i = 0; i < ids.length; i++) await this.options.countToolCall(identity);
    } catch (err) {
      if (err instanceof ServiceError) return refuseToolCalls(ids, err, Array.isArray(body));
      throw err;
    }
    return undefined;
  }

  /** A request without a session: an initialize opens one; anything else is answered by a throwaway transport (its error). */
  private async open(request: Request, owner: string, group: string, authInfo: AuthInfo): Promise<Response> {
    let opened: string | undefined;
    let refused = false;
    const server = this.options.createServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      ...(this.options.streamKeepAliveMs !== undefined ? { keepAliveMs: this.options.streamKeepAliveMs } : {}),
      onsessioninitialized: (sessionId) => {
        // Decided here, synchronously, when the session is about to exist: concurrent opens cannot overshoot.
        if (!this.makeRoom(group)) {
          refused = true;
          return;
        }
        opened = sessionId;
        this.sessions.set(sessionId, { owner, group, server, transport, lastUsed: this.options.now() });
        this.options.log.info({ session: sessionId, owner }, 'mcp session opened');
      },
      onsessionclosed: (sessionId) => {
        void this.close(sessionId, 'deleted by the client');
      },
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { authInfo });
    if (opened === undefined) await server.close();
    if (refused) {
      this.options.log.warn({ owner, open: this.sessions.size }, 'mcp session refused: every open session is the only one of its user');
      return jsonRpcError(503, -32000, `Server busy: ${this.options.maxSessions} tool-server sessions are open, each the only one of its user; retry later`, [
        ['Retry-After', '60'],
      ]);
    }
    return response;
  }

  /**
   * Makes room for one more session of `group` (the rules at the top); false when the
   * only way would be to close another user's only session.
   */
  private makeRoom(group: string): boolean {
    const byGroup = new Map<string, Array<[string, Session]>>();
    for (const entry of this.sessions) {
      const list = byGroup.get(entry[1].group);
      if (list === undefined) byGroup.set(entry[1].group, [entry]);
      else list.push(entry);
    }
    for (const list of byGroup.values()) list.sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    const evict = (g: string, why: string): void => {
      const [id] = byGroup.get(g)!.shift()!;
      void this.close(id, why);
    };
    const mine = () => byGroup.get(group)?.length ?? 0;
    while (mine() > 0 && mine() >= this.options.maxPerUser) evict(group, 'too many sessions of this user: its least recently used');
    while (this.sessions.size >= this.options.maxSessions) {
      let largest: string | undefined;
      let most = 0;
      for (const [g, list] of byGroup) {
        // Ties: the group whose least recently used session is the oldest.
        if (list.length > most || (list.length === most && largest !== undefined && list[0]![1].lastUsed < byGroup.get(largest)![0]![1].lastUsed)) {
          [largest, most] = [g, list.length];
        }
      }
      if (largest !== undefined && largest !== group && most > mine() + 1)
        evict(largest, 'too many sessions: the user with the most gives up its least recently used');
      else if (mine() > 0) evict(group, "too many sessions: this user's least recently used makes room");
      else return false;
    }
    return true;
  }

  private async closeIdle(): Promise<void> {
    const cutoff = this.options.now() - this.options.idleMs;
    for (const [id, s] of [...this.sessions]) if (s.lastUsed < cutoff) await this.close(id, 'idle');
  }

  private async close(id: string, why: string): Promise<void> {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    this.options.log.info({ session: id, why }, 'mcp session closed');
    try {
      await s.server.close();
    } catch (err) {
      this.options.log.warn({ session: id, err: (err as Error).message }, 'closing an mcp session failed');
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id, 'daemon stopping')));
  }
}

function jsonRpcError(status: number, code: number, message: string, headers: Array<[string, string]> = []): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: [['content-type', 'application/json'], ...headers],
  });
}
