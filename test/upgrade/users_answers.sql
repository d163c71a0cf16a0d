-- test/upgrade/users_answers.sql: what the users' objects of
-- users_create.sql answer, one line each (the row count and md5 of the
-- ordered rows), read as bi_reader (and bi_limited); the same before and
-- after an update (test/upgrade/users.sh).
\set ON_ERROR_STOP 1
SET ROLE bi_reader;
-- (the statement lines of participant_statements.lines gain the keys
-- 0.4.0 adds -- kind and offer_version -- and 0.5.0 -- payable_to_date,
-- held_back and final, docs/lifecycle.md: the lines are compared without
-- them; incentive_explain's totals gain 0.5.0's "basis",
-- docs/analyst-guide.md: they are compared without it; the warnings of
-- the codes 0.5.0 adds -- no_grower, no_exchange_rate,
-- return_outside_period, unknown_original, mixed_currencies,
-- docs/reference.md, Offer warnings -- find what earlier versions did not
-- look for: the warnings are compared without them)
SELECT format($q$SELECT %L || ' rows ' || count(*) || ' md5 ' || md5(coalesce(string_agg(%s, E'\n' ORDER BY %s COLLATE "C"), '')) FROM %s AS t WHERE %s$q$,
              'view ' || c.oid::regclass, r.expr, r.expr, c.oid::regclass,
              CASE WHEN w.attname IS NOT NULL
                   THEN $w$t.code NOT IN ('no_grower', 'no_exchange_rate', 'return_outside_period', 'unknown_original', 'mixed_currencies')$w$
                   ELSE 'true' END)
  FROM pg_class c
  LEFT JOIN pg_attribute w ON w.attrelid = c.oid AND w.attname = 'code' AND NOT w.attisdropped
  LEFT JOIN pg_attribute l ON l.attrelid = c.oid AND l.attname = 'lines' AND l.atttypid = 'jsonb'::regtype AND NOT l.attisdropped
  LEFT JOIN pg_attribute x ON x.attrelid = c.oid AND x.attname = 'totals' AND x.atttypid = 'jsonb'::regtype AND NOT x.attisdropped
  CROSS JOIN LATERAL (SELECT CASE WHEN l.attname IS NOT NULL
                                  THEN $e$(to_jsonb(t) || jsonb_build_object('lines',
                                             (SELECT jsonb_agg(x - '{kind,offer_version,payable_to_date,held_back,final}'::text[] ORDER BY o)
                                                FROM jsonb_array_elements(t.lines) WITH ORDINALITY AS e(x, o))))::text$e$
                                  WHEN x.attname IS NOT NULL
                                  THEN $e$(to_jsonb(t) || jsonb_build_object('totals', t.totals - 'basis'))::text$e$
                                  ELSE 't::text'
                             END AS expr) AS r
 WHERE c.relnamespace = 'bi'::regnamespace AND c.relkind = 'v'
 ORDER BY c.relname
\gexec
-- (a function returning incentives.earning returns the columns a version
-- adds at its end too -- 0.3.0's group_key, NULL outside groups: the
-- rows are compared without their NULLs)
SELECT 'function bi.earnings_of rows ' || count(*) || ' md5 '
       || md5(coalesce(string_agg(jsonb_strip_nulls(to_jsonb(e))::text, E'\n'
                                  ORDER BY jsonb_strip_nulls(to_jsonb(e))::text COLLATE "C"), ''))
  FROM bi.earnings_of('retailer_0001') AS e;
SELECT 'function bi.total_of ' || bi.total_of('retailer_0001');
SET ROLE bi_limited;
SELECT 'view bi.calc as bi_limited, columns offer_key, incentive_amount: rows ' || count(*) || ' sum ' || sum(incentive_amount)
  FROM bi.calc;
RESET ROLE;
