// Symbol definitions for indexed files, from universal-ctags.
//
// ctags runs in its interactive mode, one synchronous spawn per batch of files:
// stdin carries, per file, a `generate-tags` command line followed by exactly
// `size` raw bytes of content (nothing is written to disk, and the path only
// serves language detection); stdout answers with JSON lines, the tags of a
// file followed by a `completed` marker (also for files ctags has no parser
// for). ctags flushes its output after each marker, so when a batch is killed
// (time-out) or dies (crash) the files already marked complete keep their
// tags, the file in progress is counted and gets nothing, and the rest of the
// batch is retried in a new spawn. Each failed spawn consumes at least one
// file, so a pathological input never fails the whole extraction nor loops.
//
// ctags is many times slower on tag-dense files than on ordinary code
// (docs/design.md "Symbols" has the figures), hence budgets that grow with the
// bytes; a file of tens of thousands of nested `{` makes it die with SIGSEGV
// (stack overflow). Interactive ctags neither sorts nor deduplicates
// (`int a, a;` gives two tags): done here.

import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';

export interface SymbolDef {
  name: string;
  /** ctags' long kind name: function, struct, member, macro, class, method, func, variable, ... */
  kind: string;
  /** 1-based line of the definition. */
  line: number;
  /** 1-based last line (ctags' "end" field; = line when ctags gives none). */
  endLine: number;
  /**
   * From ctags' scope / scopeKind. The name is ctags' scope as printed, which
   * may be qualified ("outer::__anon1a2b", Go's "main.Server", Java's "Main.Inner").
   * Objects are shared between the tags of one file: do not mutate.
   */
  parent?: { name: string; kind: string };
  /** Byte offset of the name in the file where the C scanner read it (not from ctags): spares name-range.ts a search. */
  at?: number;
}

export interface SymbolResult {
  /** Definitions per input file, in input order, each list sorted by (line, name). */
  symbols: SymbolDef[][];
  /** Files ctags failed on (crash, bad output) and files that took too long: they get an empty list. */
  failed: number;
  timedOut: number;
}

export interface SymbolOptions {
  /**
   * Time budget of a spawn, scaled by its content: perFileTimeoutMs * (1 + bytes / 40 MiB),
   * i.e. 10 s + 1 s per 4 MiB with the default (10 000).
   */
  perFileTimeoutMs?: number;
  /** Larger files are skipped (empty list, not a failure). Default 1 MiB. */
  maxFileBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_FILE_BYTES = 1 << 20;
/** Content bytes over which the per-file budget is extended by one more budget (10 s per 40 MiB = 1 s per 4 MiB). */
const TIMEOUT_SCALE_BYTES = 40 * (1 << 20);
/** Content per spawn. */
const BATCH_BYTES = 32 * (1 << 20);
/** stdout cap per spawn (~100 bytes per tag; well under V8's string limit for toString). */
const MAX_BUFFER = 256 * (1 << 20);

// --options=NONE must come first: no ~/.ctags.d, ./.ctags.d, $CTAGS.
// --fields: N name, n line, K kind (long name), e end line, s scope (the JSON
//   writer adds scopeKind with it in 5.9; p asks for scopeKind explicitly).
// --extras=F: only the "fileScope" extra. `--extras=` (empty) would also drop
//   every file-scoped tag, which in C is all static functions and every macro
//   or struct of a .c file; also off: anonymous (__anonXXXX), pseudo, qualified.
// -G (--guess-language-eagerly): extension-less scripts are parsed by their #! line.
const CTAGS_ARGS = ['--options=NONE', '--output-format=json', '--fields=NnKesp', '--extras=F', '--guess-language-eagerly'];

type Probe = { ok: boolean; mode: string };
let probed: Probe | undefined;

/** The probe's input: a one-line C file in an interactive session. */
function probeInput(): Buffer {
  const src = Buffer.from('int trawl_probe(void) { return 0; }\n');
  const head = `${JSON.stringify({ command: 'generate-tags', filename: 'probe.c', size: src.length })}\n`;
  return Buffer.concat([Buffer.from(head), src]);
}

/** Whether ctags answered the probe as expected: its function, then "completed". */
function probeAnswered(stdout: Buffer): boolean {
  let tag = false;
  let completed = false;
  for (const l of stdout.toString('utf8').split('\n')) {
    if (l === '') continue;
    try {
      const o = JSON.parse(l) as Record<string, unknown>;
      if (o._type === 'tag' && o.name === 'trawl_probe' && o.line === 1 && o.kind === 'function' && o.end === 1) tag = true;
      else if (o._type === 'completed') completed = true;
    } catch {
      return false;
    }
  }
  return tag && completed;
}

/** One interactive session on a one-line C file, in `mode`; true if it answers as expected. */
function probeMode(mode: string): boolean {
  const r = spawnSync('ctags', [...CTAGS_ARGS, `--_interactive=${mode}`], {
    input: probeInput(),
    timeout: 30_000,
    killSignal: 'SIGKILL',
    stdio: ['pipe', 'pipe', 'ignore'],
    windowsHide: true,
  });
  return !r.error && r.status === 0 && !!r.stdout && probeAnswered(r.stdout);
}

/** `ctags args`, fed `input`, without blocking: its stdout when it exits 0, else undefined. */
function runAsync(args: string[], input: Buffer | undefined): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('ctags', args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'ignore'], windowsHide: true });
    } catch {
      return resolve(undefined);
    }
    const out: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? Buffer.concat(out) : undefined);
    });
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
  });
}

