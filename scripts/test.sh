#!/usr/bin/env bash
# The whole test suite: type-check, then every *.test.ts under test/ with node:test.
# Node 20 expands no globs for --test, so the file list is built here.
set -euo pipefail
cd "$(dirname "$0")/.."
node_modules/.bin/tsc --noEmit -p .
node_modules/.bin/tsc --noEmit -p web
mapfile -t files < <(find test -name '*.test.ts' | sort)
exec node --import tsx --test --test-concurrency=2 "${files[@]}"
