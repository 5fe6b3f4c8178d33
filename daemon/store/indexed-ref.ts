// A revision as the store records it (a repository's record, what the watches last saw):
// its own file, so that the store's parts import it rather than each other.

/** One indexed revision: a branch or tag name and the commit it pointed at when indexed. */
export interface IndexedRef {
  name: string;
  kind: 'branch' | 'tag';
  commit: string;
}
