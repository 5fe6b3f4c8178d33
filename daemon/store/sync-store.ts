// The Store that the rest of trawl holds, over a synchronous one (StoreSync: the SQLite
// store, whose driver answers at once). Every method answers with a promise, and
// `atomically` takes an asynchronous function: one transaction at a time is open on the
// store's connection, and while it is, the calls made inside it (AsyncLocalStorage tells
// them apart) run at once, in it, while every other call waits for it to end, so that
// another request's write neither joins it nor reads what it has not committed.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Promised, Store, StoreSync } from './store.ts';

/** How a synchronous store opens and ends a transaction on its connection. */
export interface TransactionControl {
  begin(): void;
  commit(): void;
  rollback(): void;
}

export function promisedStore(sync: StoreSync, tx: TransactionControl): Store {
  return new Adapter(sync, tx).store;
}

class Adapter {
  readonly store: Store;
  /** Ends when the open transaction does; undefined when none is open. */
  #open: Promise<void> | undefined;
  /**
   * The open transaction's token, which its calls carry (#inside): a call that a finished
   * transaction left running (a write not awaited) carries an older token, and so waits
   * rather than joining the next transaction.
   */
  #token: object | undefined;
  readonly #inside = new AsyncLocalStorage<object>();

  constructor(
    sync: StoreSync,
    private readonly tx: TransactionControl,
  ) {
    const store = promised(sync, (call) => this.#call(call)) as unknown as Record<string | symbol, unknown>;
    // atomically is the adapter's own: the synchronous one takes a synchronous function.
    this.store = new Proxy(store, {
      get: (target, prop, receiver) => (prop === 'atomically' ? this.#atomically : Reflect.get(target, prop, receiver)),
    }) as unknown as Store;
  }

  /** One call of the synchronous store: now, unless a transaction it is not part of is open. */
  #call<T>(call: () => T): Promise<T> {
    if (this.#open !== undefined && !this.#isInside()) return this.#callLater(call);
    try {
      return Promise.resolve(call());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async #callLater<T>(call: () => T): Promise<T> {
    // The check and the call are in one synchronous step after each wake-up: another
    // transaction may have opened between the end of the one awaited and this turn.
    while (this.#open !== undefined && !this.#isInside()) await this.#open;
    return call();
  }

  #isInside(): boolean {
    return this.#token !== undefined && this.#inside.getStore() === this.#token;
  }

  readonly #atomically = async <T>(fn: () => Promise<T>): Promise<T> => {
    // Nested: the inner call joins the outer transaction.
    if (this.#isInside()) return fn();
    // Checked and taken in one synchronous step (see #callLater).
    while (this.#open !== undefined) await this.#open;
    let ended!: () => void;
    this.#open = new Promise<void>((resolve) => (ended = resolve));
    const token = {};
    this.#token = token;
    try {
      this.tx.begin();
      let result: T;
      try {
        result = await this.#inside.run(token, fn);
      } catch (err) {
        this.tx.rollback();
        throw err;
      }
      try {
        this.tx.commit();
      } catch (err) {
        // A commit that fails (a full disk) leaves nothing half-written: rolled back.
        this.tx.rollback();
        throw err;
      }
      return result;
    } finally {
      this.#open = undefined;
      this.#token = undefined;
      ended();
    }
  };
}

/**
 * `target` with each method's calls going through `call` and answering with a promise;
 * objects of methods (oauth, audit) likewise. Each wrapper is made once.
 */
function promised<T extends object>(target: T, call: <R>(fn: () => R) => Promise<R>): Promised<T> {
  const wrapped = new Map<string | symbol, unknown>();
  return new Proxy(target, {
    get(t, prop) {
      const known = wrapped.get(prop);
      if (known !== undefined) return known;
      const value = Reflect.get(t, prop, t) as unknown;
      let out: unknown = value;
      if (typeof value === 'function') out = (...args: unknown[]) => call(() => (value as (...a: unknown[]) => unknown).apply(t, args));
      else if (typeof value === 'object' && value !== null) out = promised(value, call);
      wrapped.set(prop, out);
      return out;
    },
  }) as unknown as Promised<T>;
}
