// A node-to-node endpoint as the HTTP server (http/server.ts, INTERNAL_PREFIX) serves it:
// an exact path, the body (POST) read whole and unparsed, the response written through a
// reply that can stream. Defined here, below the server, so that the cluster's endpoints
// need nothing of the API's layer.

/** What a node-to-node endpoint writes its response through (http/respond.ts Reply is one). */
export interface PeerReply {
  /** Set when the caller went away. */
  readonly aborted: boolean;
  json(status: number, body: unknown): void;
  send(status: number, body: string | Uint8Array, headers: Array<[string, string]>): void;
  /** Starts a streamed response. */
  begin(status: number, headers: Array<[string, string]>): void;
  /** Writes part of it; resolves once the socket took it. */
  write(data: string | Uint8Array | readonly Uint8Array[]): Promise<void>;
  end(): void;
  /** Cuts the connection (a stream that cannot be finished). */
  close(): void;
}

/** Where the node-to-node endpoints live. */
export const INTERNAL_PREFIX = '/_cluster/';

export interface InternalRoute {
  method: 'GET' | 'POST';
  path: string;
  handle(req: { query: string; headers: Readonly<Record<string, string>>; body: Buffer | undefined; reply: PeerReply; signal: AbortSignal }): Promise<void>;
}

/** The other end of a link (http/server.ts: a WebSocket of another node, cluster/link-frames.ts). */
export interface LinkPeer {
  /** Sends frames, each a binary message, in one write; nothing once the link closed. The frames are copied before it returns: their buffers may serve again. */
  send(frames: readonly Uint8Array[]): void;
  /** Closes the link, saying why (a peer that breaks the protocol). */
  close(why: string): void;
}

/** What serves a link's messages (cluster/link-server.ts). */
export interface LinkSession {
  /** A binary message of the peer (a copy of its own: it may be kept). */
  message(bytes: Uint8Array): void;
  /** The link closed (either end): its work may stop. */
  closed(): void;
}

/** Where the links between nodes are dialled (GET, upgraded to a WebSocket once authenticated). */
export const LINK_PATH = `${INTERNAL_PREFIX}link`;

/** The largest message of a link either way (a stream's shard of files, a file to shape again). */
export const LINK_MAX_MESSAGE_BYTES = 256 << 20;

/** A cluster's link endpoint (LINK_PATH). */
export interface InternalLink {
  open(peer: LinkPeer): LinkSession;
}
