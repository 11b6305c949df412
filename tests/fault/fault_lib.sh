# Helpers shared by the fault-injection scripts (sourced): checking that the LD_PRELOAD library
# loads, running a command under it, comparing trees, the small source trees they back up, and
# for the S3 ones a radosgw with s3_fault_proxy in front of it and requests held there.

# need_shim SHIM: exits 77 (skipped) unless the library loads and writes its count file.
need_shim() {
  local shim=$1 probe
  probe=$(mktemp)
  rm -f "$probe"
  if [ ! -f "$shim" ] ||
    ! LD_PRELOAD=$shim STITCH_FAULT_DEST=/nonexistent STITCH_FAULT_COUNT_FILE=$probe /bin/true ||
    ! grep -q '^injected 0$' "$probe" 2>/dev/null; then
    echo "SKIP: the fault-injection library $shim cannot be loaded"
    rm -f "$probe"
    exit 77
  fi
  rm -f "$probe"
}

# read_counts FILE: the count file of a run into the associative array COUNTS (kind -> n).
declare -A COUNTS=()
read_counts() {
  local k v
  COUNTS=()
  [ -f "$1" ] || return 0
  while read -r k v; do COUNTS[$k]=$v; done <"$1"
}

# listing DIR: names, types, modes, sizes, link counts and symlink targets, sorted. Folder sizes
# depend on the filesystem and are left out.
listing() {
  (cd "$1" && find . -mindepth 1 \( -type d -printf '%P d %m\n' \) -o -printf '%P %y %m %s %n %l\n' |
    LC_ALL=C sort)
}

# same_tree A B: byte-exact contents (symlinks not followed) and the same listing.
same_tree() {
  diff -r --no-dereference "$1" "$2" >/dev/null 2>&1 && [ "$(listing "$1")" = "$(listing "$2")" ]
}

# fingerprint DIR...: one checksum of the contents, modes, owners, times and hard links of trees.
fingerprint() {
  local sum
  read -r sum _ < <(tar -C / --sort=name --numeric-owner -cf - "${@#/}" 2>/dev/null | md5sum)
  echo "$sum"
}

# make_state0 DIR FULL: a small ClickHouse-like tree: a growing log and its rotated copy, a DDL
# file and a hard link to it, a part holding a duplicate file, a symlink, an empty folder; with
# FULL=1 also more DDL files, an empty file and 8 more data files (about 20 files in all).
make_state0() {
  local s=$1 full=$2 i
  mkdir -p "$s/logs" "$s/meta" "$s/db/part_1" "$s/empty/deeper"
  head -c 40000 /dev/urandom >"$s/logs/app.log"
  printf 'rotated log line\n' >"$s/logs/app.log.1"
  printf 'CREATE TABLE t1 (x UInt8) ENGINE = Log;\n' >"$s/meta/t1.sql"
  ln "$s/meta/t1.sql" "$s/meta/t1.hardlink.sql"
  head -c 30000 /dev/urandom >"$s/db/part_1/data.bin"
  cp "$s/db/part_1/data.bin" "$s/db/part_1/copy.bin"
  chmod 600 "$s/db/part_1/copy.bin"
  printf '12345' >"$s/db/count.txt"
  ln -s ../logs/app.log "$s/db/latest.log"
  [ "$full" = 1 ] || return 0
  mkdir -p "$s/extra"
  for i in 2 3; do printf 'CREATE TABLE t%d (x UInt8) ENGINE = Log;\n' "$i" >"$s/meta/t$i.sql"; done
  printf 'columns format version: 1\n' >"$s/db/part_1/columns.txt"
  : >"$s/db/empty.bin"
  for ((i = 0; i < 8; i++)); do head -c $((1000 + i * 300)) /dev/urandom >"$s/extra/f$i.dat"; done
}

