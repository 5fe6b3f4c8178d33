// The shape of a revision named in a request (`ref=`, `revisionName`, `base`/`head`): a
// base (a branch or tag name, HEAD, or a commit id) and a suffix of ancestor steps. What
// git would read as anything else is refused here, before git sees it: options, ranges,
// message searches, `rev:path`, and the reflog's `@{...}` (its entries reach commits no
// branch holds any more, which must not be served: only what the refs reach is).
// Which names and ids the repository accepts is revision.ts's part.
import { ServiceError } from '../errors.ts';

/**
 * A commit id shorter than this is refused: git itself abbreviates to at least 7 digits, and
 * shorter ids are ambiguous in any sizeable repository and few enough to try them all.
 */
export const MIN_ID_DIGITS = 7;

export interface RevisionSpec {
  /** A branch or tag name (short or full), HEAD, or a commit id. */
  base: string;
  /** `~N`, `^N` and `^{commit}` steps, applied to base's commit; '' for none. */
  suffix: string;
}

/** The ancestor steps git accepts after a name (`~`, `~3`, `^`, `^2`), and `^{commit}`/`^{}`, which peel a tag. */
const SUFFIX = /^(?:~\d*|\^\d*|\^\{(?:commit)?\})*$/;

/**
 * Splits `ref` into base and suffix, or throws INVALID_GIT_REF saying what is wrong: empty,
 * a leading "-" (an option to git), NUL, whitespace or control characters (never valid in
 * ref names), ".." (a range; "..." too), ":" and "{/" (`:/text` and `rev^{/text}` search
 * commit messages through the whole history; `rev:path` names a file), "@{" (the reflog,
 * `@{-1}`, `@{upstream}`), or a suffix other than ancestor steps.
 */
export function parseRevision(ref: string): RevisionSpec {
  let problem: string | undefined;
  if (ref === '') problem = 'it is empty';
  else if (ref.startsWith('-')) problem = 'it must not start with "-"';
  else if (ref.includes('\0')) problem = 'it contains a NUL byte';
  else if (/[\s\x00-\x1f\x7f]/.test(ref)) problem = 'it contains whitespace or control characters';
  else if (ref.includes('..')) problem = 'ranges ("a..b") are not accepted, name one revision';
  else if (ref.includes(':') || ref.includes('{/')) problem = 'it contains ":" or a message search ("^{/text}")';
  else if (ref.includes('@{')) problem = 'reflog forms ("@{1}", "main@{yesterday}", "@{-1}") are not accepted: name an indexed branch, a tag or a commit id';
  if (problem !== undefined) throw invalid(ref, problem);
  const cut = ref.search(/[~^]/);
  const base = cut < 0 ? ref : ref.slice(0, cut);
  const suffix = cut < 0 ? '' : ref.slice(cut);
  if (base === '') throw invalid(ref, 'it names no branch, tag or commit before its "~" or "^"');
  if (!SUFFIX.test(suffix)) throw invalid(ref, 'only "~N", "^N" and "^{commit}" may follow the name');
  return { base, suffix };
}

/** 'full' for a 40-digit commit id, 'abbreviated' for MIN_ID_DIGITS to 39 hex digits, else undefined. */
export function commitIdForm(base: string): 'full' | 'abbreviated' | undefined {
  if (!/^[0-9a-fA-F]+$/.test(base)) return undefined;
  if (base.length === 40) return 'full';
  return base.length >= MIN_ID_DIGITS && base.length < 40 ? 'abbreviated' : undefined;
}

/** A ref as shown in messages: JSON-quoted (so control characters are visible), at most 100 characters. */
export function quoteRef(ref: string): string {
  return JSON.stringify(ref.length > 100 ? `${ref.slice(0, 100)}…` : ref);
}

function invalid(ref: string, problem: string): ServiceError {
  return new ServiceError('INVALID_GIT_REF', `ref ${quoteRef(ref)} is not valid: ${problem}`);
}
