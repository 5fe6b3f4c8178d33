// Fallback child for the build measurement when /usr/bin/time is missing: builds the index
// in this process and prints its peak RSS, so that it is the indexer's, not the parent's.
//   node --import tsx bench/index-child.ts CORPUS DATA_DIR [--no-symbols]
import { indexLocal } from '../daemon/repos/local-repos.ts';

const [corpus, dataDir, flag] = process.argv.slice(2);
if (!corpus || !dataDir || (flag !== undefined && flag !== '--no-symbols')) throw new Error('usage: index-child.ts CORPUS DATA_DIR [--no-symbols]');
const summary = await indexLocal(corpus, { dataDir, symbols: flag !== '--no-symbols' });
process.stdout.write(JSON.stringify({ summary, maxRssKiB: process.resourceUsage().maxRSS }) + '\n');
