#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian/Ubuntu machine and for an existing checkout:
#   1. apt-installs the system packages the build and the tests need, only when missing;
#   2. runs `npm ci` when node_modules does not match package-lock.json;
#   3. builds the WebAssembly core when its sources are newer than the build, and the
#      native heap-trim addon (native/heap-trim) likewise;
#   4. compiles the TypeScript into dist/ when the sources changed since (scripts/compile.js).
# Quick (a few seconds) when nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'setup: %s\n' "$*" >&2; }

# --- 1. system packages -------------------------------------------------------------
# libkrb5-dev: nodegit's build runs krb5-config. universal-ctags: symbol extraction.
# ripgrep: the agreement tests compare results with `rg`. git: repositories in tests.
# g++/make/python3: node-gyp builds of nodegit, re2 and mmap-io.
# redis-server: the rate-limit counters' Redis backend; its tests start private instances
# (test/helpers/redis.ts), so the service itself need not run.
# postgresql: the cluster's store (daemon/store/pg-store.ts); its tests likewise start private
# servers from /usr/lib/postgresql/<version>/bin (test/helpers/postgres.ts).
# curl: the README's quick tour calls the daemon with it (test/docs/readme-tour.test.ts).
# chromium + fonts-dejavu-core: the web UI's end-to-end tests drive Debian's Chromium with
# playwright-core (which never downloads a browser); the font makes text render the same.
need=(libkrb5-dev universal-ctags ripgrep git g++ make python3 redis-server postgresql chromium fonts-dejavu-core curl)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing system packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- 2. node modules ----------------------------------------------------------------
# npm ci rebuilds nodegit from source (~13 min on 2 cores), so it runs only when the
# lock file changed since the last successful install.
stamp=node_modules/.trawl-setup-stamp
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "npm ci (native modules compile from source; nodegit takes ~13 minutes)"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi

# --- 3. the WebAssembly core --------------------------------------------------------
out=core/build/trawl-core.wasm
if [ ! -f "$out" ] || [ -n "$(find core/assembly asconfig.json -newer "$out" -print -quit)" ]; then
  log "building the WebAssembly core"
  npm run --silent build:wasm
fi

# The heap-trim addon (a few seconds with node-gyp, which npm provides to its scripts): the
# daemon gives freed C heap pages back once its searches have gone quiet.
addon=native/heap-trim/build/Release/heap_trim.node
if [ ! -f "$addon" ] || [ -n "$(find native/heap-trim -maxdepth 1 -newer "$addon" -type f -print -quit)" ]; then
  log "building the native heap-trim addon"
  npm run --silent build:native
fi

# --- 4. the compiled JavaScript ------------------------------------------------------
# bin/trawl.js and the worker threads load dist/; without it (or when it is older than the
# sources) they run the sources through tsx, which costs ~1.5 s at every start.
node scripts/compile.js

log "ready"
