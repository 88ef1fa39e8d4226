#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A whole LAVA lab on this machine, on 127.0.0.1 only, from Debian 12's packages and without
# systemd: PostgreSQL, lava-server (gunicorn), the scheduler, the publisher, one lava-worker
# with lava-dispatcher and one QEMU device (x86-64, TCG). For CI and for trying a job before
# a real lab gets it.
#
#   lava-lab.sh start     start everything; prints the URL, the admin token file, the device
#   lava-lab.sh stop      end every process it started (by PID / process group), drop the
#                         databases and roles it created, stop the PostgreSQL cluster if it
#                         started it, remove the files it wrote: nothing is left behind
#   lava-lab.sh status    what is running
#
# It refuses to start, saying why, when a port it needs is taken or the lava-server
# database already exists (another lab, or a real one). State: $HWCRYPTO_LAB_DIR
# (default /var/lib/hwcrypto-lava-lab): pids, logs, the worker's directory, the token.
# Needs root and: apt-get install --no-install-recommends lava-server lava-dispatcher
# lavacli postgresql.
set -euo pipefail

LAB=${HWCRYPTO_LAB_DIR:-/var/lib/hwcrypto-lava-lab}
PORT=${HWCRYPTO_LAB_PORT:-8000}
EVENTS_PORT=${HWCRYPTO_LAB_EVENTS_PORT:-5500}
PUBLISHER_PORT=${HWCRYPTO_LAB_PUBLISHER_PORT:-8001}
PG_VERSION=${HWCRYPTO_LAB_PG_VERSION:-15}
PG_CLUSTER=main
WORKER=hwcrypto-worker
DEVICE=qemu-01
URL=http://127.0.0.1:$PORT
SETTINGS=/etc/lava-server/settings.d
OUR_SETTINGS=$SETTINGS/50-hwcrypto-lab.yaml
DATABASES=(lavaserver devel)

say() { echo "lava-lab: $*" >&2; }
die() { say "error: $*"; exit 1; }

need() {
  [ "$(id -u)" -eq 0 ] || die "needs root (PostgreSQL, the lavaserver user, QEMU)"
  for tool in lava-server gunicorn3 lava-worker lavacli pg_ctlcluster psql ss; do
    command -v "$tool" >/dev/null || die "$tool missing: apt-get install --no-install-recommends lava-server lava-dispatcher lavacli postgresql iproute2"
  done
}

port_taken() { ss -Hltn "sport = :$1" | grep -q .; }
psql_postgres() { runuser -u postgres -- psql -qtA "$@"; }
cluster_online() { pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1==v && $2==c {print $4}' | grep -q online; }

# Start one daemon in its own session, so stop can end it and its children by group id.
spawn() {  # name command...
  local name=$1; shift
  setsid "$@" >"$LAB/log/$name.out" 2>&1 </dev/null &
  echo $! >"$LAB/pid/$name"
}

wait_for() {  # seconds what command...
  local seconds=$1 what=$2; shift 2
  local until=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $until ] || die "$what not ready after ${seconds}s (logs: $LAB/log)"
    sleep 1
  done
}

