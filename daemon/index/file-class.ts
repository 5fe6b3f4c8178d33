// What a file's path says about it before its content is read: whether it is a test,
// vendored or generated file, and its static rank. The shard builder orders a shard's
// documents by static rank (shard-builder.ts), so a search that stops early, once it has
// the matches it was asked for, has looked at the likelier files first; search/rank.ts
// ranks test, vendored and generated files down with the same patterns. Lives here, below
// search/, because both the builder and the ranking need it.

const TEST = /(^|\/)(tests?|__tests__|spec|testing|selftests)\/|_test\.[^/]+$|\.(test|spec)\.[^/]+$|(^|\/)test_[^/]+\.py$/i;
const VENDORED = /(^|\/)(vendor|third_party|third-party|node_modules|external)\//i;
// Prose: documentation directories and text formats. Only the static order uses it (a
// search cut short by `matches` has read the code first); the score does not rank it down.
const DOCUMENTATION = /(^|\/)(Documentation|docs?)\/|\.(md|markdown|rst|txt|adoc|asciidoc|rdoc|texi|org)$/i;
const GENERATED =
  /\.min\.(js|css)$|\.pb\.go$|_pb2\.py$|\.generated\.[^/]+$|(^|\/)generated\/|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.sum)$/i;

export interface PathClass {
  documentation: boolean;
  test: boolean;
  vendored: boolean;
  generated: boolean;
}

export function classifyPath(path: string): PathClass {
  return { documentation: DOCUMENTATION.test(path), test: TEST.test(path), vendored: VENDORED.test(path), generated: GENERATED.test(path) };
}

/** Directories above the file: 0 for a file at the root. */
export function pathDepth(path: string): number {
  let n = 0;
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) n++;
  return n;
}

/**
 * The order of documents in a shard, best first: files that are none of documentation,
 * test, vendored or generated, then documentation, tests, vendored, generated (the tier is
 * a bit mask: documentation 1, test 2, vendored 4, generated 8, ascending); within a tier
 * shallower paths first; then the path's bytes. A pure function of the path, so any two
 * builds of the same files agree.
 */
export function staticRankKey(path: string): { tier: number; depth: number; name: Buffer } {
  const c = classifyPath(path);
  return {
    tier: (c.documentation ? 1 : 0) | (c.test ? 2 : 0) | (c.vendored ? 4 : 0) | (c.generated ? 8 : 0),
    depth: pathDepth(path),
    name: Buffer.from(path, 'utf8'),
  };
}

export function compareStaticRank(a: ReturnType<typeof staticRankKey>, b: ReturnType<typeof staticRankKey>): number {
  return a.tier - b.tier || a.depth - b.depth || Buffer.compare(a.name, b.name);
}
