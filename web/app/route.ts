// Which page a location is. The daemon's URLs (daemon/repos/web-urls.ts):
//   /                                     search (?q=&regex=1&case=1&matches=)
//   /<repo>                               the repository's root folder, default branch
//   /<repo>/-/tree/<branch>/<dir>         a folder
//   /<repo>/-/blob/<branch>/<path>        a file (?hl=3,7-9 marks lines, #L7 lands on one)
//   /<repo>/-/blame/<branch>/<path>       who changed each line last
//   /<repo>/-/commits/<branch>/<path>     the commits that touched the file
// The repository name keeps its slashes (github.com/org/repo); the branch is one
// segment, URI-encoded ("feature%2Fx"); every segment is URI-encoded.

export type View = 'blob' | 'tree' | 'blame' | 'commits';

export type Route =
  | { page: 'search' }
  | { page: 'repo'; repo: string }
  | { page: View; repo: string; branch: string; path: string }
  | { page: 'not-found' };

const VIEWS = new Set<string>(['blob', 'tree', 'blame', 'commits']);

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function parseRoute(pathname: string): Route {
  if (pathname === '/' || pathname === '') return { page: 'search' };
  const at = pathname.indexOf('/-/');
  const repoPart = (at < 0 ? pathname : pathname.slice(0, at)).replace(/^\/+|\/+$/g, '');
  const repo = repoPart.split('/').map(decode);
  if (repo.length === 0 || repo.some((s) => s === undefined || s === '')) return { page: 'not-found' };
  const repoName = repo.join('/');
  if (at < 0) return { page: 'repo', repo: repoName };
  const rest = pathname.slice(at + 3).split('/');
  const view = rest[0] ?? '';
  const branch = rest[1] === undefined ? undefined : decode(rest[1]);
  if (!VIEWS.has(view) || branch === undefined || branch === '') return { page: 'not-found' };
  const path = rest.slice(2).filter((s) => s !== '').map(decode);
  if (path.some((s) => s === undefined)) return { page: 'not-found' };
  if (view !== 'tree' && path.length === 0) return { page: 'not-found' };
  return { page: view as View, repo: repoName, branch, path: path.join('/') };
}

function encodePath(path: string): string {
  return path.split('/').filter((s) => s !== '').map(encodeURIComponent).join('/');
}

export function repoUrl(repo: string): string {
  return `/${encodePath(repo)}`;
}

export function viewUrl(view: View, repo: string, branch: string, path: string): string {
  const p = encodePath(path);
  return `${repoUrl(repo)}/-/${view}/${encodeURIComponent(branch)}${p ? `/${p}` : ''}`;
}
