#!/usr/bin/env bash
# Issue 29's ratios, as its goals state them: RUNS alternated rounds (default 5) over one file of
# FILE_SIZE bytes (64 MiB) on FTP (pyftpdlib) and WebDAV (rclone) through OpenDAL, nginx, S3 on
# SeaweedFS, and nginx behind the fault proxy capping each connection (20 MB/s, 2 ms). Each round
# runs the harness once per group, so the reader and its baseline are timed in the same minute:
# - ftp, webdav: `readahead` ÷ OpenDAL's default `Reader` (`opendal`), 100 B and 64 KiB requests;
# - nginx, s3: `readahead` ÷ the `stream` row (one streaming GET of the whole object);
# - capped: `readahead` ÷ the `stream` row and ÷ object_store's `BufReader` (64 KiB requests,
#   1 MiB buffers, as object_store's default).
# Prints every run's ratio, the medians and the load. Every harness run verifies every byte.
#
# Usage: scripts/bench-streaming.sh   (env: RUNS 5, FILE_SIZE 64MiB, REPEAT 16, CAPPED_REPEAT 2)
# Needs the servers' installs (scripts/{http,s3,ftp,webdav}-server.sh install) and python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh
runs=${RUNS:-5} file_size=${FILE_SIZE:-64MiB} repeat=${REPEAT:-16} capped_repeat=${CAPPED_REPEAT:-2}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "RUNS must be at least 1, got '$runs'"
need cargo python3
log "building the harness and the fault proxy (release)"
env -u OUT_DIR cargo build --release -q -p throughput-harness --features object-store,opendal \
  --example throughput
env -u OUT_DIR cargo build --release -q -p abi-fault-proxy --bin fault-proxy
target=${CARGO_TARGET_DIR:-target}
bin=$target/release/examples/throughput proxy_bin=$target/release/fault-proxy

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/abi-streaming.XXXXXX")")
mkdir -p "$work"/{www,s3,out}
export HTTP_STATE=$work/http-state S3_STATE=$work/s3-state FTP_STATE=$work/ftp-state
export WEBDAV_STATE=$work/webdav-state ABI_STATE_ROOT=$work
unset HTTP_PORT S3_PORT FTP_PORT WEBDAV_PORT
proxy_pid=
cleanup() {
  set +e
  [[ -n $proxy_pid ]] && stop_pid "$proxy_pid"
  scripts/ftp-server.sh down 2>/dev/null
  scripts/webdav-server.sh down 2>/dev/null
  scripts/http-server.sh down 2>/dev/null
  scripts/s3-server.sh down 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

name=f.bin
"$bin" --path "$work/www/$name" --write --file-size "$file_size" --write-buffer 1MiB \
  --readers none --no-progress >/dev/null
start nginx HTTP_URL scripts/http-server.sh up "$work/www"
start "the S3 server" S3_BUCKET scripts/s3-server.sh up "$work/s3"
scripts/s3-server.sh upload "$work/www/$name" "$name"
start "the FTP server" FTP_URL scripts/ftp-server.sh up "$work/www"
start "the WebDAV server" WEBDAV_URL scripts/webdav-server.sh up "$work/www"
"$proxy_bin" --upstream "${HTTP_URL#http://}" --latency-ms 2 --rate-mbps 20 \
  >"$work/proxy.env" 2>"$work/proxy.log" &
proxy_pid=$!
wait_ready 10 "the fault proxy" "$proxy_pid" grep -q FAULT_PROXY_URL= "$work/proxy.env" \
  || die "the fault proxy did not start: $(cat "$work/proxy.log")"
eval "$(grep '^FAULT_PROXY_URL=' "$work/proxy.env")"

common=(--capacities 64KiB --no-progress --budget 20s)
for round in $(seq "$runs"); do
  log "round $round of $runs (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  cut -d' ' -f1 /proc/loadavg >>"$work/out/load"
  "$bin" --path "ftp=$FTP_URL/$name" --path "webdav=$WEBDAV_URL/$name" --readers readahead,opendal \
    --sizes 100,65536 --repeat "$repeat" "${common[@]}" --json-out "$work/out/opendal-$round.json" >/dev/null
  "$bin" --path "nginx=$HTTP_URL/$name" --path "s3=s3://$S3_BUCKET/$name" --readers readahead \
    --sizes 100,65536 --repeat "$repeat" "${common[@]}" --json-out "$work/out/http-$round.json" >/dev/null
  "$bin" --path "capped=$FAULT_PROXY_URL/$name" --readers readahead,object-store-bufreader \
    --sizes 65536 --capacities 1MiB --hedge off --repeat "$capped_repeat" --no-progress \
    --budget 60s --json-out "$work/out/capped-$round.json" >/dev/null
done

python3 - "$work/out" "$runs" <<'PY'
import json, statistics, sys

out, runs = sys.argv[1], int(sys.argv[2])
load = open(f"{out}/load").read().split()
def rate(rows, source, reader, size=None):
    for r in rows:
        if r["source_name"] == source and r["reader"] == reader and (size is None or r["read_size"] == size):
            if not r["complete"] or r.get("mismatch") or r.get("error"):
                sys.exit(f"{source} {reader} {size}: incomplete or wrong: {r.get('error')}")
            return r["bytes_per_second"]
    sys.exit(f"no row {source} {reader} {size}")
goals = [  # (label, file, source, reader, baseline, size, goal)
    ("ftp ÷ OpenDAL Reader, 100 B", "opendal", "ftp", "readahead", "opendal", 100, 1.2),
    ("ftp ÷ OpenDAL Reader, 64 KiB", "opendal", "ftp", "readahead", "opendal", 65536, 1.0),
    ("webdav ÷ OpenDAL Reader, 100 B", "opendal", "webdav", "readahead", "opendal", 100, 1.2),
    ("webdav ÷ OpenDAL Reader, 64 KiB", "opendal", "webdav", "readahead", "opendal", 65536, 1.0),
    ("nginx ÷ stream, 100 B", "http", "nginx", "readahead", "stream", 100, 0.8),
    ("nginx ÷ stream, 64 KiB", "http", "nginx", "readahead", "stream", 65536, 0.9),
    ("s3 ÷ stream, 100 B", "http", "s3", "readahead", "stream", 100, 0.8),
    ("s3 ÷ stream, 64 KiB", "http", "s3", "readahead", "stream", 65536, 0.9),
    ("capped ÷ stream", "capped", "capped", "readahead", "stream", 65536, 3.0),
    ("capped ÷ object_store BufReader", "capped", "capped", "readahead", "object-store-bufreader", 65536, 3.0),
]
print(f"## {runs} alternated rounds; load at each: {' '.join(load)}")
for label, f, source, reader, base, size, goal in goals:
    ratios = []
    for k in range(1, runs + 1):
        rows = json.load(open(f"{out}/{f}-{k}.json"))
        ours = rate(rows, source, reader, size)
        theirs = rate(rows, source, base, None if base == "stream" else size)
        ratios.append(ours / theirs)
    median = statistics.median(ratios)
    mark = "met" if median >= goal else "NOT met"
    print(f"{label:34} median {median:.2f}x (goal {goal}x: {mark}); runs: "
          + " ".join(f"{r:.2f}" for r in ratios))
PY