/**
 * Asks ctags what ctagsAvailable() and ctagsVersion() ask, without blocking, so that a
 * process about to build (a sync, while it lists and compares) has the answers when its
 * first build on this thread needs them: each is otherwise a blocking process start there.
 * Harmless once they are in.
 */
export async function warmCtags(): Promise<void> {
  const asked: Array<Promise<void>> = [];
  if (version === undefined) {
    asked.push(
      runAsync(['--version'], undefined).then((out) => {
        version ??= out ? (out.toString('utf8').split('\n')[0] ?? '').trim() : '';
      }),
    );
  }
  if (!probed) {
    asked.push(
      (async () => {
        let found: string | undefined;
        for (const mode of PROBE_MODES) {
          const out = await runAsync([...CTAGS_ARGS, `--_interactive=${mode}`], probeInput());
          if (out !== undefined && probeAnswered(out)) {
            found = mode;
            break;
          }
        }
        probed ??= probeOf(found);
      })(),
    );
  }
  await Promise.all(asked);
}

/** The modes tried, best first: the seccomp sandbox (no open/exec from the parsers) when the kernel allows it. */
const PROBE_MODES = ['sandbox', 'default'];

const probeOf = (mode: string | undefined): Probe => (mode === undefined ? { ok: false, mode: '' } : { ok: true, mode });

function probe(): Probe {
  probed ??= probeOf(PROBE_MODES.find(probeMode));
  return probed;
}

let version: string | undefined;

/** The first line of `ctags --version` (e.g. "Universal Ctags 5.9.0, Copyright ..."), or '' without ctags; asked once, cached. */
export function ctagsVersion(): string {
  if (version === undefined) {
    const r = spawnSync('ctags', ['--version'], { timeout: 30_000, stdio: ['ignore', 'pipe', 'ignore'], windowsHide: true });
    version = r.status === 0 && r.stdout ? (r.stdout.toString('utf8').split('\n')[0] ?? '').trim() : '';
  }
  return version;
}

/** Whether a usable `ctags` (universal-ctags with the interactive and json features) is on PATH; checked once, cached. */
export function ctagsAvailable(): boolean {
  return probe().ok;
}

type Input = { path: string; content: Uint8Array };

// Kind names repeat endlessly; keep one copy of each so JSON.parse's copies die young.
const kindNames = new Map<string, string>();
function internKind(k: string): string {
  const seen = kindNames.get(k);
  if (seen !== undefined) return seen;
  if (kindNames.size < 4096) kindNames.set(k, k);
  return k;
}

function compareDefs(a: SymbolDef, b: SymbolDef): number {
  if (a.line !== b.line) return a.line - b.line;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return 0;
}

/** Sorted by (line, name, kind), without repeated (name, kind, line). */
function finish(defs: SymbolDef[]): SymbolDef[] {
  if (defs.length < 2) return defs;
  // The scanners give most files in order already: checked in one pass before sorting.
  let sorted = true;
  for (let i = 1; i < defs.length && sorted; i++) sorted = compareDefs(defs[i - 1]!, defs[i]!) < 0;
  if (sorted) return defs;
  defs.sort(compareDefs);
  let w = 1;
  for (let r = 1; r < defs.length; r++) {
    const d = defs[r]!;
    const p = defs[w - 1]!;
    if (d.line === p.line && d.name === p.name && d.kind === p.kind) continue;
    defs[w++] = d;
  }
  defs.length = w;
  return defs;
}

