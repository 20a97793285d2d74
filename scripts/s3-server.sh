#!/usr/bin/env bash
# s3-server.sh: an S3-compatible server on 127.0.0.1 with one bucket, for path-style requests.
# s3rver (npm s3rver@3.7.1, installed under $S3RVER_PREFIX, default /opt/abi-s3rver); moto
# (PyPI moto[server]) is the fallback when s3rver cannot be installed or S3_IMPL=moto.
#
#   scripts/s3-server.sh install          npm install s3rver@3.7.1 (else pip install 'moto[server]')
#   scripts/s3-server.sh up DIR           start it; DIR is s3rver's data folder (its own layout, kept
#                                         after down; moto keeps objects in memory). Prints on stdout:
#       S3_ENDPOINT=http://127.0.0.1:<port>  S3_BUCKET=<bucket>  AWS_ACCESS_KEY_ID=S3RVER
#       AWS_SECRET_ACCESS_KEY=S3RVER  AWS_REGION=us-east-1
#       AWS_ENDPOINT=<same as S3_ENDPOINT>  AWS_ALLOW_HTTP=true   (for object_store's AmazonS3Builder::from_env)
#   scripts/s3-server.sh upload FILE KEY  PUT FILE into the bucket as KEY (KEY: [A-Za-z0-9._/-]+)
#   scripts/s3-server.sh get KEY [A-B]    GET the object (bytes A..B inclusive) to stdout
#   scripts/s3-server.sh down             stop it (safe to repeat)
#   scripts/s3-server.sh status           exit 0 if it answers and the bucket exists
#
#   e.g.  set -a; eval "$(scripts/s3-server.sh up /tmp/s3data)"; set +a
#         scripts/s3-server.sh upload /tmp/blob.bin dir/blob.bin
#
# By hand: curl --aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER \
#   -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$S3_ENDPOINT/$S3_BUCKET/KEY"  (s3rver needs that header)
# One instance at a time; state (pid, log, the printed variables) in $S3_STATE (default /tmp/abi-s3).
# Env: S3_PORT (default: a free port), S3_BUCKET (default abi-test), S3_IMPL (s3rver|moto, default:
# s3rver if installed, else moto), S3_TIMEOUT (seconds to wait for readiness, default 30).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ST=${S3_STATE:-/tmp/abi-s3}
PREFIX=${S3RVER_PREFIX:-/opt/abi-s3rver}
S3RVER=$PREFIX/node_modules/.bin/s3rver
TIMEOUT=${S3_TIMEOUT:-30}
KEY_ID=S3RVER SECRET=S3RVER REGION=us-east-1

impl() {
  case ${S3_IMPL:-} in
    s3rver|moto) echo "$S3_IMPL" ;;
    '') if [[ -x $S3RVER ]]; then echo s3rver; elif command -v moto_server >/dev/null; then echo moto; else
          die "neither s3rver ($S3RVER) nor moto_server is installed; run '$0 install'"; fi ;;
    *) die "S3_IMPL must be s3rver or moto, not '$S3_IMPL'" ;;
  esac
}

s3curl() {  # s3curl ENDPOINT PATH CURL-ARGS... : a SigV4-signed request
  local ep=$1 path=$2; shift 2
  curl -sS --fail-with-body --max-time 30 --aws-sigv4 "aws:amz:$REGION:s3" --user "$KEY_ID:$SECRET" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@" "$ep/$path"
}

bucket_ok() { s3curl "$1" "$2" -o /dev/null -I --max-time 2; }

require_up() { [[ -f $ST/env ]] || die "not up (no $ST/env); run '$0 up DIR' first"; }
state_var() { sed -n "s/^$1=//p" "$ST/env"; }  # state_var NAME : a value printed by 'up'


