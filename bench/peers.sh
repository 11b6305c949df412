# Mounts of the same bytes by other tools, for side-by-side figures (sourced by mount_read.sh).
# Each peer_* function stores ORIGINAL (a folder holding grow.bin) its own way, mounts it, and
# prints a JSON member "name":{first_read_s, second_read_s, rand4k_1t_per_s}, or nothing when
# the tool is not installed (bench/install-peers.sh installs them all).

# peer_reads FILE MOUNTPOINT MOUNT_CMD...: mounts, reads FILE once (first) and three times
# (second, best), checks the bytes, remounts for random reads. The mount command must return
# once FILE is readable or run in the background (it is waited for).
peer_reads() {
  local file=$1 mnt=$2
  shift 2
  "$@"
  wait_for_file "$file"
  local first second r1
  first=$(timed cat "$file")
  second=$(best_of 3 cat "$file")
  cmp "$file" "$work/original"
  fusermount3 -u "$mnt"
  wait_unmounted "$mnt"
  "$@"
  wait_for_file "$file"
  r1=$("$PREAD" "$file" 1 2000)
  fusermount3 -u "$mnt"
  wait_unmounted "$mnt"
  echo "{\"first_read_s\":$first,\"second_read_s\":$second,\"rand4k_1t_per_s\":$r1}"
}

wait_for_file() { for _ in $(seq 600); do [ -r "$1" ] && return 0; sleep 0.1; done; return 1; }
wait_unmounted() { for _ in $(seq 100); do mountpoint -q "$1" || return 0; sleep 0.1; done; }

peer_squashfuse() {
  command -v squashfuse_ll >/dev/null && command -v mksquashfs >/dev/null || return 0
  mkdir -p "$work/sqm"
  mksquashfs "$work/peer" "$work/img.sqfs" -noappend -comp gzip -no-progress >/dev/null
  cat "$work/img.sqfs" >/dev/null
  echo ",\"squashfuse_ll_gzip\":$(peer_reads "$work/sqm/grow.bin" "$work/sqm" squashfuse_ll "$work/img.sqfs" "$work/sqm")"
}

peer_restic() {
  command -v restic >/dev/null || return 0
  export RESTIC_PASSWORD=bench
  restic init -q -r "$work/restic" >/dev/null
  (cd "$work/peer" && restic backup -q -r "$work/restic" . >/dev/null)
  mkdir -p "$work/rm"
  restic_mount() { restic mount -q -r "$work/restic" "$work/rm" >/dev/null 2>&1 & }
  echo ",\"restic_mount\":$(peer_reads "$work/rm/snapshots/latest/grow.bin" "$work/rm" restic_mount)"
}

peer_borg() {
  command -v borg >/dev/null || return 0
  export BORG_PASSPHRASE="" BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
  borg init -e none "$work/borg" >/dev/null
  (cd "$work/peer" && borg create "$work/borg::a" . >/dev/null)
  mkdir -p "$work/bm"
  echo ",\"borg_mount\":$(peer_reads "$work/bm/grow.bin" "$work/bm" borg mount "$work/borg::a" "$work/bm")"
}
