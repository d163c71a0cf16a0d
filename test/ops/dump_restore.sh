#!/bin/bash
# test/ops/dump_restore.sh: pg_dump/pg_restore keeps every row of every
# table of the incentives extensions (docs/backup-and-upgrade.md).
# Run by `make check-dump` on a throwaway cluster (PGHOST etc. set by
# pg_virtualenv), from the repository root.
#
#   1. ops_src: CREATE EXTENSION incentives, the generated data set
#      (DUMP_N transactions), every fixture case, refreshed earnings (last
#      with jobs => 2: a partition in leaves), the shipped unit
#      conversions deleted/edited/added to (test/ops/dataset*.psql).  Every table of the extension must hold
#      rows, and each table the dump leaves out must hold exactly what
#      CREATE EXTENSION puts there (both found from the catalog, so a table
#      added later is checked too).
#   2. pg_dump -Fc -> pg_restore (and pg_restore -j 2), pg_dump -Fp -> psql,
#      each into a new database, stopping at the first error.
#   3. Each restored database must give the same lines as ops_src from
#      test/ops/digest.sql: row count and md5 of the ordered rows of every
#      table, every sequence's position, and a full incentive_calculate();
#      and the same catalog of the extension (test/upgrade/catalog.sql:
#      objects, privileges, row-level security policies and flags) once
#      step 4 of docs/security.md (the DBA's row-level security on
#      incentives.transactions, which pg_dump does not keep) ran again.
#      ops_src has the whole model of docs/security.md applied.
#   4. The same for a database with incentives_cluster (and plproxy).
#
# DUMP_VERSION=0.1.0 builds ops_src with that released version instead of
# the current one (0.1.0 fails: a restore brings deleted shipped unit
# conversions back and reverts edited ones).
set -euo pipefail
n=${DUMP_N:-20000}
version=""
[ -n "${DUMP_VERSION:-}" ] && version=" VERSION '$DUMP_VERSION'"
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
work=$(mktemp -d /tmp/incentives-dump.XXXXXX)
trap 'rm -rf "$work"' EXIT
psql_db() { local db=$1; shift; psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
digest() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -f test/ops/digest.sql; }
fail() { echo "check-dump: FAILED: $*" >&2; exit 1; }

for db in ops_src ops_fresh ops_custom ops_parallel ops_plain ops_cl_src ops_cl_custom; do
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
done

echo "check-dump: building ops_src ($n generated transactions, every fixture, earnings, changed shipped conversions)"
psql_db ops_src -c "CREATE EXTENSION incentives$version"
psql_db ops_src -v n_transactions="$n" -f test/ops/dataset.psql >/dev/null
test/ops/fixtures.sh -d ops_src
psql_db ops_src -f test/ops/dataset_finish.psql
# the earnings in a partition in leaves (a refresh with jobs)
if [ -z "$version" ]; then
	psql_db ops_src -c "CALL incentives.refresh_earnings(jobs => 2)"
	[ "$(psql -X -A -t -d ops_src -c "SELECT count(*) FROM pg_partition_tree('incentives.earnings') WHERE level = 2")" = 2 ] \
		|| fail "the refresh with jobs => 2 left no partition in leaves"
fi
# the privilege and row-level security model of docs/security.md (roles
# are the cluster's: created once)
psql -X -q -d postgres -c "DROP ROLE IF EXISTS analyst_alice, analyst_bob, manager_carol, incentives_admin, incentives_reader"
psql_db ops_src -f test/ops/security_model.sql
# its step 4, which a restore does not bring back
sed -n '/^-- Step 4/,/^-- Step 5/p' test/ops/security_model.sql > "$work/step4.sql"
psql_db ops_fresh -c 'CREATE EXTENSION incentives'

# Every table of the extension holds rows in the test data; a table the
# dump leaves out (not in pg_extension.extconfig) holds what a fresh
# install holds.
tables_sql="SELECT c.oid::regclass::text, c.oid = ANY (x.extconfig)
  FROM pg_depend d JOIN pg_extension x ON x.oid = d.refobjid AND x.extname = 'incentives'
  JOIN pg_class c ON c.oid = d.objid
 WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_extension'::regclass
   AND d.deptype = 'e' AND c.relkind IN ('r', 'p')
 ORDER BY 1"
