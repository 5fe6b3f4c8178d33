// The commit records of the indexed histories (commit-records.ts) as the searches hold them:
// each file read and decompressed once, and kept while it is the same file (its inode, size
// and modification time), for both searches that need them: type:commit matches them
// (commit-search.ts), type:diff joins its records' commits to them (diff-search.ts). A file
// that cannot be read is remembered as such until it changes, so a damaged one is not read
// again by every query; the next update of the history makes it again.

import { statSync } from 'node:fs';
import { type CommitRecord, type CommitRecords, readCommitRecords } from './commit-records.ts';

interface Held {
  stamp: string;
  records: CommitRecords | undefined;
}

export class CommitCatalog {
  private readonly held = new Map<string, Held>();
  private readonly ids = new WeakMap<CommitRecords, ReadonlyMap<string, CommitRecord>>();

  /** The records at `path`, the same object while the file is unchanged; undefined when there are none or they are unreadable. */
  records(path: string): CommitRecords | undefined {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st === undefined) {
      this.held.delete(path);
      return undefined;
    }
    const stamp = `${st.ino}/${st.size}/${st.mtimeMs}`;
    const known = this.held.get(path);
    if (known?.stamp === stamp) return known.records;
    let records: CommitRecords | undefined;
    try {
      records = readCommitRecords(path);
    } catch {
      records = undefined; // damaged, of another version, refused: made again by the next update
    }
    this.held.set(path, { stamp, records });
    return records;
  }

  /** The records by commit id. */
  byId(records: CommitRecords): ReadonlyMap<string, CommitRecord> {
    let map = this.ids.get(records);
    if (map === undefined) {
      map = new Map(records.commits.map((c) => [c.id, c]));
      this.ids.set(records, map);
    }
    return map;
  }
}