# next_state DIR STEP FULL: the changes between two backups: the log grows, a file is renamed,
# the hard-linked DDL grows, a new file appears (FULL: a new duplicate too); STEP 2 also rotates
# the log.
next_state() {
  local s=$1 step=$2 full=$3
  head -c 5000 /dev/urandom >>"$s/logs/app.log"
  mv "$s"/db/count*.txt "$s/db/count.$step.txt"
  printf 'ALTER TABLE t1 ADD COLUMN c%d String;\n' "$step" >>"$s/meta/t1.sql"
  printf 'new in step %d\n' "$step" >"$s/meta/new$step.txt"
  if [ "$step" = 2 ]; then
    mv "$s/logs/app.log" "$s/logs/app.log.1"
    head -c 3000 /dev/urandom >"$s/logs/app.log"
  fi
  [ "$full" != 1 ] || cp "$s/db/part_1/data.bin" "$s/db/dup.$step.bin"
}

# show_cmd WORD...: a command line, quoted for a shell.
show_cmd() {
  local v out=""
  for v in "$@"; do out+="$(printf '%q' "$v") "; done
  echo "${out% }"
}

# --- S3: a throwaway radosgw behind s3_fault_proxy --------------------------------------------
# s3_start RADOSGW_SH PROXY DIR: starts radosgw (its state in DIR/rgw) and s3_fault_proxy in front
# of it, whose rules are DIR/rules (see `faults`). Sets RGW_URL (radosgw itself), rules and
# proxy_pid; points AWS_ENDPOINT_URL at the proxy and HOME at DIR/home. False, saying which,
# if one does not start. The caller's cleanup calls s3_stop.
s3_start() {
  local rgw_sh=$1 proxy=$2 dir=$3 port=
  mkdir -p "$dir/rgw" "$dir/home"
  bash "$rgw_sh" start "$dir/rgw" >/dev/null || { echo "FAIL: radosgw did not start"; return 1; }
  # shellcheck disable=SC1091  # (Written by radosgw.sh: AWS_ENDPOINT_URL, the keys, the port.)
  source "$dir/rgw/env"
  RGW_URL=$AWS_ENDPOINT_URL
  rules=$dir/rules
  : >"$rules"
  "$proxy" -v 0 "127.0.0.1:$STITCH_RGW_PORT" "$rules" >"$dir/proxy.port" 2>"$dir/proxy.log" &
  proxy_pid=$!
  for _ in $(seq 100); do [ -s "$dir/proxy.port" ] && break; sleep 0.05; done
  port=$(cat "$dir/proxy.port" 2>/dev/null)
  [ -n "$port" ] || { echo "FAIL: s3_fault_proxy did not start"; return 1; }
  export AWS_ENDPOINT_URL=http://127.0.0.1:$port HOME=$dir/home
}
# s3_stop RADOSGW_SH DIR: stops what s3_start started (if it did).
s3_stop() {
  [ -z "${proxy_pid:-}" ] || kill "$proxy_pid" 2>/dev/null
  bash "$1" stop "$2/rgw" >/dev/null 2>&1
}
# s3_setup RADOSGW_SH PROXY: s3_start in a new folder $work, which goes at exit with all that
# runs there (a held command too); exits 77 (skipped) without radosgw, 1 if it does not start.
s3_setup() {
  command -v radosgw >/dev/null || { echo "SKIP: no radosgw"; exit 77; }
  s3_rgw_sh=$1
  work=$(mktemp -d)
  trap s3_cleanup EXIT
  s3_start "$1" "$2" "$work" || exit 1
}
# s3_script_start STITCH S3_FAULT_PROXY RADOSGW_SH: how an S3 fault script taking those three
# arguments starts: sets STITCH, PROXY and RGW, quiets progress, turns the caches off, sets T
# (seconds any command may take) and `started`, then starts radosgw and the proxy (s3_setup).
s3_script_start() {
  STITCH=$1 PROXY=$2 RGW=$3
  export STITCH_NO_PROGRESS=1 STITCH_CACHE_DIR=off
  T=20
  started=$SECONDS
  s3_setup "$RGW" "$PROXY"
}
s3_cleanup() {
  [ -z "$held_pid" ] || kill -9 "$(cat "$work/held.pid")" 2>/dev/null
  s3_stop "$s3_rgw_sh" "$work"
  rm -rf "$work"
}

