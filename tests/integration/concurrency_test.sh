#!/usr/bin/env bash
# A concurrency checker in the style of Jepsen's: writers (full and incremental backups on
# whatever backup is newest), pruners, flattens and readers run at once on one store, for a set
# time, a quarter of the writes and prunes killed with SIGKILL at a random moment. Every
# operation and its outcome is recorded; at the end:
#   - every backup whose `stitch backup` exited 0 either verifies and restores to exactly the
#     source it was made from, or is gone because a prune started after it finished;
#   - every `.backup` left in the store verifies (nothing opens as a half backup, and no backup
#     a kept one needs is gone);
#   - every flatten that exited 0 restores to its backup's source;
#   - no read that exited 0 gave other bytes than the source (readers compare as they go).
# Run on a local store and on S3 (a throwaway radosgw).
# Usage: concurrency_test.sh STITCH RADOSGW_SH [--long]
#   STITCHFS_CONCURRENCY_SECONDS=N  seconds of load per store (default 20; --long: 600)
#   STITCHFS_CONCURRENCY_STORES='local s3'  the stores to check
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
STITCH=$1
RGW=$2
SECS=${STITCHFS_CONCURRENCY_SECONDS:-20}
[ "${3:-}" = --long ] && SECS=${STITCHFS_CONCURRENCY_SECONDS:-600}
STORES=${STITCHFS_CONCURRENCY_STORES:-local s3}
export STITCH_NO_PROGRESS=1 STITCH_S3_MAX_ATTEMPTS=3
W=$(mktemp -d)
export HOME=$W/home STITCH_CACHE_DIR=$W/cache
mkdir -p "$HOME"
cleanup() {
  jobs -p | xargs -r kill -9 2>/dev/null
  bash "$RGW" stop "$W/rgw" >/dev/null 2>&1
  rm -rf "$W"
}
trap cleanup EXIT

# --- Source states g0..g5: an append-only log, files added, rewritten and removed ---------------
mkdir -p "$W/src/g0/logs" "$W/src/g0/parts"
head -c 3000000 /dev/urandom >"$W/src/g0/logs/big.log"
head -c 200000 /dev/urandom >"$W/src/g0/parts/p0.bin"
echo "CREATE TABLE t (x UInt8) ENGINE = Log" >"$W/src/g0/t.sql"
for g in 1 2 3 4 5; do
  cp -a "$W/src/g$((g - 1))" "$W/src/g$g"
  head -c $((g * 150000)) /dev/urandom >>"$W/src/g$g/logs/big.log"
  head -c 100000 /dev/urandom >"$W/src/g$g/parts/p$g.bin"
  rm -f "$W/src/g$g/parts/p$((g - 2)).bin"
  echo "-- version $g" >>"$W/src/g$g/t.sql"
done

# op KIND ARGS...: one record line: kind, start, end, exit status, what it was about.
record() { printf '%s\n' "$*" >>"$W/ops.log"; }
now() { date +%s.%N; }
# run_maybe_killed CMD...: runs CMD; a quarter of the time SIGKILLed after 0.05..0.8 s.
run_maybe_killed() {
  if [ $((RANDOM % 4)) = 0 ]; then
    timeout -s KILL "0.$((RANDOM % 75 + 5))" "$@"
  else
    timeout -s KILL 120 "$@"
  fi
}

