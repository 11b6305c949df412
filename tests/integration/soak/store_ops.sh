#!/usr/bin/env bash
# The soak test's store writers, one per process: `store_ops.sh writer` makes a daily backup
# chain (plus a second, noon backup every other day) and the reference tree of each backup;
# `store_ops.sh pruner` prunes the store so that kept backups are flattened in place;
# `store_ops.sh replacer` swaps a backup folder for a different backup under the same name.
# Every change is serialized by the store lock and recorded in the events file (common.sh).
# Environment: W STITCH STITCHFS START_US, KEEP_LAST KEEP_DAILY PRUNE_EVERY REPLACE_EVERY PACE.
ROLE=$1
WHO=$ROLE
source "$(dirname "$0")/common.sh"
source "$HERE/tree.sh"
trap 'exit 0' TERM INT

# pace SECONDS: waits between operations (not a synchronisation), returning early on stop.
pace() {
  local end=$(($(now_us) + $(awk -v s="$1" 'BEGIN { printf "%d", s * 1000000 }')))
  while ! stopped && [ "$(now_us)" -lt "$end" ]; do sleep 0.2; done
}

# ---- writer --------------------------------------------------------------------------------
made=0 failed_ops=0 seq=0
# backup_one NAME "YYYY-MM-DD hh:mm:ss" BASE: backs up the source tree as NAME, keeps its reference.
backup_one() {
  local name=$1 ts=$2 base=$3 id out rc uuid
  rm -rf "$W/pending"
  cp -a "$W/src" "$W/pending"
  store_lock || return 1
  [ -n "$base" ] && [ ! -f "$STORE/$base/.backup" ] && base=""
  id=w$((++seq))
  event B "$id" add "$name" "?" "$(ts_t "$ts")"
  out=$(T 600 "$STITCH" backup "$W/src" "$STORE/$name" ${base:+--base "$STORE/$base"} \
          --timestamp "$ts" --json 2>"$W/log/writer.err")
  rc=$?
  uuid=$(json_field uuid <<<"$out")
  if [ "$rc" = 0 ] && [ -n "$uuid" ]; then
    make_ref "$uuid" "$W/pending"
    event E "$id" add "$name" "$uuid" "$(ts_t "$ts")"
    made=$((made + 1))
    note "backup $name uuid $uuid ts $ts base ${base:--}"
  else
    event E "$id" fail "$name"
    failed_ops=$((failed_ops + 1))
    fail op_failed "stitch backup $name (base ${base:-none}) exited $rc: $(tail -2 "$W/log/writer.err")"
  fi
  store_unlock
  [ "$rc" = 0 ]
}

# Removes the reference trees of backups that left the store more than 150 s ago (a reader
# session reads for at most 90 s).
gc_refs() {
  awk -v lim=$(($(now_us) - 150000000)) '
    $2 == "E" && ($4 == "add" || $4 == "repl") { if ($5 in cur) dead[cur[$5]] = $1; cur[$5] = $6; delete dead[$6] }
    $2 == "E" && ($4 == "del" || $4 == "fail") { if ($5 in cur) dead[cur[$5]] = $1; delete cur[$5] }
    END { for (u in dead) if (dead[u] < lim && u != "-") print u }' "$EVENTS" |
    while read -r u; do rm -rf "${REFS:?}/$u"; done
}

writer() {
  local day=0 prev="" name date
  tree_init "$W/src"
  while ! stopped; do
    day=$((day + 1))
    [ "$day" -gt 1 ] && tree_day "$W/src" "$day"
    name=$(printf 'd%05d' "$day")
    date=$(date -u -d "2026-01-01 + $((day - 1)) days" '+%F')
    backup_one "$name" "$date 03:00:00" "$prev" && prev=$name
    if [ $((day % 2)) = 0 ] && ! stopped; then
      tree_noon "$W/src" "$day"
      backup_one "$name-noon" "$date 12:00:00" "$name"
    fi
    [ $((day % 10)) = 0 ] && gc_refs
    save_stats "backups=$made" "op_failures=$failed_ops" "days=$day"
    pace "$PACE"
  done
  save_stats "backups=$made" "op_failures=$failed_ops" "days=$day"
}

# ---- pruner --------------------------------------------------------------------------------
# names ACTION < PRUNE_JSON: the backups a prune plan gives that action.
names() { grep -o "\"action\":\"$1\",\"backup\":\"[^\"]*\"" | cut -d'"' -f8; }