# faults RULE...: the proxy's rules from now on (none: no faults). Each call re-arms them all
# (the proxy re-arms on any change; the generation line makes every call one).
rules_generation=0
faults() {
  rules_generation=$((rules_generation + 1))
  printf '%s\n' "# $rules_generation" "$@" >"$rules.new"
  mv "$rules.new" "$rules"
}
# s3api METHOD PATH: a signed request straight to radosgw (never through the proxy), ending
# within ${T:-60} seconds.
s3api() {
  curl -sf --max-time "${T:-60}" --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    -X "$1" "$RGW_URL/$2"
}
# keys PREFIX: the objects under stitch/PREFIX.
keys() {
  s3api GET "stitch?list-type=2&prefix=${1//\//%2F}" | grep -o '<Key>[^<]*</Key>' |
    sed 's/<[^>]*>//g'
}

# --- A request held at the proxy while the test acts (its `hold` action) ----------------------
# start_held CMD...: CMD in the background until the proxy holds its request; false (CMD
# killed) if CMD ended first or nothing was held within $T seconds. CMD runs in a subshell
# (held_pid), whose exit status is CMD's and whose report of CMD's death goes nowhere; its
# output is in $work/held.out.
held_pid=
start_held() {
  rm -f "$rules.held" "$rules.go" "$work/held.pid"
  ( "$@" >"$work/held.out" 2>&1 & echo $! >"$work/held.pid"; wait $! ) 2>/dev/null &
  held_pid=$!
  for _ in $(seq $((T * 20))); do
    [ -e "$rules.held" ] && return 0
    kill -0 "$held_pid" 2>/dev/null || break
    sleep 0.05
  done
  [ -e "$rules.held" ] && return 0
  await "$held_pid"
  sed 's/^/  /' "$work/held.out"
  false
}
# kill_held: kills CMD of start_held (SIGKILL) and waits for it.
kill_held() {
  kill -9 "$(cat "$work/held.pid")"
  await "$held_pid"
}
# release_held ANSWER: the held request answered ANSWER (503, 500 or 429; a client that retries
# sends it again, past a `hold 1` rule spent); sets held_rc to CMD's exit status once it ends.
release_held() {
  echo "$1" >"$rules.go.new" && mv "$rules.go.new" "$rules.go"
  await "$held_pid"
  held_rc=$?
  held_pid=
}
# await PID: PID's exit status, or 124 (PID killed) if it runs $T seconds more.
await() {
  for _ in $(seq $((T * 20))); do
    kill -0 "$1" 2>/dev/null || { wait "$1"; return; }
    sleep 0.05
  done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 124
}

# --- What stitch leaves in S3 (STITCH, T and work set by the caller) ---------------------------
# st ARG...: stitch, which must end within $T seconds (124 if it does not).
st() { timeout -k 1 "$T" "$STITCH" "$@"; }
# exact DEST TREE: DEST verifies, restores to exactly TREE, and `stitch cat DEST f` is TREE/f.
exact() {
  rm -rf "$work/restored"
  st verify "$1" >/dev/null 2>&1 && st restore "$1" "$work/restored" >/dev/null 2>&1 &&
    diff -r --no-dereference "$work/restored" "$2" >/dev/null &&
    st cat "$1" f 2>/dev/null | cmp -s - "$2/f"
}
# listed STORE NAME...: `stitch log STORE` succeeds and lists exactly NAME..., each a good backup.
listed() {
  local out
  out=$(st log "$1" 2>&1) || { echo "  $out"; return 1; }
  local store=$1
  shift
  local names
  names=$(awk 'NR > 1 { print $1 }' <<<"$out" | sort | paste -sd' ')
  [ "$names" = "$(printf '%s\n' "$@" | sort | paste -sd' ')" ] ||
    { echo "  stitch log $store: $out"; return 1; }
}
# not_a_backup DEST: stitch ls DEST says BACKUP_NOT_FOUND (exit 10).
not_a_backup() { st ls "$1" >/dev/null 2>&1; [ $? = 10 ]; }
# gone PREFIX: no object is left under stitch/PREFIX/.
gone() { [ -z "$(keys "$1/")" ] || { echo "  left: $(keys "$1/" | paste -sd' ')"; false; }; }
