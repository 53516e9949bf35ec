#!/usr/bin/env bash
# npm-ci.sh SOURCE_DIR DEST_DIR: installs the packages SOURCE_DIR/package-lock.json
# pins into DEST_DIR/node_modules (a build dir; the source tree stays clean),
# then touches DEST_DIR/node_modules/.kbench-installed for CMake. Run by the
# build (CMakeLists.txt). npm's cache (~/.npm) keeps every package it has
# fetched, so later builds need no network (--prefer-offline). On failure:
# one line on stderr; npm's own output is in DEST_DIR/npm-ci.log.
set -uo pipefail
source_dir=$1
dest_dir=$2
lock=$source_dir/package-lock.json
if ! command -v npm >/dev/null; then
  echo "npm-ci: npm not found, needed for $lock (scripts/install-deps.sh installs nodejs and npm)" >&2
  exit 1
fi
mkdir -p "$dest_dir"
cp "$source_dir/package.json" "$lock" "$dest_dir/" || exit 1
log=$dest_dir/npm-ci.log
if ! (cd "$dest_dir" && npm ci --prefer-offline --no-audit --no-fund --ignore-scripts --loglevel=error \
      --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=10000) >"$log" 2>&1; then
  reason=$(grep -m 1 -E 'npm (error|ERR!) (code|network|request|[A-Za-z]+ to)' "$log" | sed -E 's/^npm (error|ERR!) //')
  echo "npm-ci: cannot install the packages of $lock${reason:+ ($reason)}: is the npm registry reachable, or are they all in npm's cache (~/.npm)? npm's output: $log" >&2
  exit 1
fi
touch "$dest_dir/node_modules/.kbench-installed"
