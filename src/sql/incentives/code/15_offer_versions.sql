------------------------------------------------------------------------
-- Offer versions (docs/lifecycle.md, "Offer versions and as_of")
--
-- Every insert, change and delete of incentives.offers keeps its state in
-- incentives.offer_versions, by the row trigger offers_version (and the
-- statement trigger offers_version_truncate for TRUNCATE).  A version is
-- valid from the start of the transaction that wrote it (now(): every
-- offer changed in one transaction changes at the same instant, so as_of
-- never sees half of a change) until the next change (valid_to, exclusive).
-- When a transaction that started earlier changes an offer after a later
-- one did, its times are moved up to the later one's, so the versions of an
-- offer never overlap.  An update that leaves the document as it is writes
-- no version (put_offer applied again, or a restore that loads offers after
-- their versions: the open version already holds that document).
--
-- Append-only: the trigger offer_versions_append_only refuses UPDATE,
-- DELETE and TRUNCATE of incentives.offer_versions for every role, the
-- owner included.  The one UPDATE it lets through is the versioning
-- trigger's own: fired from a trigger (never a statement of the user's),
-- setting valid_to of the current version from NULL to the time of the
-- change and changing nothing else, while incentives.offers no longer holds
-- that version's document.  So closing a version works and the history
-- cannot be rewritten: whatever a role does, a version row only ever
-- records what really happened to the offer.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_change_time(offer_key text)
RETURNS timestamptz
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- the transaction's start, moved up past every time the offer's
    -- versions already have (a transaction that started earlier but
    -- changes the offer after a later one did)
    SELECT GREATEST(now(), max(v.valid_from), max(v.valid_to))
      FROM incentives.offer_versions AS v
     WHERE v.offer_key = $1
$function$;
COMMENT ON FUNCTION incentives_internal.offer_change_time(text) IS
  'Offer versioning helper: when a change of the offer made now takes effect (the transaction''s start, or the offer''s latest version time when that is later)';

CREATE OR REPLACE FUNCTION incentives_internal.offers_version()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_open incentives.offer_versions;
    v_effective_from date;
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN   -- TRUNCATE: every current version ends
        UPDATE incentives.offer_versions AS v
           SET valid_to = incentives_internal.offer_change_time(v.offer_key)
         WHERE v.valid_to IS NULL;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF OLD.offer_key IS NOT DISTINCT FROM NEW.offer_key
           AND OLD.document IS NOT DISTINCT FROM NEW.document THEN
            RETURN NULL;     -- the same document: no new version
        END IF;
    END IF;
    -- A restore writes no version: the dump holds them, and a parallel
    -- pg_restore may copy the offers before their versions (or while).
    IF TG_OP = 'INSERT' AND incentives_internal.restoring() THEN
        RETURN NULL;
    END IF;
    -- One writer of versions at a time.
    LOCK TABLE incentives.offer_versions IN SHARE ROW EXCLUSIVE MODE;
    -- a prospective rate change, or an annotation edit of one, has a date
    -- (17_rate_changes.sql), read while the current version is open
    IF TG_OP = 'UPDATE' AND OLD.offer_key = NEW.offer_key THEN
        v_effective_from := incentives_internal.version_effective_from(NEW.offer_key, OLD.document,
                                                                       NEW.document);
    END IF;
    -- the old state ends
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE incentives.offer_versions AS v
           SET valid_to = incentives_internal.offer_change_time(OLD.offer_key)
         WHERE v.offer_key = OLD.offer_key AND v.valid_to IS NULL;
    END IF;
    -- the new state begins
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT * INTO v_open FROM incentives.offer_versions AS v
         WHERE v.offer_key = NEW.offer_key AND v.valid_to IS NULL;
        IF FOUND AND v_open.document = NEW.document THEN
            RETURN NULL;     -- already the current version (a restore)
        END IF;
        IF FOUND THEN
            UPDATE incentives.offer_versions AS v
               SET valid_to = incentives_internal.offer_change_time(NEW.offer_key)
             WHERE v.offer_key = NEW.offer_key AND v.valid_to IS NULL;
        END IF;
        INSERT INTO incentives.offer_versions (offer_key, version, document, valid_from, changed_by,
                                               effective_from)
        SELECT NEW.offer_key,
               COALESCE(max(v.version), 0) + 1,
               NEW.document,
               incentives_internal.offer_change_time(NEW.offer_key),
               current_user,
               v_effective_from
          FROM incentives.offer_versions AS v
         WHERE v.offer_key = NEW.offer_key;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_version() IS
  'Trigger: keeps incentives.offer_versions in step with incentives.offers (a new version per insert or change of the document, the current one closed by a change or the delete; TRUNCATE closes every current one); an insert in a restore session (incentives_internal.restoring()) writes none: the dump holds the versions';

DROP TRIGGER IF EXISTS offers_version ON incentives.offers;
CREATE TRIGGER offers_version
    AFTER INSERT OR UPDATE OR DELETE ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_version();
COMMENT ON TRIGGER offers_version ON incentives.offers IS
  'Writes incentives.offer_versions: every insert, change and delete of an offer';

DROP TRIGGER IF EXISTS offers_version_truncate ON incentives.offers;
CREATE TRIGGER offers_version_truncate
    AFTER TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.offers_version();
COMMENT ON TRIGGER offers_version_truncate ON incentives.offers IS
  'TRUNCATE of the offers ends every current version in incentives.offer_versions';

CREATE OR REPLACE FUNCTION incentives_internal.offer_version_closes(old_row incentives.offer_versions, new_row incentives.offer_versions)
RETURNS boolean
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- The versioning trigger closing the current version of an offer that
    -- has really changed: the only UPDATE there is.
    SELECT pg_trigger_depth() > 1
       AND $1.valid_to IS NULL AND $2.valid_to IS NOT NULL
       AND $2.offer_key = $1.offer_key AND $2.version = $1.version
       AND $2.document = $1.document AND $2.valid_from = $1.valid_from
       AND $2.changed_by = $1.changed_by
       AND $2.effective_from IS NOT DISTINCT FROM $1.effective_from
       AND $2.valid_to = incentives_internal.offer_change_time($1.offer_key)
       AND NOT EXISTS (SELECT 1 FROM incentives.offers AS o
                        WHERE o.offer_key = $1.offer_key AND o.document = $1.document)
$function$;
COMMENT ON FUNCTION incentives_internal.offer_version_closes(incentives.offer_versions, incentives.offer_versions) IS
  'Append-only exception of incentives.offer_versions: true when an UPDATE is the versioning trigger closing the current version of a changed offer';
