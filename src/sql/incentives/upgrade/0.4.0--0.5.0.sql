-- incentives 0.4.0 -> 0.5.0: what changes in schemas, tables and types,
-- and the 0.4.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function, procedure and view of 0.5.0, created or replaced in place;
-- triggers and policies created again), 0.4.0--0.5.0.finish.sql if there
-- is one, then src/sql/update_end.sql (the Makefile).  A fresh install
-- runs the released scripts up to 0.4.0 and then this same update script,
-- so this file is where 0.5.0's tables and types are defined.  How a
-- feature adds a table, a column of incentives.earning or a column of a
-- function's result, and what to do when a signature must change:
-- docs/architecture.md, Install and upgrade scripts.  What the update does
-- to each object a user can depend on: docs/backup-and-upgrade.md,
-- Upgrade (keep it listed there).

------------------------------------------------------------------------
-- The run log's failed runs of one participant (docs/security.md, The run
-- log): the transaction of another member of its group that failed the
-- run is logged in incentives.calculation_exceptions under that member's
-- key.
------------------------------------------------------------------------
COMMENT ON TABLE incentives.calculation_exceptions IS
  'Participants a refresh_earnings(on_error => ''skip'') could not calculate for a data reason (they kept their previous earnings), and the member of a group whose transaction failed a refresh of another of its participants (docs/security.md, The run log)';

------------------------------------------------------------------------
-- Logical replication of the earnings (docs/operations.md, Logical
-- replication): published through their root (publish_via_partition_root),
-- a refresh's deletes reach a subscriber identified by the root's replica
-- identity.  The partitioned table has no key of its own (its partitions
-- have theirs), so its identity is the whole row: with wal_level = logical
-- a deleted earning row is logged whole; below that, nothing changes.
------------------------------------------------------------------------
ALTER TABLE incentives.earnings REPLICA IDENTITY FULL;

------------------------------------------------------------------------
-- Standard rates by product (docs/reference.md, Products): the row's
-- product_key, after group_key, in the earning row and the materialized
-- earnings; what refresh_earnings materializes gains it too (its result
-- is a table of its own, which cannot change in place).
------------------------------------------------------------------------
ALTER TYPE incentives.earning ADD ATTRIBUTE product_key text;
COMMENT ON COLUMN incentives.earning.product_key IS 'In a standard offer, the product whose rate the row took (NULL when the SKU''s own rate applied, and in stepped and stacked offers)';
ALTER TABLE incentives.earnings ADD COLUMN product_key text;
COMMENT ON COLUMN incentives.earnings.product_key IS 'In a standard offer, the product whose rate the row took (NULL when the SKU''s own rate applied, and in stepped and stacked offers)';
SELECT pg_temp.update_replace_function('incentives_internal.calculate_dated(text,jsonb,text[],regclass,timestamp with time zone,date)');
-- what an offer reads gains its products and exclusions (product_key)
SELECT pg_temp.update_replace_function('incentives_internal.offer_references(jsonb)');
SELECT pg_temp.update_replace_function('incentives_internal.offer_references_all()');
SELECT pg_temp.update_check();
DROP FUNCTION incentives_internal.calculate_dated(text, jsonb, text[], regclass, timestamptz, date);
DROP FUNCTION incentives_internal.offer_references(jsonb);
DROP FUNCTION incentives_internal.offer_references_all();
-- program_skus says through which product it reads a SKU
ALTER TYPE incentives.program_sku_row ADD ATTRIBUTE product_key text;
COMMENT ON COLUMN incentives.program_sku_row.product_key IS 'The listed product the offer reads the SKU through (NULL: the SKU is listed itself)';
-- program_rates shows a standard rate of a product
ALTER TYPE incentives_internal.offer_rate_row ADD ATTRIBUTE product_key text;
COMMENT ON COLUMN incentives_internal.offer_rate_row.product_key IS 'A standard rate of a product: the product (NULL otherwise)';
