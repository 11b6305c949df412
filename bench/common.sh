# Helpers for the benchmark scripts (sourced).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
# STITCH_BENCH_BUILD=DIR: measure the binaries of that build folder as they are, not rebuilt
# (a build of another commit, to compare two builds with the same scripts and data).
[ -n "${STITCH_BENCH_BUILD:-}" ] && BUILD=$(cd "$STITCH_BENCH_BUILD" && pwd)
STITCH=$BUILD/cli/stitch
MAKE_FIXTURE=$BUILD/tests/make_fixture
export STITCH_NO_PROGRESS=1

ensure_built() {
  [ -z "${STITCH_BENCH_BUILD:-}" ] || return 0
  bash "$ROOT/scripts/install-deps.sh"
  bash "$ROOT/scripts/build.sh" "$BUILD"
}

# best_of N CMD...: runs CMD N times, prints the fastest wall time in seconds.
best_of() {
  local n=$1
  shift
  local best=""
  for _ in $(seq "$n"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    best=$(awk -v a="$best" -v b="$(awk -v x="$t0" -v y="$t1" 'BEGIN{print y-x}')" \
      'BEGIN{ if (a == "" || b < a) print b; else print a }')
  done
  echo "$best"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ printf "%.3f", a / b }'; }

# Builds, then makes a scratch folder $work removed on exit.
setup() {
  ensure_built
  work=$(mktemp -d /var/tmp/stitch-bench.XXXXXX)
  trap 'rm -rf "$work"' EXIT
}
