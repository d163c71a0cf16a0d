------------------------------------------------------------------------
-- Append-only tables: the offer versions (15_offer_versions.sql) and the
-- settlement statements and their lines (55_settle.sql).  UPDATE, DELETE
-- and TRUNCATE are refused for every role, the owner included, by one
-- trigger function; each table gives it the DETAIL and HINT of its error
-- and, for incentives.offer_versions, the function that recognizes the one
-- UPDATE there is (the versioning trigger closing a version).
------------------------------------------------------------------------

CREATE FUNCTION incentives_internal.append_only()
RETURNS trigger
LANGUAGE plpgsql
AS $function$
DECLARE
    v_allowed boolean := false;
BEGIN
    -- TG_ARGV: the error's DETAIL, its HINT, and optionally the name of a
    -- function (old row, new row) that is true for an UPDATE to let through
    IF TG_OP = 'UPDATE' AND TG_NARGS > 2 THEN
        EXECUTE format('SELECT %s($1, $2)', TG_ARGV[2]) INTO v_allowed USING OLD, NEW;
        IF v_allowed THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'incentives.% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
          USING ERRCODE = 'insufficient_privilege', DETAIL = TG_ARGV[0], HINT = TG_ARGV[1];
END
$function$;
COMMENT ON FUNCTION incentives_internal.append_only() IS
  'Trigger: refuses UPDATE, DELETE and TRUNCATE of an append-only table (SQLSTATE 42501; arguments: the DETAIL, the HINT, and optionally a function of the old and new row allowing an UPDATE)';

DO $append_only$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES
               ('offer_versions', 'Offer versions',
                'Offer versions record every change of incentives.offers as it happened; no role may change or remove them.',
                'Change the offer in incentives.offers: that writes its next version.',
                'incentives_internal.offer_version_closes'),
               ('statements', 'Statements',
                'Settlement statements are a ledger: no role may change or remove them.',
                'Corrections are the next statement''s business: CALL incentives.settle again.', NULL),
               ('statement_lines', 'Statement lines',
                'Settlement statements are a ledger: no role may change or remove them.',
                'Corrections are the next statement''s business: CALL incentives.settle again.', NULL))
             AS x(tab, label, detail, hint, allow)
    LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON incentives.%I '
                       'FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(%L, %L%s)',
                       t.tab || '_append_only', t.tab, t.detail, t.hint,
                       CASE WHEN t.allow IS NOT NULL THEN format(', %L', t.allow) ELSE '' END);
        EXECUTE format('COMMENT ON TRIGGER %I ON incentives.%I IS %L', t.tab || '_append_only', t.tab,
                       t.label || ' are append-only: UPDATE and DELETE are refused for every role');
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON incentives.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(%L, %L)',
                       t.tab || '_no_truncate', t.tab, t.detail, t.hint);
        EXECUTE format('COMMENT ON TRIGGER %I ON incentives.%I IS %L', t.tab || '_no_truncate', t.tab,
                       t.label || ' are append-only: TRUNCATE is refused for every role');
    END LOOP;
END
$append_only$;
