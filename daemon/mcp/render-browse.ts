// Results of read_file, list_repos, list_tree and glob for a language model. What each
// structuredContent is, exactly, is said above each function (the MCP e2e test rebuilds
// it from the REST answer).

import { clip, structuredPrefix, TextBudget } from './budget.ts';
import { renderPage, type PageArgs } from './render-page.ts';
import { fileHeader, plural, type Rendered } from './render-search.ts';
import { levelOf, type Include, type TreeListing } from './tree.ts';

/** The answer of GET /api/source. */
export interface SourceAnswer {
  source: string;
  language: string;
  path: string;
  repo: string;
  [field: string]: unknown;
}

/**
 * Numbered lines `offset` to `offset + limit - 1`, fewer when the text budget ends first.
 * structuredContent: the REST answer with `source` replaced by the lines shown, each with
 * its own line terminator, i.e. `source.split(/(?<=\n)/).slice(offset - 1, offset - 1 + n)
 * .join('')` where n is the number of lines shown (every other field as REST answered).
 */
export function renderSource(answer: SourceAnswer, args: { offset: number; limit: number; ref?: string }): Rendered {
  const lines = answer.source === '' ? [] : answer.source.split(/(?<=\n)/);
  const total = lines.length;
  const { offset, limit } = args;
  const out = new TextBudget();
  const ref = args.ref === undefined ? '' : ` ref=${args.ref}`;
  out.add(fileHeader(answer.repo, answer.path + ref, `${answer.language || 'unknown language'}; ${plural(total, 'line', 'lines')}`));
  const hints: string[] = [];
  const wanted = lines.slice(offset - 1, offset - 1 + limit);
  const width = String(offset + wanted.length - 1).length;
  const shown = out.addSome(wanted.map((line, i) => `${String(offset + i).padStart(width)}\t${clip(line.replace(/\r?\n$/, ''))}`));
  if (total === 0) out.add('(the file is empty)');
  else if (offset > total) out.add(`(offset=${offset} is past the end of the file: call read_file with an offset from 1 to ${total})`);
  const last = offset + shown - 1;
  if (shown > 0 && last < total) hints.push(`${plural(total - last, 'more line', 'more lines')}: call read_file with offset=${last + 1}`);
  return { text: out.text(hints), structured: { ...answer, source: lines.slice(offset - 1, offset - 1 + shown).join('') } };
}

/** structuredContent: `{ repos, total, page, perPage }` (render-page.ts). */
export function renderRepos(repos: Array<Record<string, unknown>>, total: number, args: PageArgs): Rendered {
  return renderPage({ tool: 'list_repos', key: 'repos', noun: 'repositories', items: repos, total }, args, (r) => {
    const notes = [`id ${r.repoId}`, String(r.codeHostType)];
    if (r.defaultBranch !== undefined) notes.push(`default branch ${r.defaultBranch}`);
    if (r.isFork === true) notes.push('fork');
    if (r.isArchived === true) notes.push('archived');
    if (r.indexedAt !== undefined) notes.push(`indexed ${r.indexedAt}`);
    return [`${r.repoName}  (${notes.join('; ')})`];
  });
}

/**
 * The entries of a listing (tree.ts), one a line, indented by depth; a directory ends with
 * `/` and says how many files are below it.
 * structuredContent: `{ entries, totalEntries }`: the listing's entries cut to those the
 * text shows (and to STRUCTURED_BUDGET), and how many there were.
 */
export function renderTree(
  listing: Extract<TreeListing, { kind: 'directory' }>,
  args: { repo: string; ref?: string; depth: number; include: Include },
): Rendered {
  const { entries, base } = listing;
  const out = new TextBudget();
  const where = `repo=${args.repo}${args.ref === undefined ? '' : ` ref=${args.ref}`} path=${base === '' ? '/' : base}`;
  out.add(`${where}: ${plural(listing.fileCount, 'file', 'files')} below; ${args.include === 'both' ? 'entries' : args.include} to depth ${args.depth}:`);
  // Lines made only while they fit: a whole repository to a depth is 10^5 entries, of which the text holds a few hundred.
  const lines = function* (): Generator<string> {
    for (const e of entries) {
      const indent = '  '.repeat(levelOf(e.path, base) - 1);
      yield e.type === 'tree' ? `${indent}${e.path}/  (${plural(e.fileCount ?? 0, 'file', 'files')})` : `${indent}${e.path}`;
    }
  };
  const shown = out.addSome(lines());
  const hints: string[] = [];
  if (shown < entries.length) {
    hints.push(
      `${entries.length - shown} more entries were not shown (output limit): call list_tree with path=<one of the directories above>${args.depth > 1 ? ` or depth=${args.depth - 1}` : ''}`,
    );
  }
  const deeper = listing.fileCount - listing.shallowFileCount;
  if (deeper > 0)
    hints.push(
      `${plural(deeper, 'file lies', 'files lie')} deeper than depth ${args.depth}: call list_tree with path=<a directory> or depth=${args.depth + 1}`,
    );
  const k = structuredPrefix({ entries: [], totalEntries: entries.length }, entries, shown);
  return { text: out.text(hints), structured: { entries: entries.slice(0, k), totalEntries: entries.length } };
}

/**
 * The paths of the REST answer's entries that match, from `offset` (0-based), at most
 * `limit`, fewer when the text budget ends first.
 * structuredContent: `{ files, total }`: files = matching.slice(offset, offset + n) (the
 * REST answer's entries, in its order, n = those the text shows, also cut to
 * STRUCTURED_BUDGET), total = how many entries match.
 */
export function renderGlob(matching: Array<{ path: string }>, args: { pattern: string; offset: number; limit: number }): Rendered {
  const total = matching.length;
  const { offset, limit } = args;
  const out = new TextBudget();
  const pattern = clip(args.pattern, 200);
  const hints: string[] = [];
  if (total === 0) {
    out.add(`No files match "${pattern}".`);
    if (!args.pattern.includes('**')) hints.push('`*` stays within one directory: start the pattern with **/ to match at any depth');
  } else if (offset >= total) {
    out.add(`offset=${offset} is past the end: ${plural(total, 'file matches', 'files match')} "${pattern}"; call glob with an offset below ${total}`);
  } else {
    out.add(`${plural(total, 'file matches', 'files match')} "${pattern}"${offset > 0 ? `; from offset ${offset}` : ''}:`);
  }
  const page = matching.slice(offset, offset + limit);
  const shown = out.addSome(page.map((f) => f.path));
  const next = offset + shown;
  if (shown > 0 && next < total) hints.push(`${total - next} more files: call glob with offset=${next}`);
  const k = structuredPrefix({ files: [], total }, page, shown);
  return { text: out.text(hints), structured: { files: page.slice(0, k), total } };
}
