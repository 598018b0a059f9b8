#!/usr/bin/env bash
# pg-test.sh runs throwaway PostgreSQL clusters for ragd's test suite.
#
# Usage:
#   scripts/pg-test.sh start DIR   create (first time) and start a cluster in
#                                  DIR, wait until it accepts connections and
#                                  print its connection URL on stdout:
#                                  postgres://ragd@/postgres?host=DIR/sock
#   scripts/pg-test.sh stop DIR    stop it (fast mode); fine if it is not
#                                  running or DIR does not exist
#
# Layout: DIR/data (PGDATA), DIR/sock (Unix socket directory, the only
# listener: no TCP), DIR/postgres.log (server log).
#
# The cluster is tuned for speed, not durability (fsync, synchronous_commit
# and full_page_writes are off): a crash can corrupt it, which is fine for
# test data. The pgvector extension is created in template1, so every
# database created afterwards has it.
#
# Authentication is "trust" for the superuser "ragd". That is safe only
# because nothing listens on TCP and DIR (and so DIR/sock) is mode 0700,
# reachable by the server's OS user and root alone.
#
# PostgreSQL refuses to run as root, so when invoked as root the cluster runs
# as RAGD_PG_USER (default "postgres"): DIR is chowned to that user and all of
# DIR's parents must be traversable by it. Otherwise it runs as the caller.
# PG_BINDIR overrides the PostgreSQL bin directory.
set -euo pipefail

PORT=5432          # only names the socket file; nothing listens on TCP
MAX_SOCKET_PATH=107 # sizeof(sockaddr_un.sun_path) - 1

note() { printf 'pg-test.sh: %s\n' "$*" >&2; }
die() {
	printf 'pg-test.sh: error: %s\n' "$*" >&2
	exit 1
}

usage() {
	printf 'usage: %s start|stop DIR\n' "${0##*/}" >&2
	exit 2
}

(($# == 2)) || usage
CMD=$1
[[ $CMD == start || $CMD == stop ]] || usage
[[ -n $2 ]] || usage

# Keep the caller's libpq settings (PGPORT, PGHOST, PGDATA...) away from
# initdb, pg_ctl, the server and psql.
while read -r var; do
	unset "$var"
done < <(compgen -e | grep '^PG' || true)

has_server_binaries() { [[ -x $1/postgres && -x $1/initdb && -x $1/pg_ctl ]]; }

# find_bindir prints the PostgreSQL server bin directory: $PG_BINDIR,
# pg_config's, the newest /usr/lib/postgresql/*/bin, or the one in PATH.
find_bindir() {
	local d
	if [[ -n ${PG_BINDIR:-} ]]; then
		has_server_binaries "$PG_BINDIR" || die "PG_BINDIR=$PG_BINDIR has no postgres/initdb/pg_ctl"
		printf '%s\n' "$PG_BINDIR"
		return
	fi
	if command -v pg_config >/dev/null 2>&1 &&
		d=$(pg_config --bindir 2>/dev/null) && has_server_binaries "$d"; then
		printf '%s\n' "$d"
		return
	fi
	while read -r d; do
		if has_server_binaries "$d"; then
			printf '%s\n' "$d"
			return
		fi
	done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -rV)
	if d=$(command -v postgres 2>/dev/null) && has_server_binaries "${d%/*}"; then
		printf '%s\n' "${d%/*}"
		return
	fi
	die "PostgreSQL server binaries not found; run scripts/setup.sh"
}

# urlencode percent-encodes $1 for a URL query value, keeping '/' readable.
urlencode() {
	local LC_ALL=C s=$1 out='' c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~/-]) out+=$c ;;
		*) printf -v c '%%%02X' "'$c" && out+=$c ;;
		esac
	done
	printf '%s' "$out"
}

# as_pg runs a command as the cluster's OS user.
if ((EUID == 0)); then
	PG_USER=${RAGD_PG_USER:-postgres}
	id -u "$PG_USER" >/dev/null 2>&1 ||
		die "user $PG_USER does not exist; PostgreSQL refuses to run as root (install PostgreSQL with scripts/setup.sh, or set RAGD_PG_USER)"
	(($(id -u "$PG_USER") != 0)) || die "RAGD_PG_USER must not be root"
	as_pg() { runuser -u "$PG_USER" -- "$@"; }
