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
-- after an update from 0.1.0 compares the rows 0.1.0 kept; likewise the
-- rows of the earnings (and their partitions) and of the calculation are
-- compared without their NULLs, so that the NULL group_key 0.3.0 adds to
-- a row of 0.2.0 leaves it as it was -- a row with a group_key keeps it; the ledger's columns that 0.4.0 adds
-- -- kind and offer_version of the statement lines, transactions, reverses
-- and reason of the statements and accruals -- are left out of their rows
-- in the same way; the offer versions are compared without their NULLs,
-- so that the NULL effective_from 0.4.0 adds leaves a version as it was;
-- the transactions likewise, so that the NULL grower_key, currency and
-- original_transaction_id 0.5.0 adds leave a row as it was, and the lines'
-- currency that 0.5.0 adds is left out of the statement and accrual
-- lines, as are the statement lines' payable_to_date, held_back and final
-- -- their check says payable_to_date is earned_to_date on a line that
-- held nothing back.)
SELECT format($q$SELECT %L || ' rows ' || count(*) || ' md5 ' || coalesce(md5(string_agg(%s, E'\n' ORDER BY %s COLLATE "C")), '-') FROM %s AS t$q$,
              'table ' || c.oid::regclass::text,
              CASE WHEN c.oid::regclass::text = 'incentives.calculation_runs'
                   THEN $e$(to_jsonb(t) - '{on_error,changed_only,exceptions}'::text[])::text$e$
                   WHEN c.oid::regclass::text = 'incentives.statement_lines'
                   THEN $e$(to_jsonb(t) - '{kind,offer_version,currency,payable_to_date,held_back,final}'::text[])::text$e$
                   WHEN c.oid::regclass::text = 'incentives.accrual_lines'
                   THEN $e$(to_jsonb(t) - '{currency}'::text[])::text$e$
                   WHEN c.oid::regclass::text IN ('incentives.statements', 'incentives.accruals')
                   THEN $e$(to_jsonb(t) - '{transactions,reverses,reason}'::text[])::text$e$
                   WHEN g.attname IS NOT NULL OR c.oid::regclass::text IN ('incentives.earnings', 'incentives.offer_versions',
                                                                           'incentives.transactions')
                        OR c.oid::regclass::text LIKE 'incentives\_internal.earnings\_run\_%'
                   THEN 'jsonb_strip_nulls(to_jsonb(t))::text'
                   ELSE 't::text' END,
              CASE WHEN c.oid::regclass::text = 'incentives.calculation_runs'
                   THEN $e$(to_jsonb(t) - '{on_error,changed_only,exceptions}'::text[])::text$e$
                   WHEN c.oid::regclass::text = 'incentives.statement_lines'
                   THEN $e$(to_jsonb(t) - '{kind,offer_version,currency,payable_to_date,held_back,final}'::text[])::text$e$
                   WHEN c.oid::regclass::text = 'incentives.accrual_lines'
                   THEN $e$(to_jsonb(t) - '{currency}'::text[])::text$e$
                   WHEN c.oid::regclass::text IN ('incentives.statements', 'incentives.accruals')
                   THEN $e$(to_jsonb(t) - '{transactions,reverses,reason}'::text[])::text$e$
                   WHEN g.attname IS NOT NULL OR c.oid::regclass::text IN ('incentives.earnings', 'incentives.offer_versions',
                                                                           'incentives.transactions')
                        OR c.oid::regclass::text LIKE 'incentives\_internal.earnings\_run\_%'
                   THEN 'jsonb_strip_nulls(to_jsonb(t))::text'
                   ELSE 't::text' END,
              c.oid::regclass)
  FROM pg_class c
  LEFT JOIN pg_attribute g ON g.attrelid = c.oid AND g.attname = 'group_key' AND NOT g.attisdropped
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
SELECT $q$SELECT 'calculation rows ' || count(*) || ' md5 ' || coalesce(md5(string_agg(r, E'\n' ORDER BY r COLLATE "C")), '-')
            FROM (SELECT jsonb_strip_nulls(to_jsonb(e))::text AS r
                    FROM incentives.incentive_calculate() AS e) AS e$q$
 WHERE to_regproc('incentives.incentive_calculate') IS NOT NULL
   AND EXISTS (SELECT FROM pg_extension WHERE extname = 'incentives')
\gexec
