// nodegit ships no typings; this declares only the part git.ts uses.
declare module 'nodegit' {
  namespace NodeGit {
    class Oid {
      tostrS(): string;
      static fromString(sha: string): Oid;
    }

    class Repository {
      static open(path: string): Promise<Repository>;
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
      shorthand(): string;
      name(): string;
    }

    class Commit {
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
      url(): string;
    }
  }
  export = NodeGit;
}