start() {
  need
  [ ! -e "$LAB/started" ] || die "a lab is already started here ($LAB); run: $0 stop"
  for port in "$PORT" "$EVENTS_PORT" "$PUBLISHER_PORT"; do
    ! port_taken "$port" || die "port $port on this machine is already in use: stop what listens there (ss -ltnp 'sport = :$port') or set HWCRYPTO_LAB_PORT / _EVENTS_PORT / _PUBLISHER_PORT"
  done
  local started_at=$SECONDS
  mkdir -p "$LAB/pid" "$LAB/log" "$LAB/worker"
  : >"$LAB/created-files"
  touch "$LAB/started"

  if cluster_online; then
    for db in "${DATABASES[@]}"; do
      if [ "$(psql_postgres -c "SELECT 1 FROM pg_database WHERE datname='$db'")" = 1 ]; then
        rm -rf "$LAB"
        die "PostgreSQL $PG_VERSION/$PG_CLUSTER already holds a '$db' database (another LAVA instance?): not touching it"
      fi
    done
  else
    ! port_taken 5432 || { rm -rf "$LAB"; die "port 5432 is in use by another PostgreSQL: not starting ours"; }
    say "PostgreSQL $PG_VERSION/$PG_CLUSTER on 127.0.0.1"
    pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start -o "-c listen_addresses=127.0.0.1"
    touch "$LAB/cluster-started"
  fi
  for file in "$SETTINGS/00-database.yaml" "$SETTINGS/00-secret-key.yaml" "$OUR_SETTINGS"; do
    [ -e "$file" ] || echo "$file" >>"$LAB/created-files"
  done
  touch "$LAB/databases-ours"
  cat >"$OUR_SETTINGS" <<EOF
# written by pytest-hwcrypto's lava-lab.sh; removed by 'lava-lab.sh stop'
ALLOWED_HOSTS: ["127.0.0.1", "localhost"]
EVENT_NOTIFICATION: true
EVENT_SOCKET: "tcp://127.0.0.1:$EVENTS_PORT"
EOF
  say "lava-server database, settings and migrations (postinst.py)"
  /usr/bin/python3 /usr/share/lava-server/postinst.py >"$LAB/log/postinst.log" 2>&1 \
    || { tail -n 20 "$LAB/log/postinst.log" >&2; die "postinst.py failed (log above)"; }

  say "gunicorn on $URL, scheduler, publisher"
  spawn gunicorn gunicorn3 lava_server.wsgi -u lavaserver -g lavaserver --worker-class eventlet \
    --workers 2 --bind "127.0.0.1:$PORT" --log-file "$LAB/log/gunicorn.log"
  spawn scheduler lava-server manage lava-scheduler --level INFO --log-file "$LAB/log/scheduler.log"
  spawn publisher lava-server manage lava-publisher --level INFO --host 127.0.0.1 \
    --port "$PUBLISHER_PORT" --log-file "$LAB/log/publisher.log"
  wait_for 90 "lava-server at $URL" curl -fsS "$URL/api/v0.2/"

  say "admin user, token, worker, device type and device"
  local password token
  password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  lava-server manage users add --superuser --staff --passwd "$password" admin >/dev/null 2>&1 \
    || lava-server manage users update --superuser --staff admin >/dev/null
  token=$(lava-server manage tokens add --user admin | tail -n 1)
  echo "$token" >"$LAB/admin-token" && chmod 600 "$LAB/admin-token"
  lava-server manage workers add "$WORKER" >/dev/null
  lava-server manage workers details "$WORKER" | awk '/token/ {print $NF}' >"$LAB/worker-token"
  chmod 600 "$LAB/worker-token"
  lava-server manage device-types add qemu >/dev/null
  lava-server manage devices add --device-type qemu --worker "$WORKER" "$DEVICE" >/dev/null
  local uri="http://admin:$token@127.0.0.1:$PORT/RPC2"
  printf "{%% extends 'qemu.jinja2' %%}\n{%% set no_kvm = True %%}\n{%% set boot_retry = 1 %%}\n" \
    >"$LAB/$DEVICE.jinja2"
  lavacli --uri "$uri" devices dict set "$DEVICE" "$LAB/$DEVICE.jinja2"
  # lava-run's environment is purged: libguestfs must be told here there is no KVM and where
  # its appliance goes (else ~675 MB land in /var/tmp).
  cat >"$LAB/worker-env.yaml" <<EOF
overrides:
  LIBGUESTFS_BACKEND_SETTINGS: force_tcg
  LIBGUESTFS_CACHEDIR: $LAB/guestfs-cache
  PATH: /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
purge: true
EOF
  mkdir -p "$LAB/guestfs-cache"
  lavacli --uri "$uri" workers env set "$WORKER" "$LAB/worker-env.yaml"
  echo "$uri" >"$LAB/uri" && chmod 600 "$LAB/uri"

  say "lava-worker $WORKER"
  spawn worker lava-worker --level INFO --url "$URL/" --token-file "$LAB/worker-token" \
    --name "$WORKER" --worker-dir "$LAB/worker" --ping-interval 5 --log-file "$LAB/log/worker.log"
  wait_for 90 "worker $WORKER online" sh -c \
    "lavacli --uri '$uri' workers show $WORKER | grep -q 'state *: Online'"
  wait_for 60 "device $DEVICE idle" sh -c \
    "lavacli --uri '$uri' devices show $DEVICE | grep -q 'state *: Idle'"
  say "ready in $((SECONDS - started_at)) s: $URL (REST $URL/api/v0.2/), device $DEVICE; lavacli --uri \$(cat $LAB/uri)"
}

end_group() {  # name
  local file=$LAB/pid/$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

stop() {
  [ -d "$LAB" ] || { say "nothing started here ($LAB)"; return 0; }
  for name in worker scheduler publisher gunicorn; do end_group "$name"; done
  # lava-run and QEMU started by the worker live in its session: ended with it above; any
  # still holding the worker directory are ours too.
  if [ -e "$LAB/databases-ours" ] && cluster_online; then
    for db in "${DATABASES[@]}"; do
      psql_postgres -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" || true
      psql_postgres -c "DROP ROLE IF EXISTS \"$db\"" || true
    done
  fi
  if [ -e "$LAB/cluster-started" ]; then
    pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" stop || true
  fi
  if [ -f "$LAB/created-files" ]; then
    while read -r file; do rm -f "$file"; done <"$LAB/created-files"
  fi
  rm -rf "$LAB"
  say "stopped: processes ended, databases and roles dropped, files removed"
}

status() {
  [ -d "$LAB" ] || { say "not started"; return 0; }
  for file in "$LAB"/pid/*; do
    [ -f "$file" ] || continue
    if kill -0 "$(cat "$file")" 2>/dev/null; then state=running; else state=dead; fi
    say "$(basename "$file"): pid $(cat "$file") $state"
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
