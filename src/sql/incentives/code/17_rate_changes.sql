------------------------------------------------------------------------
-- Prospective rate changes (docs/lifecycle.md, Prospective rate changes)
--
-- incentives.change_rates(offer_key, effective_from, document) stores a
-- document that differs from the current one only in rate values (and
-- annotations) as the offer's new version, with effective_from: the
-- transactions dated on or after it take its values, those before keep
-- the schedule's earlier ones.  The versioning trigger (15_offer_versions
-- .sql) writes the version; it reads the date from the transaction-local
-- setting incentives_internal.rate_change_from, which change_rates and
-- cancel_rate_change set, and checks the change itself, so setting it by
-- hand allows nothing change_rates would refuse.
--
-- The schedule of an offer is the chain of its versions from the latest
-- one without effective_from (a retrospective version: an INSERT, or an
-- UPDATE other than an annotation edit) to the current one.  The offer's
-- settlement counts as an annotation here (offer_difference): it changes
-- no figure of the calculation, only what settle holds back
-- (docs/lifecycle.md, Why a line moved, holdbacks, minimums and closing a season).  A transaction
-- dated d takes the rate values of the highest-numbered version of the
-- chain whose effective_from <= d, the first version's before every
-- effective_from.  So a version is in force while no later version of
-- the chain starts on or before its own date: rate_schedule lists those.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.rate_schedule(offer_key text, as_of timestamptz DEFAULT NULL)
RETURNS TABLE (version integer, effective_from date, document jsonb)
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH known AS (          -- the versions that existed at as_of (NULL: now)
        SELECT v.version, v.effective_from, v.document, v.valid_from, v.valid_to
          FROM incentives.offer_versions AS v
         WHERE v.offer_key = $1
           AND ($2 IS NULL OR v.valid_from <= $2)),
    current_version AS (     -- the one valid then
        SELECT k.version, k.effective_from
          FROM known AS k
         WHERE ($2 IS NULL AND k.valid_to IS NULL)
            OR ($2 IS NOT NULL AND (k.valid_to IS NULL OR k.valid_to > $2))),
    chain AS (               -- back to the latest retrospective version
        SELECT k.version, k.effective_from, k.document
          FROM known AS k, current_version AS c
         WHERE c.effective_from IS NOT NULL
           AND k.version <= c.version
           AND k.version >= (SELECT max(b.version) FROM known AS b
                              WHERE b.version <= c.version AND b.effective_from IS NULL))
    SELECT s.version, s.effective_from, s.document
      FROM chain AS s
     WHERE NOT EXISTS (SELECT 1 FROM chain AS l
                        WHERE l.version > s.version
                          AND s.effective_from IS NOT NULL
                          AND l.effective_from <= s.effective_from)
     ORDER BY s.version
$function$;
COMMENT ON FUNCTION incentives_internal.rate_schedule(text, timestamptz) IS
  'The rate schedule of an offer as of as_of (NULL: now): the versions in force, first version (effective_from NULL) to current, in order; no rows when its current version is retrospective (no schedule); the calculation loads it';

CREATE OR REPLACE FUNCTION incentives_internal.latest_statement_date(offer_key text)
RETURNS date
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT max(s.statement_date)
      FROM incentives.statements AS s
      JOIN incentives.statement_lines AS l ON l.statement_id = s.statement_id
     WHERE l.offer_key = $1
       AND s.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
$function$;
COMMENT ON FUNCTION incentives_internal.latest_statement_date(text) IS
  'The date of the latest statement with a line of the offer, voided statements and their reversals left out (NULL: never settled)';

CREATE OR REPLACE FUNCTION incentives_internal.rate_change_check(offer_key text, old_document jsonb,
                                                                 new_document jsonb, effective_from date)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_kind     text;
    v_path     text;
    v_start    date;
    v_end      date;
    v_latest   date;
    v_settled  date;