cmd_install() {
  if [[ ${S3_IMPL:-} != moto ]]; then
    if [[ -x $S3RVER ]]; then log "s3rver already installed in $PREFIX"; return 0; fi
    need npm
    if npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error s3rver@3.7.1 >&2 && [[ -x $S3RVER ]]; then
      log "installed s3rver in $PREFIX"; return 0
    fi
    log "npm install s3rver@3.7.1 failed; falling back to moto"
  fi
  if command -v moto_server >/dev/null; then log "moto_server already installed"; return 0; fi
  python3 -m pip install -q 'moto[server]' >&2 || die "pip install 'moto[server]' failed"
  command -v moto_server >/dev/null || die "moto installed but moto_server is not on PATH"
}

cmd_up() {
  [[ $# -eq 1 ]] || die "usage: $0 up DIR"
  local dir im port bucket=${S3_BUCKET:-abi-test} ep pid
  [[ $bucket =~ ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$ ]] || die "bad bucket name '$bucket'"
  im=$(impl); need curl python3
  if [[ -d $ST ]]; then die "already up (state $ST); run '$0 down' first"; fi
  mkdir -p "$1"; dir=$(realpath -e "$1")
  port=${S3_PORT:-$(free_port)}
  if bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then die "port $port is already in use"; fi
  ep=http://127.0.0.1:$port
  mkdir -p "$ST"
  if [[ $im == s3rver ]]; then
    need node
    pid=$(spawn "$ST/server.log" "$S3RVER" -d "$dir" -a 127.0.0.1 -p "$port" --silent --no-vhost-buckets \
      --configure-bucket "$bucket")
  else
    need moto_server
    pid=$(spawn "$ST/server.log" moto_server -H 127.0.0.1 -p "$port")
  fi
  echo "$pid" >"$ST/server.pid"
  # moto has no bucket until one is made (errors here show up as the readiness check failing)
  if [[ $im == moto ]] && wait_ready "$TIMEOUT" "moto on $ep" "$pid" curl -s -o /dev/null --max-time 2 "$ep/"; then
    s3curl "$ep" "$bucket" -o /dev/null -X PUT || true
  fi
  if ! wait_ready "$TIMEOUT" "$im on $ep with bucket $bucket" "$pid" bucket_ok "$ep" "$bucket"; then
    cat "$ST/server.log" >&2; cmd_down; die "$im did not start"
  fi
  cat >"$ST/env" <<ENV
S3_ENDPOINT=$ep
S3_BUCKET=$bucket
AWS_ACCESS_KEY_ID=$KEY_ID
AWS_SECRET_ACCESS_KEY=$SECRET
AWS_REGION=$REGION
AWS_ENDPOINT=$ep
AWS_ALLOW_HTTP=true
ENV
  log "$im serving bucket $bucket at $ep (data $dir, state $ST)"
  cat "$ST/env"
}

cmd_upload() {
  [[ $# -eq 2 ]] || die "usage: $0 upload FILE KEY"
  require_up; [[ -f $1 ]] || die "no such file: $1"
  [[ $2 =~ ^[A-Za-z0-9._/-]+$ && $2 != /* ]] || die "KEY must match [A-Za-z0-9._/-]+ and not start with /"
  s3curl "$(state_var S3_ENDPOINT)" "$(state_var S3_BUCKET)/$2" -o /dev/null -X PUT --upload-file "$1" \
    -H 'Content-Type: application/octet-stream' || die "upload of $1 as $2 failed"
}

cmd_get() {
  [[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 get KEY [FIRST-LAST]"
  require_up
  s3curl "$(state_var S3_ENDPOINT)" "$(state_var S3_BUCKET)/$1" ${2:+-H "Range: bytes=$2"}
}

cmd_down() { stop_state server.pid; }

cmd_status() {
  if [[ -f $ST/env ]] && bucket_ok "$(state_var S3_ENDPOINT)" "$(state_var S3_BUCKET)" 2>/dev/null; then
    log "up: $(state_var S3_ENDPOINT) bucket $(state_var S3_BUCKET)"; return 0
  fi
  log "down"; return 1
}

dispatch "install up upload get down status" "$@"
