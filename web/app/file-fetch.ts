// The file view's two requests, started by main.ts before the view's own code (a chunk
// with CodeMirror) has loaded, so that the download of the file and of the viewer overlap.

import { apiJson, qs } from './api.ts';

export interface Source {
  source: string;
  language: string;
  path: string;
  repo: string;
  webUrl: string;
  externalWebUrl?: string;
  blobSha?: string;
}

export interface OutlineSymbol {
  symbol: string;
  kind: string;
  line: number;
  endLine: number;
  parent?: { symbol: string; kind: string };
}

export interface FileRequests {
  /** Rejects with the API's error. */
  file: Promise<Source>;
  /** Never rejects: an outline that cannot be had is the error. */
  outline: Promise<{ symbols: OutlineSymbol[] } | Error>;
}

export function fetchFile(repo: string, branch: string, path: string): FileRequests {
  const params = qs({ repo, path, ref: branch });
  const file = apiJson<Source>(`/api/source?${params}`);
  // Handled where it is awaited; until then an early failure is not "unhandled".
  file.catch(() => undefined);
  return { file, outline: apiJson<{ symbols: OutlineSymbol[] }>(`/api/outline?${params}`).catch((err: Error) => err) };
}
