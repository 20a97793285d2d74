#!/usr/bin/env bash
# nfs-server.sh: an NFSv3 server over TCP on 127.0.0.1 exporting a folder, for the `nfs` feature's
# NfsSource (a user-space NFS client: this kernel has no NFS client, so nothing is mounted).
# Two servers, chosen by NFS_IMPL:
#   ganesha (default)  Debian's nfs-ganesha 4.3, FSAL VFS, NFSv3 only, TCP only, NFS and MOUNT on
#                      two fixed free ports, registered with rpcbind (portmapper on :111, which
#                      ganesha needs for v3; started here if none runs, and stopped by 'down' then).
#   rust               cargo-nfs3-server (crates.io; the nfs3_server crate's own binary, mirror fs):
#                      NFS, MOUNT and a portmapper all on ONE port; not registered on :111.
#
#   scripts/nfs-server.sh install    ganesha: apt-get install nfs-ganesha nfs-ganesha-vfs rpcbind
#                                    libnfs-utils (nfs-cat/nfs-ls, a C client); rust: cargo install
#                                    cargo-nfs3-server (rustc >= 1.88). Only what is missing.
#   scripts/nfs-server.sh up DIR     export DIR as /$NFS_EXPORT; prints on stdout:
#                                      NFS_URL=nfs://127.0.0.1:<nfs port>/<export>
#                                      NFS_PORT=<nfs port>  NFS_MOUNT_PORT=<mount port>
#                                      NFS_EXPORT=/<export>  NFS_DIR=<abs DIR>  NFS_IMPL=ganesha|rust
#                                      NFS_LOG=<server log>
#                                    A file F in DIR is NFS_URL/F. NFS_MOUNT_PORT is NFS_PORT for rust;
#                                    ganesha answers MOUNT only on its own port, which a client finds
#                                    through the portmapper on :111 or is given: NFS_URL/F?mountport=
#                                    $NFS_MOUNT_PORT (libnfs: nfs://127.0.0.1/<export>/F?version=3 asks
#                                    the portmapper for both ports).
#   scripts/nfs-server.sh down       stop it (safe to repeat)
#   scripts/nfs-server.sh status     exit 0 if it answers (an NFSv3 NULL call, from our own process)
#
#   e.g.  set -a; eval "$(scripts/nfs-server.sh up /tmp/data)"; set +a
#         nfs-cat "nfs://127.0.0.1$NFS_EXPORT/f.bin?version=3&nfsport=$NFS_PORT&mountport=$NFS_MOUNT_PORT"
#
# Who the client is: by default the server acts as root for every client (ganesha No_Root_Squash;
# the rust server runs as root), so any DIR works, a 0700 mktemp folder too. NFS_ANON=1 makes the
# mode bits count: ganesha squashes every client to nobody (All_Squash), the rust server runs as
# nobody; then a mode-000 file answers NFS3ERR_ACCES, and DIR and its parents must be searchable by
# others (checked). ganesha checks access itself; the rust server maps the open's EACCES.
# One instance per state folder, $NFS_STATE (default /tmp/abi-nfs: config, pids, logs). Two ganesha
# instances share one rpcbind: the portmapper then names the later one, and the 'down' of the one
# that started rpcbind stops it (the other keeps serving on its ports).
# Env: NFS_IMPL, NFS_PORT, NFS_MOUNT_PORT (ganesha), NFS_EXPORT (default 'export'), NFS_ACCESS
# (ro|rw, default ro), NFS_ANON, NFS_STATE, NFS_TIMEOUT (seconds to wait for readiness, default 20).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ST=${NFS_STATE:-/tmp/abi-nfs}
TIMEOUT=${NFS_TIMEOUT:-20}
IMPL=${NFS_IMPL:-ganesha}
GANESHA=/usr/bin/ganesha.nfsd
RPCBIND=/usr/sbin/rpcbind
FSAL_VFS=/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so
RUST_VERSION=0.2.3   # cargo-nfs3-server: nfs3_server 0.11
RUST_BIN=${CARGO_HOME:-$HOME/.cargo}/bin/cargo-nfs3-server

# rpc_null PORT PROG VERS: an ONC RPC NULL call straight to 127.0.0.1:PORT over TCP; exit 0 if
# accepted. (`rpcinfo -n PORT` asks the portmapper first, and fails when nothing is registered.)
rpc_null() {
  python3 - "$@" <<'PY'
import socket, struct, sys
port, prog, vers = map(int, sys.argv[1:4])
xid = 0x61626931
call = struct.pack(">IIIIIIIIII", xid, 0, 2, prog, vers, 0, 0, 0, 0, 0)
s = socket.create_connection(("127.0.0.1", port), timeout=2)
s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)
buf = b""
while len(buf) < 4 + 24:
    chunk = s.recv(64)
    if not chunk:
        sys.exit(1)
    buf += chunk
