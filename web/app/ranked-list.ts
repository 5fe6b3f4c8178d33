// The search page's result list, kept in the order the API ranks files: a stream sends
// them in shard order, each message ranked only in itself, so each file is inserted where
// it ranks among those on the page, by the searcher's own comparison (score, repository,
// path: daemon/search/rank-order.ts), which makes the final list the order POST
// /api/search gives the same files.
//
// Inserting above what the reader is looking at would push it down the screen, so the
// list keeps its place itself: it notes where one result on screen is (the focused one,
// else the first one in view) before inserting and scrolls by as much as it moved after.
// At the very top of the page nothing is held in place: there the reader is meant to see
// the best results, and a better one arriving goes first (the first results wait a moment
// for more before they are drawn, search-page.ts, so that this is rare). The browser's own anchoring is off
// on this page (style.css): not every browser has one, and their timing differs, so one
// mechanism adjusts, the same everywhere. (Chromium's alone keeps the place too, and does
// not add to this one: measured with test/web/web-results-order.test.ts.)

import { compareRanked, type RankKey } from '../../daemon/search/rank-order.ts';
import type { StreamedFile } from '../../daemon/search/types.ts';
import { clear } from './dom.ts';

interface Entry {
  key: RankKey;
  el: HTMLElement;
}

export class RankedList {
  /** The list's items, in display (rank) order. */
  private entries: Entry[] = [];

  constructor(readonly element: HTMLOListElement) {}

  get size(): number {
    return this.entries.length;
  }

  clear(): void {
    this.entries = [];
    clear(this.element);
  }

  /**
   * Inserts files at their ranked places (after those that compare equal, so ties keep the
   * order they came in, as the server's stable sort keeps them), renumbers the items'
   * data-index, and keeps the reader's place.
   */
  insert(files: readonly StreamedFile[], render: (f: StreamedFile, index: number) => HTMLElement): void {
    if (files.length === 0) return;
    const anchor = this.anchor();
    let lowest = this.entries.length;
    for (const f of files) {
      const key: RankKey = { score: f.score, repository: f.repository, path: f.fileName.text };
      const at = this.upperBound(key);
      const el = render(f, at);
      this.element.insertBefore(el, this.entries[at]?.el ?? null);
      this.entries.splice(at, 0, { key, el });
      lowest = Math.min(lowest, at);
    }
    // Every item from the first insertion on has a new index.
    for (let i = lowest; i < this.entries.length; i++) this.entries[i]!.el.dataset.index = String(i);
    if (anchor) {
      const moved = anchor.el.getBoundingClientRect().top - anchor.top;
      // 'instant': a smooth scroll would show the very movement this undoes.
      if (moved !== 0) window.scrollBy({ top: moved, behavior: 'instant' });
    }
  }

  /** The first place whose entry ranks below `key`. */
  private upperBound(key: RankKey): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareRanked(this.entries[mid]!.key, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The result whose place on screen must not change, and where it is: the focused one
   * when it is in view (keyboard moves, keyboard-shortcuts.ts), else, once the page is scrolled, the
   * first one in view (or the last, when the reader is below the list). None when the
   * page is at its top or the list is below the screen.
   */
  private anchor(): { el: HTMLElement; top: number } | undefined {
    if (this.entries.length === 0) return undefined;
    const active = document.activeElement;
    const focused = active instanceof Element ? active.closest('li') : null;
    if (focused && focused.parentElement === this.element) {
      const r = focused.getBoundingClientRect();
      if (r.bottom > 0 && r.top < window.innerHeight) return { el: focused, top: r.top };
    }
    if (window.scrollY <= 0) return undefined;
    // The items are stacked in order: the first whose bottom is below the top of the screen.
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.el.getBoundingClientRect().bottom > 0) hi = mid;
      else lo = mid + 1;
    }
    const el = this.entries[Math.min(lo, this.entries.length - 1)]!.el;
    const top = el.getBoundingClientRect().top;
    return top < window.innerHeight ? { el, top } : undefined;
  }
}
