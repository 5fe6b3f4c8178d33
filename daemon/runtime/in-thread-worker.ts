// A worker that runs in the thread that starts it: the same messages over a MessageChannel
// instead of a thread boundary. For a short command on a small index, where starting a
// thread (its own copy of the modules: docs/design.md, "Compiled at install, TypeScript in
// development") costs more than the work it would take.
// What it gives up: the work blocks this thread while it runs (a timer set to cancel it
// fires only between two messages), and a crash in it is this thread's crash.

import { EventEmitter } from 'node:events';
import { MessageChannel, type MessagePort, type TransferListItem } from 'node:worker_threads';

/** The part of node's Worker that the pools use. */
export interface WorkerLike {
  postMessage(message: unknown, transfer?: readonly TransferListItem[]): void;
  // biome-ignore lint/suspicious/noExplicitAny: as node:worker_threads' Worker declares it, so that a Worker is one
  on(event: 'message', listener: (message: any) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'exit', listener: (code: number) => void): this;
  unref(): void;
  terminate(): Promise<number>;
}

export class InThreadWorker extends EventEmitter implements WorkerLike {
  readonly #channel = new MessageChannel();
  #ended = false;

  /** `serve` attaches the worker's handler to its end of the channel (it may load its module first). */
  constructor(serve: (port: MessagePort) => void | Promise<void>) {
    super();
    this.#channel.port1.on('message', (message) => this.emit('message', message));
    void (async () => serve(this.#channel.port2))().catch((err: unknown) => {
      if (!this.#ended) this.emit('error', err instanceof Error ? err : new Error(String(err)));
    });
  }

  postMessage(message: unknown, transfer?: readonly TransferListItem[]): void {
    this.#channel.port1.postMessage(message, transfer);
  }

  /** Lets the process exit while the channel is open (both ends keep the loop alive). */
  unref(): void {
    this.#channel.port1.unref();
    this.#channel.port2.unref();
  }

  async terminate(): Promise<number> {
    if (!this.#ended) {
      this.#ended = true;
      this.#channel.port1.close();
      this.emit('exit', 0);
    }
    return 0;
  }
}
