#!/usr/bin/env bash
# read-ahead-shapes.sh: the default (adaptive) read-ahead against fixed shapes on real backends
# (issue 13). Stands up on 127.0.0.1, each with its own state in a temp work folder, an SSHFS
# mount with direct_io (scripts/sshfs.sh) and nginx (scripts/http-server.sh), puts the same
# random file on each and on local disk, and runs the throughput harness (release, feature
# object-store) on each with the read-ahead reader in every shape (`--read-ahead adaptive,...`):
# the local file with a warm page cache, the SSHFS mount, HTTP behind the fault proxy holding
# each response 2 ms, and HTTP without delay (for scale); over HTTP also object_store's own
# BufReader (1 MiB, its default, and 4 MiB). Each run prints the harness's table and verdict
# (the adaptive default against the best fixed shape, and against object_store's BufReader);
# every read is verified (a wrong byte fails the run, and so this script). Tears everything
# down on exit, whatever happened.
#
#   scripts/read-ahead-shapes.sh          as root (installs what is missing with
#                                         scripts/{sshfs,http-server}.sh install), or a user who
#                                         may use FUSE with sshfs, sshd and nginx installed
#
# Env: FILE_SIZE (MiB, default 64), ROUNDS (passes per cell, default 5), LOCAL_ROUNDS (default
#      15: a pass over a cached file takes ~20 ms, so more of them), DELAY_MS (default 2), OUT
#      (also write the report there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh

FILE_SIZE=${FILE_SIZE:-64}
ROUNDS=${ROUNDS:-5}
LOCAL_ROUNDS=${LOCAL_ROUNDS:-15}
DELAY_MS=${DELAY_MS:-2}
SHAPES=adaptive,64KiBx2,256KiBx4,1MiBx4,1MiBx8,4MiBx4
[[ $FILE_SIZE =~ ^[1-9][0-9]*$ ]] || die "FILE_SIZE must be a whole number of MiB, got '$FILE_SIZE'"
started=$(date +%s)

if [[ $EUID -eq 0 ]]; then
  scripts/sshfs.sh install
  scripts/http-server.sh install
fi
need cargo curl python3 sshfs
[[ -x /usr/sbin/nginx ]] || die "/usr/sbin/nginx missing; run as root, or 'scripts/http-server.sh install'"
[[ -x /usr/sbin/sshd ]] || die "/usr/sbin/sshd missing; run as root, or 'scripts/sshfs.sh install'"

log "building the harness (release, object-store) and the fault proxy"
cargo build --release -q -p throughput-harness --features object-store --example throughput
cargo build --release -q -p abi-fault-proxy --bin fault-proxy
bin=${CARGO_TARGET_DIR:-target}/release/examples/throughput
proxy_bin=${CARGO_TARGET_DIR:-target}/release/fault-proxy
[[ -x $bin && -x $proxy_bin ]] || die "$bin or $proxy_bin was not built"

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/abi-shapes.XXXXXX")")
mkdir -p "$work"/{local,export,mnt,www}
# Our own instances on free ports, whatever else runs here (a port exported by an earlier `up`
# would be taken).
export HTTP_STATE=$work/http-state ABI_STATE_ROOT=$work
unset HTTP_PORT
proxy_pid=
cleanup() {
  set +e
  [[ -n $proxy_pid ]] && kill "$proxy_pid" 2>/dev/null && wait "$proxy_pid" 2>/dev/null
  scripts/sshfs.sh down "$work/mnt" 2>/dev/null
  scripts/http-server.sh down 2>/dev/null
  # Never recurse into a mount that is still there: that would delete through it.
  if ! awk -v m="$work/mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

name=shapes.bin
log "writing a ${FILE_SIZE} MiB random file to local disk, the SSHFS export and nginx's folder"
head -c "$((FILE_SIZE << 20))" /dev/urandom >"$work/local/$name"
cp "$work/local/$name" "$work/export/$name"
cp "$work/local/$name" "$work/www/$name"
chmod -R a+rX "$work"

log "starting sshd + sshfs (direct_io) and nginx on 127.0.0.1"
set -a
eval "$(scripts/sshfs.sh up "$work/export" "$work/mnt")"
eval "$(scripts/http-server.sh up "$work/www")"
set +a
# (direct_io,no_readahead are sshfs.sh's mount options; /proc/mounts does not show them.)
awk -v m="$SSHFS_MNT" '$2 == m && $3 == "fuse.sshfs" { f = 1 } END { exit !f }' /proc/mounts \
  || die "$SSHFS_MNT is not an sshfs mount"
cmp -s "$work/local/$name" "$SSHFS_MNT/$name" || die "the file reads differently through the mount"
[[ $(curl -s "$HTTP_URL/$name" | cmp -s - "$work/local/$name" && echo same) == same ]] \
  || die "nginx serves different bytes"
# Warm page caches: the local file, and the files behind the mount and nginx.
cat "$work/local/$name" "$work/export/$name" "$work/www/$name" >/dev/null
log "starting the fault proxy in front of nginx, ${DELAY_MS} ms per response"
"$proxy_bin" --upstream "${HTTP_URL#http://}" --latency-ms "$DELAY_MS" >"$work/proxy.env" 2>"$work/proxy.log" &
proxy_pid=$!
for _ in $(seq 50); do grep -q FAULT_PROXY_URL "$work/proxy.env" && break; sleep 0.1; done
eval "$(cat "$work/proxy.env")"
[[ -n ${FAULT_PROXY_URL:-} ]] || die "the fault proxy did not start: $(cat "$work/proxy.log")"

report=$work/report.md
{
  echo "## read-ahead shapes, $(date -u +%Y-%m-%dT%H:%MZ), ${FILE_SIZE} MiB file, $(nproc) cores"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src 2>/dev/null || echo ' (src modified)')"
} >"$report"
# run LABEL ROUNDS PATH [READERS CAPACITIES] : one harness run, its table appended to the report
# (the windows: the input's 8 KiB; object_store's BufReader at 1 MiB, its default, and 4 MiB)
run() {
  local label=$1 rounds=$2 path=$3 readers=${4:-readahead} capacities=${5:-8KiB}
  log "$label: $path"
  echo -e "\n#### $label" >>"$report"
  "$bin" --path "$path" --readers "$readers" --read-ahead "$SHAPES" --sizes 64KiB \
    --capacities "$capacities" --repeat "$rounds" --hedge off --budget none --no-progress \
    | tee -a "$report" || die "$label: the run failed"
}
run "local file (warm page cache)" "$LOCAL_ROUNDS" "local=$work/local/$name"
run "SSHFS mount, direct_io" "$ROUNDS" "sshfs=$SSHFS_MNT/$name"
both=readahead,object-store-bufreader
run "HTTP (nginx) behind ${DELAY_MS} ms per response" "$ROUNDS" "http=$FAULT_PROXY_URL/$name" \
  "$both" 8KiB,1MiB,4MiB
run "HTTP (nginx), no delay" "$ROUNDS" "http=$HTTP_URL/$name" "$both" 8KiB,1MiB,4MiB

if [[ -n ${OUT:-} ]]; then cp "$report" "$OUT" && log "report written to $OUT"; fi
log "done in $(( $(date +%s) - started )) s"
