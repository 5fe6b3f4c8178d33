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
  SectionKind,
  ngramTable,
  type ShardMeta,
  type SymbolsFileMeta,
  type ShardRepoMeta,
  type SkippedFile,
} from './shard-format.ts';
import { ShardWriter } from './shard-writer.ts';
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
   * A compound shard's repositories (several small ones in one shard: each file names its
   * `member`); absent: the shard's one repository is `repo`, with `branches` and `gitDir`.
   */
  members?: JobMember[];
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
  const writer = new ShardWriter(job.finalPath);
  let contentBuilder: PostingsBuilder | undefined;
  let wordsBuilder: WordsBuilder | undefined;
  try {
    contentBuilder = new PostingsBuilder({ expectedBytes: job.files.reduce((n, f) => n + f.size, 0), segments: CONTENT_SEGMENTS });
    // (~a third of a Linux shard's content build: later, it is the symbols pass's.)
    wordsBuilder = job.later ? undefined : new WordsBuilder();
    const names: Buffer[] = [];
    const docs: Array<{ nameLen: number; contentOff: number; contentLen: number; hash: number; lang: number; flags: number }> = [];
    const languages: string[] = [];
    const languageIndex = new Map<string, number>();
    const skipped: SkippedFile[] = [];
    const skippedFiles: ShardFile[] = [];
    const docHashes: number[] = [];
    const docOids: Array<string | undefined> = [];
    const members = jobMembers(job);
    // Each member's branch lists follow the previous member's in the branches section.
    const branchBase: number[] = [];
    const branchNames: string[] = [];
    for (const m of members) {
      branchBase.push(branchNames.length);
      branchNames.push(...m.branches);
    }
    const branchDocs: number[][] = branchNames.map(() => []);
    const memberFirst: number[] = members.map(() => 0);
    const memberEnd: number[] = members.map(() => 0);
    const memberSkipped: SkippedFile[][] = members.map(() => []);
    let member = -1;
    let contentBytes = 0;
    let doneFiles = 0;
    let doneBytes = 0;
    const withSymbols = job.symbols !== false && ctagsAvailable();
    const symbols = new SymbolSections(withSymbols);

    for (const file of staticOrder(job.files)) {
      doneFiles++;
      doneBytes += file.size;
      if (onProgress && doneFiles % PROGRESS_EVERY_FILES === 0) onProgress(doneFiles, doneBytes);
      const m = file.member ?? 0;
      if (m !== member) {
        // (staticOrder groups the files by member, in member order.)
        for (let k = member + 1; k <= m; k++) memberFirst[k] = docs.length;
        member = m;
      }
      const skip = (size: number, reason: SkippedFile['reason']): void => {
        skipped.push(file.oid ? { path: file.path, size, reason, oid: file.oid } : { path: file.path, size, reason });
        skippedFiles.push(file);
      };
      if (file.size > job.maxFileSize) {
        skip(file.size, 'too-large');
        continue;
      }
      let content: Uint8Array;
      try {
        content = file.data ?? readInto(file.absPath!, job.maxFileSize);
      } catch {
        skip(file.size, 'unreadable');
        continue;
      }
      // The size may have changed since the directory walk.
      if (content.length > job.maxFileSize) {
        skip(content.length, 'too-large');
        continue;
      }
      const buf = bufferView(content);
      if (buf.indexOf(0) !== -1) {
        skip(content.length, 'binary');
        continue;
      }
      const docId = docs.length;
      if (contentBuilder.addContent(docId, content, job.maxTrigrams) < 0) {
        skip(content.length, 'too-many-trigrams');
        continue;
      }
      wordsBuilder?.add(docId, content);
      for (const b of file.branches ?? [0]) branchDocs[branchBase[m]! + b]!.push(docId);
      docOids.push(file.oid);
      const language = detectLanguage(file.path, content.subarray(0, 256));
      let lang = languageIndex.get(language);
      if (lang === undefined) {
        lang = languages.length;
        languages.push(language);
        languageIndex.set(language, lang);
      }
      const name = Buffer.from(file.path, 'utf8');
      names.push(name);
      const hash = hash32(content);
      docHashes.push(hash);
      docs.push({
        nameLen: name.length,
        contentOff: writer.appendContent(content),
        contentLen: content.length,
        hash,
        lang,
        flags: (buf.indexOf('\r\n') !== -1 ? DOC_FLAG_CRLF : 0) | (contentBuilder.lastFoldsToAscii ? 0 : DOC_FLAG_ASCII_FOLDS_ONLY),
      });
      contentBytes += content.length;
      symbols.add(docId, file.path, content, file.known);
    }
    onProgress?.(doneFiles, doneBytes);
    for (let k = member + 1; k < members.length; k++) memberFirst[k] = docs.length;
    members.forEach((_, k) => (memberEnd[k] = k + 1 < members.length ? memberFirst[k + 1]! : docs.length));

    // The skipped list keeps the order the files were given in (path order), not the documents'.
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

    // The words first: their regions are free again before the postings' large ones are taken.
    const contentWords = wordsBuilder ? encodeContentWords(wordsBuilder.finish(WORD_MIN_DOCS), WORD_MIN_DOCS) : contentWordsOf([]);
    wordsBuilder = undefined;
    const contentPostings = contentBuilder.finish();
    contentBuilder = undefined;

    // File-name trigrams: a second builder, now that the content builder is released.
    const nameBuilder = new PostingsBuilder({ expectedBytes: names.reduce((n, b) => n + b.length, 0) });
    let namePostings;
    try {
      names.forEach((name, i) => {
        // No trigram limit for names: a path is short.
        nameBuilder.addContent(i, name, 0x7fffffff);
      });
      namePostings = nameBuilder.finish();
    } catch (err) {
      nameBuilder.dispose();
      throw err;
    }

    const builtSymbols = symbols.finish(docs.length);

    const docTable = Buffer.alloc(docs.length * DOC_RECORD_SIZE);
    let nameOff = 0;
    docs.forEach((d, i) => {
      const o = i * DOC_RECORD_SIZE;
      docTable.writeUInt32LE(nameOff, o);
      docTable.writeUInt32LE(d.nameLen, o + 4);
      docTable.writeUInt32LE(d.contentOff, o + 8);
      docTable.writeUInt32LE(d.contentLen, o + 12);
      docTable.writeUInt32LE(d.hash, o + 16);
      docTable.writeUInt16LE(d.lang, o + 24);
      docTable.writeUInt16LE(d.flags, o + 26);
      nameOff += d.nameLen;
    });

    const oidTable = Buffer.alloc(docs.length * OID_SIZE);
    docOids.forEach((oid, i) => {
      if (oid !== undefined) oidTable.write(oid, i * OID_SIZE, OID_SIZE, 'hex');
    });

    const meta: ShardMeta = {
      repo: members[0]!.repo,
      members: members.map((m, k) => ({ repo: m.repo, first: memberFirst[k]!, end: memberEnd[k]!, branchFirst: branchBase[k]!, branchEnd: branchBase[k]! + m.branches.length, skipped: memberSkipped[k]! })),
      shardIndex: job.shardIndex,
      docCount: docs.length,
      contentBytes,
      languages,
      skipped,
      indexedAt: job.indexedAt,
      maxFileSize: job.maxFileSize,
      maxTrigrams: job.maxTrigrams,
      builder: BUILDER,
      symbolKinds: builtSymbols.kinds,
      symbolFailures: builtSymbols.failures,
      symbolsIndexed: withSymbols,
      ...(withSymbols ? { symbolExtraction: symbolExtraction() } : {}),
    };
    const hashes = new Uint32Array(docHashes);
    writer.finish(new Map<SectionKind, Uint8Array>([
      [SectionKind.Docs, docTable],
      [SectionKind.Names, Buffer.concat(names)],
      [SectionKind.ContentNgrams, ngramTable(contentPostings)],
      [SectionKind.ContentPostings, contentPostings.blob],
      [SectionKind.ContentFollow, contentPostings.follow],
      [SectionKind.NameNgrams, ngramTable(namePostings)],
      [SectionKind.NamePostings, namePostings.blob],
      ...builtSymbols.sections,
      [SectionKind.Branches, encodeBranchLists({ names: branchNames, lists: branchDocs.map((l) => Uint32Array.from(l)) })],
      [SectionKind.Oids, oidTable],
      [SectionKind.ContentWords, contentWords],
      [SectionKind.ContentSegments, encodeContentSegments(contentPostings.segments)],
      [SectionKind.Meta, packMeta(meta)],
    ]), hash32(new Uint8Array(hashes.buffer)));
    const memberResults = members.map((_, k) => {
      let bytes = 0;
      for (let d = memberFirst[k]!; d < memberEnd[k]!; d++) bytes += docs[d]!.contentLen;
      return { docs: memberEnd[k]! - memberFirst[k]!, contentBytes: bytes, skipped: memberSkipped[k]!, shardContentBytes: contentBytes, shardDocs: docs.length };
    });
    return { path: job.finalPath, docCount: docs.length, contentBytes, totalBytes: doneBytes, skipped, symbolCount: builtSymbols.count, symbolFailures: builtSymbols.failures, members: memberResults };
  } catch (err) {
    contentBuilder?.dispose();
    wordsBuilder?.dispose();
    writer.abort();
    throw err;
  }
}

/**
 * The files in the order their documents take in the shard: by member (a compound shard's
 * repositories each hold a range of documents), then by static rank (file-class.ts), so
 * that a search stopping at its `matches` has examined the likelier files first. A
 * document's number is its place in this order; nothing reads a shard assuming path order
 * (names are found through the name trigrams, listings sort by path themselves).
 */
function staticOrder(files: ShardFile[]): ShardFile[] {
  const keyed = files.map((file) => ({ file, member: file.member ?? 0, key: staticRankKey(file.path) }));
  keyed.sort((a, b) => a.member - b.member || compareStaticRank(a.key, b.key));
  return keyed.map((k) => k.file);
}

// One read buffer per thread, reused for every file: every consumer of a file's bytes
// (the core, the hash, the writer) copies them, and not allocating 78k buffers for the
// Linux tree saves a quarter second of garbage collection per shard.
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
