// A repository's topics as the hosts answer them (GitHub and GitLab `topics`, GitLab's
// older `tag_list`): the labels a host lets owners put on a repository (HostRepo.topics).
// Hosts match topics without regard to case, and GitLab keeps the case they were typed in,
// so trawl keeps them lower-case, in the host's order, each once.

import { ShapeError } from './http.ts';

/** The topics under `key` of an answer; undefined when the answer carries none (an older host). */
export function topicsFrom(o: Record<string, unknown>, key: string): string[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((t) => typeof t !== 'string')) throw new ShapeError(`field "${key}" is not a list of strings`);
  return [...new Set((v as string[]).map((t) => t.toLowerCase()))];
}
