#!/usr/bin/env bash
# A throwaway single-node Ceph cluster (one monitor, one in-memory OSD, radosgw) serving S3 on
# 127.0.0.1, for the S3 tests and benchmarks. Everything lives under DIR, so several can run at
# once. The S3 user is stitchtest/stitchtestsecret, with a bucket "stitch".
# Usage:
#   scripts/radosgw.sh start DIR [PORT]   start (PORT: S3 port, default a free one); writes and
#                                         prints DIR/env, to be sourced (AWS_ENDPOINT_URL, ...)
#   scripts/radosgw.sh stop DIR           stop radosgw, the OSD, the monitor (idempotent)
#   scripts/radosgw.sh kill-rgw DIR       SIGKILL radosgw only
#   scripts/radosgw.sh start-rgw DIR      start radosgw again on the same port, wait for S3
set -euo pipefail

KEY=stitchtest SECRET=stitchtestsecret TIMEOUT=60
usage() { sed -n '5,10s/^# \?//p' "$0" >&2; exit 2; }
[[ $# -ge 2 && $1 =~ ^(start|stop|kill-rgw|start-rgw)$ ]] || usage
cmd=$1
[ "$cmd" != start ] || mkdir -p "$2"
[ -d "$2" ] || { [ "$cmd" = stop ] && exit 0; echo "radosgw.sh: no $2" >&2; exit 2; }
D=$(cd "$2" && pwd)
export CEPH_CONF=$D/ceph.conf
deadline=$((SECONDS + TIMEOUT))
on_failure() { :; }  # start and start-rgw stop what they started
trap '[ $? = 0 ] || on_failure' EXIT

fail() {
  [ $SECONDS -lt $deadline ] || set -- "$* (timed out after ${TIMEOUT}s)"
  echo "radosgw.sh: $*" >&2
  for f in "$D"/*.log; do [ -s "$f" ] && { echo "== $f" >&2; tail -n 20 "$f" >&2; }; done
  exit 1
}
remaining() { echo $((deadline - SECONDS > 1 ? deadline - SECONDS : 1)); }

in_use() { (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }  # something listens on port $1
free_port() {  # below the ephemeral range
  local p
  while :; do
    p=$((20000 + RANDOM % 12000))
    in_use "$p" || { echo "$p"; return; }
  done
}

# The pid of daemon $1 (mon.a, osd.0, client.rgw) if it runs with our config. A zombie
# ("[radosgw] <defunct>") counts as gone: init may take seconds to reap the daemons.
pid_of() {
  local pid
  pid=$(cat "$D/run/$1.pid" 2>/dev/null) || return 1
  [[ $(ps -o args= -p "$pid") == *" -c $CEPH_CONF" ]] && echo "$pid"
}

# Runs daemon $1 in the foreground of its own session, stdio away from the caller's.
daemon() {
  local name=$1; shift
  setsid "$@" -f -c "$CEPH_CONF" </dev/null >>"$D/$name.out" 2>&1 &
  echo $! > "$D/run/$name.pid"
}

# Stops daemon $1 with signal $2, SIGKILL after 5 s; waits until it is gone.
stop_daemon() {
  local pid
  pid=$(pid_of "$1") || return 0
  kill -"$2" "$pid" 2>/dev/null || true
  for _ in $(seq 50); do pid_of "$1" >/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  while pid_of "$1" >/dev/null; do sleep 0.05; done
  rm -f "$D/run/$1.pid"
}

# Creating the bucket (or finding it again) is the proof that S3 answers.
start_rgw() {
  local port code
  port=$(cat "$D/port")
  pid_of client.rgw >/dev/null || daemon client.rgw radosgw -n client.rgw
  while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --aws-sigv4 "aws:amz:us-east-1:s3" \
      --user "$KEY:$SECRET" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X PUT \
      "http://127.0.0.1:$port/stitch") || true
    [ "$code" = 200 ] && return
    pid_of client.rgw >/dev/null || fail "radosgw exited (last S3 answer: $code)"
    [ $SECONDS -lt $deadline ] || fail "no S3 answer on port $port (last: $code)"
    sleep 0.1
  done
}

case $cmd in
start)
  [ -z "$(ls -A "$D")" ] || { echo "radosgw.sh: $D is not empty" >&2; exit 2; }
  port=${3:-$(free_port)}
  ! in_use "$port" || { echo "radosgw.sh: port $port is in use" >&2; exit 1; }
  monport=$(free_port)
  echo "$port" > "$D/port"
  mkdir -p "$D/run" "$D/mon" "$D/osd" "$D/rgw" "$D/crash"
  on_failure() { bash "$0" stop "$D" >/dev/null 2>&1; }
  trap 'exit 1' INT TERM HUP PIPE
  fsid=$(uuidgen)
  # tcp_nodelay=1: without it, on a kept-alive connection the last small segment of each reply
  # waits for the client's delayed ACK, 40 ms per request (a 4 KiB ranged GET took 45 ms).
  cat > "$CEPH_CONF" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$monport
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
keyring = $D/keyring
run dir = $D/run
crash dir = $D/crash
admin socket = $D/run/\$name.asok
log file = $D/\$name.log
mon cluster log file = $D/cluster.log
mon data = $D/mon
osd data = $D/osd
osd objectstore = memstore
memstore device bytes = 3221225472
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
paxos propose interval = 0.01
rgw data = $D/rgw
rgw frontends = beast endpoint=127.0.0.1:$port tcp_nodelay=1
rgw enable lc threads = false
EOF
  exec 3>>"$D/setup.log"
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$monport]" "$D/monmap" >&3 2>&1 \
    || fail "monmaptool failed"
  ceph-mon -i a --mkfs --monmap "$D/monmap" >&3 2>&1 || fail "ceph-mon --mkfs failed"
  daemon mon.a ceph-mon -i a
  uuid=$(uuidgen)
  timeout "$(remaining)" ceph osd new "$uuid" 0 >&3 2>&1 || fail "ceph osd new failed"
  ceph-osd -i 0 --mkfs --osd-uuid "$uuid" >&3 2>&1 || fail "ceph-osd --mkfs failed"
  daemon osd.0 ceph-osd -i 0
  timeout "$(remaining)" radosgw-admin user create --uid stitch --display-name stitch \
    --access-key "$KEY" --secret-key "$SECRET" >&3 2>&1 || fail "radosgw-admin user create failed"
  start_rgw
  echo "export AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=$KEY" \
    "AWS_SECRET_ACCESS_KEY=$SECRET AWS_REGION=us-east-1 STITCH_RGW_DIR=$D STITCH_RGW_PORT=$port" > "$D/env"
  echo "$D/env"
  ;;
stop)
  pids=$(cat "$D"/run/*.pid 2>/dev/null | paste -sd,) || true
  stop_daemon client.rgw TERM
  stop_daemon osd.0 TERM
  stop_daemon mon.a TERM
  # So that ps shows none of them: wait (up to 3 s) for init to reap them.
  for _ in $(seq 30); do
    if [ -z "$pids" ] || ! ps -p "$pids" >/dev/null; then break; fi
    sleep 0.1
  done
  ;;
kill-rgw) stop_daemon client.rgw KILL ;;
start-rgw)
  if ! pid_of mon.a >/dev/null || ! pid_of osd.0 >/dev/null; then
    fail "the cluster in $D is not running"
  fi
  on_failure() { stop_daemon client.rgw KILL; }
  trap 'exit 1' INT TERM HUP PIPE
  start_rgw
  ;;
*) usage ;;
esac
