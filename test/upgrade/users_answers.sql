-- test/upgrade/users_answers.sql: what the users' objects of
-- users_create.sql answer, one line each (the row count and md5 of the
-- ordered rows), read as bi_reader (and bi_limited); the same before and
-- after an update (test/upgrade/users.sh).
\set ON_ERROR_STOP 1
SET ROLE bi_reader;
SELECT format($q$SELECT %L || ' rows ' || count(*) || ' md5 ' || md5(coalesce(string_agg(t::text, E'\n' ORDER BY t::text COLLATE "C"), '')) FROM %s AS t$q$,
              'view ' || c.oid::regclass, c.oid::regclass)
  FROM pg_class c
 WHERE c.relnamespace = 'bi'::regnamespace AND c.relkind = 'v'
 ORDER BY c.relname
\gexec
SELECT 'function bi.earnings_of rows ' || count(*) || ' md5 '
       || md5(coalesce(string_agg(e::text, E'\n' ORDER BY e::text COLLATE "C"), ''))
  FROM bi.earnings_of('retailer_0001') AS e;
SELECT 'function bi.total_of ' || bi.total_of('retailer_0001');
SET ROLE bi_limited;
SELECT 'view bi.calc as bi_limited, columns offer_key, incentive_amount: rows ' || count(*) || ' sum ' || sum(incentive_amount)
  FROM bi.calc;
RESET ROLE;
