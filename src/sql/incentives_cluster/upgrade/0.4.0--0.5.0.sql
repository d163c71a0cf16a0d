-- incentives_cluster 0.4.0 -> 0.5.0: what changes in schemas and types,
-- and the 0.4.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function and procedure of 0.5.0, created or replaced in place), then
-- src/sql/update_end.sql (the Makefile).  A result type the shards' type
-- gains a column (incentives.earning, incentives.tier_progress_row, ...)
-- gains it here too, with the same ALTER TYPE ... ADD ATTRIBUTE
-- (docs/architecture.md, Install and upgrade scripts).

-- Standard rates by product: the row's product_key, after group_key, as on
-- the shards.
ALTER TYPE incentives.earning ADD ATTRIBUTE product_key text;
COMMENT ON COLUMN incentives.earning.product_key IS 'In a standard offer, the product whose rate the row took (NULL when the SKU''s own rate applied, and in stepped and stacked offers)';

-- program_skus says through which product an offer reads a SKU, as on the
-- shards: the function that reads one partition's gains product_key (its
-- result cannot change in place), the view over the partitions after it.
SELECT pg_temp.update_replace_relation('incentives.program_skus');
SELECT pg_temp.update_replace_function('incentives_cluster.program_skus(integer)');
SELECT pg_temp.update_check();
DROP VIEW incentives.program_skus;
DROP FUNCTION incentives_cluster.program_skus(integer);

-- tier_progress names the type of the aggregation key (docs/reference.md,
-- Participant hierarchies), as on the shards.
ALTER TYPE incentives.tier_progress_row ADD ATTRIBUTE group_type text;
COMMENT ON COLUMN incentives.tier_progress_row.group_type IS 'An offer aggregated by group: the type (incentives.groups) of the group_key whose figures these are; NULL when it has none or there is no group';

-- Growers and currencies: the row's grower_key, currency and exchange_rate,
-- after product_key, as on the shards.
ALTER TYPE incentives.earning ADD ATTRIBUTE grower_key text;
ALTER TYPE incentives.earning ADD ATTRIBUTE currency text;
ALTER TYPE incentives.earning ADD ATTRIBUTE exchange_rate numeric;
COMMENT ON COLUMN incentives.earning.grower_key IS 'The transaction''s grower_key (NULL when it has none)';
COMMENT ON COLUMN incentives.earning.currency IS 'The offer''s currency: every amount of the row but provided_amount is in it (NULL when the offer has none)';
COMMENT ON COLUMN incentives.earning.exchange_rate IS 'The rate that converted the transaction''s amount into the offer''s currency (exact, or rounded to 12 places for an inverse rate); NULL when the amount was taken as it is';

-- The forecast names the offer's currency, as on the shards.
ALTER TYPE incentives.forecast_row ADD ATTRIBUTE currency text;
COMMENT ON COLUMN incentives.forecast_row.currency IS 'The offer''s currency: earned_to_date, projected_earnings and accrual_to_date are in it (NULL when the offer has none)';

-- settle gains minimum_payment and final_offer_keys (docs/lifecycle.md,
-- Why a line moved, holdbacks, minimums and closing a season), as on the shards.
SELECT pg_temp.update_replace_function('incentives.settle(date,text,text)');
SELECT pg_temp.update_replace_function('incentives_cluster.settle(date,text,text)');
SELECT pg_temp.update_check();
DROP PROCEDURE incentives.settle(date, text, text);
DROP FUNCTION incentives_cluster.settle(date, text, text);
