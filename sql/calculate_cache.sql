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
