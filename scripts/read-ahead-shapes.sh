#!/usr/bin/env bash
# read-ahead-shapes.sh: the default (adaptive) read-ahead against fixed shapes on real backends
# (issue 13). Stands up on 127.0.0.1, each with its own state in a temp work folder, an SSHFS
# mount with direct_io (scripts/sshfs.sh) and nginx (scripts/http-server.sh), puts the same
# random file on each and on local disk, and runs examples/read_ahead_shapes.rs (release, feature
# object-store) on each: the local file with a warm page cache, the SSHFS mount, HTTP behind a
# 2 ms-per-request proxy, and HTTP without delay (for scale). Each run prints a markdown table
# and the issue's goal lines; every read is verified (a wrong byte fails the run, and so this
# script). Tears everything down on exit, whatever happened.
#
#   scripts/read-ahead-shapes.sh          as root (installs what is missing with
#                                         scripts/{sshfs,http-server}.sh install), or a user who
#                                         may use FUSE with sshfs, sshd and nginx installed
#
# Env: FILE_SIZE (MiB, default 64), ROUNDS (default 5), LOCAL_ROUNDS (default 15: a pass over a
#      cached file takes ~20 ms, so more of them), DELAY (default 2ms), OUT (also write the
#      report there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh

FILE_SIZE=${FILE_SIZE:-64}
ROUNDS=${ROUNDS:-5}
LOCAL_ROUNDS=${LOCAL_ROUNDS:-15}
DELAY=${DELAY:-2ms}
[[ $FILE_SIZE =~ ^[1-9][0-9]*$ ]] || die "FILE_SIZE must be a whole number of MiB, got '$FILE_SIZE'"
started=$(date +%s)

if [[ $EUID -eq 0 ]]; then
  scripts/sshfs.sh install
  scripts/http-server.sh install
fi
need cargo curl python3 sshfs
[[ -x /usr/sbin/nginx ]] || die "/usr/sbin/nginx missing; run as root, or 'scripts/http-server.sh install'"
[[ -x /usr/sbin/sshd ]] || die "/usr/sbin/sshd missing; run as root, or 'scripts/sshfs.sh install'"

log "building examples/read_ahead_shapes.rs (release, object-store)"
cargo build --release -q --features object-store --example read_ahead_shapes
bin=${CARGO_TARGET_DIR:-target}/release/examples/read_ahead_shapes
[[ -x $bin ]] || die "$bin was not built"

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/abi-shapes.XXXXXX")")
mkdir -p "$work"/{local,export,mnt,www}
# Our own instances on free ports, whatever else runs here (a port exported by an earlier `up`
# would be taken).
export HTTP_STATE=$work/http-state ABI_STATE_ROOT=$work
unset HTTP_PORT
cleanup() {
  set +e
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

report=$work/report.md
{
  echo "## read-ahead shapes, $(date -u +%Y-%m-%dT%H:%MZ), ${FILE_SIZE} MiB file, $(nproc) cores"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src 2>/dev/null || echo ' (src modified)')"
} >"$report"
run() {  # run LABEL ARGS... : one run of the example, its table appended to the report
  local label=$1; shift
  log "$label: $*"
  echo -e "\n#### $label" >>"$report"
  "$bin" "$@" | tee -a "$report" || die "$label: the run failed"
}
run "local file (warm page cache)" --path "$work/local/$name" --rounds "$LOCAL_ROUNDS"
run "SSHFS mount, direct_io" --path "$SSHFS_MNT/$name" --rounds "$ROUNDS"
run "HTTP (nginx) behind a $DELAY proxy" --url "$HTTP_URL/$name" --delay "$DELAY" --rounds "$ROUNDS"
run "HTTP (nginx), no delay" --url "$HTTP_URL/$name" --rounds "$ROUNDS"

if [[ -n ${OUT:-} ]]; then cp "$report" "$OUT" && log "report written to $OUT"; fi
log "done in $(( $(date +%s) - started )) s"
