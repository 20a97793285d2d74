#!/usr/bin/env bash
# ci-sshfs-check.sh: the throughput harness on a real network filesystem, for CI.
#
# Mounts a fresh folder over sshfs on loopback (scripts/sshfs.sh: direct_io,no_readahead, so every
# read() on the mount is one SFTP round trip, as on an uncached network filesystem), writes a file
# through the mount and times it with the `throughput` example of the harness crate (harness/,
# release build, with HARNESS_FEATURES: CI passes scripts/throughput-backends.sh's, so that it
# builds the harness once). Prints the table, then asserts, from the JSON report (one row per
# row of the table: the write and limit rows, then the cells), only the ordering, never
# absolute speed:
#   - at 100-byte requests AsyncBufferedInput reads at least MIN_RATIO times faster than the
#     unbuffered source, with every window size timed;
#   - it makes far fewer source reads (round trips) per byte than the unbuffered source;
#   - the mount's limit row (1 MiB reads straight from it) read the whole file;
#   - every row was verified byte for byte in its untimed pass (the example itself exits 1
#     otherwise).
# Then runs the ignored FUSE test of tests/it/source/page_cache.rs on the mount (FileSource notices
# that FUSE refuses RWF_NOWAIT reads and reads through the blocking pool).
# Tears everything down on exit, whatever happened.
#
#   scripts/ci-sshfs-check.sh        as root (CI is) or a user who may use FUSE
#
# Env: MIN_RATIO (default 5), FILE_SIZE (default 8MiB), SLOW_BUDGET (time budget of each cell
#      of the unbuffered reader and the byte loop, default 3s; the other readers must finish),
#      JSON_OUT (keep the JSON report there), HARNESS_FEATURES (default object-store). Takes ~10-20 s after the release build, even at
#      ~200 us per round trip: the unbuffered 100-byte cell is cut by its budget.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh

MIN_RATIO=${MIN_RATIO:-5}
FILE_SIZE=${FILE_SIZE:-8MiB}
SLOW_BUDGET=${SLOW_BUDGET:-3s}
need cargo python3

scripts/sshfs.sh install
cargo build --release -p throughput-harness --features "${HARNESS_FEATURES:-object-store}" --example throughput
bin=${CARGO_TARGET_DIR:-target}/release/examples/throughput
[[ -x $bin ]] || die "$bin was not built"

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/abi-ci-sshfs.XXXXXX")")
mkdir -p "$work/data" "$work/mnt"
cleanup() {
  scripts/sshfs.sh down "$work/mnt" || true
  # Never recurse into a mount that is still there: that would delete through it.
  if ! awk -v m="$work/mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

scripts/sshfs.sh up "$work/data" "$work/mnt" >/dev/null
file=$work/mnt/throughput.bin
log "timing $file ($FILE_SIZE) over sshfs"
"$bin" --path "$file" --write --file-size "$FILE_SIZE" --write-buffer 64KiB \
  --sizes 100,8192,65536 --capacities 8KiB,64KiB --budget 60s --slow-budget "$SLOW_BUDGET" --no-progress \
  --json-out "$work/report.json"
[[ -z ${JSON_OUT:-} ]] || cp "$work/report.json" "$JSON_OUT"

python3 - "$work/report.json" "$MIN_RATIO" <<'PY'
import json, sys

rows = json.load(open(sys.argv[1]))
cells = [r for r in rows if r["row"] == "read"]
min_ratio = float(sys.argv[2])

def cell(reader, size, capacity):
    for c in cells:
        if (c["reader"], c["read_size"], c["capacity"]) == (reader, size, capacity):
            return c
    sys.exit(f"sshfs check: FAILED: no {reader} cell at {size}-byte requests, window {capacity}")

unbuffered = cell("unbuffered", 100, None)
failures = []
limit = next(r for r in rows if r["row"] == "limit")
print(f"sshfs check: limit row (1 MiB reads straight from the mount): {limit['mb_per_second']:.3g} MB/s")
if not limit["complete"]:
    failures.append("the limit row did not read the whole file")
failures += [f"{r['reader_name']} {r['read_size']} B: not verified ({r['mismatch'] or r['error']})"
             for r in rows if r["verified"] is False]
for capacity in sorted({c["capacity"] for c in cells if c["reader"] == "buffered"}):
    buffered = cell("buffered", 100, capacity)
    ratio = buffered["bytes_per_second"] / max(unbuffered["bytes_per_second"], 1e-9)
    print(f"sshfs check: 100-byte requests: AsyncBufferedInput ({capacity} B window) "
          f"{buffered['mb_per_second']:.3g} MB/s in {buffered['underlying_reads']} round trips, "
          f"unbuffered {unbuffered['mb_per_second']:.3g} MB/s in {unbuffered['underlying_reads']}: "
          f"{ratio:.0f}x (need >= {min_ratio:g}x)")
    if not buffered["complete"]:
        failures.append(f"AsyncBufferedInput ({capacity} B window) did not finish within the budget")
    if ratio < min_ratio:
        failures.append(f"AsyncBufferedInput ({capacity} B window) is only {ratio:.2f}x the unbuffered reader")
    # Round trips per byte read (the unbuffered cell is usually cut short by the budget).
    per_byte = lambda c: c["underlying_reads"] / max(c["bytes"], 1)
    if per_byte(buffered) * 10 > per_byte(unbuffered):
        failures.append(f"AsyncBufferedInput ({capacity} B window) made {buffered['underlying_reads']} source reads "
                        f"for {buffered['bytes']} bytes, not far fewer per byte than the unbuffered "
                        f"{unbuffered['underlying_reads']} for {unbuffered['bytes']}")
if failures:
    sys.exit("sshfs check: FAILED: " + "; ".join(failures))
print("sshfs check: harness passed")
PY

log "FileSource on the FUSE mount"
ABI_FUSE_DIR=$work/mnt cargo test --all-features --test it -- --ignored --exact \
  source::page_cache::a_file_system_without_nowait_reads_turns_them_off
log "sshfs check: passed"
