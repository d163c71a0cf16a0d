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

CREATE OR REPLACE FUNCTION incentives_internal.placement_units()
RETURNS TABLE (participant_key text, unit_key text)
AS 'MODULE_PATHNAME', 'incentives_placement_units'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.placement_units() IS
  'As participant_units(), with the units of the levels the stored offers aggregate at in any version (a window joins its member and group only when an aggregation key at one of those levels can go through it; docs/reference.md, Participant hierarchies): the keys a sharded layout places on one partition';

------------------------------------------------------------------------
-- The types of groups (docs/reference.md, Participant hierarchies): a
-- group_key and a group_type are non-empty, with no surrounding white
-- space and no control character (22023); a group_key equal to another
-- but for letter case is refused (23505, naming the existing key; the
-- unique index on lower(group_key) stops a concurrent one).  A key a row
-- already has is never refused.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.groups_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_problem text;
    v_rival   text;
BEGIN
    v_problem := replace(incentives_internal.offer_key_problem(NEW.group_type), 'offer key', 'group type');
    IF v_problem IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('group "%s": %s', NEW.group_key, v_problem), '',
            'A group type has no surrounding white space and no control character.');
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.group_key = NEW.group_key THEN
        RETURN NEW;          -- the key it already has
    END IF;
    v_problem := replace(incentives_internal.offer_key_problem(NEW.group_key), 'offer key', 'group key');
    IF v_problem IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', v_problem, '', 'A group key has no surrounding white space and no control character.');
    END IF;
    SELECT g.group_key INTO v_rival
      FROM incentives.groups AS g
     WHERE lower(g.group_key) = lower(NEW.group_key) AND g.group_key <> NEW.group_key
       AND (TG_OP = 'INSERT' OR g.group_key <> OLD.group_key)
     ORDER BY g.group_key COLLATE "C"
     LIMIT 1;
    IF v_rival IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '23505', format('group key "%s" differs only in letter case from the existing group "%s"', NEW.group_key, v_rival),
            'Group keys are compared without regard to letter case.',
            format('Update the group "%s", or choose another key.', v_rival));
    END IF;
    RETURN NEW;
END
$function$;
COMMENT ON FUNCTION incentives_internal.groups_check() IS
  'Trigger: refuses a group key or group type that is empty, has leading or trailing white space or a control character (22023), and a group key equal to another''s but for letter case (23505, naming it); a key a row already has is never refused';

DROP TRIGGER IF EXISTS groups_check ON incentives.groups;
CREATE TRIGGER groups_check
    BEFORE INSERT OR UPDATE ON incentives.groups
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.groups_check();
COMMENT ON TRIGGER groups_check ON incentives.groups IS
  'Refuses malformed group keys and types, and keys that differ from another group''s only in letter case';