rxid, mtype, stat, _flavor, vlen, accept = struct.unpack(">IIIIII", buf[4:28])
sys.exit(0 if (rxid, mtype, stat, vlen, accept) == (xid, 1, 0, 0, 0) else 1)
PY
}
# An NFSv3 NULL call to PORT, and the listener on PORT is process PID.
nfs_null() { rpc_null "$1" 100003 3 >/dev/null 2>&1; }
listens() { ss -Hltnp "sport = :$1" 2>/dev/null | grep -q "pid=$2,"; }
ours() { local pid; pid=$(cat "$ST/server.pid" 2>/dev/null) && alive "$pid" && listens "$1" "$pid" && nfs_null "$1"; }
portmapper_up() { rpc_null 111 100000 2 >/dev/null 2>&1; }
port_in_use() { bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

cmd_install() {
  case $IMPL in
    ganesha)
      if [[ -x $GANESHA && -f $FSAL_VFS && -x $RPCBIND ]] && command -v nfs-cat >/dev/null; then
        log "nfs-ganesha, its VFS FSAL, rpcbind and libnfs-utils already installed"; return 0
      fi
      apt_install nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-utils \
        || die "apt-get install nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-utils failed" ;;
    rust)
      if [[ -x $RUST_BIN ]]; then log "cargo-nfs3-server already installed ($RUST_BIN)"; return 0; fi
      need cargo
      cargo install --locked --version "$RUST_VERSION" cargo-nfs3-server >&2 \
        || die "cargo install cargo-nfs3-server@$RUST_VERSION failed (it needs rustc >= 1.88)" ;;
    *) die "NFS_IMPL must be ganesha or rust, not '$IMPL'" ;;
  esac
}

check_anon_path() {  # with NFS_ANON=1, nobody must be able to reach DIR
  local d=$1
  while [[ $d != / ]]; do
    [[ $(( 0$(stat -c %a "$d") & 01 )) -ne 0 ]] \
      || die "NFS_ANON=1: '$d' is not searchable by others (chmod o+x it, or drop NFS_ANON)"
    d=$(dirname "$d")
  done
}

up_ganesha() {  # up_ganesha DIR EXPORT ACCESS
  local dir=$1 export=$2 access=$3 port mport squash=No_Root_Squash
  [[ -x $GANESHA && -f $FSAL_VFS ]] || die "nfs-ganesha or its VFS FSAL missing; run '$0 install'"
  [[ -x $RPCBIND ]] || die "$RPCBIND missing; run '$0 install'"
  [[ ${NFS_ANON:-} == 1 ]] && squash=All_Squash
  port=${NFS_PORT:-$(free_port)}
  mport=${NFS_MOUNT_PORT:-$(free_port)}
  while [[ $mport == "$port" ]]; do mport=$(free_port); done
  port_in_use "$port" && die "port $port is already in use"
  port_in_use "$mport" && die "port $mport is already in use"
  mkdir -p "$ST/recovery"
  # ganesha registers NFS and MOUNT with rpcbind and listens on nothing if that fails: start one
  # unless a portmapper already answers. It binds 0.0.0.0:111 (its -h, for UDP, crashes this build).
  if ! portmapper_up; then
    rm -f /run/rpcbind.lock /run/rpcbind.sock
    mkdir -p /run/rpcbind
    spawn "$ST/rpcbind.log" "$RPCBIND" -f >"$ST/rpcbind.pid"
    if ! wait_ready "$TIMEOUT" "rpcbind on :111" "$(cat "$ST/rpcbind.pid")" portmapper_up; then
      cat "$ST/rpcbind.log" >&2; cmd_down; die "rpcbind did not start (port 111 taken?)"
    fi
  fi
  cat >"$ST/ganesha.conf" <<CFG
NFS_CORE_PARAM {
  Bind_addr = 127.0.0.1;
  NFS_Port = $port;
  MNT_Port = $mport;
  Protocols = 3;
  Enable_UDP = false;
  Enable_NLM = false;
  Enable_RQUOTA = false;
  # v3 MOUNT takes the pseudo path (/$export), not the folder's real path
  Mount_Path_Pseudo = true;
}
NFS_KRB5 { Active_krb5 = false; }
NFSV4 { Graceless = true; RecoveryBackend = fs; RecoveryRoot = "$ST/recovery"; }
EXPORT_DEFAULTS { Protocols = 3; Transports = TCP; SecType = sys, none; }
EXPORT {
  Export_Id = 1;
  Path = "$dir";
  Pseudo = "/$export";
  Access_Type = $access;
  Squash = $squash;
  Anonymous_Uid = 65534;
  Anonymous_Gid = 65534;
  FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; Components { DBUS = FATAL; } }
CFG
  echo "$port" >"$ST/port"; echo "$mport" >"$ST/mount_port"; echo "$dir" >"$ST/dir"
  # -F: stays in the foreground, so the PID spawn prints is ganesha's own.
  spawn "$ST/ganesha.out" "$GANESHA" -F -L "$ST/ganesha.log" -f "$ST/ganesha.conf" -p "$ST/ganesha.pid" \
    >"$ST/server.pid"
  if ! wait_ready "$TIMEOUT" "ganesha on 127.0.0.1:$port" "$(cat "$ST/server.pid")" ours "$port"; then
    tail -n 30 "$ST/ganesha.log" "$ST/ganesha.out" >&2 2>/dev/null || true
    cmd_down; die "nfs-ganesha did not start"
  fi
  echo "$ST/ganesha.log" >"$ST/log"
}

