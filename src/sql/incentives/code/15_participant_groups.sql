------------------------------------------------------------------------
-- Participant groups (docs/reference.md, Participant groups): two windows
-- of one participant never overlap, and no group is its own ancestor
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.participant_groups_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_participant_groups_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.participant_groups_check() IS
  'Trigger: refuses a membership window that overlaps another of the same participant (SQLSTATE 23P01, naming the participant and both windows), and a membership that makes a group its own ancestor on some day (22023, naming the keys of the cycle); writers of the table take turns (one transaction-level lock)';

DROP TRIGGER IF EXISTS participant_groups_check ON incentives.participant_groups;
CREATE TRIGGER participant_groups_check
    AFTER INSERT OR UPDATE ON incentives.participant_groups
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.participant_groups_check();
COMMENT ON TRIGGER participant_groups_check ON incentives.participant_groups IS
  'Refuses overlapping membership windows of one participant and cycles of groups';

CREATE OR REPLACE FUNCTION incentives_internal.participant_units()
RETURNS TABLE (participant_key text, unit_key text)
AS 'MODULE_PATHNAME', 'incentives_participant_units'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.participant_units() IS
  'Every key of incentives.participant_groups (members and groups) with the first key of its calculation unit (a group with its members, and the groups a member that moves joins): the keys a refresh calculates together';
