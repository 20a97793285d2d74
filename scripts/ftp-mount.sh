#!/usr/bin/env bash
# ftp-mount.sh: a FUSE mount of an FTP server (`rclone mount` with its FTP backend, Debian's
# rclone), read-only, with rclone's default streaming reads and no VFS file cache: a network
# filesystem whose every file read is an FTP transfer (seeks restart it with REST).
#
#   scripts/ftp-mount.sh install              apt-get install rclone fuse3 (only what is missing)
#   scripts/ftp-mount.sh up MNT               mount the FTP server named by FTP_HOST, FTP_PORT,
#                                             FTP_USER, FTP_PASS (as scripts/ftp-server.sh up
#                                             prints them) at MNT; prints on stdout:
#                                               FTP_MNT=<abs MNT>  FTP_MOUNT_STATE=<state folder>
#   scripts/ftp-mount.sh down MNT             unmount, stop rclone (safe to repeat)
#   scripts/ftp-mount.sh status MNT           exit 0 if mounted and listing works
#
#   e.g.  set -a; eval "$(scripts/ftp-server.sh up /tmp/data)"; eval "$(scripts/ftp-mount.sh up /tmp/ftpmnt)"; set +a
#
# The remote is configured through rclone's RCLONE_CONFIG_ABIFTP_* variables (the password
# obscured with `rclone obscure`), with --config /dev/null: no rclone.conf is read or written.
# State (pid, log) lives in /tmp/abi-ftpmount-<sha256(abs MNT) 12 hex>, or under $ABI_STATE_ROOT.
# Env: FTP_MOUNT_TIMEOUT (seconds to wait for the mount, default 20), FTP_MOUNT_ARGS (extra
# rclone mount flags).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TIMEOUT=${FTP_MOUNT_TIMEOUT:-20}
state_of() { local m; m=$(realpath -m "$1"); echo "${ABI_STATE_ROOT:-/tmp}/abi-ftpmount-$(printf %s "$m" | sha256sum | cut -c1-12)"; }
mounted() { awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; }
works() { mounted "$1" && timeout 5 ls "$1"; }

cmd_install() {
  if command -v rclone >/dev/null && command -v fusermount3 >/dev/null; then
    log "rclone, fuse3 already installed"; return 0
  fi
  apt_install rclone fuse3 || die "apt-get install rclone fuse3 failed"
}

cmd_up() {
  [[ $# -eq 1 ]] || die "usage: $0 up MNT"
  local mnt st
  : "${FTP_HOST:?FTP_HOST unset: eval the output of scripts/ftp-server.sh up first}"
  : "${FTP_PORT:?FTP_PORT unset}" "${FTP_USER:?FTP_USER unset}" "${FTP_PASS:?FTP_PASS unset}"
  mnt=$(realpath -m "$1"); st=$(state_of "$mnt")
  need rclone fusermount3
  [[ -e /dev/fuse ]] || die "/dev/fuse missing: this machine cannot mount FUSE filesystems"
  if mounted "$mnt" || [[ -d $st ]]; then die "$mnt is already up (or stale); run '$0 down $mnt' first"; fi
  mkdir -p "$st" "$mnt"
  echo "$mnt" >"$st/mnt"
  # shellcheck disable=SC2086 # FTP_MOUNT_ARGS is a list of flags
  RCLONE_CONFIG_ABIFTP_TYPE=ftp RCLONE_CONFIG_ABIFTP_HOST=$FTP_HOST RCLONE_CONFIG_ABIFTP_PORT=$FTP_PORT \
  RCLONE_CONFIG_ABIFTP_USER=$FTP_USER RCLONE_CONFIG_ABIFTP_PASS=$(rclone obscure "$FTP_PASS") \
    spawn "$st/mount.log" rclone mount abiftp:/ "$mnt" --config /dev/null --read-only \
      --vfs-cache-mode off --dir-cache-time 1s ${FTP_MOUNT_ARGS:-} >"$st/rclone.pid"
  if ! wait_ready "$TIMEOUT" "the FTP mount at $mnt" "$(cat "$st/rclone.pid")" works "$mnt"; then
    cat "$st/mount.log" >&2; cmd_down "$mnt"; die "rclone mount did not come up"
  fi
  log "mounted ftp://$FTP_HOST:$FTP_PORT at $mnt (state $st)"
  printf 'FTP_MNT=%q\nFTP_MOUNT_STATE=%q\n' "$mnt" "$st"
}

cmd_down() {
  [[ $# -eq 1 ]] || die "usage: $0 down MNT"
  local mnt st; mnt=$(realpath -m "$1"); st=$(state_of "$mnt")
  if mounted "$mnt"; then fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true; fi
  if [[ -d $st ]]; then stop_pid "$(cat "$st/rclone.pid" 2>/dev/null || true)"; rm -rf "$st"; fi
  log "down"
}

cmd_status() {
  [[ $# -eq 1 ]] || die "usage: $0 status MNT"
  local mnt; mnt=$(realpath -m "$1")
  works "$mnt" >/dev/null 2>&1 && { log "up: $mnt"; return 0; }
  log "down"; return 1
}

dispatch "install up down status" "$@"
