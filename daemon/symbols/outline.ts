// The symbol outline of one file (GET /api/outline): its definitions from trawl's scanners
// (C, device trees, Kconfig) or universal-ctags, with the indexer's rules (extract.ts: which files the
// scanners read;
// ctags.ts: command line, size cap, time budget and sorting), so
// the outline of an indexed file lists what find_definitions knows about it, and a file at
// any other ref gets the same treatment.
//
// The indexer's extractSymbols is synchronous (spawnSync inside an index worker thread);
// here ctags runs as an asynchronous child process, so the event loop stays free while it
// parses. One interactive session per call: stdin carries a `generate-tags` line and the
// content (nothing is written to disk; the path only serves language detection), stdout
// answers with the file's tags as JSON lines and a `completed` marker. At most one ctags
// per core runs at a time; further calls wait their turn. A call whose caller goes away or
// whose server shuts down (signal) stops waiting or kills its ctags, and rejects with
// SERVICE_UNAVAILABLE.

import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { ServiceError } from '../errors.ts';
import { scannedSymbols } from './extract.ts';
import { ctagsInteractiveArgs, generateTagsRequest, readTagStream, SYMBOL_MAX_FILE_BYTES, sortSymbolDefs, symbolTimeoutMs, type SymbolDef } from './ctags.ts';
import { bufferView } from '../runtime/buffer-view.ts';
import { Slots } from '../runtime/slots.ts';

export type { SymbolDef } from './ctags.ts';

export interface OutlineResult {
  /** Sorted by (line, name, kind), without repeats. */
  symbols: SymbolDef[];
  /**
   * Why the list is empty without ctags having said so: 'too-large' (over
   * SYMBOL_MAX_FILE_BYTES), 'binary' (a NUL byte, the indexer's rule), 'timeout' (over the
   * indexer's budget), 'failed' (ctags crashed or answered nonsense; e.g. deeply nested
   * input makes it overflow its stack). Absent when ctags parsed the file.
   */
  skipped?: 'too-large' | 'binary' | 'timeout' | 'failed';
}

/** ctags' output over this is cut (killed): ~100 bytes a tag, far above what a 1 MiB file gives. */
const MAX_OUTPUT_BYTES = 64 * (1 << 20);

/**
 * The definitions in `content` (the file at `path`). An empty list (with `skipped`) for a
 * file too large, binary, or that ctags fails on. SERVICE_UNAVAILABLE when the file is one
 * for ctags (not C, a device tree source or a Kconfig file, which trawl's scanners read) and there is no
 * usable universal-ctags; SERVICE_UNAVAILABLE too when the signal aborts it.
 */
export async function outlineSymbols(path: string, content: Uint8Array, options: { signal?: AbortSignal } = {}): Promise<OutlineResult> {
  if (content.byteLength === 0) return { symbols: [] };
  if (content.byteLength > SYMBOL_MAX_FILE_BYTES) return { symbols: [], skipped: 'too-large' };
  if (bufferView(content).indexOf(0) !== -1) return { symbols: [], skipped: 'binary' };
  // C, device trees and Kconfig: the indexer's scanners, in process (quick even at the size cap).
  const scanned = scannedSymbols(path, content);
  if (scanned) return { symbols: scanned };
  // Probed once per process (a short synchronous spawn), then cached.
  const args = ctagsInteractiveArgs();
  if (!args)
    throw new ServiceError(
      'SERVICE_UNAVAILABLE',
      'symbol outlines need universal-ctags (with the interactive and json features), which is not installed on the server',
    );
  const release = await slots.take(options.signal, cancelled);
  try {
    return await runCtags(args, path, content, options.signal);
  } finally {
    release();
  }
}

type Outcome = { stdout: Buffer; timedOut: boolean; overflow: boolean };

async function runCtags(args: string[], path: string, content: Uint8Array, signal: AbortSignal | undefined): Promise<OutlineResult> {
  if (signal?.aborted) throw cancelled();
  const head = generateTagsRequest(path, content.byteLength);
  const out = await new Promise<Outcome>((resolve, reject) => {
    const child = spawn('ctags', args, { stdio: ['pipe', 'pipe', 'ignore'], windowsHide: true });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let timedOut = false;
    let overflow = false;
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, symbolTimeoutMs(content.byteLength));
    const onAbort = () => kill();
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    child.stdout.on('data', (c: Buffer) => {
      if (overflow) return;
      bytes += c.length;
      if (bytes > MAX_OUTPUT_BYTES) {
        overflow = true;
        kill();
        return;
      }
      chunks.push(c);
    });
    // EPIPE when ctags dies before reading everything: its exit tells what happened.
    child.stdin.on('error', () => {});
    child.on('error', (err) => {
      done();
      // Not started (ENOENT after the probe said yes: ctags was removed; EAGAIN, EMFILE, ...).
      const code = (err as NodeJS.ErrnoException).code;
      reject(
        code === 'ENOENT'
          ? new ServiceError('SERVICE_UNAVAILABLE', 'symbol outlines need universal-ctags, which is not installed on the server')
          : new ServiceError('SERVICE_UNAVAILABLE', `could not start universal-ctags (${code ?? 'error'}); try again later`),
      );
    });
    child.on('close', () => {
      done();
      if (signal?.aborted) reject(cancelled());
      else resolve({ stdout: Buffer.concat(chunks), timedOut, overflow });
    });
    child.stdin.write(head);
    child.stdin.end(content);
  });
  const symbols = parseTags(out.stdout);
  if (symbols) return { symbols: sortSymbolDefs(symbols) };
  return { symbols: [], skipped: out.timedOut ? 'timeout' : 'failed' };
}

/**
 * One file's tags from ctags' JSON lines, with extractSymbols' rules; undefined unless the
 * `completed` marker came (a crash, a kill, an error reply or an unparsable line).
 */
function parseTags(stdout: Buffer): SymbolDef[] | undefined {
  let defs: SymbolDef[] | undefined;
  readTagStream(stdout, 1, (d) => {
    defs = d;
  });
  return defs;
}

function cancelled(): ServiceError {
  return new ServiceError('SERVICE_UNAVAILABLE', 'the outline was cancelled (the client went away or the server is shutting down)');
}

const slots = new Slots(Math.max(1, availableParallelism()));
