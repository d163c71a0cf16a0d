------------------------------------------------------------------------
-- Products (docs/reference.md, Products): product keys follow the key
-- hygiene of offer keys, the nodes form a forest, and two windows of one
-- SKU in one node never overlap.  Every write of either table takes one
-- lock (src/pg/load/product_checks.c), so concurrent sessions cannot
-- build a cycle or an overlap between them.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.products_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_products_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.products_check() IS
  'Trigger: refuses a product key being written that is empty, has leading or trailing white space or a control character (22023) or equals another product''s but for letter case (23505, naming both), and a parent_key that makes a cycle (22023, naming the keys of the cycle; a product that is its own parent included); concurrent writers of the product catalog take turns';

DROP TRIGGER IF EXISTS products_check ON incentives.products;
CREATE TRIGGER products_check
    AFTER INSERT OR UPDATE ON incentives.products
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.products_check();
COMMENT ON TRIGGER products_check ON incentives.products IS
  'Refuses malformed product keys, keys that differ from another product''s only in letter case, and cycles';

CREATE OR REPLACE FUNCTION incentives_internal.sku_products_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_sku_products_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.sku_products_check() IS
  'Trigger: refuses a window of a SKU in a product that overlaps another window of the same SKU in the same product (SQLSTATE 23P01, naming the SKU, the product and both windows); concurrent writers of the product catalog take turns';

DROP TRIGGER IF EXISTS sku_products_check ON incentives.sku_products;
CREATE TRIGGER sku_products_check
    AFTER INSERT OR UPDATE ON incentives.sku_products
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.sku_products_check();
COMMENT ON TRIGGER sku_products_check ON incentives.sku_products IS
  'Refuses overlapping windows of one SKU in one product';
