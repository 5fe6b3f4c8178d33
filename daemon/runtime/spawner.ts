// Child processes started by a small helper process (spawner-child.ts) instead of this one.
//
// Starting a process copies the starting process's page tables (fork), so its cost grows
// with the resident memory of the process that starts it (docs/design.md, "Reading git",
// has the figures). A sync starts git for every small
// repository it reads while its build threads hold hundreds of megabytes; through the
// spawner, which stays small, each costs what it would from a fresh process, and this
// process pays one fork for the spawner. The children's bytes pass through the spawner's
// pipes (one more copy, far cheaper than the forks).
//
// One spawner per thread (a worker thread has its own), started on first use, ended when
// this thread's process ends (its stdin closes). A spawner that dies fails the children it
// carried; the next spawn starts another.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { finished, PassThrough, Writable } from 'node:stream';
import { nodeArgsFor } from './ts-worker.ts';
import { frame, FrameReader, Kind, type SpawnRequest } from './spawn-frames.ts';

const SPAWNER = 'daemon/runtime/spawner-child.ts';

/** What a caller sees of a child started through the spawner: the parts of ChildProcess that reading a command's output needs. */
export interface SpawnedChild extends EventEmitter {
  readonly stdin: Writable;
  readonly stdout: PassThrough;
  readonly stderr: PassThrough;
  exitCode: number | null;
  signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): boolean;
}

class Child extends EventEmitter implements SpawnedChild {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly stdin: Writable;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  ended = false;

  constructor(
    readonly id: number,
    private readonly helper: Helper,
  ) {
    super();
    this.stdin = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        helper.send(Kind.STDIN, id, chunk);
        done();
      },
      final: (done) => {
        helper.send(Kind.STDIN_END, id);
        done();
      },
    });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.ended) return false;
    this.helper.send(Kind.KILL, this.id, signal);
    return true;
  }

  /** The child ended (or never started: `error`). */
  end(code: number | null, signal: NodeJS.Signals | null, error?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.exitCode = code;
    this.signalCode = signal;
    this.stdout.end();
    this.stderr.end();
    if (error) this.emit('error', error);
    this.emit('exit', code, signal);
    // 'close' after the output is read, as a ChildProcess's.
    let open = 2;
    const closed = () => {
      if (--open === 0) this.emit('close', code, signal);
    };
    // (Read to its end, or left: destroyed by a reader that stopped early.)
    for (const s of [this.stdout, this.stderr]) finished(s, closed);
    if (this.stderr.listenerCount('data') === 0) this.stderr.resume();
  }
}

class Helper {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly children = new Map<number, Child>();
  #next = 1;
  dead = false;

  constructor() {
    this.proc = spawn(process.execPath, nodeArgsFor(SPAWNER), { stdio: ['pipe', 'pipe', 'pipe'] });
    const reader = new FrameReader((kind, id, payload) => this.receive(kind, id, payload));
    this.proc.stdout.on('data', (d: Buffer) => reader.push(d));
    this.proc.stderr.resume();
    this.proc.stdin.on('error', () => {});
    this.proc.on('error', (err) => this.die(err));
    this.proc.on('close', () => this.die(new Error('the spawner process ended')));
    this.idle();
  }

  start(req: SpawnRequest): Child {
    const child = new Child(this.#next++, this);
    this.children.set(child.id, child);
    this.busy();
    this.send(Kind.START, child.id, JSON.stringify(req));
    return child;
  }

  send(kind: Kind, id: number, payload?: Uint8Array | string): void {
    if (!this.dead) this.proc.stdin.write(frame(kind, id, payload));
  }

  private receive(kind: Kind, id: number, payload: Buffer): void {
    const child = this.children.get(id);
    if (!child) return;
    switch (kind) {
      // (A reader that stopped early destroyed its stream: the rest is dropped.)
      case Kind.STDOUT:
        if (!child.stdout.destroyed) child.stdout.write(payload);
        return;
      case Kind.STDERR:
        if (!child.stderr.destroyed) child.stderr.write(payload);
        return;
      case Kind.EXIT: {
        const { code, signal } = JSON.parse(payload.toString('utf8')) as { code: number | null; signal: NodeJS.Signals | null };
        this.forget(id);
        child.end(code, signal);
        return;
      }
      case Kind.FAILED: {
        const { message } = JSON.parse(payload.toString('utf8')) as { message: string };
        this.forget(id);
        child.end(null, null, new Error(message));
        return;
      }
    }
  }

  private forget(id: number): void {
    this.children.delete(id);
    if (this.children.size === 0) this.idle();
  }

  /** While it carries no child, the spawner does not keep this process alive. */
  private idle(): void {
    this.proc.unref();
    (this.proc.stdout as unknown as { unref?: () => void }).unref?.();
    (this.proc.stderr as unknown as { unref?: () => void }).unref?.();
    (this.proc.stdin as unknown as { unref?: () => void }).unref?.();
  }

  private busy(): void {
    this.proc.ref();
    (this.proc.stdout as unknown as { ref?: () => void }).ref?.();
    (this.proc.stdin as unknown as { ref?: () => void }).ref?.();
  }

  private die(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    if (helper === this) helper = undefined;
    for (const c of this.children.values()) c.end(null, null, new Error(`${err.message} before its child did`));
    this.children.clear();
  }
}

let helper: Helper | undefined;

/** Starts `command` through this thread's spawner (started now if need be). */
export function spawnSmall(command: string, args: string[], env: NodeJS.ProcessEnv): SpawnedChild {
  helper ??= new Helper();
  return helper.start({ command, args, env });
}

/**
 * Starts this thread's spawner now, when it will soon be needed: its start (a Node process,
 * tens of milliseconds) then overlaps what the thread does meanwhile. It keeps nothing alive.
 */
export function warmSpawner(): void {
  helper ??= new Helper();
}

/** The pid of this thread's spawner, when one runs (what an operator sees in `ps`; the tests kill it). */
export function spawnerPid(): number | undefined {
  return helper?.proc.pid;
}
