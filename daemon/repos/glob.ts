// The two glob dialects of the configuration and the query language.
//
// Ref globs (configuration `revisions`, the query's `branch:`): `*` matches any run of
// characters, `/` included, so `release/*` selects `release/1.2/hotfix` too, and everything
// else is literal. Ref names are short and operators think of `*` as "anything".
//
// Path globs (repository excludes, local repository paths): `*` stays within one path
// segment, `**` crosses segments, `?` is one character; matched case-insensitively, as code
// hosts treat repository names.

export function globToRegExp(glob: string): RegExp {
  const body = glob.split('*').map((s) => s.replace(/[\\^$.|?+()[\]{}]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}$`);
}

/**
 * A repository-name glob as a case-insensitive RegExp: `*` within one path segment, `**`
 * across segments (`a/**` + `/b` also matches "a/b"), `?` one character other than '/'.
 */
export function pathGlobToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        re += '(?:.*/)?'; // "**/": zero or more whole segments
      } else re += '.*';
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i');
}