const SURROGATE = /[\ud800-\udfff]/;

/** The `generate-tags` line of ctags' interactive mode for a file; its `size` bytes follow it on stdin. */
export function generateTagsRequest(path: string, size: number): Buffer {
  // A lone surrogate would be sent as a "\udXXX" escape, which ctags rejects as invalid json.
  const filename = SURROGATE.test(path) ? Buffer.from(path, 'utf8').toString('utf8') : path;
  return Buffer.from(`${JSON.stringify({ command: 'generate-tags', filename, size })}\n`);
}

/**
 * Reads ctags' interactive JSON-lines answer: the tags of each file up to its `completed`
 * marker go to `onFile` (unsorted), for at most `files` files. `broken` when a line is not
 * JSON or ctags replied with an error: the stream is out of step with the input, so
 * nothing after it is trusted. A line cut short (by a kill) is never parsed.
 */
export function readTagStream(stdout: Buffer, files: number, onFile: (defs: SymbolDef[]) => void): { completed: number; broken: boolean } {
  const lines = stdout.toString('utf8').split('\n');
  // The last piece is '' after a complete last line, or a line cut short by a kill.
  const n = lines.length - 1;
  let completed = 0;
  let pending: SymbolDef[] = [];
  let parents = new Map<string, { name: string; kind: string }>();
  for (let li = 0; li < n && completed < files; li++) {
    const l = lines[li]!;
    if (l === '') continue;
    let o: TagRecord;
    try {
      o = JSON.parse(l);
    } catch {
      return { completed, broken: true };
    }
    const type = o._type;
    if (type === 'tag') {
      const def = tagToDef(o, parents);
      if (def) pending.push(def);
    } else if (type === 'completed') {
      onFile(pending);
      completed++;
      pending = [];
      if (parents.size > 0) parents = new Map();
    } else if (type === 'error') {
      // A warning ({"_type": "error", "message": "ignoring null tag in ...", "warning":
      // true}, on minified JavaScript) leaves the file's other tags and the files after it
      // sound; read as a failure, it cost the whole rest of the batch a new spawn, once per
      // warning. Anything else (e.g. {"_type": "error", "message": "invalid json", "fatal":
      // true}) breaks the stream.
      if (o.warning === true) continue;
      return { completed, broken: true };
    }
    // "program" (the greeting) and anything unknown: ignored.
  }
  return { completed, broken: false };
}

type BatchOutcome = {
  /** Files of the batch resolved (tags assigned or counted as failed), from its start. */
  consumed: number;
  failed: number;
  timedOut: number;
};

function runBatch(batch: number[], files: Input[], out: SymbolDef[][], perFileTimeoutMs: number, mode: string): BatchOutcome {
  let bytes = 0;
  const heads: Buffer[] = [];
  for (const i of batch) {
    const f = files[i]!;
    heads.push(generateTagsRequest(f.path, f.content.byteLength));
    bytes += f.content.byteLength;
  }
  let total = bytes;
  for (const h of heads) total += h.length;
  const input = Buffer.allocUnsafe(total);
  let at = 0;
  for (let k = 0; k < batch.length; k++) {
    input.set(heads[k]!, at);
    at += heads[k]!.length;
    const c = files[batch[k]!]!.content;
    input.set(c, at);
    at += c.byteLength;
  }

  const r: SpawnSyncReturns<Buffer> = spawnSync('ctags', [...CTAGS_ARGS, `--_interactive=${mode}`], {
    input,
    timeout: Math.ceil(perFileTimeoutMs * (1 + bytes / TIMEOUT_SCALE_BYTES)),
    killSignal: 'SIGKILL',
    maxBuffer: MAX_BUFFER,
    stdio: ['pipe', 'pipe', 'ignore'],
    windowsHide: true,
  });
  const errCode = (r.error as NodeJS.ErrnoException | undefined)?.code;
  if (!r.stdout || r.pid === 0) {
    // Not even started (ENOENT, EAGAIN, EMFILE, ...): retrying file by file would not help.
    return { consumed: batch.length, failed: batch.length, timedOut: 0 };
  }

  let next = 0;
  const { completed: done, broken } = readTagStream(r.stdout, batch.length, (defs) => {
    out[batch[next++]!] = finish(defs);
  });

  if (done === batch.length) return { consumed: done, failed: 0, timedOut: 0 };
  if (errCode === 'ETIMEDOUT') return { consumed: done + 1, failed: 0, timedOut: 1 };
  // stdout overflowed while this file was in progress but earlier ones fit:
  // the cap is for the whole batch, so retry this file in a fresh spawn.
  if (errCode === 'ENOBUFS' && done > 0 && !broken) return { consumed: done, failed: 0, timedOut: 0 };
  // Crash (signal, non-zero exit), error reply, unparsable line, or an exit
  // before the last marker: the file in progress is the culprit.
  return { consumed: done + 1, failed: 1, timedOut: 0 };
}

