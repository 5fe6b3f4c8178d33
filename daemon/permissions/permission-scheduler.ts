// When the permission sync runs (permission-sync.ts): a pass every quarter of
// settings.permissionSyncIntervalMs (each pass asks only about what is due), one after each
// repository sync pass (new private repositories get their readers at once), and on demand
// (an owner's POST, a member who just linked an account). Passes never overlap: a request
// while one runs joins it, or, when it asks about one member or repository, runs right
// after it.

import type { PermissionSyncOptions, PermissionSyncReport } from './permission-sync.ts';
import { syncPermissions } from './permission-sync.ts';

export interface PermissionSchedulerOptions extends Omit<PermissionSyncOptions, 'only' | 'force'> {
  /** Told of every pass that ends (metrics, audit). */
  onPass?: (report: PermissionSyncReport) => void;
}

export interface PermissionSyncStatus {
  running: boolean;
  /** The last pass that ended, with what it did. */
  last?: PermissionSyncReport;
  /** ISO 8601 of the next scheduled pass, while the schedule runs. */
  nextAt?: string;
}

export class PermissionSyncScheduler {
  readonly #options: PermissionSchedulerOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<PermissionSyncReport> | undefined;
  #last: PermissionSyncReport | undefined;
  #nextAt: number | undefined;
  #stopped = true;

  constructor(options: PermissionSchedulerOptions) {
    this.#options = options;
  }

  /** Starts with a pass now, then one every quarter interval (from the end of the last). */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    void this.#tick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#nextAt = undefined;
    await this.#running?.catch(() => {});
  }

  /** A pass now: everything due, or (`only`, `force`) what is asked, whenever it was last synced. */
  async runNow(request: Pick<PermissionSyncOptions, 'only' | 'force'> = {}): Promise<PermissionSyncReport> {
    const targeted = request.only !== undefined || request.force === true;
    if (!targeted && this.#running) return this.#running;
    while (this.#running) await this.#running.catch(() => {});
    const pass = syncPermissions({ ...this.#options, ...request }).then((report) => {
      this.#last = report;
      this.#options.onPass?.(report);
      return report;
    });
    const tracked: Promise<PermissionSyncReport> = pass.finally(() => {
      if (this.#running === tracked) this.#running = undefined;
    });
    this.#running = tracked;
    return pass;
  }

  status(): PermissionSyncStatus {
    return {
      running: this.#running !== undefined,
      ...(this.#last ? { last: this.#last } : {}),
      ...(this.#nextAt === undefined ? {} : { nextAt: new Date(this.#nextAt).toISOString() }),
    };
  }

  async #tick(): Promise<void> {
    try {
      await this.runNow();
    } catch (err) {
      this.#options.log.error({ err: (err as Error).message }, 'permission sync pass failed');
    }
    if (this.#stopped) return;
    const every = Math.max(1000, Math.floor(this.#options.config.settings.permissionSyncIntervalMs / 4));
    this.#nextAt = Date.now() + every;
    this.#timer = setTimeout(() => void this.#tick(), every);
    this.#timer.unref();
  }
}
