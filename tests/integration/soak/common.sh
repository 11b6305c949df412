# Shared settings and helpers of the soak test's processes (sourced by soak_test.sh and by each
# worker). The work folder W holds: store/ (the backups), mnt/ (the store mount), refs/UUID/
# (tree: that backup's exact tree; list: its sorted listing), events (the record of every
# change to the store), failures (one line per hard failure), log/ and stats/ (per worker).
#
# The events file is the test's source of truth for what the store held when. Every change is
# two lines, written by the process making it (all changes are serialized by a flock on
# W/store.lock):  TIME B ID OP NAME UUID TS  before it starts, and  TIME E ID OP NAME UUID TS
# once it is done. OP is add (a new backup), fail (an add that failed), del (removed by prune),
# repl (NAME now holds another backup, UUID, with timestamp TS) or flat (flattened in place by
# prune: same uuid and content, not a change of what the store holds). TS is YYYY-MM-DDThh:mm:ss.
# shellcheck shell=bash
export LC_ALL=C TZ=UTC STITCH_NO_PROGRESS=1
: "${W:?}" "${STITCH:?}" "${STITCHFS:?}"
M=$W/mnt
STORE=$W/store
REFS=$W/refs
EVENTS=$W/events
FAILS=$W/failures
GRACE_US=${GRACE_US:-3000000}   # How stale the mount may be: a store re-read every second plus
                                # the kernel's 1 s entry timeout, plus a second of margin.
START_US=${START_US:-${EPOCHREALTIME/./}}
WHO=${WHO:-main}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

now_us() { printf '%s' "${EPOCHREALTIME/./}"; }
# rel [US]: seconds since the start of the run, as +12.3s.
rel() { local t=${1:-${EPOCHREALTIME/./}}; t=$(((t - START_US) / 100000)); printf '+%d.%ds' $((t / 10)) $((t % 10)); }
stopped() { [ -e "$W/stop" ]; }
# event PHASE ID OP NAME UUID TS (times in microseconds, so that bash compares them)
# (A 7th field "gap" on a replacement: the name is absent for a moment between its two moves.)
event() { printf '%s %s %s %s %s %s %s%s\n' "${EPOCHREALTIME/./}" "$1" "$2" "$3" "$4" "${5:--}" "${6:--}" "${7:+ $7}" >> "$EVENTS"; }
# fail CATEGORY DETAILS...: a hard failure.
fail() { local c=$1; shift; printf 'FAIL %s %s %s: %s\n' "$c" "$(rel)" "$WHO" "$(tr '\n' ' ' <<<"$*")" >> "$FAILS"; }
# note DETAILS...: an entry in this worker's log.
note() { printf '%s %s\n' "$(rel)" "$*" >> "$W/log/$WHO"; }
# T SECONDS CMD...: CMD, killed if it runs longer (its process group stays the worker's, so that
# stopping the worker stops it too).
T() { local s=$1; shift; timeout --foreground -k 5 "$s" "$@"; }

# ts_of "YYYY-MM-DD hh:mm:ss" -> YYYY-MM-DDThh:mm:ss, and back.
ts_t() { printf '%s' "${1/ /T}"; }
ts_sp() { printf '%s' "${1/T/ }"; }
json_field() { grep -o "\"$1\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }   # json_field KEY < JSON

# make_ref UUID DIR: DIR becomes the reference tree of backup UUID (moved, so DIR must not change).
make_ref() {
  mkdir -p "$REFS/$1.tmp"
  mv "$2" "$REFS/$1.tmp/tree"
  (cd "$REFS/$1.tmp/tree" && find . -mindepth 1 -printf '%y %P\n' | sort) > "$REFS/$1.tmp/list"
  mv "$REFS/$1.tmp" "$REFS/$1"
}

# oracle KIND KEY FROM_US TO_US: what the store held for KIND (name, uuid, latest, at) and KEY
# over the interval (see oracle.awk).
oracle() { awk -v kind="$1" -v key="$2" -v ta="$3" -v tb="$4" -f "$HERE/oracle.awk" "$EVENTS"; }

# settle US: waits until every change begun before US has ended (so that the oracle knows the
# uuid of each backup involved). Changes are bounded by their own timeouts.
settle() {
  local deadline=$(($(now_us) + 900000000))
  while awk -v t="$1" '$2 == "B" && $1 <= t { o[$3] = 1 } $2 == "E" { delete o[$3] }
                        END { for (k in o) exit 0; exit 1 }' "$EVENTS"; do
    [ "$(now_us)" -gt "$deadline" ] && { fail harness "a store change never ended"; return 1; }
    sleep 0.2
  done
}

# save_stats KEY=VALUE...: this worker's counters (the run's summary adds them up).
save_stats() { printf '%s\n' "$@" > "$W/stats/$WHO.tmp" && mv "$W/stats/$WHO.tmp" "$W/stats/$WHO"; }

# Store changes are serialized: backups, prunes and replacements each hold this lock.
store_lock() { exec 9>>"$W/store.lock"; flock -w 900 9 || { fail harness "store lock not taken in 900 s"; return 1; }; }
store_unlock() { flock -u 9; exec 9>&-; }
