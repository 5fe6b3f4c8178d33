// Globs over branch and tag names (configuration `revisions`, the query's `branch:`):
// `*` matches any run of characters, `/` included, so `release/*` selects
// `release/1.2/hotfix` too, and everything else is literal. Ref names are short and
// operators think of `*` as "anything"; path-segment semantics would only surprise here.

export function globToRegExp(glob: string): RegExp {
  const body = glob.split('*').map((s) => s.replace(/[\\^$.|?+()[\]{}]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}$`);
}