BEGIN
    IF effective_from IS NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('offer "%s": effective_from must not be NULL', offer_key), '',
            'A change of every transaction''s rates is an UPDATE of incentives.offers.');
    END IF;
    SELECT d.kind, d.path INTO v_kind, v_path
      FROM incentives_internal.offer_difference(old_document, new_document) AS d;
    IF v_kind = 'pool' THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('offer "%s": %s is a fixed_amount pool, and a rate change may change only rate values',
                   offer_key, v_path),
            '', 'Such a change is retrospective: make it with UPDATE incentives.offers.');
    END IF;
    IF v_kind = 'structure' THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('offer "%s": %s differs, and a rate change may change only rate values', offer_key,
                   COALESCE(v_path, 'the document')),
            '', 'Such a change is retrospective: make it with UPDATE incentives.offers.');
    END IF;
    IF v_kind IN ('same', 'annotations') THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('offer "%s": the document changes no rate value', offer_key), '',
            'An edit of labels, descriptions, names, metadata or settlement is an UPDATE of incentives.offers; it keeps the rate schedule.');
    END IF;
    -- offer_difference counts the settlement as an annotation (an UPDATE
    -- of it alone keeps the schedule), but a holdback is no rate value and
    -- has no date to start from: it changes with an UPDATE only.
    IF old_document -> 'settlement' IS DISTINCT FROM new_document -> 'settlement' THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('offer "%s": settlement differs, and a rate change may change only rate values', offer_key),
            '', 'Change the settlement with UPDATE incentives.offers; it keeps the rate schedule.');
    END IF;
    SELECT min((p.value ->> 'start_date')::date), max((p.value ->> 'end_date')::date)
      INTO v_start, v_end
      FROM jsonb_array_elements(new_document -> 'periods') AS p;
    IF effective_from < v_start OR effective_from > v_end THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('offer "%s": effective_from %s is outside the offer''s span %s to %s',
                   offer_key, effective_from, v_start, v_end),
            '', '');
    END IF;
    SELECT v.effective_from INTO v_latest
      FROM incentives.offer_versions AS v
     WHERE v.offer_key = rate_change_check.offer_key AND v.valid_to IS NULL;
    IF effective_from <= v_latest THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('offer "%s": effective_from %s is not after its latest scheduled change, from %s',
                   offer_key, effective_from, v_latest),
            '', 'Undo that change first with incentives.cancel_rate_change.');
    END IF;
    v_settled := incentives_internal.latest_statement_date(offer_key);
    IF effective_from <= v_settled THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('offer "%s": effective_from %s is not after its latest statement, dated %s',
                   offer_key, effective_from, v_settled),
            'Settled dates change only retrospectively, on purpose.',
            'Choose a date after the statement, or change the offer with UPDATE incentives.offers and let the next statement true up.');
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.rate_change_check(text, jsonb, jsonb, date) IS
  'Refuses (22023) a prospective rate change that changes more than rate values (the settlement included), no rate value, a fixed_amount pool, or starts outside the offer''s span, on or before its latest scheduled change or on or before its latest statement';

CREATE OR REPLACE FUNCTION incentives.change_rates(offer_key text, effective_from date, document jsonb)
RETURNS integer
LANGUAGE plpgsql
VOLATILE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_old jsonb;
BEGIN
    PERFORM incentives_internal.refuse_read_only('change_rates');
    SELECT o.document INTO v_old FROM incentives.offers AS o
     WHERE o.offer_key = change_rates.offer_key FOR UPDATE;
    IF NOT FOUND THEN
        -- (a NULL key is written <NULL>, as RAISE writes a NULL)
        PERFORM incentives_internal.raise_error(
            '22023', format('offer "%s" does not exist', COALESCE(offer_key, '<NULL>')), '',
            'A new offer is an INSERT into incentives.offers.');
    END IF;
    IF document IS NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('offer "%s": document must not be NULL', offer_key), '', '');
    END IF;
    PERFORM incentives_internal.rate_change_check(offer_key, v_old, document, effective_from);
    PERFORM set_config('incentives_internal.rate_change_from', effective_from::text, true);
    UPDATE incentives.offers AS o SET document = change_rates.document
     WHERE o.offer_key = change_rates.offer_key;
    PERFORM set_config('incentives_internal.rate_change_from', '', true);
    RETURN (SELECT max(v.version) FROM incentives.offer_versions AS v
             WHERE v.offer_key = change_rates.offer_key);
END
$function$;
COMMENT ON FUNCTION incentives.change_rates(text, date, jsonb) IS
  'A prospective rate change: stores document (the current one but for rate values and annotations) as the offer''s new version, whose rate values apply to transactions dated on or after effective_from (inside the span, after the latest scheduled change and the latest statement); returns the version; runs with the caller''s rights (an UPDATE of incentives.offers)';

CREATE OR REPLACE FUNCTION incentives.cancel_rate_change(offer_key text)
RETURNS integer
LANGUAGE plpgsql
VOLATILE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_latest   date;
    v_previous jsonb;
