#!/usr/bin/env bash
# The soak test's readers of the store mount, one per process.
# `reader.sh reader N`: picks a backup (by folder name, latest, at/TIME or by-uuid/UUID), reads
# its uuid from the mount (user.stitchfs.uuid of its root), copies every file out of the mount
# once and compares the copy with the reference trees (cmp), then asks the oracle (oracle.awk)
# what that name held during the read: if nothing changed, every byte must be the reference's
# of that backup and no read may fail; if the backup was removed or replaced meanwhile, a file
# may fail (ENOENT, EIO) or be any one generation the name held, never anything else.
# `reader.sh walker N`: `find MOUNT -type f` and `ls -lR MOUNT` in turn; an error is allowed
# only on a backup that was removed or replaced during the walk.
ROLE=$1
WHO=$ROLE$2
source "$(dirname "$0")/common.sh"
trap 'exit 0' TERM INT
tmp=$W/tmp/$WHO
copy=${SOAK_SHM:-$W/tmp}/$WHO       # each file read from the mount lands here
sessions=0 files_ok=0 bytes_ok=0 wrong_files=0 wrong_bytes=0 eio_kept=0 eio_allowed=0
gen_switch=0 walks=0 entries=0 walk_errors_allowed=0 walk_errors_kept=0

pick() { local a=("$@"); [ $# -gt 0 ] && printf '%s' "${a[$((RANDOM % $#))]}"; }
errno_of() { sed -n 's/.*: \([A-Z][a-z].*\)$/\1/p' "$1" | head -1; }

# which_gen FILE REL: the uuid of a reference whose REL is exactly FILE's bytes, or nothing.
# (A reference still being made, UUID.tmp, is waited for: its backup may already be in the mount.)
which_gen() {
  local size r u pass
  size=$(stat -c %s "$1")
  for pass in 1 2; do
    for r in "$REFS"/*/tree; do
      u=$(basename "$(dirname "$r")")
      [[ "$u" == *.tmp ]] && continue
      [ -f "$r/$2" ] && [ "$(stat -c %s "$r/$2")" = "$size" ] && cmp -s "$1" "$r/$2" && { echo "$u"; return; }
    done
    [ "$pass" = 1 ] && settle "$(now_us)"
  done
}

# same_file REL U1 U...: whether backup U1's REL has the bytes of REL in one of the others.
same_file() {
  local rel=$1 u=$2 c
  shift 2
  for c in "$@"; do
    [ "$c" = "$u" ] && return 0
    [ -f "$REFS/$c/tree/$rel" ] && cmp -s "$REFS/$u/tree/$rel" "$REFS/$c/tree/$rel" && return 0
  done
  return 1
}

# whose REL U NAME: which backup REL's bytes (those of backup U's REL) come from, for messages:
# a generation of NAME if one has them (the store's earlier or later content under that name).
whose() {
  local g
  for g in $(awk -v n="$3" '$2 == "E" && ($4 == "add" || $4 == "repl") && $5 == n { print $6 }' "$EVENTS"); do
    same_file "$1" "$2" "$g" && { echo "$3's generation $g"; return; }
  done
  g=$(awk -v u="$2" '$2 == "E" && ($4 == "add" || $4 == "repl") && $6 == u { print $5; exit }' "$EVENTS")
  echo "backup $2${g:+ (folder $g)}, not of $3"
}

# read_all PATH CLAIM: copies every file of the backup at PATH and writes one line per file to
# $tmp.files: "REL ok UUID SIZE" (its bytes are that reference's), "REL none SIZE DIFFERING" (no
# reference matches), "REL err MESSAGE".
read_all() {
  local path=$1 claim=$2 rel rc size g n deadline
  : > "$tmp.files"
  deadline=$(($(now_us) + 90000000))
  { [ -f "$REFS/$claim/list" ] && sed -n 's/^f //p' "$REFS/$claim/list"; sed -n 's/^f //p' "$tmp.list"; } |
    awk '!seen[$0]++' > "$tmp.names"
  while IFS= read -r rel; do
    if stopped || [ "$(now_us)" -gt "$deadline" ]; then break; fi
    T 60 cat "$path/$rel" > "$copy" 2>"$tmp.err"
    rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
      fail hang "reading $path/$rel took more than 60 s"
      echo "$rel err timeout" >> "$tmp.files"
    elif [ "$rc" != 0 ]; then
      echo "$rel err $(errno_of "$tmp.err")" >> "$tmp.files"
    else
      size=$(stat -c %s "$copy")
      if [ -f "$REFS/$claim/tree/$rel" ] && cmp -s "$copy" "$REFS/$claim/tree/$rel"; then
        echo "$rel ok $claim $size" >> "$tmp.files"
      else
        g=$(which_gen "$copy" "$rel")
        if [ -n "$g" ]; then
          echo "$rel ok $g $size" >> "$tmp.files"
        else
          n=$size
          if [ -f "$REFS/$claim/tree/$rel" ]; then          # bytes that differ, and missing or extra
            n=$(($(stat -c %s "$REFS/$claim/tree/$rel") - size))
            n=$((${n#-} + $(cmp -l "$copy" "$REFS/$claim/tree/$rel" 2>/dev/null | wc -l)))
          fi
          echo "$rel none $size $n" >> "$tmp.files"
        fi
      fi
    fi
  done < "$tmp.names"
}

session() {
  local r kind key path list target="" claim claim_ts lrc t0 t1 o head state ename euuid ets
  local cands what files_bad ok_here bytes_here errs wrong wb switched changes flat msg
  r=$((RANDOM % 10))
  t0=$(now_us)
  if [ "$r" -lt 4 ]; then
    kind=name
    mapfile -t list < <(T 30 ls "$M" 2>/dev/null | grep -vx 'at\|by-uuid\|latest')
    key=$(pick "${list[@]}") || return 0
    path=$M/$key
  elif [ "$r" -lt 6 ]; then
    kind=latest key=- path=$M/latest
  elif [ "$r" -lt 8 ]; then
    kind=at
    mapfile -t list < <(T 30 ls "$M/at" 2>/dev/null)
    key=$(pick "${list[@]}") || return 0
    case $((RANDOM % 4)) in                   # at every precision, and just before a backup
      1) key=${key:0:10} ;;
      2) key=${key:0:13} ;;
      3) key=$(date -u -d "${key/T/ } UTC - 1 second" '+%FT%T') ;;
    esac
    path=$M/at/$key
  else
    kind=uuid
    mapfile -t list < <(T 30 ls "$M/by-uuid" 2>/dev/null)
    key=$(pick "${list[@]}") || return 0
    path=$M/by-uuid/$key
  fi
  what="$kind ${key#-}"
  if [ "$kind" != name ]; then
    target=$(T 30 readlink "$path" 2>/dev/null) || target=-
    target=${target##*/} target=${target%@*}  # NAME, ../NAME or .generations/NAME@GENERATION
  fi
  claim=$(T 30 getfattr --only-values -n user.stitchfs.uuid "$path/" 2>"$tmp.err") || claim=""
  claim_ts=$(T 30 getfattr --only-values -n user.stitchfs.timestamp "$path/" 2>/dev/null) || claim_ts=""
  T 30 find "$path/" -mindepth 1 -printf '%y %P\n' 2>"$tmp.lerr" | sort > "$tmp.list"
  lrc=${PIPESTATUS[0]}
  [ "$lrc" = 124 ] || [ "$lrc" = 137 ] && fail hang "listing $path/ took more than 30 s"
  if [ -n "$claim" ] && [ ! -f "$REFS/$claim/list" ]; then
    settle "$(now_us)"                          # a backup just made: its reference is coming
  fi
  read_all "$path" "${claim:-none}"
  t1=$(now_us)
  settle "$t1" || return 0
  o=$(oracle "$kind" "$key" $((t0 - GRACE_US)) "$t1")
  head=$(head -1 <<<"$o")
  read -r state ename euuid ets <<<"$head"
  cands=" $(awk '$1 == "cand" { printf "%s ", $3 }' <<<"$o")"
  changes=$(awk -v s="$START_US" '$1 == "change" { printf "%s %s %s +%.1fs..+%.1fs; ", $2, $3, $4, ($5 - s) / 1e6, ($6 - s) / 1e6 }' <<<"$o")
  flat=$(awk -v s="$START_US" '$1 == "lastflat" { printf "%s flattened in place at +%.1fs; ", $2, ($3 - s) / 1e6 }' <<<"$o")
  msg="$what (session $(rel "$t0")..$(rel "$t1"), mount says ${target:+-> $target, }uuid ${claim:-?} ts ${claim_ts:-?}; store: $head; ${changes}${flat}"
  sessions=$((sessions + 1))

  # Which backup the name leads to, and what the backup says it is.
  if [ "$state" = absent ] && { [ "$kind" = name ] || [ "$target" != - ] || [ -n "$claim" ]; }; then
    fail ghost "the mount shows a backup the store did not hold during the whole session: $msg"
  fi
  if [ "$kind" != name ] && [ "$state" != absent ] &&
     ! awk -v t="$target" '$1 == "cand" && $2 == t { f = 1 } END { exit !f }' <<<"$o"; then
    fail wrong_resolution "$kind ${key#-} leads to $target, where it never led in the store during the session: $msg"
    # The rest is judged against what the store held under the name it led to.
    [ "$target" = - ] && return 0
    o=$(oracle name "$target" $((t0 - GRACE_US)) "$t1")
    read -r state ename euuid ets <<<"$(head -1 <<<"$o")"
    cands=" $(awk '$1 == "cand" { printf "%s ", $3 }' <<<"$o")"
    msg="$msg; judged as $target: $(head -1 <<<"$o")"
    [ "$state" = absent ] && return 0
  fi
  if [ "$state" = stable ]; then
    if [ -z "$claim" ]; then
      fail eio_kept "the root of kept backup $ename gives no uuid ($(errno_of "$tmp.err")): $msg"
    elif [ "$claim" != "$euuid" ] || [ "$(ts_t "$claim_ts")" != "$ets" ]; then
      fail stale_identity "$ename is served as uuid $claim ts $claim_ts, the store holds $euuid ts $ets: $msg"
    elif [ "$lrc" != 0 ]; then
      fail eio_kept "listing kept backup $ename failed ($(errno_of "$tmp.lerr")): $msg"
    elif ! diff -q "$REFS/$euuid/list" "$tmp.list" >/dev/null; then
      fail wrong_listing "$ename lists other entries than its tree: $(diff "$REFS/$euuid/list" "$tmp.list" | grep '^[<>]' | head -3 | tr '\n' ' ') $msg"
    fi
  elif [ "$state" = unstable ] && [ -n "$claim" ] && [[ "$cands" != *" $claim "* ]]; then
    fail stale_identity "$what led to uuid $claim, which it never led to in the store during the session: $msg"
  fi

  # Every file: the bytes of the expected generation (or, if the backup changed, of one of them).
  ok_here=0 bytes_here=0 errs=0 wrong=0 wb=0 switched=0 files_bad=""
  while read -r rel res a b c; do
    case $res in
      ok)
        if { [ "$state" = stable ] && ! same_file "$rel" "$a" "$euuid"; } ||
           { [ "$state" != stable ] && ! same_file "$rel" "$a" $cands; }; then  # (split on purpose)
          wrong=$((wrong + 1)) wb=$((wb + b)) files_bad+="$rel (bytes of $(whose "$rel" "$a" "${ename:-${target:-$key}}")) "
        else
          ok_here=$((ok_here + 1)) bytes_here=$((bytes_here + b))
          [ "$a" != "$claim" ] && switched=$((switched + 1))
        fi ;;
      none) wrong=$((wrong + 1)) wb=$((wb + b)) files_bad+="$rel ($b bytes differ) " ;;
      err) errs=$((errs + 1)); [ "$errs" = 1 ] && files_bad+="$rel (error: $a${b:+ $b}${c:+ $c}) " ;;
    esac
  done < "$tmp.files"
  files_ok=$((files_ok + ok_here)) bytes_ok=$((bytes_ok + bytes_here)) gen_switch=$((gen_switch + switched))
  if [ "$wrong" -gt 0 ]; then
    wrong_files=$((wrong_files + wrong)) wrong_bytes=$((wrong_bytes + wb))
    fail wrong_bytes "$wrong files with wrong bytes, e.g. $(cut -c1-300 <<<"$files_bad"): $msg"
  fi
  if [ "$errs" -gt 0 ]; then
    if [ "$state" = stable ]; then
      eio_kept=$((eio_kept + errs))
      fail eio_kept "$errs of $(wc -l < "$tmp.files") files of kept backup $ename failed, e.g. $files_bad: $msg"
    else
      eio_allowed=$((eio_allowed + errs))
      note "allowed: $errs files failed, e.g. $files_bad: $msg"
    fi
  fi
  [ "$switched" -gt 0 ] && note "allowed: $switched files read from another generation than the root's: $msg"
  save_stats "sessions=$sessions" "files_ok=$files_ok" "bytes_ok=$bytes_ok" "wrong_files=$wrong_files" \
    "wrong_bytes=$wrong_bytes" "eio_kept=$eio_kept" "eio_allowed=$eio_allowed" "gen_switch=$gen_switch"
}

