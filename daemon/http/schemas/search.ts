// JSON Schemas (2020-12) of search: the request body of /api/search and /api/stream_search,
// the response (docs/http-api.md 2.2–2.7 and section 10) and the stream's messages
// (section 12). The server validates with these and openapi.ts publishes
// them, so the two cannot drift. References point into the OpenAPI document's components.

import { CONTEXT_NAME } from '../../config/contexts.ts';
import { MAX_CONTEXT_LINES, MAX_QUERY_BYTES } from '../../search/request.ts';
import { CODE_HOST_TYPES } from '../../repos/hosts/types.ts';
import { EXTERNAL_WEB_URL, ref, type JsonSchema } from './common.ts';

const STAT_NUMBERS = [
  'actualMatchCount',
  'totalMatchCount',
  'duration',
  'fileCount',
  'filesSkipped',
  'contentBytesLoaded',
  'indexBytesLoaded',
  'crashes',
  'shardFilesConsidered',
  'filesConsidered',
  'filesLoaded',
  'shardsScanned',
  'shardsSkipped',
  'shardsSkippedFilter',
  'ngramMatches',
  'ngramLookups',
  'wait',
  'matchTreeConstruction',
  'matchTreeSearch',
  'regexpsConsidered',
] as const;

const count = { type: 'integer', minimum: 0 } as const;

/** A commit as a `history:yes` answer names it. */
const COMMIT_REF = {
  type: 'object',
  properties: { id: { type: 'string', description: 'The full commit id.' }, date: { type: 'string', description: 'Its committer date, ISO 8601.' } },
  required: ['id', 'date'],
  additionalProperties: false,
} as const;

/** A range of a file result (docs/http-api.md 2.6). */
const RANGE = {
  type: 'object',
  description: '`start` inclusive, `end` exclusive.',
  properties: {
    start: ref('Location'),
    end: ref('Location'),
  },
  required: ['start', 'end'],
  additionalProperties: false,
} as const;

/** A chunk of a file result (docs/http-api.md 2.5); `hunk` only in type:diff results. */
const CHUNK = {
  type: 'object',
  properties: {
    content: { type: 'string', description: 'Whole lines joined by "\\n", without the final line terminator.' },
    matchRanges: { type: 'array', items: ref('Range'), description: 'In file coordinates.' },
    contentStart: ref('Location'),
    symbols: { type: 'array', items: ref('Symbol') },
    hunk: {
      type: 'object',
      description:
        "A `type:diff` result: the hunk header (`@@ -oldStart,oldLines +newStart,newLines @@`). `content` is then the hunk's lines, each signed `+` or `-`, and the ranges and contentStart count in that content.",
      properties: { oldStart: count, oldLines: count, newStart: count, newLines: count },
      required: ['oldStart', 'oldLines', 'newStart', 'newLines'],
      additionalProperties: false,
    },
  },
  required: ['content', 'matchRanges', 'contentStart', 'symbols'],
  additionalProperties: false,
} as const;

/** A file of a search's answer (docs/http-api.md 2.4). */
const FILE_RESULT = {
  type: 'object',
  properties: {
    fileName: {
      type: 'object',
      properties: { text: { type: 'string' }, matchRanges: { type: 'array', items: ref('Range') } },
      required: ['text', 'matchRanges'],
      additionalProperties: false,
    },
    webUrl: { type: 'string' },
    repository: { type: 'string' },
    repositoryId: { type: 'integer' },
    language: { type: 'string' },
    chunks: { type: 'array', items: ref('Chunk') },
    externalWebUrl: EXTERNAL_WEB_URL,
    branches: { type: 'array', items: { type: 'string' } },
    content: { type: 'string', description: 'The whole file (`whole: true`), or its first settings.http.maxSourceBytes when `contentTruncated`.' },
    contentTruncated: {
      const: true,
      description: 'Present when the file is larger than settings.http.maxSourceBytes: `content` is cut there, at a character boundary.',
    },
    history: {
      type: 'object',
      description:
        "**trawl adds**, with `history:yes`: where in the default branch's first-parent history the file held matches. `spans`: from the commit it first did (`appeared`) to the first commit it no longer did (`gone`, null while it still does); `changes`: every commit at which the number of its matches changed. Oldest first.",
      properties: {
        spans: {
          type: 'array',
          items: {
            type: 'object',
            properties: { appeared: COMMIT_REF, gone: { anyOf: [COMMIT_REF, { type: 'null' }] } },
            required: ['appeared', 'gone'],
            additionalProperties: false,
          },
        },
        changes: { type: 'array', items: COMMIT_REF },
      },
      required: ['spans', 'changes'],
      additionalProperties: false,
    },
    commit: ref('CommitInfo'),
    diff: {
      type: 'object',
      description: 'A `type:diff` result: the diff its chunks come from, of the commit against `parent` (null: a root commit, against the empty tree).',
      properties: {
        parent: { type: ['string', 'null'] },
        path: { type: 'string' },
        oldPath: { type: 'string', description: 'The path before a rename or copy.' },
      },
      required: ['parent', 'path'],
      additionalProperties: false,
    },
  },
  required: ['fileName', 'webUrl', 'repository', 'repositoryId', 'language', 'chunks', 'branches'],
  additionalProperties: false,
} as const;