else
	PG_USER=$(id -un)
	as_pg() { "$@"; }
fi

DIR=$2
[[ $DIR == /* ]] || DIR=$PWD/$DIR
DATA=$DIR/data
SOCK=$DIR/sock
LOG=$DIR/postgres.log

if [[ $CMD == stop ]]; then
	if [[ ! -f $DATA/PG_VERSION ]]; then
		note "no cluster in $DIR; nothing to stop"
		exit 0
	fi
	BINDIR=$(find_bindir)
	cd /
	if as_pg "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
		as_pg "$BINDIR/pg_ctl" -D "$DATA" -m fast -w -t 60 -s stop
	else
		note "cluster in $DIR is not running"
	fi
	exit 0
fi

# ---------------------------------------------------------------------------
# start

sock_file=$SOCK/.s.PGSQL.$PORT
((${#sock_file} <= MAX_SOCKET_PATH)) ||
	die "socket path $sock_file is ${#sock_file} bytes, over the $MAX_SOCKET_PATH-byte limit of Unix sockets; use a shorter DIR"

BINDIR=$(find_bindir)

mkdir -p -- "$DIR"
DIR=$(cd -- "$DIR" && pwd -P)
DATA=$DIR/data SOCK=$DIR/sock LOG=$DIR/postgres.log

if ((EUID == 0)); then
	# Every parent of DIR must be traversable by $PG_USER; check them all at
	# once and name the first that is not.
	parents=()
	d=$DIR
	while [[ $d != / ]]; do
		d=$(dirname -- "$d")
		parents=("$d" "${parents[@]}")
	done
	# shellcheck disable=SC2016 # $d expands in the inner shell.
	if ! bad=$(as_pg sh -c 'for d; do [ -x "$d" ] || { echo "$d"; exit 1; }; done' sh "${parents[@]}"); then
		die "PostgreSQL runs as user $PG_USER here (it refuses to run as root), but directory $bad is not traversable by $PG_USER; make it so (chmod o+x $bad) or choose a DIR elsewhere"
	fi
	chown "$PG_USER:" "$DIR"
fi
chmod 0700 "$DIR"
# Serialize concurrent starts of the same DIR (say, test packages run in parallel).
exec 9>"$DIR/.pg-test.lock"
flock 9
# initdb, pg_ctl and psql run as $PG_USER, who may not be able to enter the
# caller's working directory.
cd "$DIR"

if [[ ! -f $DATA/PG_VERSION ]]; then
	locale=C
	if locale -a 2>/dev/null | grep -qixE 'c\.utf-?8'; then
		locale=C.UTF-8
	fi
	if ! as_pg "$BINDIR/initdb" -D "$DATA" --auth=trust -U ragd --encoding=UTF8 \
		--locale="$locale" --no-sync >"$DIR/initdb.log" 2>&1; then
		cat "$DIR/initdb.log" >&2
		die "initdb failed (output above, also in $DIR/initdb.log)"
	fi
	as_pg mkdir -m 0700 "$SOCK"
	cat >>"$DATA/postgresql.conf" <<EOF

# Added by scripts/pg-test.sh: Unix socket only, speed over durability.
listen_addresses = ''
port = $PORT
unix_socket_directories = '${SOCK//\'/\'\'}'
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 128MB
max_connections = 200
maintenance_work_mem = 256MB
EOF
fi

if as_pg "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
	note "cluster in $DIR is already running"
elif ! as_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 -s start >&2 9>&-; then # the server must not inherit the lock
	tail -n 20 "$LOG" >&2 || true
	die "could not start PostgreSQL (log above, full log in $LOG)"
fi

if ! out=$(as_pg "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U ragd -d template1 \
	-c 'CREATE EXTENSION IF NOT EXISTS vector' 2>&1); then
	printf '%s\n' "$out" >&2
	if [[ $out == *'extension "vector" is not available'* || $out == *'could not open extension control file'* ]]; then
		die "pgvector is not installed for $("$BINDIR/postgres" --version); run scripts/setup.sh"
	fi
	die "could not create the vector extension in template1"
fi

printf 'postgres://ragd@/postgres?host=%s\n' "$(urlencode "$SOCK")"
