// nodegit ships no typings; this declares only the parts the project uses (git.ts, refs.ts, mirror.ts,
// and the browsing/history readers: revision.ts, reachable.ts, browse.ts, history.ts).
declare module 'nodegit' {
  namespace NodeGit {
    class Oid {
      tostrS(): string;
      equal(other: Oid): number;
      static fromString(sha: string): Oid;
    }

    class Repository {
      static open(path: string): Promise<Repository>;
      static openBare(path: string): Promise<Repository>;
      /** Creates the directory (and parents) when missing; isBare is 1 or 0. */
      static init(path: string, isBare: number): Promise<Repository>;
      /** Every reference, symbolic ones resolved to (and named as) their targets. */
      getReferences(): Promise<Reference[]>;
      /** Points HEAD at a ref name ("refs/heads/main"); the branch may be unborn. */
      setHead(refname: string): Promise<number>;
      /** 1 when HEAD points at a branch with no commits yet. */
      headUnborn(): number;
      /** 1 when HEAD names a commit rather than a branch. */
      headDetached(): number;
      head(): Promise<Reference>;
      getHeadCommit(): Promise<Commit | null>;
      odb(): Promise<Odb>;
      /** Drops libgit2's caches and open pack files (git_repository__cleanup). */
      cleanup(): Promise<void>;
      createRevWalk(): Revwalk;
      /** The git directory's path (".git/" of a work tree, the repository itself when bare), with a trailing "/". */
      path(): string;
    }

    class Reference {
      static lookup(repo: Repository, name: string): Promise<Reference>;
      /** Every reference's full name, symbolic ones included (git_reference_list). */
      static list(repo: Repository): Promise<string[]>;
      /** The id a reference name resolves to, through symbolic references. */
      static nameToId(repo: Repository, name: string): Promise<Oid>;
      static TYPE: { INVALID: 0; DIRECT: 1; SYMBOLIC: 2; ALL: 3 };
      shorthand(): string;
      name(): string;
      /** Reference.TYPE. */
      type(): number;
      /** The id a direct reference names. */
      target(): Oid;
      /** The ref name a symbolic reference names; undefined for a direct one. */
      symbolicTarget(): string | undefined;
      /** Follows tag objects to an object of this Object.TYPE; rejects when there is none. */
      peel(type: number): Promise<Object>;
    }

    /** A git object of any type (libgit2's git_object). */
    class Object {
      static TYPE: { ANY: -2; INVALID: -1; COMMIT: 1; TREE: 2; BLOB: 3; TAG: 4 };
      /** The object with this id, of this Object.TYPE (ANY: any); rejects when there is none. */
      static lookup(repo: Repository, id: Oid, type: number): Promise<Object>;
      /** The one object whose id starts with the first `len` hex digits of `id`; rejects with errno -5 (EAMBIGUOUS) when several do, -3 when none. */
      static lookupPrefix(repo: Repository, id: Oid, len: number, type: number): Promise<Object>;
      id(): Oid;
      type(): number;
      /** Follows tag objects (and commit to tree) to an object of this Object.TYPE; rejects when there is none. */
      peel(type: number): Promise<Object>;
    }

    class Graph {
      /** 1 when `commit` is one of `descendants` or an ancestor of one (git_graph_reachable_from_any: a merge-base walk), else 0. */
      static reachableFromAny(repo: Repository, commit: Oid, descendants: Oid[]): Promise<number>;
    }

    class Revparse {
      /**
       * git_revparse_single: one object for an extended SHA-1 expression (names, ids,
       * `~`/`^` suffixes, `:/text`, `@{...}`). Ranges fail with errno -12 (EINVALIDSPEC),
       * unknown names with -3 (ENOTFOUND), ambiguous abbreviations with -5.
       */
      static single(repo: Repository, spec: string): Promise<Object>;
    }

