#!/usr/bin/env bash
# Times opening and verifying a Lucene index on S3 (a SeaweedFS cluster on 127.0.0.1) behind the
# fault proxy adding LATENCY_MS to each response (issue 32's goals): `lucene_index s3://…` (list,
# read the commit and every .si, verify every file), the same with `--cache` of half the index's
# size, and the baseline: every file of the index downloaded by 8 parallel `curl` GETs through
# the same proxy (one curl per file, `xargs -P 8`). RUNS alternated rounds of the three; prints
# every run, the medians and the ratios. The outputs of the two `lucene_index` runs must match.
#
# Usage: scripts/bench-lucene-s3.sh [DIR]
#   DIR holds the index (written there by Lucene if it has none, DOCS documents per segment, 4
#   segments: the default 14300 makes about 68 MB; default DIR target/lucene-s3-index).
#   Env: LATENCY_MS (10), RUNS (5), DOCS (14300), CONCURRENCY (lucene_index's default if unset).
# Needs a JDK and lucene-core 8 (for a new index), `weed` (scripts/s3-server.sh install), curl.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh
target=${CARGO_TARGET_DIR:-target}
dir=${1:-$target/lucene-s3-index}
latency=${LATENCY_MS:-10} runs=${RUNS:-5}
need cargo curl weed xargs awk
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "RUNS must be at least 1, got '$runs'"

if ! ls "$dir"/index/segments_* >/dev/null 2>&1; then
  log "writing an index to $dir (once) ..."
  tests/lucene/generate-index.sh 42 "$dir" "${DOCS:-14300}" 100
fi
log "building lucene_index (release, object-store + cache) and the fault proxy"
cargo build --release -q --features object-store,cache --example lucene_index
cargo build --release -q -p abi-fault-proxy --bin fault-proxy
bin=$target/release/examples/lucene_index proxy_bin=$target/release/fault-proxy

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/abi-lucene-s3.XXXXXX")")
export S3_STATE=$work/s3-state ABI_STATE_ROOT=$work
unset S3_PORT
proxy_pid=
cleanup() {
  set +e
  [[ -n $proxy_pid ]] && stop_pid "$proxy_pid"
  scripts/s3-server.sh down >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

set -a
eval "$(scripts/s3-server.sh up "$work/s3")"
set +a
files=() bytes=0
for f in "$dir"/index/*; do
  name=${f##*/}
  scripts/s3-server.sh upload "$f" "index/$name"
  files+=("$name") bytes=$((bytes + $(stat -c %s "$f")))
done
log "uploaded ${#files[@]} files, $bytes bytes; starting the fault proxy (+${latency} ms per response)"
"$proxy_bin" --upstream "${S3_ENDPOINT#http://}" --latency-ms "$latency" >"$work/proxy.env" 2>"$work/proxy.log" &
proxy_pid=$!
wait_for 10 "the fault proxy" grep -q FAULT_PROXY_URL "$work/proxy.env"
eval "$(cat "$work/proxy.env")"
# Everything below goes through the proxy: object_store's endpoint, and curl's URLs.
export AWS_ENDPOINT=$FAULT_PROXY_URL S3_ENDPOINT=$FAULT_PROXY_URL
url=s3://$S3_BUCKET/index/
half=$((bytes / 2))
flags=(${CONCURRENCY:+--concurrency "$CONCURRENCY"})

curl_all() {
  printf '%s\n' "${files[@]}" | xargs -P 8 -I{} curl -sf -o /dev/null \
    --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$FAULT_PROXY_URL/$S3_BUCKET/index/{}"
}
plain() { "$bin" "$url" "${flags[@]}" >"$work/plain.out"; }
cached() { "$bin" "$url" "${flags[@]}" --cache "$half" >"$work/cached.out"; }
# seconds CMD : runs CMD, prints its wall time in seconds
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" || die "$* failed"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# One warm-up of each (connections, the store's own caches), then the rounds, alternating.
curl_all; plain; cached
cmp -s "$work/plain.out" "$work/cached.out" || die "--cache printed something else: $(diff "$work/plain.out" "$work/cached.out")"
tail -1 "$work/plain.out" >&2
: >"$work/times"
for round in $(seq "$runs"); do
  echo "curl $(seconds curl_all)" >>"$work/times"
  echo "lucene_index $(seconds plain)" >>"$work/times"
  echo "lucene_index_cache $(seconds cached)" >>"$work/times"
  cmp -s "$work/plain.out" "$work/cached.out" || die "round $round: the outputs differ"
done
echo "## ${#files[@]} files, $bytes bytes on SeaweedFS S3 behind +${latency} ms per response;" \
  "cache $half bytes; $(nproc) cores; $runs alternated rounds"
awk '
  { t[$1] = t[$1] " " $2; n[$1]++; v[$1, n[$1]] = $2 }
  function median(who,   a, i, j, k, tmp) {
    k = n[who]; for (i = 1; i <= k; i++) a[i] = v[who, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { tmp = a[i]; a[i] = a[j]; a[j] = tmp }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    split("curl lucene_index lucene_index_cache", order, " ")
    for (i = 1; i <= 3; i++) printf "%-19s median %.3f s; runs:%s\n", order[i], median(order[i]), t[order[i]]
    c = median("curl"); p = median("lucene_index"); q = median("lucene_index_cache")
    printf "lucene_index / 8 parallel curl GETs: %.2fx (goal <= 1.0)\n", p / c
    printf "lucene_index --cache / lucene_index: %.2fx (goal <= 1.1)\n", q / p
  }' "$work/times"
