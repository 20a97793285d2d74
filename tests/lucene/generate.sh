#!/usr/bin/env bash
# Regenerates the Lucene DataInput interop vectors with Apache Lucene itself.
#
# Usage: tests/lucene/generate.sh SEED OUTDIR
#   writes OUTDIR/lucene-vectors.bin and OUTDIR/lucene-vectors.txt
#
# Needs a JDK (javac, java) and lucene-core 8.x. On Debian/Ubuntu:
#   apt-get install liblucene8-java
# or point LUCENE_CORE_JAR at a lucene-core-8.*.jar.
# The committed fixture was made with: tests/lucene/generate.sh 20261130 tests/fixtures
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
check_args "SEED OUTDIR" 2 "$@"
seed=$1
outdir=$2
find_lucene
jar=$LUCENE_CORE_JAR

mkdir -p "$outdir"

classes=$(compile_java "$here/WriteVectors.java")
trap 'rm -rf "$classes"' EXIT
java -cp "$jar:$classes" WriteVectors "$seed" \
    "$outdir/lucene-vectors.bin" "$outdir/lucene-vectors.txt"

echo "lucene-core jar: $jar" >&2
