------------------------------------------------------------------------
-- Reference data changes: a calculation may reuse the engine (compiled
-- offers, SKU units, unit conversions) that an earlier call in the same
-- snapshot built (docs/architecture.md, The path of one calculation).  A
-- write to these tables must reach a backend that keeps one: these
-- statement-level triggers send a relcache invalidation of the table, as
-- DDL would, and the backend drops its engine when it sees it.
------------------------------------------------------------------------

CREATE FUNCTION incentives_internal.reference_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_reference_changed'
LANGUAGE C;
COMMENT ON FUNCTION incentives_internal.reference_changed() IS
  'Trigger: tells every backend that offers, SKU units or unit conversions changed, so that no calculation reuses an engine built from the old rows';

-- <table>_changed on each table an engine is built from
DO $reference_changed$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('offers', 'offers'),
                                   ('skus', 'SKU units'),
                                   ('uom_conversions', 'unit conversions')) AS x(tab, what)
    LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed()',
                       t.tab || '_changed', t.tab);
        EXECUTE format('COMMENT ON TRIGGER %I ON incentives.%I IS %L', t.tab || '_changed', t.tab,
                       format('Drops the engines that backends keep for calculations in a snapshot once %s change',
                              t.what));
    END LOOP;
END
$reference_changed$;
