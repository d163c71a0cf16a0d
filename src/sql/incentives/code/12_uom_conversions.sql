------------------------------------------------------------------------
-- The shipped unit conversions survive pg_dump/pg_restore as they are
-- (docs/backup-and-upgrade.md).
--
-- CREATE EXTENSION ships nine rows into incentives.uom_conversions, and a
-- restore runs CREATE EXTENSION before it copies the dumped rows.  So the
-- dump leaves the shipped pairs out of that table (its pg_dump condition)
-- and keeps, in incentives.uom_conversion_changes, what became of
-- each shipped pair that is no longer as shipped: its factor now, or NULL
-- when it was deleted.  A trigger keeps that table up to date on every
-- change of incentives.uom_conversions; restoring its rows re-applies each
-- change to the freshly shipped rows.  Whatever order pg_restore loads the
-- two tables in (parallel restores included), the result is the table as
-- it was dumped, and no key is loaded twice.
--
-- Both run with the caller's rights: a role that changes unit conversions
-- also needs SELECT, INSERT, UPDATE, DELETE on
-- incentives.uom_conversion_changes (granted with the tables of schema
-- incentives in the model of docs/security.md), and reads
-- incentives_internal.shipped_uom_conversions, which every role that may
-- use schema incentives_internal may read (granted below).
------------------------------------------------------------------------

-- What the extension ships is no secret; only the owner changes it.
GRANT SELECT ON incentives_internal.shipped_uom_conversions TO PUBLIC;

CREATE OR REPLACE FUNCTION incentives_internal.uom_conversion_sync(from_uom_key text, to_uom_key text)
RETURNS void
LANGUAGE sql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- a shipped pair as shipped: nothing to remember
    DELETE FROM incentives.uom_conversion_changes AS x
     WHERE x.from_uom_key = $1 AND x.to_uom_key = $2
       AND EXISTS (SELECT FROM incentives.uom_conversions AS c
                     JOIN incentives_internal.shipped_uom_conversions AS s
                       ON s.from_uom_key = c.from_uom_key AND s.to_uom_key = c.to_uom_key
                    WHERE c.from_uom_key = $1 AND c.to_uom_key = $2
                      AND c.factor::text = s.factor::text);
    -- a shipped pair edited (its factor now, exactly as written) or deleted
    -- (NULL)
    INSERT INTO incentives.uom_conversion_changes AS x (from_uom_key, to_uom_key, factor)
    SELECT s.from_uom_key, s.to_uom_key, c.factor
      FROM incentives_internal.shipped_uom_conversions AS s
      LEFT JOIN incentives.uom_conversions AS c
        ON c.from_uom_key = s.from_uom_key AND c.to_uom_key = s.to_uom_key
     WHERE s.from_uom_key = $1 AND s.to_uom_key = $2
       AND c.factor::text IS DISTINCT FROM s.factor::text
    ON CONFLICT (from_uom_key, to_uom_key) DO UPDATE SET factor = EXCLUDED.factor
     WHERE x.factor::text IS DISTINCT FROM EXCLUDED.factor::text;
$function$;
COMMENT ON FUNCTION incentives_internal.uom_conversion_sync(text, text) IS
  'Records in incentives.uom_conversion_changes what became of one shipped unit conversion pair (edited, deleted, or as shipped again); no-op for other pairs';

CREATE OR REPLACE FUNCTION incentives_internal.uom_conversions_track()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN   -- TRUNCATE: every shipped pair is gone
        PERFORM incentives_internal.uom_conversion_sync(s.from_uom_key, s.to_uom_key)
           FROM incentives_internal.shipped_uom_conversions AS s;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM incentives_internal.uom_conversion_sync(OLD.from_uom_key, OLD.to_uom_key);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM incentives_internal.uom_conversion_sync(NEW.from_uom_key, NEW.to_uom_key);
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.uom_conversions_track() IS
  'Trigger on incentives.uom_conversions: keeps incentives.uom_conversion_changes in step with the shipped pairs';

DROP TRIGGER IF EXISTS uom_conversions_track ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_track
    AFTER INSERT OR UPDATE OR DELETE ON incentives.uom_conversions
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.uom_conversions_track();
COMMENT ON TRIGGER uom_conversions_track ON incentives.uom_conversions IS
  'Records edits and deletions of the shipped unit conversions, so that a dump keeps them';

DROP TRIGGER IF EXISTS uom_conversions_track_truncate ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_track_truncate
    AFTER TRUNCATE ON incentives.uom_conversions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.uom_conversions_track();
