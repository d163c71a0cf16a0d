------------------------------------------------------------------------
-- Offer keys and the enrollments' references to them (docs/reference.md,
-- Offers and Enrollment)
--
-- On every write:
--   * an offer_key is non-empty, has no leading or trailing white space
--     and no control character (22023, the key shown as a JSON string so
--     that the bad character can be seen);
--   * an offer_key equal to another offer's but for letter case is refused
--     (23505, naming the existing offer).  Writers of keys that differ
--     only by case take turns (a transaction-level advisory lock on the
--     lower-case key, taken before the lookup), so in READ COMMITTED (the
--     default) the second sees the first once it has committed; under
--     SERIALIZABLE the two conflict and one is cancelled (40001).  Under
--     REPEATABLE READ a writer that had to wait for a rival gets 40001
--     (its snapshot cannot see the rival's row);
--   * an enrollment names an existing offer (23503, with a hint naming the
--     offer it was probably meant to be: the same but for case, or a near
--     key, incentives_internal.suggested_key).  It is not a foreign key:
--     deleting an offer leaves its enrollments.
--
-- What is already stored is never refused: the checks apply to a key
-- being written, not to one a row already has (an UPDATE that keeps the
-- key, an upsert of an existing key, an upsert of an existing enrollment
-- window), and a restore reports instead of refusing (a NOTICE):
--   * an offer row whose key's open version in incentives.offer_versions
--     holds this very document is already stored: the restore of a dump
--     (offer_versions is loaded before offers; the versioning trigger
--     treats it the same way);
--   * while row_security or check_function_bodies is off: pg_dump's
--     scripts and pg_restore set both for every session of a restore
--     (enrollments are loaded before the offers they name), and
--     store_participant_data turns check_function_bodies off for the rows a
--     coordinator moves between shards.
-- So a 0.3.0 database whose offers include "VCS26.base_cp" beside
-- "vcs26.base_cp" updates, dumps and restores as it is; incentives.
-- offer_warnings and the update's NOTICEs report what it holds.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_key_problem(offer_key text)
RETURNS text
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- white space: the ASCII and Unicode spaces (control characters are
    -- checked after, so a trailing tab is trailing white space)
    SELECT CASE
        WHEN $1 IS NULL THEN NULL
        WHEN $1 = '' THEN 'offer key "" is empty'
        WHEN $1 ~ '^[\s\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]'
            THEN format('offer key %s has leading white space', to_jsonb($1)::text)
        WHEN $1 ~ '[\s\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]$'
            THEN format('offer key %s has trailing white space', to_jsonb($1)::text)
        WHEN $1 ~ '[\u0001-\u001f\u007f-\u009f]'
            THEN format('offer key %s has a control character (U+%s)', to_jsonb($1)::text,
                        lpad(upper(to_hex(ascii(substring($1 from '[\u0001-\u001f\u007f-\u009f]')))), 4, '0'))
    END
$function$;
COMMENT ON FUNCTION incentives_internal.offer_key_problem(text) IS
  'What is wrong with an offer key (empty, leading or trailing white space, a control character), the key shown as a JSON string; NULL when it is well formed';

CREATE OR REPLACE FUNCTION incentives_internal.restoring()
RETURNS boolean
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- pg_dump's output sets both for every session of a restore; a single
    -- session restore has check_function_bodies on again after CREATE
    -- EXTENSION (the released scripts end with RESET check_function_bodies),
    -- row_security stays off
    SELECT current_setting('row_security') = 'off'
        OR current_setting('check_function_bodies') = 'off'
$function$;
COMMENT ON FUNCTION incentives_internal.restoring() IS
  'True while row_security or check_function_bodies is off, as in every session restoring pg_dump''s output (and in store_participant_data): the key and reference checks then report what they would refuse';

CREATE OR REPLACE FUNCTION incentives_internal.offer_key_case_rival(offer_key text, except_key text DEFAULT NULL)
RETURNS text
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- the first (in byte order) stored offer whose key equals this one but
    -- for letter case; except_key: the row being updated
    SELECT o.offer_key
      FROM incentives.offers AS o
     WHERE lower(o.offer_key) = lower($1)
       AND o.offer_key <> $1
       AND o.offer_key IS DISTINCT FROM $2
     ORDER BY o.offer_key COLLATE "C"
     LIMIT 1
$function$;
COMMENT ON FUNCTION incentives_internal.offer_key_case_rival(text, text) IS
  'The stored offer whose key differs from the given one only in letter case (the first in byte order), other than except_key; NULL when there is none';

CREATE OR REPLACE FUNCTION incentives_internal.offers_check_key()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_key     text := NEW.document ->> 'offer_key';  -- the generated column is not computed yet
    v_old     text;
    v_problem text;
    v_rival   text;
BEGIN
    IF v_key IS NULL OR jsonb_typeof(NEW.document -> 'offer_key') <> 'string' THEN
        RETURN NEW;          -- offers_validate refuses the document
    END IF;
    IF TG_OP = 'UPDATE' THEN
        v_old := OLD.offer_key;
        IF v_old = v_key THEN
            RETURN NEW;      -- the key it already has
        END IF;
    ELSIF EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = v_key) THEN
        RETURN NEW;          -- a stored key: an upsert's update, or the primary key refuses it
    END IF;

    v_problem := incentives_internal.offer_key_problem(v_key);
    IF v_problem IS NULL THEN
        -- writers of one lower-case key take turns; the lookup, a later
        -- statement, sees a rival that committed meanwhile
        IF NOT pg_try_advisory_xact_lock(hashtext('incentives.offer_key'), hashtext(lower(v_key))) THEN
            PERFORM pg_advisory_xact_lock(hashtext('incentives.offer_key'), hashtext(lower(v_key)));
            IF current_setting('transaction_isolation') = 'repeatable read' THEN
                PERFORM incentives_internal.raise_error(
                    '40001',
                    format('could not check offer key "%s" against a concurrent write of the same key but for case', v_key),
                    '', 'Retry the transaction.');
            END IF;
        END IF;
        v_rival := incentives_internal.offer_key_case_rival(v_key, v_old);
        IF v_rival IS NOT NULL THEN
            v_problem := format('offer key "%s" differs only in letter case from the existing offer "%s"', v_key, v_rival);
        END IF;
    END IF;
    IF v_problem IS NULL THEN
        RETURN NEW;
    END IF;

    IF incentives_internal.restoring()
       OR EXISTS (SELECT FROM incentives.offer_versions AS v
                   WHERE v.offer_key = v_key AND v.valid_to IS NULL AND v.document = NEW.document) THEN
        RAISE NOTICE '%; restored as it was stored', v_problem
              USING HINT = 'SELECT * FROM incentives.offer_warnings lists what the offers hold.';
        RETURN NEW;
    END IF;
    IF v_rival IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '23505', v_problem, 'Offer keys are compared without regard to letter case.',
            format('Update the offer "%s", or choose another key.', v_rival));
    END IF;
    PERFORM incentives_internal.raise_error(
        '22023', v_problem, '', 'An offer key has no surrounding white space and no control character.');
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_check_key() IS
  'Trigger: refuses an offer key that is empty, has leading or trailing white space or a control character (22023), or equals another offer''s but for letter case (23505, naming it); a key a row already has is never refused, and a restore (the open version holds this document, or row_security or check_function_bodies is off) reports with a NOTICE instead';