BEGIN
    PERFORM incentives_internal.refuse_read_only('cancel_rate_change');
    PERFORM 1 FROM incentives.offers AS o WHERE o.offer_key = cancel_rate_change.offer_key FOR UPDATE;
    IF NOT FOUND THEN
        -- (a NULL key is written <NULL>, as RAISE writes a NULL)
        PERFORM incentives_internal.raise_error(
            '22023', format('offer "%s" does not exist', COALESCE(offer_key, '<NULL>')), '', '');
    END IF;
    SELECT s.effective_from INTO v_latest
      FROM incentives_internal.rate_schedule(offer_key) AS s ORDER BY s.version DESC LIMIT 1;
    IF v_latest IS NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('offer "%s" has no scheduled rate change', offer_key), '', '');
    END IF;
    SELECT s.document INTO v_previous
      FROM incentives_internal.rate_schedule(offer_key) AS s ORDER BY s.version DESC OFFSET 1 LIMIT 1;
    PERFORM set_config('incentives_internal.rate_change_from', 'cancel', true);
    UPDATE incentives.offers AS o SET document = v_previous
     WHERE o.offer_key = cancel_rate_change.offer_key;
    PERFORM set_config('incentives_internal.rate_change_from', '', true);
    RETURN (SELECT max(v.version) FROM incentives.offer_versions AS v
             WHERE v.offer_key = cancel_rate_change.offer_key);
END
$function$;
COMMENT ON FUNCTION incentives.cancel_rate_change(text) IS
  'Undoes the offer''s latest scheduled rate change: a new version equal to the one in force before it (its document and effective_from), the history kept; refused when that change starts on or before the latest statement; returns the version';

-- The versioning trigger's part: the effective_from of the version an
-- UPDATE writes, and the WARNING of an UPDATE that replaces a schedule.
CREATE OR REPLACE FUNCTION incentives_internal.version_effective_from(offer_key text, old_document jsonb,
                                                                      new_document jsonb)
RETURNS date
LANGUAGE plpgsql
VOLATILE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_setting  text := current_setting('incentives_internal.rate_change_from', true);
    v_current  date;
    v_from     date;
    v_previous jsonb;
    v_settled  date;
    v_dropped  text;
BEGIN
    SELECT v.effective_from INTO v_current
      FROM incentives.offer_versions AS v
     WHERE v.offer_key = version_effective_from.offer_key AND v.valid_to IS NULL;
    IF v_setting = 'cancel' THEN      -- cancel_rate_change: the version before the latest change
        SELECT s.effective_from, s.document INTO v_from, v_previous
          FROM incentives_internal.rate_schedule(offer_key) AS s
         ORDER BY s.version DESC OFFSET 1 LIMIT 1;
        IF NOT FOUND OR v_previous IS DISTINCT FROM new_document THEN
            PERFORM incentives_internal.raise_error(
                '22023',
                format('offer "%s": the document is not the version in force before its latest scheduled change',
                       offer_key),
                '', 'Undo a scheduled change with incentives.cancel_rate_change.');
        END IF;
        v_settled := incentives_internal.latest_statement_date(offer_key);
        IF v_current <= v_settled THEN
            PERFORM incentives_internal.raise_error(
                '22023',
                format('offer "%s": its change from %s is settled: the latest statement is dated %s',
                       offer_key, v_current, v_settled),
                'Settled dates change only retrospectively, on purpose.',
                'Change the offer with UPDATE incentives.offers and let the next statement true up.');
        END IF;
        RETURN v_from;
    END IF;
    IF v_setting IS NOT NULL AND v_setting <> '' THEN   -- change_rates
        v_from := v_setting::date;
        PERFORM incentives_internal.rate_change_check(offer_key, old_document, new_document, v_from);
        RETURN v_from;
    END IF;
    IF (SELECT d.kind FROM incentives_internal.offer_difference(old_document, new_document) AS d)
       = 'annotations' THEN
        RETURN v_current;             -- an annotation (or settlement) edit keeps the schedule
    END IF;
    IF v_current IS NOT NULL THEN
        SELECT string_agg(format('%s (from %s)', s.version, s.effective_from), ', ' ORDER BY s.version)
          INTO v_dropped
          FROM incentives_internal.rate_schedule(offer_key) AS s
         WHERE s.effective_from IS NOT NULL;
        RAISE WARNING 'offer "%": this change replaces its rate schedule; versions % no longer apply',
                      offer_key, v_dropped
              USING HINT = 'A change of rate values from a date is incentives.change_rates; this one applies to every transaction.';
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.version_effective_from(text, jsonb, jsonb) IS
  'Offer versioning helper: the effective_from of the version an UPDATE writes (change_rates'' date, checked; cancel_rate_change''s earlier version; an edit of annotations or settlement alone keeps the current one; otherwise NULL, with a WARNING naming the scheduled versions it replaces)';
