# The soak test's source trees (sourced): a ClickHouse-like tree that changes every "day" the
# way real data does (growing logs, rotations, new and merged parts, renames, duplicates, a
# growing and a rewritten MB-sized file), and the different tree an in-place replacement puts
# under an existing backup's name. About 80-110 files and 5-11 MB.
# shellcheck shell=bash

rand_file() { head -c "$2" /dev/urandom > "$1"; }          # rand_file PATH BYTES
log_lines() {                                              # log_lines PATH DAY COUNT WORD
  local i
  for ((i = 0; i < $3; i++)); do printf 'day %d line %d %s query_id=%d rows=%d\n' "$2" "$i" "$4" "$RANDOM" "$RANDOM"; done >> "$1"
}
new_part() {                                               # new_part TABLE_DIR NAME
  local p=$1/$2
  mkdir -p "$p"
  rand_file "$p/data.bin" $((8192 + RANDOM % 57344))
  rand_file "$p/data.mrk2" $((64 + RANDOM % 960))
  printf 'columns format version: 1\n2 columns:\n`x` UInt64\n`s` String\n' > "$p/columns.txt"
  printf '%d\n' "$RANDOM" > "$p/count.txt"
}

# tree_init DIR: the first day's tree.
tree_init() {
  local s=$1 i
  mkdir -p "$s/logs" "$s/metadata/db1" "$s/metadata/db2" "$s/data/db1/events" "$s/data/db2/hits" \
    "$s/big" "$s/dups" "$s/store/empty/deeper"
  for l in app query error part trace http; do log_lines "$s/logs/$l.log" 0 40 init; done
  ln -s app.log "$s/logs/current"
  for i in 1 2 3 4 5; do
    printf 'CREATE TABLE db1.t%d (x UInt64, s String) ENGINE = MergeTree ORDER BY x;\n' "$i" > "$s/metadata/db1/t$i.sql"
    printf 'CREATE TABLE db2.h%d (x UInt64) ENGINE = Log;\n' "$i" > "$s/metadata/db2/h$i.sql"
  done
  for i in $(seq 1 10); do new_part "$s/data/db1/events" "all_${i}_${i}_0"; done
  for i in $(seq 1 4); do new_part "$s/data/db2/hits" "all_${i}_${i}_0"; done
  rand_file "$s/big/static.bin" 2097152                    # never changes
  rand_file "$s/big/grow.bin" 524288                       # grows every day (stitched reads)
  rand_file "$s/big/rewrite.bin" 1572864                   # rewritten in place, same size
  cp "$s/data/db1/events/all_1_1_0/data.bin" "$s/dups/copy_0.bin"
  ln "$s/metadata/db2/h1.sql" "$s/metadata/db2/h1_link.sql"
}