digest ops_src > "$work/src.txt"
digest ops_fresh > "$work/fresh.txt"
while IFS='|' read -r table dumped; do
	# the change log of changed_only refreshes is bookkeeping, not data: a
	# restore logs every row it loads (docs/lifecycle.md; test/ops/digest.sql)
	[ "$table" = incentives.earnings_changes ] && continue
	# the refresh's lock rows (docs/operations.md): empty between refreshes
	[ "$table" = incentives.refresh_locks ] && continue
	line=$(grep "^table $table rows " "$work/src.txt") || fail "$table missing from the digest"
	# (incentives.earnings' default partition holds rows only until the
	# owner's first full refresh swaps a partition in: empty here)
	case $table in incentives_internal.earnings_default) ;; *)
	case $line in *" rows 0 md5 "*) fail "$table has no rows in the test data: add some in test/ops/dataset_finish.psql" ;; esac ;;
	esac
	if [ "$dumped" = f ]; then
		grep -qxF "$line" "$work/fresh.txt" ||
			fail "$table is not dumped (pg_extension_config_dump) yet holds rows a fresh install does not: $line"
	fi
done < <(psql -X -A -t -d ops_src -c "$tables_sql")

echo "check-dump: pg_dump -Fc | pg_restore, pg_restore -j 2, pg_dump -Fp | psql"
pg_dump -Fc -d ops_src -f "$work/src.dump"
pg_restore --exit-on-error -d ops_custom "$work/src.dump"
pg_restore --exit-on-error -j 2 -d ops_parallel "$work/src.dump"
pg_dump -Fp -d ops_src -f "$work/src.sql"
psql_db ops_plain -f "$work/src.sql" >/dev/null

psql -X -A -t -q -v ext=incentives -d ops_src -f test/upgrade/catalog.sql > "$work/src.catalog"
for db in ops_custom ops_parallel ops_plain; do
	digest "$db" > "$work/$db.txt"
	if ! diff -u "$work/src.txt" "$work/$db.txt"; then
		fail "$db differs from ops_src (lines above: - dumped, + restored)"
	fi
	# the catalog: as dumped once step 4 of docs/security.md ran again
	psql -X -A -t -q -v ext=incentives -d "$db" -f test/upgrade/catalog.sql > "$work/$db.catalog"
	if diff "$work/src.catalog" "$work/$db.catalog" | grep '^[<>]' | grep -v ' on incentives.transactions: \| incentives.transactions enabled '; then
		fail "$db: the extension's catalog differs from ops_src's beyond step 4 of docs/security.md (lines above)"
	fi
	psql_db "$db" -f "$work/step4.sql"
	psql -X -A -t -q -v ext=incentives -d "$db" -f test/upgrade/catalog.sql > "$work/$db.catalog"
	if ! diff -u "$work/src.catalog" "$work/$db.catalog"; then
		fail "$db: the extension's catalog differs from ops_src's after step 4 of docs/security.md ran again"
	fi
done
echo "check-dump: compared in ops_custom, ops_parallel and ops_plain, identical to ops_src:"
sed 's/ md5 .*//; s/^/  /' "$work/src.txt"
grep -q "^calculation rows [1-9]" "$work/src.txt" || fail "the data set calculates no earnings"

echo "check-dump: incentives_cluster"
psql_db ops_cl_src -c 'CREATE EXTENSION incentives_cluster CASCADE' 2>/dev/null
# the coordinator's one table: where the members of groups live
psql_db ops_cl_src -c "INSERT INTO incentives_cluster.placements VALUES ('store_1', 'chain_1'), ('chain_1', 'chain_1')"
pg_dump -Fc -d ops_cl_src -f "$work/cl.dump"
pg_restore --exit-on-error -d ops_cl_custom "$work/cl.dump"
digest ops_cl_src > "$work/cl_src.txt"
digest ops_cl_custom > "$work/cl_custom.txt"
diff -u "$work/cl_src.txt" "$work/cl_custom.txt" || fail "incentives_cluster: restored database differs"
psql -X -A -t -d ops_cl_custom -c "SELECT 'check-dump: incentives_cluster ' || extversion || ' restored, ' || (SELECT count(*) FROM pg_depend d JOIN pg_class c ON c.oid = d.objid AND c.relkind IN ('r','p','S') WHERE d.refobjid = x.oid AND d.deptype = 'e') || ' tables and sequences (the placements of group members: ' || (SELECT count(*) FROM incentives_cluster.placements) || ' rows)' FROM pg_extension x WHERE extname = 'incentives_cluster'"
echo "check-dump: passed"
