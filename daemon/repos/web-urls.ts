// URLs of repositories and files: the daemon's own (webUrl) and the code host's
// (externalWebUrl), built from one template per code host type.

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** The daemon's page for a repository: `<base>/<repoName>`. */
export function repoWebUrl(baseUrl: string, repoName: string): string {
  return `${baseUrl}/${encodePath(repoName)}`;
}

/** The daemon's page for a file at a branch: `<base>/<repoName>/-/blob/<branch>/<path>`. */
export function fileWebUrl(baseUrl: string, repoName: string, branch: string, path: string): string {
  return `${repoWebUrl(baseUrl, repoName)}/-/blob/${encodePath(branch)}/${encodePath(path)}`;
}

/**
 * The code host's page for a file, when the repository's host is known. `repoName` is the
 * host/path form (github.com/org/repo); the host serves it over https.
 */
export function externalFileUrl(codeHostType: string, repoName: string, branch: string, path: string): string | undefined {
  if (!repoName.includes('/')) return undefined;
  const base = `https://${encodePath(repoName)}`;
  const b = encodePath(branch);
  const p = encodePath(path);
  switch (codeHostType) {
    case 'github':
    case 'gitea':
      return `${base}/blob/${b}/${p}`;
    case 'gitlab':
      return `${base}/-/blob/${b}/${p}`;
    case 'bitbucketCloud':
      return `${base}/src/${b}/${p}`;
    case 'azuredevops':
      return `${base}?path=/${p}&version=GB${b}`;
    default:
      return undefined;
  }
}

/** "org/repo" for "github.com/org/repo"; a plain name stays as it is. */
export function displayName(repoName: string): string {
  const i = repoName.indexOf('/');
  return i > 0 && repoName.slice(0, i).includes('.') ? repoName.slice(i + 1) : repoName;
}
