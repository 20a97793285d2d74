#!/usr/bin/env bash
# throughput-backends.sh: the classic side-by-side test, in one table. Stands up what this machine
# can on 127.0.0.1 -- a local file, an SSHFS mount over a loopback sshd (scripts/sshfs.sh), nginx
# (scripts/http-server.sh) and an S3 server (scripts/s3-server.sh) -- puts the same file on each,
# and times all four with one run of the throughput harness (harness/, release build with the
# object-store feature): per backend the write phase where it takes writes (local, mount), the
# limit row (1 MiB reads straight from it, the dd of that backend), and every reader, in one
# table with a source column. Then it checks, from the JSON report, what must hold whatever the
# speeds:
#   - four sources, named local, sshfs, http and s3, each with a complete limit row;
#   - a write row for local and sshfs, none for http and s3;
#   - every row verified (the harness exits 1 otherwise), and all four sources holding the same
#     bytes (the same checksum).
# Tears everything down on exit, whatever happened.
#
#   scripts/throughput-backends.sh [HARNESS ARGS...]    as root (installs what is missing: apt,
#                                                       npm), or a user who may use FUSE
#
# Extra arguments go to the harness after the script's own (later ones win: --sizes 1,100, ...).
# Env: FILE_SIZE (default 16MiB), WRITE_BUFFER (default 1KiB, as the classic test wrote),
#      SIZES (default 8,100,8192,65536; not 1: s3rver answers the 1-byte range `bytes=0-0` with
#      the whole object, so the unbuffered reader's first 1-byte request fails there, FAILED in
#      the table), CAPACITIES (default 64KiB), BUDGET (default 10s),
#      SLOW_BUDGET (default 1s: the unbuffered reader and the byte loop), OUT_DIR (keep the JSON
#      report, the SVG chart and the table there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh

FILE_SIZE=${FILE_SIZE:-16MiB}
WRITE_BUFFER=${WRITE_BUFFER:-1KiB}
SIZES=${SIZES:-8,100,8192,65536}
CAPACITIES=${CAPACITIES:-64KiB}
BUDGET=${BUDGET:-10s}
SLOW_BUDGET=${SLOW_BUDGET:-1s}
started=$(date +%s%N)
elapsed() { printf '%d.%01d' $(( ($(date +%s%N) - started) / 1000000000 )) $(( ($(date +%s%N) - started) / 100000000 % 10 )); }

if [[ $EUID -eq 0 ]]; then
  scripts/sshfs.sh install
  scripts/http-server.sh install
  scripts/s3-server.sh install
fi
need cargo python3
log "building the harness (release, object-store)"
cargo build --release -q -p throughput-harness --features object-store --example throughput
bin=${CARGO_TARGET_DIR:-target}/release/examples/throughput
[[ -x $bin ]] || die "$bin was not built"
log "built after $(elapsed)s"

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/abi-backends.XXXXXX")")
mkdir -p "$work"/{local,export,mnt,www,s3,out}
# Our own server instances, whatever else runs on this machine (CI's, a user's), on free ports:
# a port exported by an earlier `up` (CI exports HTTP_PORT) would be taken.
export HTTP_STATE=$work/http-state S3_STATE=$work/s3-state
unset HTTP_PORT S3_PORT
cleanup() {
  set +e
  scripts/sshfs.sh down "$work/mnt" 2>/dev/null
  scripts/http-server.sh down 2>/dev/null
  scripts/s3-server.sh down 2>/dev/null
  # Never recurse into a mount that is still there: that would delete through it.
  if ! awk -v m="$work/mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "starting sshd + sshfs, nginx, the S3 server on 127.0.0.1"
set -a
eval "$(scripts/sshfs.sh up "$work/export" "$work/mnt")"
eval "$(scripts/http-server.sh up "$work/www")"
eval "$(scripts/s3-server.sh up "$work/s3")"
set +a

# The same file on each: the harness's own pattern (so the whole run verifies every byte
# against it), written once by the harness (--readers none: the write phase and the limit row),
# served by nginx as it is and uploaded to the S3 server. The local file and the mount get it
# again from the run's write phase, timed.
name=throughput.bin
"$bin" --path "$work/www/$name" --write --file-size "$FILE_SIZE" --write-buffer 1MiB \
  --readers none --no-progress >/dev/null
scripts/s3-server.sh upload "$work/www/$name" "$name"
log "backends up after $(elapsed)s; timing local, sshfs, http and s3"

out=${OUT_DIR:-$work/out}
mkdir -p "$out"
"$bin" \
  --path "local=$work/local/$name" \
  --path "sshfs=$SSHFS_MNT/$name" \
  --path "http=$HTTP_URL/$name" \
  --path "s3=s3://$S3_BUCKET/$name" \
  --write --file-size "$FILE_SIZE" --write-buffer "$WRITE_BUFFER" \
  --sizes "$SIZES" --capacities "$CAPACITIES" --budget "$BUDGET" --slow-budget "$SLOW_BUDGET" \
  --no-progress --json-out "$out/report.json" --plot "$out/backends.svg" "$@" \
  | tee "$out/table.txt"
log "table printed after $(elapsed)s"

python3 - "$out/report.json" <<'PY'
import json, sys

rows = json.load(open(sys.argv[1]))
failures = []
names = []
for r in rows:
    if r["source_name"] not in names:
        names.append(r["source_name"])
if names != ["local", "sshfs", "http", "s3"]:
    failures.append(f"sources {names}, expected local, sshfs, http, s3")
writes = [r["source_name"] for r in rows if r["row"] == "write"]
if writes != ["local", "sshfs"]:
    failures.append(f"write rows for {writes}, expected local and sshfs")
limits = {r["source_name"]: r for r in rows if r["row"] == "limit"}
for name, limit in limits.items():
    if not limit["complete"]:
        failures.append(f"{name}: the limit row did not read the whole file")
if len({limit["checksum"] for limit in limits.values()}) != 1:
    failures.append("the sources hold different bytes: "
                    + ", ".join(f"{n} {l['checksum']}" for n, l in limits.items()))
bad = [r for r in rows if r["verified"] is False]
for r in bad:
    failures.append(f"{r['source_name']} {r['reader_name']} {r['read_size']} B: {r['mismatch']}")
for name, limit in limits.items():
    best = max((r for r in rows if r["source_name"] == name and r["row"] == "read"
                and r["read_size"] == 65536), key=lambda r: r["bytes_per_second"], default=None)
    line = f"backends: {name:5}  limit {limit['mb_per_second']:8.1f} MB/s"
    if best:
        line += f"; at 64 KiB requests best {best['reader_name']} ({best['ratio_to_limit']:.2f}x the limit)"
    print(line)
if failures:
    sys.exit("backends: FAILED: " + "; ".join(failures))
print(f"backends: {len(rows)} rows over {len(names)} sources, every row verified, one file on all")
PY
log "passed in $(elapsed)s (report: $out)"
