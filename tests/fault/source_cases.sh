# The cases of source_faults.sh (sourced by it; uses its helpers): one function per source
# fault, each stating the intended outcome it checks.
quiet() { "$@" >/dev/null 2>&1; }
not_hung() { [ "$RC" != 124 ] && [ "$RC" != 137 ]; }

# A file appended to at its first read, not --immutable: exit 0, the backup holds the file as
# it was when opened (its first N bytes), and verifies.
case_growth() {
  local c=growth
  new_src $c
  head -c 100000 /dev/urandom >"$work/$c/src/grow.log"
  backup $c STITCH_FAULT_HOOK="read:/grow.log:head -c 5000 /dev/urandom >>'$work/$c/src/grow.log'" --
  expect $c "the hook appended at the first read" hook_ran
  expect $c "exit 0" exit_is 0
  expect $c "grow.log is the first 100000 bytes of the final file" \
    cmp -s <("$STITCH" cat "$DEST" grow.log 2>/dev/null) <(head -c 100000 "$SRC/grow.log")
  expect $c "verify" quiet "$STITCH" verify "$DEST"
}

# SIGTERM (as Ctrl-C) while a backup only reads (every file unchanged since its base: nothing
# is written that could notice the stop): it stops within a buffer with an error, exit 1, and
# keeps nothing.
case_stop_reading() {
  local c=stop-reading
  new_src $c
  head -c 4000000 /dev/urandom >"$work/$c/src/a.dat"
  head -c 4000000 /dev/urandom >"$work/$c/src/b.dat"
  "$STITCH" backup "$work/$c/src" "$work/$c/base" >/dev/null 2>&1 || bad "[$c] base backup"
  backup $c STITCH_FAULT_HOOK="read:/a.dat:kill -TERM \$PPID" -- --base "$work/$c/base" --jobs 1
  expect $c "the hook sent SIGTERM at the first read" hook_ran
  expect $c "exit 1" exit_is 1
  expect $c "the message says it was interrupted" grep -qi "interrupted" <<<"$LOG"
  expect $c "nothing left at the destination" nothing_at "$DEST"
}

# The same with --immutable matching it: exit 24 and nothing left at the destination.
case_growth_immutable() {
  local c=growth-immutable
  new_src $c
  head -c 100000 /dev/urandom >"$work/$c/src/grow.log"
  backup $c STITCH_FAULT_HOOK="read:/grow.log:head -c 5000 /dev/urandom >>'$work/$c/src/grow.log'" \
    -- --immutable '*.log'
  expect $c "the hook appended at the first read" hook_ran
  expect $c "exit 24 (EXPECTED_END_OF_FILE)" exit_is 24
  expect $c "the message says EXPECTED_END_OF_FILE" grep -q EXPECTED_END_OF_FILE <<<"$LOG"
  expect $c "nothing left at the destination" nothing_at "$DEST"
}

# A file shrunk once while read: read again, backed up with its new content, exit 0.
case_shrink_once() {
  local c=shrink-once
  new_src $c
  head -c 200000 /dev/urandom >"$work/$c/src/shrink.dat"
  backup $c STITCH_FAULT_HOOK="read:/shrink.dat:truncate -s 50000 '$work/$c/src/shrink.dat'" --
  expect $c "the hook shrank the file at its first read" hook_ran
  expect $c "exit 0" exit_is 0
  expect $c "shrink.dat holds the new content" \
    cmp -s <("$STITCH" cat "$DEST" shrink.dat 2>/dev/null) "$SRC/shrink.dat"
  expect $c "verify" quiet "$STITCH" verify "$DEST"
}

# A file that shrinks at every attempt: left out, exit 1, the backup marked incomplete.
case_shrink_always() {
  local c=shrink-always
  new_src $c
  head -c 200000 /dev/urandom >"$work/$c/src/shrink.dat"
  backup $c STITCH_FAULT_HOOK="read:/shrink.dat:truncate -s -1000 '$work/$c/src/shrink.dat'" \
    STITCH_FAULT_HOOK_REPEAT=1 --
  expect $c "the hook shrank the file at every attempt" hook_ran
  expect $c "exit 1" exit_is 1
  expect $c "stitch info: incomplete, shrink.dat missing (text and --json)" listed_missing "$DEST" shrink.dat
  expect $c "the reason says it changed while read" grep -q "changed while it was read" <<<"$LOG"
  expect $c "the other file is backed up" cmp -s <("$STITCH" cat "$DEST" keep.txt 2>/dev/null) "$SRC/keep.txt"
}

