#!/usr/bin/env bash
# A throw-away PostgreSQL server for the tests of the PostgreSQL store: a new
# cluster under a mktemp directory, owned by the `postgres` user when run as
# root (initdb refuses root), listening on 127.0.0.1 on a free port. Clients
# connect as role `kbench` with a random password (scram-sha-256), which only
# the 0600 password file PGPASSFILE names: the tests use the password path a
# real store uses, with no password in any URL.
#
#   eval "$(scripts/pg-test-server.sh start)"   prints `export` lines:
#       KBENCH_TEST_POSTGRES=postgresql://kbench@127.0.0.1:PORT/postgres,
#       PGPASSFILE, KBENCH_TEST_POSTGRES_DIR
#   scripts/pg-test-server.sh stop              stops it and removes the directory
#
# `start` while this user's server runs prints the same lines again and counts
# one more user; `stop` counts one user off and stops the server only when the
# last is gone, so a second `start`/`stop` pair (a developer's, while a CI run
# holds the server) never stops the server under the first. The state
# (the directory of the running server) is kept in $KBENCH_PG_TEST_STATE,
# default ${TMPDIR:-/tmp}/kbench-pg-test.UID. The tests' server runs with
# fsync off; KBENCH_PG_TEST_FSYNC=on starts one that flushes as a real store
# does, for the bench/ scripts that compare ingest with SQLite (which flushes
# every repeat).
set -euo pipefail

state=${KBENCH_PG_TEST_STATE:-${TMPDIR:-/tmp}/kbench-pg-test.$(id -u)}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

print_exports() {
  local dir=$1
  echo "export KBENCH_TEST_POSTGRES=postgresql://kbench@127.0.0.1:$(cat "$dir/port")/postgres"
  echo "export PGPASSFILE=$dir/pgpass"
  echo "export KBENCH_TEST_POSTGRES_DIR=$dir"
}

running() {
  local dir=$1
  [ -f "$dir/data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

start() {
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "pg-test-server: no PostgreSQL server in /usr/lib/postgresql/*/bin (Debian package postgresql)" >&2
    exit 1
  fi
  if [ -f "$state" ] && running "$(cat "$state")"; then
    echo "$$" >>"$(cat "$state")/users"
    print_exports "$(cat "$state")"
    return
  fi
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/kbench-pg.XXXXXX")
  chmod 711 "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "pg-test-server: no user postgres (Debian package postgresql)" >&2; exit 1; }
    chown postgres: "$dir"
  fi
  local password
  password=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  # The superuser is reached only through the socket in $dir (trust, and the
  # directory is the owner's); TCP clients need a password.
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    --no-instructions -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  local port attempt
  for attempt in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # fsync off by default: a throw-away cluster need not survive a power cut,
    # and the tests' many small transactions then cost no disk flushes.
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=${KBENCH_PG_TEST_FSYNC:-off} -c max_connections=200 -c log_lock_waits=on" start >/dev/null 9>&-; then
      break
    fi
    [ "$attempt" -eq 5 ] && { cat "$dir/server.log" >&2; exit 1; }
  done
  echo "$port" >"$dir/port"
  as_owner "$bin/psql" -q -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE kbench LOGIN CREATEDB PASSWORD '$password'" >/dev/null
  (umask 077 && echo "127.0.0.1:$port:*:kbench:$password" >"$dir/pgpass")
  echo "$$" >"$dir/users"
  echo "$dir" >"$state"
  print_exports "$dir"
}

stop() {
  [ -f "$state" ] || return 0
  local dir
  dir=$(cat "$state")
  if [ -s "$dir/users" ] && [ "$(wc -l <"$dir/users")" -gt 1 ]; then
    sed -i '$d' "$dir/users"
    return 0
  fi
  if [ -d "$dir/data" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  case "$dir" in
    */kbench-pg.*) rm -rf "$dir" ;;
  esac
  rm -f "$state"
}

# One start or stop at a time: the user count is read and written under it.
# (The server itself is started with the lock's descriptor closed, or it would
# hold the lock for its whole life.)
exec 9>"$state.lock"
flock 9
case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
