// The targets for what an operator waits for, each the wall time of a whole `trawl`
// process (spawn to exit, Node's start-up included, the median of several runs). The run
// report (run-text.ts) shows each measured figure next to its target; nothing fails a run
// for missing one: a benchmark measures, its reader judges.

export const TARGETS = {
  /** `trawl --help`. */
  helpSeconds: 0.15,
  /** `trawl search LITERAL` on a ~66 MB index, in process. */
  searchSeconds: 0.15,
  /** `trawl sync` of a one-file change in a 190-file git repository. */
  syncOneFileSeconds: 0.4,
  /** `trawl sync` after a one-line change to one file of a Linux-sized git repository. */
  syncOneLineSeconds: 2,
  /** A git source of at least LARGE_SOURCE_BYTES, indexed end to end without symbols. */
  gitIndexMbPerSecond: 100,
};

/**
 * "Linux-sized", "a git source of ≥ 500 MB": the last two targets are about large sources
 * (on a small one, start-up dominates both), so a smaller corpus gets no verdict on them.
 */
export const LARGE_SOURCE_BYTES = 500e6;
