#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on 127.0.0.1 for the end-to-end tests and for
# developers. Nothing is installed: it uses the PostgreSQL binaries already on
# the machine (/usr/lib/postgresql/<version>/bin; do not `apt-get install
# postgresql` here, which upgrades the installed packages).
#
#   ci/services/postgres.sh up     # start; prints `export REPRO_TEST_POSTGRES=postgres://...`
#   ci/services/postgres.sh down   # stop and delete the cluster
#
# Usage: eval "$(ci/services/postgres.sh up)"; cargo test --workspace --release
#
# The cluster lives in $REPRO_SERVICES_DIR/postgres (default /tmp/repro-services),
# listens on 127.0.0.1:$REPRO_PG_PORT (default 55432) and a socket in that
# folder only, trusts local connections (it is for tests: never put data you
# care about in it) and runs with fsync=off. initdb refuses to run as root, so
# as root the server runs as the `postgres` user.
set -euo pipefail

BASE=${REPRO_SERVICES_DIR:-/tmp/repro-services}
DIR=$BASE/postgres
PORT=${REPRO_PG_PORT:-55432}
URL="postgres://postgres@127.0.0.1:$PORT/repro"

pgbin() {
    if [[ -n "${PGBIN:-}" ]]; then echo "$PGBIN"; return; fi
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [[ -z "$d" ]]; then
        d=$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/pg_ctl)")
    fi
    [[ -x "$d/pg_ctl" ]] || {
        echo "postgres.sh: no PostgreSQL server binaries (initdb, pg_ctl) found; set PGBIN" >&2
        exit 1
    }
    echo "$d"
}

# Runs a command as the cluster's owner.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

up() {
    local bin
    bin=$(pgbin)
    if [[ -f "$DIR/data/postmaster.pid" ]] && as_owner "$bin/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
        echo "postgres.sh: already running in $DIR" >&2
        echo "export REPRO_TEST_POSTGRES=$URL"
        return
    fi
    rm -rf "$DIR"
    mkdir -p "$DIR"
    if [[ $(id -u) -eq 0 ]]; then
        chmod 755 "$BASE"
        chown postgres: "$DIR"
    fi
    as_owner "$bin/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 --no-locale >"$DIR/initdb.log" 2>&1 || {
        cat "$DIR/initdb.log" >&2
        exit 1
    }
    # 200 connections: every worker process keeps a few (see store's PG_MAX_CONNECTIONS).
    as_owner "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >&2 || {
        cat "$DIR/server.log" >&2
        exit 1
    }
    as_owner "$bin/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qAt \
        -c "CREATE DATABASE repro" >&2
    echo "postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT (data in $DIR)" >&2
    echo "export REPRO_TEST_POSTGRES=$URL"
}

down() {
    local bin
    bin=$(pgbin)
    if [[ -d "$DIR/data" ]]; then
        as_owner "$bin/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$DIR"
    echo "postgres.sh: stopped" >&2
}

case "${1:-}" in
up) up ;;
down) down ;;
*)
    echo "usage: $0 up|down" >&2
    exit 2
    ;;
esac
