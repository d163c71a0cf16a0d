#!/bin/bash
# test/ops/upgrade.sh: ALTER EXTENSION ... UPDATE from every released
# version gives what a fresh install gives, and keeps the data (docs/backup-and-upgrade.md,
# Upgrade).  Run by `make check-upgrade` on a throwaway
# cluster (PGHOST etc. set by pg_virtualenv), from the repository root.
#
# For each extension (incentives, incentives_cluster) and each released
# version V (a script src/sql/released/EXT--V.sql or EXT--A--V.sql: found
# there, so a new release only adds its scripts):
#   1. a database with EXT at version V; for incentives with data
#      (test/ops/dataset*.psql: generated data, every fixture, refreshed
#      earnings, changed shipped unit conversions);
#   2. ALTER EXTENSION EXT UPDATE TO each later released version in turn,
#      then to the current version (the control file's default_version);
#   3. its catalog (test/upgrade/catalog.sql) must equal that of a fresh
#      install of the current version, line for line (and every object of
#      a fresh install is written out in src/sql: test/upgrade/declared.sh);
#   4. every table that existed at V keeps its rows (row count and md5 of
#      the ordered rows, test/ops/digest.sql), incentive_calculate()
#      returns the same rows, and the tables the update added hold what a
#      fresh install given the same data holds (once they got the rows of
#      test/ops/dataset_later.psql, which V could not hold).
set -euo pipefail
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
n=${UPGRADE_N:-20000}
work=$(mktemp -d /tmp/incentives-upgrade.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-upgrade: FAILED: $*" >&2; exit 1; }
recreate() { psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"; }
run() { local db=$1; shift; psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
catalog() { psql -X -A -t -q -v ON_ERROR_STOP=1 -v ext="$2" -d "$1" -f test/upgrade/catalog.sql; }
digest() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -f test/ops/digest.sql; }
load_data() {
	run "$1" -v n_transactions="$n" -f test/ops/dataset.psql >/dev/null
	test/ops/fixtures.sh -d "$1"
	run "$1" -f test/ops/dataset_finish.psql
}
prerequisites() { [ "$1" = incentives_cluster ] && run "$2" -c 'CREATE EXTENSION plproxy'; true; }

walks=0
for ext in incentives incentives_cluster; do
	current=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$ext.control")
	# a released version has a base script EXT--V.sql or an update script
	# EXT--A--V.sql
	released=$(ls src/sql/released/ | sed -n "s/^$ext--\([^-]*\)\.sql$/\1/p; s/^$ext--[^-]*--\([^-]*\)\.sql$/\1/p" | sort -uV)
	[ -n "$released" ] || fail "no released install script of $ext in src/sql/released"

	fresh=upg_fresh
	recreate $fresh
	prerequisites "$ext" $fresh
	run $fresh -c "CREATE EXTENSION $ext"
	[ "$ext" = incentives ] && load_data $fresh
	catalog $fresh "$ext" > "$work/fresh.catalog"
	bash test/upgrade/declared.sh $fresh "$ext"
	digest $fresh > "$work/fresh.digest"

	for from in $released; do
		[ "$from" = "$current" ] && continue
		db=upg_from
		recreate $db
		prerequisites "$ext" $db
		run $db -c "CREATE EXTENSION $ext VERSION '$from'" ||
			fail "$ext $from does not install (does incentives.so still have every entry point its script declares?)"
		[ "$ext" = incentives ] && load_data $db
		digest $db > "$work/before.digest"

		path=$from
		for to in $(printf '%s\n' $released "$current" | sort -uV); do
			[ "$(printf '%s\n%s\n' "$to" "$from" | sort -V | tail -n 1)" = "$from" ] && continue
			run $db -c "ALTER EXTENSION $ext UPDATE TO '$to'" || fail "$ext: ALTER EXTENSION UPDATE TO '$to' failed"
			path="$path -> $to"
		done

		catalog $db "$ext" > "$work/upgraded.catalog"
		if ! diff -u "$work/fresh.catalog" "$work/upgraded.catalog" > "$work/catalog.diff"; then
			cat "$work/catalog.diff"
			fail "$ext $path: the catalog differs from a fresh install of $current (- fresh, + upgraded)"
		fi
		digest $db > "$work/after.digest"
		# every line of before (tables of $from, sequences, the calculation)
		# is in after, unchanged
		if missing=$(grep -vxF -f "$work/after.digest" "$work/before.digest"); then
			echo "$missing"
			fail "$ext $path: data changed by the update (lines above, before the update)"
		fi
		# tables the update added: as in a fresh install given the same data
		# (the rows a later version's tables get, test/ops/dataset_later.psql)
		if [ "$ext" = incentives ]; then
			run $db -f test/ops/dataset_later.psql
			digest $db > "$work/after.digest"
		fi
		while read -r kind name _; do
			grep -q "^$kind $name " "$work/before.digest" && continue
			# The earnings lifecycle's history (docs/lifecycle.md) starts at
			# the update, so it cannot equal a fresh install's: the offer
			# versions are one open version 1 per offer, its document;
			# statements (and their kept rows), exceptions, accruals, offer
			# removals, closings and reopenings none yet; the earnings partition
			# named after a run holds the rows incentives.earnings shows
			# (compared above).
			case $name in
			incentives.offer_versions)
				bad=$(psql -X -A -t -q -d $db -c "SELECT count(*) FROM incentives.offers o
				        FULL JOIN incentives.offer_versions v USING (offer_key)
				       WHERE v.version IS DISTINCT FROM 1 OR v.valid_to IS NOT NULL
				          OR v.document IS DISTINCT FROM o.document")
				[ "$bad" = 0 ] || fail "$ext $path: $bad offers without their open version 1 after the update"
				continue ;;
			incentives.statements | incentives.statement_lines | incentives.calculation_exceptions | \
			incentives.accruals | incentives.accrual_lines | incentives.offer_removals | \
			incentives.statement_kept_rows | incentives.offer_closings | incentives.offer_reopenings)
				grep -q "^$kind $name rows 0 " "$work/after.digest" ||
					fail "$ext $path: $name is not empty after the update"
				continue ;;
			incentives_internal.earnings_run_*) continue ;;
			# the refresh's lock rows (docs/operations.md): no data
			incentives.refresh_locks) continue ;;
			esac
			grep -xF "$(grep "^$kind $name " "$work/after.digest")" "$work/fresh.digest" >/dev/null ||
				fail "$ext $path: $name, added by the update, differs from a fresh install with the same data"
		done < <(grep '^table ' "$work/after.digest")
		walks=$((walks + 1))
		echo "check-upgrade: $ext $path: catalog identical to a fresh install ($(wc -l < "$work/fresh.catalog") lines), data kept:"
		sed 's/ md5 .*//; s/^/  /' "$work/after.digest"
	done
