#!/usr/bin/env bash
# Fetches the standard large corpus: the Linux 6.1 source tree, from Debian's
# linux-source-6.1 package (≈1.3 GB, ≈78k files once extracted).
#   scripts/fetch-linux.sh [DEST]      default DEST: corpus/linux-6.1 (git-ignored)
# Prints the corpus directory on stdout. Idempotent: an existing extraction is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-corpus/linux-6.1}
if [ -f "$dest/.trawl-corpus-complete" ]; then echo "$dest"; exit 0; fi
if ! ls /usr/src/linux-source-6.1.tar.* >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "fetch-linux: installing linux-source-6.1 (Debian package)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends linux-source-6.1 >/dev/null
fi
tarball=$(ls /usr/src/linux-source-6.1.tar.* | head -1)
# Extract into a temporary directory and rename, so a half-extracted tree is never taken
# for the corpus.
tmp="$dest.partial"
rm -rf "$tmp"; mkdir -p "$tmp"
echo "fetch-linux: extracting $tarball" >&2
tar -xf "$tarball" -C "$tmp" --strip-components=1
touch "$tmp/.trawl-corpus-complete"
rm -rf "$dest"; mv "$tmp" "$dest"
echo "$dest"
