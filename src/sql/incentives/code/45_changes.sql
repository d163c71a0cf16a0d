------------------------------------------------------------------------
-- Change tracking for refresh_earnings(changed_only => true) (docs/lifecycle.md,
-- "changed_only => true")
--
-- Statement-level AFTER triggers with transition tables log into
-- incentives.earnings_changes which participants a statement
-- touched: one row per participant and statement, so a bulk load of a
-- million transactions adds one row per participant, not per transaction.
--
--   incentives.transactions, incentives.participant_properties,
--     incentives.enrollments: the participants of the inserted, deleted and
--     (old and new) updated rows; TRUNCATE: everyone.
--   incentives.participant_groups: the members and the groups of those
--     rows (the refresh recalculates each one's whole group); TRUNCATE:
--     everyone.
--   incentives.groups: the groups of those rows (a group's type moves the
--     aggregation keys of its whole hierarchy, which the refresh
--     recalculates); TRUNCATE: everyone.
--   incentives.offers, incentives.skus, incentives.uom_conversions,
--     incentives.products, incentives.sku_products,
--     incentives.exchange_rates: any row changed means everyone (NULL).
--
-- A transaction's every column is its participant's input: an update of
-- any of them (grower_key, currency and original_transaction_id too) logs
-- the old and the new row's participant.  A return matched to its sale
-- moves no one else: its original is a transaction of the same
-- participant (docs/reference.md, Returns against their sale).
--
-- The triggers run with the rights of the role that writes: it needs
-- INSERT on incentives.earnings_changes (the GRANT model in
-- code/90_grants.sql gives it to incentives_admin).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.track_changes()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- TG_ARGV[0]: 'participants' (the participants of the rows) or
    -- 'everyone' (any row changed means everyone: NULL)
    IF TG_OP = 'TRUNCATE' THEN
        -- everyone
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
    ELSIF TG_ARGV[0] = 'everyone' THEN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO incentives.earnings_changes (participant_key)
            SELECT NULL WHERE EXISTS (SELECT 1 FROM incentives_new_rows);
        ELSE
            INSERT INTO incentives.earnings_changes (participant_key)
            SELECT NULL WHERE EXISTS (SELECT 1 FROM incentives_old_rows);
        END IF;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT DISTINCT n.participant_key FROM incentives_new_rows AS n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT n.participant_key FROM incentives_new_rows AS n
        UNION
        SELECT o.participant_key FROM incentives_old_rows AS o;
    ELSE
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT DISTINCT o.participant_key FROM incentives_old_rows AS o;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.track_changes() IS
  'Trigger: logs in incentives.earnings_changes the participants a statement touched (argument participants: on transactions, participant properties, enrollments) or everyone (argument everyone: on offers, SKUs, unit conversions, products, the products of SKUs and exchange rates; and any TRUNCATE)';

-- incentives.transactions: the participants of the changed transactions
DROP TRIGGER IF EXISTS transactions_changes_insert ON incentives.transactions;
CREATE TRIGGER transactions_changes_insert
    AFTER INSERT ON incentives.transactions
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER transactions_changes_insert ON incentives.transactions IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed transactions (inserts)';
DROP TRIGGER IF EXISTS transactions_changes_update ON incentives.transactions;
CREATE TRIGGER transactions_changes_update
    AFTER UPDATE ON incentives.transactions
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER transactions_changes_update ON incentives.transactions IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed transactions (updates)';
DROP TRIGGER IF EXISTS transactions_changes_delete ON incentives.transactions;
CREATE TRIGGER transactions_changes_delete
    AFTER DELETE ON incentives.transactions
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER transactions_changes_delete ON incentives.transactions IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed transactions (deletes)';
DROP TRIGGER IF EXISTS transactions_changes_truncate ON incentives.transactions;
CREATE TRIGGER transactions_changes_truncate
    AFTER TRUNCATE ON incentives.transactions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER transactions_changes_truncate ON incentives.transactions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.participant_properties: the participants of the changed properties
DROP TRIGGER IF EXISTS participant_properties_changes_insert ON incentives.participant_properties;
CREATE TRIGGER participant_properties_changes_insert
    AFTER INSERT ON incentives.participant_properties
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER participant_properties_changes_insert ON incentives.participant_properties IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed properties (inserts)';
DROP TRIGGER IF EXISTS participant_properties_changes_update ON incentives.participant_properties;
CREATE TRIGGER participant_properties_changes_update
    AFTER UPDATE ON incentives.participant_properties
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER participant_properties_changes_update ON incentives.participant_properties IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed properties (updates)';
DROP TRIGGER IF EXISTS participant_properties_changes_delete ON incentives.participant_properties;
CREATE TRIGGER participant_properties_changes_delete
    AFTER DELETE ON incentives.participant_properties
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER participant_properties_changes_delete ON incentives.participant_properties IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed properties (deletes)';
DROP TRIGGER IF EXISTS participant_properties_changes_truncate ON incentives.participant_properties;
CREATE TRIGGER participant_properties_changes_truncate
    AFTER TRUNCATE ON incentives.participant_properties
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER participant_properties_changes_truncate ON incentives.participant_properties IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.enrollments: the participants of the changed enrollment windows
DROP TRIGGER IF EXISTS enrollments_changes_insert ON incentives.enrollments;
CREATE TRIGGER enrollments_changes_insert
    AFTER INSERT ON incentives.enrollments
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER enrollments_changes_insert ON incentives.enrollments IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed enrollment windows (inserts)';
DROP TRIGGER IF EXISTS enrollments_changes_update ON incentives.enrollments;
CREATE TRIGGER enrollments_changes_update
    AFTER UPDATE ON incentives.enrollments
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER enrollments_changes_update ON incentives.enrollments IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed enrollment windows (updates)';
DROP TRIGGER IF EXISTS enrollments_changes_delete ON incentives.enrollments;
CREATE TRIGGER enrollments_changes_delete
    AFTER DELETE ON incentives.enrollments
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER enrollments_changes_delete ON incentives.enrollments IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed enrollment windows (deletes)';
DROP TRIGGER IF EXISTS enrollments_changes_truncate ON incentives.enrollments;
CREATE TRIGGER enrollments_changes_truncate
    AFTER TRUNCATE ON incentives.enrollments
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER enrollments_changes_truncate ON incentives.enrollments IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.participant_groups: the members and the groups of the
-- changed memberships (a group brings all its members at the refresh)
CREATE OR REPLACE FUNCTION incentives_internal.track_group_changes()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT n.participant_key FROM incentives_new_rows AS n
        UNION
        SELECT n.group_key FROM incentives_new_rows AS n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT n.participant_key FROM incentives_new_rows AS n
        UNION
        SELECT n.group_key FROM incentives_new_rows AS n
        UNION
        SELECT o.participant_key FROM incentives_old_rows AS o
        UNION
        SELECT o.group_key FROM incentives_old_rows AS o;
    ELSE
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT o.participant_key FROM incentives_old_rows AS o
        UNION
        SELECT o.group_key FROM incentives_old_rows AS o;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.track_group_changes() IS
  'Trigger: logs in incentives.earnings_changes the members and the groups of the memberships a statement changed (a refresh of changed participants recalculates each one''s whole group); everyone on TRUNCATE';

DROP TRIGGER IF EXISTS participant_groups_changes_insert ON incentives.participant_groups;
CREATE TRIGGER participant_groups_changes_insert
    AFTER INSERT ON incentives.participant_groups
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_changes();
COMMENT ON TRIGGER participant_groups_changes_insert ON incentives.participant_groups IS
  'Change tracking for refresh_earnings(changed_only => true): the members and groups of the changed memberships (inserts)';
DROP TRIGGER IF EXISTS participant_groups_changes_update ON incentives.participant_groups;
CREATE TRIGGER participant_groups_changes_update
    AFTER UPDATE ON incentives.participant_groups
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_changes();
COMMENT ON TRIGGER participant_groups_changes_update ON incentives.participant_groups IS
  'Change tracking for refresh_earnings(changed_only => true): the members and groups of the changed memberships (updates)';
DROP TRIGGER IF EXISTS participant_groups_changes_delete ON incentives.participant_groups;
CREATE TRIGGER participant_groups_changes_delete
    AFTER DELETE ON incentives.participant_groups
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_changes();
COMMENT ON TRIGGER participant_groups_changes_delete ON incentives.participant_groups IS
  'Change tracking for refresh_earnings(changed_only => true): the members and groups of the changed memberships (deletes)';
DROP TRIGGER IF EXISTS participant_groups_changes_truncate ON incentives.participant_groups;
CREATE TRIGGER participant_groups_changes_truncate
    AFTER TRUNCATE ON incentives.participant_groups
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_changes();
COMMENT ON TRIGGER participant_groups_changes_truncate ON incentives.participant_groups IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.groups: the groups whose type or key changed (a refresh
-- brings the whole hierarchy each is in; a group in no window moves
-- nothing)
CREATE OR REPLACE FUNCTION incentives_internal.track_group_type_changes()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT DISTINCT n.group_key FROM incentives_new_rows AS n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT n.group_key FROM incentives_new_rows AS n
        UNION
        SELECT o.group_key FROM incentives_old_rows AS o;
    ELSE
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT DISTINCT o.group_key FROM incentives_old_rows AS o;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.track_group_type_changes() IS
  'Trigger: logs in incentives.earnings_changes the groups of the incentives.groups rows a statement changed (a refresh of changed participants recalculates the whole hierarchy of each); everyone on TRUNCATE';

DROP TRIGGER IF EXISTS groups_changes_insert ON incentives.groups;
CREATE TRIGGER groups_changes_insert
    AFTER INSERT ON incentives.groups
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_type_changes();
COMMENT ON TRIGGER groups_changes_insert ON incentives.groups IS
  'Change tracking for refresh_earnings(changed_only => true): the groups of the changed rows (inserts)';
DROP TRIGGER IF EXISTS groups_changes_update ON incentives.groups;
CREATE TRIGGER groups_changes_update
    AFTER UPDATE ON incentives.groups
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_type_changes();
COMMENT ON TRIGGER groups_changes_update ON incentives.groups IS
  'Change tracking for refresh_earnings(changed_only => true): the groups of the changed rows (updates)';
DROP TRIGGER IF EXISTS groups_changes_delete ON incentives.groups;
CREATE TRIGGER groups_changes_delete
    AFTER DELETE ON incentives.groups
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_type_changes();
COMMENT ON TRIGGER groups_changes_delete ON incentives.groups IS
  'Change tracking for refresh_earnings(changed_only => true): the groups of the changed rows (deletes)';
DROP TRIGGER IF EXISTS groups_changes_truncate ON incentives.groups;
CREATE TRIGGER groups_changes_truncate
    AFTER TRUNCATE ON incentives.groups
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_type_changes();
COMMENT ON TRIGGER groups_changes_truncate ON incentives.groups IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.offers: everyone (an offer changed)
DROP TRIGGER IF EXISTS offers_changes_insert ON incentives.offers;
CREATE TRIGGER offers_changes_insert
    AFTER INSERT ON incentives.offers
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER offers_changes_insert ON incentives.offers IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an offer changed (inserts)';
DROP TRIGGER IF EXISTS offers_changes_update ON incentives.offers;
CREATE TRIGGER offers_changes_update
    AFTER UPDATE ON incentives.offers
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER offers_changes_update ON incentives.offers IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an offer changed (updates)';
DROP TRIGGER IF EXISTS offers_changes_delete ON incentives.offers;
CREATE TRIGGER offers_changes_delete
    AFTER DELETE ON incentives.offers
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER offers_changes_delete ON incentives.offers IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an offer changed (deletes)';
DROP TRIGGER IF EXISTS offers_changes_truncate ON incentives.offers;
CREATE TRIGGER offers_changes_truncate
    AFTER TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER offers_changes_truncate ON incentives.offers IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.skus: everyone (a SKU changed)
DROP TRIGGER IF EXISTS skus_changes_insert ON incentives.skus;
CREATE TRIGGER skus_changes_insert
    AFTER INSERT ON incentives.skus
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER skus_changes_insert ON incentives.skus IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU changed (inserts)';
DROP TRIGGER IF EXISTS skus_changes_update ON incentives.skus;
CREATE TRIGGER skus_changes_update
    AFTER UPDATE ON incentives.skus
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER skus_changes_update ON incentives.skus IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU changed (updates)';
DROP TRIGGER IF EXISTS skus_changes_delete ON incentives.skus;
CREATE TRIGGER skus_changes_delete
    AFTER DELETE ON incentives.skus
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER skus_changes_delete ON incentives.skus IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU changed (deletes)';
DROP TRIGGER IF EXISTS skus_changes_truncate ON incentives.skus;
CREATE TRIGGER skus_changes_truncate
    AFTER TRUNCATE ON incentives.skus
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER skus_changes_truncate ON incentives.skus IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.uom_conversions: everyone (a unit conversion changed)
DROP TRIGGER IF EXISTS uom_conversions_changes_insert ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changes_insert
    AFTER INSERT ON incentives.uom_conversions
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER uom_conversions_changes_insert ON incentives.uom_conversions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a unit conversion changed (inserts)';
DROP TRIGGER IF EXISTS uom_conversions_changes_update ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changes_update
    AFTER UPDATE ON incentives.uom_conversions
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER uom_conversions_changes_update ON incentives.uom_conversions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a unit conversion changed (updates)';
DROP TRIGGER IF EXISTS uom_conversions_changes_delete ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changes_delete
    AFTER DELETE ON incentives.uom_conversions
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER uom_conversions_changes_delete ON incentives.uom_conversions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a unit conversion changed (deletes)';
DROP TRIGGER IF EXISTS uom_conversions_changes_truncate ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changes_truncate
    AFTER TRUNCATE ON incentives.uom_conversions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER uom_conversions_changes_truncate ON incentives.uom_conversions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.products: everyone (a product node changed)
DROP TRIGGER IF EXISTS products_changes_insert ON incentives.products;
CREATE TRIGGER products_changes_insert
    AFTER INSERT ON incentives.products
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER products_changes_insert ON incentives.products IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a product node changed (inserts)';
DROP TRIGGER IF EXISTS products_changes_update ON incentives.products;
CREATE TRIGGER products_changes_update
    AFTER UPDATE ON incentives.products
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER products_changes_update ON incentives.products IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a product node changed (updates)';
DROP TRIGGER IF EXISTS products_changes_delete ON incentives.products;
CREATE TRIGGER products_changes_delete
    AFTER DELETE ON incentives.products
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER products_changes_delete ON incentives.products IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a product node changed (deletes)';
DROP TRIGGER IF EXISTS products_changes_truncate ON incentives.products;
CREATE TRIGGER products_changes_truncate
    AFTER TRUNCATE ON incentives.products
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER products_changes_truncate ON incentives.products IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.sku_products: everyone (a SKU's products changed)
DROP TRIGGER IF EXISTS sku_products_changes_insert ON incentives.sku_products;
CREATE TRIGGER sku_products_changes_insert
    AFTER INSERT ON incentives.sku_products
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER sku_products_changes_insert ON incentives.sku_products IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU''s products changed (inserts)';
DROP TRIGGER IF EXISTS sku_products_changes_update ON incentives.sku_products;
CREATE TRIGGER sku_products_changes_update
    AFTER UPDATE ON incentives.sku_products
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER sku_products_changes_update ON incentives.sku_products IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU''s products changed (updates)';
DROP TRIGGER IF EXISTS sku_products_changes_delete ON incentives.sku_products;
CREATE TRIGGER sku_products_changes_delete
    AFTER DELETE ON incentives.sku_products
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER sku_products_changes_delete ON incentives.sku_products IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU''s products changed (deletes)';
DROP TRIGGER IF EXISTS sku_products_changes_truncate ON incentives.sku_products;
CREATE TRIGGER sku_products_changes_truncate
    AFTER TRUNCATE ON incentives.sku_products
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER sku_products_changes_truncate ON incentives.sku_products IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.exchange_rates: everyone (an exchange rate changed; a rate
-- applies to every transaction of the pair dated from its day on, until
-- a later row of the pair or the inverse pair)
DROP TRIGGER IF EXISTS exchange_rates_changes_insert ON incentives.exchange_rates;
CREATE TRIGGER exchange_rates_changes_insert
    AFTER INSERT ON incentives.exchange_rates
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER exchange_rates_changes_insert ON incentives.exchange_rates IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an exchange rate changed (inserts)';
DROP TRIGGER IF EXISTS exchange_rates_changes_update ON incentives.exchange_rates;
CREATE TRIGGER exchange_rates_changes_update
    AFTER UPDATE ON incentives.exchange_rates
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER exchange_rates_changes_update ON incentives.exchange_rates IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an exchange rate changed (updates)';
DROP TRIGGER IF EXISTS exchange_rates_changes_delete ON incentives.exchange_rates;
CREATE TRIGGER exchange_rates_changes_delete
    AFTER DELETE ON incentives.exchange_rates
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER exchange_rates_changes_delete ON incentives.exchange_rates IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an exchange rate changed (deletes)';
DROP TRIGGER IF EXISTS exchange_rates_changes_truncate ON incentives.exchange_rates;
CREATE TRIGGER exchange_rates_changes_truncate
    AFTER TRUNCATE ON incentives.exchange_rates
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER exchange_rates_changes_truncate ON incentives.exchange_rates IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';
