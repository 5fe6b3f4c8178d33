// One hit of a shard shaped into the API's file result (FileResult), in the wire form the
// HTTP layer writes: the file's JSON as UTF-8 bytes. The workers shape the hits of the
// shards they search while the documents are at hand (read, checked and in the CPU's
// caches): a stream's all, a blocking search's best (search-worker.ts); the main thread
// merges them by score and writes them as they are (wire.ts). It shapes a file itself
// only when a search's budget of match ranges ends inside it (the file then gets fewer
// ranges, and its chunks differ) or when its worker left it unshaped. Both places shape
// through shapeInto(), so the two can never disagree. The JSON is written straight into
// bytes (json-bytes.ts); a test holds it to JSON.stringify of the same FileResult built
// as objects from the same pieces (range-locations.ts chunkSpans, locateRanges; wholeEnd
// below).

import type { RepoFacts, Shard } from '../index/shard-reader.ts';
import type { CodeHostType } from '../repos/hosts/types.ts';
import { DEFAULT_BASE_URL, displayName, encodePath, externalFileUrl, fileWebUrlPrefix, repoWebUrl } from '../repos/web-urls.ts';
import { locateLines } from '../../core/index.ts';
import { JsonBytes } from './json-bytes.ts';
import { chunkSpans, columnAt, nameRanges, type LineTable } from './range-locations.ts';
import { rangeCount, type ShardHit } from './shard-search.ts';
import type { Range, RepositoryInfo } from './types.ts';
import { versionMatches } from './version-matches.ts';

/** What shaping takes from the request and the daemon's settings. */
export interface ShapeOptions {
  contextLines: number;
  whole: boolean;
  /** `whole: true` gives at most this much of a file (settings.http.maxSourceBytes); Infinity: all. */
  maxWholeBytes: number;
  /** The daemon's public URL, for webUrl fields. */
  baseUrl: string;
  /**
   * A search of versions (Plan.versions): each file is written without chunks or branches,
   * with `version` (its blob id and its matches: version-matches.ts, counting a lone
   * literal's occurrences when `literalBytes` is its length, 0 otherwise).
   */
  versions?: { literalBytes: number } | undefined;
}

/** The repository as the manifest lists it now (it may have changed since the shard was built). */
export interface ListedRepo extends RepoFacts {
  displayName: string;
  codeHostType: CodeHostType;
  externalWebUrl?: string;
}

/** The repository as results show it. */
export interface ResultRepo {
  id: number;
  name: string;
  codeHostType: CodeHostType;
  externalWebUrl?: string;
  defaultBranch: string;
  /** The response's repositoryInfo entry for it. */
  info: RepositoryInfo;
}

/** The repository (member `member` of the shard) as results show it: the manifest's record, else what the shard stored. */
export function resultRepo(repoId: number, listed: ListedRepo | undefined, shard: Shard, baseUrl: string = DEFAULT_BASE_URL, member = 0): ResultRepo {
  const stored = shard.members[member]!;
  const m = stored.repo;
  const base = listed
    ? {
        id: repoId,
        name: listed.name,
        displayName: listed.displayName,
        codeHostType: listed.codeHostType,
        defaultBranch: shard.branches.names[stored.branchFirst] ?? m.branch,
      }
    : { id: m.id, name: m.name, displayName: displayName(m.name), codeHostType: m.codeHostType as CodeHostType, defaultBranch: m.branch };
  const out: ResultRepo = {
    id: base.id,
    name: base.name,
    codeHostType: base.codeHostType,
    defaultBranch: base.defaultBranch,
    info: { id: base.id, codeHostType: base.codeHostType, name: base.name, displayName: base.displayName, webUrl: repoWebUrl(baseUrl, base.name) },
  };
  if (listed?.externalWebUrl) out.externalWebUrl = listed.externalWebUrl;
  else if (!listed && m.codeHostType !== 'genericGitHost' && m.name.includes('/')) out.externalWebUrl = `https://${m.name}`;
  return out;
}

/**
 * A file of a search's answer: what merging needs to know of it, and its wire form once it
 * is shaped. A blocking search's workers shape only the files that can make its answer
 * (search-worker.ts); the others travel unshaped (`json` empty) and are shaped by the
 * searcher if it needs them after all.
 */
export interface ShapedFile {
  /** The FileResult's JSON, UTF-8; empty while the file is not shaped. */
  json: Uint8Array;
  /**
   * Match ranges it holds as shaped (a match without ranges counts one); `total` is the
   * hit's. Fewer when a budget ended inside it: then it is shaped again for any other
   * budget (`json` holds `count` ranges).
   */
  count: number;
  total: number;
  score: number;
  repositoryId: number;
  repository: string;
  path: string;
  /** The hit it was shaped from: shaped again with fewer ranges when a budget ends inside it. */
  hit: ShardHit;
  /** The index of its shard in the search's shards. */
  shard: number;
}

