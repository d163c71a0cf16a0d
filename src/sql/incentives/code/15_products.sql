------------------------------------------------------------------------
-- Products (docs/reference.md, Products): product keys follow the key
-- hygiene of offer keys, the nodes form a forest, two windows of one SKU
-- in one node never overlap, and a parent_key or a window's product_key
-- names a stored node.  Every write of either table takes one lock
-- (src/pg/load/product_checks.c), so concurrent sessions cannot build a
-- cycle, an overlap or a dangling reference between them.  The references
-- are checked by these triggers rather than by foreign keys, which would
-- make pg_restore -j fail (docs/reference.md, Products).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.products_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_products_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.products_check() IS
  'Trigger: refuses a product key being written that is empty, has leading or trailing white space or a control character (22023) or equals another product''s but for letter case (23505, naming both), a parent_key that is no stored product (23503, with the product probably meant) or that makes a cycle (22023, naming the keys of the cycle; a product that is its own parent included), and the delete or rename of a product a child or a window of incentives.sku_products still names (23503); at statement level, a TRUNCATE that leaves windows (23503); concurrent writers of the product catalog take turns';

DROP TRIGGER IF EXISTS products_check ON incentives.products;
CREATE TRIGGER products_check
    AFTER INSERT OR UPDATE OR DELETE ON incentives.products
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.products_check();
COMMENT ON TRIGGER products_check ON incentives.products IS
  'Refuses malformed product keys, keys that differ from another product''s only in letter case, a missing parent, cycles, and deleting or renaming a product still named';

DROP TRIGGER IF EXISTS products_check_truncate ON incentives.products;
CREATE TRIGGER products_check_truncate
    AFTER TRUNCATE ON incentives.products
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.products_check();
COMMENT ON TRIGGER products_check_truncate ON incentives.products IS
  'Refuses a TRUNCATE of the products that leaves windows of incentives.sku_products naming them';

CREATE OR REPLACE FUNCTION incentives_internal.sku_products_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_sku_products_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.sku_products_check() IS
  'Trigger: refuses a window of a SKU in a product that overlaps another window of the same SKU in the same product (SQLSTATE 23P01, naming the SKU, the product and both windows), and a product_key that is no stored product (23503, with the product probably meant; not while a restore runs: row_security or check_function_bodies off); concurrent writers of the product catalog take turns';

DROP TRIGGER IF EXISTS sku_products_check ON incentives.sku_products;
CREATE TRIGGER sku_products_check
    AFTER INSERT OR UPDATE ON incentives.sku_products
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.sku_products_check();
COMMENT ON TRIGGER sku_products_check ON incentives.sku_products IS
  'Refuses overlapping windows of one SKU in one product, and windows of a missing product';