up_rust() {  # up_rust DIR EXPORT ACCESS
  local dir=$1 export=$2 access=$3 port
  local -a cmd=("$RUST_BIN" --path "$dir" --export-name "$export" -i 127.0.0.1 --log-level warn
                --log-file "$ST/server.log" --quiet)
  [[ -x $RUST_BIN ]] || die "$RUST_BIN missing; run 'NFS_IMPL=rust $0 install'"
  [[ $access == RO ]] && cmd+=(--readonly)
  port=${NFS_PORT:-$(free_port)}
  port_in_use "$port" && die "port $port is already in use"
  cmd+=(-p "$port")
  # NFS_ANON=1: run as nobody, so the mirror's own open() meets the mode bits.
  if [[ ${NFS_ANON:-} == 1 ]]; then
    cmd=(setpriv --reuid=65534 --regid=65534 --clear-groups "${cmd[@]}")
    chmod 0777 "$ST"   # its log file
  fi
  echo "$port" >"$ST/port"; echo "$port" >"$ST/mount_port"; echo "$dir" >"$ST/dir"
  spawn "$ST/server.out" "${cmd[@]}" >"$ST/server.pid"
  if ! wait_ready "$TIMEOUT" "cargo-nfs3-server on 127.0.0.1:$port" "$(cat "$ST/server.pid")" ours "$port"; then
    tail -n 30 "$ST"/server.log* "$ST/server.out" >&2 2>/dev/null || true
    cmd_down; die "cargo-nfs3-server did not start"
  fi
  echo "$ST/server.log" >"$ST/log"   # never rolled; panics go to server.out
}

cmd_up() {
  [[ $# -eq 1 ]] || die "usage: $0 up DIR"
  local dir export=${NFS_EXPORT:-export} access
  dir=$(realpath -e "$1") || die "DIR '$1' does not exist"
  [[ -d $dir ]] || die "'$dir' is not a folder"
  export=${export#/}; export=${export%/}
  [[ $export =~ ^[A-Za-z0-9._-]+$ ]] || die "NFS_EXPORT must be one plain name, not '$export'"
  case ${NFS_ACCESS:-ro} in ro|RO) access=RO ;; rw|RW) access=RW ;; *) die "NFS_ACCESS must be ro or rw" ;; esac
  case $IMPL in ganesha|rust) ;; *) die "NFS_IMPL must be ganesha or rust, not '$IMPL'" ;; esac
  need python3 ss setpriv
  [[ ${NFS_ANON:-} == 1 ]] && check_anon_path "$dir"
  if [[ -d $ST ]]; then die "already up (state $ST); run '$0 down' first"; fi
  mkdir -p "$ST"; echo "$IMPL" >"$ST/impl"
  "up_$IMPL" "$dir" "$export" "$access"
  log "$IMPL serving $dir ($access) as /$export at nfs://127.0.0.1:$(cat "$ST/port") (MOUNT on $(cat "$ST/mount_port"); state $ST)"
  printf 'NFS_URL=nfs://127.0.0.1:%s/%s\nNFS_PORT=%s\nNFS_MOUNT_PORT=%s\nNFS_EXPORT=/%s\nNFS_DIR=%q\nNFS_IMPL=%s\nNFS_LOG=%q\n' \
    "$(cat "$ST/port")" "$export" "$(cat "$ST/port")" "$(cat "$ST/mount_port")" "$export" "$dir" "$IMPL" "$(cat "$ST/log")"
}

cmd_down() {
  if [[ -d $ST ]]; then
    stop_pid "$(cat "$ST/server.pid" 2>/dev/null || true)"      # TERM: ganesha unregisters from rpcbind
    stop_pid "$(cat "$ST/rpcbind.pid" 2>/dev/null || true)"     # only the rpcbind that we started
    rm -rf "$ST"
  fi
  log "down"
}

cmd_status() {
  local port; port=$(cat "$ST/port" 2>/dev/null) && ours "$port" \
    && { log "up ($(cat "$ST/impl")): nfs://127.0.0.1:$port serving $(cat "$ST/dir")"; return 0; }
  log "down"; return 1
}

dispatch "install up down status" "$@"
