// A separate process that indexes a repository, for tests that kill it mid-run:
//   node --import tsx test/helpers/index-child.ts REPO DATA_DIR SHARD_TARGET_BYTES
import { indexLocal } from '../../daemon/sync/local-repos.ts';

const [repo, dataDir, target] = process.argv.slice(2);
await indexLocal(repo!, { dataDir: dataDir!, shardTargetBytes: Number(target), incremental: false, symbols: false, workers: 1 });