COMMENT ON TRIGGER uom_conversions_track_truncate ON incentives.uom_conversions IS
  'Records that TRUNCATE deleted the shipped unit conversions, so that a dump keeps them deleted';

CREATE OR REPLACE FUNCTION incentives_internal.uom_conversion_changes_apply()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- A restore loads this row after CREATE EXTENSION shipped the pair
    -- again: make incentives.uom_conversions say what the row says.  (When
    -- the row comes from uom_conversions_track itself, the table already
    -- does, and nothing changes.)
    IF NEW.factor IS NULL THEN
        DELETE FROM incentives.uom_conversions AS c
         WHERE c.from_uom_key = NEW.from_uom_key AND c.to_uom_key = NEW.to_uom_key;
    ELSE
        INSERT INTO incentives.uom_conversions AS c (from_uom_key, to_uom_key, factor)
        VALUES (NEW.from_uom_key, NEW.to_uom_key, NEW.factor)
        ON CONFLICT (from_uom_key, to_uom_key) DO UPDATE SET factor = EXCLUDED.factor
         WHERE c.factor::text IS DISTINCT FROM EXCLUDED.factor::text;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.uom_conversion_changes_apply() IS
  'Trigger on incentives.uom_conversion_changes: applies a restored edit or deletion of a shipped unit conversion to incentives.uom_conversions';

DROP TRIGGER IF EXISTS uom_conversion_changes_apply ON incentives.uom_conversion_changes;
CREATE TRIGGER uom_conversion_changes_apply
    AFTER INSERT ON incentives.uom_conversion_changes
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.uom_conversion_changes_apply();
COMMENT ON TRIGGER uom_conversion_changes_apply ON incentives.uom_conversion_changes IS
  'pg_restore: re-applies a dumped edit or deletion of a shipped unit conversion';

------------------------------------------------------------------------
-- A factor the engine cannot calculate with is refused when it is written
-- (docs/reference.md, Unit conversions): every calculation reads every
-- conversion, so one such factor would fail them all.  A restore session
-- (incentives_internal.restoring()) loads it with a WARNING, as the offers
-- table does with what a write would refuse.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.number_problem(value numeric)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_number_problem'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.number_problem(numeric) IS
  'NULL when the engine calculates with the number exactly (at most 38 digits and 38 decimal places, finite), else what is wrong with it';

CREATE OR REPLACE FUNCTION incentives_internal.uom_conversions_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_problem text := incentives_internal.number_problem(NEW.factor);
BEGIN
    -- NaN and infinity: the table's check constraint refuses them (23514)
    IF v_problem IS NULL OR NEW.factor::text IN ('NaN', 'Infinity', '-Infinity') THEN
        RETURN NEW;
    END IF;
    IF incentives_internal.restoring() THEN
        RAISE WARNING 'unit conversion "%" to "%": factor % %', NEW.from_uom_key, NEW.to_uom_key, NEW.factor, v_problem
              USING DETAIL = 'Restored as it was dumped; every calculation fails while it is there.',
                    HINT = 'Round the factor to fewer digits with UPDATE incentives.uom_conversions.';
        RETURN NEW;
    END IF;
    -- (a NULL unit, refused by its NOT NULL after this trigger, is written
    -- <NULL>, as RAISE writes a NULL)
    PERFORM incentives_internal.raise_column_error(
        '22023',
        format('unit conversion "%s" to "%s": factor %s %s', COALESCE(NEW.from_uom_key, '<NULL>'),
               COALESCE(NEW.to_uom_key, '<NULL>'), NEW.factor, v_problem),
        'Every calculation reads every unit conversion: one it cannot calculate with would fail them all.',
        'Round the factor to fewer digits.',
        'incentives', 'uom_conversions', 'factor');
END
$function$;
COMMENT ON FUNCTION incentives_internal.uom_conversions_check() IS
  'Trigger on incentives.uom_conversions: refuses (22023) a factor the engine cannot calculate with exactly; a restore session loads it with a WARNING';

DROP TRIGGER IF EXISTS uom_conversions_check ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_check
    BEFORE INSERT OR UPDATE OF factor ON incentives.uom_conversions
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.uom_conversions_check();
COMMENT ON TRIGGER uom_conversions_check ON incentives.uom_conversions IS
  'Refuses a unit conversion factor the engine cannot calculate with (more than 38 digits or 38 decimal places)';