pruner() {
  local n=0 removed=0 flattened=0 failed_ops=0 plan out rc i b rm_list fl_list op
  while ! stopped; do
    pace "$PRUNE_EVERY"
    stopped && break
    store_lock || continue
    plan=$(T 120 "$STITCH" prune "$STORE" --keep-last "$KEEP_LAST" --keep-daily "$KEEP_DAILY" --dry-run --json 2>&1)
    mapfile -t rm_list < <(names remove <<<"$plan")
    mapfile -t fl_list < <(names flatten <<<"$plan")
    if [ ${#rm_list[@]} = 0 ]; then store_unlock; continue; fi
    n=$((n + 1))
    for i in "${!rm_list[@]}"; do event B "p$n.r$i" del "${rm_list[$i]}"; done
    for i in "${!fl_list[@]}"; do event B "p$n.f$i" flat "${fl_list[$i]}"; done
    out=$(T 900 "$STITCH" prune "$STORE" --keep-last "$KEEP_LAST" --keep-daily "$KEEP_DAILY" --json 2>"$W/log/pruner.err")
    rc=$?
    for i in "${!fl_list[@]}"; do event E "p$n.f$i" flat "${fl_list[$i]}"; done
    for i in "${!rm_list[@]}"; do
      op=del
      [ -f "$STORE/${rm_list[$i]}/.backup" ] && op=none      # not removed after all
      event E "p$n.r$i" "$op" "${rm_list[$i]}"
    done
    note "prune $n (exit $rc): removed ${rm_list[*]}; flattened in place ${fl_list[*]:-nothing}"
    if [ "$rc" != 0 ]; then
      failed_ops=$((failed_ops + 1))
      fail op_failed "stitch prune exited $rc: $(tail -2 "$W/log/pruner.err")"
    fi
    [ "$(names remove <<<"$out" | sort)" = "$(printf '%s\n' "${rm_list[@]}" | sort)" ] ||
      note "prune $n removed other backups than its dry run planned: $out"
    removed=$((removed + ${#rm_list[@]}))
    flattened=$((flattened + ${#fl_list[@]}))
    for b in "$STORE"/*/; do                   # every kept backup still opens, with its chain
      out=$(T 120 "$STITCH" info "$b" 2>&1 >/dev/null) ||
        fail store_damaged "after prune $n, $(basename "$b") does not open: $out"
    done
    store_unlock
    save_stats "prunes=$n" "removed=$removed" "flattened=$flattened" "op_failures=$failed_ops"
  done
  save_stats "prunes=$n" "removed=$removed" "flattened=$flattened" "op_failures=$failed_ops"
}

# ---- replacer ------------------------------------------------------------------------------
# exchange A B: swaps two folders atomically (renameat2 RENAME_EXCHANGE through python3).
exchange() {
  python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) != 0:
    sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))' "$1" "$2"
}

replacer() {
  local g=0 failed_ops=0 d n info base x newts out rc u2 tmp old method hour
  local -A uuid ts child
  local cands
  while ! stopped; do
    pace "$REPLACE_EVERY"
    stopped && break
    store_lock || continue
    uuid=() ts=() child=() cands=()
    for d in "$STORE"/*/; do
      n=$(basename "$d")
      [ -f "$d/.backup" ] || continue
      info=$(T 60 "$STITCH" info "$d" --json 2>/dev/null) || continue
      uuid[$n]=$(json_field uuid <<<"$info")
      ts[$n]=$(json_field timestamp <<<"$info")
      base=$(json_field base_backup <<<"$info")
      base=${base#File(\'}; base=${base%\')}
      [ -n "$base" ] && child[$(basename "$base")]=1
    done
    for n in "${!uuid[@]}"; do                 # only a backup that is no other's base
      hour=${ts[$n]:11:2}
      [ -z "${child[$n]:-}" ] && [ "$((10#$hour))" -lt 20 ] && [ -d "$REFS/${uuid[$n]}" ] && cands+=("$n")
    done
    if [ ${#cands[@]} = 0 ]; then store_unlock; continue; fi
    x=${cands[$((RANDOM % ${#cands[@]}))]}
    g=$((g + 1))
    hour=${ts[$x]:11:2}
    newts=$(printf '%s %02d:%02d:%02d' "${ts[$x]:0:10}" $((10#$hour + 2)) $((g % 60)) $((RANDOM % 60)))
    tree_variant "$REFS/${uuid[$x]}/tree" "$W/variant" "$g"
    tmp=$STORE/.soak-replacement-$x
    rm -rf "$tmp"
    out=$(T 600 "$STITCH" backup "$W/variant" "$tmp" --timestamp "$newts" --json 2>"$W/log/replacer.err")
    rc=$?
    u2=$(json_field uuid <<<"$out")
    if [ "$rc" != 0 ] || [ -z "$u2" ]; then
      failed_ops=$((failed_ops + 1))
      fail op_failed "stitch backup of replacement $g for $x exited $rc: $(tail -2 "$W/log/replacer.err")"
      rm -rf "$tmp" "$W/variant"
      store_unlock
      continue
    fi
    make_ref "$u2" "$W/variant"
    # An exchange is atomic; two renames leave the name absent for a moment (links then lead
    # to an older backup), which the events say ("gap") for the oracle.
    method=rename
    [ $((g % 2)) = 1 ] && command -v python3 >/dev/null && method=exchange
    event B "r$g" repl "$x" "$u2" "$(ts_t "$newts")" "$([ "$method" = rename ] && echo gap)"
    if [ "$method" = exchange ]; then
      old=$tmp
      exchange "$tmp" "$STORE/$x" || { method=rename; old=$STORE/.soak-old-$x; mv "$STORE/$x" "$old" && mv "$tmp" "$STORE/$x"; }
    else
      old=$STORE/.soak-old-$x
      mv "$STORE/$x" "$old" && mv "$tmp" "$STORE/$x"
    fi
    event E "r$g" repl "$x" "$u2" "$(ts_t "$newts")" "$([ "$method" = rename ] && echo gap)"
    rm -rf "$old"
    note "replacement $g ($method): $x was ${uuid[$x]} at ${ts[$x]}, now $u2 at $newts"
    store_unlock
    save_stats "replacements=$g" "op_failures=$failed_ops"
  done
  save_stats "replacements=$g" "op_failures=$failed_ops"
}

case $ROLE in
  writer) writer ;;
  pruner) pruner ;;
  replacer) replacer ;;
  *) echo "store_ops.sh: unknown role $ROLE" >&2; exit 2 ;;
esac
