// Repository-relative paths from requests. Git tree paths are '/'-separated byte strings
// with no "." or ".." components and no empty ones; a request path is normalized to that
// form or rejected. Backslashes are ordinary characters in git paths, so they are kept.
import { ServiceError } from '../errors.ts';

/**
 * `path` normalized: leading and trailing '/' removed, runs of '/' collapsed. Rejected
 * (INVALID_QUERY_PARAMS): NUL bytes, "." or ".." components, and the empty path (the
 * repository root) unless `allowEmpty`.
 */
export function checkRepoPath(path: string, { allowEmpty }: { allowEmpty: boolean }): string {
  if (path.includes('\0')) throw invalid(path, 'it contains a NUL byte');
  const parts = path.split('/').filter((p) => p !== '');
  for (const p of parts) {
    if (p === '.' || p === '..') throw invalid(path, `"${p}" components are not allowed`);
  }
  const normalized = parts.join('/');
  if (normalized === '' && !allowEmpty) throw invalid(path, 'a file path is required (it is empty or only "/")');
  return normalized;
}

function invalid(path: string, why: string): ServiceError {
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  return new ServiceError('INVALID_QUERY_PARAMS', `path ${JSON.stringify(shown)} is not valid: ${why}`);
}
