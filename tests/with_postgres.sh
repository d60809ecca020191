#!/bin/bash
# with_postgres.sh - runs a command beside a throwaway PostgreSQL server: Debian's `postgresql`
# package's initdb and pg_ctl (in /usr/lib/postgresql/VERSION/bin, not on PATH on a clean
# machine; scripts/setup.sh installs the package), a cluster in a new temporary directory, run
# as an unprivileged user (initdb refuses root: as root, `nobody` through runuser; otherwise the
# caller), listening on a Unix socket in that directory (and, with --tcp, on 127.0.0.1 at a free
# port with password authentication), stopped and removed when the command ends, also when it
# fails or this script is interrupted (trap), or killed (a watchdog outside its process group
# stops the cluster within a second of this script's death).
#   tests/with_postgres.sh [--tcp] COMMAND [ARGS...]     exit status: the command's
# For the command, in the environment:
#   TB_PG           a directory of helpers, each run as `$TB_PG/NAME ...`:
#                     createdb DB   create database DB, print its URI (the Unix socket, user tilebench)
#                     uri DB        print DB's URI without creating it
#                     tcp_uri DB    print DB's URI over TCP (127.0.0.1, no password in it; --tcp)
#                     sql DB SQL    run SQL in DB with psql, rows as text, one per line (-At)
#                     dump DB       pg_dump of DB
#                     pg_ctl ARGS   pg_ctl of this cluster as its user (restart -m fast -w, stop, ...)
#                     start         start the cluster again (after a stop) as it was first started
#   TB_PG_PASSWORD  the password of user tilebench over TCP (--tcp)
#   TB_PG_PORT      the port (the socket's name under the Unix socket; TCP with --tcp)
# TB_PG_FSYNC=on keeps fsync on (for load figures); the tests run with fsync off.
# Exit 1 when PostgreSQL cannot be found or started (the tests do not skip: CI installs it).
set -u
tcp=0
[ "${1:-}" = --tcp ] && { tcp=1; shift; }
[ $# -ge 1 ] || { echo "usage: with_postgres.sh [--tcp] COMMAND [ARGS...]" >&2; exit 2; }

bin=${TB_PG_BIN:-}
if [ -z "$bin" ]; then
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
        [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { bin=$d; break; }
    done
fi
[ -z "$bin" ] && command -v initdb >/dev/null && bin=$(dirname "$(command -v initdb)")
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "with_postgres: error: no PostgreSQL server binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin nor on PATH: apt-get install postgresql (scripts/setup.sh does)" >&2
    exit 1
fi
psql=$(command -v psql || echo "$bin/psql")

# who runs the cluster: initdb and postgres refuse root
if [ "$(id -u)" = 0 ]; then
    user=nobody
    if command -v runuser >/dev/null; then as=(runuser -u "$user" --)
    else as=(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups); fi
else
    user=$(id -un); as=()
fi

tmp=$(mktemp -d /tmp/tb-pg.XXXXXX) || exit 1
mkdir -p "$tmp/sock" "$tmp/bin"
[ ${#as[@]} -gt 0 ] && chown -R "$user" "$tmp"
chmod 755 "$tmp" "$tmp/sock"
port=5432
if [ $tcp = 1 ]; then
    port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$password" > "$tmp/pw"
[ ${#as[@]} -gt 0 ] && chown "$user" "$tmp/pw"
chmod 600 "$tmp/pw"

stop_cluster() {
    [ -f "$tmp/data/postmaster.pid" ] && (cd / && "${as[@]}" "$bin/pg_ctl" -D "$tmp/data" -m immediate -w -t 20 stop >/dev/null 2>&1)
    rm -rf "$tmp"
}
trap 'stop_cluster' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

t0=$(date +%s.%N)
if ! (cd / && "${as[@]}" "$bin/initdb" -D "$tmp/data" -U tilebench --pwfile="$tmp/pw" --auth-local=trust \
        --auth-host=scram-sha-256 -E UTF8 --no-locale -N) > "$tmp/initdb.log" 2>&1; then
    echo "with_postgres: error: initdb failed as $user:" >&2; tail -5 "$tmp/initdb.log" >&2; exit 1
fi
listen="''"; [ $tcp = 1 ] && listen=127.0.0.1
fsync=off; [ "${TB_PG_FSYNC:-off}" = on ] && fsync=on
if ! (cd / && "${as[@]}" "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/log" -w -t 60 \
        -o "-k $tmp/sock -p $port -c listen_addresses=$listen -c fsync=$fsync" start) > "$tmp/start.log" 2>&1; then
    echo "with_postgres: error: the cluster did not start:" >&2; tail -5 "$tmp/start.log" "$tmp/log" >&2; exit 1
fi
# the watchdog: when this script is gone (even by SIGKILL), stop the cluster and remove it
setsid bash -c 'while kill -0 '$$' 2>/dev/null; do sleep 1; done
  [ -d "'"$tmp"'/data" ] && cd / && '"${as[*]}"' "'"$bin"'/pg_ctl" -D "'"$tmp"'/data" -m immediate stop >/dev/null 2>&1
  rm -rf "'"$tmp"'"' </dev/null >/dev/null 2>&1 &

uri="postgresql:///\$1?host=$tmp/sock&port=$port&user=tilebench"
cat > "$tmp/bin/uri" <<EOF
#!/bin/sh
echo "$uri"
EOF
cat > "$tmp/bin/tcp_uri" <<EOF
#!/bin/sh
echo "postgresql://tilebench@127.0.0.1:$port/\$1"
EOF
cat > "$tmp/bin/createdb" <<EOF
#!/bin/sh
"$psql" -X -q -v ON_ERROR_STOP=1 "postgresql:///postgres?host=$tmp/sock&port=$port&user=tilebench" -c "CREATE DATABASE \\"\$1\\"" >&2 || exit 1
echo "$uri"
EOF
cat > "$tmp/bin/sql" <<EOF
#!/bin/sh
exec "$psql" -X -q -At -v ON_ERROR_STOP=1 "$uri" -c "\$2"
EOF
cat > "$tmp/bin/dump" <<EOF
#!/bin/sh
exec "$bin/pg_dump" "$uri"
EOF
cat > "$tmp/bin/start" <<EOF
#!/bin/sh
cd / && exec ${as[*]} "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/log" -w -t 60 -o "-k $tmp/sock -p $port -c listen_addresses=$listen -c fsync=$fsync" start
EOF
cat > "$tmp/bin/pg_ctl" <<EOF
#!/bin/sh
cd / && exec ${as[*]} "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/log" "\$@"
EOF
chmod 755 "$tmp/bin"/*
where="a Unix socket"; [ $tcp = 1 ] && where="a Unix socket and 127.0.0.1:$port"
echo "with_postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') as $user in $tmp on $where, fsync $fsync, ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
export TB_PG="$tmp/bin" TB_PG_PORT="$port"
[ $tcp = 1 ] && export TB_PG_PASSWORD="$password"
"$@"
rc=$?
exit $rc