# tree_day DIR DAY: one day of changes.
tree_day() {
  local s=$1 d=$2 parts p q a b
  for l in app query error part trace http; do
    log_lines "$s/logs/$l.log" "$d" $((1 + RANDOM % 30)) ok
    [ "$l" != app ] && [ "$(stat -c %s "$s/logs/$l.log")" -gt 262144 ] && mv "$s/logs/$l.log" "$s/logs/$l.log.old"
  done
  if [ $((d % 5)) = 0 ]; then                              # rotation, 3 rotated logs kept
    mv "$s/logs/app.log" "$s/logs/app.log.$d"
    log_lines "$s/logs/app.log" "$d" 3 rotated
    rm -f "$s/logs/app.log.$((d - 15))"
  fi
  new_part "$s/data/db1/events" "all_$((d + 100))_$((d + 100))_0"
  mapfile -t parts < <(cd "$s/data/db1/events" && ls | sort -t_ -k2,2n)
  a=${parts[0]} b=${parts[1]}
  if [ ${#parts[@]} -gt 14 ] && [ "$(cat "$s/data/db1/events/$a/data.bin" "$s/data/db1/events/$b/data.bin" | wc -c)" -gt 524288 ]; then
    rm -rf "${s:?}/data/db1/events/$a"                     # dropped (TTL): parts stay small
  elif [ ${#parts[@]} -gt 14 ]; then                       # a merge of the two oldest parts
    p=${a#all_} q=${b#all_} q=${q#*_}
    p="$s/data/db1/events/all_${p%%_*}_${q%%_*}_$d"         # all_MIN_MAX_LEVEL
    mkdir -p "$p"
    cat "$s/data/db1/events/$a/data.bin" "$s/data/db1/events/$b/data.bin" > "$p/data.bin"
    cp "$s/data/db1/events/$a/data.mrk2" "$s/data/db1/events/$a/columns.txt" "$p/"
    printf '%d\n' "$d" > "$p/count.txt"
    rm -rf "${s:?}/data/db1/events/$a" "${s:?}/data/db1/events/$b"
  fi
  [ $((d % 2)) = 0 ] && printf 'ALTER TABLE db1.t1 ADD COLUMN c%d UInt8;\n' "$d" >> "$s/metadata/db1/t1.sql"
  if [ $((d % 4)) = 0 ]; then                              # a rename
    p=$(cd "$s/metadata/db2" && ls h*.sql | grep -v link | head -1)
    mv "$s/metadata/db2/$p" "$s/metadata/db2/h$((RANDOM % 5 + 1))_v$d.sql" 2>/dev/null || true
  fi
  if [ $((d % 3)) = 0 ]; then                              # a duplicate of some part's data
    mapfile -t parts < <(ls "$s/data/db1/events")
    p=${parts[$((RANDOM % ${#parts[@]}))]}
    cp "$s/data/db1/events/$p/data.bin" "$s/dups/copy_$d.bin"
    rm -f "$s/dups/copy_$((d - 15)).bin"
  fi
  if [ "$(stat -c %s "$s/big/grow.bin")" -gt 4194304 ]; then
    rand_file "$s/big/grow.bin" 262144                     # shrunk: stored whole again
  else
    head -c $((131072 + RANDOM % 131072)) /dev/urandom >> "$s/big/grow.bin"
  fi
  if [ $((d % 3)) = 1 ]; then                              # rewritten in place, same size
    head -c 1572864 /dev/urandom | dd of="$s/big/rewrite.bin" conv=notrunc status=none
  fi
  # A new part in the other table now and then, the oldest one dropped.
  if [ $((d % 6)) = 0 ]; then
    new_part "$s/data/db2/hits" "all_$((d + 100))_$((d + 100))_0"
    p=$(cd "$s/data/db2/hits" && ls | sort -t_ -k2,2n | head -1)
    rm -rf "${s:?}/data/db2/hits/$p"
  fi
}

# tree_noon DIR DAY: the few changes before a second backup of the same day.
tree_noon() {
  log_lines "$1/logs/query.log" "$2" 7 noon
  log_lines "$1/logs/http.log" "$2" 3 noon
  head -c 65536 /dev/urandom >> "$1/big/grow.bin"
}

# tree_variant FROM TO GEN: a different tree for an in-place replacement: most files differ from
# FROM's (every log, the big files, some parts), a few are gone, one is new.
tree_variant() {
  local from=$1 to=$2 g=$3 f p
  rm -rf "$to"
  cp -a "$from" "$to"
  for f in "$to"/logs/*.log*; do log_lines "$f" "$g" 5 "replacement-$g"; done
  rand_file "$to/big/rewrite.bin" 1572864
  head -c 1000 /dev/urandom | dd of="$to/big/static.bin" bs=1 seek=$((RANDOM * 50)) conv=notrunc status=none
  rand_file "$to/big/grow.bin" $(($(stat -c %s "$from/big/grow.bin") + 4096))
  p=$(cd "$to/data/db1/events" && ls | tail -1)
  rm -rf "${to:?}/data/db1/events/$p"
  p=$(cd "$to/data/db1/events" && ls | head -1)
  rand_file "$to/data/db1/events/$p/data.bin" 20000
  printf 'replacement %d of this backup\n' "$g" > "$to/REPLACED-$g.txt"
}
