// The spawner: a small process that starts other processes for trawl (spawner.ts says
// why) and carries their stdin, stdout, stderr and exit over its own stdin and stdout, in
// frames (spawn-frames.ts). It ends when its stdin closes (the process that started it
// is gone), killing what it started.

import { spawn, type ChildProcess } from 'node:child_process';
import { frame, FrameReader, Kind, type SpawnRequest } from './spawn-frames.ts';

const children = new Map<number, ChildProcess>();
const out = process.stdout;

/** Writes a frame; the child's output is paused while the pipe to trawl is full. */
function send(kind: Kind, id: number, payload?: Uint8Array | string, paused?: ChildProcess): void {
  if (!out.write(frame(kind, id, payload)) && paused) {
    paused.stdout?.pause();
    paused.stderr?.pause();
    out.once('drain', () => {
      paused.stdout?.resume();
      paused.stderr?.resume();
    });
  }
}

function start(id: number, req: SpawnRequest): void {
  let child: ChildProcess;
  try {
    child = spawn(req.command, req.args, { env: req.env, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    send(Kind.FAILED, id, JSON.stringify({ message: (err as Error).message }));
    return;
  }
  children.set(id, child);
  let failed = false;
  child.on('error', (err) => {
    failed = true;
    children.delete(id);
    send(Kind.FAILED, id, JSON.stringify({ message: err.message }));
  });
  child.stdin!.on('error', () => {}); // a child that exits before reading all its input
  child.stdout!.on('data', (d: Buffer) => send(Kind.STDOUT, id, d, child));
  child.stderr!.on('data', (d: Buffer) => send(Kind.STDERR, id, d, child));
  child.on('close', (code, signal) => {
    children.delete(id);
    if (!failed) send(Kind.EXIT, id, JSON.stringify({ code, signal }));
  });
}

const reader = new FrameReader((kind, id, payload) => {
  switch (kind) {
    case Kind.START:
      start(id, JSON.parse(payload.toString('utf8')) as SpawnRequest);
      return;
    case Kind.STDIN:
      children.get(id)?.stdin?.write(Buffer.from(payload));
      return;
    case Kind.STDIN_END:
      children.get(id)?.stdin?.end();
      return;
    case Kind.KILL:
      children.get(id)?.kill(payload.toString('utf8') as NodeJS.Signals);
      return;
  }
});

process.stdin.on('data', (d: Buffer) => reader.push(d));
process.stdin.on('end', () => {
  for (const c of children.values()) c.kill('SIGKILL');
  process.exit(0);
});
out.on('error', () => process.exit(0));
