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

CREATE FUNCTION incentives_internal.offer_change_time(offer_key text)
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

CREATE FUNCTION incentives_internal.offers_version()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_open incentives.offer_versions;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF OLD.offer_key IS NOT DISTINCT FROM NEW.offer_key
           AND OLD.document IS NOT DISTINCT FROM NEW.document THEN
            RETURN NULL;     -- the same document: no new version
        END IF;
    END IF;
    -- One writer of versions at a time.  This also orders a parallel
    -- pg_restore: the offers' rows arrive after their versions (whose COPY
    -- holds its lock from its start, while this trigger runs at the end of
    -- the offers' COPY), so loading an offer finds its current version and
    -- writes none.
    LOCK TABLE incentives.offer_versions IN SHARE ROW EXCLUSIVE MODE;
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
        INSERT INTO incentives.offer_versions (offer_key, version, document, valid_from, changed_by)
        SELECT NEW.offer_key,
               COALESCE(max(v.version), 0) + 1,
               NEW.document,
               incentives_internal.offer_change_time(NEW.offer_key),
               current_user
          FROM incentives.offer_versions AS v
         WHERE v.offer_key = NEW.offer_key;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_version() IS
  'Trigger: keeps incentives.offer_versions in step with incentives.offers (a new version per insert or change of the document, the current one closed by a change or the delete)';

CREATE TRIGGER offers_version
    AFTER INSERT OR UPDATE OR DELETE ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_version();
COMMENT ON TRIGGER offers_version ON incentives.offers IS
  'Writes incentives.offer_versions: every insert, change and delete of an offer';

CREATE FUNCTION incentives_internal.offers_version_truncate()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    UPDATE incentives.offer_versions AS v
       SET valid_to = incentives_internal.offer_change_time(v.offer_key)
     WHERE v.valid_to IS NULL;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_version_truncate() IS
  'Trigger: TRUNCATE incentives.offers ends the current version of every offer';

CREATE TRIGGER offers_version_truncate
    AFTER TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.offers_version_truncate();
COMMENT ON TRIGGER offers_version_truncate ON incentives.offers IS
  'TRUNCATE of the offers ends every current version in incentives.offer_versions';

CREATE FUNCTION incentives_internal.offer_versions_append_only()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- The versioning trigger closing the current version of an offer that
    -- has really changed: the only UPDATE there is.
    IF TG_OP = 'UPDATE' AND pg_trigger_depth() > 1 THEN
        IF OLD.valid_to IS NULL AND NEW.valid_to IS NOT NULL
           AND NEW.offer_key = OLD.offer_key AND NEW.version = OLD.version
           AND NEW.document = OLD.document AND NEW.valid_from = OLD.valid_from
           AND NEW.changed_by = OLD.changed_by
           AND NEW.valid_to = incentives_internal.offer_change_time(OLD.offer_key)
           AND NOT EXISTS (SELECT 1 FROM incentives.offers AS o
                            WHERE o.offer_key = OLD.offer_key AND o.document = OLD.document)
        THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'incentives.offer_versions is append-only: % is not allowed', TG_OP
          USING ERRCODE = 'insufficient_privilege',
                DETAIL = 'Offer versions record every change of incentives.offers as it happened; no role may change or remove them.',
                HINT = 'Change the offer in incentives.offers: that writes its next version.';
END
$function$;
COMMENT ON FUNCTION incentives_internal.offer_versions_append_only() IS
  'Trigger: refuses UPDATE, DELETE and TRUNCATE of incentives.offer_versions (SQLSTATE 42501), except the versioning trigger closing the current version of a changed offer';

CREATE TRIGGER offer_versions_append_only
    BEFORE UPDATE OR DELETE ON incentives.offer_versions
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offer_versions_append_only();
COMMENT ON TRIGGER offer_versions_append_only ON incentives.offer_versions IS
  'Offer versions are append-only: UPDATE and DELETE are refused for every role';

CREATE TRIGGER offer_versions_no_truncate
    BEFORE TRUNCATE ON incentives.offer_versions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.offer_versions_append_only();
COMMENT ON TRIGGER offer_versions_no_truncate ON incentives.offer_versions IS
  'Offer versions are append-only: TRUNCATE is refused for every role';