    class Revwalk {
      static SORT: { NONE: 0; TOPOLOGICAL: 1; TIME: 2; REVERSE: 4 };
      push(id: Oid): number;
      /** nodegit ORs its arguments into one sort mode. */
      sorting(...modes: number[]): void;
      /** Up to maxCount next commits, looked up in one native call; fewer at the end of the walk. */
      commitWalk(maxCount: number): Promise<Commit[]>;
      /** Up to maxCount next commit ids in one native call; fewer at the end of the walk. */
      fastWalk(maxCount: number): Promise<Oid[]>;
      /**
       * Walks up to maxCount commits in one native call and returns those that changed
       * `path` (a file or directory): for a commit with one parent, the entry at the path
       * differs in id or mode, or was added or removed (status Diff.DELTA; RENAMED when a
       * whole-commit rename detection pairs the add or delete); a root commit counts when
       * it has the path; a merge counts only when it differs from every parent.
       */
      fileHistoryWalk(path: string, maxCount: number): Promise<Array<{ commit: Commit; status: number; isMergeCommit: boolean }>>;
    }

    /** A signature's time: seconds since the epoch and the author's UTC offset in minutes. */
    class Time {
      time(): number;
      offset(): number;
    }

    class Signature {
      name(): string;
      email(): string;
      when(): Time;
    }

    class Commit {
      static lookup(repo: Repository, id: Oid | string): Promise<Commit>;
      sha(): string;
      id(): Oid;
      treeId(): Oid;
      /** The full message, as stored (usually ends with a newline). */
      message(): string;
      author(): Signature;
      /** git_commit_time: the committer's time, seconds since the epoch. */
      time(): number;
      parentcount(): number;
      parentId(n: number): Oid;
    }

    class Tree {
      static lookup(repo: Repository, id: Oid | string): Promise<Tree>;
      id(): Oid;
      entryCount(): number;
      entryByIndex(i: number): TreeEntry;
      /** Rejects (errno -3) when no entry has this '/'-separated path. */
      entryByPath(path: string): Promise<TreeEntry>;
      /**
       * The native git_tree_entry_byname: undefined when there is no such entry. (The
       * public entryByName wraps it and throws a TypeError on a missing name.)
       */
      _entryByName(name: string): TreeEntry | undefined;
    }

    class TreeEntry {
      name(): string;
      /** Git file mode: 0o040000 tree, 0o100644/0o100755 blob, 0o120000 link, 0o160000 submodule. */
      filemode(): number;
      id(): Oid;
    }

    class Blob {
      static lookup(repo: Repository, id: Oid | string): Promise<Blob>;
      content(): Buffer;
      rawsize(): number;
      /** 1 when libgit2's heuristic (a NUL byte, or mostly non-text, in the first 8000 bytes) calls it binary. */
      isBinary(): number;
    }

    interface BlameOptions {
      flags?: number;
      /** The commit to blame from (libgit2's default: HEAD). */
      newestCommit?: Oid;
    }

    class Blame {
      static FLAG: { NORMAL: 0; FIRST_PARENT: 16 };
      static file(repo: Repository, path: string, options?: BlameOptions): Promise<Blame>;
      getHunkCount(): number;
      getHunkByIndex(i: number): BlameHunk;
    }

    /** A run of consecutive lines last changed by one commit. */
    class BlameHunk {
      linesInHunk(): number;
      finalCommitId(): Oid;
      /** 1-based. */
      finalStartLineNumber(): number;
      /** The file's path in that commit (renames are followed). */
      origPath(): string;
    }

    interface DiffOptions {
      /** Diff.OPTION bits. */
      flags?: number;
      pathspec?: string[];
      contextLines?: number;
      /**
       * Blobs larger than this many bytes are treated as binary: no hunks, and their content
       * is never loaded (the size comes from the object's header). 0: libgit2's 512 MiB.
       */
      maxSize?: number;
    }

    interface DiffFindOptions {
      /** Diff.FIND bits. */
      flags?: number;
    }

