------------------------------------------------------------------------
-- Enrollment windows (docs/reference.md, Enrollment): two windows of one
-- participant and offer never overlap
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.enrollments_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_enrollments_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.enrollments_check() IS
  'Trigger: refuses an enrollment window that overlaps another of the same participant and offer (SQLSTATE 23P01, naming the participant, the offer and both windows); concurrent writers of one participant and offer take turns';

DROP TRIGGER IF EXISTS enrollments_check ON incentives.enrollments;
CREATE TRIGGER enrollments_check
    AFTER INSERT OR UPDATE ON incentives.enrollments
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.enrollments_check();
COMMENT ON TRIGGER enrollments_check ON incentives.enrollments IS
  'Refuses overlapping enrollment windows of one participant and offer';
