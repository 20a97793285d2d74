#!/usr/bin/env bash
# ftp-server.sh: an FTP server (Debian's python3-pyftpdlib, unprivileged, sendfile on) serving a
# folder read-only on 127.0.0.1, for OpenDAL's FTP service and an rclone FTP mount.
#
#   scripts/ftp-server.sh install    apt-get install python3-pyftpdlib (only if missing)
#   scripts/ftp-server.sh up DIR     serve DIR at / on 127.0.0.1:$FTP_PORT (default: a free port),
#                                    one user with a fresh random password; prints on stdout:
#                                      FTP_URL=ftp://abi:<password>@127.0.0.1:<port>
#                                      FTP_HOST=127.0.0.1  FTP_PORT=<port>  FTP_USER=abi
#                                      FTP_PASS=<password>  FTP_DIR=<abs DIR>
#   scripts/ftp-server.sh down       stop it (safe to repeat)
#   scripts/ftp-server.sh status     exit 0 if it answers (and takes our password)
#
#   e.g.  set -a; eval "$(scripts/ftp-server.sh up /tmp/data)"; set +a; curl "$FTP_URL/f.bin" | wc -c
#
# One instance at a time; its state (launcher, pid, log, password) is in $FTP_STATE (default
# /tmp/abi-ftp). Readiness: a login with the fresh password succeeds (proves the port is ours).
# Env: FTP_PORT, FTP_STATE, FTP_TIMEOUT (seconds to wait for readiness, default 20).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ST=${FTP_STATE:-/tmp/abi-ftp}
TIMEOUT=${FTP_TIMEOUT:-20}
PY=/usr/bin/python3   # Debian's python, where python3-pyftpdlib is (not a pyenv shim's)
ours() { curl -s --max-time 2 -o /dev/null "ftp://abi:$(cat "$ST/pass")@127.0.0.1:$1/"; }

cmd_install() {
  if [[ -x $PY ]] && "$PY" -c 'import pyftpdlib' 2>/dev/null; then log "python3-pyftpdlib already installed"; return 0; fi
  apt_install python3-pyftpdlib || die "apt-get install python3-pyftpdlib failed"
}

cmd_up() {
  [[ $# -eq 1 ]] || die "usage: $0 up DIR"
  local dir port
  dir=$(realpath -e "$1") || die "DIR '$1' does not exist"
  "$PY" -c 'import pyftpdlib' 2>/dev/null || die "python3-pyftpdlib missing; run '$0 install'"
  need curl python3
  if [[ -d $ST ]]; then die "already up (state $ST); run '$0 down' first"; fi
  port=${FTP_PORT:-$(free_port)}
  if bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then die "port $port is already in use"; fi
  mkdir -p "$ST"; od -An -N8 -tx8 /dev/urandom | tr -d ' ' >"$ST/pass"
  cat >"$ST/server.py" <<'PY'
import logging, sys
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer

port, root, password = int(sys.argv[1]), sys.argv[2], sys.argv[3]
logging.basicConfig(level=logging.WARNING)
auth = DummyAuthorizer()
auth.add_user("abi", password, root, perm="elr")  # list and read only
FTPHandler.authorizer = auth
FTPHandler.use_sendfile = True
FTPHandler.passive_ports = None
FTPHandler.masquerade_address = None
server = FTPServer(("127.0.0.1", port), FTPHandler)
server.max_cons = 512
server.serve_forever()
PY
  echo "$port" >"$ST/port"; echo "$dir" >"$ST/dir"
  spawn "$ST/ftp.log" "$PY" "$ST/server.py" "$port" "$dir" "$(cat "$ST/pass")" >"$ST/server.pid"
  if ! wait_ready "$TIMEOUT" "FTP on 127.0.0.1:$port" "$(cat "$ST/server.pid")" ours "$port"; then
    cat "$ST/ftp.log" >&2; cmd_down; die "the FTP server did not start (port $port taken?)"
  fi
  log "serving $dir at ftp://127.0.0.1:$port (state $ST)"
  printf 'FTP_URL=ftp://abi:%s@127.0.0.1:%s\nFTP_HOST=127.0.0.1\nFTP_PORT=%s\nFTP_USER=abi\nFTP_PASS=%s\nFTP_DIR=%q\n' \
    "$(cat "$ST/pass")" "$port" "$port" "$(cat "$ST/pass")" "$dir"
}

cmd_down() { stop_state server.pid; }

cmd_status() { server_status "ftp://127.0.0.1:%s"; }

dispatch "install up down status" "$@"
