// Builds one shard from a list of files: decides what is indexed and what is skipped,
// extracts trigrams through the WebAssembly core and streams the content into a
// ShardWriter. Runs inside an index worker (build-worker.ts); one shard at a time per
// thread, because the core's PostingsBuilder owns large regions of wasm memory.

import { closeSync, openSync, readSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { PostingsBuilder, WordsBuilder, hash32 } from '../../core/index.ts';
import { contentWordsOf, encodeContentWords, WORD_MIN_DOCS } from './content-words.ts';
import { CONTENT_SEGMENTS, encodeContentSegments } from './content-segments.ts';
import { encodeBranchLists } from './branch-set.ts';
import { encodeDocGroups } from './doc-groups.ts';
import { compareStaticRank, staticRankKey } from './file-class.ts';
import { detectLanguage } from './language.ts';
import { ctagsAvailable } from '../symbols/ctags.ts';
import { symbolExtraction } from '../symbols/extract.ts';
import { SymbolSections } from './symbol-sections.ts';
import {
  DOC_FLAG_ASCII_FOLDS_ONLY,
  DOC_FLAG_CRLF,
  DOC_RECORD_SIZE,
  OID_SIZE,
  SHARD_FORMAT,
  SectionKind,
  ngramTable,
  type ShardMeta,
  type SymbolsFileMeta,
  type ShardRepoMeta,
  type SkippedFile,
} from './shard-format.ts';
import { ShardWriter } from './shard-writer.ts';
import { VersionDeltas } from './version-deltas.ts';
import type { SymbolDef } from '../symbols/ctags.ts';
import { bufferView } from '../runtime/buffer-view.ts';

export interface ShardFile {
  /** Path inside the repository, '/'-separated. */
  path: string;
  size: number;
  /** Where to read the bytes (plain directories) ... */
  absPath?: string;
  /** ... or the bytes themselves (git blobs: job-blobs.ts reads them before the build). */
  data?: Uint8Array;
  /** Git blob id (40 hex digits). */
  oid?: string;
  /** Indexes into its repository's branches (ShardJob.branches, or its member's) of the branches holding this version; default [0]. */
  branches?: number[];
  /** Its repository in a compound job: an index into ShardJob.members; default 0. */
  member?: number;
  /**
   * A document of an existing shard to copy (a merge of compound shards, pack-merge.ts):
   * job-blobs.ts fills `data` with its bytes and `known` with its definitions there.
   */
  from?: { shard: string; symbols?: string; doc: number };
  /** The file's definitions, known already (copied from the shard it comes from): ctags does not run on it again. */
  known?: SymbolDef[];
}

/** A repository of a compound job (shard-format.ts ShardMember). */
export interface JobMember {
  repo: ShardRepoMeta;
  /** Branch and tag names its files' `branches` refer to; [0] is its default branch. */
  branches: string[];
  /** The git repository its files' blobs are read from (readJobBlobs). */
  gitDir?: string;
  /** Files recorded as skipped before (a merge copies a repository's documents, not its skipped files). */
  skipped?: SkippedFile[];
}

export interface ShardJob {
  finalPath: string;
  repo: ShardRepoMeta;
  shardIndex: number;
  files: ShardFile[];
  maxFileSize: number;
  maxTrigrams: number;
  indexedAt: string;
  /** Branch and tag names the files' `branches` refer to; [0] is the default branch. */
  branches: string[];
  /** Extract symbol definitions with universal-ctags (default: when it is installed). */
  symbols?: boolean;
  /**
   * The symbols pass adds the symbols and the content words after the content is committed
   * (symbols-pass.ts): the shard is built with an empty content-words section (a dictionary
   * listing no word, which a search reads as "decide by the bytes"), and `symbols` is false.
   */
  later?: boolean;
  /** The git repository the files' blobs are read from (readJobBlobs, before buildShard). */
  gitDir?: string;
  /**
   * Number the content postings by group of adjacent documents with the same path, not by
   * document (doc-groups.ts): for a history shard, whose versions of one path hold nearly
   * the same trigrams.
   */
  grouped?: boolean;
  /**
   * A compound shard's repositories (several small ones in one shard: each file names its
   * `member`); absent: the shard's one repository is `repo`, with `branches` and `gitDir`.
   */
  members?: JobMember[];
  /**
   * Store a version of a path as a delta against the version before it (version-deltas.ts):
   * the history index's shards, whose documents are many versions of each path, each next
   * to the others (staticOrder keeps the order the files are given in among one path's
   * versions). Never with members: a compound shard's documents are copied out of it again
   * (pack-merge.ts), and history is never packed.
   */
  versionDeltas?: boolean;
  /**
   * Store the compressible sections compressed (compressed-section.ts; shard-format.ts
   * COMPRESSIBLE_SECTIONS): the history index's shards, whose paths, branch lists and symbols
   * repeat from one version to the next. Its symbols file is compressed too (symbols-pass.ts).
   */
  compressed?: boolean;
}

/** The repositories of a job: its members, or its one repository. */
export function jobMembers(job: ShardJob): JobMember[] {
  return job.members ?? [{ repo: job.repo, branches: job.branches, ...(job.gitDir !== undefined ? { gitDir: job.gitDir } : {}) }];
}

export interface ShardResult {
  path: string;
  docCount: number;
  contentBytes: number;
  /** Bytes of every file of the job, indexed or skipped. */
  totalBytes: number;
  skipped: SkippedFile[];
  symbolCount: number;
  symbolFailures: number;
  /** Per member of the job (jobMembers): its documents, their bytes and its files skipped. */
  members: MemberResult[];
}

/** What a compound shard holds of one of its repositories. */
export interface MemberResult {
  docs: number;
  contentBytes: number;
  skipped: SkippedFile[];
  /** The whole shard's content bytes and documents (all members'). */
  shardContentBytes: number;
  shardDocs: number;
}

export type ProgressFn = (files: number, bytes: number) => void;

const PROGRESS_EVERY_FILES = 256;
// 2: documents in static-rank order (file-class.ts) rather than path order.
// 3: members (format version 7): documents grouped by repository, each group in static-rank order.
const BUILDER = 'trawl-shard-builder/3';

// Shared structures are not used: each META section is self-describing (records carry
// their own structure definitions inline), so a reader needs nothing but the section.
const packr = new Packr({ useRecords: true });

/** The meta section of a shard, or of a symbols file (symbols-pass.ts). */
export function packMeta(meta: ShardMeta | SymbolsFileMeta): Uint8Array {
  return packr.pack(meta);
}

export function buildShard(job: ShardJob, onProgress?: ProgressFn): ShardResult {
  if (job.versionDeltas && job.members !== undefined) throw new Error('shard builder: a compound shard is never built with version deltas');
  const writer = new ShardWriter(job.finalPath, SHARD_FORMAT, job.compressed === true);
  let contentBuilder: PostingsBuilder | undefined;
  let wordsBuilder: WordsBuilder | undefined;
  try {
    contentBuilder = new PostingsBuilder({
      expectedBytes: job.files.reduce((n, f) => n + f.size, 0),
      segments: CONTENT_SEGMENTS,
      grouped: job.grouped === true,
    });
    // (A large part of a content build: later, it is the symbols pass's.)
    wordsBuilder = job.later ? undefined : new WordsBuilder();
    const withSymbols = job.symbols !== false && ctagsAvailable();
    const symbols = new SymbolSections(withSymbols);
    const docs = new ShardDocuments(jobMembers(job), {
      ...(job.grouped === true ? { largest: largestVersions(job.files) } : {}),
      ...(job.versionDeltas ? { deltas: new VersionDeltas() } : {}),
    });
    const totalBytes = addFiles(job, docs, { writer, content: contentBuilder, words: wordsBuilder, symbols }, onProgress);
    const memberSkipped = skippedByMember(job, docs);

    // The words first: their regions are free again before the postings' large ones are taken.
    const contentWords = wordsBuilder ? encodeContentWords(wordsBuilder.finish(WORD_MIN_DOCS), WORD_MIN_DOCS) : contentWordsOf([]);
    wordsBuilder = undefined;
    const contentPostings = contentBuilder.finish();
    contentBuilder = undefined;
    // File-name trigrams: a second builder, now that the content builder is released.
    const namePostings = namePostingsOf(docs.names);
    const builtSymbols = symbols.finish(docs.records.length);
    const meta = shardMeta(job, docs, memberSkipped, { kinds: builtSymbols.kinds, failures: builtSymbols.failures, indexed: withSymbols });
    writer.finish(
      new Map<SectionKind, Uint8Array>([
        [SectionKind.Docs, docTable(docs.records)],
        [SectionKind.Names, Buffer.concat(docs.names)],
        [SectionKind.ContentNgrams, ngramTable(contentPostings)],
        [SectionKind.ContentPostings, contentPostings.blob],
        [SectionKind.ContentFollow, contentPostings.follow],
        [SectionKind.NameNgrams, ngramTable(namePostings)],
        [SectionKind.NamePostings, namePostings.blob],
        ...builtSymbols.sections,
        [SectionKind.Branches, encodeBranchLists({ names: docs.branchNames, lists: docs.branchDocs.map((l) => Uint32Array.from(l)) })],
        [SectionKind.Oids, oidTable(docs.oids)],
        [SectionKind.ContentWords, contentWords],
        [SectionKind.ContentSegments, encodeContentSegments(contentPostings.segments)],
        [SectionKind.DocGroups, encodeDocGroups(docs.groupFirsts ?? [], docs.records.length)],
        [SectionKind.Meta, packMeta(meta)],
      ]),
      hash32(new Uint8Array(Uint32Array.from(docs.records, (d) => d.hash).buffer)),
    );
    return {
      path: job.finalPath,
      docCount: docs.records.length,
      contentBytes: docs.contentBytes,
      totalBytes,
      skipped: docs.skipped,
      symbolCount: builtSymbols.count,
      symbolFailures: builtSymbols.failures,
      members: memberResults(docs, memberSkipped),
    };
  } catch (err) {
    contentBuilder?.dispose();
    wordsBuilder?.dispose();
    writer.abort();
    throw err;
  }
}

/** A document's record in the docs section (its name's offset is the sum of the names' lengths before it). */
interface DocRecord {
  nameLen: number;
  contentOff: number;
  contentLen: number;
  /** What the content section holds of it (DOC_FLAG_DELTA, DOC_FLAG_DEFLATE: version-deltas.ts); 0 for its bytes as they are. */
  storedLen: number;
  hash: number;
  lang: number;
  flags: number;
}

/** Where a document's bytes go: the shard's content, the trigram and word builders, the symbols. */
interface DocumentSinks {
  writer: ShardWriter;
  content: PostingsBuilder;
  words: WordsBuilder | undefined;
  symbols: SymbolSections;
}

/** The documents of a shard being built, in document order, and the files left out. */
class ShardDocuments {
  readonly records: DocRecord[] = [];
  readonly names: Buffer[] = [];
  readonly oids: Array<string | undefined> = [];
  readonly languages: string[] = [];
  private readonly languageIndex = new Map<string, number>();
  /** The files skipped (in document order until skippedByMember), and the job's file of each. */
  readonly skipped: SkippedFile[] = [];
  readonly skippedFiles: ShardFile[] = [];
  /** The branches section's lists: each member's follow the previous member's, from branchBase[member]. */
  readonly branchBase: number[] = [];
  readonly branchNames: string[] = [];
  readonly branchDocs: number[][];
  /** Each member's documents: [memberFirst, memberEnd). */
  readonly memberFirst: number[];
  readonly memberEnd: number[];
  contentBytes = 0;
  /** The member of the last file added. */
  private member = -1;
  /** Grouped postings (ShardJob.grouped): each group's first document; else undefined. */
  readonly groupFirsts: number[] | undefined;
  /** The last document's path, and its member: the next one with both joins its group. */
  private lastPath: string | undefined;
  private lastMember = -1;
  private readonly largest: Map<string, number> | undefined;
  private readonly deltas: VersionDeltas | undefined;

  /**
   * `largest` (grouped postings only): each member's paths' largest version, in bytes
   * (largestVersions); `deltas` (ShardJob.versionDeltas): which documents are deltas.
   */
  constructor(
    readonly members: JobMember[],
    { largest, deltas }: { largest?: Map<string, number>; deltas?: VersionDeltas } = {},
  ) {
    this.largest = largest;
    this.deltas = deltas;
    this.groupFirsts = largest ? [] : undefined;
    for (const m of members) {
      this.branchBase.push(this.branchNames.length);
      this.branchNames.push(...m.branches);
    }
    this.branchDocs = this.branchNames.map(() => []);
    this.memberFirst = members.map(() => 0);
    this.memberEnd = members.map(() => 0);
  }

  /** Reads `file` and adds it as the next document, or records why it is skipped. */
  add(file: ShardFile, job: ShardJob, sinks: DocumentSinks): void {
    const m = file.member ?? 0;
    // (staticOrder groups the files by member, in member order.)
    if (m !== this.member) this.startMember(m);
    const read = readable(file, job.maxFileSize);
    if (!(read instanceof Uint8Array)) return this.skip(file, read.size, read.reason);
    const content = read;
    const docId = this.records.length;
    // Grouped: a posting is a group, and the document joins the last one when it is the same path's.
    const groups = this.groupFirsts;
    const joins = groups !== undefined && this.lastMember === m && this.lastPath === file.path;
    const posting = groups === undefined ? docId : joins ? groups.length - 1 : groups.length;
    const groupBytes = this.largest?.get(versionKey(m, file.path)) ?? content.length;
    if (sinks.content.addContent(posting, content, job.maxTrigrams, Math.max(groupBytes, content.length)) < 0) {
      return this.skip(file, content.length, 'too-many-trigrams');
    }
    if (groups !== undefined && !joins) groups.push(docId);
    this.lastPath = file.path;
    this.lastMember = m;
    sinks.words?.add(docId, content);
    for (const b of file.branches ?? [0]) this.branchDocs[this.branchBase[m]! + b]!.push(docId);
    this.oids.push(file.oid);
    const name = Buffer.from(file.path, 'utf8');
    this.names.push(name);
    const stored = this.deltas?.next(file.path, content, file.data !== undefined);
    this.records.push({
      nameLen: name.length,
      contentOff: sinks.writer.appendContent(stored?.bytes ?? content),
      contentLen: content.length,
      storedLen: stored?.flags ? stored.bytes.length : 0,
      hash: hash32(content),
      lang: this.languageOf(detectLanguage(file.path, content.subarray(0, 256))),
      flags:
        (bufferView(content).indexOf('\r\n') !== -1 ? DOC_FLAG_CRLF : 0) |
        (sinks.content.lastFoldsToAscii ? 0 : DOC_FLAG_ASCII_FOLDS_ONLY) |
        (stored?.flags ?? 0),
    });
    this.contentBytes += content.length;
    sinks.symbols.add(docId, file.path, content, file.known);
  }

  /** After the last file: every member's document range. */
  end(): void {
    const members = this.members;
    for (let k = this.member + 1; k < members.length; k++) this.memberFirst[k] = this.records.length;
    members.forEach((_, k) => (this.memberEnd[k] = k + 1 < members.length ? this.memberFirst[k + 1]! : this.records.length));
  }

  /** The next documents are member m's (and the members between, with none, start here too). */
  private startMember(m: number): void {
    for (let k = this.member + 1; k <= m; k++) this.memberFirst[k] = this.records.length;
    this.member = m;
  }

  private skip(file: ShardFile, size: number, reason: SkippedFile['reason']): void {
    this.skipped.push(file.oid ? { path: file.path, size, reason, oid: file.oid } : { path: file.path, size, reason });
    this.skippedFiles.push(file);
  }

  /** The language's index in meta.languages, added when new. */
  private languageOf(language: string): number {
    let lang = this.languageIndex.get(language);
    if (lang === undefined) {
      lang = this.languages.length;
      this.languages.push(language);
      this.languageIndex.set(language, lang);
    }
    return lang;
  }
}

/** Adds the job's files in document order (staticOrder), telling the progress; the bytes of every file. */
function addFiles(job: ShardJob, docs: ShardDocuments, sinks: DocumentSinks, onProgress: ProgressFn | undefined): number {
  let doneFiles = 0;
  let doneBytes = 0;
  for (const file of staticOrder(job.files)) {
    doneFiles++;
    doneBytes += file.size;
    if (onProgress && doneFiles % PROGRESS_EVERY_FILES === 0) onProgress(doneFiles, doneBytes);
    docs.add(file, job, sinks);
  }
  onProgress?.(doneFiles, doneBytes);
  docs.end();
  return doneBytes;
}

/** The file's bytes, or why it is not indexed before its trigrams are counted. */
function readable(file: ShardFile, maxFileSize: number): Uint8Array | { size: number; reason: SkippedFile['reason'] } {
  if (file.size > maxFileSize) return { size: file.size, reason: 'too-large' };
  let content: Uint8Array;
  try {
    content = file.data ?? readInto(file.absPath!, maxFileSize);
  } catch {
    return { size: file.size, reason: 'unreadable' };
  }
  // The size may have changed since the directory walk.
  if (content.length > maxFileSize) return { size: content.length, reason: 'too-large' };
  if (bufferView(content).indexOf(0) !== -1) return { size: content.length, reason: 'binary' };
  return content;
}

/**
 * Puts the skipped files in the order the files were given in (path order), not the
 * documents', adds what each member's earlier build skipped, and returns each member's.
 */
function skippedByMember(job: ShardJob, docs: ShardDocuments): SkippedFile[][] {
  const { skipped, skippedFiles, members } = docs;
  const memberSkipped: SkippedFile[][] = members.map(() => []);
  const given = new Map(job.files.map((f, i) => [f, i]));
  const skippedAt = new Map(skippedFiles.map((f, i) => [skipped[i]!, given.get(f)!]));
  skipped.sort((a, b) => skippedAt.get(a)! - skippedAt.get(b)!);
  skippedFiles.forEach((f, i) => memberSkipped[f.member ?? 0]!.push(skipped[i]!));
  const skippedOrder = new Map(skipped.map((k, i) => [k, i]));
  for (const list of memberSkipped) list.sort((a, b) => skippedOrder.get(a)! - skippedOrder.get(b)!);
  // What a member's earlier build skipped (a merge copies its documents only) stays on its record.
  members.forEach((m, k) => {
    if (m.skipped && m.skipped.length > 0) {
      memberSkipped[k]!.unshift(...m.skipped);
      skipped.push(...m.skipped);
    }
  });
  return memberSkipped;
}

/** Each member's paths' largest version in bytes: whether a group of versions gets segment masks is known before its first version is added. */
function largestVersions(files: readonly ShardFile[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of files) {
    const key = versionKey(f.member ?? 0, f.path);
    out.set(key, Math.max(out.get(key) ?? 0, f.size));
  }
  return out;
}

function versionKey(member: number, path: string): string {
  return `${member}\0${path}`;
}

/** The trigram postings of the paths. */
function namePostingsOf(names: Buffer[]): ReturnType<PostingsBuilder['finish']> {
  const nameBuilder = new PostingsBuilder({ expectedBytes: names.reduce((n, b) => n + b.length, 0) });
  try {
    names.forEach((name, i) => {
      // No trigram limit for names: a path is short.
      nameBuilder.addContent(i, name, 0x7fffffff);
    });
    return nameBuilder.finish();
  } catch (err) {
    nameBuilder.dispose();
    throw err;
  }
}

function docTable(docs: DocRecord[]): Buffer {
  const table = Buffer.alloc(docs.length * DOC_RECORD_SIZE);
  let nameOff = 0;
  docs.forEach((d, i) => {
    const o = i * DOC_RECORD_SIZE;
    table.writeUInt32LE(nameOff, o);
    table.writeUInt32LE(d.nameLen, o + 4);
    table.writeUInt32LE(d.contentOff, o + 8);
    table.writeUInt32LE(d.contentLen, o + 12);
    table.writeUInt32LE(d.hash, o + 16);
    table.writeUInt32LE(d.storedLen, o + 20);
    table.writeUInt16LE(d.lang, o + 24);
    table.writeUInt16LE(d.flags, o + 26);
    nameOff += d.nameLen;
  });
  return table;
}

function oidTable(oids: Array<string | undefined>): Buffer {
  const table = Buffer.alloc(oids.length * OID_SIZE);
  oids.forEach((oid, i) => {
    if (oid !== undefined) table.write(oid, i * OID_SIZE, OID_SIZE, 'hex');
  });
  return table;
}

/** The shard's metadata: its members, documents, skipped files, the build's limits, and `symbols` found. */
function shardMeta(
  job: ShardJob,
  docs: ShardDocuments,
  memberSkipped: SkippedFile[][],
  symbols: { kinds: string[]; failures: number; indexed: boolean },
): ShardMeta {
  const { members, memberFirst, memberEnd, branchBase } = docs;
  return {
    repo: members[0]!.repo,
    members: members.map((m, k) => ({
      repo: m.repo,
      first: memberFirst[k]!,
      end: memberEnd[k]!,
      branchFirst: branchBase[k]!,
      branchEnd: branchBase[k]! + m.branches.length,
      skipped: memberSkipped[k]!,
    })),
    shardIndex: job.shardIndex,
    docCount: docs.records.length,
    contentBytes: docs.contentBytes,
    languages: docs.languages,
    skipped: docs.skipped,
    indexedAt: job.indexedAt,
    maxFileSize: job.maxFileSize,
    maxTrigrams: job.maxTrigrams,
    builder: BUILDER,
    symbolKinds: symbols.kinds,
    symbolFailures: symbols.failures,
    symbolsIndexed: symbols.indexed,
    ...(symbols.indexed ? { symbolExtraction: symbolExtraction() } : {}),
  };
}

/** What the shard holds of each member (MemberResult). */
function memberResults(docs: ShardDocuments, memberSkipped: SkippedFile[][]): MemberResult[] {
  return docs.members.map((_, k) => {
    let bytes = 0;
    for (let d = docs.memberFirst[k]!; d < docs.memberEnd[k]!; d++) bytes += docs.records[d]!.contentLen;
    return {
      docs: docs.memberEnd[k]! - docs.memberFirst[k]!,
      contentBytes: bytes,
      skipped: memberSkipped[k]!,
      shardContentBytes: docs.contentBytes,
      shardDocs: docs.records.length,
    };
  });
}

/**
 * The files in the order their documents take in the shard: by member (a compound shard's
 * repositories each hold a range of documents), then by static rank (file-class.ts), so
 * that a search stopping at its `matches` has examined the likelier files first. A
 * document's number is its place in this order; nothing reads a shard assuming path order
 * (names are found through the name trigrams, listings sort by path themselves). The
 * static rank ends with the path, so one path's versions are adjacent, in the order they
 * are given in (the sort is stable): the history index gives them oldest first. A group of
 * grouped postings (doc-groups.ts) is all of them, and with version deltas each is stored
 * against the one before it.
 */
function staticOrder(files: ShardFile[]): ShardFile[] {
  const keyed = files.map((file) => ({ file, member: file.member ?? 0, key: staticRankKey(file.path) }));
  keyed.sort((a, b) => a.member - b.member || compareStaticRank(a.key, b.key));
  return keyed.map((k) => k.file);
}

// One read buffer per thread, reused for every file: every consumer of a file's bytes
// (the core, the hash, the writer) copies them, and a buffer per file of a large tree
// would give the garbage collector tens of thousands of them to collect per shard.
let scratch = Buffer.allocUnsafe(1 << 20);

/**
 * The file's bytes, in the shared scratch buffer (valid until the next call). Reads at most
 * maxFileSize + 1 bytes: enough to tell that a file is too large.
 */
function readInto(path: string, maxFileSize: number): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    let length = 0;
    for (;;) {
      if (length === scratch.length) {
        if (length > maxFileSize) break;
        const grown = Buffer.allocUnsafe(Math.min(scratch.length * 2, maxFileSize + 1));
        scratch.copy(grown, 0, 0, length);
        scratch = grown;
      }
      const n = readSync(fd, scratch, length, scratch.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return scratch.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}
