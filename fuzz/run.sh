#!/usr/bin/env bash
# Runs the cargo-fuzz targets, one after the other (or all at once), each for a fixed time; fails
# on the first crash, hang or leak of memory. See fuzz/README.md.
#
#   fuzz/run.sh [SECONDS] [TARGET...]      default: 60 seconds, every target (decode ops)
#
#   fuzz/run.sh 40                         40 s per target, one after the other
#   FUZZ_PARALLEL=1 fuzz/run.sh 40         what CI runs: every target at once, one core each
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
# Each target's output, for the count of operations at the end.
logs=$(mktemp -d "${TMPDIR:-/tmp}/abi-fuzz-logs.XXXXXX")
trap 'rm -rf "$logs"' EXIT
flags=(-s none --release -a)
# Both targets in one build, before the clock of the first run starts.
cargo fuzz build "${flags[@]}"

# run_target TARGET: fuzzes TARGET for $seconds; on a failure says where the input is.
run_target() {
  local target=$1
  mkdir -p "$work/$target"
  echo "fuzz: $target for ${seconds}s (seeds fuzz/corpus/$target, corpus $work/$target)"
  if ! cargo fuzz run "$target" "$work/$target" "fuzz/corpus/$target" "${flags[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=60 -print_final_stats=1; then
    echo "fuzz: $target FAILED; the input is in fuzz/artifacts/$target/:" >&2
    ls -t "fuzz/artifacts/$target" 2>/dev/null | head -3 >&2 || true
    echo "fuzz: replay it with: RUSTC_BOOTSTRAP=1 cargo fuzz run $target fuzz/artifacts/$target/<file> ${flags[*]}" >&2
    return 1
  fi
}

# summary: adds up the operations the targets executed (each prints "fuzz ops: N operations
# in M cases" when it exits: fuzz/src/count.rs) and says how many; with FUZZ_MIN_OPS=N, fails
# if that is fewer than N.
summary() {
  local total=0 parts=() target ops cases
  for target in "${targets[@]}"; do
    read -r ops cases < <(awk '/^fuzz ops: / { o = $3; c = $6 } END { print o + 0, c + 0 }' \
      "$logs/$target.log")
    total=$(( total + ops ))
    parts+=("$target $ops in $cases cases")
  done
  local joined
  joined=$(printf '%s, ' "${parts[@]}")
  echo "fuzz: $total operations checked against the model in ${seconds}s per target (${joined%, })"
  if [[ -n ${FUZZ_MIN_OPS:-} ]] && (( total < FUZZ_MIN_OPS )); then
    echo "fuzz: FAILED: fewer than FUZZ_MIN_OPS=$FUZZ_MIN_OPS operations" >&2
    return 1
  fi
}

if [[ ${FUZZ_PARALLEL:-0} != 1 ]]; then
  for target in "${targets[@]}"; do
    run_target "$target" 2>&1 | tee "$logs/$target.log" || exit 1
  done
  summary
  exit
fi
# FUZZ_PARALLEL=1: every target at once, each on its own core, for the same time and from the
# same seeds as one after the other; each target's output is printed when all are done (in
# full for a target that failed, its last lines otherwise).
pids=()
for target in "${targets[@]}"; do
  run_target "$target" >"$logs/$target.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  if wait "${pids[$i]}"; then
    echo "fuzz: $target passed; the end of its output:"
    tail -n 20 "$logs/$target.log"
  else
    failed+=("$target")
    echo "fuzz: $target FAILED; its output:" >&2
    cat "$logs/$target.log" >&2
  fi
done
[[ ${#failed[@]} -eq 0 ]] || { echo "fuzz: FAILED: ${failed[*]}" >&2; exit 1; }
summary
