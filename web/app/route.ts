// Which page a location is. The daemon's URLs (daemon/repos/web-urls.ts):
//   /                                     search (?q=&regex=1&case=1&matches=)
//   /<repo>                               the repository's root folder, default branch
//   /<repo>/-/tree/<branch>/<dir>         a folder
//   /<repo>/-/blob/<branch>/<path>        a file (?hl=3,7-9 marks lines, #L7 lands on one)
//   /<repo>/-/blame/<branch>/<path>       who changed each line last
//   /<repo>/-/commits/<branch>/<path>     the commits that touched the file
//   /<repo>/-/commit/<sha>                one commit: its message and its diff against its first parent
//   /<repo>/-/compare                     a form to pick two refs to compare
//   /<repo>/-/compare/<base>...<head>     the diff between two refs (git's "three dots" reading order)
// The repository name keeps its slashes (github.com/org/repo); the branch is one
// segment, URI-encoded ("feature%2Fx"); every segment is URI-encoded. A compare segment
// splits at its first "...": git forbids ".." in ref names and a name starting or ending
// with ".", so neither side can hold "..." (or touch it with a dot of its own); revparse
// suffixes like "main~2" pass through. Each side is URI-encoded on its own.
// A page's own name (PAGES: "/settings", exactly) wins over a repository of that name: such
// a repository is at "/settings/" (the trailing slash keeps it a repository), its folders
// and files under "/settings/-/" as usual. The daemon's repoWebUrl adds the same slash
// (daemon/repos/web-urls.ts UI_PAGES, the same list; test/web/web-route.test.ts checks both).

export type View = 'blob' | 'tree' | 'blame' | 'commits';

export type Route =
  | { page: 'search' }
  | { page: 'settings' }
  | { page: 'repo'; repo: string }
  | { page: View; repo: string; branch: string; path: string }
  | { page: 'commit'; repo: string; sha: string }
  /** `refs` null: no refs chosen yet (the form). */
  | { page: 'compare'; repo: string; refs: { base: string; head: string } | null }
  | { page: 'not-found' };

const VIEWS = new Set<string>(['blob', 'tree', 'blame', 'commits']);
/** Top-level paths that are pages, not repositories (daemon/repos/web-urls.ts UI_PAGES). */
const PAGES = new Set<string>(['settings']);

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function parseRoute(pathname: string): Route {
  if (pathname === '/' || pathname === '') return { page: 'search' };
  if (pathname === '/settings') return { page: 'settings' };
  const at = pathname.indexOf('/-/');
  const repoPart = (at < 0 ? pathname : pathname.slice(0, at)).replace(/^\/+|\/+$/g, '');
  const repo = repoPart.split('/').map(decode);
  if (repo.length === 0 || repo.some((s) => s === undefined || s === '')) return { page: 'not-found' };
  const repoName = repo.join('/');
  if (at < 0) return { page: 'repo', repo: repoName };
  const rest = pathname.slice(at + 3).split('/');
  const view = rest[0] ?? '';
  if (view === 'commit' || view === 'compare') return revisionRoute(view, repoName, rest.slice(1));
  const branch = rest[1] === undefined ? undefined : decode(rest[1]);
  if (!VIEWS.has(view) || branch === undefined || branch === '') return { page: 'not-found' };
  const path = rest
    .slice(2)
    .filter((s) => s !== '')
    .map(decode);
  if (path.some((s) => s === undefined)) return { page: 'not-found' };
  if (view !== 'tree' && path.length === 0) return { page: 'not-found' };
  return { page: view as View, repo: repoName, branch, path: path.join('/') };
}

/** The commit and compare pages: one segment after the view (a trailing "/" allowed). */
function revisionRoute(view: 'commit' | 'compare', repo: string, rest: string[]): Route {
  const segments = rest.filter((s, i) => s !== '' || i !== rest.length - 1);
  if (segments.length > 1) return { page: 'not-found' };
  const segment = segments[0];
  if (view === 'compare' && segment === undefined) return { page: 'compare', repo, refs: null };
  if (segment === undefined || segment === '') return { page: 'not-found' };
  if (view === 'commit') {
    const sha = decode(segment);
    return sha ? { page: 'commit', repo, sha } : { page: 'not-found' };
  }
  const dots = segment.indexOf('...');
  if (dots < 0) return { page: 'not-found' };
  const base = decode(segment.slice(0, dots));
  const head = decode(segment.slice(dots + 3));
  if (!base || !head) return { page: 'not-found' };
  return { page: 'compare', repo, refs: { base, head } };
}

function encodePath(path: string): string {
  return path
    .split('/')
    .filter((s) => s !== '')
    .map(encodeURIComponent)
    .join('/');
}

/** The repository's page; after a page's name a "/", so that it stays the repository's. */
export function repoUrl(repo: string): string {
  return `${repoBase(repo)}${PAGES.has(repo) ? '/' : ''}`;
}

/** What the repository's views (`/-/...`) start with. */
function repoBase(repo: string): string {
  return `/${encodePath(repo)}`;
}

export function viewUrl(view: View, repo: string, branch: string, path: string): string {
  const p = encodePath(path);
  return `${repoBase(repo)}/-/${view}/${encodeURIComponent(branch)}${p ? `/${p}` : ''}`;
}

export function commitUrl(repo: string, sha: string): string {
  return `${repoBase(repo)}/-/commit/${encodeURIComponent(sha)}`;
}

/** The compare page of two refs, or its form when they are not given. */
export function compareUrl(repo: string, refs?: { base: string; head: string }): string {
  const base = `${repoBase(repo)}/-/compare`;
  return refs ? `${base}/${encodeURIComponent(refs.base)}...${encodeURIComponent(refs.head)}` : base;
}
