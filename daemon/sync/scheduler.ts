// Runs sync passes on a schedule (settings.reindexIntervalMs, default hourly) and on
// demand, one at a time, and collects the index files retired by each pass once no search
// holds them. The daemon owns one; `trawl sync` runs a single pass without it.

import { collectIndexGarbage } from '../index/garbage.ts';
import { silentLogger } from '../runtime/logger.ts';
import { mergeCompoundShards, syncOnce, type SyncOptions, type SyncReport } from './sync.ts';

export interface SchedulerOptions extends SyncOptions {
  /** Default: config.settings.reindexIntervalMs. */
  intervalMs?: number;
  /** Files a running search may still open (Searcher.inUse), kept by the garbage collector. */
  inUse?: () => ReadonlySet<string>;
  onPass?: (report: SyncReport) => void;
}

export class SyncScheduler {
  private readonly options: SchedulerOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SyncReport> | undefined;
  /** A pass was asked for (requestPass) while one ran: another follows it. */
  private again = false;
  private stopped = true;
  passes = 0;

  constructor(options: SchedulerOptions) {
    this.options = options;
  }

  /** Starts with a pass now, then one every interval (measured from the end of the last). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.tick();
  }

  /** A pass now: joins the running one when there is one, so two never overlap. */
  runNow(): Promise<SyncReport> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.requestPass();
      }
    });
    return this.running;
  }

  /**
   * A pass as soon as possible, for news the running pass may have listed too early (a
   * webhook saying a repository was created, renamed or deleted): now when none runs,
   * else one more right after it (however many ask meanwhile). Its failure is logged.
   */
  requestPass(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    void this.runNow().catch((err: Error) => (this.options.log ?? silentLogger).error({ err: err.message }, 'sync pass failed'));
  }

  /** Stops the schedule and waits for a running pass to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  private async tick(): Promise<void> {
    try {
      await this.runNow();
    } catch (err) {
      (this.options.log ?? silentLogger).error({ err: (err as Error).message }, 'sync pass failed');
    }
    if (this.stopped) return;
    const interval = this.options.intervalMs ?? this.options.config.settings.reindexIntervalMs;
    this.timer = setTimeout(() => void this.tick(), interval);
    this.timer.unref();
  }

  private async pass(): Promise<SyncReport> {
    const report = await syncOnce(this.options);
    this.passes++;
    await mergeCompoundShards(this.options);
    collectIndexGarbage(this.options.dataDir, this.options.inUse?.() ?? new Set());
    this.options.onSynced?.();
    this.options.onPass?.(report);
    return report;
  }
}
