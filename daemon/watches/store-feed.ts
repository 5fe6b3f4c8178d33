// The feed of a process that does not record the changes itself: in a cluster the watches
// are checked on one node, and every node's listeners (SSE streams, tool sessions) are on
// their own node. Each node reads the new events of the watches its listeners follow from
// the shared store, every FEED_POLL_MS, and passes them on (the node that records them
// too, so that every listener hears each change once, the same way).
//
// One cursor for all watches: the greatest event id read so far. A round reads the greatest
// id now, then the events of the watches listened to up to it, and moves the cursor there;
// a listener that joined since hears what was recorded after the last round (it may have
// been recorded just before it joined: a stream's client is told of it, not of less).

import type { Logger } from '../runtime/logger.ts';
import type { Store } from '../store/store.ts';
import type { WatchFeed } from './watch-feed.ts';

/** How often the store is read for new events. */
export const FEED_POLL_MS = 250;

/** Starts passing the store's new events on to `feed`; the function returned stops it. */
export function feedFromStore(store: Pick<Store, 'watches'>, feed: WatchFeed, log?: Logger): () => void {
  let cursor: number | undefined;
  let running = false;
  const round = async (): Promise<void> => {
    const top = await store.watches.lastEventId();
    if (cursor === undefined || top < cursor) {
      // (Started now; or the events were pruned or the store replaced: from here on.)
      cursor = top;
      return;
    }
    if (top === cursor) return;
    const ids = feed.watched();
    if (ids.length > 0) for (const e of await store.watches.eventsIn(ids, cursor, top)) feed.publish(e);
    cursor = top;
  };
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    round()
      .catch((err: Error) => log?.warn({ err: err.message }, "reading the watches' new changes from the store failed: tried again shortly"))
      .finally(() => {
        running = false;
      });
  }, FEED_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
