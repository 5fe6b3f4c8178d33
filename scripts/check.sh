#!/usr/bin/env bash
# The house checks, before the tests (npm test) or alone (npm run check):
#   - the types, of the daemon and of the web UI;
#   - Biome (biome.json): the formatter's layout and the linter's rules, among them no
#     function over 150 lines and none with more than 5 positional parameters;
#   - no product file over 800 lines as written (Biome's own count leaves out comments and
#     blank lines; a reader reads those too). The AssemblyScript core is counted here as
#     well: Biome does not parse it.
# `node_modules/.bin/biome check --write .` formats and applies the safe fixes.
set -euo pipefail
cd "$(dirname "$0")/.."
node_modules/.bin/tsc --noEmit -p .
node_modules/.bin/tsc --noEmit -p web
node_modules/.bin/biome check --reporter=summary . || node_modules/.bin/biome check --max-diagnostics=30 .
long=$(git ls-files 'daemon/*' 'core/*' 'web/*' 'bench/suite/*' 'scripts/*' 'bin/*' | grep -E '\.(ts|js|mjs)$' | xargs wc -l | awk '$2 != "total" && $1 > 800 { print "  " $2 ": " $1 " lines" }')
if [ -n "$long" ]; then
  echo "product files over 800 lines (split them by concern):" >&2
  echo "$long" >&2
  exit 1
fi
