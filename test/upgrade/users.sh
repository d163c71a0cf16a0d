#!/bin/bash
# test/upgrade/users.sh: ALTER EXTENSION ... UPDATE from every released
# version keeps what users built on the extension, and it answers the same
# (docs/backup-and-upgrade.md, Upgrade).  Run by `make check-upgrade-users`
# on a throwaway cluster (PGHOST etc. set by pg_virtualenv), from the
# repository root.
#
# incentives, from each released version V (src/sql/released/, as
# test/ops/upgrade.sh finds them):
#   1. a database with incentives V, data (test/ops/dataset*.psql with
#      UPGRADE_USERS_N generated transactions, every fixture case,
#      refreshed earnings) and the users' objects of
#      test/upgrade/users_create.sql: views over every view of the
#      extension, over incentive_calculate() (options, comments, column
#      privileges, a view over the view), over the other calculation
#      functions and over incentives.earnings; functions RETURNS SETOF
#      incentives.earning; a trigger and row-level security policies of
#      the DBA's on incentives.transactions; privileges;
#   2. ALTER EXTENSION incentives UPDATE through every later released
#      version to the current one;
#   3. every object answers as before (test/upgrade/users_answers.sql, as
#      bi_reader and bi_limited), every routine, relation and type of the
#      extension the update kept by name kept its oid (but what its
#      scripts say they replace), the audit trigger still fires, every
#      routine, relation and schema keeps its privileges (by name:
#      test/upgrade/users_privileges.sql), no object of the user's became
#      the extension's or has initial privileges (pg_dump dumps them all,
#      grants included), and the extension's catalog (test/upgrade/
#      catalog.sql) equals that of a fresh install with the same objects
#      once the DBA's grants ran again (test/upgrade/users_security.sql).
# From 0.1.0, a function with a BEGIN ATOMIC body over incentive_calculate
# and a materialized view over incentives.earnings (both replaced by 0.2.0)
# stop the update with one error naming both; dropped, it goes through.
# incentives_cluster, from each released version: views over its
# calculations (test/upgrade/users_cluster.sql) survive the update as
# they were, over the new functions, and the catalog equals a fresh
# install's with the same views.
set -euo pipefail
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
n=${UPGRADE_USERS_N:-20000}
work=$(mktemp -d /tmp/incentives-upgrade-users.XXXXXX)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
fail() { echo "check-upgrade-users: FAILED: $*" >&2; exit 1; }
recreate() { psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"; }
run() { local db=$1; shift; psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
val() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
catalog() { psql -X -A -t -q -v ON_ERROR_STOP=1 -v ext="$2" -d "$1" -f test/upgrade/catalog.sql; }
released() {
	ls src/sql/released/ | sed -n "s/^$1--\([^-]*\)\.sql$/\1/p; s/^$1--[^-]*--\([^-]*\)\.sql$/\1/p" | sort -uV
}
update_all() {   # update_all DB EXT FROM: through every later released version to the current one
	local db=$1 ext=$2 from=$3 current to path=$3 step=$3
	current=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$ext.control")
	: > "$work/scripts"
	for to in $(printf '%s\n' $(released "$ext") "$current" | sort -uV); do
		[ "$(printf '%s\n%s\n' "$to" "$from" | sort -V | tail -n 1)" = "$from" ] && continue
		run "$db" -c "ALTER EXTENSION $ext UPDATE TO '$to'" ||
			fail "$ext $path -> $to: ALTER EXTENSION UPDATE failed with the users' objects in place"
		ls "src/sql/released/$ext--$step--$to.sql" "build/$ext--$step--$to.sql" 2>/dev/null >> "$work/scripts"
		path="$path -> $to"
		step=$to
	done
	echo "$path"
}
# identities DB EXT: every routine, relation and type of EXT, with its oid
# (the types that come with another member, a relation's row type or an
# array type, are left out: PostgreSQL 17 records them as members, 15 not)
identities() {
	psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -c "
	    SELECT CASE d.classid WHEN 'pg_proc'::regclass THEN 'routine' || chr(9) || d.objid::regprocedure
	                          WHEN 'pg_class'::regclass THEN 'relation' || chr(9) || d.objid::regclass
	                          ELSE 'type' || chr(9) || d.objid::regtype END || chr(9) || d.objid
	      FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
	     WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND e.extname = '$2'
	       AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass, 'pg_type'::regclass)
	       AND NOT EXISTS (SELECT 1 FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
	                         WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
	                           AND (t.typcategory = 'A' OR c.relkind <> 'c'))
	     ORDER BY 1"
}
# same_oids DB EXT WHAT: what the update kept by name kept its oid, but for
# what its scripts say they replace (update_replace_function/_relation)
same_oids() {
	local db=$1 ext=$2 what=$3 kind name oid after replaced
	replaced=$({ grep -ho "update_replace_[a-z]*('[^']*')" $(cat "$work/scripts") || true; } |
	           sed "s/.*('\(.*\)')/\1/" | sort -u)
	while IFS=$'\t' read -r kind name oid; do
		after=$(awk -F '\t' -v k="$kind" -v n="$name" '$1 == k && $2 == n { print $3 }' "$work/after.identities")
		[ -z "$after" ] || [ "$after" = "$oid" ] && continue
		# (a routine replaced has a new signature: another name)
		grep -qxF "$name" <<< "$replaced" && continue
		fail "$what: $kind $name has another oid after the update ($oid -> $after) without being one of the objects the update replaces"
	done < "$work/before.identities"
}
# not_theirs DB: no object of schema bi is a member of an extension or has
# initial privileges (either would keep pg_dump from dumping it as it is)
not_theirs() {
	local bad
	bad=$(val "$1" "SELECT string_agg(pg_describe_object(d.classid, d.objid, 0), ', ')
	                FROM pg_depend d
	               WHERE d.deptype = 'e' AND ((d.classid = 'pg_class'::regclass AND d.objid IN
	                        (SELECT oid FROM pg_class WHERE relnamespace = 'bi'::regnamespace))
	                   OR (d.classid = 'pg_proc'::regclass AND d.objid IN
	                        (SELECT oid FROM pg_proc WHERE pronamespace = 'bi'::regnamespace)))")
	[ -z "$bad" ] || fail "$2: the update made objects of the user's the extension's: $bad"
	bad=$(val "$1" "SELECT string_agg(i.objoid::regclass::text, ', ') FROM pg_init_privs i
	               WHERE i.classoid = 'pg_class'::regclass
	                 AND i.objoid IN (SELECT oid FROM pg_class WHERE relnamespace = 'bi'::regnamespace)")
	[ -z "$bad" ] || fail "$2: objects of the user's have initial privileges (pg_dump would leave their grants out): $bad"
}

walks=0
current=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" incentives.control)
recreate users_fresh
run users_fresh -c "CREATE EXTENSION incentives" -f test/upgrade/users_create.sql
catalog users_fresh incentives > "$work/fresh.catalog"
for from in $(released incentives); do
	[ "$from" = "$current" ] && continue
	db=users_from
	recreate $db
	run $db -c "CREATE EXTENSION incentives VERSION '$from'"
	run $db -v n_transactions="$n" -f test/ops/dataset.psql >/dev/null
	test/ops/fixtures.sh -d $db
	run $db -f test/ops/dataset_finish.psql
	run $db -f test/upgrade/users_create.sql
	run $db -f test/upgrade/users_answers.sql -A -t > "$work/before.answers"
	psql -X -A -t -q -v ON_ERROR_STOP=1 -d $db -f test/upgrade/users_privileges.sql > "$work/before.privileges"
	audit_before=$(val $db "SELECT count(*) FROM bi.audit")
	identities $db incentives > "$work/before.identities"

	path=$(update_all $db incentives "$from")
	identities $db incentives > "$work/after.identities"
	same_oids $db incentives "incentives $path"
	kept=$(sort "$work/before.identities" "$work/after.identities" | uniq -d | wc -l)

	run $db -f test/upgrade/users_answers.sql -A -t > "$work/after.answers" ||
		fail "incentives $path: the users' objects no longer answer"
	diff -u "$work/before.answers" "$work/after.answers" ||
		fail "incentives $path: the users' objects answer otherwise after the update (- before, + after)"
	psql -X -A -t -q -v ON_ERROR_STOP=1 -d $db -f test/upgrade/users_privileges.sql > "$work/after.privileges"
	while read -r kind name acl; do
		after=$(grep "^$kind $name " "$work/after.privileges" || true)
		if [ "$kind $name" = "routine incentives_internal.participant_units" ] && [ -n "$after" ]; then
			# it reads as the owner: PUBLIC loses EXECUTE, everyone else
			# keeps theirs (docs/security.md, Principles)
			case ${after##* } in *"{=X/"* | *",=X/"*)
				fail "incentives $path: PUBLIC may still execute $name: ${after##* }" ;; esac
			for e in $(printf '%s' "$acl" | tr -d '{}' | tr ',' ' '); do
				case $e in =*) continue ;; esac
				case ",$(printf '%s' "${after##* }" | tr -d '{}')," in *",$e,"*) ;;
				*) fail "incentives $path: $name lost $e: $acl -> ${after##* }" ;; esac
			done
			continue
		fi
		[ -z "$after" ] || [ "$after" = "$kind $name $acl" ] ||
			fail "incentives $path: the privileges of $kind $name changed: $acl -> ${after##* }"
	done < "$work/before.privileges"
	run $db -c "INSERT INTO incentives.transactions VALUES ('USERS-AUDIT-1', 'retailer_0001', 'retailer_purchases_from_distribution', '2026-03-01', 'x', 1, 'gal', 1)"
	[ "$(val $db "SELECT count(*) FROM bi.audit")" = $((audit_before + 1)) ] ||
		fail "incentives $path: the user's trigger on incentives.transactions no longer fires"
	run $db -c "DELETE FROM incentives.transactions WHERE transaction_id = 'USERS-AUDIT-1'"
	not_theirs $db "incentives $path"
	pg_dump -s -d $db > "$work/schema.sql"
	grep -q '^GRANT SELECT ON TABLE bi.calc TO bi_reader;$' "$work/schema.sql" ||
		fail "incentives $path: pg_dump no longer dumps the grant on the user's view bi.calc"
	grep -q '^CREATE VIEW bi.calc WITH (security_barrier=.true.) AS$' "$work/schema.sql" ||
		fail "incentives $path: pg_dump no longer dumps the user's view bi.calc as it was"

	run $db -f test/upgrade/users_security.sql
	catalog $db incentives > "$work/upgraded.catalog"
	if ! diff -u "$work/fresh.catalog" "$work/upgraded.catalog" > "$work/catalog.diff"; then
		cat "$work/catalog.diff"
		fail "incentives $path: with the users' objects, the catalog differs from a fresh install of $current (- fresh, + upgraded)"
	fi
	walks=$((walks + 1))
	echo "check-upgrade-users: incentives $path: $(grep -c '' "$work/after.answers") users' objects answer as before, privileges kept, $kept routines, relations and types kept their oid, catalog identical to a fresh install ($(wc -l < "$work/fresh.catalog") lines)"
done

# What the update cannot keep stops it, naming each object: from 0.1.0
# (whose incentive_calculate and incentives.earnings 0.2.0 replaces), a
# function with a BEGIN ATOMIC body over the calculation and a
# materialized view over the earnings; once they are dropped, it goes
# through.
if [ "$(released incentives | head -n 1)" = 0.1.0 ]; then
	db=users_from
	recreate $db
	run $db -c "CREATE EXTENSION incentives VERSION '0.1.0'" -c "CREATE SCHEMA bi2" \
		-c "CREATE FUNCTION bi2.total() RETURNS numeric LANGUAGE sql BEGIN ATOMIC SELECT sum(e.incentive_amount) FROM incentives.incentive_calculate() AS e; END" \
		-c "CREATE MATERIALIZED VIEW bi2.snapshot AS SELECT participant_key, incentive_amount FROM incentives.earnings"
	if message=$(psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d $db -c "ALTER EXTENSION incentives UPDATE" 2>&1); then
		fail "incentives 0.1.0: the update went through with a BEGIN ATOMIC function and a materialized view of the user's over what it replaces"
	fi
	for want in 'ERROR:  2BP01: ALTER EXTENSION incentives UPDATE cannot replace objects that objects of yours depend on' \
	            'function bi2.total() (depends on incentives.incentive_calculate(text,jsonb,text[],regclass))' \
	            'materialized view bi2.snapshot (depends on incentives.earnings)' 'HINT:  Drop them, update'; do
		grep -qF "$want" <<<"$message" ||
			fail "incentives 0.1.0: the update's error does not say \"$want\": $message"
	done
	[ "$(val $db "SELECT extversion FROM pg_extension WHERE extname = 'incentives'")" = 0.1.0 ] ||
		fail "incentives 0.1.0: the failed update changed the version"
	run $db -c "DROP FUNCTION bi2.total()" -c "DROP MATERIALIZED VIEW bi2.snapshot" -c "ALTER EXTENSION incentives UPDATE"
	echo "check-upgrade-users: incentives 0.1.0: a BEGIN ATOMIC function and a materialized view over what the update replaces stop it ($(printf '%s\n' "$message" | sed -n 's/^DETAIL:  //p')); dropped, the update goes through"
fi

current=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" incentives_cluster.control)
recreate users_fresh
run users_fresh -c "CREATE EXTENSION plproxy" -c "CREATE EXTENSION incentives_cluster" -f test/upgrade/users_cluster.sql
catalog users_fresh incentives_cluster > "$work/fresh.catalog"
for from in $(released incentives_cluster); do
	[ "$from" = "$current" ] && continue
	db=users_from
	recreate $db
	run $db -c "CREATE EXTENSION plproxy" -c "CREATE EXTENSION incentives_cluster VERSION '$from'" \
		-f test/upgrade/users_cluster.sql
	psql -X -A -t -q -v ON_ERROR_STOP=1 -d $db -f test/upgrade/users_privileges.sql > "$work/before.privileges"
	views_before=$(val $db "SELECT string_agg(c.relname || ' ' || pg_get_userbyid(c.relowner) || ' ' || coalesce(c.reloptions::text, '-'), ', ' ORDER BY c.relname) FROM pg_class c WHERE c.relnamespace = 'bi'::regnamespace")

	path=$(update_all $db incentives_cluster "$from")

	[ "$(val $db "SELECT string_agg(c.relname || ' ' || pg_get_userbyid(c.relowner) || ' ' || coalesce(c.reloptions::text, '-'), ', ' ORDER BY c.relname) FROM pg_class c WHERE c.relnamespace = 'bi'::regnamespace")" = "$views_before" ] ||
		fail "incentives_cluster $path: the users' views are not as they were"
	psql -X -A -t -q -v ON_ERROR_STOP=1 -d $db -f test/upgrade/users_privileges.sql > "$work/after.privileges"
	while read -r kind name acl; do
		after=$(grep "^$kind $name " "$work/after.privileges" || true)
		[ -z "$after" ] || [ "$after" = "$kind $name $acl" ] ||
			fail "incentives_cluster $path: the privileges of $kind $name changed: $acl -> ${after##* }"
	done < "$work/before.privileges"
	stale=$(val $db "SELECT count(*) FROM pg_depend d JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
	                  JOIN pg_class c ON c.oid = r.ev_class AND c.relnamespace = 'bi'::regnamespace
	                 WHERE d.refclassid = 'pg_proc'::regclass
	                   AND d.refobjid NOT IN (SELECT objid FROM pg_depend WHERE deptype = 'e' AND classid = 'pg_proc'::regclass)
	                   AND d.refobjid IN (SELECT oid FROM pg_proc WHERE pronamespace = 'incentives'::regnamespace)")
	[ "$stale" = 0 ] || fail "incentives_cluster $path: a view of the user's reads a function the extension no longer has"
	not_theirs $db "incentives_cluster $path"
	catalog $db incentives_cluster > "$work/upgraded.catalog"
	if ! diff -u "$work/fresh.catalog" "$work/upgraded.catalog" > "$work/catalog.diff"; then
		cat "$work/catalog.diff"
		fail "incentives_cluster $path: with the users' views, the catalog differs from a fresh install of $current (- fresh, + upgraded)"
	fi
	walks=$((walks + 1))
	echo "check-upgrade-users: incentives_cluster $path: the users' views kept, over the new functions; catalog identical to a fresh install ($(wc -l < "$work/fresh.catalog") lines)"
done
[ "$walks" -gt 0 ] || fail "no update path was walked"
echo "check-upgrade-users: passed ($walks update paths)"
