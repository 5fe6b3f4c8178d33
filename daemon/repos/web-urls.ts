// URLs of repositories and files: the daemon's own (webUrl) and the code host's
// (externalWebUrl), built from one template per code host type.

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

/** What encodeURIComponent leaves as it is, and "/": a path made of these is its own encoding. */
const PLAIN_PATH = /^[A-Za-z0-9\-_.!~*'()/]*$/;

/** A path (or a repository name) as URL path segments: ASCII, and JSON as it stands (no `"` or `\\`). */
export function encodePath(path: string): string {
  if (PLAIN_PATH.test(path)) return path;
  return path.split('/').map(encodeURIComponent).join('/');
}

/**
 * Top-level paths that are pages of the web UI (web/app/route.ts PAGES, the same list):
 * the page wins the path, so a repository of that name is at `<base>/<name>/` (the trailing
 * slash keeps it a repository for the UI's router; its files are under `<name>/-/` as usual).
 */
export const UI_PAGES: ReadonlySet<string> = new Set(['settings']);

/** The daemon's page for a repository: `<base>/<repoName>` (and "/" after a UI page's name). */
export function repoWebUrl(baseUrl: string, repoName: string): string {
  return `${baseUrl}/${encodePath(repoName)}${UI_PAGES.has(repoName) ? '/' : ''}`;
}

/**
 * The daemon's page for a file at a branch: `<base>/<repoName>/-/blob/<branch>/<path>`. The
 * branch is one path segment ("feature/x" is `feature%2Fx`), so the web UI can tell where
 * the branch ends and the path begins without asking git.
 */
export function fileWebUrl(baseUrl: string, repoName: string, branch: string, path: string): string {
  return `${fileWebUrlPrefix(baseUrl, repoName, branch)}${encodePath(path)}`;
}

/** What fileWebUrl puts before the encoded path (encodePath): the same for every file of a repository's branch. */
export function fileWebUrlPrefix(baseUrl: string, repoName: string, branch: string): string {
  return `${baseUrl}/${encodePath(repoName)}/-/blob/${encodeURIComponent(branch)}/`;
}

/** The web UI's page of one commit: `<base>/<repoName>/-/commit/<id>` (web/app/route.ts commitUrl). */
export function commitWebUrl(baseUrl: string, repoName: string, id: string): string {
  return `${baseUrl}/${encodePath(repoName)}/-/commit/${encodeURIComponent(id)}`;
}

/**
 * Whether `url` may be served as a link to a code host's page: an absolute http: or https:
 * URL with a host. What a host reports is not trusted: a `javascript:` or `data:` URL in a
 * link runs in the page of whoever clicks it, and a `file:` one points into their own disk.
 */
export function isWebUrl(url: string): boolean {
  return httpOrigin(url) !== undefined;
}

/**
 * The origin ("https://host:8443") of an absolute http: or https: URL with a host;
 * undefined for anything else. The text as written must start so, not only its parse:
 * browsers and the URL parser drop leading blanks and control characters, and the string
 * is what is served or fetched.
 */
export function httpOrigin(url: string): string | undefined {
  if (!/^https?:\/\//i.test(url)) return undefined;
  try {
    const u = new URL(url);
    return u.hostname === '' ? undefined : u.origin;
  } catch {
    return undefined;
  }
}

/**
 * The code host's page for a file at a branch, built from the host's page of the
 * repository (`repoUrl`, as the host reports it) with the host type's template; undefined
 * when the host is unknown or has no file pages, or `repoUrl` is no web URL (isWebUrl).
 */
export function externalFileUrl(codeHostType: string, repoUrl: string | undefined, branch: string, path: string): string | undefined {
  if (repoUrl === undefined || !isWebUrl(repoUrl)) return undefined;
  const base = repoUrl.replace(/\/+$/, '');
  const b = encodePath(branch);
  const p = encodePath(path);
  switch (codeHostType) {
    case 'github':
    case 'gitea':
      return `${base}/${codeHostType === 'gitea' ? 'src/branch' : 'blob'}/${b}/${p}`;
    case 'gitlab':
      return `${base}/-/blob/${b}/${p}`;
    case 'bitbucketCloud':
      return `${base}/src/${b}/${p}`;
    case 'bitbucketServer':
      return `${base}/browse/${p}?at=${encodeURIComponent(`refs/heads/${branch}`)}`;
    case 'azuredevops':
      return `${base}?path=${encodeURIComponent(`/${path}`)}&version=GB${encodeURIComponent(branch)}`;
    case 'gerrit':
      return `${base}/+/refs/heads/${b}/${p}`;
    default:
      return undefined;
  }
}

/** "org/repo" for "github.com/org/repo"; a plain name stays as it is. */
export function displayName(repoName: string): string {
  const i = repoName.indexOf('/');
  return i > 0 && repoName.slice(0, i).includes('.') ? repoName.slice(i + 1) : repoName;
}
