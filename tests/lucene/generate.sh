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

if [[ $# -ne 2 ]]; then
    echo "usage: $0 SEED OUTDIR" >&2
    exit 2
fi
seed=$1
outdir=$2

if ! [[ $seed =~ ^-?[0-9]+$ ]]; then
    echo "error: SEED must be an integer, got '$seed'" >&2
    exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

for tool in java javac; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: '$tool' not found; install a JDK (e.g. apt-get install openjdk-17-jdk-headless)" >&2
        exit 1
    fi
done

jar=${LUCENE_CORE_JAR:-}
if [[ -z $jar ]]; then
    for candidate in /usr/share/java/lucene-core-8*.jar /usr/share/java/lucene-core.jar; do
        if [[ -f $candidate ]]; then
            jar=$candidate
            break
        fi
    done
fi
if [[ -z $jar || ! -f $jar ]]; then
    echo "error: lucene-core 8.x jar not found (looked in /usr/share/java/lucene-core-8*.jar)." >&2
    echo "       Install the Debian package 'liblucene8-java' (apt-get install liblucene8-java)," >&2
    echo "       or set LUCENE_CORE_JAR=/path/to/lucene-core-8.x.jar" >&2
    exit 1
fi

mkdir -p "$outdir"

classes=$(mktemp -d "${TMPDIR:-/tmp}/lucene-vectors.XXXXXX")
trap 'rm -rf "$classes"' EXIT

javac -nowarn -encoding UTF-8 -cp "$jar" -d "$classes" "$here/WriteVectors.java"
java -cp "$jar:$classes" WriteVectors "$seed" \
    "$outdir/lucene-vectors.bin" "$outdir/lucene-vectors.txt"

echo "lucene-core jar: $jar" >&2