const UNSHAPED = new Uint8Array(0);
const NO_RECORDS: number[] = [];

/** A hit as a file of the answer, not shaped yet. */
export function unshapedFile(hit: ShardHit, repo: ResultRepo, path: string, shard: number): ShapedFile {
  const total = rangeCount(hit.ranges, hit.nameRanges);
  return { json: UNSHAPED, count: total, total, score: hit.score, repositoryId: repo.id, repository: repo.name, path, hit, shard };
}

/** The thread's writer: shaping is synchronous, one file at a time. */
const out = new JsonBytes();

/** Shapes `f` (its wire form) with at most `budget` match ranges. Reads the document: a ShardError when it is corrupt. */
export function shapeInto(f: ShapedFile, shard: Shard, repo: ResultRepo, o: ShapeOptions, budget = Infinity): void {
  out.reset();
  f.count = writeFile(out, f, { shard, repo, options: o, budget });
  f.json = out.take();
}

/** What the message and chunk buffers (below) keep between messages. */
const ARENA_KEEP = 1 << 20;

/**
 * A search worker's files of one message, written one after the other: a file's JSON is a
 * view of it, not a buffer of its own (an allocation and a copy less per file), valid
 * until messageSent() is called, once the message holding them is packed.
 */
const message = new JsonBytes(ARENA_KEEP);

/** shapeInto for a file of the message being made (its JSON a view, valid until messageSent()). */
export function shapeForMessage(f: ShapedFile, shard: Shard, repo: ResultRepo, o: ShapeOptions, budget = Infinity): void {
  const start = message.pos;
  f.count = writeFile(message, f, { shard, repo, options: o, budget });
  f.json = message.view(start);
}

/**
 * The core's chunks of the hits a stream's worker finds (core shapeChunks `keep`), kept
 * here until the message they are shaped into is packed: a view each, where a buffer per
 * file came from Buffer's pool, a new pool every few files.
 */
const chunks = new JsonBytes(ARENA_KEEP);

/** Keeps a hit's chunks (core shapeChunks `keep`) until messageSent(). */
export function keepChunks(json: Uint8Array): Uint8Array {
  const start = chunks.pos;
  chunks.copy(json, 0, json.length);
  return chunks.view(start);
}

/**
 * The files shaped for a message are packed (copied): their bytes may be written over,
 * and so may the chunks kept for them (every hit kept before is shaped by then: a stream
 * hands over all it holds).
 */
export function messageSent(): void {
  // A blocking search's batch of thousands of files grows them to tens of MB: kept, that
  // room was a worker's resident memory for good.
  message.reset(ARENA_KEEP);
  chunks.reset(ARENA_KEEP);
}

/** How a file is shaped: from its shard, for its repository, as the request asks, with at most `budget` match ranges. */
interface Shaping {
  shard: Shard;
  repo: ResultRepo;
  options: ShapeOptions;
  budget: number;
}

/**
 * Writes the hit of `f` as a FileResult's JSON (the fields in the order of the API's
 * examples) with at most `budget` of its match ranges (the name's first, then the
 * content's); the ranges written. Reads the document (Shard.contentOf: a ShardError when
 * it is corrupt).
 */
