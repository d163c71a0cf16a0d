# bench/lib.sh: what bench/run.sh and bench/lifecycle.sh share, sourced
# after they set their own BENCH_* defaults: here (bench/) and root (the
# repository, the working directory from here on), and the defaults both
# have.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
cd "$root"

: "${BENCH_N:=1000000}"
: "${BENCH_RUNS:=3}"
: "${BENCH_SEED:=42}"
: "${BENCH_SHARED_BUFFERS:=128MB}"
: "${BENCH_MAINTENANCE_WORK_MEM:=64MB}"
: "${BENCH_OUT:=$root/bench/out}"

# bench_cluster SCRIPT ARGS...: unless running inside one already
# (BENCH_INSIDE) or told to use the cluster the PG* variables name
# (BENCH_USE_CURRENT), run SCRIPT ARGS again in a throwaway cluster, with
# BENCH_CLUSTER_OPTS (more pg_virtualenv options, an array) and the same
# settings for every measure: no JIT (its compile time is noise at these
# sizes), no parallel query (the engine is one backend), memory as
# PostgreSQL ships it unless told (BENCH_SHARED_BUFFERS 128MB,
# BENCH_WORK_MEM, BENCH_MAINTENANCE_WORK_MEM 64MB), room for the WAL
# between checkpoints.  Durability as the server ships it (fsync,
# synchronous_commit, full_page_writes on; wal_level replica), set here
# because pg_virtualenv turns fsync off: the figures are what a user's
# server does.  bench_settings prints what was used.
# Does not return then.
bench_cluster() {
    if [ -z "${BENCH_INSIDE:-}" ] && [ -z "${BENCH_USE_CURRENT:-}" ]; then
        export BENCH_INSIDE=1
        local destdir_opts=() setting
        if [ -n "${TEST_DESTDIR:-}" ]; then
            while read -r setting; do destdir_opts+=(-o "$setting"); done \
                < <(mk/destdir_settings.sh "${PG_CONFIG:-/usr/lib/postgresql/$(mk/pg_major.sh)/bin/pg_config}" "$TEST_DESTDIR")
        fi
        exec pg_virtualenv -t ${PG_MAJOR:+-v "$PG_MAJOR"} ${destdir_opts[@]+"${destdir_opts[@]}"} \
            ${BENCH_CLUSTER_OPTS[@]+"${BENCH_CLUSTER_OPTS[@]}"} \
            -o "shared_buffers=$BENCH_SHARED_BUFFERS" \
            -o "work_mem=$BENCH_WORK_MEM" \
            -o "maintenance_work_mem=$BENCH_MAINTENANCE_WORK_MEM" \
            -o "max_parallel_workers_per_gather=0" \
            -o "jit=off" \
            -o "max_wal_size=16GB" \
            -o "fsync=on" -o "synchronous_commit=on" -o "full_page_writes=on" \
            "$@"
    fi
}

# bench_settings: one line of the server settings every figure depends on
# (memory, durability, WAL, workers), as the server reports them.
bench_settings() {
    q "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name)
         FROM pg_settings
        WHERE name IN ('shared_buffers', 'work_mem', 'maintenance_work_mem', 'temp_buffers',
                       'max_wal_size', 'checkpoint_timeout', 'wal_level', 'wal_compression',
                       'fsync', 'synchronous_commit', 'full_page_writes',
                       'jit', 'max_parallel_workers_per_gather', 'max_worker_processes')"
}

# bench_database DB: every psql of the script works in DB, created anew with
# the extension, with the session settings of the cluster (again, for
# BENCH_USE_CURRENT); PSQL is the psql command, and BENCH_OUT exists.
bench_database() {
    mkdir -p "$BENCH_OUT"
    export PGDATABASE=$1
    export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning -c jit=off -c max_parallel_workers_per_gather=0 -c work_mem=$BENCH_WORK_MEM"
    PSQL=(psql -X -q -v ON_ERROR_STOP=1)
    PGDATABASE=postgres "${PSQL[@]}" -c "DROP DATABASE IF EXISTS $PGDATABASE" -c "CREATE DATABASE $PGDATABASE"
    "${PSQL[@]}" -c "CREATE EXTENSION incentives"
}

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# q SQL: one value, unaligned
q() { "${PSQL[@]}" -At -c "$1"; }
