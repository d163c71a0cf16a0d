-- test/ops/digest.sql: one text line per table and sequence of the
-- incentives extensions' schemas (incentives, incentives_internal,
-- incentives_cluster), found in the catalog, with its row count and the md5
-- of its rows in a fixed order, plus the same for a full
-- incentive_calculate() when the extension is there.  Two databases hold
-- the same data when their lines are equal (test/ops/dump_restore.sh,
-- upgrade.sh).  psql -X -A -t -q -f test/ops/digest.sql
-- (incentives.earnings_changes is left out: it is the change tracking's
-- bookkeeping, not data; a restore logs every row it loads there, so the
-- next changed_only refresh is a full one -- docs/lifecycle.md.)
-- (The run log's columns that 0.2.0 added -- on_error, changed_only,
-- exceptions -- are left out of its rows, so that its digest before and
-- after an update from 0.1.0 compares the rows 0.1.0 kept.)
SELECT format($q$SELECT %L || ' rows ' || count(*) || ' md5 ' || coalesce(md5(string_agg(%s, E'\n' ORDER BY %s COLLATE "C")), '-') FROM %s AS t$q$,
              'table ' || c.oid::regclass::text,
              CASE WHEN c.oid::regclass::text = 'incentives.calculation_runs'
                   THEN $e$(to_jsonb(t) - '{on_error,changed_only,exceptions}'::text[])::text$e$ ELSE 't::text' END,
              CASE WHEN c.oid::regclass::text = 'incentives.calculation_runs'
                   THEN $e$(to_jsonb(t) - '{on_error,changed_only,exceptions}'::text[])::text$e$ ELSE 't::text' END,
              c.oid::regclass)
  FROM pg_class c
 WHERE c.relnamespace::regnamespace::text IN ('incentives', 'incentives_internal', 'incentives_cluster')
   AND c.relkind IN ('r', 'p')
   AND c.oid::regclass::text <> 'incentives.earnings_changes'
 ORDER BY c.oid::regclass::text COLLATE "C"
\gexec
SELECT format($q$SELECT %L || ' last_value ' || last_value || ' is_called ' || is_called FROM %s$q$,
              'sequence ' || c.oid::regclass::text, c.oid::regclass)
  FROM pg_class c
 WHERE c.relnamespace::regnamespace::text IN ('incentives', 'incentives_internal', 'incentives_cluster')
   AND c.relkind = 'S'
 ORDER BY c.oid::regclass::text COLLATE "C"
\gexec
SELECT $q$SELECT 'calculation rows ' || count(*) || ' md5 ' || coalesce(md5(string_agg(e::text, E'\n' ORDER BY e::text COLLATE "C")), '-') FROM incentives.incentive_calculate() AS e$q$
 WHERE to_regproc('incentives.incentive_calculate') IS NOT NULL
   AND EXISTS (SELECT FROM pg_extension WHERE extname = 'incentives')
\gexec