done
[ "$walks" -gt 0 ] || fail "no upgrade path was walked"

# The update refuses nothing it finds stored (docs/backup-and-upgrade.md,
# Upgrade): a database of 0.3.0, the last version before 0.4.0's checks,
# holding what 0.4.0 refuses on a write (test/ops/dataset_legacy.psql)
# updates to the current version with a NOTICE for each, and its dump
# restores completely (custom format in one session and in parallel, and
# plain), every table as it was (test/ops/digest.sql).
last=0.3.0
current=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" incentives.control)
if [ "$last" != "$current" ]; then
	db=upg_legacy
	recreate $db
	run $db -c "CREATE EXTENSION incentives VERSION '$last'" -f test/ops/dataset_legacy.psql
	PGOPTIONS="-c client_min_messages=notice" run $db -c "ALTER EXTENSION incentives UPDATE TO '$current'" \
		2> "$work/legacy.notices" || { cat "$work/legacy.notices"; fail "legacy data: ALTER EXTENSION UPDATE failed"; }
	for code in offer_key_case offer_key_format enrollment_without_offer implausible_rate; do
		grep -q "^NOTICE: .*($code): stored before" "$work/legacy.notices" ||
			{ cat "$work/legacy.notices"; fail "legacy data: the update reported no $code"; }
	done
	# unknown fields: once the update can find them (incentives.offer_warnings
	# or incentives_internal.offer_findings)
	if [ "$(psql -X -A -t -q -d $db -c "SELECT to_regclass('incentives.offer_warnings') IS NOT NULL
	          OR to_regprocedure('incentives_internal.offer_findings(jsonb)') IS NOT NULL")" = t ]; then
		grep -q '^NOTICE: .*(unknown_field): stored before' "$work/legacy.notices" ||
			{ cat "$work/legacy.notices"; fail "legacy data: the update reported no unknown_field"; }
	fi
	digest $db > "$work/legacy.digest"
	pg_dump -Fc -d $db -f "$work/legacy.dump"
	for how in single parallel plain; do
		recreate upg_legacy_restored
		case $how in
		single) pg_restore --exit-on-error -d upg_legacy_restored "$work/legacy.dump" ;;
		parallel) pg_restore --exit-on-error -j 2 -d upg_legacy_restored "$work/legacy.dump" ;;
		plain) pg_dump -d $db | run upg_legacy_restored >/dev/null ;;
		esac || fail "legacy data: the $how restore failed"
		digest upg_legacy_restored > "$work/restored.digest"
		# the change tracking's log (left out of the digest) aside, equal
		diff -u "$work/legacy.digest" "$work/restored.digest" ||
			fail "legacy data: the $how restore differs (- updated, + restored)"
	done
	echo "check-upgrade: incentives $last -> $current with stored keys, enrollments and rates 0.4.0 refuses: $(grep -c '^NOTICE: .*: stored before' "$work/legacy.notices") NOTICEs, restored completely (custom, parallel, plain)"