# The store's backups now: the names of those with a .backup.
list_backups() {  # list_backups STORE
  "$STITCH" log "$1" --json 2>/dev/null | grep -o '"name":"[^"]*","path":"[^"]*","timestamp"' |
    sed 's/"name":"\([^"]*\)".*/\1/'
}
pick() { local a=("$@"); [ ${#a[@]} -gt 0 ] && echo "${a[RANDOM % ${#a[@]}]}"; }

writer() {  # writer STORE ID
  local st=$1 id=$2 n=0 g name base args rc t0
  while [ "$(date +%s)" -lt "$DEADLINE" ]; do
    n=$((n + 1))
    g=$((RANDOM % 6))
    name=d$id-$n
    base=""
    [ $((RANDOM % 5)) = 0 ] || base=$(list_backups "$st" | tail -1)
    args=()
    [ -z "$base" ] || args=(--base "$st/$base")
    t0=$(now)
    run_maybe_killed "$STITCH" backup "$W/src/g$g" "$st/$name" "${args[@]}" >/dev/null 2>"$W/err/$name"
    rc=$?
    record backup "$t0" "$(now)" "$rc" "$name" "g$g" "${base:--}"
  done
}

pruner() {  # pruner STORE
  local st=$1 keep rc t0
  while [ "$(date +%s)" -lt "$DEADLINE" ]; do
    keep=$((RANDOM % 3 + 2))
    t0=$(now)
    run_maybe_killed "$STITCH" prune "$st" --keep-last "$keep" >/dev/null 2>>"$W/err/prune"
    rc=$?
    record prune "$t0" "$(now)" "$rc" "keep$keep"
    sleep 0.$((RANDOM % 5))
  done
}

flattener() {  # flattener STORE
  local st=$1 n=0 b rc t0
  while [ "$(date +%s)" -lt "$DEADLINE" ]; do
    n=$((n + 1))
    b=$(pick $(list_backups "$st")) || { sleep 0.2; continue; }
    t0=$(now)
    run_maybe_killed "$STITCH" flatten "$st/$b" "$W/flat/$STORE_KIND-f$n" >/dev/null 2>>"$W/err/flatten"
    rc=$?
    record flatten "$t0" "$(now)" "$rc" "$STORE_KIND-f$n" "$b"
  done
}

# A reader restores a backup and, if that exits 0, compares it with the source it was made
# from: a mismatch is a failure at once (the record of the backup's source is read from ops.log).
reader() {  # reader STORE
  local st=$1 n=0 b g rc t0 out
  while [ "$(date +%s)" -lt "$DEADLINE" ]; do
    n=$((n + 1))
    b=$(pick $(list_backups "$st")) || { sleep 0.2; continue; }
    g=$(awk -v b="$b" '$1 == "backup" && $5 == b { print $6 }' "$W/ops.log")
    out=$W/read/$n
    t0=$(now)
    timeout -s KILL 120 "$STITCH" restore "$st/$b" "$out" >/dev/null 2>>"$W/err/read"
    rc=$?
    local same=-
    if [ "$rc" = 0 ] && [ -n "$g" ]; then
      if diff -r "$out" "$W/src/$g" >/dev/null; then same=same; else same=WRONG; fi
    fi
    record read "$t0" "$(now)" "$rc" "$b" "${g:--}" "$same"
    rm -rf "$out"
  done
}

# explain STORE NAME: what a failed check needs to be understood later (a race seen once in a
# while): what verify and info say of the backup, its writer's errors, and the operations that
# named it or happened while it was written.
explain() {
  local st=$1 name=$2
  echo "  --- $name: stitch verify"
  "$STITCH" verify "$st/$name" 2>&1 | head -20 | sed 's/^/    /'
  echo "  --- $name: stitch info"
  "$STITCH" info "$st/$name" 2>&1 | head -20 | sed 's/^/    /'
  echo "  --- $name: its writer's stderr"
  head -20 "$W/err/$name" 2>/dev/null | sed 's/^/    /'
  echo "  --- operations naming it, and prunes and flattens (kind start end exit what...)"
  awk -v n="$name" '$5 == n || $7 == n || $6 == n || $1 == "prune" || $1 == "flatten"' \
    "$W/ops.log" | sort -k2,2n | head -80 | sed 's/^/    /'
  echo "  --- the store now"
  "$STITCH" log "$st" 2>&1 | head -30 | sed 's/^/    /'
  tail -30 "$W/err/prune" 2>/dev/null | sed 's/^/    prune: /'
}

# --- One run of the load on STORE, then the checks ------------------------------------------
check_store() {  # check_store KIND STORE
  STORE_KIND=$1
  local st=$2
  : >"$W/ops.log"
  mkdir -p "$W/err" "$W/read" "$W/flat" "$W/restored"
  DEADLINE=$(($(date +%s) + SECS))
  local pids=()
  writer "$st" 1 & pids+=($!)
  writer "$st" 2 & pids+=($!)
  pruner "$st" & pids+=($!)
  pruner "$st" & pids+=($!)
  flattener "$st" & pids+=($!)
  reader "$st" & pids+=($!)
  wait "${pids[@]}"
  local ops kills
  ops=$(wc -l <"$W/ops.log")
  kills=$(awk '$4 == 137' "$W/ops.log" | wc -l)
  echo "$STORE_KIND: $ops operations in $SECS s, $kills killed; exit statuses by kind:"
  awk '{ c[$1 " exit " $4]++ } END { for (k in c) printf "  %-20s %d\n", k, c[k] }' "$W/ops.log" | sort
  check "$STORE_KIND: some backups succeeded" [ "$(awk '$1 == "backup" && $4 == 0' "$W/ops.log" | wc -l)" -gt 0 ]
  check "$STORE_KIND: some prunes succeeded" [ "$(awk '$1 == "prune" && $4 == 0' "$W/ops.log" | wc -l)" -gt 0 ]
  check "$STORE_KIND: every read that exited 0 gave the source's bytes" \
    bash -c "! awk '\$1 == \"read\" && \$7 == \"WRONG\"' '$W/ops.log' | grep -q ."
  # Every successful backup: present and exact, or pruned by a prune that ended after it did
  # (one that started earlier may have listed the store after it finished).
  local line kind t0 t1 rc name g base lost=0 exact=0 pruned=0
  while read -r kind t0 t1 rc name g base; do
    [ "$kind" = backup ] && [ "$rc" = 0 ] || continue
    if list_backups "$st" | grep -qx "$name"; then
      rm -rf "$W/restored/x"
      if "$STITCH" restore "$st/$name" "$W/restored/x" >/dev/null 2>&1 &&
        diff -r "$W/restored/x" "$W/src/$g" >/dev/null; then
        exact=$((exact + 1))
      else
        bad "$STORE_KIND: backup $name (exit 0, from $g on ${base}) does not restore exactly"
        explain "$st" "$name"
      fi
    elif awk -v t="$t1" '$1 == "prune" && $3 > t { f = 1 } END { exit !f }' "$W/ops.log"; then
      pruned=$((pruned + 1))
    else
      lost=$((lost + 1))
      bad "$STORE_KIND: backup $name (exit 0) is gone, and no prune started after it"
    fi
  done <"$W/ops.log"
  echo "$STORE_KIND: successful backups: $exact present and exact, $pruned pruned later, $lost lost"
  # Every backup left opens whole.
  local b n=0
  for b in $(list_backups "$st"); do
    n=$((n + 1))
    if "$STITCH" verify "$st/$b" >/dev/null 2>&1; then ok; else
      bad "$STORE_KIND: $b (left in the store) verifies"
      explain "$st" "$b"
    fi
  done
  check "$STORE_KIND: stitch log lists every backup it finds without error" \
    bash -c "'$STITCH' log '$st' >/dev/null 2>&1"
  # Every successful flatten restores to its backup's source.
  local f src
  while read -r kind t0 t1 rc f b; do
    [ "$kind" = flatten ] && [ "$rc" = 0 ] || continue
    src=$(awk -v b="$b" '$1 == "backup" && $5 == b { print $6 }' "$W/ops.log")
    rm -rf "$W/restored/f"
    check "$STORE_KIND: flatten $f of $b restores to $src" bash -c \
      "'$STITCH' restore '$W/flat/$f' '$W/restored/f' >/dev/null 2>&1 && diff -r '$W/restored/f' '$W/src/$src' >/dev/null"
  done <"$W/ops.log"
  echo "$STORE_KIND: $n backups left in the store, all checked"
}

for kind in $STORES; do
  case $kind in
    local) check_store local "$W/store" ;;
    s3)
      mkdir -p "$W/rgw"
      if bash "$RGW" start "$W/rgw" >/dev/null; then
        source "$W/rgw/env"
        check_store s3 s3://stitch/cc
      else
        bad "radosgw did not start"
      fi
      ;;
  esac
done
finish
