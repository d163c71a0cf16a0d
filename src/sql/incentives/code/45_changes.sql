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

CREATE FUNCTION incentives_internal.track_changes()
RETURNS trigger
LANGUAGE plpgsql
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
  'Trigger: logs in incentives.earnings_changes the participants a statement touched (argument participants: on transactions, participant properties, enrollments) or everyone (argument everyone: on offers, SKUs, unit conversions; and any TRUNCATE)';

DO $triggers$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES
               ('transactions', 'participants', 'the participants of the changed transactions'),
               ('participant_properties', 'participants', 'the participants of the changed properties'),
               ('enrollments', 'participants', 'the participants of the changed enrollment windows'),
               ('offers', 'everyone', 'everyone: an offer changed'),
               ('skus', 'everyone', 'everyone: a SKU changed'),
               ('uom_conversions', 'everyone', 'everyone: a unit conversion changed'))
             AS x(tab, tracks, what)
    LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON incentives.%I'
                       ' REFERENCING NEW TABLE AS incentives_new_rows'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes(%L)',
                       t.tab || '_changes_insert', t.tab, t.tracks);
        EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON incentives.%I'
                       ' REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes(%L)',
                       t.tab || '_changes_update', t.tab, t.tracks);
        EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON incentives.%I'
                       ' REFERENCING OLD TABLE AS incentives_old_rows'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes(%L)',
                       t.tab || '_changes_delete', t.tab, t.tracks);
        EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON incentives.%I'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes(%L)',
                       t.tab || '_changes_truncate', t.tab, t.tracks);
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
