// nodegit ships no typings; this declares only the parts git.ts and mirror.ts use.
declare module 'nodegit' {
  namespace NodeGit {
    class Oid {
      tostrS(): string;
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
    }

    class Reference {
      static lookup(repo: Repository, name: string): Promise<Reference>;
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
      id(): Oid;
      type(): number;
    }

    class Commit {
      static lookup(repo: Repository, id: Oid | string): Promise<Commit>;
      sha(): string;
      treeId(): Oid;
    }

    class Tree {
      static lookup(repo: Repository, id: Oid | string): Promise<Tree>;
      entryCount(): number;
      entryByIndex(i: number): TreeEntry;
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
      connect(
        direction: number,
        callbacks: RemoteCallbacks | null,
        proxyOpts: ProxyOptions | null,
        customHeaders: string[],
      ): Promise<number>;
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
      certificateCheck?:
        | ((cert: unknown, valid: number, host: string) => number)
        | CallbackSpecifier<(cert: unknown, valid: number, host: string) => number>;
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
