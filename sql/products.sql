-- products: incentives.products and incentives.sku_products refuse what
-- would make a product's SKUs ambiguous (docs/reference.md, Products,
-- Tables): a cycle of parents (22023, naming the keys of the cycle; a
-- product that is its own parent included), a product key equal to
-- another but for letter case (23505, naming both) or malformed (22023),
-- two windows of one SKU in one product that overlap (23P01, naming the
-- SKU, the product and both windows), a window that ends before it
-- starts, a reference to a missing product and the delete, rename or
-- TRUNCATE of a product still named (23503: checked by the triggers, not
-- by foreign keys, so that pg_restore -j works).  Both are reference data a reader reads, kept by pg_dump, and
-- logged for refresh_earnings(changed_only => true) as a change of
-- everyone.  Concurrent writers: test/scripts/concurrency.sh.
\set VERBOSITY default
\set SHOW_CONTEXT never
TRUNCATE incentives.sku_products, incentives.products;

-- A forest: a brand tree and a category tree, inserted children first in
-- one statement (the checks see the statement's final rows).
INSERT INTO incentives.products (product_key, parent_key, label) VALUES
  ('shield_gal', 'shield', 'Shield, gallons'),
  ('shield', 'agri', 'Shield brand'),
  ('agri', NULL, 'Agri manufacturer'),
  ('herbicides', 'crop_protection', 'Herbicides'),
  ('insecticides', 'crop_protection', 'Insecticides'),
  ('crop_protection', NULL, 'Crop protection');
SELECT product_key, parent_key FROM incentives.products ORDER BY product_key;

-- Cycles: refused, the keys named in order.
UPDATE incentives.products SET parent_key = 'shield_gal' WHERE product_key = 'shield';
\echo :SQLSTATE
UPDATE incentives.products SET parent_key = 'shield_gal' WHERE product_key = 'agri';
\echo :SQLSTATE
INSERT INTO incentives.products VALUES ('self', 'self', 'its own parent');
\echo :SQLSTATE
UPDATE incentives.products SET parent_key = 'herbicides' WHERE product_key = 'herbicides';
\echo :SQLSTATE
-- two rows of one statement that make a cycle between them
INSERT INTO incentives.products VALUES ('loop_a', 'loop_b', NULL), ('loop_b', 'loop_a', NULL);
\echo :SQLSTATE
-- moving a subtree elsewhere in the forest is fine
UPDATE incentives.products SET parent_key = 'crop_protection' WHERE product_key = 'agri';
SELECT product_key, parent_key FROM incentives.products WHERE product_key = 'agri';
UPDATE incentives.products SET parent_key = NULL WHERE product_key = 'agri';

-- Key hygiene: equal but for letter case (23505, both named), malformed
-- (22023).  An update that keeps its key is never refused.
INSERT INTO incentives.products VALUES ('Shield', NULL, 'another shield');
\echo :SQLSTATE
UPDATE incentives.products SET product_key = 'HERBICIDES' WHERE product_key = 'insecticides';
\echo :SQLSTATE
-- a key may change to itself but for letter case (no other product has it)
INSERT INTO incentives.products VALUES ('seed', NULL, NULL);
UPDATE incentives.products SET product_key = 'Seed' WHERE product_key = 'seed';
\echo :SQLSTATE
DELETE FROM incentives.products WHERE product_key = 'Seed';
INSERT INTO incentives.products VALUES (' seed', NULL, NULL);
\echo :SQLSTATE
INSERT INTO incentives.products VALUES ('seed	', NULL, NULL);
\echo :SQLSTATE
INSERT INTO incentives.products VALUES ('', NULL, NULL);
\echo :SQLSTATE
UPDATE incentives.products SET label = 'Shield (all sizes)' WHERE product_key = 'shield';
-- a parent must exist (the hint names the product probably meant)
INSERT INTO incentives.products VALUES ('orphan', 'no_such_product', NULL);
\echo :SQLSTATE
INSERT INTO incentives.products VALUES ('orphan', 'Herbicide', NULL);
\echo :SQLSTATE

-- Windows of a SKU in a node.  A SKU may be in several nodes at once.
INSERT INTO incentives.sku_products (sku_key, product_key, start_date, end_date) VALUES
  ('sku_1', 'shield_gal', '2026-01-01', '2026-06-30'),
  ('sku_1', 'shield_gal', '2026-07-01', NULL),            -- adjacent: accepted
  ('sku_1', 'insecticides', '2026-03-01', NULL),          -- another node, same days
  ('sku_2', 'herbicides', DEFAULT, '2025-12-31');          -- from always
SELECT * FROM incentives.sku_products ORDER BY sku_key, product_key, start_date;

-- Overlapping windows of one SKU in one node: refused, both named.
INSERT INTO incentives.sku_products VALUES ('sku_1', 'shield_gal', '2026-06-30', '2026-06-30');
\echo :SQLSTATE
INSERT INTO incentives.sku_products VALUES ('sku_1', 'shield_gal', '2025-01-01', NULL);
\echo :SQLSTATE
INSERT INTO incentives.sku_products VALUES ('sku_2', 'herbicides', '2025-12-31', NULL);
\echo :SQLSTATE
UPDATE incentives.sku_products SET end_date = '2026-07-01'
 WHERE sku_key = 'sku_1' AND product_key = 'shield_gal' AND start_date = '2026-01-01';
\echo :SQLSTATE
-- two rows of one statement that overlap each other
INSERT INTO incentives.sku_products VALUES
  ('sku_3', 'herbicides', '2026-01-01', '2026-12-31'),
  ('sku_3', 'herbicides', '2026-12-31', NULL);
\echo :SQLSTATE
-- adjacent after an open start: accepted
INSERT INTO incentives.sku_products VALUES ('sku_2', 'herbicides', '2026-01-01', NULL);
-- A window ends on or after the day it starts; its node exists.
INSERT INTO incentives.sku_products VALUES ('sku_4', 'herbicides', '2026-02-01', '2026-01-31');
\echo :SQLSTATE
INSERT INTO incentives.sku_products VALUES ('sku_4', 'no_such_product', '2026-02-01', NULL);
\echo :SQLSTATE
-- a node with SKUs or children cannot be deleted
DELETE FROM incentives.products WHERE product_key = 'herbicides';
\echo :SQLSTATE
DELETE FROM incentives.products WHERE product_key = 'crop_protection';
\echo :SQLSTATE
UPDATE incentives.products SET product_key = 'crop' WHERE product_key = 'crop_protection';
\echo :SQLSTATE
TRUNCATE incentives.products;
\echo :SQLSTATE
-- a parent deleted with its children in one statement: nothing is left
-- naming it
INSERT INTO incentives.products VALUES ('fungicides', NULL, NULL), ('fungicides_new', 'fungicides', NULL);
DELETE FROM incentives.products WHERE product_key LIKE 'fungicides%';
\echo :SQLSTATE
-- while a restore runs (row_security off, as pg_dump's output sets it),
-- a window may arrive before its product: pg_restore -j loads the two
-- tables at the same time
SET row_security = off;
INSERT INTO incentives.sku_products VALUES ('sku_6', 'restored_later', '2026-01-01', NULL);
RESET row_security;
INSERT INTO incentives.products VALUES ('restored_later', NULL, NULL);
DELETE FROM incentives.sku_products WHERE sku_key = 'sku_6';
DELETE FROM incentives.products WHERE product_key = 'restored_later';
SELECT * FROM incentives.sku_products ORDER BY sku_key, product_key, start_date;

-- Changed-only refresh: any change of either table is a change of
-- everyone (a NULL participant_key in the change log).
DELETE FROM incentives.earnings_changes;
UPDATE incentives.products SET label = 'Herbicides (all)' WHERE product_key = 'herbicides';
SELECT participant_key IS NULL AS everyone FROM incentives.earnings_changes;
DELETE FROM incentives.earnings_changes;
DELETE FROM incentives.sku_products WHERE sku_key = 'sku_2' AND start_date = '2026-01-01';
SELECT participant_key IS NULL AS everyone FROM incentives.earnings_changes;
DELETE FROM incentives.earnings_changes;
-- a statement that changes no row logs nothing
DELETE FROM incentives.sku_products WHERE sku_key = 'no_such_sku';
SELECT count(*) AS logged FROM incentives.earnings_changes;

-- Reference data: a reader with USAGE and SELECT reads both tables (no
-- row-level security), and writes neither.
CREATE ROLE regress_product_reader;
GRANT USAGE ON SCHEMA incentives TO regress_product_reader;
GRANT SELECT ON incentives.products, incentives.sku_products TO regress_product_reader;
SET ROLE regress_product_reader;
SELECT count(*) AS products FROM incentives.products;
SELECT count(*) AS sku_products FROM incentives.sku_products;
INSERT INTO incentives.products VALUES ('reader_node', NULL, NULL);
\echo :SQLSTATE
RESET ROLE;
SELECT c.relname, c.relrowsecurity FROM pg_class AS c
 WHERE c.oid IN ('incentives.products'::regclass, 'incentives.sku_products'::regclass)
 ORDER BY c.relname;
REVOKE ALL ON incentives.products, incentives.sku_products FROM regress_product_reader;
REVOKE ALL ON SCHEMA incentives FROM regress_product_reader;
DROP ROLE regress_product_reader;

-- pg_dump keeps the rows of both (the extension's configuration tables).
SELECT c.relname, x.cond
  FROM pg_extension AS e,
       unnest(e.extconfig, e.extcondition) AS x (oid, cond)
  JOIN pg_class AS c ON c.oid = x.oid
 WHERE e.extname = 'incentives' AND c.relname IN ('products', 'sku_products')
 ORDER BY c.relname;

-- The shard functions a coordinator runs on every partition
-- (docs/scaling.md): idempotent upserts, true when the row is new; the
-- tables' checks apply; shard_summary digests both tables.
SELECT incentives_internal.put_product('seed', NULL, 'Seed') AS new,
       incentives_internal.put_product('seed', NULL, 'Seed (all)') AS again,
       incentives_internal.put_product('corn_seed', 'seed') AS child;
SELECT incentives_internal.put_product('seed', 'corn_seed');
\echo :SQLSTATE
SELECT incentives_internal.put_sku_product('sku_5', 'corn_seed') AS new,
       incentives_internal.put_sku_product('sku_5', 'corn_seed', '-infinity', '2026-12-31') AS again;
SELECT incentives_internal.put_sku_product('sku_5', 'corn_seed', '2026-12-31');
\echo :SQLSTATE
SELECT * FROM incentives.sku_products WHERE sku_key = 'sku_5';
SELECT incentives_internal.delete_sku_product('sku_5', 'corn_seed', '-infinity') AS existed,
       incentives_internal.delete_sku_product('sku_5', 'corn_seed', '-infinity') AS again,
       incentives_internal.delete_product('corn_seed') AS existed_too;
SELECT object, row_count FROM incentives_internal.shard_summary(1, 0)
 WHERE object IN ('products', 'sku_products') ORDER BY object;

TRUNCATE incentives.sku_products, incentives.products;
DELETE FROM incentives.earnings_changes;
