#!/usr/bin/env bash
# Runs the cargo-fuzz targets, one after the other, each for a fixed time; fails on the first
# crash, hang or leak of memory. See fuzz/README.md.
#
#   fuzz/run.sh [SECONDS] [TARGET...]      default: 60 seconds, every target (decode ops)
#
#   fuzz/run.sh 40                         what CI runs
#   fuzz/run.sh 3600 ops                   a long campaign on one target
#
# Each target starts from its committed seeds (fuzz/corpus/<target>/) and from what earlier
# runs found (fuzz/work/<target>/, not committed; FUZZ_WORK=DIR puts it elsewhere), and adds
# what it finds to the latter. A crashing input lands in fuzz/artifacts/<target>/.
# The toolchain may be stable: cargo-fuzz runs with RUSTC_BOOTSTRAP=1 and no sanitizer
# (`-s none`); debug assertions are on (`-a`), so the crate's own invariant checks run too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode ops)
work=${FUZZ_WORK:-fuzz/work}

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

export RUSTC_BOOTSTRAP=1
flags=(-s none --release -a)
# Both targets in one build, before the clock of the first run starts.
cargo fuzz build "${flags[@]}"
for target in "${targets[@]}"; do
  mkdir -p "$work/$target"
  echo "fuzz: $target for ${seconds}s (seeds fuzz/corpus/$target, corpus $work/$target)"
  if ! cargo fuzz run "$target" "$work/$target" "fuzz/corpus/$target" "${flags[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=60 -print_final_stats=1; then
    echo "fuzz: $target FAILED; the input is in fuzz/artifacts/$target/:" >&2
    ls -t "fuzz/artifacts/$target" 2>/dev/null | head -3 >&2 || true
    echo "fuzz: replay it with: RUSTC_BOOTSTRAP=1 cargo fuzz run $target fuzz/artifacts/$target/<file> ${flags[*]}" >&2
    exit 1
  fi
done
