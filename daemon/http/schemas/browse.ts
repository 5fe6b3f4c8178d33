// JSON Schemas of the browsing endpoints (docs/http-api.md section 13): source, outline, files,
// tree, folder_contents, find_definitions and find_references. Query-string inputs are objects
// of strings (integers are coerced); openapi.ts turns their properties into parameters.

import { CONTEXT_NAME } from '../../config/contexts.ts';
import { CODE_HOST_TYPES } from '../../repos/hosts/types.ts';
import { EXTERNAL_WEB_URL, ref, type JsonSchema } from './common.ts';

const text = (description: string, maxLength = 4096): JsonSchema => ({ type: 'string', minLength: 1, maxLength, description });
const path = (description: string): JsonSchema => ({ type: 'string', maxLength: 4096, description });
const entryType = { enum: ['tree', 'blob'] };

export const REPO_PARAM = text('Repository name, host/path form (`github.com/org/repo`), as /api/repos reports it.', 1024);
export const REF_PARAM = text(
  "An indexed branch, a tag, HEAD, or the id (7 to 40 hex digits) of a commit they reach, each optionally followed by `~N`, `^N` or `^{commit}` (`main~1`); reflog forms (`@{…}`), other refs and unreachable commits are 400 INVALID_GIT_REF. Default: the repository's default branch.",
  1024,
);

export const browseSchemas: Record<string, JsonSchema> = {
  SourceQuery: {
    type: 'object',
    properties: { repo: REPO_PARAM, path: path('File path in the repository.'), ref: REF_PARAM },
    required: ['repo', 'path'],
    additionalProperties: false,
  },
  SourceResponse: {
    type: 'object',
    properties: {
      source: { type: 'string', description: "The file's content (UTF-8; invalid sequences replaced)." },
      language: { type: 'string' },
      path: { type: 'string' },
      repo: { type: 'string' },
      repoCodeHostType: { enum: [...CODE_HOST_TYPES] },
      webUrl: { type: 'string' },
      repoDisplayName: { type: 'string' },
      repoExternalWebUrl: EXTERNAL_WEB_URL,
      externalWebUrl: EXTERNAL_WEB_URL,
      blobSha: { type: 'string', description: 'The git blob id (absent for a directory repository).' },
    },
    required: ['source', 'language', 'path', 'repo', 'repoCodeHostType', 'webUrl'],
    additionalProperties: false,
  },
  OutlineQuery: {
    type: 'object',
    properties: { repo: REPO_PARAM, path: path('File path in the repository.'), ref: REF_PARAM },
    required: ['repo', 'path'],
    additionalProperties: false,
  },
  OutlineSymbol: {
    type: 'object',
    properties: {
      symbol: { type: 'string', minLength: 1, description: 'The name as defined.' },
      kind: { type: 'string', description: "universal-ctags' long kind name: function, struct, member, macro, class, method, variable, ..." },
      line: { type: 'integer', minimum: 1, description: '1-based line of the definition.' },
      endLine: { type: 'integer', minimum: 1, description: '1-based last line (= line when ctags knows no end).' },
      parent: {
        type: 'object',
        description: "The enclosing definition (ctags' scope; may be qualified, e.g. `Outer.Inner`).",
        properties: { symbol: { type: 'string' }, kind: { type: 'string' } },
        required: ['symbol', 'kind'],
        additionalProperties: false,
      },
    },
    required: ['symbol', 'kind', 'line', 'endLine'],
    additionalProperties: false,
  },
  OutlineResponse: {
    type: 'object',
    properties: {
      repo: { type: 'string' },
      path: { type: 'string', description: "The file's path, normalized." },
      ref: { type: 'string', description: 'The ref read: the one given, or the default branch.' },
      language: { type: 'string' },
      symbols: {
        type: 'array',
        items: ref('OutlineSymbol'),
        description: 'By line, then name; empty for a file with no definitions, larger than 1 MiB, or binary.',
      },
    },
    required: ['repo', 'path', 'ref', 'language', 'symbols'],
    additionalProperties: false,
  },
  FilesRequest: {
    type: 'object',
    properties: { repoName: REPO_PARAM, revisionName: REF_PARAM },
    required: ['repoName'],
    additionalProperties: false,
  },
  FileEntry: {
    type: 'object',
    properties: { type: { const: 'blob' }, path: { type: 'string' }, name: { type: 'string' } },
    required: ['type', 'path', 'name'],
    additionalProperties: false,
  },
  FilesResponse: { type: 'array', items: ref('FileEntry') },
  TreeRequest: {
    type: 'object',
    properties: {
      repoName: REPO_PARAM,
      revisionName: REF_PARAM,
      paths: {
        type: 'array',
        maxItems: 1000,
        items: path('A path to expand.'),
        default: [],
        description: 'Paths to expand: every directory on the way and the path itself.',
      },
    },
    required: ['repoName'],
    additionalProperties: false,
  },
  TreeNode: {
    type: 'object',
    properties: {
      type: entryType,
      path: { type: 'string' },
      name: { type: 'string' },
      children: { type: 'array', items: ref('TreeNode') },
    },
    required: ['type', 'path', 'name', 'children'],
    additionalProperties: false,
  },
  TreeResponse: {
    type: 'object',
    properties: { tree: ref('TreeNode') },
    required: ['tree'],
    additionalProperties: false,
  },
  FolderContentsQuery: {
    type: 'object',
    properties: { repoName: REPO_PARAM, revisionName: REF_PARAM, path: path('Directory path; empty or absent: the root.') },
    required: ['repoName'],
    additionalProperties: false,
  },
  FolderEntry: {
    type: 'object',
    properties: { type: entryType, path: { type: 'string' }, name: { type: 'string' } },
    required: ['type', 'path', 'name'],
    additionalProperties: false,
  },
  FolderContentsResponse: { type: 'array', items: ref('FolderEntry') },
  FindSymbolRequest: {
    type: 'object',
    properties: {
      symbolName: text("The symbol's exact name.", 1024),
      language: text('Only files of this language (linguist name).', 256),
      revisionName: text("A branch or tag (default: each repository's default branch).", 1024),
      repoName: REPO_PARAM,
      context: {
        type: 'string',
        pattern: CONTEXT_NAME.source,
        description:
          "**trawl adds**: only the repositories of this search context (GET /api/contexts lists them). Without it, every repository the caller may see: the caller's default context does not apply here.",
      },
    },
    required: ['symbolName'],
    additionalProperties: false,
  },
  SymbolMatch: {
    type: 'object',
    properties: { lineContent: { type: 'string' }, range: ref('Range') },
    required: ['lineContent', 'range'],
    additionalProperties: false,
  },
  SymbolFile: {
    type: 'object',
    properties: {
      fileName: { type: 'string' },
      repository: { type: 'string' },
      repositoryId: { type: 'integer' },
      webUrl: { type: 'string' },
      language: { type: 'string' },
      matches: { type: 'array', items: ref('SymbolMatch') },
    },
    required: ['fileName', 'repository', 'repositoryId', 'webUrl', 'language', 'matches'],
    additionalProperties: false,
  },
  FindSymbolResponse: {
    type: 'object',
    properties: {
      stats: { type: 'object', properties: { matchCount: { type: 'integer', minimum: 0 } }, required: ['matchCount'], additionalProperties: false },
      files: { type: 'array', items: ref('SymbolFile') },
      repositoryInfo: { type: 'array', items: ref('RepositoryInfo') },
    },
    required: ['stats', 'files', 'repositoryInfo'],
    additionalProperties: false,
  },
};