-- after offers_validate (triggers fire in name order): a bad document is
-- reported first
DROP TRIGGER IF EXISTS offers_validate_key ON incentives.offers;
CREATE TRIGGER offers_validate_key
    BEFORE INSERT OR UPDATE OF document ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_check_key();
COMMENT ON TRIGGER offers_validate_key ON incentives.offers IS
  'Refuses malformed offer keys and keys that differ from another offer''s only in letter case';

CREATE OR REPLACE FUNCTION incentives_internal.enrollments_check_offer()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_meant text;
BEGIN
    IF NEW.offer_key IS NULL
       OR EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = NEW.offer_key) THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF OLD.offer_key = NEW.offer_key THEN
            RETURN NEW;      -- the offer it already names
        END IF;
    ELSIF EXISTS (SELECT FROM incentives.enrollments AS e
                   WHERE e.participant_key = NEW.participant_key AND e.offer_key = NEW.offer_key
                     AND e.start_date = NEW.start_date) THEN
        RETURN NEW;          -- a stored window: an upsert's update, or the primary key refuses it
    END IF;
    IF incentives_internal.restoring() THEN
        RAISE NOTICE 'enrollment of participant "%" names no offer "%"; restored as it was stored',
              NEW.participant_key, NEW.offer_key;
        RETURN NEW;
    END IF;
    -- the stored offer it was probably meant to be, by the rule of every
    -- suggestion (incentives_internal.suggested_key; docs/reference.md,
    -- Suggestions), of the keys in byte order
    v_meant := incentives_internal.suggested_key(
                   NEW.offer_key,
                   ARRAY(SELECT o.offer_key FROM incentives.offers AS o ORDER BY o.offer_key COLLATE "C"));
    -- (a NULL participant_key, refused by its NOT NULL after this trigger,
    -- is written <NULL>, as RAISE writes a NULL)
    PERFORM incentives_internal.raise_error(
        '23503',
        format('enrollment of participant "%s" names no offer "%s"',
               COALESCE(NEW.participant_key, '<NULL>'), NEW.offer_key),
        '',
        CASE WHEN v_meant IS NOT NULL
             THEN format('Did you mean the offer "%s"? If not, store the offer first.', v_meant)
             ELSE 'Store the offer first.' END);
END
$function$;
COMMENT ON FUNCTION incentives_internal.enrollments_check_offer() IS
  'Trigger: refuses an enrollment naming no stored offer (23503, with the stored offer it was probably meant to be as a hint, as incentives_internal.suggested_key finds it); not a foreign key, so deleting an offer leaves its enrollments; a window already stored is never refused, and a restore (row_security or check_function_bodies off) reports with a NOTICE instead';

DROP TRIGGER IF EXISTS enrollments_check_offer ON incentives.enrollments;
CREATE TRIGGER enrollments_check_offer
    BEFORE INSERT OR UPDATE OF offer_key ON incentives.enrollments
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.enrollments_check_offer();
COMMENT ON TRIGGER enrollments_check_offer ON incentives.enrollments IS
  'Refuses an enrollment naming no stored offer';
