-- incentives_cluster 0.2.0 -> 0.3.0: what changes in schemas and types,
-- and the 0.2.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function and procedure of 0.3.0, created or replaced in place), then
-- src/sql/update_end.sql (the Makefile).  A result type the shards' type
-- gains a column (incentives.earning, incentives.tier_progress_row, ...)
-- gains it here too, with the same ALTER TYPE ... ADD ATTRIBUTE
-- (docs/architecture.md, Install and upgrade scripts).

------------------------------------------------------------------------
-- Participant groups (docs/scaling.md, Participant groups): the rows gain
-- group_key as on the shards, and the coordinator keeps where each member
-- of a group lives.
------------------------------------------------------------------------

ALTER TYPE incentives.earning ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.earning.group_key IS 'In an offer aggregated by group, the group whose figures the row was computed over (NULL outside a group and in offers aggregated by participant)';
ALTER TYPE incentives.diagnostics_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.diagnostics_row.group_key IS 'An offer aggregated by group: the group whose figures are diagnosed (NULL: the participant''s own)';
ALTER TYPE incentives.tier_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.tier_progress_row.group_key IS 'An offer aggregated by group: the group whose value, tier and gap these are (NULL: the participant''s own)';
ALTER TYPE incentives.requirement_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.requirement_progress_row.group_key IS 'An offer aggregated by group: the group the requirement is judged in (NULL: the participant''s own)';
ALTER TYPE incentives.stack_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.stack_progress_row.group_key IS 'An offer aggregated by group: the group whose coverage these are (NULL: the participant''s own)';

-- The placement of every key of the participant groups: the key its
-- partition is the hash of (its calculation unit's first key), written by
-- put_participant_group and delete_participant_group; a participant in
-- no group is placed by its own key.
CREATE TABLE incentives_cluster.placements (
    participant_key text PRIMARY KEY,
    placement_key   text NOT NULL
);
COMMENT ON TABLE incentives_cluster.placements IS
  'Where the members (and groups) of incentives.participant_groups live: partition of hashtext(placement_key), the first key of the calculation unit, so that a group and all its members are on one partition; participants in no group are not listed (their own key)';
COMMENT ON COLUMN incentives_cluster.placements.participant_key IS 'A member or a group of incentives.participant_groups';
COMMENT ON COLUMN incentives_cluster.placements.placement_key IS 'The first key, in byte order, of its calculation unit (a group with its members, and the groups a member that moves joins)';
SELECT pg_catalog.pg_extension_config_dump('incentives_cluster.placements', '');
