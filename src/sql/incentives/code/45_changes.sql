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
--   incentives.offers, incentives.skus, incentives.uom_conversions: any
--     row changed means everyone (NULL).
--
-- The triggers run with the rights of the role that writes: it needs
-- INSERT on incentives.earnings_changes (the GRANT model in
-- code/90_grants.sql gives it to incentives_admin).
------------------------------------------------------------------------

CREATE FUNCTION incentives_internal.track_participants()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT DISTINCT n.participant_key FROM incentives_new_rows AS n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT n.participant_key FROM incentives_new_rows AS n
        UNION
        SELECT o.participant_key FROM incentives_old_rows AS o;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT DISTINCT o.participant_key FROM incentives_old_rows AS o;
    ELSE
        -- TRUNCATE: everyone
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.track_participants() IS
  'Trigger: logs the participants a statement on transactions or participant properties touched in incentives.earnings_changes (TRUNCATE: everyone)';

CREATE FUNCTION incentives_internal.track_everyone()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT NULL WHERE EXISTS (SELECT 1 FROM incentives_new_rows);
    ELSIF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT NULL WHERE EXISTS (SELECT 1 FROM incentives_old_rows);
    ELSE
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.track_everyone() IS
  'Trigger: logs "everyone" (NULL) in incentives.earnings_changes when a statement changed offers, SKUs or unit conversions';

DO $triggers$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES
               ('transactions', 'track_participants', 'the participants of the changed transactions'),
               ('participant_properties', 'track_participants', 'the participants of the changed properties'),
               ('enrollments', 'track_participants', 'the participants of the changed enrollment windows'),
               ('offers', 'track_everyone', 'everyone: an offer changed'),
               ('skus', 'track_everyone', 'everyone: a SKU changed'),
               ('uom_conversions', 'track_everyone', 'everyone: a unit conversion changed'))
             AS x(tab, fn, what)
    LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON incentives.%I'
                       ' REFERENCING NEW TABLE AS incentives_new_rows'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.%I()',
                       t.tab || '_changes_insert', t.tab, t.fn);
        EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON incentives.%I'
                       ' REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.%I()',
                       t.tab || '_changes_update', t.tab, t.fn);
        EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON incentives.%I'
                       ' REFERENCING OLD TABLE AS incentives_old_rows'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.%I()',
                       t.tab || '_changes_delete', t.tab, t.fn);
        EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON incentives.%I'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.%I()',
                       t.tab || '_changes_truncate', t.tab, t.fn);
        EXECUTE format('COMMENT ON TRIGGER %I ON incentives.%I IS %L', t.tab || '_changes_insert', t.tab,
                       'Change tracking for refresh_earnings(changed_only => true): ' || t.what || ' (inserts)');
        EXECUTE format('COMMENT ON TRIGGER %I ON incentives.%I IS %L', t.tab || '_changes_update', t.tab,
                       'Change tracking for refresh_earnings(changed_only => true): ' || t.what || ' (updates)');
        EXECUTE format('COMMENT ON TRIGGER %I ON incentives.%I IS %L', t.tab || '_changes_delete', t.tab,
                       'Change tracking for refresh_earnings(changed_only => true): ' || t.what || ' (deletes)');
        EXECUTE format('COMMENT ON TRIGGER %I ON incentives.%I IS %L', t.tab || '_changes_truncate', t.tab,
                       'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)');
    END LOOP;
END
$triggers$;
