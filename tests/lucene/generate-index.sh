#!/usr/bin/env bash
# Writes a small Lucene 8 index with Apache Lucene itself, for the `lucene_index` example's
# tests: several segments, compound and not, deletes, doc-values updates, non-ASCII user data.
#
# Usage: tests/lucene/generate-index.sh SEED OUTDIR [DOCS_PER_SEGMENT WORDS_PER_DOC]
#   writes the index to OUTDIR/index/ and Lucene's own reading of its commit to
#   OUTDIR/expected.txt. The two optional numbers make a large index for benchmarks.
#
# Needs a JDK and lucene-core 8.x (apt-get install liblucene8-java, or LUCENE_CORE_JAR).
# The committed fixture was made with: tests/lucene/generate-index.sh 20261201 tests/fixtures/lucene-index
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

check_args "SEED OUTDIR [DOCS_PER_SEGMENT WORDS_PER_DOC]" "2 4" "$@"
seed=$1
outdir=$2

find_lucene
classes=$(compile_java "$here/WriteIndex.java")
trap 'rm -rf "$classes"' EXIT
rm -rf "$outdir/index" "$outdir/expected.txt"
mkdir -p "$outdir/index"
java -cp "$LUCENE_CORE_JAR:$classes" WriteIndex "$seed" "$outdir/index" "$outdir/expected.txt" "${@:3}"
echo "lucene-core jar: $LUCENE_CORE_JAR" >&2
