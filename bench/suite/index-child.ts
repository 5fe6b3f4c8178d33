// Fallback child for the build measurement when /usr/bin/time is missing: builds the index
// in this process and prints its peak RSS, so that it is the indexer's, not the parent's.
//   node --import tsx bench/suite/index-child.ts CORPUS DATA_DIR [--no-symbols] [--branches GLOB]
import { parseArgs } from 'node:util';
import { indexLocal } from '../../daemon/sync/local-repos.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'no-symbols': { type: 'boolean' }, branches: { type: 'string' } } });
const [corpus, dataDir] = positionals;
if (!corpus || !dataDir || positionals.length !== 2) throw new Error('usage: index-child.ts CORPUS DATA_DIR [--no-symbols] [--branches GLOB]');
const revisions = values.branches === undefined ? {} : { revisions: { branches: [values.branches], tags: [] } };
const summary = await indexLocal(corpus, { dataDir, symbols: values['no-symbols'] !== true, ...revisions });
process.stdout.write(`${JSON.stringify({ summary, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
