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
  bash "$ROOT/scripts/install-deps.sh" --tests
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
# timed CMD...: the wall time of one run of CMD in seconds (its output discarded).
timed() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}'; }
# min A B: the smaller of two figures, A may be empty.
min() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "" || b < a) print b; else print a }'; }

# start_radosgw: a throwaway radosgw (scripts/radosgw.sh) under $work/rgw, its endpoint and
# credentials in the environment, URL and SIGN (curl's signing options) set, HOME moved into
# $work (no ~/.aws, restic cache or rclone config of the machine's). stop_radosgw stops it.
start_radosgw() {
  rgw=$work/rgw
  bash "$ROOT/scripts/radosgw.sh" start "$rgw" >/dev/null
  source "$rgw/env"
  URL=$AWS_ENDPOINT_URL
  export HOME=$work/home
  mkdir -p "$HOME"
  SIGN=(--aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY"
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
}
stop_radosgw() { bash "$ROOT/scripts/radosgw.sh" stop "$work/rgw" >/dev/null 2>&1 || true; }

# append_every_tenth DIR: appends 1 to 4 KiB of random bytes to every tenth file of DIR (in
# name order), the day-2 change of the backup benchmarks; `appended` is the byte count.
append_every_tenth() {
  appended=0
  local i=0 f n
  while IFS= read -r f; do
    i=$((i + 1))
    [ $((i % 10)) = 0 ] || continue
    n=$((1024 * (1 + i % 4)))
    head -c "$n" /dev/urandom >>"$f"
    appended=$((appended + n))
  done < <(find "$1" -type f | sort)
}

# Builds, then makes a scratch folder $work removed on exit.
setup() {
  ensure_built
  work=$(mktemp -d /var/tmp/stitch-bench.XXXXXX)
  trap 'rm -rf "$work"' EXIT
}

# mount_dir: $M, a mount point under $work; on exit it is unmounted (lazily, if still busy)
# before $work is removed. `drop` empties the page cache (root only).
mount_dir() {
  M=$work/mnt
  mkdir -p "$M"
  trap 'mountpoint -q "$M" && fusermount3 -uz "$M"; rm -rf "$work"' EXIT
}
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# umount_m: unmounts $M and waits (up to 5 s) until it is gone and its daemon has exited, so
# that the daemon's teardown does not overlap the next measurement.
umount_m() {
  local pid
  pid=$(pgrep -n -f -- "stitchfs .* $M( |\$)" || true)
  fusermount3 -u "$M"
  for _ in $(seq 100); do
    if ! mountpoint -q "$M" && { [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; }; then return 0; fi
    sleep 0.05
  done
}

# kept_chain_bench SCRIPT KEEP: what the scripts measuring bench/run.sh's chain share: root (they
# drop the page cache), the scratch folder, the chain (kept_chain KEEP), the mount point $M,
# a manifest cache of the run's own, and STITCHFS, `top` (the last day) and `big` (its
# 317 MiB file). SCRIPT names the script in the message.
kept_chain_bench() {
  [ "$(id -u)" = 0 ] || { echo "$1 drops the page cache: run it as root" >&2; exit 2; }
  setup
  kept_chain "$2"
  mount_dir
  export STITCH_CACHE_DIR=$work/cache
  STITCHFS=$BUILD/fs/stitchfs
  top=$data/store/day3
  big=store/logs/events/data.bin
}
# column_median COLUMN LINES: the median of field COLUMN of the non-empty LINES.
column_median() {
  printf '%s' "$2" | awk -v c="$1" 'NF {print $c}' | sort -g |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# kept_chain DIR: sets `data` to bench/run.sh's chain kept under DIR (scale 1, 3 days), built
# there when missing; DIR empty: under $work (after setup), gone on exit.
kept_chain() {
  local keep=${1:-$work/keep}
  data=$keep/run-s1-d3-v1
  [ -f "$data/done" ] || bash "$ROOT/bench/run.sh" --keep "$keep" --repeat 1 --no-peers >/dev/null
}