# same_bytes NAME DIR: DIR/NAME holds what `stitch cat` gives for NAME.
same_bytes() { cmp -s <("$STITCH" cat "$DEST" "$1" 2>/dev/null) "$2/$1"; }

# Log rotation between the walk and the read of the rotated name: cat, restore and a mount
# agree on both names, which are not hard links.
case_rotation() {
  local c=rotation n
  new_src $c
  mkdir -p "$work/$c/src/logs"
  printf '0123456789abcdefghij\n' >"$work/$c/src/logs/app.log"  # 21 bytes
  printf 'the older log, rotated before\n' >"$work/$c/src/logs/app.log.1"
  local logs=$work/$c/src/logs
  backup $c STITCH_FAULT_HOOK="open:/logs/app.log.1:cd '$logs' && mv app.log app.log.1 && printf '012345678901234567890123456789' >>app.log.1 && printf 'new\\n' >app.log" \
    -- --jobs 1
  expect $c "the hook rotated the log before app.log.1 was opened" hook_ran
  expect $c "verify" quiet "$STITCH" verify "$DEST"
  quiet "$STITCH" restore "$DEST" "$work/$c/r"
  for n in logs/app.log logs/app.log.1; do
    expect $c "restore of $n equals stitch cat" same_bytes "$n" "$work/$c/r"
  done
  expect $c "restore: app.log and app.log.1 are not hard links" \
    two_inodes "$work/$c/r/logs/app.log" "$work/$c/r/logs/app.log.1"
  [ "$can_mount" = 1 ] || { echo "SKIP: [$c] mount checks (no /dev/fuse)"; return; }
  if ! mount_at "$DEST" "$work/$c/m" >/dev/null 2>&1; then bad "[$c] mount"; return; fi
  for n in logs/app.log logs/app.log.1; do
    expect $c "mount: $n equals stitch cat" same_bytes "$n" "$work/$c/m"
  done
  expect $c "mount: app.log and app.log.1 are not hard links" \
    two_inodes "$work/$c/m/logs/app.log" "$work/$c/m/logs/app.log.1"
  fusermount3 -u "$work/$c/m"
}

# A file replaced, between the walk and its read, by a fifo, a unix socket, a symlink out of
# the source (to a secret) or a folder: no hang, no secret, exit 1, listed as missing.
case_replaced() {
  local kind=$1 c=replaced-$1
  new_src $c
  local v=$work/$c/src/victim.dat cmd
  printf 'victim data\n' >"$v"
  case $kind in
    fifo) cmd="rm -f '$v' && mkfifo '$v'" ;;
    socket)
      command -v python3 >/dev/null || { echo "SKIP: [$c] no python3 to make a socket"; return; }
      cmd="rm -f '$v' && python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('$v')\"" ;;
    symlink) cmd="rm -f '$v' && ln -s '$work/outside/secret.txt' '$v'" ;;
    folder) cmd="rm -f '$v' && mkdir '$v' && cp '$work/outside/secret.txt' '$v/'" ;;
  esac
  backup $c STITCH_FAULT_HOOK="open:/victim.dat:$cmd" --
  expect $c "the hook replaced victim.dat by a $kind" hook_ran
  expect $c "no hang (30 s)" not_hung
  expect $c "no secret anywhere in the destination" no_marker "$DEST"
  expect $c "exit 1" exit_is 1
  expect $c "stitch info: incomplete, victim.dat missing (text and --json)" listed_missing "$DEST" victim.dat
}

# A file whose reads fail with EIO: exit 1, listed as missing, the rest byte-exact.
case_unreadable() {
  local c=unreadable
  new_src $c
  mkdir -p "$work/$c/src/sub"
  head -c 30000 /dev/urandom >"$work/$c/src/bad.dat"
  head -c 20000 /dev/urandom >"$work/$c/src/sub/good.dat"
  backup $c STITCH_FAULT_READ_ERRNO=/bad.dat:EIO --
  expect $c "reads of bad.dat failed" test "${COUNTS[reads_failed]:-0}" -ge 1
  expect $c "exit 1" exit_is 1
  expect $c "stitch info: incomplete, bad.dat missing (text and --json)" listed_missing "$DEST" bad.dat
  cp -a "$SRC" "$work/$c/expected"
  rm "$work/$c/expected/bad.dat"
  quiet "$STITCH" restore "$DEST" "$work/$c/r"
  expect $c "every other file restores byte-exact" same_tree "$work/$c/r" "$work/$c/expected"
}

