#!/usr/bin/env bash
# nfs-vs-nfs-cat.sh: a whole-file read over NFS by this crate against libnfs's `nfs-cat`, on
# the same file (issue 30's goal: at least 1.0x nfs-cat's throughput, the median of 5).
# Stands up nfs-ganesha (scripts/nfs-server.sh) on 127.0.0.1 over a temporary folder holding
# one file of FILE_SIZE random bytes, checks that both commands copy exactly its bytes, then
# times ROUNDS alternated runs of each -- ours, nfs-cat, ours, ... -- as whole processes
# (connect, MOUNT, LOOKUP, the reads, output to /dev/null), and prints every run, each side's
# median and the ratio (nfs-cat's median time / ours: above 1 is faster than nfs-cat), with
# the load average before and after. Ours is the `nfs_cat` example (release, feature nfs):
# NfsSource under an AsyncBufferedInput with the default read-ahead, 1 MiB requests into
# one buffer. nfs-cat (libnfs-utils) reads one 1 MiB READ at a time on one connection.
#
#   scripts/nfs-vs-nfs-cat.sh            as root, or with nfs-ganesha, rpcbind, libnfs-utils
#                                        installed (scripts/nfs-server.sh install)
#
# Env: FILE_SIZE (bytes, default 67108864: 64 MiB), ROUNDS (default 5), NFS_CAT_BIN (our
# binary; default: built here), MIN_RATIO (fail if the ratio is below it; default: report only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh

FILE_SIZE=${FILE_SIZE:-67108864}
ROUNDS=${ROUNDS:-5}
[[ $FILE_SIZE =~ ^[1-9][0-9]*$ ]] || die "FILE_SIZE must be a number of bytes, got '$FILE_SIZE'"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number, got '$ROUNDS'"
[[ $EUID -eq 0 ]] && scripts/nfs-server.sh install
need cargo python3 nfs-cat
if [[ -z ${NFS_CAT_BIN:-} ]]; then
  log "building the nfs_cat example (release, feature nfs)"
  env -u OUT_DIR cargo build --release -q --features nfs --example nfs_cat
  NFS_CAT_BIN=${CARGO_TARGET_DIR:-target}/release/examples/nfs_cat
fi
[[ -x $NFS_CAT_BIN ]] || die "$NFS_CAT_BIN is not an executable"

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/abi-nfs-cat.XXXXXX")")
export NFS_STATE=$work/nfs-state
unset NFS_PORT NFS_MOUNT_PORT
cleanup() { set +e; scripts/nfs-server.sh down 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/export"
head -c "$FILE_SIZE" /dev/urandom >"$work/export/f.bin"
env=$(scripts/nfs-server.sh up "$work/export") || die "the NFS server did not start (its log is above)"
unset NFS_URL
eval "$env"
[[ -n ${NFS_URL:-} ]] || die "scripts/nfs-server.sh up printed no NFS_URL: $env"
ours="$NFS_URL/f.bin?mountport=$NFS_MOUNT_PORT"
theirs="nfs://127.0.0.1$NFS_EXPORT/f.bin?version=3&nfsport=$NFS_PORT&mountport=$NFS_MOUNT_PORT"
"$NFS_CAT_BIN" "$ours" 2>/dev/null | cmp - "$work/export/f.bin" || die "nfs_cat $ours did not copy the file's bytes"
nfs-cat "$theirs" | cmp - "$work/export/f.bin" || die "nfs-cat $theirs did not copy the file's bytes"
log "both copy the file's $FILE_SIZE bytes exactly; $ROUNDS alternated runs (load: $(cut -d' ' -f1-3 /proc/loadavg))"

python3 - "$ROUNDS" "$FILE_SIZE" "${MIN_RATIO:-}" "$NFS_CAT_BIN" "$ours" "$theirs" <<'PY'
import statistics, subprocess, sys, time

rounds, size, min_ratio = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
commands = {"ours (nfs_cat example)": [sys.argv[4], sys.argv[5]], "nfs-cat": ["nfs-cat", sys.argv[6]]}
times = {name: [] for name in commands}
for r in range(rounds):
    line = []
    for name, cmd in commands.items():
        t = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - t
        if done.returncode != 0:
            sys.exit(f"{name} failed: {done.stderr.decode(errors='replace').strip()}")
        times[name].append(seconds)
        line.append(f"{name} {seconds * 1e3:7.1f} ms ({size / seconds / 1e6:6.0f} MB/s)")
    print(f"round {r + 1}: " + "; ".join(line))
medians = {name: statistics.median(ts) for name, ts in times.items()}
for name, ts in times.items():
    print(f"{name:24} median {medians[name] * 1e3:7.1f} ms, {size / medians[name] / 1e6:6.0f} MB/s "
          f"(runs: {', '.join(f'{t * 1e3:.1f}' for t in ts)} ms)")
ours, theirs = medians["ours (nfs_cat example)"], medians["nfs-cat"]
ratio = theirs / ours
print(f"ratio: ours {ratio:.2f}x nfs-cat's throughput (median of {rounds})")
if min_ratio and ratio < float(min_ratio):
    sys.exit(f"TOO SLOW: {ratio:.2f}x, under MIN_RATIO {min_ratio}")
PY
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
