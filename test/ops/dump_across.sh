#!/bin/bash
# test/ops/dump_across.sh dump|restore DIR: a database moved between
# PostgreSQL majors the way a DBA moves it (docs/backup-and-upgrade.md):
# pg_dumpall --globals-only and pg_dump -Fc on the old server, then the
# roles and pg_restore on the new one.  Run on a throwaway cluster
# (PGHOST etc. set by pg_virtualenv), from the repository root.
#
#   dump DIR      builds across_src: the data set of check-dump
#                 (test/ops/dataset*.psql, every fixture), so earnings,
#                 statements and accruals, the model of docs/security.md,
#                 and a user's schema with a view and a function over the
#                 earnings; writes DIR/globals.sql, DIR/incentives.dump,
#                 DIR/digest.txt (test/ops/digest.sql, a full
#                 incentive_calculate() among it), DIR/users.txt (what the
#                 user's objects return, and what they return after a
#                 full refresh) and DIR/major.
#   restore DIR   on another major: the roles, pg_restore into
#                 across_dst, then the same digest and the same answers of
#                 the user's objects, and a full refresh that gives what a
#                 full refresh gave on the old major.
# `make dump-across` and `make check-across` (make test-versions).
set -euo pipefail
mode=${1:?usage: dump_across.sh dump|restore DIR}
dir=${2:?usage: dump_across.sh dump|restore DIR}
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
psql_db() { local db=$1; shift; psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
digest() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -f test/ops/digest.sql; }
users() {
	psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" \
		-c "SELECT * FROM bi.offer_totals ORDER BY offer_key COLLATE \"C\"" \
		-c "SELECT bi.participant_total(min(participant_key)) FROM incentives.earnings"
}
major=$(psql -X -A -t -d postgres -c "SELECT current_setting('server_version_num')::int / 10000")
fail() { echo "check-across: FAILED: $*" >&2; exit 1; }

case $mode in
dump)
	mkdir -p "$dir"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS across_src" -c "CREATE DATABASE across_src"
	psql -X -q -d postgres -c "DROP ROLE IF EXISTS analyst_alice, analyst_bob, manager_carol, incentives_admin, incentives_reader"
	echo "dump-across: building across_src on PostgreSQL $major"
	psql_db across_src -c "CREATE EXTENSION incentives"
	psql_db across_src -v n_transactions="${DUMP_N:-20000}" -f test/ops/dataset.psql >/dev/null
	test/ops/fixtures.sh -d across_src
	psql_db across_src -f test/ops/dataset_finish.psql
	psql_db across_src -f test/ops/security_model.sql
	psql_db across_src <<'SQL'
CREATE SCHEMA bi;
CREATE VIEW bi.offer_totals AS
  SELECT offer_key, count(*) AS lines, sum(incentive_amount) AS amount
    FROM incentives.earnings GROUP BY offer_key;
CREATE FUNCTION bi.participant_total(p text) RETURNS numeric
  LANGUAGE sql STABLE
  RETURN (SELECT sum(incentive_amount) FROM incentives.earnings WHERE participant_key = p);
GRANT USAGE ON SCHEMA bi TO incentives_reader;
GRANT SELECT ON bi.offer_totals TO incentives_reader;
SQL
	pg_dumpall --globals-only --no-role-passwords -f "$dir/globals.sql"
	pg_dump -Fc -d across_src -f "$dir/incentives.dump"
	digest across_src > "$dir/digest.txt"
	users across_src > "$dir/users.txt"
	grep -q "^calculation rows [1-9]" "$dir/digest.txt" || fail "the data set calculates no earnings"
	echo "$major" > "$dir/major"
	# what a refresh gives here, after the dump (the stored earnings are
	# those of the data set's last refresh, before its later changes)
	psql_db across_src -c "CALL incentives.refresh_earnings()"
	users across_src > "$dir/users.refreshed.txt"
	echo "dump-across: $(wc -c < "$dir/incentives.dump") bytes of dump, $(grep -c '^table ' "$dir/digest.txt") tables"
	;;
restore)
	from=$(cat "$dir/major")
	echo "check-across: restoring PostgreSQL $from's dump into PostgreSQL $major"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS across_dst"
	psql -X -q -d postgres -c "DROP ROLE IF EXISTS analyst_alice, analyst_bob, manager_carol, incentives_admin, incentives_reader"
	# the roles, but the one this cluster was made with
	me=$(psql -X -A -t -d postgres -c "SELECT current_user")
	grep -v -E "^(CREATE|ALTER) ROLE \"?$me\"?( |;)" "$dir/globals.sql" > "$dir/globals.here.sql"
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -f "$dir/globals.here.sql" >/dev/null
	psql -X -q -d postgres -c "CREATE DATABASE across_dst"
	pg_restore --exit-on-error -d across_dst "$dir/incentives.dump"
	digest across_dst > "$dir/digest.$major.txt"
	diff -u "$dir/digest.txt" "$dir/digest.$major.txt" \
		|| fail "the database restored into $major differs from $from's (lines above: - dumped, + restored)"
	users across_dst > "$dir/users.$major.txt"
	diff -u "$dir/users.txt" "$dir/users.$major.txt" || fail "the user's view and function answer differently on $major"
	psql_db across_dst -c "CALL incentives.refresh_earnings()"
	psql -X -A -t -q -d across_dst -c "SELECT count(*), sum(incentive_amount) FROM incentives.earnings" > "$dir/earnings.$major.txt"
	grep "^calculation " "$dir/digest.txt" >/dev/null
	after=$(digest across_dst | grep '^calculation ')
	[ "$after" = "$(grep '^calculation ' "$dir/digest.txt")" ] || fail "a refresh on $major calculates differently"
	users across_dst > "$dir/users.$major.after.txt"
	diff -u "$dir/users.refreshed.txt" "$dir/users.$major.after.txt" || fail "a refresh on $major gives other earnings than a refresh on $from"
	echo "check-across: PostgreSQL $from -> $major: $(grep -c '^table ' "$dir/digest.txt") tables identical, the user's view and function identical, a refresh gives the same earnings ($(cat "$dir/earnings.$major.txt"))"
	;;
*) echo "usage: dump_across.sh dump|restore DIR" >&2; exit 2 ;;
esac
