-- exchange_rates_reference: incentives.exchange_rates as reference data
-- on the sharded layout (docs/scaling.md), and the transactions' optional
-- columns through the shard functions.  The shard functions a coordinator
-- runs on every partition: put_exchange_rate is an idempotent upsert,
-- true when the rate is new; the table's checks apply; delete_exchange_rate
-- is true when the row existed; shard_summary digests the table.
\set VERBOSITY terse
TRUNCATE incentives.exchange_rates;
SELECT incentives_internal.put_exchange_rate('CAD', 'USD', '2026-01-01', 0.73) AS new,
       incentives_internal.put_exchange_rate('CAD', 'USD', '2026-01-01', 0.74) AS again,
       incentives_internal.put_exchange_rate('USD', 'CAD', '2026-06-01', 1.36) AS inverse;
SELECT * FROM incentives.exchange_rates ORDER BY from_currency, rate_date;
SELECT incentives_internal.put_exchange_rate('CAD', 'CAD', '2026-01-01', 1);
\echo :SQLSTATE
SELECT incentives_internal.put_exchange_rate('cad', 'USD', '2026-01-01', 0.7);
\echo :SQLSTATE
SELECT incentives_internal.put_exchange_rate('CAD', 'USD', '2026-02-01', 0);
\echo :SQLSTATE
SELECT object, row_count FROM incentives_internal.shard_summary(1, 0) WHERE object = 'exchange_rates';
SELECT incentives_internal.delete_exchange_rate('USD', 'CAD', '2026-06-01') AS existed,
       incentives_internal.delete_exchange_rate('USD', 'CAD', '2026-06-01') AS again;
SELECT object, row_count FROM incentives_internal.shard_summary(1, 0) WHERE object = 'exchange_rates';

-- put_transactions stores grower_key, currency and original_transaction_id
-- (NULL when absent), and replaces them with the row; participant_data
-- carries them to another shard (store_participant_data).
DELETE FROM incentives.transactions WHERE participant_key = 'xr_retailer';
SELECT incentives_internal.put_transactions(ARRAY[
    '{"transaction_id": "XR-1", "participant_key": "xr_retailer", "transaction_type": "sale",
      "transaction_date": "2026-03-01", "sku_key": "sku_1", "quantity": 10, "uom_key": "gal",
      "amount": 1000.00, "grower_key": "farm_1", "currency": "CAD"}',
    '{"transaction_id": "XR-2", "participant_key": "xr_retailer", "transaction_type": "sale",
      "transaction_date": "2026-04-01", "sku_key": "sku_1", "quantity": -2, "uom_key": "gal",
      "amount": -200.00, "currency": "CAD", "original_transaction_id": "XR-1"}']::jsonb[]) AS stored;
SELECT transaction_id, grower_key, currency, original_transaction_id
  FROM incentives.transactions WHERE participant_key = 'xr_retailer' ORDER BY 1;
-- a replacement without the columns clears them, as any column it omits
SELECT incentives_internal.put_transaction('XR-1', 'xr_retailer', 'sale', '2026-03-01', 'sku_1', 10, 'gal', 1000.00) AS new;
SELECT transaction_id, grower_key, currency, original_transaction_id
  FROM incentives.transactions WHERE participant_key = 'xr_retailer' ORDER BY 1;
SELECT incentives_internal.put_transactions(ARRAY[
    '{"transaction_id": "XR-1", "participant_key": "xr_retailer", "transaction_type": "sale",
      "transaction_date": "2026-03-01", "sku_key": "sku_1", "quantity": 10, "uom_key": "gal",
      "amount": 1000.00, "grower_key": "farm_1", "currency": "CAD"}']::jsonb[]) AS stored;
-- moved: what participant_data gives, dropped and stored again
CREATE TEMP TABLE xr_moved AS
SELECT incentives_internal.participant_data(0, 'xr_retailer') AS data;
SELECT incentives_internal.drop_participant_data(0, 'xr_retailer') AS dropped;
SELECT incentives_internal.store_participant_data(0, data) AS stored FROM xr_moved;
SELECT transaction_id, grower_key, currency, original_transaction_id
  FROM incentives.transactions WHERE participant_key = 'xr_retailer' ORDER BY 1;
DELETE FROM incentives.transactions WHERE participant_key = 'xr_retailer';
TRUNCATE incentives.exchange_rates;
DELETE FROM incentives.earnings_changes;
