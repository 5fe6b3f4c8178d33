// JSON Schemas of the git history endpoints (docs/http-api.md section 13): blame, diff,
// commit, commits and commits/authors. Dates are ISO 8601.

import { REF_PARAM, REPO_PARAM } from './browse.ts';
import { ref, type JsonSchema } from './common.ts';

const sha = { type: 'string', pattern: '^[0-9a-f]{40}$' };
const path = { type: 'string', maxLength: 4096 };
const date = { type: 'string', format: 'date-time' };
const page = { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1, description: '1-based page number.' };
const perPage = { type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'Items per page.' };
const dateParam = (what: string) => ({
  type: 'string',
  maxLength: 64,
  description: `${what}, inclusive: an ISO 8601 date or date-time (a date alone is the start of that day; no zone is UTC), or "N <unit>s ago" (second, minute, hour, day, week, month, year), "yesterday", "last week", "last month", "last year".`,
});

/** The author again, under the names the published `@sourcebot/mcp` 1.0.x server reads commits by. */
const legacyAuthorFields = {
  author_name: { type: 'string', description: 'The same as authorName, for clients that read this name (`@sourcebot/mcp` 1.0.x).' },
  author_email: { type: 'string', description: 'The same as authorEmail, for clients that read this name (`@sourcebot/mcp` 1.0.x).' },
};
const AUTHOR_REQUIRED = ['authorName', 'authorEmail', 'author_name', 'author_email'];

const commitFields = {
  hash: sha,
  date,
  message: { type: 'string', description: 'The subject line.' },
  refs: {
    type: 'string',
    description: 'The refs pointing at this commit as git\'s %D decoration, e.g. "HEAD -> main, tag: v1, origin/main"; empty when none.',
  },
  body: { type: 'string', description: 'The message after the subject.' },
  authorName: { type: 'string' },
  authorEmail: { type: 'string' },
  ...legacyAuthorFields,
};

export const historySchemas: Record<string, JsonSchema> = {
  BlameQuery: {
    type: 'object',
    properties: { repo: REPO_PARAM, path: { ...path, minLength: 1 }, ref: REF_PARAM },
    required: ['repo', 'path'],
    additionalProperties: false,
  },
  BlameResponse: {
    type: 'object',
    properties: {
      ranges: {
        type: 'array',
        items: {
          type: 'object',
          properties: { hash: sha, path: { type: 'string' }, startLine: { type: 'integer', minimum: 1 }, lineCount: { type: 'integer', minimum: 1 } },
          required: ['hash', 'path', 'startLine', 'lineCount'],
          additionalProperties: false,
        },
      },
      commits: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          properties: {
            hash: sha,
            date,
            message: { type: 'string' },
            authorName: { type: 'string' },
            authorEmail: { type: 'string' },
            ...legacyAuthorFields,
            previous: { type: 'object', properties: { hash: sha, path: { type: 'string' } }, required: ['hash', 'path'], additionalProperties: false },
          },
          required: ['hash', 'date', 'message', ...AUTHOR_REQUIRED],
          additionalProperties: false,
        },
      },
    },
    required: ['ranges', 'commits'],
    additionalProperties: false,
  },
  DiffQuery: {
    type: 'object',
    properties: { repo: REPO_PARAM, base: REF_PARAM, head: REF_PARAM, path },
    required: ['repo', 'base', 'head'],
    additionalProperties: false,
  },
  DiffRange: {
    type: 'object',
    properties: { start: { type: 'integer', minimum: 0 }, lines: { type: 'integer', minimum: 0 } },
    required: ['start', 'lines'],
    additionalProperties: false,
  },
  DiffResponse: {
    type: 'object',
    properties: {
      files: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            oldPath: { type: ['string', 'null'] },
            newPath: { type: ['string', 'null'] },
            hunks: {
              type: 'array',
              items: {
                type: 'object',
                properties: { oldRange: ref('DiffRange'), newRange: ref('DiffRange'), heading: { type: 'string' }, body: { type: 'string' } },
                required: ['oldRange', 'newRange', 'body'],
                additionalProperties: false,
              },
            },
            tooLarge: {
              const: true,
              description: 'Present when either side is larger than settings.http.maxSourceBytes: then `hunks` is empty (the file was not read).',
            },
          },
          required: ['oldPath', 'newPath', 'hunks'],
          additionalProperties: false,
        },
      },
      truncated: { type: 'boolean', description: 'Present (true) when the diff was cut at 1000 files or 10 MB of hunks.' },
    },
    required: ['files'],
    additionalProperties: false,
  },
  CommitQuery: {
    type: 'object',
    properties: { repo: REPO_PARAM, ref: REF_PARAM },
    required: ['repo'],
    additionalProperties: false,
  },
  CommitResponse: {
    type: 'object',
    properties: { ...commitFields, parents: { type: 'array', items: sha } },
    required: ['hash', 'date', 'message', 'refs', 'body', ...AUTHOR_REQUIRED, 'parents'],
    additionalProperties: false,
  },
  CommitsQuery: {
    type: 'object',
    properties: {
      repo: REPO_PARAM,
      ref: REF_PARAM,
      query: { type: 'string', maxLength: 1024, description: 'Case-insensitive substring of the message.' },
      since: dateParam('Commits on or after'),
      until: dateParam('Commits on or before'),
      author: { type: 'string', maxLength: 1024, description: 'Case-insensitive substring of the author name or email.' },
      path: { ...path, description: 'Only commits that changed this file or directory.' },
      page,
      perPage,
    },
    required: ['repo'],
    additionalProperties: false,
  },
  CommitsResponse: {
    type: 'array',
    items: {
      type: 'object',
      properties: commitFields,
      required: ['hash', 'date', 'message', 'refs', 'body', ...AUTHOR_REQUIRED],
      additionalProperties: false,
    },
  },
  AuthorsQuery: {
    type: 'object',
    properties: { repo: REPO_PARAM, ref: REF_PARAM, path: { ...path, description: 'Only commits that changed this file or directory.' }, page, perPage },
    required: ['repo'],
    additionalProperties: false,
  },
  AuthorsResponse: {
    type: 'array',
    items: {
      type: 'object',
      properties: { name: { type: 'string' }, email: { type: 'string' }, commitCount: { type: 'integer', minimum: 1 } },
      required: ['name', 'email', 'commitCount'],
      additionalProperties: false,
    },
  },
};