walk() {
  local how t0 t1 rc n line p name o shown=""
  if [ $((walks % 2)) = 0 ]; then how=find; else how="ls -lR"; fi
  t0=$(now_us)
  if [ "$how" = find ]; then
    n=$(T 300 find "$M" -type f 2>"$tmp.err" | wc -l); rc=${PIPESTATUS[0]}
  else
    n=$(T 300 ls -lR "$M" 2>"$tmp.err" | wc -l); rc=${PIPESTATUS[0]}
  fi
  t1=$(now_us)
  walks=$((walks + 1)) entries=$((entries + n))
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && fail hang "$how $M took more than 300 s"
  settle "$t1" || return 0
  while IFS= read -r line; do
    p=$(sed -n -e "s/^[^']*'\([^']*\)'.*/\1/p;t" -e 's/^[a-z]*: \([^:]*\): .*/\1/p' <<<"$line")
    p=${p#"$M"/}
    name=${p%%/*}
    [ -z "$name" ] && { fail walk_error "$how: $line"; continue; }
    [[ " $shown " == *" $name "* ]] && continue
    shown+=" $name"
    o=$(oracle name "$name" $((t0 - GRACE_US)) "$t1" | head -1)
    if [[ "$o" == stable* ]]; then
      walk_errors_kept=$((walk_errors_kept + 1))
      fail eio_kept "$how ($(rel "$t0")..$(rel "$t1")) on kept backup $name: $line (store: $o)"
    else
      walk_errors_allowed=$((walk_errors_allowed + 1))
      note "allowed: $how: $line (store: $o)"
    fi
  done < "$tmp.err"
  save_stats "walks=$walks" "walk_entries=$entries" "walk_errors_allowed=$walk_errors_allowed" \
    "walk_errors_kept=$walk_errors_kept"
}

while ! stopped; do
  if [ "$ROLE" = walker ]; then walk; else session; fi
done
