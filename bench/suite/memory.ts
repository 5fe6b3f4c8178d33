// The daemon's resident memory sampled while `trawl bench` loads it (phase-http.ts): VmRSS
// and its split into RssAnon and RssFile (runtime/resident-memory.ts says what each is).

import { rssOf, type RssSample } from '../../daemon/runtime/resident-memory.ts';

export type { RssSample };

/** Samples a process's resident memory every `everyMs` until stopped; stop() returns the samples. */
export function sampleRss(pid: number | undefined, everyMs = 100): { stop: () => RssSample[] } {
  const samples: RssSample[] = [];
  const take = () => {
    const v = rssOf(pid);
    if (v !== null) samples.push(v);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** Samples resident memory for `ms` milliseconds. */
export async function sampleRssFor(pid: number | undefined, ms: number, everyMs = 100): Promise<RssSample[]> {
  const s = sampleRss(pid, everyMs);
  await new Promise((r) => setTimeout(r, ms));
  return s.stop();
}