fi

# A ledger 0.3.0 let lock (docs/lifecycle.md, Statements dated in the
# future; test/ops/ledger_legacy.psql): the update keeps it, computes the
# lines' kind and offer_version, and reports the statement and the accrual
# dated in the future; voided by appending, the ledger goes on.
if [ "$last" != "$current" ]; then
	db=upg_ledger
	recreate $db
	run $db -c "CREATE EXTENSION incentives VERSION '$last'" -f test/ops/ledger_legacy.psql
	PGOPTIONS="-c client_min_messages=notice" run $db -c "ALTER EXTENSION incentives UPDATE TO '$current'" \
		2> "$work/ledger.notices" || { cat "$work/ledger.notices"; fail "ledger: ALTER EXTENSION UPDATE failed"; }
	grep -q '^NOTICE:  statement 3 is dated 2062-07-31 (after today)' "$work/ledger.notices" &&
		grep -q '^NOTICE:  accrual 2 is dated 2062-07-31 (after today)' "$work/ledger.notices" ||
		{ cat "$work/ledger.notices"; fail "ledger: the update did not report the statement and the accrual dated in the future"; }
	got=$(psql -X -A -t -q -v ON_ERROR_STOP=1 -d $db -c "
		SELECT string_agg(l.statement_id || ':' || l.participant_key || ':' || l.kind || ':' || COALESCE(l.offer_version::text, '-'),
		                  ' ' ORDER BY l.statement_id, l.participant_key)
		  FROM incentives.statement_lines AS l")
	[ "$got" = "1:p1:payment:1 2:p1:clawback:1 2:p2:payment:1 3:p1:unchanged:1 3:p2:unchanged:1" ] ||
		fail "ledger: the lines after the update are '$got'"
	psql -X -q -d $db -c "CALL incentives.settle('2026-03-31')" >/dev/null 2>&1 &&
		fail "ledger: a statement before the one dated in the future was accepted"
	got=$(PGOPTIONS="-c client_min_messages=warning" psql -X -A -t -q -v ON_ERROR_STOP=1 -d $db \
		-c "SELECT incentives.void_statement(3, 'typo: 2062 for 2026') IS NOT NULL" \
		-c "SELECT incentives.void_accrual(2, 'typo: 2062 for 2026') IS NOT NULL" \
		-c "CALL incentives.settle('2026-03-31')" -c "CALL incentives.accrue('2026-03-31')" \
		-c "SELECT count(*) FROM incentives.statements" \
		-c "SELECT string_agg(participant_key || ':' || settled_total || ':' || last_statement_date, ' ' ORDER BY 1)
		      FROM incentives.settlement_balances" \
		-c "SELECT string_agg(participant_key || ':' || accrued || ':' || settled, ' ' ORDER BY 1)
		      FROM incentives.accrual_balances") || fail "ledger: voiding and settling on failed"
	[ "$(echo $got)" = "t t 5 p1:70.00:2026-03-31 p2:20.00:2026-03-31 p1:70.00:70.00 p2:20.00:20.00" ] ||
		fail "ledger: after voiding, '$(echo $got)'"
	echo "check-upgrade: incentives $last -> $current with a ledger dated in the future: reported, the lines' kinds computed, voided by appending, settled on"
fi
echo "check-upgrade: passed ($walks upgrade paths)"