# A file removed between the walk and its read: exit 1, listed as missing.
case_vanished() {
  local c=vanished
  new_src $c
  printf 'here at the walk\n' >"$work/$c/src/gone.dat"
  backup $c STITCH_FAULT_HOOK="open:/gone.dat:rm -f '$work/$c/src/gone.dat'" --
  expect $c "the hook removed gone.dat" hook_ran
  expect $c "exit 1" exit_is 1
  expect $c "stitch info: incomplete, gone.dat missing (text and --json)" listed_missing "$DEST" gone.dat
}

# A folder swapped for a symlink to a folder outside SOURCE, at the open of the folder (during
# the walk) or of a file inside it (after the walk): nothing from outside in the backup.
case_folder_swapped() {
  local mode=$1 c=swapped-$1
  new_src $c
  local s=$work/$c/src suffix
  mkdir -p "$s/sub-hook"
  printf 'inside the source\n' >"$s/sub-hook/inner.dat"
  printf 'outside only\n' >"$work/outside/dir/outside-only.txt"
  if [ "$mode" = open_folder ]; then suffix=/src/sub-hook; else suffix=/sub-hook/inner.dat; fi
  backup $c STITCH_FAULT_HOOK="open:$suffix:cd '$s' && mv sub-hook sub-hook.moved && ln -s '$work/outside/dir' sub-hook" --
  expect $c "the hook swapped the folder for a symlink" hook_ran
  expect $c "no hang (30 s)" not_hung
  expect $c "no secret anywhere in the destination" no_marker "$DEST"
  expect $c "no name from outside in the backup" \
    bash -c "! '$STITCH' ls '$DEST' -R 2>/dev/null | grep -q outside-only"
  quiet "$STITCH" restore "$DEST" "$work/$c/r"
  expect $c "no secret in its restore" no_marker "$work/$c/r"
}

# A fifo and a socket present from the start: skipped with a warning, exit 0, no hang.
case_special_files() {
  local c=special
  new_src $c
  mkfifo "$work/$c/src/a.fifo"
  if command -v python3 >/dev/null; then
    python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$work/$c/src/a.sock')"
  fi
  backup $c --
  expect $c "no hang (30 s)" not_hung
  expect $c "exit 0" exit_is 0
  expect $c "a warning names the fifo" grep -q "warning.*a.fifo" <<<"$LOG"
  [ ! -S "$SRC/a.sock" ] || expect $c "a warning names the socket" grep -q "warning.*a.sock" <<<"$LOG"
  expect $c "verify" quiet "$STITCH" verify "$DEST"
}

# Two names of one inode: one inode with link count 2 in the restore and in a mount.
case_hard_links() {
  local c=hard-links
  new_src $c
  head -c 5000 /dev/urandom >"$work/$c/src/a.dat"
  ln "$work/$c/src/a.dat" "$work/$c/src/b.dat"
  backup $c --
  expect $c "exit 0" exit_is 0
  quiet "$STITCH" restore "$DEST" "$work/$c/r"
  expect $c "restore: one inode, link count 2" one_inode "$work/$c/r/a.dat" "$work/$c/r/b.dat"
  expect $c "restore: the content" cmp -s "$work/$c/r/b.dat" "$SRC/a.dat"
  [ "$can_mount" = 1 ] || { echo "SKIP: [$c] mount checks (no /dev/fuse)"; return; }
  if ! mount_at "$DEST" "$work/$c/m" >/dev/null 2>&1; then bad "[$c] mount"; return; fi
  expect $c "mount: one inode, link count 2" one_inode "$work/$c/m/a.dat" "$work/$c/m/b.dat"
  expect $c "mount: the content" cmp -s "$work/$c/m/b.dat" "$SRC/a.dat"
  fusermount3 -u "$work/$c/m"
}

# links_consistent DIR: a.dat and b.dat are hard links holding what stitch cat gives for both
# (the same), or separate files each holding what stitch cat gives for it, which is the
# original or the final content.
links_consistent() {
  local a=$1/a.dat b=$1/b.dat x=$work/hard-links-changing
  if [ "$(stat -c %i "$a")" = "$(stat -c %i "$b")" ]; then
    [ "$(stat -c %h "$a")" = 2 ] && cmp -s "$x/cat.a" "$x/cat.b" && cmp -s "$a" "$x/cat.a"
    return
  fi
  two_inodes "$a" "$b" && cmp -s "$a" "$x/cat.a" && cmp -s "$b" "$x/cat.b" &&
    { cmp -s "$a" "$x/orig" || cmp -s "$a" "$SRC/a.dat"; } &&
    { cmp -s "$b" "$x/orig" || cmp -s "$b" "$SRC/a.dat"; }
}

