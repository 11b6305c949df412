# Shared helpers of the shell tests (sourced). Each check counts; `finish` prints the
# "N passed, N failed" line and sets the exit status.
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
# check WHAT CMD...: passes when CMD succeeds.
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
# expect_exit CODE MESSAGE_PART -- CMD...: CMD must exit CODE with MESSAGE_PART on stderr.
expect_exit() {
  local want=$1 part=$2
  shift 3
  local err
  err=$("$@" 2>&1 >/dev/null)
  local got=$?
  if [ "$got" != "$want" ]; then bad "exit $got != $want for: $* ($err)"; return; fi
  case "$err" in *"$part"*) ok ;; *) bad "stderr lacks '$part' for: $* ($err)" ;; esac
}
# link_name LINK: the backup folder name a store mount's latest, at/... or by-uuid/... link leads
# to (the links name it: "g2" or "../g2"; ".generations/NAME@GENERATION" for a folder named like
# one of the store's own names).
link_name() {
  local t
  t=$(readlink "$1") || return 1
  t=${t##*/}
  echo "${t%@*}"
}
# require_fuse: exits 77 (the test is skipped) where FUSE mounts cannot be made.
require_fuse() {
  if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
    echo "SKIP: no /dev/fuse or fusermount3"
    exit 77
  fi
}
# unmount_all DIR...: unmounts each DIR that is still a mount point (FUSE or not), lazily if busy.
unmount_all() {
  local m
  for m in "$@"; do
    mountpoint -q "$m" 2>/dev/null || continue
    fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || umount -l "$m"
  done
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
