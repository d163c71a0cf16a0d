-- grower_warnings: what transaction_warnings says of growers and returns
-- (docs/reference.md, Transaction warnings).  The growers fixture's GW-05
-- has no grower_key: in the offer that matches its sets by grower it takes
-- part in no overlap, and in the offers with a grower-scoped requirement
-- its rows are removed, so it earns nothing there: no_grower, once per
-- offer.  The offer matched by participant reads it as any other.
-- Fixture: test/fixtures/growers_matched_acres/ (see its README.md).
\set fixture growers_matched_acres
\i test/sql/load_fixture.psql

SELECT participant_key, transaction_id, code, message FROM incentives.transaction_warnings;
SELECT * FROM incentives.offer_warnings;

-- A relation without the optional columns reads them as NULL: every
-- transaction of the grower-matched sets is then without a grower.
CREATE TEMPORARY VIEW bare_transactions AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key,
       quantity, uom_key, amount
  FROM incentives.transactions;
SELECT code, count(*) AS findings, count(DISTINCT transaction_id) AS transactions
  FROM incentives.transaction_warnings('bare_transactions')
 GROUP BY code ORDER BY code;

-- A return with no original sale dated outside the season, and one naming
-- an original that is not the same participant's.
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type,
                                     transaction_date, sku_key, quantity, uom_key, amount,
                                     grower_key, original_transaction_id)
VALUES ('GW-90', 'retailer_001', 'retailer_sales_to_growers', '2026-10-15',
        'seed_treatment_gal', -1, 'gal', -400.00, 'farm_a', NULL),
       ('GW-91', 'retailer_002', 'retailer_sales_to_growers', '2026-10-16',
        'seed_treatment_gal', -1, 'gal', -400.00, 'farm_a', 'GW-02'),
       ('GW-92', 'retailer_001', 'retailer_sales_to_growers', '2026-10-17',
        'seed_treatment_gal', -1, 'gal', -400.00, 'farm_a', 'GW-02');
SELECT participant_key, transaction_id, code, message FROM incentives.transaction_warnings
 WHERE transaction_id LIKE 'GW-9%';
