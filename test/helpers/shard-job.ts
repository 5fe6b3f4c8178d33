// The repository record a test's ShardJob names: one repository, `r` unless given, public,
// neither archived nor a fork, its default branch HEAD (each test overrides what it is about).

import type { ShardRepoMeta } from '../../daemon/index/shard-format.ts';

export function jobRepo(source: string, over: Partial<ShardRepoMeta> = {}): ShardRepoMeta {
  return {
    name: 'r',
    id: 1,
    codeHostType: 'genericGitHost',
    source,
    kind: 'directory',
    branch: 'HEAD',
    commit: '',
    remoteUrl: '',
    archived: false,
    fork: false,
    visibility: 'public',
    ...over,
  };
}