function writeFile(w: JsonBytes, f: ShapedFile, { shard, repo, options: o, budget }: Shaping): number {
  const { hit, path } = f;
  if (o.versions !== undefined) return writeVersion(w, f, { shard, repo, options: o, budget }, o.versions.literalBytes);
  // The hit's own lists when the budget takes them whole (a stream's files): no copy.
  const whole = budget >= rangeCount(hit.ranges, hit.nameRanges);
  const names = whole ? hit.nameRanges : hit.nameRanges.slice(0, 2 * Math.min(budget, hit.nameRanges.length / 2));
  const ranges = whole ? hit.ranges : hit.ranges.slice(0, 2 * Math.min(budget - names.length / 2, hit.ranges.length / 2));
  const content = hit.content ?? shard.contentOf(hit.doc);
  // The chunks the core wrote as the hit was found, when this writes all of its ranges
  // with the same context (a stream's files: search-worker.ts).
  const core = hit.chunks !== undefined && ranges.length === hit.ranges.length && hit.chunks.contextLines === o.contextLines ? hit.chunks : undefined;
  // A prefix of the hit's ranges: the first entries of its line table are theirs.
  const lines = hit.lines ?? locateLines(content, ranges);
  // Each range's first and last line: its line table's entries 0 and 2 of 4.
  const records =
    ranges.length === 0
      ? NO_RECORDS
      : shard.symbolRecordsOverlapping(hit.doc, ranges.length === hit.ranges.length ? lines : lines.slice(0, 2 * ranges.length), 4);
  const symbols: ChunkSymbols = { shard, records, lines };
  // Links point at the first branch the file matched on (the default branch when it did).
  const branch = hit.branches[0] ?? repo.defaultBranch;
  w.raw('{"fileName":{"text":');
  w.string(path);
  w.raw(',"matchRanges":[');
  nameRanges(path, names).forEach((r, i) => writeRange(w, r, i));
  // The webUrl (web-urls.ts fileWebUrl: its prefix, then the path's encoding, which is
  // ASCII JSON as it stands), the repository and its id.
  const head = fileHead(repo, o.baseUrl, branch);
  w.copy(head.url, 0, head.url.length);
  w.raw(encodePath(path));
  w.copy(head.repository, 0, head.repository.length);
  const language = shard.language(hit.doc);
  if (language !== undefined) {
    w.raw(',"language":');
    w.string(language);
  }
  w.raw(',"chunks":[');
  if (core) {
    // The core's chunks, each chunk's symbols written at its mark.
    let at = 0;
    for (let m = 0; m < core.marks.length; m += 3) {
      const mark = core.marks[m]!;
      w.copy(core.json, at, mark);
      writeSymbols(w, symbols, core.marks[m + 1]!, core.marks[m + 2]!);
      at = mark;
    }
    w.copy(core.json, at, core.json.length);
  } else {
    writeChunks(w, content, ranges, lines, { contextLines: o.contextLines, symbols: (from, to) => writeSymbols(w, symbols, from, to) });
  }
  w.raw('],"branches":[');
  hit.branches.forEach((b, i) => {
    if (i > 0) w.raw(',');
    w.string(b);
  });
  w.raw(']');
  const external = externalFileUrl(repo.codeHostType, repo.externalWebUrl, branch, path);
  if (external) {
    w.raw(',"externalWebUrl":');
    w.string(external);
  }
  if (o.whole) {
    const end = wholeEnd(content, o.maxWholeBytes);
    w.raw(',"content":');
    w.bytes(content, 0, end);
    if (end < content.length) w.raw(',"contentTruncated":true');
  }
  w.raw('}');
  return rangeCount(ranges, names);
}

/** The bytes of a file result's fields that are the same for every file of a repository's branch. */
interface FileHead {
  baseUrl: string;
  branch: string;
  /** `]},"webUrl":"` and the URL up to the file's path. */
  url: Uint8Array;
  /** `","repository":…,"repositoryId":…`. */
  repository: Uint8Array;
}

/** Per repository (a shard's: resultRepo), the head of its last branch: most files of a search are on one. */
const heads = new WeakMap<ResultRepo, FileHead>();

/**
 * A file of a search of versions (ShapeOptions.versions): its path, repository and
 * `version`, no chunks, no branches (its links name its blob: the caller links the commits
 * it finds for it). All of its ranges count as written.
 */
function writeVersion(w: JsonBytes, { hit, path }: ShapedFile, { shard, repo, options }: Shaping, literalBytes: number): number {
  const blob = shard.oid(hit.doc) ?? '';
  w.raw('{"fileName":{"text":');
  w.string(path);
  w.raw(',"matchRanges":[');
  const head = fileHead(repo, options.baseUrl, blob);
  w.copy(head.url, 0, head.url.length);
  w.raw(encodePath(path));
  w.copy(head.repository, 0, head.repository.length);
  w.raw(',"chunks":[],"branches":[],"version":{"blob":');
  w.string(blob);
  w.raw(`,"matches":${versionMatches(hit.ranges, literalBytes)}}}`);
  return rangeCount(hit.ranges, hit.nameRanges);
}

function fileHead(repo: ResultRepo, baseUrl: string, branch: string): FileHead {
  let head = heads.get(repo);
  if (head === undefined || head.branch !== branch || head.baseUrl !== baseUrl) {
    // JSON.stringify writes each character as the writer does (json-bytes.ts): the
    // string's closing quote is left for the path to come.
    const url = `]},"webUrl":${JSON.stringify(fileWebUrlPrefix(baseUrl, repo.name, branch)).slice(0, -1)}`;
    const repository = `","repository":${JSON.stringify(repo.name)},"repositoryId":${JSON.stringify(repo.id)}`;
    head = { baseUrl, branch, url: Buffer.from(url, 'utf8'), repository: Buffer.from(repository, 'utf8') };
    heads.set(repo, head);
  }
  return head;
}

