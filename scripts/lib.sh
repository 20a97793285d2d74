# shellcheck shell=bash
# Helpers shared by the server and mount scripts in scripts/; sourced, not run.
# Log lines go to stderr, so a script's stdout carries only its KEY=VALUE lines.

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

need() {  # need CMD... : fail loudly if a command is missing
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || die "'$c' not found; run '$0 install' first"
  done
}

free_port() {  # a TCP port on 127.0.0.1 that is free right now
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() {  # wait_for SECONDS WHAT CMD... : retry CMD every 0.1 s, fail after SECONDS
  local secs=$1 what=$2 deadline; shift 2
  deadline=$(( $(date +%s%N) + secs * 1000000000 ))
  until "$@" >/dev/null 2>&1; do
    (( $(date +%s%N) < deadline )) || { log "timed out after ${secs}s waiting for $what"; return 1; }
    sleep 0.1
  done
}

_ready_or_dead() { local pid=$1; shift; "$@" || ! alive "$pid"; }
wait_ready() {  # wait_ready SECONDS WHAT PID CMD... : like wait_for, but give up at once if PID dies
  local secs=$1 what=$2 pid=$3; shift 3
  wait_for "$secs" "$what" _ready_or_dead "$pid" "$@" || return 1
  alive "$pid" || { log "$what: process $pid exited"; return 1; }
  "$@" >/dev/null 2>&1
}

alive() {  # alive PID : running and not a zombie (an orphan's zombie may wait a while for PID 1 to reap it)
  local st
  [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null && read -r st <"/proc/$1/stat" 2>/dev/null || return 1
  st=${st##*) }; [[ ${st:0:1} != Z ]]
}

stop_pid() {  # stop_pid PID [SIGNAL] : signal, wait up to 5 s, then SIGKILL; fine if already gone
  local pid=${1:-} sig=${2:-TERM}
  alive "$pid" || return 0
  kill -"$sig" "$pid" 2>/dev/null || true
  wait_for 5 "pid $pid to exit" eval "! alive $pid" || kill -KILL "$pid" 2>/dev/null || true
}

stop_state() {  # stop_state PIDFILE : stop the server whose PID is in $ST/PIDFILE, remove $ST
  if [[ -d $ST ]]; then
    stop_pid "$(cat "$ST/$1" 2>/dev/null || true)"
    rm -rf "$ST"
  fi
  log "down"
}
server_status() {  # server_status URL-FORMAT : the status command of a server keeping $ST/port and
  # $ST/dir: "up: URL serving DIR" (the port put in for the format's %s) if the port answers as
  # ours, else "down" and status 1
  local port url; port=$(cat "$ST/port" 2>/dev/null) && ours "$port" \
    && { printf -v url "$1" "$port"; log "up: $url serving $(cat "$ST/dir")"; return 0; }
  log "down"; return 1
}

dispatch() {  # dispatch "CMD..." ARGS... : run cmd_$1 with the rest of ARGS if $1 is one of the
  # CMDs, else print the script's header comment (its usage) and exit 2
  local cmds=" $1 " c; shift
  if [[ -n ${1:-} && $cmds == *" $1 "* ]]; then c=$1; shift; "cmd_$c" "$@"; return; fi
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2
}

spawn() {  # spawn LOGFILE CMD... : start CMD detached (own session, stdio off the caller's pipes); prints its PID
  local logf=$1; shift
  setsid "$@" </dev/null >>"$logf" 2>&1 &
  echo $!
}

apt_install() {  # apt_install PKG... : install; 'apt-get update' only if the first try fails
  local -a apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@")
  local policy=/usr/sbin/policy-rc.d made_policy=
  # Keep package scripts from starting system-wide daemons (sshd on :22, nginx on :80).
  if [[ ! -e $policy ]]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; made_policy=1; fi
  local rc=0
  if ! "${apt[@]}" >&2; then
    log "install failed; running apt-get update and retrying"
    { apt-get update -q >&2 && "${apt[@]}" >&2; } || rc=$?
  fi
  if [[ -n $made_policy ]]; then rm -f "$policy"; fi
  return $rc
}

# start WHAT VAR CMD... : run CMD (a server or mount script's `up`) and export the variables it
# prints; fails, naming WHAT, if CMD fails or prints no VAR (never a stale VAR from the caller's
# environment: CI exports the URLs of its own earlier servers).
start() {
  local what=$1 var=$2 env; shift 2
  env=$("$@") || die "$what did not start ('$*' failed; its log is above)"
  unset "$var"
  set -a; eval "$env"; set +a
  [[ -n ${!var:-} ]] || die "$what: '$*' printed no $var: $env"
}
