// The parsed form of a search query (daemon/query/parser.ts builds it; the compiler turns it
// into shard queries). Case sensitivity is already resolved onto every content/file/sym
// node: nothing downstream needs to know about `case:` or the request's default.

export type QueryNode =
  | { type: 'and'; children: QueryNode[] }
  | { type: 'or'; children: QueryNode[] }
  | { type: 'not'; child: QueryNode }
  /** regex false: a literal substring; true: an RE2 expression (already validated). */
  | { type: 'content'; pattern: string; regex: boolean; caseSensitive: boolean }
  /** pattern: an RE2 expression matched against the file path. */
  | { type: 'file'; pattern: string; caseSensitive: boolean }
  /** pattern: an RE2 expression matched against the repository name. */
  | { type: 'repo'; pattern: string }
  /** language: the canonical linguist name, e.g. "Go", "C++". */
  | { type: 'lang'; language: string }
  /** pattern: an RE2 expression matched against symbol names. */
  | { type: 'sym'; pattern: string; caseSensitive: boolean }
  /**
   * glob: a branch or tag name where `*` matches any run of characters; or a revision of a
   * repository's history (a commit id, `main~3`: resolved by the caller, history/), or
   * AT_PREFIX and a time (`at:`).
   */
  | { type: 'branch'; glob: string }
  | { type: 'archived' | 'fork'; value: 'yes' | 'no' | 'only' }
  | { type: 'visibility'; value: 'public' | 'private' | 'any' }
  /** type:commit only. pattern: an RE2 expression matched case-insensitively against "Name <email>". */
  | { type: 'author' | 'committer'; pattern: string }
  /**
   * type:commit only. time: the text as written (checked by the parser), resolved when the
   * search runs (a relative time counts back from then); compared with the committer time.
   */
  | { type: 'after' | 'before'; time: string };

/** What a query searches (`type:`): files (the default) or the commits of indexed histories. */
export type SearchType = 'file' | 'commit';

/**
 * How `at:<time>` reads in a branch node's glob: the default branch's commit at that time,
 * which the caller resolves in each repository's history (history/history-search.ts). No
 * ref name holds a ':' (git check-ref-format), so such a glob never names a ref itself.
 */
export const AT_PREFIX = 'at:';

/**
 * A compact, canonical s-expression for a query tree, used by tests and debug output:
 * `(and (content "foo") (not (file "test")))`, `(content case re "Foo.*")`, `(lang "Go")`,
 * `(archived only)`. Strings are JSON-quoted; `case` appears only when sensitive, `re`
 * only for content regexes (file/repo/sym patterns are always regexes).
 */
export function queryToString(node: QueryNode): string {
  switch (node.type) {
    case 'and':
    case 'or':
      return `(${node.type} ${node.children.map(queryToString).join(' ')})`;
    case 'not':
      return `(not ${queryToString(node.child)})`;
    case 'content':
      return `(content ${node.caseSensitive ? 'case ' : ''}${node.regex ? 're ' : ''}${q(node.pattern)})`;
    case 'file':
    case 'sym':
      return `(${node.type} ${node.caseSensitive ? 'case ' : ''}${q(node.pattern)})`;
    case 'repo':
      return `(repo ${q(node.pattern)})`;
    case 'lang':
      return `(lang ${q(node.language)})`;
    case 'branch':
      return `(branch ${q(node.glob)})`;
    case 'archived':
    case 'fork':
    case 'visibility':
      return `(${node.type} ${node.value})`;
    case 'author':
    case 'committer':
      return `(${node.type} ${q(node.pattern)})`;
    case 'after':
    case 'before':
      return `(${node.type} ${q(node.time)})`;
  }
}

function q(s: string): string {
  return JSON.stringify(s);
}