    class Diff {
      static OPTION: { NORMAL: 0; DISABLE_PATHSPEC_MATCH: 4096 };
      /** toBuf formats (git_diff_format_t). */
      static FORMAT: { PATCH: 1 };
      static FIND: { RENAMES: 1 };
      /** DiffLine.origin() values (character codes). */
      static LINE: {
        CONTEXT: 32;
        ADDITION: 43;
        DELETION: 45;
        CONTEXT_EOFNL: 61;
        ADD_EOFNL: 62;
        DEL_EOFNL: 60;
      };
      /** A null tree is the empty tree. */
      static treeToTree(repo: Repository, oldTree: Tree | null, newTree: Tree | null, options: DiffOptions | null): Promise<Diff>;
      /** Rewrites delete+add pairs into renames in place. */
      findSimilar(options: DiffFindOptions): Promise<number>;
      numDeltas(): number;
      /**
       * The patches (hunks and lines copied out) of the deltas at these indexes, in one
       * native call; an empty or missing array means every delta.
       */
      patches(indexes?: number[]): Promise<ConvenientPatch[]>;
      /** The delta at `index` (no native call). Its files' sizes and binary flag are known once a patch of it was made. */
      getDelta(index: number): DiffDelta;
      /** Every delta as one text in `format` (decoded as UTF-8: other bytes become U+FFFD), in one native call. */
      toBuf(format: number): Promise<string>;
    }

    class DiffDelta {
      /** git_delta_t: 1 added, 2 deleted, 3 modified, ... */
      status(): number;
      /** git_diff_flag_t bits: 1 binary, 2 not binary. */
      flags(): number;
      oldFile(): DiffFile;
      newFile(): DiffFile;
    }

    class DiffFile {
      path(): string;
      /** The blob's id (all zeros for a side that does not exist). */
      id(): Oid;
      mode(): number;
      /** Bytes; read from the object's header once the patch is made (0 for a side that does not exist). */
      size(): number;
    }

    class ConvenientPatch {
      oldFile(): DiffFile;
      newFile(): DiffFile;
      isAdded(): boolean;
      isDeleted(): boolean;
      hunks(): Promise<ConvenientHunk[]>;
    }

    class ConvenientHunk {
      /** "@@ -1,3 +1,4 @@ heading\n" */
      header(): string;
      oldStart(): number;
      oldLines(): number;
      newStart(): number;
      newLines(): number;
      lines(): Promise<DiffLine[]>;
    }

    class DiffLine {
      /** Diff.LINE: a character code. */
      origin(): number;
      /** The line's text with its newline if it has one (content() re-slices it by bytes). */
      rawContent(): string;
    }

    class Odb {
      read(id: Oid): Promise<OdbObject>;
    }

    class OdbObject {
      size(): number;
    }

    class Remote {
      static lookup(repo: Repository, name: string): Promise<Remote>;
      /** An in-memory remote: nothing is written to the repository's config. */
      static createAnonymous(repo: Repository, url: string): Promise<Remote>;
      static AUTOTAG_OPTION: {
        DOWNLOAD_TAGS_UNSPECIFIED: 0;
        DOWNLOAD_TAGS_AUTO: 1;
        DOWNLOAD_TAGS_NONE: 2;
        DOWNLOAD_TAGS_ALL: 3;
      };
      url(): string;
      /** direction: Enums.DIRECTION. */
      connect(direction: number, callbacks: RemoteCallbacks | null, proxyOpts: ProxyOptions | null, customHeaders: string[]): Promise<number>;
      /** Full name of the branch the remote's HEAD names ("refs/heads/main"); needs a connection; rejects when there is none. */
      defaultBranch(): Promise<string>;
      /** Connects unless connected (then reuses the connection), downloads, updates refs, prunes, disconnects. */
      fetch(refspecs: string[] | null, opts: FetchOptions | null, reflogMessage: string): Promise<number>;
      /** Asks a running transfer to stop: only a flag libgit2 checks between reads, so a blocked read is not interrupted. Synchronous. */
      stop(): number;
      /** Progress of the last (or running) download; undefined before any. */
      stats(): IndexerProgress | undefined;
    }

