-- incentives 0.4.0 -> 0.5.0: what changes in schemas, tables and types,
-- and the 0.4.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function, procedure and view of 0.5.0, created or replaced in place;
-- triggers and policies created again), 0.4.0--0.5.0.finish.sql if there
-- is one, then src/sql/update_end.sql (the Makefile).  A fresh install
-- runs the released scripts up to 0.4.0 and then this same update script,
-- so this file is where 0.5.0's tables and types are defined.  How a
-- feature adds a table, a column of incentives.earning or a column of a
-- function's result, and what to do when a signature must change:
-- docs/architecture.md, Install and upgrade scripts.  What the update does
-- to each object a user can depend on: docs/backup-and-upgrade.md,
-- Upgrade (keep it listed there).

------------------------------------------------------------------------
-- The run log's failed runs of one participant (docs/security.md, The run
-- log): the transaction of another member of its group that failed the
-- run is logged in incentives.calculation_exceptions under that member's
-- key.
------------------------------------------------------------------------
COMMENT ON TABLE incentives.calculation_exceptions IS
  'Participants a refresh_earnings(on_error => ''skip'') could not calculate for a data reason (they kept their previous earnings), and the member of a group whose transaction failed a refresh of another of its participants (docs/security.md, The run log)';

------------------------------------------------------------------------
-- Logical replication of the earnings (docs/operations.md, Logical
-- replication): published through their root (publish_via_partition_root),
-- a refresh's deletes reach a subscriber identified by the root's replica
-- identity.  The partitioned table has no key of its own (its partitions
-- have theirs), so its identity is the whole row: with wal_level = logical
-- a deleted earning row is logged whole; below that, nothing changes.
------------------------------------------------------------------------
ALTER TABLE incentives.earnings REPLICA IDENTITY FULL;

------------------------------------------------------------------------
-- Participant hierarchies (docs/reference.md, Participant hierarchies):
-- a group may be a member of another group; the trigger refuses cycles
-- instead of groups of groups.
------------------------------------------------------------------------
COMMENT ON TABLE incentives.participant_groups IS
  'Members of groups (retail chains, buying groups, regions) by dated window; a group may itself be a member of a group: an offer with "aggregation": "group" computes its figures over all the transactions of a transaction''s aggregation key (docs/reference.md, Participant groups and Participant hierarchies); overlapping windows of one participant and cycles are refused';
COMMENT ON COLUMN incentives.participant_groups.group_key IS 'The group it belongs to in the window (its parent account, chain, buying group or region); a group may itself be a member of a group';

-- The types of groups (docs/reference.md, Participant hierarchies): an
-- offer with "group_type" aggregates at the first of a participant and
-- its ancestors whose type it names.  A row here does not make a group;
-- membership rows do.  Keys are checked by a trigger
-- (code/15_participant_groups.sql); the index makes two keys equal but
-- for letter case impossible also between concurrent sessions.
CREATE TABLE incentives.groups (
    group_key  text PRIMARY KEY,
    group_type text NOT NULL,
    label      text
);
CREATE UNIQUE INDEX groups_group_key_case_idx ON incentives.groups (lower(group_key));
COMMENT ON TABLE incentives.groups IS
  'The type (chain, region, buying_group, ...) and label of a group of incentives.participant_groups: an offer with "group_type" aggregates at the first of a participant and its ancestors of that type (docs/reference.md, Participant hierarchies); a row here does not make a group, membership rows do';
COMMENT ON COLUMN incentives.groups.group_key IS 'The group (a group_key of incentives.participant_groups); non-empty, no surrounding white space or control character, unique regardless of letter case';
COMMENT ON COLUMN incentives.groups.group_type IS 'Its type, as an offer''s "group_type" names it (chain, region, buying_group, ...)';
COMMENT ON COLUMN incentives.groups.label IS 'A name for people (never changes a figure)';
COMMENT ON INDEX incentives.groups_group_key_case_idx IS 'Group keys are unique regardless of letter case (23505)';
SELECT pg_catalog.pg_extension_config_dump('incentives.groups', '');
-- read by every calculation, written by those who write the memberships
SELECT pg_temp.update_grant_like('TABLE', 'incentives.groups', 'TABLE', 'incentives.participant_groups');
-- programs shows each offer's group_type (code/30_programs.sql)
ALTER TYPE incentives_internal.offer_summary_row ADD ATTRIBUTE group_type text;
COMMENT ON COLUMN incentives_internal.offer_summary_row.group_type IS 'An offer aggregated by group: the "group_type" it aggregates at; NULL otherwise';
-- tier_progress names the type of the aggregation key (code/70_explain.sql)
ALTER TYPE incentives.tier_progress_row ADD ATTRIBUTE group_type text;
COMMENT ON COLUMN incentives.tier_progress_row.group_type IS 'An offer aggregated by group: the type (incentives.groups) of the group_key whose figures these are; NULL when it has none or there is no group';
