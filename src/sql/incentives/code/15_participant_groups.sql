------------------------------------------------------------------------
-- Participant groups (docs/reference.md, Participant groups): two windows
-- of one participant never overlap, and groups have one level
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.participant_groups_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_participant_groups_check'
LANGUAGE C;
COMMENT ON FUNCTION incentives_internal.participant_groups_check() IS
  'Trigger: refuses a membership window that overlaps another of the same participant (SQLSTATE 23P01, naming the participant and both windows), a group_key that is itself a member and a member that is itself a group (22023, naming both keys); concurrent writers of the same keys take turns';

DROP TRIGGER IF EXISTS participant_groups_check ON incentives.participant_groups;
CREATE TRIGGER participant_groups_check
    AFTER INSERT OR UPDATE ON incentives.participant_groups
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.participant_groups_check();
COMMENT ON TRIGGER participant_groups_check ON incentives.participant_groups IS
  'Refuses overlapping membership windows of one participant and groups of groups';
