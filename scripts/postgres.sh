#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests, on loopback, in a temporary directory.
#   source scripts/postgres.sh   (from scripts/test)
# starts it, exports TOOLHOST_TEST_DATABASE_URL, and stops it by its process id when the
# calling shell exits. PostgreSQL refuses to run as root: as root it runs as the
# `postgres` account Debian's package creates (or `nobody`).

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$pg_bin" ]; then
  echo "PostgreSQL is missing: install Debian's postgresql" >&2
  return 1 2>/dev/null || exit 1
fi
pg_dir=$(mktemp -d /tmp/toolhost-pg.XXXXXX)
pg_as=()
if [ "$(id -u)" = 0 ]; then
  pg_user=postgres
  id "$pg_user" >/dev/null 2>&1 || pg_user=nobody
  chown "$pg_user" "$pg_dir"
  pg_as=(setpriv --reuid="$pg_user" --regid="$(id -g "$pg_user")" --clear-groups --)
fi
pg_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${pg_as[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -U toolhost --auth=trust -E UTF8 --no-sync >"$pg_dir/initdb.log" 2>&1 ||
  { cat "$pg_dir/initdb.log" >&2; return 1 2>/dev/null || exit 1; }
"${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $pg_port -c unix_socket_directories=$pg_dir -c fsync=off -c max_connections=300" \
  start >/dev/null ||
  { cat "$pg_dir/server.log" >&2; return 1 2>/dev/null || exit 1; }
pg_pid=$(head -n 1 "$pg_dir/data/postmaster.pid")
stop_postgres() {
  kill -TERM "$pg_pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pg_pid" 2>/dev/null || true
  rm -rf "$pg_dir"
}
trap stop_postgres EXIT
export TOOLHOST_TEST_DATABASE_URL="postgres://toolhost@127.0.0.1:$pg_port/postgres"
echo "PostgreSQL for the tests: $TOOLHOST_TEST_DATABASE_URL (pid $pg_pid)" >&2
