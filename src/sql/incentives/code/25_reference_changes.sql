------------------------------------------------------------------------
-- Reference data changes: a calculation may reuse the engine (compiled
-- offers, SKU units, unit conversions, the product catalog, the exchange
-- rates) that an earlier call in the same snapshot built
-- (docs/architecture.md, The path of one calculation).  A write to these
-- tables must reach a backend that keeps one: these statement-level
-- triggers send a relcache invalidation of the table, as DDL would, and
-- the backend drops its engine when it sees it.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.reference_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_reference_changed'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.reference_changed() IS
  'Trigger: tells every backend that offers, SKU units, unit conversions, the product catalog or the exchange rates changed, so that no calculation reuses an engine built from the old rows';

-- <table>_changed on each table an engine is built from

DROP TRIGGER IF EXISTS offers_changed ON incentives.offers;
CREATE TRIGGER offers_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER offers_changed ON incentives.offers IS
  'Drops the engines that backends keep for calculations in a snapshot once offers change';

DROP TRIGGER IF EXISTS skus_changed ON incentives.skus;
CREATE TRIGGER skus_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.skus
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER skus_changed ON incentives.skus IS
  'Drops the engines that backends keep for calculations in a snapshot once SKU units change';

DROP TRIGGER IF EXISTS uom_conversions_changed ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.uom_conversions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER uom_conversions_changed ON incentives.uom_conversions IS
  'Drops the engines that backends keep for calculations in a snapshot once unit conversions change';

DROP TRIGGER IF EXISTS products_changed ON incentives.products;
CREATE TRIGGER products_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.products
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER products_changed ON incentives.products IS
  'Drops the engines that backends keep for calculations in a snapshot once product nodes change';

DROP TRIGGER IF EXISTS sku_products_changed ON incentives.sku_products;
CREATE TRIGGER sku_products_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.sku_products
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER sku_products_changed ON incentives.sku_products IS
  'Drops the engines that backends keep for calculations in a snapshot once the products of SKUs change';

DROP TRIGGER IF EXISTS exchange_rates_changed ON incentives.exchange_rates;
CREATE TRIGGER exchange_rates_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.exchange_rates
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER exchange_rates_changed ON incentives.exchange_rates IS
  'Drops the engines that backends keep for calculations in a snapshot once exchange rates change';
