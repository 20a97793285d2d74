#!/usr/bin/env bash
# http-server.sh: nginx serving a folder over plain HTTP on 127.0.0.1, with Range support
# (206 + Content-Range, 416 past the end; HEAD gives Content-Length, ETag, Last-Modified), and
# WebDAV PROPFIND listings (Debian's libnginx-mod-http-dav-ext), which object_store's HTTP store
# lists with. The access log is nginx's "combined" format plus " conn=N" ($connection), so tests
# can count the TCP connections their requests came on.
#
#   scripts/http-server.sh install    apt-get install nginx libnginx-mod-http-dav-ext (if missing)
#   scripts/http-server.sh up DIR     serve DIR at / on 127.0.0.1:$HTTP_PORT (default: a free port);
#                                     prints on stdout:
#                                       HTTP_URL=http://127.0.0.1:<port>  HTTP_PORT=<port>
#                                       HTTP_DIR=<abs DIR>  HTTP_ACCESS_LOG=<file, one line a request>
#   scripts/http-server.sh down       stop it (safe to repeat)
#   scripts/http-server.sh status     exit 0 if it answers
#
#   e.g.  set -a; eval "$(scripts/http-server.sh up /tmp/data)"; set +a; curl -r 0-99 "$HTTP_URL/f.bin"
#
# One instance at a time; its state (config, pid, logs, temp dirs) is in $HTTP_STATE (default
# /tmp/abi-http). As root, workers run as root ('user root;'), so a 0700 mktemp folder is no 403.
# Env: HTTP_PORT, HTTP_STATE, HTTP_TIMEOUT (seconds to wait for readiness, default 20).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ST=${HTTP_STATE:-/tmp/abi-http}
TIMEOUT=${HTTP_TIMEOUT:-20}
# Readiness: our own instance answers its secret token (proves the port is ours; not in the access log).
ours() { [[ $(curl -s --max-time 2 "http://127.0.0.1:$1/.abi-ready" 2>/dev/null) == "$(cat "$ST/token")" ]]; }

DAV_EXT=/usr/lib/nginx/modules/ngx_http_dav_ext_module.so

cmd_install() {
  if { command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]]; } && [[ -f $DAV_EXT ]]; then
    log "nginx and its dav-ext module already installed"; return 0
  fi
  apt_install nginx libnginx-mod-http-dav-ext || die "apt-get install nginx libnginx-mod-http-dav-ext failed"
}

cmd_up() {
  [[ $# -eq 1 ]] || die "usage: $0 up DIR"
  local dir port nginx=/usr/sbin/nginx user=
  dir=$(realpath -e "$1") || die "DIR '$1' does not exist"
  [[ -x $nginx ]] || die "$nginx missing; run '$0 install'"
  [[ -f $DAV_EXT ]] || die "$DAV_EXT missing (PROPFIND listings); run '$0 install'"
  need curl python3
  if [[ -d $ST ]]; then die "already up (state $ST); run '$0 down' first"; fi
  port=${HTTP_PORT:-$(free_port)}
  if bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then die "port $port is already in use"; fi
  [[ $EUID -eq 0 ]] && user='user root;'
  mkdir -p "$ST/tmp"; od -An -N8 -tx8 /dev/urandom | tr -d ' ' >"$ST/token"
  cat >"$ST/nginx.conf" <<CFG
load_module $DAV_EXT;
$user
daemon off;
worker_processes 1;
pid $ST/nginx.pid;
error_log $ST/error.log;
events { worker_connections 256; }
http {
  client_body_temp_path $ST/tmp/body;  proxy_temp_path $ST/tmp/proxy;  fastcgi_temp_path $ST/tmp/fastcgi;
  uwsgi_temp_path $ST/tmp/uwsgi;       scgi_temp_path $ST/tmp/scgi;
  log_format abi '\$remote_addr - \$remote_user [\$time_local] "\$request" \$status \$body_bytes_sent '
                 '"\$http_referer" "\$http_user_agent" conn=\$connection';
  access_log $ST/access.log abi;
  default_type application/octet-stream;
  sendfile on;
  tcp_nodelay on;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:$port;
    root $dir;
    location / { autoindex on; dav_ext_methods PROPFIND OPTIONS; }
    location = /.abi-ready { access_log off; default_type text/plain; return 200 "$(cat "$ST/token")"; }
  }
}
CFG
  "$nginx" -q -t -p "$ST" -c "$ST/nginx.conf" -e "$ST/error.log" || { rm -rf "$ST"; die "bad nginx config"; }
  echo "$port" >"$ST/port"; echo "$dir" >"$ST/dir"
  # daemon off + spawn: the PID we record is the master's own.
  spawn "$ST/error.log" "$nginx" -p "$ST" -c "$ST/nginx.conf" -e "$ST/error.log" >"$ST/master.pid"
  if ! wait_ready "$TIMEOUT" "nginx on 127.0.0.1:$port" "$(cat "$ST/master.pid")" ours "$port"; then
    cat "$ST/error.log" >&2; cmd_down; die "nginx did not start (port $port taken?)"
  fi
  log "serving $dir at http://127.0.0.1:$port (state $ST)"
  printf 'HTTP_URL=http://127.0.0.1:%s\nHTTP_PORT=%s\nHTTP_DIR=%q\nHTTP_ACCESS_LOG=%q\n' \
    "$port" "$port" "$dir" "$ST/access.log"
}

cmd_down() { stop_state master.pid; }  # TERM to the master: fast stop, workers exit first

cmd_status() { server_status "http://127.0.0.1:%s"; }

dispatch "install up down status" "$@"
