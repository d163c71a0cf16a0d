-- plans: what the planner expects of incentive_calculate and forecast
-- (docs/reference.md, Plans): their support functions estimate the rows
-- from the transactions relation (its size, one participant's share), the
-- offers named and the earning rows per transaction of the last refresh;
-- each estimate within 10 times the rows returned.  In a database of its
-- own, with the generated data set.
\set regress_db :DBNAME
CREATE DATABASE incentives_plans;
\c incentives_plans
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;
\set n_transactions 20000
\set ECHO none
SET client_min_messages = warning;
\o /dev/null
\i bench/generate.sql
\o
RESET client_min_messages;
\set ECHO all
ANALYZE;
-- estimated(query): the planner's rows for the query's top node;
-- actual(query): the rows it returns.
CREATE FUNCTION pg_temp.estimated(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
CREATE FUNCTION pg_temp.actual(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE 'SELECT count(*) FROM (' || q || ') AS q' INTO n;
  RETURN n;
END $$;
CREATE FUNCTION pg_temp.within_10x(q text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN e BETWEEN a / 10 AND a * 10 THEN 'within 10x'
              ELSE format('estimated %s, returned %s', e, a) END
    FROM (SELECT pg_temp.estimated(q) AS e, GREATEST(pg_temp.actual(q), 1) AS a) AS x
$$;
-- before any refresh (an earning row per transaction assumed)
SELECT q, pg_temp.within_10x(q) FROM (VALUES
  ('SELECT * FROM incentives.incentive_calculate()'),
  ('SELECT * FROM incentives.incentive_calculate(participant_key => ''retailer_0007'')'),
  ('SELECT * FROM incentives.forecast(''2026-06-30'')'),
  ('SELECT * FROM incentives.forecast(''2026-06-30'', ''retailer_0007'')')) AS t(q);
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;
ANALYZE;
-- after it (its earning rows per transaction)
SELECT q, pg_temp.within_10x(q) FROM (VALUES
  ('SELECT * FROM incentives.incentive_calculate()'),
  ('SELECT * FROM incentives.incentive_calculate(participant_key => ''retailer_0007'')'),
  ('SELECT * FROM incentives.incentive_calculate(participant_key => ''retailer_0500'', offer_keys => ARRAY[(SELECT min(offer_key) FROM incentives.offers)])'),
  ('SELECT * FROM incentives.forecast(''2026-06-30'')'),
  ('SELECT * FROM incentives.forecast(''2026-06-30'', ''retailer_0007'')')) AS t(q);
-- the estimate of everyone is the refresh's rows
SELECT pg_temp.estimated('SELECT * FROM incentives.incentive_calculate()')
       = (SELECT count(*) FROM incentives.earnings) AS everyone_estimated_exactly;
-- A BI tool's filter is applied to everyone's rows; the argument calculates
-- the one participant (docs/reference.md, Plans).
EXPLAIN (COSTS OFF) SELECT * FROM incentives.incentive_calculate() WHERE participant_key = 'retailer_0007';
EXPLAIN (COSTS OFF) SELECT * FROM incentives.incentive_calculate(participant_key => 'retailer_0007');
\c :regress_db
DROP DATABASE incentives_plans;
