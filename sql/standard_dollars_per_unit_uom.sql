-- standard_dollars_per_unit_uom: dollars per unit of the SKU's unit of
-- measure (docs/reference.md, Unit conversions): transactions in qt, l and a
-- project unit (jug, from uom_conversions.csv) are converted to gal; a return
-- earns a negative amount.
-- Fixture: test/fixtures/standard_dollars_per_unit_uom/ (see its README.md).
\set fixture standard_dollars_per_unit_uom
\i test/sql/load_fixture.psql

-- The checks every fixture gets: its rows, the decisive comparison with
-- expected.csv, per-participant calls, totals, the unique row key.
\i test/sql/fixture_checks.psql

-- The conversions applied: provided quantity and unit, incentivized gal.
SELECT transaction_id, provided_quantity, provided_uom_key, incentivized_quantity, incentive_amount
  FROM incentives.incentive_calculate()
 ORDER BY transaction_id;

-- A pair found only the other way round is used as 1 / factor: store
-- gal -> jug 0.4 instead of jug -> gal 2.5; the rows do not change.
UPDATE incentives.uom_conversions
   SET from_uom_key = 'gal', to_uom_key = 'jug', factor = 0.4
 WHERE from_uom_key = 'jug' AND to_uom_key = 'gal';

WITH actual AS (SELECT * FROM pg_temp.actual())
(SELECT 'missing' AS problem, * FROM (TABLE expected EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE expected) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;

-- Without any jug conversion the calculation stops, naming the transaction,
-- the SKU and both units (docs/reference.md, Unit conversions); the context
-- names the transaction and its participant.
\set VERBOSITY default
\set SHOW_CONTEXT errors
DELETE FROM incentives.uom_conversions WHERE 'jug' IN (from_uom_key, to_uom_key);
SELECT count(*) FROM incentives.incentive_calculate();
