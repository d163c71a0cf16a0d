-- calculate_cache: a calculation reuses the engine (compiled offers, SKU
-- units, unit conversions) that an earlier call built in the same snapshot,
-- and never one built from other rows (docs/architecture.md, The path of
-- one calculation).  Each SELECT below names what it must see.
\set fixture standard_percent
\i test/sql/load_fixture.psql

-- Calls per participant in one statement (one snapshot, one engine): the
-- rows of a single call for everyone.
SELECT count(*), sum(e.incentive_amount)
  FROM (SELECT DISTINCT participant_key FROM incentives.transactions) p,
       LATERAL incentives.incentive_calculate(p.participant_key) e;
SELECT count(*), sum(incentive_amount) FROM incentives.incentive_calculate();

-- In a REPEATABLE READ transaction the snapshot stays, and so may the
-- engine; the transaction's own changes to offers and conversions are seen
-- by the next call, and a rolled-back one is gone again.
BEGIN ISOLATION LEVEL REPEATABLE READ;
-- 3% of $50,000 + $1,234.57 - $5,000: 1,387.04
SELECT sum(incentive_amount) FROM incentives.incentive_calculate('retailer_001');
SELECT sum(incentive_amount) FROM incentives.incentive_calculate('retailer_001');
-- the rate of the first SKU to 4%: 1,837.04
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '4');
SELECT sum(incentive_amount) FROM incentives.incentive_calculate('retailer_001');
SAVEPOINT before_five;
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '5');
-- 5%: 2,287.04
SELECT sum(incentive_amount) FROM incentives.incentive_calculate('retailer_001');
ROLLBACK TO before_five;
-- 4% again
SELECT sum(incentive_amount) FROM incentives.incentive_calculate('retailer_001');
-- a SKU measured in qt: quantities become 4 x the gallons
INSERT INTO incentives.skus (sku_key, uom_key)
VALUES ('agri_shield_insecticide_2.5_gal_53551', 'qt')
    ON CONFLICT (sku_key) DO UPDATE SET uom_key = excluded.uom_key;
SELECT transaction_id, incentivized_quantity
  FROM incentives.incentive_calculate('retailer_001')
 WHERE transaction_id = '01JAD80XDZGZNTYDRV4H56221W';
ROLLBACK;

-- After the rollback: the stored rows, 3% again.
SELECT sum(incentive_amount) FROM incentives.incentive_calculate('retailer_001');
SELECT transaction_id, incentivized_quantity
  FROM incentives.incentive_calculate('retailer_001')
 WHERE transaction_id = '01JAD80XDZGZNTYDRV4H56221W';

-- as_of: the offers as they were (docs/lifecycle.md, Offer versions and
-- as_of), never from an engine kept for another call, nor kept for one.
-- The rate goes to 4% in a transaction of its own; then, in one snapshot,
-- calls of now and of before the change alternate: 1,837.04 now, 1,387.04
-- before.
SELECT max(valid_from) AS before_change FROM incentives.offer_versions \gset
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '4');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT v.n, v.t IS NOT NULL AS as_of, sum(e.incentive_amount)
  FROM (VALUES (1, NULL), (2, :'before_change'::timestamptz), (3, NULL),
               (4, :'before_change'::timestamptz), (5, NULL)) v(n, t),
       LATERAL incentives.incentive_calculate('retailer_001', as_of => v.t) e
 GROUP BY 1, 2 ORDER BY 1;
SELECT sum(incentive_amount) FROM incentives.incentive_calculate('retailer_001');
SELECT sum(incentive_amount)
  FROM incentives.incentive_calculate('retailer_001', as_of => :'before_change');
SELECT sum(incentive_amount) FROM incentives.incentive_calculate('retailer_001');
-- an offer that did not exist then is an error, even with an engine kept
-- for now that has it
SELECT min(offer_key) AS offer FROM incentives.offers \gset
SELECT v.n, count(*)
  FROM (VALUES (1, NULL), (2, '2000-01-01'::timestamptz)) v(n, t),
       LATERAL incentives.incentive_calculate('retailer_001', offer_keys => ARRAY[:'offer'],
                                              as_of => v.t) e
 GROUP BY 1 ORDER BY 1;
ROLLBACK;

-- An invalidation of the reference tables that arrives in the middle of a
-- call (here an ANALYZE of incentives.offers run for each transaction
-- read, as autovacuum's would arrive when the call takes a lock) leaves
-- the engine that call is using in place: the rows equal a plain call's,
-- and the next call builds a new engine.  make valgrind-regress shows no
-- read of freed memory.
CREATE FUNCTION pg_temp.analyze_offers(participant_key text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    ANALYZE incentives.offers;
    RETURN participant_key;
END
$$;
CREATE TEMP VIEW analyzing_transactions AS
SELECT transaction_id, pg_temp.analyze_offers(participant_key) AS participant_key,
       transaction_type, transaction_date, sku_key, quantity, uom_key, amount
  FROM incentives.transactions;
SELECT count(*), sum(incentive_amount) FROM incentives.incentive_calculate();
SELECT count(*), sum(incentive_amount)
  FROM incentives.incentive_calculate(transactions => 'analyzing_transactions');
SELECT count(*), sum(incentive_amount) FROM incentives.incentive_calculate();