    class Credential {
      static userpassPlaintextNew(username: string, password: string): Credential;
      static TYPE: {
        USERPASS_PLAINTEXT: 1;
        SSH_KEY: 2;
        SSH_CUSTOM: 4;
        DEFAULT: 8;
        SSH_INTERACTIVE: 16;
        USERNAME: 32;
        SSH_MEMORY: 64;
      };
    }

    /** libgit2's git_indexer_progress: passed to transferProgress (valid only during the call), or Remote.stats(). */
    class IndexerProgress {
      totalObjects(): number;
      indexedObjects(): number;
      receivedObjects(): number;
      localObjects(): number;
      totalDeltas(): number;
      indexedDeltas(): number;
      receivedBytes(): number;
    }

    /**
     * How nodegit runs a JS callback for libgit2: at most one call per `throttle` ms, and
     * with waitForResult false libgit2 goes on without waiting for it (the default is to
     * wait). Skipped and unawaited calls answer libgit2 with nodegit's default result: 0
     * for transferProgress, but 1 for sidebandProgress, credentials and certificateCheck,
     * which libgit2 may take as "stop" (see mirror.ts on sidebandProgress).
     */
    interface CallbackSpecifier<F> {
      callback: F;
      throttle?: number;
      waitForResult?: boolean;
    }

    interface RemoteCallbacks {
      /** Return a Credential, or an Error to fail the operation; libgit2 asks again after every rejection. */
      credentials?:
        | ((url: string, usernameFromUrl: string, allowedTypes: number) => Credential | Error | Promise<Credential>)
        | CallbackSpecifier<(url: string, usernameFromUrl: string, allowedTypes: number) => Credential | Error | Promise<Credential>>;
      /** A non-zero result cancels the transfer. */
      transferProgress?: ((stats: IndexerProgress) => number) | CallbackSpecifier<(stats: IndexerProgress) => number>;
      /** Text the server sends on the sideband ("Counting objects: ..."). */
      sidebandProgress?: ((text: string, len: number) => number) | CallbackSpecifier<(text: string, len: number) => number>;
      /**
       * Called after the TLS handshake; `valid` is 1 when libgit2's own verification (chain
       * and host name) passed. 0 accepts the connection, an error code refuses it. Unset:
       * libgit2 refuses what does not verify. Through a proxy, libgit2 1.9 hangs after
       * any refusal (see mirror.ts).
       */
      certificateCheck?: ((cert: unknown, valid: number, host: string) => number) | CallbackSpecifier<(cert: unknown, valid: number, host: string) => number>;
    }

    /** libgit2 1.9 uses a proxy for https URLs only (CONNECT); for http it connects to the server itself. */
    interface ProxyOptions {
      /** Proxy.PROXY. */
      type: number;
      url?: string;
    }

    interface FetchOptions {
      callbacks?: RemoteCallbacks;
      /** Fetch.PRUNE. */
      prune?: number;
      /** 0: do not record the fetched refs in FETCH_HEAD. */
      updateFetchhead?: number;
      /** Remote.AUTOTAG_OPTION. */
      downloadTags?: number;
      proxyOpts?: ProxyOptions;
      customHeaders?: string[];
    }

    class Fetch {
      static PRUNE: { GIT_FETCH_PRUNE_UNSPECIFIED: 0; GIT_FETCH_PRUNE: 1; GIT_FETCH_NO_PRUNE: 2 };
    }

    class Proxy {
      static PROXY: { NONE: 0; AUTO: 1; SPECIFIED: 2 };
    }

    class Enums {
      static DIRECTION: { FETCH: 0; PUSH: 1 };
    }
  }
  export = NodeGit;
}
