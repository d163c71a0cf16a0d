# lib.sh: what the scripts of test/scripts share, sourced after they set DB
# (the database they work in; ADMIN_DB, the one they connect to create and
# drop it, is PGDATABASE's).  Counts failures in $failures: fail() adds
# one, and a script ends with finish().
ADMIN_DB=${PGDATABASE:-postgres}
failures=0
script_start=$(date +%s%3N)

now_ms() { date +%s%3N; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
psql_admin() { psql -X -q -v ON_ERROR_STOP=1 -d "$ADMIN_DB" "$@"; }
psql_db() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
# val SQL: the one value of a query in DB
val() { psql_db -At -c "$1"; }

# create_db: DB new (dropped first if it is there), with the extension
create_db() {
  psql_admin -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
  psql_db -c "SET client_min_messages = warning" -c "CREATE EXTENSION incentives"
}
# drop_db: DB gone, and the script's background jobs ended (for the trap)
drop_db() {
  local pid
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql_admin -c "SET client_min_messages = warning" \
    -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
}

# finish NAME: the total time, and exit 1 when a check failed
finish() {
  echo "$1: total $(( ($(now_ms) - script_start) / 1000 )) s"
  if [ "$failures" -ne 0 ]; then
    echo "$1: $failures check(s) FAILED" >&2
    exit 1
  fi
  echo "$1: all checks passed"
}
