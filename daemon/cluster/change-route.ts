// What a repository's change touched, read by the node that holds its git mirror for a
// node that does not (the cluster's watches are checked on one node, and a repository's
// mirror is on the node that built it: published.ts builtBy):
//
//   POST /_cluster/change   body (msgpack): { repo, before, after }, the refs as the index
//                           recorded them before and now; answers (msgpack) { lines, paths }
//                           (repos/changed-text.ts ChangedText), or {} when the change cannot
//                           be told here (no git mirror of the repository, a commit it lacks).
//
// The repository's git source is the one its manifest on this node names, never a path
// the caller gives.

import { pack, unpack } from 'msgpackr';
import { ServiceError } from '../errors.ts';
import { loadManifest } from '../index/manifest.ts';
import { changedText, type ChangedText, type RefAt } from '../repos/changed-text.ts';
import type { InternalRoute } from './internal-route.ts';
import type { PeerClient } from './peer-client.ts';

export const CHANGE_PATH = '/_cluster/change';
/** A change is read in milliseconds; a node that has not started answering by then is not waited for. */
const CHANGE_TIMEOUT_MS = 10_000;

interface ChangeAsk {
  repo: number;
  before: RefAt[];
  after: RefAt[];
}

/** The change, read here from the repository's git mirror; undefined when it cannot be told. */
export async function localChange(dataDir: string, ask: ChangeAsk): Promise<ChangedText | undefined> {
  const m = loadManifest(dataDir, ask.repo);
  if (!m || 'unreadable' in m || m.version !== 2 || m.repo.kind !== 'git') return undefined;
  return changedText(m.repo.source, ask.before, ask.after);
}

export function changeRoute(dataDir: string): InternalRoute {
  return {
    method: 'POST',
    path: CHANGE_PATH,
    async handle({ body, reply }) {
      const ask = readAsk(body);
      const changed = await localChange(dataDir, ask);
      reply.send(200, pack(changed ? { lines: changed.lines, paths: changed.paths } : {}), [['Content-Type', 'application/x-msgpack']]);
    },
  };
}

/** The change, read by the node at `url`; undefined when it cannot be told there (or the node does not answer: the caller then reads every watch). */
export async function peerChange(peers: PeerClient, url: string, ask: ChangeAsk): Promise<ChangedText | undefined> {
  const res = await peers.send(url, { method: 'POST', target: CHANGE_PATH, body: pack(ask), timeoutMs: CHANGE_TIMEOUT_MS });
  const parts: Buffer[] = [];
  for await (const b of res) parts.push(b as Buffer);
  const answer = unpack(Buffer.concat(parts)) as { lines?: Uint8Array; paths?: unknown };
  if (!(answer.lines instanceof Uint8Array) || !Array.isArray(answer.paths) || !answer.paths.every((p) => typeof p === 'string')) return undefined;
  return { lines: Buffer.from(answer.lines.buffer, answer.lines.byteOffset, answer.lines.byteLength), paths: answer.paths as string[] };
}

function readAsk(body: Buffer | undefined): ChangeAsk {
  let ask: unknown;
  try {
    ask = body ? unpack(body) : undefined;
  } catch {
    ask = undefined;
  }
  const a = ask as Partial<ChangeAsk> | undefined;
  if (!a || !Number.isSafeInteger(a.repo) || (a.repo as number) <= 0 || !refList(a.before) || !refList(a.after))
    throw new ServiceError('INVALID_REQUEST_BODY', 'the body must be { repo, before, after }: a repository id and two lists of { name, commit }');
  return { repo: a.repo!, before: a.before, after: a.after };
}

function refList(x: unknown): x is RefAt[] {
  return (
    Array.isArray(x) && x.every((r) => typeof r === 'object' && r !== null && typeof (r as RefAt).name === 'string' && typeof (r as RefAt).commit === 'string')
  );
}
