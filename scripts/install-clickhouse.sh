#!/usr/bin/env bash
# Installs the real ClickHouse the tests run against: ClickHouse 26.7 as a library (libchdb.so),
# from the npm package chdb at a pinned version, driven from Node.js. It goes to a cache folder
# outside the source tree ($STITCH_TEST_CACHE, default ~/.cache/stitchfs-tests) and is reused
# when present. Prints the folder of the chdb package (what tests/clickhouse/chsql.js loads).
# Usage: scripts/install-clickhouse.sh [--quiet]
set -euo pipefail
CHDB_VERSION=3.4.0          # ClickHouse 26.7.2 inside
CHDB_LIB_VERSION=26.7.3-stable.1
cache=${STITCH_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stitchfs-tests}
dir=$cache/chdb-$CHDB_VERSION
module=$dir/node_modules/chdb
say() { [ "${1:-}" = --quiet ] || echo "$@" >&2; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  say "installing: nodejs npm"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
installed() {
  [ -f "$dir/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so" ] &&
    grep -q "\"version\": \"$CHDB_VERSION\"" "$module/package.json" 2>/dev/null
}
mkdir -p "$cache"
exec 9>"$cache/.install.lock"
flock 9  # Two tests started at once install once.
if ! installed; then
  say "installing chdb $CHDB_VERSION (ClickHouse 26.7, about 550 MB) into $dir"
  tmp=$(mktemp -d "$cache/.install.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && echo '{"private": true}' > package.json &&
    npm install --no-audit --no-fund --loglevel=error \
      "chdb@$CHDB_VERSION" "@chdb/lib-linux-x64-gnu@$CHDB_LIB_VERSION" >/dev/null)
  rm -rf "$dir" && mv "$tmp" "$dir"
  trap - EXIT
fi
installed || { echo "install-clickhouse.sh: chdb did not install into $dir" >&2; exit 1; }
echo "$module"