/** A `type:commit` result's commit (docs/http-api.md 2.4). */
const COMMIT_SCHEMAS: Record<string, JsonSchema> = {
  CommitPerson: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      email: { type: 'string' },
      date: { type: 'string', description: 'ISO 8601 with the offset of the zone the commit was made in.' },
    },
    required: ['name', 'email', 'date'],
    additionalProperties: false,
  },
  CommitInfo: {
    type: 'object',
    description:
      '**trawl adds**: the commit a `type:commit` result is (docs/query-language.md, "Searching commit messages": its `chunks` are lines of `message`, their ranges in message coordinates), or whose diff a `type:diff` result comes from (its `chunks` are hunks of that diff: `diff`).',
    properties: {
      id: { type: 'string' },
      parents: { type: 'array', items: { type: 'string' } },
      author: ref('CommitPerson'),
      committer: ref('CommitPerson'),
      message: { type: 'string', description: 'The full message (a `type:commit` result: without its final newline).' },
    },
    required: ['id', 'parents', 'author', 'committer', 'message'],
    additionalProperties: false,
  },
};

export function searchSchemas(maxMatches: number): Record<string, JsonSchema> {
  return {
    SearchRequest: {
      type: 'object',
      description: 'A search. Unknown fields are rejected.',
      properties: {
        query: {
          type: 'string',
          maxLength: MAX_QUERY_BYTES,
          description: `The query language (README "Query language"); at most ${MAX_QUERY_BYTES} bytes of UTF-8.`,
        },
        matches: { type: 'integer', minimum: 1, maximum: maxMatches, description: 'The most match ranges (content plus file name) to return.' },
        contextLines: { type: 'integer', minimum: 0, maximum: MAX_CONTEXT_LINES, default: 0, description: 'Lines of context around each match.' },
        whole: {
          type: 'boolean',
          default: false,
          description: "Return each file's whole content in `content` (at most settings.http.maxSourceBytes of it: see `contentTruncated`).",
        },
        isRegexEnabled: { type: 'boolean', default: false, description: 'Terms are RE2 regular expressions rather than literal substrings.' },
        isCaseSensitivityEnabled: { type: 'boolean', default: false, description: 'Case-sensitive matching (a `case:` filter overrides it).' },
        context: {
          type: 'string',
          pattern: CONTEXT_NAME.source,
          description:
            "**trawl adds**: the search context to search in, as `context:` in the query would name it (`global`: every repository the caller may see); a query that names another is refused. Without either, the caller's default context (GET /api/default_context).",
        },
      },
      required: ['query', 'matches'],
      additionalProperties: false,
    },
    Location: {
      type: 'object',
      properties: {
        byteOffset: { ...count, description: '0-based UTF-8 byte offset from the start of the file (or path).' },
        lineNumber: { type: 'integer', minimum: 1 },
        column: { type: 'integer', minimum: 1, description: '1-based, in Unicode code points from the line start.' },
      },
      required: ['byteOffset', 'lineNumber', 'column'],
      additionalProperties: false,
    },
    Range: RANGE,
    Symbol: {
      type: 'object',
      properties: {
        symbol: { type: 'string' },
        kind: { type: 'string' },
        parent: {
          type: 'object',
          properties: { symbol: { type: 'string' }, kind: { type: 'string' } },
          required: ['symbol', 'kind'],
          additionalProperties: false,
        },
      },
      required: ['symbol', 'kind'],
      additionalProperties: false,
    },
    Chunk: CHUNK,
    FileResult: FILE_RESULT,
    ...COMMIT_SCHEMAS,
    StreamedFile: {
      ...FILE_RESULT,
      description:
        "A file of a stream's `chunk` message: a FileResult and its ranking `score`. A stream sends files in shard order, each message ranked in itself; " +
        'ordered by score (highest first), then repository, then path (`fileName.text`), both in UTF-8 byte order, they are in the order `POST /api/search` gives the same files.',
      properties: {
        ...FILE_RESULT.properties,
        score: {
          type: 'number',
          description: 'The ranking score (docs/query-language.md, "Ranking"); higher ranks first. Exactly the number the server ranks by.',
        },
      },
      required: [...FILE_RESULT.required, 'score'],
    },
    RepositoryInfo: {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        codeHostType: { enum: [...CODE_HOST_TYPES] },
        name: { type: 'string' },
        displayName: { type: 'string' },
        webUrl: { type: 'string' },
      },
      required: ['id', 'codeHostType', 'name', 'displayName', 'webUrl'],
      additionalProperties: false,
    },
    SearchStats: {
      type: 'object',
      description: 'Measurements of this search; durations (duration, wait, matchTreeConstruction, matchTreeSearch) in nanoseconds.',
      properties: {
        ...Object.fromEntries(STAT_NUMBERS.map((k) => [k, count])),
        flushReason: { enum: ['FLUSH_REASON_UNKNOWN_UNSPECIFIED', 'FLUSH_REASON_TIMER_EXPIRED', 'FLUSH_REASON_FINAL_FLUSH', 'FLUSH_REASON_MAX_SIZE'] },
      },
      required: [...STAT_NUMBERS, 'flushReason'],
      additionalProperties: false,
    },
    UnavailableShards: {
      type: 'array',
      description:
        'A cluster only, and only when some exist: shards of the index that no live node could search (every node holding a copy was down or failed). Their matches are missing from the answer, whose `isSearchExhaustive` is then false. docs/deployment.md says when this happens.',
      items: {
        type: 'object',
        properties: {
          repositoryId: count,
          repository: { type: 'string', description: 'The repository name.' },
          shard: { type: 'string', description: "The shard's file name in the repository's index." },
          reason: { type: 'string' },
        },
        required: ['repositoryId', 'repository', 'shard', 'reason'],
        additionalProperties: false,
      },
    },
    SearchResponse: {
      type: 'object',
      properties: {
        stats: ref('SearchStats'),
        files: { type: 'array', items: ref('FileResult') },
        repositoryInfo: { type: 'array', items: ref('RepositoryInfo') },
        isSearchExhaustive: { type: 'boolean' },
        unavailableShards: ref('UnavailableShards'),
      },
      required: ['stats', 'files', 'repositoryInfo', 'isSearchExhaustive'],
      additionalProperties: false,
    },
    StreamChunk: {
      type: 'object',
      description: 'Results as they are found; `stats` covers this message.',
      properties: {
        type: { const: 'chunk' },
        stats: ref('SearchStats'),
        files: { type: 'array', items: ref('StreamedFile') },
        repositoryInfo: { type: 'array', items: ref('RepositoryInfo') },
      },
      required: ['type', 'stats', 'files', 'repositoryInfo'],
      additionalProperties: false,
    },
    StreamFinal: {
      type: 'object',
      description: 'Once, at the end of a stream that did not fail.',
      properties: {
        type: { const: 'final' },
        accumulatedStats: ref('SearchStats'),
        isSearchExhaustive: { type: 'boolean' },
        unavailableShards: ref('UnavailableShards'),
      },
      required: ['type', 'accumulatedStats', 'isSearchExhaustive'],
      additionalProperties: false,
    },
    StreamError: {
      type: 'object',
      description: 'A failure after the stream began; the stream then ends.',
      properties: { type: { const: 'error' }, error: ref('Error') },
      required: ['type', 'error'],
      additionalProperties: false,
    },
    StreamMessage: {
      description: 'The JSON of one `data:` line of the stream (the last line is `data: [DONE]`).',
      oneOf: [ref('StreamChunk'), ref('StreamFinal'), ref('StreamError')],
    },
  };
}