/** One line of ctags' JSON output, as parsed (fields unchecked). */
interface TagRecord {
  _type?: unknown;
  name?: unknown;
  line?: unknown;
  kind?: unknown;
  end?: unknown;
  scope?: unknown;
  scopeKind?: unknown;
  warning?: unknown;
}

/**
 * A `tag` record as a definition; undefined without a name or a line. `parents` holds one
 * parent object per scope for a file's tags, so a class's hundred members share one.
 */
function tagToDef(o: TagRecord, parents: Map<string, { name: string; kind: string }>): SymbolDef | undefined {
  const { name, line, end, scope } = o;
  if (typeof name !== 'string' || name === '' || typeof line !== 'number' || !(line >= 1)) return undefined;
  const def: SymbolDef = {
    name,
    kind: typeof o.kind === 'string' ? internKind(o.kind) : '',
    line,
    endLine: typeof end === 'number' && end >= line ? end : line,
  };
  if (typeof scope === 'string' && scope !== '') {
    const scopeKind = typeof o.scopeKind === 'string' ? o.scopeKind : '';
    const key = `${scopeKind}\0${scope}`;
    let p = parents.get(key);
    if (!p) {
      p = { name: scope, kind: internKind(scopeKind) };
      parents.set(key, p);
    }
    def.parent = p;
  }
  return def;
}

/** Synchronous (it runs inside an index worker thread that is itself synchronous). */
export function extractSymbols(files: Array<{ path: string; content: Uint8Array }>, options: SymbolOptions = {}): SymbolResult {
  const perFileTimeoutMs = options.perFileTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const symbols: SymbolDef[][] = new Array<SymbolDef[]>(files.length);
  const todo: number[] = [];
  for (let i = 0; i < files.length; i++) {
    symbols[i] = [];
    const size = files[i]!.content.byteLength;
    if (size > 0 && size <= maxFileBytes) todo.push(i);
  }
  const result: SymbolResult = { symbols, failed: 0, timedOut: 0 };
  if (todo.length === 0) return result;
  const { ok, mode } = probe();
  if (!ok) throw new Error('extractSymbols: no usable ctags on PATH (universal-ctags with the interactive and json features)');

  let next = 0;
  while (next < todo.length) {
    const batch: number[] = [];
    let bytes = 0;
    for (let k = next; k < todo.length; k++) {
      const size = files[todo[k]!]!.content.byteLength;
      if (batch.length > 0 && bytes + size > BATCH_BYTES) break;
      batch.push(todo[k]!);
      bytes += size;
    }
    const o = runBatch(batch, files, symbols, perFileTimeoutMs, mode);
    result.failed += o.failed;
    result.timedOut += o.timedOut;
    next += o.consumed;
  }
  return result;
}

// For a caller that runs ctags itself, one file at a time and asynchronously (the file
// outline endpoint, symbols/outline.ts): the same command line, size cap, time budget
// and post-processing as extractSymbols, so both give the same definitions.

/** Files larger than this get no symbols (extractSymbols' default maxFileBytes). */
export const SYMBOL_MAX_FILE_BYTES = DEFAULT_MAX_FILE_BYTES;

/** The time budget of one spawn over `bytes` of content (extractSymbols' default). */
export function symbolTimeoutMs(bytes: number): number {
  return Math.ceil(DEFAULT_TIMEOUT_MS * (1 + bytes / TIMEOUT_SCALE_BYTES));
}

/** ctags' arguments for an interactive session, or undefined when ctagsAvailable() is false. */
export function ctagsInteractiveArgs(): string[] | undefined {
  const { ok, mode } = probe();
  return ok ? [...CTAGS_ARGS, `--_interactive=${mode}`] : undefined;
}

/** Sorts one file's definitions by (line, name, kind) and drops repeats, in place, as extractSymbols does. */
export function sortSymbolDefs(defs: SymbolDef[]): SymbolDef[] {
  return finish(defs);
}
