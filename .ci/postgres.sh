#!/usr/bin/env bash
# A private PostgreSQL server for the tests of queue-store-postgres.
#
#   bash .ci/postgres.sh start   # idempotent: init the cluster if needed, start it, print the JDBC URL
#   bash .ci/postgres.sh stop    # idempotent
#   bash .ci/postgres.sh url     # print the JDBC URL
#   bash .ci/postgres.sh crash   # kill the server as a power cut would (pg_ctl stop -m immediate:
#                                # no checkpoint, crash recovery on the next start); then start
#   bash .ci/postgres.sh destroy # stop the server and delete its directory
#
# crash and destroy are for a private cluster of one test only: they refuse to run unless
# QB_PG_DIR is set and is not the shared default (/tmp/queue-bridge-pg, port 55432), which other
# test runs may be using.
#
# The cluster lives in ${QB_PG_DIR:-/tmp/queue-bridge-pg} and listens on 127.0.0.1 port
# ${QB_PG_PORT:-55432} only, with scram-sha-256 password authentication, fsync=on and
# synchronous_commit=on. Role queuebridge / password queuebridge (LOGIN CREATEDB, not superuser).
# When run as root the cluster belongs to user postgres (initdb refuses to run as root).
set -euo pipefail

DIR="${QB_PG_DIR:-/tmp/queue-bridge-pg}"
PORT="${QB_PG_PORT:-55432}"
DATA="$DIR/data"
LOG="$DIR/server.log"
ROLE=queuebridge
ROLE_PASSWORD=queuebridge
URL="jdbc:postgresql://127.0.0.1:$PORT/postgres"

find_bin() {
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v initdb)")"
    return
  fi
  local d
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/initdb" ]; then
      echo "$d"
      return
    fi
  done
  echo "initdb not found; installing the Debian postgresql package" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/initdb" ]; then
      echo "$d"
      return
    fi
  done
  echo "initdb still not found after installing postgresql" >&2
  exit 1
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

running() {
  [ -f "$DATA/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

start() {
  mkdir -p "$DIR"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$DIR"
  fi
  chmod 700 "$DIR"
  if [ ! -f "$DATA/PG_VERSION" ]; then
    local pwfile
    pwfile="$(mktemp)"
    printf '%s\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$pwfile"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$pwfile"; fi
    as_owner "$BIN/initdb" -D "$DATA" -U postgres --pwfile="$pwfile" \
      --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1 \
      || { cat "$DIR/initdb.log" >&2; rm -f "$pwfile"; exit 1; }
    # The superuser password is kept owner-only next to the cluster, for setup only.
    as_owner cp "$pwfile" "$DIR/superuser.password"
    rm -f "$pwfile"
    cat >>"$DATA/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
fsync = on
synchronous_commit = on
max_connections = 200
password_encryption = 'scram-sha-256'
CONF
    cat >"$DATA/pg_hba.conf" <<HBA
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
HBA
  fi
  if ! running; then
    as_owner "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >/dev/null \
      || { tail -n 30 "$LOG" >&2; exit 1; }
  fi
  # Create the role on first start (idempotent: checks first).
  local su_pw
  su_pw="$(as_owner cat "$DIR/superuser.password")"
  if ! as_owner env PGPASSWORD="$su_pw" "$BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -tAc \
      "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'" | grep -q 1; then
    as_owner env PGPASSWORD="$su_pw" "$BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -q -v ON_ERROR_STOP=1 -c \
      "CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD '$ROLE_PASSWORD'" >/dev/null
  fi
  echo "$URL"
}

stop() {
  if [ -f "$DATA/PG_VERSION" ] && running; then
    as_owner "$BIN/pg_ctl" -D "$DATA" -w -t 60 -m fast stop >/dev/null
  fi
}

# crash and destroy only touch a cluster the caller named, never the shared default.
private_only() {
  if [ -z "${QB_PG_DIR:-}" ] || [ "$(readlink -m "$DIR")" = /tmp/queue-bridge-pg ] || [ "$PORT" = 55432 ]; then
    echo "refusing to $1 the shared test server: set QB_PG_DIR and QB_PG_PORT to a private cluster" >&2
    exit 2
  fi
}

crash() {
  private_only crash
  if [ -f "$DATA/PG_VERSION" ] && running; then
    as_owner "$BIN/pg_ctl" -D "$DATA" -w -t 60 -m immediate stop >/dev/null
  fi
}

destroy() {
  private_only destroy
  stop
  rm -rf "$DIR"
}

BIN="$(find_bin)"
case "${1:-}" in
  start) start ;;
  stop) stop ;;
  crash) crash ;;
  destroy) destroy ;;
  url) echo "$URL" ;;
  *)
    echo "usage: $0 start|stop|crash|destroy|url" >&2
    exit 2
    ;;
esac
