#!/bin/bash
# test/upgrade/declared.sh DB EXTENSION: every routine, view, trigger and
# policy of EXTENSION in database DB (a fresh install) is declared by a
# statement written out in src/sql/EXTENSION/code/ (CREATE [OR REPLACE]
# FUNCTION|PROCEDURE|VIEW schema.name(, CREATE TRIGGER name ... ON
# schema.table, CREATE POLICY name ON schema.table), and every table and
# type in its upgrade parts or its released scripts -- so a reader finds
# each with grep, and an object the code no longer declares (left behind by
# an update that forgot to drop it) fails here.  The one policy created by
# a catalog-driven loop, participant_visible, is found by its loop.  Run by
# test/ops/upgrade.sh (make check-upgrade), from the repository root.
set -euo pipefail
db=$1 ext=$2
code=(src/sql/$ext/code)
data=(src/sql/$ext/upgrade src/sql/released/$ext--*.sql)
missing=0
declared() {   # declared PATTERN WHAT FILES...
	local pattern=$1 what=$2
	shift 2
	grep -rqE "$pattern" "$@" || { echo "declared: $ext: $what is not written out in ${*}" >&2; missing=$((missing + 1)); }
}
q() { printf '%s' "$1" | sed 's/[.[\*^$()+?{|]/\\&/g'; }
objects=$(psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$db" -v ext="$ext" <<'SQL'
WITH members AS (
    SELECT d.classid, d.objid FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
     WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND e.extname = :'ext'
       -- the types that come with another member (a relation's row type, an array
       -- type) are not members of their own: PostgreSQL 17 records them, 15 does not
       AND NOT EXISTS (SELECT 1 FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
                         WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                           AND (t.typcategory = 'A' OR c.relkind <> 'c')))
SELECT p.prokind::text || '|' || p.pronamespace::regnamespace || '|' || p.proname || '|'
  FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
UNION ALL
SELECT CASE c.relkind WHEN 'p' THEN 'r' ELSE c.relkind::text END || '|' || c.relnamespace::regnamespace || '|' || c.relname || '|'
  FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
 WHERE c.relkind IN ('r', 'p', 'v')
UNION ALL
SELECT 'c|' || t.typnamespace::regnamespace || '|' || t.typname || '|'
  FROM pg_type t JOIN members m ON m.classid = 'pg_type'::regclass AND m.objid = t.oid
 WHERE t.typtype = 'c'
UNION ALL
SELECT 't||' || t.tgname || '|' || t.tgrelid::regclass
  FROM pg_trigger t JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = t.tgrelid
 WHERE NOT t.tgisinternal
UNION ALL
SELECT 'o||' || po.polname || '|' || po.polrelid::regclass
  FROM pg_policy po JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = po.polrelid
SQL
)
[ -n "$objects" ] || { echo "declared: $ext: no object found in database $db" >&2; exit 1; }
while IFS='|' read -r kind schema name rel; do
	case $kind in
	f) declared "^CREATE (OR REPLACE )?FUNCTION $(q "$schema.$name")\\(" "function $schema.$name" "${code[@]}" ;;
	p) declared "^CREATE (OR REPLACE )?PROCEDURE $(q "$schema.$name")\\(" "procedure $schema.$name" "${code[@]}" ;;
	v) declared "^CREATE (OR REPLACE )?VIEW $(q "$schema.$name") " "view $schema.$name" "${code[@]}" ;;
	r | p_) declared "^CREATE TABLE $(q "$schema.$name") " "table $schema.$name" "${data[@]}" ;;
	c) declared "^CREATE TYPE $(q "$schema.$name") AS" "type $schema.$name" "${data[@]}" ;;
	t) declared "^CREATE (CONSTRAINT )?TRIGGER $(q "$name")\$" "trigger $name on $rel" "${code[@]}" ;;
	o) [ "$name" = participant_visible ] && name='participant_visible ON %s'
	   declared "CREATE POLICY $(q "$name")( ON $(q "$rel"))?" "policy $name on $rel" "${code[@]}" ;;
	esac
done <<< "$objects"
[ "$missing" -eq 0 ] || { echo "declared: $ext: $missing objects of a fresh install are not written out (above)" >&2; exit 1; }
echo "declared: $ext: each of the $(grep -c "" <<< "$objects") routines, views, triggers, policies, tables and types of a fresh install is written out in src/sql"