/** How writeChunks writes a file's chunks: with `contextLines` lines of context, each chunk's symbols by `symbols(from, to)` (its ranges, pair indices). */
export interface ChunkWriting {
  contextLines: number;
  symbols: (from: number, to: number) => void;
}

/**
 * The chunks of flat `ranges` (with their line table) as the objects of a FileResult's
 * `chunks` array. What the core writes (core shapeChunks) where it has the document; a
 * test holds the two to the same bytes.
 */
export function writeChunks(w: JsonBytes, content: Buffer, ranges: number[], lines: LineTable, { contextLines, symbols }: ChunkWriting): void {
  chunkSpans(content, ranges, lines, contextLines).forEach((s, i) => {
    w.raw(i === 0 ? '{"content":' : ',{"content":');
    w.bytes(content, s.start, s.end);
    w.raw(',"matchRanges":[');
    for (let r = s.from; r < s.to; r++) {
      w.raw(r === s.from ? '{"start":' : ',{"start":');
      w.location(ranges[2 * r]!, lines[4 * r]!, columnAt(content, ranges, lines, 2 * r));
      w.raw(',"end":');
      w.location(ranges[2 * r + 1]!, lines[4 * r + 2]!, columnAt(content, ranges, lines, 2 * r + 1));
      w.raw('}');
    }
    w.raw('],"contentStart":');
    w.location(s.start, s.firstLine, 1);
    w.raw(',"symbols":[');
    symbols(s.from, s.to);
    w.raw(']}');
  });
}

function writeRange(w: JsonBytes, r: Range, i: number): void {
  w.raw(i === 0 ? '{"start":' : ',{"start":');
  w.location(r.start.byteOffset, r.start.lineNumber, r.start.column);
  w.raw(',"end":');
  w.location(r.end.byteOffset, r.end.lineNumber, r.end.column);
  w.raw('}');
}

/** Per shard, `,"kind":"…"` of each of its symbol kinds (meta.symbolKinds), as writeSymbols writes it: one copy a symbol. */
const kindsJson = new WeakMap<Shard, Uint8Array[]>();

function kindJson(shard: Shard, id: number): Uint8Array {
  let kinds = kindsJson.get(shard);
  if (kinds === undefined) {
    kinds = [];
    kindsJson.set(shard, kinds);
  }
  return (kinds[id] ??= Buffer.from(`,"kind":${JSON.stringify(shard.meta.symbolKinds[id] ?? '')}`, 'utf8'));
}

/** A file's definitions that may show in its chunks: the shard's symbol records overlapping its ranges, with the ranges' line table. */
interface ChunkSymbols {
  shard: Shard;
  records: number[];
  lines: LineTable;
}

/** A chunk's symbols: the definitions (symbol records) whose line span contains one of its matches (ranges [from, to)). */
function writeSymbols(w: JsonBytes, { shard, records, lines }: ChunkSymbols, from: number, to: number): void {
  let first = true;
  for (const rec of records) {
    const line = shard.symbolLine(rec);
    const endLine = shard.symbolEndLine(rec);
    let hit = false;
    for (let r = from; r < to && !hit; r++) hit = line <= lines[4 * r + 2]! && lines[4 * r]! <= endLine;
    if (!hit) continue;
    w.raw(first ? '{"symbol":' : ',{"symbol":');
    first = false;
    // From the shard's bytes: what JSON.stringify writes of the decoded name (json-bytes.ts).
    const name = shard.symbolName(rec);
    w.bytes(name.buf, name.start, name.end);
    const kind = kindJson(shard, shard.symbolKindId(rec));
    w.copy(kind, 0, kind.length);
    const parent = shard.symbolParent(rec);
    if (parent) {
      w.raw(',"parent":{"symbol":');
      w.bytes(parent.buf, parent.start, parent.end);
      w.raw(',"kind":');
      w.string(parent.kind);
      w.raw('}');
    }
    w.raw('}');
  }
}

/**
 * Where a file's content for `whole: true` ends when it holds at most `maxBytes` of it: a
 * longer file is cut before the character that would cross the limit (never inside a
 * UTF-8 sequence).
 */
export function wholeEnd(buf: Uint8Array, maxBytes: number): number {
  if (buf.length <= maxBytes) return buf.length;
  let end = maxBytes;
  // Back over continuation bytes to the start of the character at the cut: it is at most
  // three bytes back (a character has at most four); further back the bytes are not UTF-8.
  while (end > 0 && end > maxBytes - 3 && (buf[end]! & 0xc0) === 0x80) end--;
  return end;
}
