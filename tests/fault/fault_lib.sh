# Helpers shared by the fault-injection scripts (sourced): checking that the LD_PRELOAD library
# loads, running a command under it, comparing trees, and the small source trees they back up.

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
