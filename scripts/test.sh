#!/usr/bin/env bash
# The test suite: the house checks (types, Biome's formatter and linter, the size of the
# product's files), then every *.test.ts under test/ (grouped in folders by the part of
# trawl they test) with node:test, two files at a time.
#   npm test                         everything
#   npm test -- test/query           the files under a folder, or named files (no checks)
#   npm run check                    the house checks alone
set -euo pipefail
cd "$(dirname "$0")/.."
how="run one file: node --import tsx --test test/query/query-parser.test.ts  (or: npm test -- test/query)"
if [ $# -gt 0 ]; then
  mapfile -t files < <(find "$@" -name '*.test.ts' | sort)
else
  bash scripts/check.sh
  mapfile -t files < <(find test -name '*.test.ts' | sort)
fi
echo "# ${#files[@]} test files; $how"
status=0
node --import tsx --test --test-concurrency=2 --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=./scripts/slowest-test-files.mjs --test-reporter-destination=stdout "${files[@]}" || status=$?
# The transport conformance suite again on the machine's own Node when it is another one
# (set-up may have installed a newer Node for trawl): uWebSockets.js has native builds for
# some Node versions only, and this is where its half of the suite runs.
conformance=test/http/transport-conformance.test.ts
if [ $# -eq 0 ] || printf '%s\n' "${files[@]}" | grep -qx "$conformance"; then
  other=""
  IFS=: read -ra dirs <<< "$PATH"
  for d in "${dirs[@]}"; do
    case "$d" in */node_modules/.bin | */.trawl/node/bin | "") continue ;; esac
    if [ -x "$d/node" ]; then other="$d/node"; break; fi
  done
  if [ -n "$other" ] && [ "$("$other" --version)" != "$(node --version)" ]; then
    echo "# $conformance on $("$other" --version) ($other)"
    "$other" --import tsx --test "$conformance" || status=$?
  fi
fi
echo "# $how"
exit $status