# The same pair appended to between the reads of its two names.
case_hard_links_changing() {
  local c=hard-links-changing
  new_src $c
  head -c 5000 /dev/urandom >"$work/$c/src/a.dat"
  ln "$work/$c/src/a.dat" "$work/$c/src/b.dat"
  cp "$work/$c/src/a.dat" "$work/$c/orig"
  backup $c STITCH_FAULT_HOOK="open:/b.dat:printf appended >>'$work/$c/src/a.dat'" -- --jobs 1
  expect $c "the hook appended between the two names" hook_ran
  expect $c "verify" quiet "$STITCH" verify "$DEST"
  "$STITCH" cat "$DEST" a.dat >"$work/$c/cat.a" 2>/dev/null
  "$STITCH" cat "$DEST" b.dat >"$work/$c/cat.b" 2>/dev/null
  quiet "$STITCH" restore "$DEST" "$work/$c/r"
  expect $c "restore: one content as hard links, or two correct separate files" links_consistent "$work/$c/r"
  [ "$can_mount" = 1 ] || { echo "SKIP: [$c] mount checks (no /dev/fuse)"; return; }
  if ! mount_at "$DEST" "$work/$c/m" >/dev/null 2>&1; then bad "[$c] mount"; return; fi
  expect $c "mount: one content as hard links, or two correct separate files" links_consistent "$work/$c/m"
  fusermount3 -u "$work/$c/m"
}

# base_store CASE: in $work/CASE (a store; the source and the backup written by `backup` sit
# beside its backups) three full backups of the source a day apart: d5, d6 (the incremental's
# base) and d8; then the source grows.
base_store() {
  local c=$1 d
  new_src "$c"
  head -c 100000 /dev/urandom >"$work/$c/src/data.bin"
  for d in 5 6 8; do
    "$STITCH" backup "$work/$c/src" "$work/$c/d$d" --timestamp "2026-01-0$d 00:00:00" \
      >/dev/null 2>&1 || bad "[$c] backup d$d"
  done
  head -c 1000 /dev/urandom >>"$work/$c/src/data.bin"
}

# The base of an incremental pruned while it runs: prune keeps it (the writer's live .lock
# names it as its base), removes the rest; the backup completes and verifies.
case_base_pruned() {
  local c=base-pruned
  base_store $c
  backup $c STITCH_FAULT_HOOK="read:/data.bin:env -u LD_PRELOAD '$STITCH' prune '$work/$c' --keep-last 1 >'$work/$c/prune.out' 2>&1" \
    -- --base "$work/$c/d6"
  expect $c "the hook ran prune during the backup" hook_ran
  expect $c "exit 0" exit_is 0
  expect $c "prune kept the base, saying why ($(cat "$work/$c/prune.out" 2>/dev/null | tr '\n' '|'))" \
    grep -q "^keep    d6 (the base of .*dest, being written)" "$work/$c/prune.out"
  expect $c "prune removed what the policy does not keep" test ! -e "$work/$c/d5"
  expect $c "the backup verifies" quiet "$STITCH" verify "$DEST"
  expect $c "and holds the grown file" same_bytes data.bin "$SRC"
}

# The base removed while the backup runs: the backup fails (NO_BASE_BACKUP, exit 21) before its
# manifest goes in, saying why, and leaves nothing.
case_base_removed() {
  local c=base-removed
  base_store $c
  backup $c STITCH_FAULT_HOOK="read:/data.bin:mv '$work/$c/d6' '$work/$c/gone'" \
    -- --base "$work/$c/d6"
  expect $c "the hook removed the base" hook_ran
  expect $c "exit 21 (NO_BASE_BACKUP)" exit_is 21
  expect $c "the message says the base went while the backup was written" \
    grep -q "is gone .* while this backup was written" <<<"$LOG"
  expect $c "nothing left at the destination" nothing_at "$DEST"
}

# The base replaced by another backup while the backup runs: exit 21, nothing left.
case_base_replaced() {
  local c=base-replaced
  base_store $c
  backup $c STITCH_FAULT_HOOK="read:/data.bin:mv '$work/$c/d6' '$work/$c/gone' && env -u LD_PRELOAD '$STITCH' backup '$work/$c/src' '$work/$c/d6' >/dev/null 2>&1" \
    -- --base "$work/$c/d6"
  expect $c "the hook replaced the base" hook_ran
  expect $c "exit 21 (NO_BASE_BACKUP)" exit_is 21
  expect $c "the message says the base was replaced" grep -q "was replaced by backup" <<<"$LOG"
  expect $c "nothing left at the destination" nothing_at "$DEST"
}
