#!/usr/bin/env bash
# sshfs.sh: a real network filesystem on loopback. A throwaway sshd on 127.0.0.1 (free port, fresh
# ed25519 keys) serves DIR over SFTP, and sshfs mounts it at MNT with direct_io,no_readahead,
# dir_cache=no, so every read() on MNT is one SFTP round trip.
#
#   scripts/sshfs.sh install          apt-get install openssh-server sshfs fuse3 (only what is missing)
#   scripts/sshfs.sh up DIR MNT       start sshd, mount DIR at MNT; prints on stdout:
#                                       SSHFS_MNT=<abs MNT>  SSHFS_DIR=<abs DIR>  SSHFS_PORT=<port>
#                                       SSHFS_STATE=<state folder>
#   scripts/sshfs.sh down MNT         unmount, stop sshd, remove the state folder (safe to repeat)
#   scripts/sshfs.sh status MNT       exit 0 if mounted and sshd is alive
#
#   e.g.  set -a; eval "$(scripts/sshfs.sh up /tmp/data /tmp/mnt)"; set +a
#
# State (keys, sshd config, pid files, port, logs) lives in /tmp/abi-sshfs-<sha256(abs MNT) 12 hex>,
# or under $ABI_STATE_ROOT instead of /tmp. Must run as root (CI does) or a user who may use FUSE.
# Env: SSHFS_TIMEOUT (seconds to wait for sshd and the mount, default 20).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TIMEOUT=${SSHFS_TIMEOUT:-20}
state_of() { local m; m=$(realpath -m "$1"); echo "${ABI_STATE_ROOT:-/tmp}/abi-sshfs-$(printf %s "$m" | sha256sum | cut -c1-12)"; }
mounted() { awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; }
works() { mounted "$1" && timeout 5 ls "$1"; }   # ls fails on a dead FUSE mount ("Transport endpoint ...")

cmd_install() {
  if command -v sshfs >/dev/null && command -v fusermount3 >/dev/null && [[ -x /usr/sbin/sshd ]]; then
    log "openssh-server, sshfs, fuse3 already installed"; return 0
  fi
  apt_install openssh-server sshfs fuse3 || die "apt-get install openssh-server sshfs fuse3 failed"
}

cmd_up() {
  [[ $# -eq 2 ]] || die "usage: $0 up DIR MNT"
  local dir mnt st port
  dir=$(realpath -e "$1") || die "DIR '$1' does not exist"
  mnt=$(realpath -m "$2"); st=$(state_of "$mnt")
  need sshfs fusermount3 ssh-keygen python3; [[ -x /usr/sbin/sshd ]] || die "/usr/sbin/sshd missing; run '$0 install'"
  [[ -e /dev/fuse ]] || die "/dev/fuse missing: this machine cannot mount FUSE filesystems"
  if mounted "$mnt" || [[ -d $st ]]; then die "$mnt is already up (or stale); run '$0 down $mnt' first"; fi

  { mkdir -p "$mnt" 2>/dev/null && [[ -d $mnt ]]; } || die "cannot make mount point folder $mnt"
  mkdir -p /run/sshd "$st"; chmod 700 "$st"
  ssh-keygen -q -t ed25519 -N '' -f "$st/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$st/client_key"
  cp "$st/client_key.pub" "$st/authorized_keys"
  port=$(free_port); echo "$port" >"$st/port"; echo "$mnt" >"$st/mnt"
  cat >"$st/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $st/host_key
PidFile $st/sshd.pid
AuthorizedKeysFile $st/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
Subsystem sftp internal-sftp
CFG
  /usr/sbin/sshd -t -f "$st/sshd_config" || die "bad sshd config $st/sshd_config"
  # -D: no daemon fork, so the PID we record is sshd's own; -e: log to stderr (our log file).
  spawn "$st/sshd.log" /usr/sbin/sshd -D -e -f "$st/sshd_config" >"$st/sshd.pid.ours"
  if ! wait_ready "$TIMEOUT" "sshd on 127.0.0.1:$port" "$(cat "$st/sshd.pid.ours")" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"; then
    cat "$st/sshd.log" >&2; cmd_down "$mnt"; die "sshd did not start"
  fi
  # -f: sshfs stays in the foreground, detached by spawn, so we know its PID too.
  spawn "$st/sshfs.log" sshfs -f -p "$port" "root@127.0.0.1:$dir" "$mnt" -o "IdentityFile=$st/client_key,\
StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR,\
direct_io,no_readahead,dir_cache=no" >"$st/sshfs.pid"
  if ! wait_ready "$TIMEOUT" "sshfs mount at $mnt" "$(cat "$st/sshfs.pid")" works "$mnt"; then
    cat "$st/sshfs.log" "$st/sshd.log" >&2; cmd_down "$mnt"; die "sshfs mount failed"
  fi
  log "mounted 127.0.0.1:$port:$dir at $mnt (state $st)"
  printf 'SSHFS_MNT=%q\nSSHFS_DIR=%q\nSSHFS_PORT=%s\nSSHFS_STATE=%q\n' "$mnt" "$dir" "$port" "$st"
}

cmd_down() {
  [[ $# -eq 1 ]] || die "usage: $0 down MNT"
  local mnt st; mnt=$(realpath -m "$1"); st=$(state_of "$mnt")
  if mounted "$mnt"; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount -u "$mnt" 2>/dev/null \
      || { log "$mnt busy; lazy unmount"; fusermount3 -uz "$mnt" || umount -l "$mnt"; }
  fi
  if [[ -d $st ]]; then
    stop_pid "$(cat "$st/sshfs.pid" 2>/dev/null || true)"
    stop_pid "$(cat "$st/sshd.pid.ours" 2>/dev/null || true)"
    rm -rf "$st"
  fi
  log "down: $mnt"
}

cmd_status() {
  [[ $# -eq 1 ]] || die "usage: $0 status MNT"
  local mnt st; mnt=$(realpath -m "$1"); st=$(state_of "$mnt")
  if works "$mnt" >/dev/null 2>&1 && alive "$(cat "$st/sshd.pid.ours" 2>/dev/null)"; then
    log "up: $mnt via sshd on port $(cat "$st/port") (state $st)"
  else
    log "down: $mnt"; return 1
  fi
}

dispatch "install up down status" "$@"
