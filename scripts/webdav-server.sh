#!/usr/bin/env bash
# webdav-server.sh: a WebDAV server (`rclone serve webdav`, Debian's rclone) serving a folder
# read-only on 127.0.0.1, with Range support, for OpenDAL's WebDAV service.
#
#   scripts/webdav-server.sh install    apt-get install rclone (only if missing)
#   scripts/webdav-server.sh up DIR     serve DIR at / on 127.0.0.1:$WEBDAV_PORT (default: a free
#                                       port), one user with a fresh random password; prints:
#                                         WEBDAV_URL=webdav://abi:<password>@127.0.0.1:<port>
#                                         WEBDAV_HTTP=http://127.0.0.1:<port>  WEBDAV_PORT=<port>
#                                         WEBDAV_USER=abi  WEBDAV_PASS=<password>  WEBDAV_DIR=<abs DIR>
#   scripts/webdav-server.sh down       stop it (safe to repeat)
#   scripts/webdav-server.sh status     exit 0 if it answers (and takes our password)
#
#   e.g.  set -a; eval "$(scripts/webdav-server.sh up /tmp/data)"; set +a
#         curl -u "abi:$WEBDAV_PASS" -r 0-99 "$WEBDAV_HTTP/f.bin"
#
# One instance at a time; its state (pid, log, password) is in $WEBDAV_STATE (default
# /tmp/abi-webdav). Readiness: a PROPFIND with the fresh password answers 207 (the port is ours).
# Env: WEBDAV_PORT, WEBDAV_STATE, WEBDAV_TIMEOUT (seconds to wait for readiness, default 20).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ST=${WEBDAV_STATE:-/tmp/abi-webdav}
TIMEOUT=${WEBDAV_TIMEOUT:-20}
ours() {
  [[ $(curl -s --max-time 2 -o /dev/null -w '%{http_code}' -X PROPFIND -H 'Depth: 0' \
        -u "abi:$(cat "$ST/pass")" "http://127.0.0.1:$1/") == 207 ]]
}

cmd_install() {
  if command -v rclone >/dev/null; then log "rclone already installed"; return 0; fi
  apt_install rclone || die "apt-get install rclone failed"
}

cmd_up() {
  [[ $# -eq 1 ]] || die "usage: $0 up DIR"
  local dir port
  dir=$(realpath -e "$1") || die "DIR '$1' does not exist"
  need rclone curl python3
  if [[ -d $ST ]]; then die "already up (state $ST); run '$0 down' first"; fi
  port=${WEBDAV_PORT:-$(free_port)}
  if bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then die "port $port is already in use"; fi
  mkdir -p "$ST"; od -An -N8 -tx8 /dev/urandom | tr -d ' ' >"$ST/pass"
  echo "$port" >"$ST/port"; echo "$dir" >"$ST/dir"
  # --config /dev/null: no rclone.conf read or written; the folder is a plain local path.
  spawn "$ST/webdav.log" rclone serve webdav "$dir" --config /dev/null --read-only \
    --addr "127.0.0.1:$port" --user abi --pass "$(cat "$ST/pass")" >"$ST/server.pid"
  if ! wait_ready "$TIMEOUT" "WebDAV on 127.0.0.1:$port" "$(cat "$ST/server.pid")" ours "$port"; then
    cat "$ST/webdav.log" >&2; cmd_down; die "the WebDAV server did not start (port $port taken?)"
  fi
  log "serving $dir at http://127.0.0.1:$port (WebDAV, state $ST)"
  printf 'WEBDAV_URL=webdav://abi:%s@127.0.0.1:%s\nWEBDAV_HTTP=http://127.0.0.1:%s\nWEBDAV_PORT=%s\nWEBDAV_USER=abi\nWEBDAV_PASS=%s\nWEBDAV_DIR=%q\n' \
    "$(cat "$ST/pass")" "$port" "$port" "$port" "$(cat "$ST/pass")" "$dir"
}

cmd_down() { stop_state server.pid; }

cmd_status() { server_status "WebDAV at http://127.0.0.1:%s"; }

dispatch "install up down status" "$@"
