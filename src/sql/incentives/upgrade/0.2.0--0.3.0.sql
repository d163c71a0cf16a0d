-- incentives 0.2.0 -> 0.3.0: what changes in schemas, tables and types,
-- and the 0.2.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function, procedure and view of 0.3.0, created or replaced in place;
-- triggers and policies created again), 0.2.0--0.3.0.finish.sql if there
-- is one, then src/sql/update_end.sql (the Makefile).  A fresh install
-- runs the released 0.1.0 and 0.1.0 -> 0.2.0 scripts and then this same
-- update script, so this file is where 0.3.0's tables and types are
-- defined.  How a feature adds a table, a column of incentives.earning or
-- a column of a function's result, and what to do when a signature must
-- change: docs/architecture.md, Install and upgrade scripts.  What the
-- update does to each object a user can depend on:
-- docs/backup-and-upgrade.md, Upgrade (keep it listed there).

------------------------------------------------------------------------
-- Participant groups (docs/reference.md, Participant groups): who belongs
-- to which group when, and the group_key every result row carries.
------------------------------------------------------------------------

CREATE TABLE incentives.participant_groups (
    participant_key text NOT NULL,
    group_key       text NOT NULL,
    start_date      date NOT NULL,
    end_date        date,
    PRIMARY KEY (participant_key, start_date),
    CONSTRAINT participant_groups_end_date_check CHECK (end_date >= start_date)
);
CREATE INDEX participant_groups_group_idx ON incentives.participant_groups (group_key);
COMMENT ON TABLE incentives.participant_groups IS
  'Members of groups (retail chains, buying groups) by dated window: an offer with "aggregation": "group" computes its figures over all the transactions of a group (docs/reference.md, Participant groups); overlapping windows of one participant and groups of groups are refused';
COMMENT ON COLUMN incentives.participant_groups.participant_key IS 'The member (a participant: a retail location)';
COMMENT ON COLUMN incentives.participant_groups.group_key IS 'The group it belongs to in the window (its parent account or buying group); never itself a member';
COMMENT ON COLUMN incentives.participant_groups.start_date IS 'First day of the membership (inclusive)';
COMMENT ON COLUMN incentives.participant_groups.end_date IS 'Last day of the membership (inclusive); NULL: open ended';
COMMENT ON CONSTRAINT participant_groups_end_date_check ON incentives.participant_groups IS 'A membership ends on or after the day it starts';
COMMENT ON INDEX incentives.participant_groups_group_idx IS 'Memberships by group (the one-level check, the members of a group)';
SELECT pg_catalog.pg_extension_config_dump('incentives.participant_groups', '');
-- read by every calculation, written by those who write enrollments
SELECT pg_temp.update_grant_like('TABLE', 'incentives.participant_groups', 'TABLE', 'incentives.enrollments');

-- The row's group_key: the last column of the earning row, of the
-- materialized earnings, and of the results that show a group's figures.
ALTER TYPE incentives.earning ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.earning.group_key IS 'In an offer aggregated by group, the group whose figures the row was computed over (NULL outside a group and in offers aggregated by participant)';
ALTER TABLE incentives.earnings ADD COLUMN group_key text;
COMMENT ON COLUMN incentives.earnings.group_key IS 'In an offer aggregated by group, the group whose figures the row was computed over (NULL otherwise)';
ALTER TYPE incentives.diagnostics_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.diagnostics_row.group_key IS 'An offer aggregated by group: the group whose figures are diagnosed (NULL: the participant''s own)';
ALTER TYPE incentives.tier_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.tier_progress_row.group_key IS 'An offer aggregated by group: the group whose value, tier and gap these are (NULL: the participant''s own)';
ALTER TYPE incentives.requirement_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.requirement_progress_row.group_key IS 'An offer aggregated by group: the group the requirement is judged in (NULL: the participant''s own)';
ALTER TYPE incentives.stack_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.stack_progress_row.group_key IS 'An offer aggregated by group: the group whose coverage these are (NULL: the participant''s own)';
ALTER TYPE incentives.program_version_row ADD ATTRIBUTE aggregation text;
COMMENT ON COLUMN incentives.program_version_row.aggregation IS 'participant or group: whose transactions the figures are computed over';
ALTER TYPE incentives_internal.offer_summary_row ADD ATTRIBUTE aggregation text;

-- The reporting view per group (code/50_reporting.sql) is read by whoever
-- reads the one per participant.
SELECT pg_temp.update_grant_like('TABLE', 'incentives.earnings_by_group', 'TABLE', 'incentives.earnings_by_participant');

-- What refresh_earnings materializes gains the column too; its result is
-- a table of its own, which cannot change in place.  (Routines are named
-- as regprocedure prints them: test/upgrade/users.sh matches the names.)
SELECT pg_temp.update_replace_function('incentives_internal.calculate_dated(text,jsonb,text[],regclass,timestamp with time zone,date)');

------------------------------------------------------------------------
-- refresh_earnings(jobs => N) (docs/lifecycle.md, How a refresh replaces
-- the earnings): the procedure, and the internals it passes jobs to, gain
-- it as their last argument (with a default on the procedure: calls by
-- position or name keep working).  A new signature cannot replace the
-- 0.2.0 one in place: they are dropped here, the code part creates their
-- successors, which get their privileges (a grant of EXECUTE on the
-- procedure to a role that refreshes included); a routine of the user's
-- with a BEGIN ATOMIC body calling the procedure stops the update.
-- incentives_internal.refresh_write (code/41_refresh_write.sql) is new.
------------------------------------------------------------------------
SELECT pg_temp.update_replace_function('incentives.refresh_earnings(text,regclass,integer,text,boolean)');
SELECT pg_temp.update_replace_function('incentives_internal.refresh_earnings_check(text,regclass,text,boolean)');
SELECT pg_temp.update_replace_function('incentives_internal.refresh_earnings_work(bigint,text,regclass,integer,text,boolean)');

SELECT pg_temp.update_check();
DROP FUNCTION incentives_internal.calculate_dated(text, jsonb, text[], regclass, timestamptz, date);
DROP PROCEDURE incentives.refresh_earnings(text, regclass, integer, text, boolean);
DROP FUNCTION incentives_internal.refresh_earnings_check(text, regclass, text, boolean);
DROP FUNCTION incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean);
