------------------------------------------------------------------------
-- Append-only tables: the offer versions (15_offer_versions.sql), the
-- settlement statements and their lines (55_settle.sql) and the accruals
-- and their lines (57_forecast.sql).  UPDATE, DELETE
-- and TRUNCATE are refused for every role, the owner included, by one
-- trigger function; each table gives it the DETAIL and HINT of its error
-- and, for incentives.offer_versions, the function that recognizes the one
-- UPDATE there is (the versioning trigger closing a version).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.append_only()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
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
    PERFORM incentives_internal.raise_error(
        '42501', format('incentives.%s is append-only: %s is not allowed', TG_TABLE_NAME, TG_OP),
        TG_ARGV[0], TG_ARGV[1]);
END
$function$;
COMMENT ON FUNCTION incentives_internal.append_only() IS
  'Trigger: refuses UPDATE, DELETE and TRUNCATE of an append-only table (SQLSTATE 42501; arguments: the DETAIL, the HINT, and optionally a function of the old and new row allowing an UPDATE)';

DROP TRIGGER IF EXISTS offer_versions_append_only ON incentives.offer_versions;
CREATE TRIGGER offer_versions_append_only
    BEFORE UPDATE OR DELETE ON incentives.offer_versions
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'Offer versions record every change of incentives.offers as it happened; no role may change or remove them.',
        'Change the offer in incentives.offers: that writes its next version.',
        'incentives_internal.offer_version_closes');
COMMENT ON TRIGGER offer_versions_append_only ON incentives.offer_versions IS
  'Offer versions are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS offer_versions_no_truncate ON incentives.offer_versions;
CREATE TRIGGER offer_versions_no_truncate
    BEFORE TRUNCATE ON incentives.offer_versions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'Offer versions record every change of incentives.offers as it happened; no role may change or remove them.',
        'Change the offer in incentives.offers: that writes its next version.');
COMMENT ON TRIGGER offer_versions_no_truncate ON incentives.offer_versions IS
  'Offer versions are append-only: TRUNCATE is refused for every role';

DROP TRIGGER IF EXISTS statements_append_only ON incentives.statements;
CREATE TRIGGER statements_append_only
    BEFORE UPDATE OR DELETE ON incentives.statements
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'Settlement statements are a ledger: no role may change or remove them.',
        'Corrections are the next statement''s business: CALL incentives.settle again.');
COMMENT ON TRIGGER statements_append_only ON incentives.statements IS
  'Statements are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS statements_no_truncate ON incentives.statements;
CREATE TRIGGER statements_no_truncate
    BEFORE TRUNCATE ON incentives.statements
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'Settlement statements are a ledger: no role may change or remove them.',
        'Corrections are the next statement''s business: CALL incentives.settle again.');
COMMENT ON TRIGGER statements_no_truncate ON incentives.statements IS
  'Statements are append-only: TRUNCATE is refused for every role';

DROP TRIGGER IF EXISTS statement_lines_append_only ON incentives.statement_lines;
CREATE TRIGGER statement_lines_append_only
    BEFORE UPDATE OR DELETE ON incentives.statement_lines
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'Settlement statements are a ledger: no role may change or remove them.',
        'Corrections are the next statement''s business: CALL incentives.settle again.');
COMMENT ON TRIGGER statement_lines_append_only ON incentives.statement_lines IS
  'Statement lines are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS statement_lines_no_truncate ON incentives.statement_lines;
CREATE TRIGGER statement_lines_no_truncate
    BEFORE TRUNCATE ON incentives.statement_lines
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'Settlement statements are a ledger: no role may change or remove them.',
        'Corrections are the next statement''s business: CALL incentives.settle again.');
COMMENT ON TRIGGER statement_lines_no_truncate ON incentives.statement_lines IS
  'Statement lines are append-only: TRUNCATE is refused for every role';

DROP TRIGGER IF EXISTS accruals_append_only ON incentives.accruals;
CREATE TRIGGER accruals_append_only
    BEFORE UPDATE OR DELETE ON incentives.accruals
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'Accruals are a ledger: no role may change or remove them.',
        'Corrections are the next accrual''s business: CALL incentives.accrue again.');
COMMENT ON TRIGGER accruals_append_only ON incentives.accruals IS
  'Accruals are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS accruals_no_truncate ON incentives.accruals;
CREATE TRIGGER accruals_no_truncate
    BEFORE TRUNCATE ON incentives.accruals
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'Accruals are a ledger: no role may change or remove them.',
        'Corrections are the next accrual''s business: CALL incentives.accrue again.');
COMMENT ON TRIGGER accruals_no_truncate ON incentives.accruals IS
  'Accruals are append-only: TRUNCATE is refused for every role';

DROP TRIGGER IF EXISTS accrual_lines_append_only ON incentives.accrual_lines;
CREATE TRIGGER accrual_lines_append_only
    BEFORE UPDATE OR DELETE ON incentives.accrual_lines
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'Accruals are a ledger: no role may change or remove them.',
        'Corrections are the next accrual''s business: CALL incentives.accrue again.');
COMMENT ON TRIGGER accrual_lines_append_only ON incentives.accrual_lines IS
  'Accrual lines are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS accrual_lines_no_truncate ON incentives.accrual_lines;
CREATE TRIGGER accrual_lines_no_truncate
    BEFORE TRUNCATE ON incentives.accrual_lines
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'Accruals are a ledger: no role may change or remove them.',
        'Corrections are the next accrual''s business: CALL incentives.accrue again.');
COMMENT ON TRIGGER accrual_lines_no_truncate ON incentives.accrual_lines IS
  'Accrual lines are append-only: TRUNCATE is refused for every role';
