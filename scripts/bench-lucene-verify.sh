#!/usr/bin/env bash
# Times whole-index verification: Lucene's own CodecUtil.checksumEntireFile over MMapDirectory
# (JIT warm), one file at a time, against the `lucene_index` example's `--bench` mode, one file
# at a time and as many at a time as there are cores, on the same files, in the same run,
# alternating, with the page cache warm.
#
# Usage: scripts/bench-lucene-verify.sh [DIR]
#   DIR holds the index (made there if it has none: about 600 MB; default
#   target/lucene-verify-index). Prints every pass, then the ratios of the best ones.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
dir=${1:-$root/target/lucene-verify-index}
source tests/lucene/lib.sh
find_lucene

if ! ls "$dir"/index/segments_* >/dev/null 2>&1; then
    echo "writing a large index to $dir (once) ..." >&2
    tests/lucene/generate-index.sh 42 "$dir" 200000 100
fi
du -sh "$dir/index" >&2
classes=$(compile_java tests/lucene/ChecksumIndex.java)
trap 'rm -rf "$classes"' EXIT
cargo build --release --quiet --example lucene_index
rust=$root/target/release/examples/lucene_index

rounds=6
cores=$(nproc)
: > "$dir/passes.txt"
for turn in 1 2; do
    java -cp "$LUCENE_CORE_JAR:$classes" ChecksumIndex "$dir/index" $rounds | sed 's/^/lucene /' | tee -a "$dir/passes.txt"
    "$rust" "$dir/index" --bench $rounds | sed 's/^/ours /' | tee -a "$dir/passes.txt"
    "$rust" "$dir/index" --bench $rounds --tasks "$cores" | sed "s/^/ours_x$cores /" | tee -a "$dir/passes.txt"
done
# Best pass of each (the first passes warm the JIT and the page cache); same files and CRCs.
awk '
  { who=$1; secs=$9; sum=$11; bytes=$7
    if (!(who in best) || secs < best[who]) best[who]=secs
    crc[who]=sum; size[who]=bytes }
  END {
    for (who in best) {
      if (crc[who] != crc["lucene"] || size[who] != size["lucene"]) {
        print "MISMATCH: " who " did not verify the same bytes as Lucene"; exit 1 }
    }
    printf "best pass of %d bytes: lucene %.3f s (%.2f GB/s)\n", size["lucene"], best["lucene"], size["lucene"] / best["lucene"] / 1e9
    for (who in best) if (who != "lucene")
      printf "  %s %.3f s (%.2f GB/s): %.2fx Lucene\n", who, best[who], size[who] / best[who] / 1e9, best["lucene"] / best[who]
  }' "$dir/passes.txt"
