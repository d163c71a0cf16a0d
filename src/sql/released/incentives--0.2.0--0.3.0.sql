-- incentives--0.2.0--0.3.0.sql: built by make from the parts of incentives 0.3.0 in src/sql/incentives/
-- (docs/architecture.md); released, it is kept as it is in src/sql/released/.
\echo Use "ALTER EXTENSION incentives UPDATE TO '0.3.0'" to load this file. \quit

-- ---- src/sql/update_begin.sql

-- update_begin.sql: the first part of every update script, of both
-- extensions (the Makefile; docs/architecture.md, Install and upgrade
-- scripts).  The build puts the extension's name in place of incentives.
--
-- An update changes only what changed: the code parts replace every
-- function, procedure and view in place (CREATE OR REPLACE keeps its oid,
-- its privileges and whatever of the user's depends on it), the version's
-- upgrade part alters tables and types.  An object whose signature changes
-- (a function gaining an argument, a table that must be rebuilt) cannot be
-- replaced in place: the upgrade part drops it, and a code part creates
-- its successor under the same name.  The helpers below, in pg_temp for
-- the length of the script (update_end.sql drops them), let it do that
-- without breaking what users built on the old object:
--
--   pg_temp.update_replace_function(routine regprocedure)
--   pg_temp.update_replace_relation(relation regclass)
--       Called before the upgrade part drops (or moves away) the object.
--       The user's views over it, and the views over those views, are set
--       aside -- definition, owner, options (security_invoker, ...),
--       privileges, column privileges, comments -- and dropped;
--       update_end.sql creates them again, from the same definitions, over
--       the successor, and gives the successor the old object's
--       privileges.  (A relation also loses its privileges: it may live on
--       as a partition, and must not be readable past its parent's
--       policies.)
--   pg_temp.update_drop_function(routine regprocedure)
--       Called before the upgrade part drops a routine that has no
--       successor of the same name.
--   pg_temp.update_grant_like(kind text, target text, source_kind text, source text)
--       A schema, table or sequence the version adds gets, at the end of
--       the update, the privileges of the one it extends (kind SCHEMA,
--       TABLE or SEQUENCE; target and source by name): what a role could
--       do before the update keeps working without a GRANT of the DBA's
--       (a table the calculation now reads, one a trigger now writes with
--       the caller's rights).
--
-- Any other object of the user's that depends on the object -- a routine
-- with a BEGIN ATOMIC body, a trigger, a policy, a rule, a default, a
-- constraint, an index, a materialized view, a view over a dropped routine
-- -- stops the update, at pg_temp.update_check() (which the upgrade part
-- calls after the helpers, before its DROPs), with one error naming every
-- such object: the user drops them, updates, and creates them again.  Objects of an extension (this one's own views, say) are the
-- upgrade part's business; what a table owns (its indexes, constraints,
-- defaults, sequences) goes with it.
------------------------------------------------------------------------

-- The extension's objects as the update begins, and their initial
-- privileges (what pg_dump takes as the extension's own: a GRANT or REVOKE
-- in the script records the object's privileges there, the DBA's grants
-- with them).  update_end.sql puts these back, so that pg_dump still dumps
-- the DBA's grants; code/90_grants.sql takes from PUBLIC only what this
-- script created.
CREATE TEMPORARY TABLE update_members AS
SELECT d.classid, d.objid
  FROM pg_catalog.pg_depend AS d
 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
   AND d.refobjid OPERATOR(pg_catalog.=) (SELECT e.oid FROM pg_catalog.pg_extension AS e
                                           WHERE e.extname OPERATOR(pg_catalog.=) 'incentives')
   AND d.deptype OPERATOR(pg_catalog.=) 'e';
CREATE TEMPORARY TABLE update_init_privs AS
SELECT i.*
  FROM pg_catalog.pg_init_privs AS i
  JOIN update_members AS m
    ON m.classid OPERATOR(pg_catalog.=) i.classoid AND m.objid OPERATOR(pg_catalog.=) i.objoid;

-- What is set aside until update_end.sql, and what stops the update.
CREATE TEMPORARY TABLE update_problems (
    replaced text NOT NULL,            -- what the update replaces or drops
    objects  text[] NOT NULL           -- the user's objects in the way
);
CREATE TEMPORARY TABLE update_saved_views (
    view_oid        oid PRIMARY KEY,   -- the dropped view's
    view_name       text NOT NULL,     -- schema-qualified, quoted
    definition      text NOT NULL,     -- pg_get_viewdef, every name qualified
    options         text[],            -- reloptions: security_invoker=true, check_option=local, ...
    owner           name NOT NULL,
    acl             aclitem[],
    column_acls     jsonb NOT NULL,    -- {"column": ["aclitem", ...]}
    comment         text,
    column_comments jsonb NOT NULL,    -- {"column": "comment"}
    reads           oid[] NOT NULL,    -- the set-aside views it reads (created before it)
    dropped         boolean NOT NULL DEFAULT false,
    created         boolean NOT NULL DEFAULT false
);
CREATE TEMPORARY TABLE update_saved_privileges (
    kind        text NOT NULL,         -- ROUTINE, TABLE, SEQUENCE or SCHEMA
    name        text NOT NULL,         -- [schema.]name: the object of that name gets them
    owner       oid NOT NULL,
    acl         aclitem[],
    column_acls jsonb NOT NULL
);

-- update_object_name(class, oid): an object as an error message names it.
CREATE FUNCTION pg_temp.update_object_name(object_class oid, object_id oid)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN object_class = 'pg_rewrite'::regclass
                THEN (SELECT CASE c.relkind WHEN 'm' THEN 'materialized view ' WHEN 'v' THEN 'view '
                                            ELSE 'rule ' || quote_ident(r.rulename) || ' on ' END
                             || c.oid::regclass::text
                        FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
                       WHERE r.oid = object_id)
                ELSE pg_describe_object(object_class, object_id, 0) END
$$;

-- update_set_aside(class, oid, what): sets aside the user's views over the
-- object (recursively) and returns the other objects of the user's that
-- depend on it, as error lines.
CREATE FUNCTION pg_temp.update_set_aside(object_class oid, object_id oid, what text)
RETURNS text[]
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d        record;
    v_view   oid;
    problems text[] := '{}';
BEGIN
    FOR d IN
        -- the object, and for a relation its row type and that type's array
        -- type (a function RETURNS SETOF the row type depends on those)
        WITH object AS (
            SELECT object_class AS classid, object_id AS objid
            UNION ALL
            SELECT 'pg_type'::regclass, t.oid FROM pg_type t
             WHERE object_class = 'pg_class'::regclass AND t.typrelid = object_id
            UNION ALL
            SELECT 'pg_type'::regclass, t.typarray FROM pg_type t
             WHERE object_class = 'pg_class'::regclass AND t.typrelid = object_id AND t.typarray <> 0)
        SELECT DISTINCT dep.classid, dep.objid, dep.deptype
          FROM pg_depend dep
          JOIN object o ON dep.refclassid = o.classid AND dep.refobjid = o.objid
         WHERE dep.deptype IN ('n', 'a', 'i')
           -- not the object itself or its own types
           AND NOT EXISTS (SELECT FROM object s WHERE s.classid = dep.classid AND s.objid = dep.objid)
           -- not an object of an extension (this one's own views, ...)
           AND NOT EXISTS (SELECT FROM pg_depend m
                            WHERE m.classid = dep.classid AND m.objid = dep.objid AND m.deptype = 'e')
    LOOP
        IF d.classid = 'pg_rewrite'::regclass THEN
            SELECT r.ev_class INTO v_view
              FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
             WHERE r.oid = d.objid AND r.rulename = '_RETURN' AND c.relkind = 'v';
            IF v_view = object_id AND object_class = 'pg_class'::regclass THEN
                CONTINUE;                      -- a view's own rule
            ELSIF v_view IS NOT NULL AND EXISTS (SELECT FROM pg_depend m
                                                  WHERE m.classid = 'pg_class'::regclass AND m.objid = v_view
                                                    AND m.deptype = 'e') THEN
                CONTINUE;                      -- a view of an extension
            ELSIF v_view IS NOT NULL THEN
                IF NOT EXISTS (SELECT FROM update_saved_views s WHERE s.view_oid = v_view) THEN
                    INSERT INTO update_saved_views (view_oid, view_name, definition, options, owner, acl,
                                                    column_acls, comment, column_comments, reads)
                    SELECT c.oid, c.oid::regclass::text, pg_get_viewdef(c.oid), c.reloptions,
                           pg_get_userbyid(c.relowner), c.relacl,
                           COALESCE((SELECT jsonb_object_agg(a.attname, a.attacl::text[])
                                       FROM pg_attribute a
                                      WHERE a.attrelid = c.oid AND a.attnum > 0 AND a.attacl IS NOT NULL), '{}'),
                           obj_description(c.oid, 'pg_class'),
                           COALESCE((SELECT jsonb_object_agg(a.attname, col_description(c.oid, a.attnum))
                                       FROM pg_attribute a
                                      WHERE a.attrelid = c.oid AND a.attnum > 0
                                        AND col_description(c.oid, a.attnum) IS NOT NULL), '{}'),
                           '{}'
                      FROM pg_class c
                     WHERE c.oid = v_view;
                    -- and the views over it
                    problems := problems || pg_temp.update_set_aside('pg_class'::regclass, v_view,
                                                                     format('view %s', v_view::regclass));
                END IF;
                CONTINUE;
            END IF;
        END IF;
        -- what a table owns goes with it: its indexes, constraints, column
        -- defaults, sequences, TOAST table, extended statistics
        CONTINUE WHEN d.deptype IN ('a', 'i')
                  AND (SELECT c.relkind FROM pg_class c
                        WHERE object_class = 'pg_class'::regclass AND c.oid = object_id) IN ('r', 'p')
                  AND (d.classid IN ('pg_constraint'::regclass, 'pg_attrdef'::regclass,
                                     'pg_statistic_ext'::regclass)
                       OR (d.classid = 'pg_class'::regclass
                           AND (SELECT c.relkind FROM pg_class c WHERE c.oid = d.objid) IN ('i', 'I', 'S', 't')));
        problems := problems || format('%s (depends on %s)',
                                       pg_temp.update_object_name(d.classid, d.objid), what);
    END LOOP;
    RETURN problems;
END
$$;

-- update_drop_saved(what, problems): when something of the user's other
-- than views depends on what is replaced, notes it for update_check();
-- else drops the views set aside (in one statement, without CASCADE).
CREATE FUNCTION pg_temp.update_drop_saved(what text, problems text[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_views text;
BEGIN
    IF cardinality(problems) > 0 THEN
        INSERT INTO update_problems (replaced, objects) VALUES (what, problems);
        RETURN;
    END IF;
    -- which set-aside views each reads, to create them again in order
    UPDATE update_saved_views s
       SET reads = ARRAY(SELECT DISTINCT dep.refobjid
                           FROM pg_rewrite r
                           JOIN pg_depend dep ON dep.classid = 'pg_rewrite'::regclass AND dep.objid = r.oid
                           JOIN update_saved_views o ON o.view_oid = dep.refobjid
                          WHERE r.ev_class = s.view_oid AND dep.refobjid <> s.view_oid)
     WHERE NOT s.dropped;
    SELECT string_agg(s.view_name, ', ') INTO v_views FROM update_saved_views s WHERE NOT s.dropped;
    IF v_views IS NOT NULL THEN
        EXECUTE format('DROP VIEW %s', v_views);
        UPDATE update_saved_views SET dropped = true WHERE NOT dropped;
    END IF;
END
$$;

CREATE FUNCTION pg_temp.update_replace_function(routine regprocedure)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO update_saved_privileges (kind, name, owner, acl, column_acls)
    SELECT 'ROUTINE', format('%I.%I', p.pronamespace::regnamespace, p.proname), p.proowner, p.proacl, '{}'
      FROM pg_proc p
     WHERE p.oid = routine;
    PERFORM pg_temp.update_drop_saved(
        format('%s %s', CASE WHEN (SELECT prokind FROM pg_proc WHERE oid = routine) = 'p'
                             THEN 'procedure' ELSE 'function' END, routine),
        pg_temp.update_set_aside('pg_proc'::regclass, routine, routine::text));
END
$$;

CREATE FUNCTION pg_temp.update_replace_relation(relation regclass)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e record;
BEGIN
    INSERT INTO update_saved_privileges (kind, name, owner, acl, column_acls)
    SELECT 'TABLE', c.oid::regclass::text, c.relowner, c.relacl,
           COALESCE((SELECT jsonb_object_agg(a.attname, a.attacl::text[])
                       FROM pg_attribute a
                      WHERE a.attrelid = c.oid AND a.attnum > 0 AND a.attacl IS NOT NULL), '{}')
      FROM pg_class c
     WHERE c.oid = relation;
    PERFORM pg_temp.update_drop_saved(format('table %s', relation),
                                      pg_temp.update_set_aside('pg_class'::regclass, relation, relation::text));
    -- the old relation keeps its owner's privileges only
    FOR e IN SELECT DISTINCT a.grantee
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid = relation AND a.grantee <> c.relowner LOOP
        EXECUTE format('REVOKE ALL ON TABLE %s FROM %s CASCADE', relation,
                       CASE WHEN e.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(e.grantee)) END);
    END LOOP;
    FOR e IN SELECT DISTINCT a.attname, x.grantee
               FROM pg_attribute a, aclexplode(a.attacl) x
              WHERE a.attrelid = relation AND a.attnum > 0 LOOP
        EXECUTE format('REVOKE ALL (%I) ON TABLE %s FROM %s CASCADE', e.attname, relation,
                       CASE WHEN e.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(e.grantee)) END);
    END LOOP;
END
$$;

CREATE FUNCTION pg_temp.update_drop_function(routine regprocedure)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    problems text[];
    v_before oid[] := ARRAY(SELECT s.view_oid FROM update_saved_views s);
BEGIN
    -- no successor: a view of the user's over it cannot be created again
    -- either
    problems := pg_temp.update_set_aside('pg_proc'::regclass, routine, routine::text);
    problems := problems || ARRAY(SELECT format('view %s (depends on %s)', s.view_name, routine)
                                    FROM update_saved_views s WHERE s.view_oid <> ALL (v_before));
    DELETE FROM update_saved_views s WHERE s.view_oid <> ALL (v_before);
    PERFORM pg_temp.update_drop_saved(format('function %s (it goes)', routine), problems);
END
$$;

CREATE FUNCTION pg_temp.update_grant_like(kind text, target text, source_kind text, source text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO update_saved_privileges (kind, name, owner, acl, column_acls)
    SELECT kind, target, n.nspowner, n.nspacl, '{}'::jsonb
      FROM pg_namespace n
     WHERE source_kind = 'SCHEMA' AND n.nspname = source
    UNION ALL
    SELECT kind, target, c.relowner, c.relacl, '{}'::jsonb
      FROM pg_class c
     WHERE source_kind IN ('TABLE', 'SEQUENCE') AND c.oid = to_regclass(source);
$$;

-- update_check(): after the upgrade part's update_replace_* and
-- update_drop_function calls, before its DROPs: stops the update with one
-- error naming every object of the user's in the way.
CREATE FUNCTION pg_temp.update_check()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_list text;
BEGIN
    SELECT string_agg(format('%s: %s', p.replaced, array_to_string(p.objects, ', ')), '; ')
      INTO v_list
      FROM update_problems p;
    IF v_list IS NOT NULL THEN
        RAISE EXCEPTION 'ALTER EXTENSION incentives UPDATE cannot replace objects that objects of yours depend on'
              USING ERRCODE = 'dependent_objects_still_exist',
                    DETAIL = v_list || '.',
                    HINT = 'Drop them, update, and create them again (views need not be dropped: the update creates them again); docs/backup-and-upgrade.md, Upgrade.';
    END IF;
END
$$;

-- ---- src/sql/incentives/upgrade/0.2.0--0.3.0.sql

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

------------------------------------------------------------------------
-- Forecast and accrual (docs/reference.md, Forecast; docs/lifecycle.md,
-- Accruals): the forecast's result type, and the accruals that CALL
-- incentives.accrue writes (append-only, as the statements are).
------------------------------------------------------------------------

CREATE TYPE incentives.forecast_row AS (
    participant_key    text,
    offer_key          text,
    group_key          text,
    span_start         date,
    span_end           date,
    elapsed_days       integer,
    span_days          integer,
    basis_to_date      numeric,
    projected_basis    numeric,
    rate_key_to_date   text,
    projected_rate_key text,
    earned_to_date     numeric,
    projected_earnings numeric,
    accrual_to_date    numeric
);
COMMENT ON TYPE incentives.forecast_row IS 'One row of incentives.forecast: a participant''s earnings under one offer to date, projected to the end of the offer''s span at the same pace, and the share accrued';
COMMENT ON COLUMN incentives.forecast_row.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.forecast_row.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.forecast_row.group_key IS 'The group whose volume the basis is of (an offer that aggregates by group); NULL otherwise';
COMMENT ON COLUMN incentives.forecast_row.span_start IS 'The offer''s earliest period start';
COMMENT ON COLUMN incentives.forecast_row.span_end IS 'The offer''s latest period end';
COMMENT ON COLUMN incentives.forecast_row.elapsed_days IS 'Days of the span gone by on as_of_date, counting it (at most span_days)';
COMMENT ON COLUMN incentives.forecast_row.span_days IS 'Days of the span, both ends counted';
COMMENT ON COLUMN incentives.forecast_row.basis_to_date IS 'The stepped threshold value on as_of_date (the growth percentage for growth types), 6 places; NULL for standard and stacked offers, or without a value';
COMMENT ON COLUMN incentives.forecast_row.projected_basis IS 'The same on the projected volume';
COMMENT ON COLUMN incentives.forecast_row.rate_key_to_date IS 'The stepped tier basis_to_date meets (NULL: none, or no tiers), whether or not rows follow';
COMMENT ON COLUMN incentives.forecast_row.projected_rate_key IS 'The stepped tier projected_basis meets';
COMMENT ON COLUMN incentives.forecast_row.earned_to_date IS 'Sum of incentive_amount of the calculation through as_of_date';
COMMENT ON COLUMN incentives.forecast_row.projected_earnings IS 'Sum of incentive_amount of the projected calculation: every transaction dated span_start..as_of_date with its quantity and amount x span_days / elapsed_days';
COMMENT ON COLUMN incentives.forecast_row.accrual_to_date IS 'round(projected_earnings x elapsed_days / span_days, 2): the straight-line share of the projected payout accrued by as_of_date';

CREATE TABLE incentives.accruals (
    accrual_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    as_of_date  date NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    created_by  text NOT NULL DEFAULT CURRENT_USER
);
CREATE INDEX accruals_date_idx ON incentives.accruals (as_of_date);
COMMENT ON TABLE incentives.accruals IS
  'Accruals written by CALL incentives.accrue: the liability booked per participant and offer as of a date (the forecast''s accrual_to_date); append-only';
COMMENT ON COLUMN incentives.accruals.accrual_id IS 'Accrual number (identity)';
COMMENT ON COLUMN incentives.accruals.as_of_date IS 'The forecast''s as_of_date: transactions dated on or before it';
COMMENT ON COLUMN incentives.accruals.created_at IS 'Start of the transaction that wrote it';
COMMENT ON COLUMN incentives.accruals.created_by IS 'The role that ran incentives.accrue';
COMMENT ON INDEX incentives.accruals_date_idx IS 'Accruals by date';

CREATE TABLE incentives.accrual_lines (
    accrual_id      bigint NOT NULL,
    participant_key text NOT NULL,
    offer_key       text NOT NULL,
    accrued_to_date numeric(20, 2) NOT NULL,
    accrued_before  numeric(20, 2) NOT NULL,
    delta           numeric(20, 2) NOT NULL,
    PRIMARY KEY (accrual_id, participant_key, offer_key),
    CONSTRAINT accrual_lines_delta_check CHECK (delta = accrued_to_date - accrued_before)
);
CREATE INDEX accrual_lines_participant_idx ON incentives.accrual_lines (participant_key, offer_key);
COMMENT ON TABLE incentives.accrual_lines IS
  'One line per participant and offer of an accrual with an accrual to date or an earlier one: accrued to date, accrued before, and the difference (the journal entry); append-only';
COMMENT ON COLUMN incentives.accrual_lines.accrual_id IS 'The accrual (written with it in one transaction; no foreign key, so that a parallel pg_restore may load the two tables in any order)';
COMMENT ON COLUMN incentives.accrual_lines.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.accrual_lines.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.accrual_lines.accrued_to_date IS 'accrual_to_date of incentives.forecast(as_of_date) for the participant and offer (0.00 when it has no forecast row any more)';
COMMENT ON COLUMN incentives.accrual_lines.accrued_before IS 'accrued_to_date of the same participant and offer''s previous line (0.00 when none)';
COMMENT ON COLUMN incentives.accrual_lines.delta IS 'accrued_to_date - accrued_before: what this accrual books (negative: a reversal)';
COMMENT ON INDEX incentives.accrual_lines_participant_idx IS 'Lines by participant and offer (accrued_before, the latest accrual)';

SELECT pg_catalog.pg_extension_config_dump('incentives.accruals', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.accruals', 'accrual_id'), '');
SELECT pg_catalog.pg_extension_config_dump('incentives.accrual_lines', '');

-- Accruals are kept as statements are: the roles that could write
-- statements under 0.2.0 can write accruals (update_begin.sql).
SELECT pg_temp.update_grant_like('TABLE', 'incentives.accruals', 'TABLE', 'incentives.statements');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.accrual_lines', 'TABLE', 'incentives.statement_lines');
SELECT pg_temp.update_grant_like('SEQUENCE', 'incentives.accruals_accrual_id_seq',
                                 'SEQUENCE', 'incentives.statements_statement_id_seq');

------------------------------------------------------------------------
-- Growth over a baseline on every surface (docs/reference.md, Growth over
-- a baseline): new result columns, at the end of each row type.
------------------------------------------------------------------------

ALTER TYPE incentives_internal.offer_summary_row
    ADD ATTRIBUTE threshold_type text,
    ADD ATTRIBUTE pays_on text,
    ADD ATTRIBUTE baseline jsonb;
COMMENT ON COLUMN incentives_internal.offer_summary_row.threshold_type IS 'Stepped: aggregated_amount, aggregated_quantity, property, growth_amount or growth_quantity; NULL otherwise';
COMMENT ON COLUMN incentives_internal.offer_summary_row.pays_on IS 'Stepped: all_volume or growth; NULL otherwise';
COMMENT ON COLUMN incentives_internal.offer_summary_row.baseline IS 'Stepped growth types: the baseline, {start_date, end_date} or {property_key}; NULL otherwise';

ALTER TYPE incentives.program_version_row
    ADD ATTRIBUTE threshold_type text,
    ADD ATTRIBUTE pays_on text,
    ADD ATTRIBUTE baseline jsonb;
COMMENT ON COLUMN incentives.program_version_row.threshold_type IS 'Stepped: the threshold type (growth_amount and growth_quantity compare with a baseline); NULL otherwise';
COMMENT ON COLUMN incentives.program_version_row.pays_on IS 'Stepped: all_volume or growth (only the growth over the baseline pays); NULL otherwise';
COMMENT ON COLUMN incentives.program_version_row.baseline IS 'Stepped growth types: the baseline, {start_date, end_date} or {property_key}; NULL otherwise';

ALTER TYPE incentives_internal.offer_rate_row
    ADD ATTRIBUTE pays_on text,
    ADD ATTRIBUTE baseline_start_date date,
    ADD ATTRIBUTE baseline_end_date date,
    ADD ATTRIBUTE baseline_property_key text;
COMMENT ON COLUMN incentives_internal.offer_rate_row.pays_on IS 'Stepped: all_volume or growth; NULL otherwise';
COMMENT ON COLUMN incentives_internal.offer_rate_row.baseline_start_date IS 'Stepped growth types with a baseline by dates: its first day';
COMMENT ON COLUMN incentives_internal.offer_rate_row.baseline_end_date IS 'Stepped growth types with a baseline by dates: its last day';
COMMENT ON COLUMN incentives_internal.offer_rate_row.baseline_property_key IS 'Stepped growth types with a baseline by property: the property';

ALTER TYPE incentives.tier_progress_row
    ADD ATTRIBUTE current_value numeric,
    ADD ATTRIBUTE baseline_value numeric,
    ADD ATTRIBUTE baseline jsonb,
    ADD ATTRIBUTE growth_percent numeric,
    ADD ATTRIBUTE no_growth_value text,
    ADD ATTRIBUTE pays_on text,
    ADD ATTRIBUTE next_volume numeric,
    ADD ATTRIBUTE volume_to_next numeric;
COMMENT ON COLUMN incentives.tier_progress_row.current_value IS 'The aggregated sum the tiers are measured by, in dollars (amount types) or the SKUs'' units (quantity types); NULL for a property threshold';
COMMENT ON COLUMN incentives.tier_progress_row.baseline_value IS 'Growth types: the baseline B (the same sum over the baseline''s dates, or its property; NULL when missing)';
COMMENT ON COLUMN incentives.tier_progress_row.baseline IS 'Growth types: the baseline, {start_date, end_date} or {property_key}';
COMMENT ON COLUMN incentives.tier_progress_row.growth_percent IS 'Growth types: (current_value - baseline_value) / baseline_value x 100 (NULL: no growth value), the threshold value the tiers compare';
COMMENT ON COLUMN incentives.tier_progress_row.no_growth_value IS 'Growth types: why there is no growth value (baseline is missing, baseline is not positive); NULL when there is one';
COMMENT ON COLUMN incentives.tier_progress_row.pays_on IS 'all_volume or growth (only the growth over the baseline pays)';
COMMENT ON COLUMN incentives.tier_progress_row.next_volume IS 'The current value at which the next tier is met (growth types: baseline_value x (1 + next_threshold / 100)); NULL for a property threshold or without a growth value';
COMMENT ON COLUMN incentives.tier_progress_row.volume_to_next IS 'next_volume - current_value: the dollars or units still needed to reach the next tier';

ALTER TYPE incentives.requirement_progress_row
    ADD ATTRIBUTE current_value numeric,
    ADD ATTRIBUTE baseline_value numeric,
    ADD ATTRIBUTE no_growth_value text;
COMMENT ON COLUMN incentives.requirement_progress_row.current_value IS 'Growth types: the aggregated sum now (value is its growth percentage over baseline_value); NULL otherwise';
COMMENT ON COLUMN incentives.requirement_progress_row.baseline_value IS 'Growth types: the baseline (NULL when missing)';
COMMENT ON COLUMN incentives.requirement_progress_row.no_growth_value IS 'Growth types: why there is no growth value (baseline is missing, baseline is not positive), which leaves the requirement unmet; NULL otherwise';

-- ---- src/sql/incentives/code/10_offers.sql

------------------------------------------------------------------------
-- Offer validation
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.offer_error(document jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_offer_error'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives.offer_error(jsonb) IS
  'Checks an offer document against every rule; NULL when it is valid, else the message the offers table would raise';

CREATE OR REPLACE FUNCTION incentives_internal.offers_validate()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_offers_validate'
LANGUAGE C;
COMMENT ON FUNCTION incentives_internal.offers_validate() IS
  'Trigger: rejects an invalid offer document with SQLSTATE 22023, naming the offer and the JSON path';

DROP TRIGGER IF EXISTS offers_validate ON incentives.offers;
CREATE TRIGGER offers_validate
    BEFORE INSERT OR UPDATE OF document ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_validate();
COMMENT ON TRIGGER offers_validate ON incentives.offers IS 'Validates every offer document on insert and update';


-- ---- src/sql/incentives/code/12_uom_conversions.sql

------------------------------------------------------------------------
-- The shipped unit conversions survive pg_dump/pg_restore as they are
-- (docs/backup-and-upgrade.md).
--
-- CREATE EXTENSION ships nine rows into incentives.uom_conversions, and a
-- restore runs CREATE EXTENSION before it copies the dumped rows.  So the
-- dump leaves the shipped pairs out of that table (its pg_dump condition)
-- and keeps, in incentives.uom_conversion_changes, what became of
-- each shipped pair that is no longer as shipped: its factor now, or NULL
-- when it was deleted.  A trigger keeps that table up to date on every
-- change of incentives.uom_conversions; restoring its rows re-applies each
-- change to the freshly shipped rows.  Whatever order pg_restore loads the
-- two tables in (parallel restores included), the result is the table as
-- it was dumped, and no key is loaded twice.
--
-- Both run with the caller's rights: a role that changes unit conversions
-- also needs SELECT, INSERT, UPDATE, DELETE on
-- incentives.uom_conversion_changes (granted with the tables of schema
-- incentives in the model of docs/security.md), and reads
-- incentives_internal.shipped_uom_conversions, which every role that may
-- use schema incentives_internal may read (granted below).
------------------------------------------------------------------------

-- What the extension ships is no secret; only the owner changes it.
GRANT SELECT ON incentives_internal.shipped_uom_conversions TO PUBLIC;

CREATE OR REPLACE FUNCTION incentives_internal.uom_conversion_sync(from_uom_key text, to_uom_key text)
RETURNS void
LANGUAGE sql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- a shipped pair as shipped: nothing to remember
    DELETE FROM incentives.uom_conversion_changes AS x
     WHERE x.from_uom_key = $1 AND x.to_uom_key = $2
       AND EXISTS (SELECT FROM incentives.uom_conversions AS c
                     JOIN incentives_internal.shipped_uom_conversions AS s
                       ON s.from_uom_key = c.from_uom_key AND s.to_uom_key = c.to_uom_key
                    WHERE c.from_uom_key = $1 AND c.to_uom_key = $2
                      AND c.factor::text = s.factor::text);
    -- a shipped pair edited (its factor now, exactly as written) or deleted
    -- (NULL)
    INSERT INTO incentives.uom_conversion_changes AS x (from_uom_key, to_uom_key, factor)
    SELECT s.from_uom_key, s.to_uom_key, c.factor
      FROM incentives_internal.shipped_uom_conversions AS s
      LEFT JOIN incentives.uom_conversions AS c
        ON c.from_uom_key = s.from_uom_key AND c.to_uom_key = s.to_uom_key
     WHERE s.from_uom_key = $1 AND s.to_uom_key = $2
       AND c.factor::text IS DISTINCT FROM s.factor::text
    ON CONFLICT (from_uom_key, to_uom_key) DO UPDATE SET factor = EXCLUDED.factor
     WHERE x.factor::text IS DISTINCT FROM EXCLUDED.factor::text;
$function$;
COMMENT ON FUNCTION incentives_internal.uom_conversion_sync(text, text) IS
  'Records in incentives.uom_conversion_changes what became of one shipped unit conversion pair (edited, deleted, or as shipped again); no-op for other pairs';

CREATE OR REPLACE FUNCTION incentives_internal.uom_conversions_track()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN   -- TRUNCATE: every shipped pair is gone
        PERFORM incentives_internal.uom_conversion_sync(s.from_uom_key, s.to_uom_key)
           FROM incentives_internal.shipped_uom_conversions AS s;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM incentives_internal.uom_conversion_sync(OLD.from_uom_key, OLD.to_uom_key);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM incentives_internal.uom_conversion_sync(NEW.from_uom_key, NEW.to_uom_key);
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.uom_conversions_track() IS
  'Trigger on incentives.uom_conversions: keeps incentives.uom_conversion_changes in step with the shipped pairs';

DROP TRIGGER IF EXISTS uom_conversions_track ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_track
    AFTER INSERT OR UPDATE OR DELETE ON incentives.uom_conversions
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.uom_conversions_track();
COMMENT ON TRIGGER uom_conversions_track ON incentives.uom_conversions IS
  'Records edits and deletions of the shipped unit conversions, so that a dump keeps them';

DROP TRIGGER IF EXISTS uom_conversions_track_truncate ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_track_truncate
    AFTER TRUNCATE ON incentives.uom_conversions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.uom_conversions_track();
COMMENT ON TRIGGER uom_conversions_track_truncate ON incentives.uom_conversions IS
  'Records that TRUNCATE deleted the shipped unit conversions, so that a dump keeps them deleted';

CREATE OR REPLACE FUNCTION incentives_internal.uom_conversion_changes_apply()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- A restore loads this row after CREATE EXTENSION shipped the pair
    -- again: make incentives.uom_conversions say what the row says.  (When
    -- the row comes from uom_conversions_track itself, the table already
    -- does, and nothing changes.)
    IF NEW.factor IS NULL THEN
        DELETE FROM incentives.uom_conversions AS c
         WHERE c.from_uom_key = NEW.from_uom_key AND c.to_uom_key = NEW.to_uom_key;
    ELSE
        INSERT INTO incentives.uom_conversions AS c (from_uom_key, to_uom_key, factor)
        VALUES (NEW.from_uom_key, NEW.to_uom_key, NEW.factor)
        ON CONFLICT (from_uom_key, to_uom_key) DO UPDATE SET factor = EXCLUDED.factor
         WHERE c.factor::text IS DISTINCT FROM EXCLUDED.factor::text;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.uom_conversion_changes_apply() IS
  'Trigger on incentives.uom_conversion_changes: applies a restored edit or deletion of a shipped unit conversion to incentives.uom_conversions';

DROP TRIGGER IF EXISTS uom_conversion_changes_apply ON incentives.uom_conversion_changes;
CREATE TRIGGER uom_conversion_changes_apply
    AFTER INSERT ON incentives.uom_conversion_changes
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.uom_conversion_changes_apply();
COMMENT ON TRIGGER uom_conversion_changes_apply ON incentives.uom_conversion_changes IS
  'pg_restore: re-applies a dumped edit or deletion of a shipped unit conversion';

-- ---- src/sql/incentives/code/15_enrollments.sql

------------------------------------------------------------------------
-- Enrollment windows (docs/reference.md, Enrollment): two windows of one
-- participant and offer never overlap
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.enrollments_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_enrollments_check'
LANGUAGE C;
COMMENT ON FUNCTION incentives_internal.enrollments_check() IS
  'Trigger: refuses an enrollment window that overlaps another of the same participant and offer (SQLSTATE 23P01, naming the participant, the offer and both windows); concurrent writers of one participant and offer take turns';

DROP TRIGGER IF EXISTS enrollments_check ON incentives.enrollments;
CREATE TRIGGER enrollments_check
    AFTER INSERT OR UPDATE ON incentives.enrollments
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.enrollments_check();
COMMENT ON TRIGGER enrollments_check ON incentives.enrollments IS
  'Refuses overlapping enrollment windows of one participant and offer';

-- ---- src/sql/incentives/code/15_offer_versions.sql

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

CREATE OR REPLACE FUNCTION incentives_internal.offer_change_time(offer_key text)
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

CREATE OR REPLACE FUNCTION incentives_internal.offers_version()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_open incentives.offer_versions;
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN   -- TRUNCATE: every current version ends
        UPDATE incentives.offer_versions AS v
           SET valid_to = incentives_internal.offer_change_time(v.offer_key)
         WHERE v.valid_to IS NULL;
        RETURN NULL;
    END IF;
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
  'Trigger: keeps incentives.offer_versions in step with incentives.offers (a new version per insert or change of the document, the current one closed by a change or the delete; TRUNCATE closes every current one)';

DROP TRIGGER IF EXISTS offers_version ON incentives.offers;
CREATE TRIGGER offers_version
    AFTER INSERT OR UPDATE OR DELETE ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_version();
COMMENT ON TRIGGER offers_version ON incentives.offers IS
  'Writes incentives.offer_versions: every insert, change and delete of an offer';

DROP TRIGGER IF EXISTS offers_version_truncate ON incentives.offers;
CREATE TRIGGER offers_version_truncate
    AFTER TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.offers_version();
COMMENT ON TRIGGER offers_version_truncate ON incentives.offers IS
  'TRUNCATE of the offers ends every current version in incentives.offer_versions';

CREATE OR REPLACE FUNCTION incentives_internal.offer_version_closes(old_row incentives.offer_versions, new_row incentives.offer_versions)
RETURNS boolean
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- The versioning trigger closing the current version of an offer that
    -- has really changed: the only UPDATE there is.
    SELECT pg_trigger_depth() > 1
       AND $1.valid_to IS NULL AND $2.valid_to IS NOT NULL
       AND $2.offer_key = $1.offer_key AND $2.version = $1.version
       AND $2.document = $1.document AND $2.valid_from = $1.valid_from
       AND $2.changed_by = $1.changed_by
       AND $2.valid_to = incentives_internal.offer_change_time($1.offer_key)
       AND NOT EXISTS (SELECT 1 FROM incentives.offers AS o
                        WHERE o.offer_key = $1.offer_key AND o.document = $1.document)
$function$;
COMMENT ON FUNCTION incentives_internal.offer_version_closes(incentives.offer_versions, incentives.offer_versions) IS
  'Append-only exception of incentives.offer_versions: true when an UPDATE is the versioning trigger closing the current version of a changed offer';

-- ---- src/sql/incentives/code/15_participant_groups.sql

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

CREATE OR REPLACE FUNCTION incentives_internal.participant_units()
RETURNS TABLE (participant_key text, unit_key text)
AS 'MODULE_PATHNAME', 'incentives_participant_units'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.participant_units() IS
  'Every key of incentives.participant_groups (members and groups) with the first key of its calculation unit (a group with its members, and the groups a member that moves joins): the keys a refresh calculates together';

-- ---- src/sql/incentives/code/16_append_only.sql

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
    RAISE EXCEPTION 'incentives.% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
          USING ERRCODE = 'insufficient_privilege', DETAIL = TG_ARGV[0], HINT = TG_ARGV[1];
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

-- ---- src/sql/incentives/code/20_calculate.sql

-- The calculation and its diagnostics, each with the user's signature and
-- as calculate()'s variant (incentives_internal.<name>_request: the
-- request's own enrollment windows added, a jsonb array of
-- {participant_key, offer_key, start_date, end_date}).

CREATE OR REPLACE FUNCTION incentives.incentive_calculate(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    offer_keys      text[]      DEFAULT NULL,
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.earning
AS 'MODULE_PATHNAME', 'incentives_incentive_calculate'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date) IS
  'Earnings of one participant (or all when NULL) under the given offers (or all), reading transactions from any relation with the transaction columns; an offer aggregated by group computes a member''s rows over its group''s transactions (group_key names the group); as_of: with the offers as they were then (incentives.offer_versions); through_date: only transactions dated on or before it; runs with the caller''s rights';

CREATE OR REPLACE FUNCTION incentives.incentive_diagnostics(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    offer_keys      text[]      DEFAULT NULL,
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.diagnostics_row
AS 'MODULE_PATHNAME', 'incentives_incentive_diagnostics'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], regclass, timestamptz, date) IS
  'Why participants earn what they do, per participant and requested offer (touched by its transactions or not), as JSON: standard, each entry with its rates, matched transactions and what it paid; stepped, threshold value, every tier (met, what it would pay), next tier and gap, and for incremental tiers the bands and the blended rate; stacked, coverage per SKU set, overlap and factors per stack; and for an offer with program rules, "rules": the enrollment windows used, each requirement against its minimum, the amount before the limits and which applied; as_of and through_date as for incentive_calculate';

CREATE OR REPLACE FUNCTION incentives_internal.calculate_request(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    regclass,
    enrollments     jsonb,
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.earning
AS 'MODULE_PATHNAME', 'incentives_calculate_request'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculate_request(text, jsonb, text[], regclass, jsonb, timestamptz, date) IS
  'calculate() helper: incentive_calculate with the request''s enrollment windows (a JSON array of {participant_key, offer_key, start_date, end_date}) added to the stored ones, and the request''s as_of and through_date';

CREATE OR REPLACE FUNCTION incentives_internal.diagnostics_request(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    regclass,
    enrollments     jsonb,
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.diagnostics_row
AS 'MODULE_PATHNAME', 'incentives_diagnostics_request'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.diagnostics_request(text, jsonb, text[], regclass, jsonb, timestamptz, date) IS
  'calculate() helper: incentive_diagnostics with the request''s enrollment windows added to the stored ones, and the request''s as_of and through_date';

-- The calculation with the transaction's date after the earning row's
-- columns, then its group_key: what refresh_earnings materializes, in the
-- order of incentives.earnings (the same C function: it fills the columns
-- the result has, by name).
CREATE OR REPLACE FUNCTION incentives_internal.calculate_dated(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    regclass,
    as_of           timestamptz,
    through_date    date)
RETURNS TABLE (participant_key text, offer_key text, offer_calculator text, sku_key text,
               incentive_rate_key text, incentive_rate_measure text, incentive_rate_value numeric,
               offer_sku_pay_rate numeric, transaction_id text, provided_quantity numeric,
               provided_uom_key text, provided_amount numeric, incentivized_quantity numeric,
               incentivized_amount numeric, incentive_amount numeric,
               incentive_contribution_percent numeric, incentive_effective_rate numeric,
               transaction_date date, group_key text)
AS 'MODULE_PATHNAME', 'incentives_incentive_calculate'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculate_dated(text, jsonb, text[], regclass, timestamptz, date) IS
  'incentive_calculate''s rows with each transaction''s date before the group_key (what refresh_earnings writes into incentives.earnings)';

CREATE OR REPLACE FUNCTION incentives_internal.calculation_failure(OUT participant_key text, OUT transaction_id text)
AS 'MODULE_PATHNAME', 'incentives_calculation_failure'
LANGUAGE C VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculation_failure() IS
  'The participant and transaction the last failed calculation of this session was at (NULLs when it was at neither); read by refresh_earnings(on_error => ''skip'') after catching the error';

CREATE OR REPLACE FUNCTION incentives_internal.transaction_control_allowed()
RETURNS boolean
AS 'MODULE_PATHNAME', 'incentives_transaction_control_allowed'
LANGUAGE C VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.transaction_control_allowed() IS
  'True when the PL/pgSQL procedure evaluating it may COMMIT (CALLed outside a transaction block, no exception block open); how refresh_earnings and settle decide, whatever the language of the server''s messages';

-- ---- src/sql/incentives/code/25_reference_changes.sql

------------------------------------------------------------------------
-- Reference data changes: a calculation may reuse the engine (compiled
-- offers, SKU units, unit conversions) that an earlier call in the same
-- snapshot built (docs/architecture.md, The path of one calculation).  A
-- write to these tables must reach a backend that keeps one: these
-- statement-level triggers send a relcache invalidation of the table, as
-- DDL would, and the backend drops its engine when it sees it.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.reference_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_reference_changed'
LANGUAGE C;
COMMENT ON FUNCTION incentives_internal.reference_changed() IS
  'Trigger: tells every backend that offers, SKU units or unit conversions changed, so that no calculation reuses an engine built from the old rows';

-- <table>_changed on each table an engine is built from

DROP TRIGGER IF EXISTS offers_changed ON incentives.offers;
CREATE TRIGGER offers_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER offers_changed ON incentives.offers IS
  'Drops the engines that backends keep for calculations in a snapshot once offers change';

DROP TRIGGER IF EXISTS skus_changed ON incentives.skus;
CREATE TRIGGER skus_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.skus
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER skus_changed ON incentives.skus IS
  'Drops the engines that backends keep for calculations in a snapshot once SKU units change';

DROP TRIGGER IF EXISTS uom_conversions_changed ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON incentives.uom_conversions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.reference_changed();
COMMENT ON TRIGGER uom_conversions_changed ON incentives.uom_conversions IS
  'Drops the engines that backends keep for calculations in a snapshot once unit conversions change';

-- ---- src/sql/incentives/code/30_programs.sql


------------------------------------------------------------------------
-- The analyst and BI surface (docs/analyst-guide.md): the programs and their
-- flat rates, materialized earnings refreshed atomically (pg_cron can
-- schedule the procedure), reporting views, a JSON what-if entry point,
-- explain and tier/stack progress.
--
-- Conventions: every object is schema-qualified; every function runs with
-- search_path = pg_catalog, pg_temp (its SET clause says so; a C function
-- has one when it reads tables).  The one
-- exception is the procedure incentives.refresh_earnings: PostgreSQL refuses
-- COMMIT in a procedure that has a SET clause, and it needs COMMIT to keep a
-- failed run's log row, so its body qualifies every name and operator
-- instead and leaves the SQL work to incentives_internal.refresh_earnings_work
-- (which does run with that search_path).
-- Views are security_invoker: the caller's privileges and row-level
-- security apply, as for incentive_calculate.  The functions built on
-- incentives.incentive_diagnostics bind to it when called (plpgsql, or SQL
-- created with check_function_bodies off), whatever the order of the parts.
------------------------------------------------------------------------

------------------------------------------------------------------------
-- Programs: what the engine compiled from each offer document (src/pg/
-- offer_info.c), so that no rule of the calculation -- generated rate
-- keys, shortest-form numbers, the period a stepped offer's filters
-- share -- is written a second time in SQL.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_summary(document jsonb)
RETURNS incentives_internal.offer_summary_row
AS 'MODULE_PATHNAME', 'incentives_offer_summary'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives_internal.offer_summary(jsonb) IS
  'programs helper: an offer document''s label (NULL when absent), strategy_key, calculator_key, program rules (tier_mode of a stepped offer, enrollment, requirements, limits), aggregation and a stepped offer''s threshold type, pays_on and baseline, read from the compiled offer; an invalid document is an error (22023)';

CREATE OR REPLACE FUNCTION incentives_internal.offer_rates(document jsonb)
RETURNS SETOF incentives_internal.offer_rate_row
AS 'MODULE_PATHNAME', 'incentives_offer_rates'
LANGUAGE C STABLE STRICT PARALLEL SAFE
ROWS 10;
COMMENT ON FUNCTION incentives_internal.offer_rates(jsonb) IS
  'program_rates helper: every rate of an offer document as a flat row, listed by the engine from the compiled offer (the columns of incentives.program_rates); an invalid document is an error (22023)';

CREATE OR REPLACE VIEW incentives.programs WITH (security_invoker = true) AS
SELECT o.offer_key,
       s.label,
       s.strategy_key,
       s.calculator_key,
       o.document,
       s.tier_mode,
       s.enrollment,
       s.requirements,
       s.limit_minimum,
       s.limit_maximum,
       s.aggregation,
       s.threshold_type,
       s.pays_on,
       s.baseline
  FROM incentives.offers AS o
 CROSS JOIN LATERAL incentives_internal.offer_summary(o.document) AS s;
COMMENT ON VIEW incentives.programs IS
  'The offers as the programs response shows them: one row per offer, with its key fields beside the document';
COMMENT ON COLUMN incentives.programs.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.programs.label IS 'The offer''s optional label (NULL when absent)';
COMMENT ON COLUMN incentives.programs.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.programs.calculator_key IS 'percent_of_amount, dollars_per_unit, fixed_amount or dollars_per_coverage_unit';
COMMENT ON COLUMN incentives.programs.document IS 'The offer document, as stored';
COMMENT ON COLUMN incentives.programs.tier_mode IS 'Stepped: all_volume (the tier met pays on all volume) or incremental (each tier pays on its band: a blended rate); NULL for the other strategies';
COMMENT ON COLUMN incentives.programs.enrollment IS 'open (everyone may earn) or required (only transactions inside an incentives.enrollments window of the participant count)';
COMMENT ON COLUMN incentives.programs.requirements IS 'The qualification gates as compiled: [{key, type, minimum, property_key, filters}]; every one must reach its minimum or the offer pays nothing ([] when none)';
COMMENT ON COLUMN incentives.programs.limit_minimum IS 'Minimum payout per participant: below it the offer pays nothing (NULL: none)';
COMMENT ON COLUMN incentives.programs.limit_maximum IS 'Maximum payout per participant (per group when aggregated by group): above it the rows are scaled down to add up to it exactly (NULL: none)';
COMMENT ON COLUMN incentives.programs.aggregation IS 'participant (each participant''s own transactions) or group (all the transactions of a participant''s group, incentives.participant_groups: tiers, pools, requirements and limits are the group''s)';
COMMENT ON COLUMN incentives.programs.threshold_type IS 'Stepped: aggregated_amount, aggregated_quantity, property, growth_amount or growth_quantity (the tiers are growth percentages over the baseline); NULL for the other strategies';
COMMENT ON COLUMN incentives.programs.pays_on IS 'Stepped: all_volume (the tier met pays every earning transaction) or growth (only the growth over the baseline pays); NULL for the other strategies';
COMMENT ON COLUMN incentives.programs.baseline IS 'Stepped growth types: what the current value is compared with, {start_date, end_date} (the same sum over those dates) or {property_key}; NULL otherwise';

CREATE OR REPLACE VIEW incentives.program_rates WITH (security_invoker = true) AS
SELECT r.*
  FROM incentives.offers AS o
 CROSS JOIN LATERAL incentives_internal.offer_rates(o.document) AS r;
COMMENT ON VIEW incentives.program_rates IS
  'Every rate of every offer as a flat row, keyed as the calculation reports it (incentive_rate_key): standard, one row per entry and SKU; stepped, one row per tier; stacked, one row per stack, set and SKU';
COMMENT ON COLUMN incentives.program_rates.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_rates.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.program_rates.calculator_key IS 'The offer''s calculator';
COMMENT ON COLUMN incentives.program_rates.rate_key IS
  'The incentive_rate_key the calculation reports: standard, the entry key or {period_key}_{transaction_type}; stepped, the tier key or {value}_{measure}_greater_than_or_equal_to_{threshold}; stacked, the stack key or its set keys joined with _and_';
COMMENT ON COLUMN incentives.program_rates.sku_key IS 'The SKU the rate pays on (NULL for stepped tiers, which apply to every SKU of the earning filters)';
COMMENT ON COLUMN incentives.program_rates.rate_value IS 'The rate as written: the SKU rate (standard, stacked; 0 for a stacked SKU that only anchors coverage), the tier value (stepped), the pool (fixed_amount)';
COMMENT ON COLUMN incentives.program_rates.measure IS 'percent or dollars';
COMMENT ON COLUMN incentives.program_rates.threshold IS 'Stepped: the tier''s threshold; NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.threshold_type IS 'Stepped: aggregated_amount, aggregated_quantity or property; NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.period_key IS 'The period of the entry (standard) or set (stacked); stepped: the earning filters'' period when they all share one, else NULL';
COMMENT ON COLUMN incentives.program_rates.period_start_date IS 'First day of the period (inclusive)';
COMMENT ON COLUMN incentives.program_rates.period_end_date IS 'Last day of the period (inclusive)';
COMMENT ON COLUMN incentives.program_rates.transaction_type IS 'The transaction type that earns; stepped: the earning filters'' type when they all share one, else NULL';
COMMENT ON COLUMN incentives.program_rates.sku_set_key IS 'Stacked: the SKU set; NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.stack_key IS 'Stacked: the stack (its key, or its set keys joined with _and_); NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.threshold_property_key IS 'Stepped by property: the property that picks the tier; NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.price IS 'The offer''s program price for the SKU (per unit of the SKU''s unit of measure), NULL when none';
COMMENT ON COLUMN incentives.program_rates.coverage_unit IS 'Stacked: the set''s coverage unit (e.g. acre)';
COMMENT ON COLUMN incentives.program_rates.coverage_rate IS 'Stacked: the SKU''s conversion rate, in coverage_uom_key per coverage unit';
COMMENT ON COLUMN incentives.program_rates.coverage_uom_key IS 'Stacked: the unit the conversion rate is in (the conversion''s "from")';
COMMENT ON COLUMN incentives.program_rates.tier_mode IS 'Stepped: all_volume or incremental (the tier''s value then pays only on its band of the threshold value); NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.pays_on IS 'Stepped: all_volume or growth (only the growth over the baseline pays); NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.baseline_start_date IS 'Stepped growth types with a baseline by dates: its first day (inclusive); the tier''s threshold is a growth percentage over the same sum dated baseline_start_date..baseline_end_date';
COMMENT ON COLUMN incentives.program_rates.baseline_end_date IS 'Stepped growth types with a baseline by dates: its last day (inclusive)';
COMMENT ON COLUMN incentives.program_rates.baseline_property_key IS 'Stepped growth types with a baseline by property: the property holding the baseline';

-- Programs as of a time (docs/lifecycle.md, Offer versions and as_of): the
-- same rows from the versions valid then (NULL: now), with the version.
CREATE OR REPLACE FUNCTION incentives.programs(as_of timestamptz)
RETURNS SETOF incentives.program_version_row
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT v.offer_key, s.label, s.strategy_key, s.calculator_key, v.document,
           s.tier_mode, s.enrollment, s.requirements, s.limit_minimum, s.limit_maximum,
           v.version, v.valid_from, v.valid_to, s.aggregation, s.threshold_type, s.pays_on, s.baseline
      FROM incentives.offer_versions AS v
     CROSS JOIN LATERAL incentives_internal.offer_summary(v.document) AS s
     WHERE v.valid_from <= COALESCE($1, now())
       AND (v.valid_to IS NULL OR v.valid_to > COALESCE($1, now()))
     ORDER BY v.offer_key COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.programs(timestamptz) IS
  'incentives.programs with the offers as they were at as_of (NULL: now), one row per offer, with the version in force then (incentives.offer_versions)';

CREATE OR REPLACE FUNCTION incentives.program_rates(as_of timestamptz)
RETURNS SETOF incentives.program_rates
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT r.*
      FROM incentives.offer_versions AS v
     CROSS JOIN LATERAL incentives_internal.offer_rates(v.document) AS r
     WHERE v.valid_from <= COALESCE($1, now())
       AND (v.valid_to IS NULL OR v.valid_to > COALESCE($1, now()))
$function$;
COMMENT ON FUNCTION incentives.program_rates(timestamptz) IS
  'incentives.program_rates with the offers as they were at as_of (NULL: now; incentives.offer_versions)';

-- ---- src/sql/incentives/code/40_refresh.sql

------------------------------------------------------------------------
-- CALL incentives.refresh_earnings(...): the materialized earnings
-- (docs/lifecycle.md, "Refreshing the earnings")
--
-- Three kinds of run, one procedure:
--
--   everyone (participant_key NULL): every participant of the relation.
--     By a role that owns incentives.earnings (or is a member of its
--     owner) the rows are calculated in one snapshot, by jobs processes,
--     and written from C straight into a new, unindexed table
--     incentives_internal.earnings_run_<run_id>
--     (incentives_internal.refresh_write, 41_refresh_write.sql), indexed
--     once, and swapped in as the table's one partition in the same
--     transaction (the old one is detached and dropped): no row-by-row
--     delete, and readers see the old earnings or the new ones, never a
--     mix.  Any other role with INSERT and DELETE on the table replaces
--     the rows batch by batch in one transaction (the same result,
--     slower; one process).
--   one participant: its rows are deleted and calculated again.
--   changed_only: the participants incentives.earnings_changes
--     names (their transactions, properties or enrollments changed), or
--     everyone when it says so (an offer, SKU or unit conversion changed).
--
-- on_error => 'skip': a participant whose calculation fails for a data
-- reason (SQLSTATE class 22 or 23) keeps its previous earnings and gets a
-- row in incentives.calculation_exceptions; the run ends
-- completed_with_exceptions.  refresh_write skips a participant whose
-- calculation fails (every member of a participant group's unit that
-- fails) and reports it; a read that fails (a NULL key, a repeated
-- transaction_id), and the batches of the slower ways, run in
-- subtransactions, and what failed is calculated again participant by
-- participant.
--
-- The run log: the 'running' row is committed before the work when the
-- procedure may commit (incentives_internal.transaction_control_allowed(),
-- never an error message's text), and the run holds a session advisory
-- lock keyed by its run_id until it ends.  A 'running' row whose lock is
-- free belongs to a session (or server) that died: the next refresh marks
-- it interrupted.  A crash loses nothing else: the earnings change only
-- when the run's transaction commits.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.refresh_run_locked(run_id bigint)
RETURNS boolean
LANGUAGE sql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- true when some session holds the run's lock (it is still running);
    -- our own try-lock is released at once
    SELECT CASE WHEN pg_try_advisory_lock(hashtext('incentives.calculation_runs'), ($1 % 2147483647)::integer)
                THEN NOT pg_advisory_unlock(hashtext('incentives.calculation_runs'), ($1 % 2147483647)::integer)
                ELSE true END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_run_locked(bigint) IS
  'Part of incentives.refresh_earnings: true while the session running the given run holds its advisory lock';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_begin(
    participant_key text,
    transactions    regclass,
    on_error        text,
    changed_only    boolean)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_run bigint;
BEGIN
    -- Runs left 'running' by a session or server that died.
    UPDATE incentives.calculation_runs AS r
       SET status = 'interrupted',
           finished_at = clock_timestamp(),
           error = format('run %s was interrupted: its session ended (killed, or the server stopped) before it finished; nothing it did was kept',
                          r.run_id)
     WHERE r.status = 'running'
       AND NOT incentives_internal.refresh_run_locked(r.run_id);

    INSERT INTO incentives.calculation_runs (participant_key, transactions, on_error, changed_only)
    VALUES ($1, $2::text, $3, $4)
    RETURNING run_id INTO v_run;
    -- held by this session until refresh_earnings_end (or its end)
    PERFORM pg_advisory_lock(hashtext('incentives.calculation_runs'), (v_run % 2147483647)::integer);
    RETURN v_run;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_begin(text, regclass, text, boolean) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): marks dead runs interrupted, logs a new run as running, takes its lock and returns its run_id';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_end(run_id bigint)
RETURNS void
LANGUAGE sql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT pg_advisory_unlock(hashtext('incentives.calculation_runs'), ($1 % 2147483647)::integer);
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_end(bigint) IS
  'Part of incentives.refresh_earnings: releases the run''s lock';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_check(
    participant_key text,
    transactions    regclass,
    on_error        text,
    changed_only    boolean,
    jobs            integer)
RETURNS void
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF jobs IS NULL OR jobs < 1 OR jobs > 1024 THEN
        RAISE EXCEPTION 'jobs must be between 1 and 1024, not %', COALESCE(jobs::text, 'NULL')
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF on_error IS NULL OR on_error NOT IN ('raise', 'skip') THEN
        RAISE EXCEPTION 'on_error must be ''raise'' or ''skip'', not %', COALESCE(quote_literal(on_error), 'NULL')
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF changed_only IS NULL THEN
        RAISE EXCEPTION 'changed_only must be true or false, not NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF transactions IS NULL THEN
        RAISE EXCEPTION 'transactions must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF changed_only AND participant_key IS NOT NULL THEN
        RAISE EXCEPTION 'changed_only refreshes whoever changed: give no participant_key'
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'CALL incentives.refresh_earnings(participant_key => ...) refreshes one participant.';
    END IF;
    IF changed_only AND transactions <> 'incentives.transactions'::regclass THEN
        RAISE EXCEPTION 'changed_only needs the transactions of incentives.transactions, not %', transactions
              USING ERRCODE = 'feature_not_supported',
                    DETAIL = format('Changes to %s cannot be tracked: only incentives.transactions has the change-tracking triggers.', transactions),
                    HINT = format('Refresh from %s without changed_only.', transactions);
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_check(text, regclass, text, boolean, integer) IS
  'Part of incentives.refresh_earnings: refuses arguments it cannot run with (22023; 0A000 for changed_only over anything but incentives.transactions)';

-- refresh_earnings_batch: one batch's rows into target, as one statement.
-- batch is the relation to calculate on (the caller's, or a temporary
-- view of part of it); participant: one participant, or NULL for all of
-- batch.  Returns the rows written and, unless only_count, their incentive
-- total (a new partition's total is summed once at the end instead: a
-- RETURNING clause costs more than that scan).
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_batch(
    target      regclass,
    run_id      bigint,
    participant text,
    batch       regclass,
    only_count  boolean,
    OUT rows    bigint,
    OUT total   numeric)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_insert text := format($sql$
        INSERT INTO %s
        SELECT e.participant_key, e.offer_key, e.offer_calculator, e.sku_key,
               e.incentive_rate_key, e.incentive_rate_measure, e.incentive_rate_value,
               e.offer_sku_pay_rate, e.transaction_id, e.provided_quantity,
               e.provided_uom_key, e.provided_amount, e.incentivized_quantity,
               e.incentivized_amount, e.incentive_amount,
               e.incentive_contribution_percent, e.incentive_effective_rate,
               e.transaction_date, now(), $1, e.group_key
          FROM incentives_internal.calculate_dated($2, '{}', NULL, $3, NULL, NULL) AS e$sql$, target);
BEGIN
    IF only_count THEN
        EXECUTE v_insert USING run_id, participant, batch;
        GET DIAGNOSTICS rows = ROW_COUNT;
        total := NULL;
    ELSE
        EXECUTE format($sql$
            WITH ins AS (%s RETURNING incentive_amount)
            SELECT count(*), COALESCE(sum(incentive_amount), 0.00) FROM ins$sql$, v_insert)
           INTO rows, total
          USING run_id, participant, batch;
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_batch(regclass, bigint, text, regclass, boolean) IS
  'Part of incentives.refresh_earnings: writes one batch''s calculated rows into the target table in one statement';

-- refresh_earnings_one: one participant, in a subtransaction, for
-- on_error => 'skip'.  Replaces its rows in incentives.earnings (replace)
-- or adds them to a new partition (not replace).  A failure for a data
-- reason keeps its previous rows (copied into the new partition when not
-- replace), logs the exception and logs the participant as changed, so
-- that the next changed_only refresh tries it again.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_one(
    target      regclass,
    replace     boolean,
    run_id      bigint,
    participant text,
    relation    regclass,
    OUT rows    bigint,
    OUT total   numeric,
    OUT failed  boolean)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_state   text;
    v_message text;
    v_detail  text;
    v_txn     text;
BEGIN
    failed := false;
    BEGIN
        IF replace THEN
            DELETE FROM incentives.earnings AS e WHERE e.participant_key = refresh_earnings_one.participant;
        END IF;
        SELECT b.rows, b.total INTO rows, total
          FROM incentives_internal.refresh_earnings_batch(target, run_id, participant, relation, false) AS b;
    EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT,
                                v_detail = PG_EXCEPTION_DETAIL;
        SELECT f.transaction_id INTO v_txn FROM incentives_internal.calculation_failure() AS f;
        failed := true;
        rows := 0;
        total := 0.00;
        INSERT INTO incentives.calculation_exceptions (run_id, participant_key, transaction_id, sqlstate, message)
        VALUES (refresh_earnings_one.run_id, participant, v_txn, v_state,
                CASE WHEN v_detail = '' THEN v_message ELSE v_message || chr(10) || 'DETAIL: ' || v_detail END);
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (participant);
        IF NOT replace THEN
            EXECUTE format('INSERT INTO %s SELECT * FROM incentives.earnings AS e WHERE e.participant_key = $1',
                           target)
              USING participant;
        END IF;
    END;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_one(regclass, boolean, bigint, text, regclass) IS
  'Part of incentives.refresh_earnings(on_error => ''skip''): one participant in a subtransaction; on a data error (class 22 or 23) it keeps its previous earnings and the exception is logged';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_work(
    run_id          bigint,
    participant_key text,
    transactions    regclass,
    progress_every  integer,
    on_error        text,
    changed_only    boolean,
    jobs            integer)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run         bigint   := refresh_earnings_work.run_id;
    v_participant text     := refresh_earnings_work.participant_key;
    v_relation    regclass := refresh_earnings_work.transactions;
    v_every       integer  := GREATEST(COALESCE(refresh_earnings_work.progress_every, 1000), 1);
    v_skip        boolean  := refresh_earnings_work.on_error = 'skip';
    v_tracked     boolean  := refresh_earnings_work.transactions = 'incentives.transactions'::regclass;
    v_everyone    boolean;
    v_changed     text[];
    v_swap        boolean;
    v_target      regclass;
    v_new         text;
    v_keys        text[];          -- changed_only: the participants, in byte order
    v_starts      text[];          -- everyone: the first key of each batch
    v_start_rn    bigint[];        -- and how many participants come before it, plus 1
    v_prev_done   integer := 0;
    v_nbatches    integer;
    v_total       integer;
    v_batch       integer;
    v_batch_rel   regclass;
    v_members     text[];
    v_member      text;
    v_filter      text;
    v_delete_filter text;
    v_table       text;
    v_old         regclass;
    v_owner       oid;
    v_done        integer := 0;
    v_rows        bigint  := 0;
    v_sum         numeric := 0.00;
    v_step_rows   bigint;
    v_step_sum    numeric;
    v_failed      boolean;
    v_one_rows    bigint;
    v_one_sum     numeric;
    v_batch_ok    boolean;
    v_exceptions  integer := 0;
    v_written     boolean := false;
    v_w           record;
    -- participant groups (docs/lifecycle.md, Participant groups): an offer
    -- aggregated by group and memberships, so a group's members are
    -- calculated together, never split between batches
    v_grouped     boolean := EXISTS (SELECT FROM incentives.programs AS p WHERE p.aggregation = 'group')
                             AND EXISTS (SELECT FROM incentives_internal.participant_units());
BEGIN
    ---------------------------------------------------------------- what
    IF v_participant IS NOT NULL THEN
        -- One participant: refreshes of different participants run side
        -- by side, never beside a refresh of everyone.
        PERFORM pg_advisory_xact_lock_shared(hashtext('incentives.earnings'), 0);
        PERFORM pg_advisory_xact_lock(hashtext('incentives.earnings'), hashtext(v_participant));
        v_everyone := false;
        v_keys := ARRAY[v_participant];
        IF v_tracked AND v_grouped
           AND EXISTS (SELECT FROM incentives_internal.participant_units() AS u
                        WHERE u.participant_key = v_participant) THEN
            -- its group's other members' rows depend on its transactions:
            -- the next changed_only refresh recalculates the whole group
            NULL;
        ELSIF v_tracked THEN
            DELETE FROM incentives.earnings_changes AS c WHERE c.participant_key = v_participant;
        ELSE
            INSERT INTO incentives.earnings_changes (participant_key) VALUES (v_participant);
        END IF;
    ELSE
        PERFORM pg_advisory_xact_lock(hashtext('incentives.earnings'), 0);
        -- The change log is consumed first: what this statement deletes was
        -- committed before it, so the calculations below (later snapshots)
        -- include it; what commits after it stays for the next run.
        WITH consumed AS (
            DELETE FROM incentives.earnings_changes AS c
            RETURNING c.participant_key)
        SELECT bool_or(c.participant_key IS NULL),
               array_agg(DISTINCT c.participant_key COLLATE "C") FILTER (WHERE c.participant_key IS NOT NULL)
          INTO v_everyone, v_changed
          FROM consumed AS c;
        v_everyone := NOT refresh_earnings_work.changed_only OR COALESCE(v_everyone, false);
        IF NOT v_tracked THEN
            -- earnings from another relation: everyone differs from a
            -- calculation on incentives.transactions now
            INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
        END IF;
        IF NOT v_everyone THEN
            v_keys := COALESCE(v_changed, '{}');
            IF v_grouped THEN
                -- whole groups: every key of the units of the changed ones
                -- (a group key logged by a change of memberships brings its
                -- members)
                SELECT array_agg(DISTINCT k.k ORDER BY k.k)
                  INTO v_keys
                  FROM (SELECT unnest(v_keys) COLLATE "C" AS k
                        UNION
                        SELECT b.participant_key COLLATE "C"
                          FROM incentives_internal.participant_units() AS a
                          JOIN incentives_internal.participant_units() AS b USING (unit_key)
                         WHERE a.participant_key = ANY (v_keys)) AS k;
                v_keys := COALESCE(v_keys, '{}');
            END IF;
            -- half of the participants or more changed (a reload): a
            -- refresh of everyone is cheaper than replacing them one batch
            -- at a time
            IF array_length(v_keys, 1) >= 100
               AND array_length(v_keys, 1) * 2 >= (SELECT count(DISTINCT t.participant_key)
                                                     FROM incentives.transactions AS t) THEN
                v_everyone := true;
                v_keys := NULL;
            END IF;
        END IF;
    END IF;

    ---------------------------------------------------------------- how
    -- Everyone, by the owner: build a new partition and swap it in.
    v_owner := (SELECT c.relowner FROM pg_class AS c WHERE c.oid = 'incentives.earnings'::regclass);
    v_swap := v_everyone AND pg_has_role(v_owner, 'USAGE');
    IF v_swap THEN
        v_new := format('earnings_run_%s', v_run);
        -- Runtime DDL, not a declaration: the run's new partition of
        -- incentives.earnings (incentives_internal.earnings_run_<run_id>).
        EXECUTE format('CREATE TABLE incentives_internal.%I (LIKE incentives.earnings)', v_new);
        v_target := format('incentives_internal.%I', v_new)::regclass;
    ELSE
        v_target := 'incentives.earnings'::regclass;
    END IF;

    -- Everyone into the new partition: every row written from C, in one
    -- snapshot, by jobs processes.  With skip, a participant that fails
    -- is reported, and a read that fails (a NULL, a repeated
    -- transaction_id) leaves the batches below to find the participant.
    IF v_swap THEN
        IF v_skip THEN
            BEGIN
                SELECT * INTO v_w
                  FROM incentives_internal.refresh_write(v_target, v_run, v_relation, v_every, true,
                                                         refresh_earnings_work.jobs);
                v_written := true;
            EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
                v_written := false;
            END;
        ELSE
            SELECT * INTO v_w
              FROM incentives_internal.refresh_write(v_target, v_run, v_relation, v_every, false,
                                                     refresh_earnings_work.jobs);
            v_written := true;
        END IF;
    END IF;
    IF v_written THEN
        v_total := v_w.participants;
        v_rows := v_w.rows;
        v_sum := v_w.total;
        v_exceptions := COALESCE(cardinality(v_w.failed_participants), 0);
        IF v_exceptions > 0 THEN
            -- the skipped keep their previous earnings (rows written before
            -- a participant failed go first), are logged, and stay marked
            -- as changed for the next changed_only refresh
            IF cardinality(v_w.partial_participants) > 0 THEN
                EXECUTE format('DELETE FROM %s AS t WHERE t.participant_key = ANY ($1)', v_target)
                  USING v_w.partial_participants;
            END IF;
            INSERT INTO incentives.calculation_exceptions (run_id, participant_key, transaction_id, sqlstate, message)
            SELECT v_run, f.p, f.t, f.s, f.m
              FROM unnest(v_w.failed_participants, v_w.failed_transactions, v_w.failed_sqlstates,
                          v_w.failed_messages) AS f(p, t, s, m);
            INSERT INTO incentives.earnings_changes (participant_key)
            SELECT unnest(v_w.failed_participants);
            EXECUTE format('INSERT INTO %s SELECT * FROM incentives.earnings AS e WHERE e.participant_key = ANY ($1)',
                           v_target)
              USING v_w.failed_participants;
        END IF;
        v_nbatches := 0;
    END IF;

    -- Batches: everyone, participants in byte order, at most progress_every
    -- of them and about work_mem's worth of transactions per batch (so that
    -- a batch's rows stay in memory instead of a temporary file), as key
    -- ranges (the first and last ranges are open, so every row already
    -- materialized falls in one); changed_only, the changed participants,
    -- progress_every per batch.
    IF v_written THEN
        NULL;
    ELSIF v_everyone THEN
        EXECUTE format($sql$
            SELECT count(*)::integer,
                   array_agg(p ORDER BY p) FILTER (WHERE b IS DISTINCT FROM prev_b),
                   array_agg(rn ORDER BY p) FILTER (WHERE b IS DISTINCT FROM prev_b)
              FROM (SELECT p, rn, b, lag(b) OVER (ORDER BY p) AS prev_b
                      FROM (SELECT p,
                                   row_number() OVER w AS rn,
                                   GREATEST((row_number() OVER w - 1) / $1,
                                            floor((sum(n) OVER w - n) / $2)) AS b
                              FROM (SELECT participant_key::text COLLATE "C" AS p, count(*) AS n
                                      FROM %s WHERE participant_key IS NOT NULL
                                     GROUP BY 1) AS d
                            WINDOW w AS (ORDER BY p)) AS x) AS y$sql$, v_relation)
           INTO v_total, v_starts, v_start_rn
          USING v_every, GREATEST(50000, pg_size_bytes(current_setting('work_mem')) / 256);
        v_nbatches := COALESCE(array_length(v_starts, 1), 0);
        IF v_nbatches = 0 AND NOT v_swap THEN
            DELETE FROM incentives.earnings;
        END IF;
        IF v_grouped THEN
            -- one batch: key ranges would split groups
            v_nbatches := LEAST(v_nbatches, 1);
        END IF;
    ELSE
        v_total := COALESCE(array_length(v_keys, 1), 0);
        IF v_grouped THEN
            v_every := GREATEST(v_every, v_total);
        END IF;
        v_nbatches := (v_total + v_every - 1) / v_every;
    END IF;

    -- Several batches: what every participant's calculation shares stays
    -- put until this transaction ends, so all batches see the same offers,
    -- units, properties and enrollments (SHARE locks: writers wait, readers
    -- do not; taken where the role may lock, i.e. has UPDATE, DELETE or
    -- TRUNCATE on the table).  Transactions are not locked: each
    -- participant's rows come from one statement.
    IF v_nbatches > 1 THEN
        FOR v_table IN SELECT unnest(ARRAY['incentives.offers', 'incentives.skus',
                                           'incentives.uom_conversions',
                                           'incentives.participant_properties',
                                           'incentives.enrollments']) LOOP
            IF has_table_privilege(v_table, 'UPDATE, DELETE, TRUNCATE') THEN
                EXECUTE format('LOCK TABLE %s IN SHARE MODE', v_table);
            END IF;
        END LOOP;
    END IF;

    FOR v_batch IN 1 .. v_nbatches LOOP
        -- the batch's participants: a key range or a list
        IF v_everyone THEN
            v_filter := concat_ws(' AND ',
                CASE WHEN v_batch > 1 THEN format('t.participant_key::text COLLATE "C" >= %L', v_starts[v_batch]) END,
                CASE WHEN v_batch < v_nbatches THEN format('t.participant_key::text COLLATE "C" < %L', v_starts[v_batch + 1]) END);
            IF v_filter = '' THEN
                v_filter := 'true';
            END IF;
            v_delete_filter := v_filter;
        ELSE
            v_members := v_keys[(v_batch - 1) * v_every + 1 : v_batch * v_every];
            -- the relation through its participant index (COLLATE "C"),
            -- the earnings through their primary key (the column's own
            -- collation; equality is the same)
            v_filter := format('t.participant_key::text COLLATE "C" = ANY (%L::text[])', v_members);
            v_delete_filter := format('t.participant_key = ANY (%L::text[])', v_members);
        END IF;
        -- Runtime DDL, not a declaration: a temporary view of the batch's
        -- transactions, dropped below.
        IF v_filter = 'true' OR (v_participant IS NOT NULL AND v_grouped) THEN
            -- everything at once, or one member of a group (whose group
            -- the calculation reads through the participant index): the
            -- relation itself (under row-level security a group's figures
            -- then need the rows the caller cannot see, which the
            -- calculation reads as the relation's owner: docs/security.md,
            -- Participant groups)
            v_batch_rel := v_relation;
        ELSE
            EXECUTE format($sql$
                CREATE TEMPORARY VIEW incentives_refresh_batch AS
                SELECT t.transaction_id, t.participant_key, t.transaction_type,
                       t.transaction_date, t.sku_key, t.quantity, t.uom_key, t.amount
                  FROM %s AS t
                 WHERE %s$sql$, v_relation, v_filter);
            v_batch_rel := to_regclass('pg_temp.incentives_refresh_batch');
        END IF;

        -- the batch in one statement (in a subtransaction with skip)
        v_batch_ok := true;
        BEGIN
            IF NOT v_swap THEN
                EXECUTE format('DELETE FROM incentives.earnings AS t WHERE %s', v_delete_filter);
            END IF;
            SELECT b.rows, b.total INTO v_step_rows, v_step_sum
              FROM incentives_internal.refresh_earnings_batch(v_target, v_run,
                                                               CASE WHEN v_grouped THEN v_participant END,
                                                               v_batch_rel, v_swap) AS b;
        EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
            IF NOT v_skip THEN
                RAISE;
            END IF;
            v_batch_ok := false;
        END;
        IF NOT v_batch_ok THEN
            -- skip: the batch again, participant by participant (everyone:
            -- those with transactions in the range and those with earnings
            -- there, so that a participant whose transactions are gone
            -- loses its rows)
            IF v_everyone THEN
                EXECUTE format($sql$
                    SELECT array_agg(k ORDER BY k)
                      FROM (SELECT t.participant_key::text COLLATE "C" AS k FROM %s AS t WHERE %s
                            UNION
                            SELECT t.participant_key COLLATE "C" FROM incentives.earnings AS t WHERE %s) AS u
                     WHERE k IS NOT NULL$sql$, v_relation, v_filter, v_filter)
                   INTO v_members;
            END IF;
            v_step_rows := 0;
            v_step_sum := 0.00;
            FOREACH v_member IN ARRAY COALESCE(v_members, '{}') LOOP
                SELECT o.rows, o.total, o.failed INTO v_one_rows, v_one_sum, v_failed
                  FROM incentives_internal.refresh_earnings_one(v_target, NOT v_swap, v_run, v_member,
                                                                v_relation) AS o;
                v_step_rows := v_step_rows + v_one_rows;
                v_step_sum := v_step_sum + v_one_sum;
                IF v_failed THEN
                    v_exceptions := v_exceptions + 1;
                END IF;
            END LOOP;
        END IF;
        IF v_batch_rel <> v_relation THEN
            EXECUTE format('DROP VIEW %s', v_batch_rel);
        END IF;

        IF v_everyone THEN
            v_done := CASE WHEN v_batch < v_nbatches THEN v_start_rn[v_batch + 1] - 1 ELSE v_total END;
        ELSE
            v_done := LEAST(v_batch * v_every, v_total);
        END IF;
        v_rows := v_rows + v_step_rows;
        v_sum  := v_sum + v_step_sum;     -- NULL once a batch counted only
        -- a NOTICE every progress_every participants, and at the end
        IF v_participant IS NULL
           AND (v_done / v_every > v_prev_done / v_every OR v_batch = v_nbatches) THEN
            RAISE NOTICE 'refresh_earnings: % of % participants, % rows', v_done, v_total, v_rows;
        END IF;
        v_prev_done := v_done;
        -- visible to other sessions at once in pg_stat_activity, unlike
        -- the run row, which commits with the earnings
        PERFORM set_config('application_name',
                           format('incentives refresh run %s: %s/%s', v_run, v_done, v_total),
                           true);
    END LOOP;

    ---------------------------------------------------------------- swap
    IF v_swap THEN
        IF NOT v_written THEN
            EXECUTE format('SELECT COALESCE(sum(e.incentive_amount), 0.00) FROM %s AS e WHERE e.run_id = $1', v_target)
               INTO v_sum
              USING v_run;
        END IF;
        -- Indexes built once over all rows, then the new partition replaces
        -- the old one(s); readers wait for the commit (the detach locks the
        -- table) and then see only the new rows.  Rows written in the
        -- primary key's order (jobs 1 and 2: one stream of rows) build it
        -- fastest in one process (a parallel build writes each worker's
        -- sorted run to a temporary file, and its leader merges them); rows
        -- from several workers come unsorted, and jobs - 1 workers share
        -- the sort (the setting returns to the caller's when this function
        -- ends).
        PERFORM set_config('max_parallel_maintenance_workers',
                           CASE WHEN refresh_earnings_work.jobs <= 2 THEN 0
                                ELSE refresh_earnings_work.jobs - 1 END::text,
                           true);
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I PRIMARY KEY '
                       '(participant_key, offer_key, incentive_rate_key, transaction_id)',
                       v_target, v_new || '_pkey');
        EXECUTE format('CREATE INDEX %I ON %s (offer_key)', v_new || '_offer_idx', v_target);
        EXECUTE format('COMMENT ON TABLE %s IS %L', v_target,
                       format('Partition of incentives.earnings written by refresh run %s (replaced by the next full refresh)', v_run));
        IF (SELECT c.relowner FROM pg_class AS c WHERE c.oid = v_target) <> v_owner THEN
            -- every partition belongs to the table's owner, whichever
            -- member of its role refreshed
            EXECUTE format('ALTER TABLE %s OWNER TO %I', v_target, pg_get_userbyid(v_owner));
        END IF;
        FOR v_old IN SELECT i.inhrelid::regclass
                       FROM pg_inherits AS i
                      WHERE i.inhparent = 'incentives.earnings'::regclass
                        AND i.inhrelid <> 'incentives_internal.earnings_default'::regclass
                      ORDER BY i.inhrelid LOOP
            EXECUTE format('ALTER TABLE incentives.earnings DETACH PARTITION %s', v_old);
            EXECUTE format('DROP TABLE %s', v_old);
        END LOOP;
        DELETE FROM incentives_internal.earnings_default;
        EXECUTE format('ALTER TABLE incentives.earnings ATTACH PARTITION %s FOR VALUES FROM (MINVALUE) TO (MAXVALUE)',
                       v_target);
    END IF;

    UPDATE incentives.calculation_runs AS r
       SET status = CASE WHEN v_exceptions > 0 THEN 'completed_with_exceptions' ELSE 'succeeded' END,
           finished_at = clock_timestamp(),
           participants = v_total,
           rows = v_rows,
           total_incentive = v_sum,
           exceptions = v_exceptions
     WHERE r.run_id = v_run;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): replaces one participant''s, the changed participants'' or all earnings and marks the run succeeded';

-- An error raised again from what GET STACKED DIAGNOSTICS read of it (a
-- DETAIL or HINT only when it had one: RAISE cannot leave an option out
-- by its value).  incentives.calculate uses it too.
CREATE OR REPLACE FUNCTION incentives_internal.raise_error(state text, message text, detail text, hint text)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF detail <> '' AND hint <> '' THEN
        RAISE EXCEPTION USING ERRCODE = state, MESSAGE = message, DETAIL = detail, HINT = hint;
    ELSIF detail <> '' THEN
        RAISE EXCEPTION USING ERRCODE = state, MESSAGE = message, DETAIL = detail;
    ELSIF hint <> '' THEN
        RAISE EXCEPTION USING ERRCODE = state, MESSAGE = message, HINT = hint;
    ELSE
        RAISE EXCEPTION USING ERRCODE = state, MESSAGE = message;
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.raise_error(text, text, text, text) IS
  'Raises an error with the given SQLSTATE (or condition name), message, and the detail and hint when they are not empty';

CREATE OR REPLACE PROCEDURE incentives.refresh_earnings(
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions',
    progress_every  integer  DEFAULT 1000,
    on_error        text     DEFAULT 'raise',
    changed_only    boolean  DEFAULT false,
    jobs            integer  DEFAULT 1)
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name and
-- operator below is schema-qualified; the SQL work is in
-- incentives_internal.refresh_earnings_work.
DECLARE
    v_run        bigint;
    v_can_commit boolean;
    v_failed     boolean := false;
    v_state      text;
    v_message    text;
    v_detail     text;
    v_hint       text;
    v_where      text;
BEGIN
    PERFORM incentives_internal.refresh_earnings_check(refresh_earnings.participant_key,
                                                       refresh_earnings.transactions,
                                                       refresh_earnings.on_error,
                                                       refresh_earnings.changed_only,
                                                       refresh_earnings.jobs);
    -- Can this call commit?  Yes when CALLed as a top-level statement
    -- outside a transaction block (psql, pg_cron); no inside BEGIN ... COMMIT
    -- or a function.  Asked of SPI, never read from an error message.
    v_can_commit := incentives_internal.transaction_control_allowed();

    v_run := incentives_internal.refresh_earnings_begin(refresh_earnings.participant_key,
                                                        refresh_earnings.transactions,
                                                        refresh_earnings.on_error,
                                                        refresh_earnings.changed_only);
    IF v_can_commit THEN
        COMMIT;   -- the 'running' row is visible while the refresh runs
    END IF;

    -- The replacement runs in a subtransaction: on error its deletes and
    -- inserts are undone, the previous earnings stay, and the failure is
    -- recorded after it.
    BEGIN
        PERFORM incentives_internal.refresh_earnings_work(v_run, refresh_earnings.participant_key,
                                                          refresh_earnings.transactions,
                                                          refresh_earnings.progress_every,
                                                          refresh_earnings.on_error,
                                                          refresh_earnings.changed_only,
                                                          refresh_earnings.jobs);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS v_state   = RETURNED_SQLSTATE,
                                v_message = MESSAGE_TEXT,
                                v_detail  = PG_EXCEPTION_DETAIL,
                                v_hint    = PG_EXCEPTION_HINT,
                                v_where   = PG_EXCEPTION_CONTEXT;
        -- where the engine was when a calculation failed: its own context
        -- line ("calculating transaction ... of participant ..."), if any
        v_where := pg_catalog.substring(v_where, '(?n)^calculating .*$');
        v_failed := true;
    END;
    PERFORM incentives_internal.refresh_earnings_end(v_run);

    IF v_failed THEN
        UPDATE incentives.calculation_runs AS r
           SET status = 'failed',
               finished_at = pg_catalog.clock_timestamp(),
               sqlstate = v_state,
               error = v_message
                       OPERATOR(pg_catalog.||) CASE WHEN v_detail OPERATOR(pg_catalog.=) '' THEN ''
                            ELSE pg_catalog.chr(10) OPERATOR(pg_catalog.||) 'DETAIL: '
                                 OPERATOR(pg_catalog.||) v_detail END
                       OPERATOR(pg_catalog.||) CASE WHEN v_where IS NULL THEN ''
                            ELSE pg_catalog.chr(10) OPERATOR(pg_catalog.||) 'CONTEXT: '
                                 OPERATOR(pg_catalog.||) v_where END
         WHERE r.run_id OPERATOR(pg_catalog.=) v_run;
        IF v_can_commit THEN
            COMMIT;   -- the failed run's row survives the error below
        END IF;
        PERFORM incentives_internal.raise_error(v_state, v_message, v_detail, v_hint);
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.refresh_earnings(text, regclass, integer, text, boolean, integer) IS
  'Recalculates one participant''s, every participant''s (NULL) or, with changed_only, the changed participants'' earnings into incentives.earnings atomically and logs the run in incentives.calculation_runs; on_error => ''skip'' keeps a failing participant''s previous earnings and logs it in incentives.calculation_exceptions; on error the previous earnings stay and, when CALLed outside a transaction block, the failed run is committed before the error is raised; NOTICE every progress_every participants; jobs processes calculate a refresh of everyone';

-- ---- src/sql/incentives/code/41_refresh_write.sql

------------------------------------------------------------------------
-- incentives_internal.refresh_write: a full refresh's rows written from
-- C into the run's new partition (docs/lifecycle.md, "How a refresh
-- replaces the earnings"; src/pg/refresh.h)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.refresh_write(
    target                   regclass,
    run_id                   bigint,
    transactions             regclass,
    progress_every           integer,
    skip                     boolean,
    jobs                     integer,
    OUT participants         integer,
    OUT rows                 bigint,
    OUT total                numeric,
    OUT failed_participants  text[],
    OUT failed_transactions  text[],
    OUT failed_sqlstates     text[],
    OUT failed_messages      text[],
    OUT partial_participants text[])
AS 'MODULE_PATHNAME', 'incentives_refresh_write'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_write(regclass, bigint, regclass, integer, boolean, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): calculates every participant of the transactions relation in one snapshot, by jobs processes (a participant group with all its members in one), and writes the rows straight into target (a table this transaction created, without indexes); returns the participants read, the rows and total written, and the participants skipped (skip: participant, transaction, SQLSTATE, message; those with rows already written apart)';

-- ---- src/sql/incentives/code/45_changes.sql

------------------------------------------------------------------------
-- Change tracking for refresh_earnings(changed_only => true) (docs/lifecycle.md,
-- "changed_only => true")
--
-- Statement-level AFTER triggers with transition tables log into
-- incentives.earnings_changes which participants a statement
-- touched: one row per participant and statement, so a bulk load of a
-- million transactions adds one row per participant, not per transaction.
--
--   incentives.transactions, incentives.participant_properties,
--     incentives.enrollments: the participants of the inserted, deleted and
--     (old and new) updated rows; TRUNCATE: everyone.
--   incentives.participant_groups: the members and the groups of those
--     rows (the refresh recalculates each one's whole group); TRUNCATE:
--     everyone.
--   incentives.offers, incentives.skus, incentives.uom_conversions: any
--     row changed means everyone (NULL).
--
-- The triggers run with the rights of the role that writes: it needs
-- INSERT on incentives.earnings_changes (the GRANT model in
-- code/90_grants.sql gives it to incentives_admin).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.track_changes()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- TG_ARGV[0]: 'participants' (the participants of the rows) or
    -- 'everyone' (any row changed means everyone: NULL)
    IF TG_OP = 'TRUNCATE' THEN
        -- everyone
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
    ELSIF TG_ARGV[0] = 'everyone' THEN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO incentives.earnings_changes (participant_key)
            SELECT NULL WHERE EXISTS (SELECT 1 FROM incentives_new_rows);
        ELSE
            INSERT INTO incentives.earnings_changes (participant_key)
            SELECT NULL WHERE EXISTS (SELECT 1 FROM incentives_old_rows);
        END IF;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT DISTINCT n.participant_key FROM incentives_new_rows AS n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT n.participant_key FROM incentives_new_rows AS n
        UNION
        SELECT o.participant_key FROM incentives_old_rows AS o;
    ELSE
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT DISTINCT o.participant_key FROM incentives_old_rows AS o;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.track_changes() IS
  'Trigger: logs in incentives.earnings_changes the participants a statement touched (argument participants: on transactions, participant properties, enrollments) or everyone (argument everyone: on offers, SKUs, unit conversions; and any TRUNCATE)';

-- incentives.transactions: the participants of the changed transactions
DROP TRIGGER IF EXISTS transactions_changes_insert ON incentives.transactions;
CREATE TRIGGER transactions_changes_insert
    AFTER INSERT ON incentives.transactions
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER transactions_changes_insert ON incentives.transactions IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed transactions (inserts)';
DROP TRIGGER IF EXISTS transactions_changes_update ON incentives.transactions;
CREATE TRIGGER transactions_changes_update
    AFTER UPDATE ON incentives.transactions
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER transactions_changes_update ON incentives.transactions IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed transactions (updates)';
DROP TRIGGER IF EXISTS transactions_changes_delete ON incentives.transactions;
CREATE TRIGGER transactions_changes_delete
    AFTER DELETE ON incentives.transactions
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER transactions_changes_delete ON incentives.transactions IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed transactions (deletes)';
DROP TRIGGER IF EXISTS transactions_changes_truncate ON incentives.transactions;
CREATE TRIGGER transactions_changes_truncate
    AFTER TRUNCATE ON incentives.transactions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER transactions_changes_truncate ON incentives.transactions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.participant_properties: the participants of the changed properties
DROP TRIGGER IF EXISTS participant_properties_changes_insert ON incentives.participant_properties;
CREATE TRIGGER participant_properties_changes_insert
    AFTER INSERT ON incentives.participant_properties
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER participant_properties_changes_insert ON incentives.participant_properties IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed properties (inserts)';
DROP TRIGGER IF EXISTS participant_properties_changes_update ON incentives.participant_properties;
CREATE TRIGGER participant_properties_changes_update
    AFTER UPDATE ON incentives.participant_properties
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER participant_properties_changes_update ON incentives.participant_properties IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed properties (updates)';
DROP TRIGGER IF EXISTS participant_properties_changes_delete ON incentives.participant_properties;
CREATE TRIGGER participant_properties_changes_delete
    AFTER DELETE ON incentives.participant_properties
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER participant_properties_changes_delete ON incentives.participant_properties IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed properties (deletes)';
DROP TRIGGER IF EXISTS participant_properties_changes_truncate ON incentives.participant_properties;
CREATE TRIGGER participant_properties_changes_truncate
    AFTER TRUNCATE ON incentives.participant_properties
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER participant_properties_changes_truncate ON incentives.participant_properties IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.enrollments: the participants of the changed enrollment windows
DROP TRIGGER IF EXISTS enrollments_changes_insert ON incentives.enrollments;
CREATE TRIGGER enrollments_changes_insert
    AFTER INSERT ON incentives.enrollments
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER enrollments_changes_insert ON incentives.enrollments IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed enrollment windows (inserts)';
DROP TRIGGER IF EXISTS enrollments_changes_update ON incentives.enrollments;
CREATE TRIGGER enrollments_changes_update
    AFTER UPDATE ON incentives.enrollments
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER enrollments_changes_update ON incentives.enrollments IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed enrollment windows (updates)';
DROP TRIGGER IF EXISTS enrollments_changes_delete ON incentives.enrollments;
CREATE TRIGGER enrollments_changes_delete
    AFTER DELETE ON incentives.enrollments
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER enrollments_changes_delete ON incentives.enrollments IS
  'Change tracking for refresh_earnings(changed_only => true): the participants of the changed enrollment windows (deletes)';
DROP TRIGGER IF EXISTS enrollments_changes_truncate ON incentives.enrollments;
CREATE TRIGGER enrollments_changes_truncate
    AFTER TRUNCATE ON incentives.enrollments
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('participants');
COMMENT ON TRIGGER enrollments_changes_truncate ON incentives.enrollments IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.participant_groups: the members and the groups of the
-- changed memberships (a group brings all its members at the refresh)
CREATE OR REPLACE FUNCTION incentives_internal.track_group_changes()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT n.participant_key FROM incentives_new_rows AS n
        UNION
        SELECT n.group_key FROM incentives_new_rows AS n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT n.participant_key FROM incentives_new_rows AS n
        UNION
        SELECT n.group_key FROM incentives_new_rows AS n
        UNION
        SELECT o.participant_key FROM incentives_old_rows AS o
        UNION
        SELECT o.group_key FROM incentives_old_rows AS o;
    ELSE
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT o.participant_key FROM incentives_old_rows AS o
        UNION
        SELECT o.group_key FROM incentives_old_rows AS o;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.track_group_changes() IS
  'Trigger: logs in incentives.earnings_changes the members and the groups of the memberships a statement changed (a refresh of changed participants recalculates each one''s whole group); everyone on TRUNCATE';

DROP TRIGGER IF EXISTS participant_groups_changes_insert ON incentives.participant_groups;
CREATE TRIGGER participant_groups_changes_insert
    AFTER INSERT ON incentives.participant_groups
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_changes();
COMMENT ON TRIGGER participant_groups_changes_insert ON incentives.participant_groups IS
  'Change tracking for refresh_earnings(changed_only => true): the members and groups of the changed memberships (inserts)';
DROP TRIGGER IF EXISTS participant_groups_changes_update ON incentives.participant_groups;
CREATE TRIGGER participant_groups_changes_update
    AFTER UPDATE ON incentives.participant_groups
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_changes();
COMMENT ON TRIGGER participant_groups_changes_update ON incentives.participant_groups IS
  'Change tracking for refresh_earnings(changed_only => true): the members and groups of the changed memberships (updates)';
DROP TRIGGER IF EXISTS participant_groups_changes_delete ON incentives.participant_groups;
CREATE TRIGGER participant_groups_changes_delete
    AFTER DELETE ON incentives.participant_groups
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_changes();
COMMENT ON TRIGGER participant_groups_changes_delete ON incentives.participant_groups IS
  'Change tracking for refresh_earnings(changed_only => true): the members and groups of the changed memberships (deletes)';
DROP TRIGGER IF EXISTS participant_groups_changes_truncate ON incentives.participant_groups;
CREATE TRIGGER participant_groups_changes_truncate
    AFTER TRUNCATE ON incentives.participant_groups
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_group_changes();
COMMENT ON TRIGGER participant_groups_changes_truncate ON incentives.participant_groups IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.offers: everyone (an offer changed)
DROP TRIGGER IF EXISTS offers_changes_insert ON incentives.offers;
CREATE TRIGGER offers_changes_insert
    AFTER INSERT ON incentives.offers
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER offers_changes_insert ON incentives.offers IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an offer changed (inserts)';
DROP TRIGGER IF EXISTS offers_changes_update ON incentives.offers;
CREATE TRIGGER offers_changes_update
    AFTER UPDATE ON incentives.offers
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER offers_changes_update ON incentives.offers IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an offer changed (updates)';
DROP TRIGGER IF EXISTS offers_changes_delete ON incentives.offers;
CREATE TRIGGER offers_changes_delete
    AFTER DELETE ON incentives.offers
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER offers_changes_delete ON incentives.offers IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: an offer changed (deletes)';
DROP TRIGGER IF EXISTS offers_changes_truncate ON incentives.offers;
CREATE TRIGGER offers_changes_truncate
    AFTER TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER offers_changes_truncate ON incentives.offers IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.skus: everyone (a SKU changed)
DROP TRIGGER IF EXISTS skus_changes_insert ON incentives.skus;
CREATE TRIGGER skus_changes_insert
    AFTER INSERT ON incentives.skus
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER skus_changes_insert ON incentives.skus IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU changed (inserts)';
DROP TRIGGER IF EXISTS skus_changes_update ON incentives.skus;
CREATE TRIGGER skus_changes_update
    AFTER UPDATE ON incentives.skus
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER skus_changes_update ON incentives.skus IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU changed (updates)';
DROP TRIGGER IF EXISTS skus_changes_delete ON incentives.skus;
CREATE TRIGGER skus_changes_delete
    AFTER DELETE ON incentives.skus
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER skus_changes_delete ON incentives.skus IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a SKU changed (deletes)';
DROP TRIGGER IF EXISTS skus_changes_truncate ON incentives.skus;
CREATE TRIGGER skus_changes_truncate
    AFTER TRUNCATE ON incentives.skus
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER skus_changes_truncate ON incentives.skus IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- incentives.uom_conversions: everyone (a unit conversion changed)
DROP TRIGGER IF EXISTS uom_conversions_changes_insert ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changes_insert
    AFTER INSERT ON incentives.uom_conversions
    REFERENCING NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER uom_conversions_changes_insert ON incentives.uom_conversions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a unit conversion changed (inserts)';
DROP TRIGGER IF EXISTS uom_conversions_changes_update ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changes_update
    AFTER UPDATE ON incentives.uom_conversions
    REFERENCING OLD TABLE AS incentives_old_rows NEW TABLE AS incentives_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER uom_conversions_changes_update ON incentives.uom_conversions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a unit conversion changed (updates)';
DROP TRIGGER IF EXISTS uom_conversions_changes_delete ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changes_delete
    AFTER DELETE ON incentives.uom_conversions
    REFERENCING OLD TABLE AS incentives_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER uom_conversions_changes_delete ON incentives.uom_conversions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone: a unit conversion changed (deletes)';
DROP TRIGGER IF EXISTS uom_conversions_changes_truncate ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_changes_truncate
    AFTER TRUNCATE ON incentives.uom_conversions
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.track_changes('everyone');
COMMENT ON TRIGGER uom_conversions_changes_truncate ON incentives.uom_conversions IS
  'Change tracking for refresh_earnings(changed_only => true): everyone (TRUNCATE)';

-- ---- src/sql/incentives/code/50_reporting.sql

------------------------------------------------------------------------
-- Reporting views over incentives.earnings: each groups the materialized
-- earnings by a key (participant, offer, SKU, month, group) and measures the
-- group.
------------------------------------------------------------------------

CREATE OR REPLACE VIEW incentives.earnings_by_participant WITH (security_invoker = true) AS
SELECT e.participant_key,
       count(DISTINCT e.offer_key)      AS offers,
       count(DISTINCT e.transaction_id) AS transactions,
       count(*)                         AS rows,
       sum(e.incentivized_amount)       AS incentivized_amount,
       sum(e.incentive_amount)          AS incentive_amount,
       max(e.calculated_at)             AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.participant_key;
COMMENT ON VIEW incentives.earnings_by_participant IS 'Materialized earnings per participant';
COMMENT ON COLUMN incentives.earnings_by_participant.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.earnings_by_participant.offers IS 'Offers it earns under';
COMMENT ON COLUMN incentives.earnings_by_participant.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_participant.rows IS 'Earning rows (a transaction earns once per offer and rate key)';
COMMENT ON COLUMN incentives.earnings_by_participant.incentivized_amount IS 'Sum of incentivized_amount over the rows (a transaction earning under two rates counts twice)';
COMMENT ON COLUMN incentives.earnings_by_participant.incentive_amount IS 'Total incentive earned';
COMMENT ON COLUMN incentives.earnings_by_participant.calculated_at IS 'When the newest of its rows was calculated';

CREATE OR REPLACE VIEW incentives.earnings_by_offer WITH (security_invoker = true) AS
SELECT e.offer_key,
       min(e.offer_calculator)           AS offer_calculator,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.offer_key;
COMMENT ON VIEW incentives.earnings_by_offer IS 'Materialized earnings per offer';
COMMENT ON COLUMN incentives.earnings_by_offer.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.earnings_by_offer.offer_calculator IS 'Its calculator';
COMMENT ON COLUMN incentives.earnings_by_offer.participants IS 'Participants earning under it';
COMMENT ON COLUMN incentives.earnings_by_offer.transactions IS 'Distinct transactions that earn under it';
COMMENT ON COLUMN incentives.earnings_by_offer.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_offer.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_offer.incentive_amount IS 'Total incentive paid by the offer';
COMMENT ON COLUMN incentives.earnings_by_offer.calculated_at IS 'When the newest of its rows was calculated';

CREATE OR REPLACE VIEW incentives.earnings_by_sku WITH (security_invoker = true) AS
SELECT e.sku_key,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_quantity)      AS incentivized_quantity,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.sku_key;
COMMENT ON VIEW incentives.earnings_by_sku IS 'Materialized earnings per SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.sku_key IS 'The SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.offers IS 'Offers it earns under';
COMMENT ON COLUMN incentives.earnings_by_sku.participants IS 'Participants earning on it';
COMMENT ON COLUMN incentives.earnings_by_sku.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_sku.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_sku.incentivized_quantity IS 'Sum of incentivized_quantity over the rows, in the SKU''s unit of measure (incentives.skus; each transaction''s own unit when the SKU is not there)';
COMMENT ON COLUMN incentives.earnings_by_sku.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_sku.incentive_amount IS 'Total incentive earned on the SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.calculated_at IS 'When the newest of its rows was calculated';

CREATE OR REPLACE VIEW incentives.earnings_by_month WITH (security_invoker = true) AS
SELECT CAST(date_trunc('month', e.transaction_date) AS date) AS month,
       count(DISTINCT e.participant_key)                     AS participants,
       count(DISTINCT e.offer_key)                           AS offers,
       count(DISTINCT e.transaction_id)                      AS transactions,
       count(*)                                              AS rows,
       sum(e.incentivized_amount)                            AS incentivized_amount,
       sum(e.incentive_amount)                               AS incentive_amount,
       max(e.calculated_at)                                  AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY 1;
COMMENT ON VIEW incentives.earnings_by_month IS 'Materialized earnings per calendar month of the transaction date';
COMMENT ON COLUMN incentives.earnings_by_month.month IS 'First day of the month of the earning transactions'' date';
COMMENT ON COLUMN incentives.earnings_by_month.participants IS 'Participants earning in the month';
COMMENT ON COLUMN incentives.earnings_by_month.offers IS 'Offers earned under in the month';
COMMENT ON COLUMN incentives.earnings_by_month.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_month.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_month.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_month.incentive_amount IS 'Total incentive earned by the month''s transactions';
COMMENT ON COLUMN incentives.earnings_by_month.calculated_at IS 'When the newest of its rows was calculated';

CREATE OR REPLACE VIEW incentives.earnings_by_group WITH (security_invoker = true) AS
SELECT e.group_key,
       count(DISTINCT e.participant_key) AS members,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at
  FROM incentives.earnings AS e
 WHERE e.group_key IS NOT NULL
 GROUP BY e.group_key;
COMMENT ON VIEW incentives.earnings_by_group IS 'Materialized earnings per group: the rows of offers aggregated by group computed over a group''s figures (docs/reference.md, Participant groups); a reader sees the rows of the members it may see';
COMMENT ON COLUMN incentives.earnings_by_group.group_key IS 'The group';
COMMENT ON COLUMN incentives.earnings_by_group.members IS 'Members with earning rows under it';
COMMENT ON COLUMN incentives.earnings_by_group.offers IS 'Offers aggregated by group its members earn under';
COMMENT ON COLUMN incentives.earnings_by_group.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_group.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_group.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_group.incentive_amount IS 'Total incentive earned by its members under it';
COMMENT ON COLUMN incentives.earnings_by_group.calculated_at IS 'When the newest of its rows was calculated';

-- ---- src/sql/incentives/code/55_settle.sql

------------------------------------------------------------------------
-- Settlement (docs/lifecycle.md, "Settlement statements")
--
-- CALL incentives.settle(statement_date, participant_key) writes one
-- statement and its lines: for every (participant, offer) with earnings
-- through statement_date or earlier settlements, what was earned to date,
-- what earlier lines settled, and the difference due.  A tier reached late
-- pays the difference (true-up); a return after payment comes back as a
-- negative amount due (clawback).
--
-- One transaction: the statement and all its lines, or nothing.  CALLed
-- outside a transaction block the procedure commits its statement before
-- it returns; inside one, it is part of the caller's transaction.
--
-- Serialized: every settle takes one transaction-level advisory lock
-- before it reads the earlier lines, and reads them with a snapshot taken
-- after it has the lock (READ COMMITTED; a settle in a REPEATABLE READ or
-- SERIALIZABLE transaction block is refused, its snapshot could predate
-- another settle's commit).  So a second settle waits for the first to
-- commit and then counts its lines as settled: the same earnings are never
-- due twice.
--
-- Statements and lines are append-only: UPDATE, DELETE and TRUNCATE are
-- refused for every role (no exception; 16_append_only.sql); corrections
-- are the next statement's business.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.settle_work(statement_date date, participant_key text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_date        date := settle_work.statement_date;
    v_participant text := settle_work.participant_key;
    v_id          bigint;
    v_late        record;
    v_lines       integer;
    v_due         numeric;
BEGIN
    IF v_date IS NULL THEN
        RAISE EXCEPTION 'statement_date must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'incentives.settle needs isolation level READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
              USING ERRCODE = 'invalid_transaction_state',
                    DETAIL = 'It reads the earlier statements after it has waited for any other settle to commit; a snapshot taken before that could count the same earnings twice.',
                    HINT = 'CALL it outside a transaction block, or in a READ COMMITTED one.';
    END IF;

    -- One settle at a time; everything below reads after the wait.
    PERFORM pg_advisory_xact_lock(hashtext('incentives.statements'), 0);

    CREATE TEMPORARY TABLE incentives_settle_lines (
        participant_key text NOT NULL,
        offer_key       text NOT NULL,
        earned_to_date  numeric NOT NULL,
        settled_before  numeric NOT NULL
    ) ON COMMIT DROP;
    INSERT INTO pg_temp.incentives_settle_lines
    WITH earned AS (
        SELECT e.participant_key, e.offer_key, sum(e.incentive_amount) AS amount
          FROM incentives.incentive_calculate(participant_key => v_participant,
                                              through_date => v_date) AS e
         GROUP BY e.participant_key, e.offer_key),
    settled AS (
        SELECT l.participant_key, l.offer_key, sum(l.amount_due) AS amount
          FROM incentives.statement_lines AS l
         WHERE v_participant IS NULL OR l.participant_key = v_participant
         GROUP BY l.participant_key, l.offer_key)
    SELECT COALESCE(e.participant_key, s.participant_key),
           COALESCE(e.offer_key, s.offer_key),
           round(COALESCE(e.amount, 0), 2),
           round(COALESCE(s.amount, 0), 2)
      FROM earned AS e
      FULL JOIN settled AS s
        ON s.participant_key = e.participant_key AND s.offer_key = e.offer_key
     WHERE COALESCE(e.amount, 0) <> 0 OR COALESCE(s.amount, 0) <> 0;

    -- No statement earlier than the latest one of a participant it covers
    -- (a statement covers the participant it names and those it has lines
    -- for).
    SELECT c.participant_key, max(st.statement_date) AS latest INTO v_late
      FROM (SELECT v_participant AS participant_key WHERE v_participant IS NOT NULL
            UNION
            SELECT n.participant_key FROM pg_temp.incentives_settle_lines AS n) AS c
      JOIN incentives.statements AS st
        ON st.participant_key = c.participant_key
        OR EXISTS (SELECT 1 FROM incentives.statement_lines AS l
                    WHERE l.statement_id = st.statement_id AND l.participant_key = c.participant_key)
     GROUP BY c.participant_key
    HAVING max(st.statement_date) > v_date
     ORDER BY max(st.statement_date) DESC, c.participant_key COLLATE "C"
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'statement_date % is earlier than the latest statement of participant "%" (%)',
                        v_date, v_late.participant_key, v_late.latest
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Statements go forward in time: settle on or after the latest statement date.';
    END IF;

    INSERT INTO incentives.statements (statement_date, participant_key)
    VALUES (v_date, v_participant)
    RETURNING statement_id INTO v_id;
    INSERT INTO incentives.statement_lines (statement_id, participant_key, offer_key,
                                            earned_to_date, settled_before, amount_due)
    SELECT v_id, n.participant_key, n.offer_key, n.earned_to_date, n.settled_before,
           n.earned_to_date - n.settled_before
      FROM pg_temp.incentives_settle_lines AS n
     ORDER BY n.participant_key COLLATE "C", n.offer_key COLLATE "C";
    GET DIAGNOSTICS v_lines = ROW_COUNT;
    SELECT COALESCE(sum(n.earned_to_date - n.settled_before), 0.00) INTO v_due
      FROM pg_temp.incentives_settle_lines AS n;
    DROP TABLE pg_temp.incentives_settle_lines;

    RAISE NOTICE 'settle: statement % of % (%): % lines, % due',
                 v_id, v_date, CASE WHEN v_participant IS NULL THEN 'every participant' ELSE format('participant "%s"', v_participant) END,
                 v_lines, v_due;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives_internal.settle_work(date, text) IS
  'Part of incentives.settle (call the procedure, not this): waits for any other settle, writes the statement and its lines, returns the statement_id';

CREATE OR REPLACE PROCEDURE incentives.settle(
    statement_date  date,
    participant_key text DEFAULT NULL)
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name is
-- schema-qualified; the SQL work is in incentives_internal.settle_work.
DECLARE
    v_can_commit boolean := incentives_internal.transaction_control_allowed();
BEGIN
    IF v_can_commit THEN
        -- a fresh READ COMMITTED transaction of its own, whatever the
        -- session's default isolation
        COMMIT;
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    END IF;
    PERFORM incentives_internal.settle_work(settle.statement_date, settle.participant_key);
    IF v_can_commit THEN
        COMMIT;   -- the statement is durable when CALL returns
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.settle(date, text) IS
  'Writes a settlement statement for the earnings through statement_date of one participant or all (NULL): per participant and offer earned_to_date, settled_before and amount_due (true-ups positive, clawbacks negative), in one transaction; serialized against other settles; refuses a date before a covered participant''s latest statement (22023)';

------------------------------------------------------------------------
-- Views for finance and BI
------------------------------------------------------------------------

CREATE OR REPLACE VIEW incentives.participant_statements WITH (security_invoker = true) AS
SELECT s.statement_id,
       s.statement_date,
       COALESCE(l.participant_key, s.participant_key) AS participant_key,
       count(l.offer_key)                             AS offers,
       COALESCE(sum(l.earned_to_date), 0.00)          AS earned_to_date,
       COALESCE(sum(l.settled_before), 0.00)          AS settled_before,
       COALESCE(sum(l.amount_due), 0.00)              AS amount_due,
       COALESCE(jsonb_agg(jsonb_build_object('offer_key', l.offer_key,
                                             'earned_to_date', l.earned_to_date,
                                             'settled_before', l.settled_before,
                                             'amount_due', l.amount_due)
                          ORDER BY l.offer_key COLLATE "C")
                FILTER (WHERE l.offer_key IS NOT NULL), '[]'::jsonb) AS lines,
       s.created_at,
       s.created_by
  FROM incentives.statements AS s
  LEFT JOIN incentives.statement_lines AS l ON l.statement_id = s.statement_id
 WHERE COALESCE(l.participant_key, s.participant_key) IS NOT NULL
 GROUP BY s.statement_id, s.statement_date, COALESCE(l.participant_key, s.participant_key),
          s.created_at, s.created_by;
COMMENT ON VIEW incentives.participant_statements IS
  'One statement per participant: its totals and its lines (a JSON array, one object per offer), what finance sends the participant';
COMMENT ON COLUMN incentives.participant_statements.statement_id IS 'The statement';
COMMENT ON COLUMN incentives.participant_statements.statement_date IS 'Earnings settled through this date';
COMMENT ON COLUMN incentives.participant_statements.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.participant_statements.offers IS 'Lines (offers) on the participant''s statement';
COMMENT ON COLUMN incentives.participant_statements.earned_to_date IS 'Sum of the lines'' earned_to_date';
COMMENT ON COLUMN incentives.participant_statements.settled_before IS 'Sum of the lines'' settled_before';
COMMENT ON COLUMN incentives.participant_statements.amount_due IS 'What is due to the participant (negative: owed back)';
COMMENT ON COLUMN incentives.participant_statements.lines IS 'The lines: [{offer_key, earned_to_date, settled_before, amount_due}] in offer order';
COMMENT ON COLUMN incentives.participant_statements.created_at IS 'When the statement was written';
COMMENT ON COLUMN incentives.participant_statements.created_by IS 'Who ran incentives.settle';

CREATE OR REPLACE VIEW incentives.settlement_balances WITH (security_invoker = true) AS
SELECT l.participant_key,
       l.offer_key,
       sum(l.amount_due)  AS settled_total,
       count(*)           AS statements,
       (array_agg(s.statement_id ORDER BY s.statement_date DESC, s.statement_id DESC))[1]   AS last_statement_id,
       max(s.statement_date)                                                                AS last_statement_date,
       (array_agg(l.amount_due ORDER BY s.statement_date DESC, s.statement_id DESC))[1]     AS last_amount_due
  FROM incentives.statement_lines AS l
  JOIN incentives.statements AS s ON s.statement_id = l.statement_id
 GROUP BY l.participant_key, l.offer_key;
COMMENT ON VIEW incentives.settlement_balances IS
  'Per participant and offer: everything settled so far and the last statement';
COMMENT ON COLUMN incentives.settlement_balances.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.settlement_balances.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.settlement_balances.settled_total IS 'Sum of amount_due over all its lines (= earned_to_date of the last one)';
COMMENT ON COLUMN incentives.settlement_balances.statements IS 'Statements with a line for it';
COMMENT ON COLUMN incentives.settlement_balances.last_statement_id IS 'The latest statement with a line for it';
COMMENT ON COLUMN incentives.settlement_balances.last_statement_date IS 'Its statement_date';
COMMENT ON COLUMN incentives.settlement_balances.last_amount_due IS 'What the latest statement settled (negative: a clawback)';

CREATE OR REPLACE VIEW incentives.unsettled_earnings WITH (security_invoker = true) AS
WITH accrued AS (
    SELECT e.participant_key, e.offer_key,
           sum(e.incentive_amount) AS amount,
           max(e.calculated_at)    AS calculated_at
      FROM incentives.earnings AS e
     GROUP BY e.participant_key, e.offer_key),
settled AS (
    SELECT l.participant_key, l.offer_key,
           sum(l.amount_due)     AS amount,
           max(s.statement_date) AS last_statement_date
      FROM incentives.statement_lines AS l
      JOIN incentives.statements AS s ON s.statement_id = l.statement_id
     GROUP BY l.participant_key, l.offer_key)
SELECT COALESCE(a.participant_key, s.participant_key)  AS participant_key,
       COALESCE(a.offer_key, s.offer_key)              AS offer_key,
       COALESCE(a.amount, 0.00)                        AS accrued,
       COALESCE(s.amount, 0.00)                        AS settled,
       COALESCE(a.amount, 0.00) - COALESCE(s.amount, 0.00) AS unsettled,
       s.last_statement_date,
       a.calculated_at
  FROM accrued AS a
  FULL JOIN settled AS s
    ON s.participant_key = a.participant_key AND s.offer_key = a.offer_key;
COMMENT ON VIEW incentives.unsettled_earnings IS
  'Per participant and offer: accrued earnings (the materialized incentives.earnings, all dates) against what statements settled; unsettled is what the next statements will pay (negative: claw back)';
COMMENT ON COLUMN incentives.unsettled_earnings.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.unsettled_earnings.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.unsettled_earnings.accrued IS 'Sum of incentive_amount in incentives.earnings (as of its last refresh)';
COMMENT ON COLUMN incentives.unsettled_earnings.settled IS 'Sum of amount_due of its statement lines';
COMMENT ON COLUMN incentives.unsettled_earnings.unsettled IS 'accrued - settled';
COMMENT ON COLUMN incentives.unsettled_earnings.last_statement_date IS 'Its latest statement''s date (NULL: never settled)';
COMMENT ON COLUMN incentives.unsettled_earnings.calculated_at IS 'When its materialized earnings were calculated (NULL: none)';

-- ---- src/sql/incentives/code/57_forecast.sql

------------------------------------------------------------------------
-- Forecast and accrual (docs/reference.md, Forecast; docs/lifecycle.md,
-- Accruals)
--
-- incentives.forecast(as_of_date, ...) asks the engine: per participant
-- and offer, the calculation through as_of_date and the same calculation
-- with every transaction of the offer's span to date projected to the
-- span's end at the same pace (core/engine/forecast.c), and the
-- straight-line share of the projected payout accrued by as_of_date.
-- Nothing here re-derives a figure.
--
-- CALL incentives.accrue(as_of_date) books that share: one accrual and its
-- lines, per participant and offer accrued to date, accrued before (the
-- previous line's) and the difference, the journal entry.  As settle does
-- (55_settle.sql): one transaction, serialized by a transaction-level
-- advisory lock and a READ COMMITTED snapshot taken after it, and refused
-- for an as_of_date before the latest accrual; append-only tables
-- (16_append_only.sql).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.forecast(
    as_of_date      date,
    participant_key text     DEFAULT NULL,
    offer_keys      text[]   DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.forecast_row
AS 'MODULE_PATHNAME', 'incentives_forecast'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.forecast(date, text, text[], regclass) IS
  'Per participant and offer with a row in either calculation: earned through as_of_date, projected to the end of the offer''s span at the same pace (transactions dated span_start..as_of_date x span_days / elapsed_days; tiers, pools, requirements and limits on the projected volume), the stepped basis and tier of each, and accrual_to_date = round(projected x elapsed / span, 2); stored properties; runs with the caller''s rights';

CREATE OR REPLACE FUNCTION incentives_internal.accrue_work(as_of_date date)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_date   date := accrue_work.as_of_date;
    v_latest date;
    v_id     bigint;
    v_lines  integer;
    v_delta  numeric;
BEGIN
    IF v_date IS NULL THEN
        RAISE EXCEPTION 'as_of_date must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'incentives.accrue needs isolation level READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
              USING ERRCODE = 'invalid_transaction_state',
                    DETAIL = 'It reads the earlier accruals after it has waited for any other accrue to commit; a snapshot taken before that could book the same accrual twice.',
                    HINT = 'CALL it outside a transaction block, or in a READ COMMITTED one.';
    END IF;

    -- One accrue at a time; everything below reads after the wait.
    PERFORM pg_advisory_xact_lock(hashtext('incentives.accruals'), 0);

    SELECT max(a.as_of_date) INTO v_latest FROM incentives.accruals AS a;
    IF v_latest > v_date THEN
        RAISE EXCEPTION 'as_of_date % is earlier than the latest accrual (%)', v_date, v_latest
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Accruals go forward in time: accrue on or after the latest as_of_date.';
    END IF;

    INSERT INTO incentives.accruals (as_of_date) VALUES (v_date) RETURNING accrual_id INTO v_id;
    INSERT INTO incentives.accrual_lines (accrual_id, participant_key, offer_key,
                                          accrued_to_date, accrued_before, delta)
    WITH accrued AS (
        -- a member that moved between groups has a forecast row per group
        SELECT f.participant_key, f.offer_key, sum(f.accrual_to_date) AS amount
          FROM incentives.forecast(v_date) AS f
         GROUP BY f.participant_key, f.offer_key),
    before AS (
        SELECT DISTINCT ON (l.participant_key, l.offer_key)
               l.participant_key, l.offer_key, l.accrued_to_date AS amount
          FROM incentives.accrual_lines AS l
         WHERE l.accrual_id < v_id
         ORDER BY l.participant_key, l.offer_key, l.accrual_id DESC),
    lines AS (
        SELECT COALESCE(a.participant_key, b.participant_key) AS participant_key,
               COALESCE(a.offer_key, b.offer_key)             AS offer_key,
               COALESCE(a.amount, 0.00)                       AS accrued_to_date,
               COALESCE(b.amount, 0.00)                       AS accrued_before
          FROM accrued AS a
          FULL JOIN before AS b
            ON b.participant_key = a.participant_key AND b.offer_key = a.offer_key)
    SELECT v_id, n.participant_key, n.offer_key, n.accrued_to_date, n.accrued_before,
           n.accrued_to_date - n.accrued_before
      FROM lines AS n
     WHERE n.accrued_to_date <> 0 OR n.accrued_before <> 0
     ORDER BY n.participant_key COLLATE "C", n.offer_key COLLATE "C";
    GET DIAGNOSTICS v_lines = ROW_COUNT;
    SELECT COALESCE(sum(l.delta), 0.00) INTO v_delta
      FROM incentives.accrual_lines AS l
     WHERE l.accrual_id = v_id;

    RAISE NOTICE 'accrue: accrual % as of %: % lines, % booked', v_id, v_date, v_lines, v_delta;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives_internal.accrue_work(date) IS
  'Part of incentives.accrue (call the procedure, not this): waits for any other accrue, writes the accrual and its lines, returns the accrual_id';

CREATE OR REPLACE PROCEDURE incentives.accrue(as_of_date date)
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name is
-- schema-qualified; the SQL work is in incentives_internal.accrue_work.
DECLARE
    v_can_commit boolean := incentives_internal.transaction_control_allowed();
BEGIN
    IF v_can_commit THEN
        -- a fresh READ COMMITTED transaction of its own, whatever the
        -- session's default isolation
        COMMIT;
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    END IF;
    PERFORM incentives_internal.accrue_work(accrue.as_of_date);
    IF v_can_commit THEN
        COMMIT;   -- the accrual is durable when CALL returns
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.accrue(date) IS
  'Books the accrual as of as_of_date: per participant and offer the forecast''s accrual_to_date, the previous accrual of the pair and the difference (the journal entry), in one transaction; serialized against other accrues; refuses a date before the latest accrual (22023)';

CREATE OR REPLACE VIEW incentives.accrual_balances WITH (security_invoker = true) AS
WITH latest AS (
    SELECT DISTINCT ON (l.participant_key, l.offer_key)
           l.participant_key, l.offer_key, l.accrual_id, a.as_of_date,
           l.accrued_to_date, l.delta
      FROM incentives.accrual_lines AS l
      JOIN incentives.accruals AS a ON a.accrual_id = l.accrual_id
     ORDER BY l.participant_key, l.offer_key, l.accrual_id DESC),
settled AS (
    SELECT l.participant_key, l.offer_key,
           sum(l.amount_due)     AS amount,
           max(s.statement_date) AS last_statement_date
      FROM incentives.statement_lines AS l
      JOIN incentives.statements AS s ON s.statement_id = l.statement_id
     GROUP BY l.participant_key, l.offer_key)
SELECT COALESCE(a.participant_key, s.participant_key)         AS participant_key,
       COALESCE(a.offer_key, s.offer_key)                     AS offer_key,
       a.accrual_id                                           AS last_accrual_id,
       a.as_of_date                                           AS last_as_of_date,
       COALESCE(a.accrued_to_date, 0.00)                      AS accrued,
       a.delta                                                AS last_delta,
       COALESCE(s.amount, 0.00)                               AS settled,
       COALESCE(a.accrued_to_date, 0.00) - COALESCE(s.amount, 0.00) AS accrued_unsettled,
       s.last_statement_date
  FROM latest AS a
  FULL JOIN settled AS s
    ON s.participant_key = a.participant_key AND s.offer_key = a.offer_key;
COMMENT ON VIEW incentives.accrual_balances IS
  'Per participant and offer: its latest accrual beside what settlement statements have paid; accrued_unsettled is the liability still on the books';
COMMENT ON COLUMN incentives.accrual_balances.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.accrual_balances.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.accrual_balances.last_accrual_id IS 'The latest accrual with a line for it (NULL: never accrued)';
COMMENT ON COLUMN incentives.accrual_balances.last_as_of_date IS 'Its as_of_date';
COMMENT ON COLUMN incentives.accrual_balances.accrued IS 'accrued_to_date of that line (0.00: never accrued)';
COMMENT ON COLUMN incentives.accrual_balances.last_delta IS 'What that accrual booked (negative: a reversal)';
COMMENT ON COLUMN incentives.accrual_balances.settled IS 'Sum of amount_due of its statement lines';
COMMENT ON COLUMN incentives.accrual_balances.accrued_unsettled IS 'accrued - settled';
COMMENT ON COLUMN incentives.accrual_balances.last_statement_date IS 'Its latest statement''s date (NULL: never settled)';

-- ---- src/sql/incentives/code/60_calculate_json.sql

------------------------------------------------------------------------
-- The JSON entry point: a calculation request with inline transactions
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.calculate(request jsonb)
RETURNS jsonb
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_participant text;
    v_properties  jsonb;
    v_keys        jsonb;
    v_offer_keys  text[];
    v_lines       jsonb;
    v_stored      boolean;
    v_problem     text;
    v_relation    regclass;
    v_enrollments jsonb;
    v_as_of       timestamptz;
    v_through     date;
    v_rules       jsonb;
    v_result      jsonb;
    v_message     text;
    v_detail      text;
    v_hint        text;
BEGIN
    PERFORM incentives_internal.request_refuse(
        CASE WHEN request IS NULL OR jsonb_typeof(request) <> 'object'
             THEN 'the request must be a JSON object' END);

    -- Each field in turn (the first fault is the one reported); absent or
    -- JSON null, a field takes its default.  as_of: the offers as they
    -- were then (docs/lifecycle.md); through_date: only transactions dated
    -- on or before it.
    v_participant := incentives_internal.request_field(request, 'participant_key', 'string') #>> '{}';
    v_properties  := COALESCE(incentives_internal.request_field(request, 'properties', 'object of numbers'), '{}');
    v_as_of       := incentives_internal.request_field(request, 'as_of', 'timestamp') #>> '{}';
    v_through     := incentives_internal.request_field(request, 'through_date', 'date') #>> '{}';
    v_keys        := incentives_internal.request_field(request, 'offer_keys', 'array of strings');
    IF v_keys IS NOT NULL THEN
        v_offer_keys := ARRAY(SELECT k.v FROM jsonb_array_elements_text(v_keys) WITH ORDINALITY AS k(v, n)
                               ORDER BY k.n);
    END IF;
    -- every key names an offer (the calculation would refuse it too, but
    -- without the request's path)
    PERFORM incentives_internal.request_refuse((
        SELECT format('offer_keys[%s] names no offer ("%s")', k.n - 1, k.v)
          FROM unnest(v_offer_keys) WITH ORDINALITY AS k(v, n)
         WHERE NOT EXISTS (SELECT FROM incentives.offers AS o
                            WHERE o.offer_key = k.v AND v_as_of IS NULL)
           AND NOT EXISTS (SELECT FROM incentives.offer_versions AS o
                            WHERE o.offer_key = k.v AND v_as_of IS NOT NULL
                              AND o.valid_from <= v_as_of
                              AND (o.valid_to IS NULL OR o.valid_to > v_as_of))
         ORDER BY k.n
         LIMIT 1));
    v_stored := COALESCE(incentives_internal.request_field(request, 'include_stored', 'boolean')::boolean, false);
    PERFORM incentives_internal.request_refuse(
        CASE WHEN v_stored AND v_participant IS NULL
             THEN 'participant_key is required when include_stored is true' END);

    -- Every field of every inline transaction, first fault first (0-based
    -- indexes, as in offer paths).  Dates: YYYY-MM-DD and a real day.
    v_lines := COALESCE(incentives_internal.request_field(request, 'transactions', 'array'), '[]');
    PERFORM incentives_internal.request_refuse((
        SELECT format('transactions[%s]%s', t.n - 1, f.problem)
          FROM jsonb_array_elements(v_lines) WITH ORDINALITY AS t(v, n)
         CROSS JOIN LATERAL (
            SELECT x.problem
              FROM (VALUES
                (0, CASE WHEN jsonb_typeof(t.v) <> 'object' THEN ' must be a JSON object' END),
                (1, '.' || incentives_internal.request_field_problem(t.v, 'transaction_id', 'string', true)),
                (2, '.' || incentives_internal.request_participant_problem(t.v, v_participant)),
                (3, '.' || incentives_internal.request_field_problem(t.v, 'transaction_type', 'string', true)),
                (4, '.' || incentives_internal.request_field_problem(t.v, 'transaction_date', 'date', true)),
                (5, '.' || incentives_internal.request_field_problem(t.v, 'sku_key', 'string', true)),
                (6, '.' || incentives_internal.request_field_problem(t.v, 'quantity', 'number', true)),
                (7, '.' || incentives_internal.request_field_problem(t.v, 'uom_key', 'string', true)),
                (8, '.' || incentives_internal.request_field_problem(t.v, 'amount', 'number', true))
              ) AS x(k, problem)
             WHERE x.problem IS NOT NULL
             ORDER BY x.k
             LIMIT 1) AS f
         ORDER BY t.n
         LIMIT 1));
    -- A transaction_id at most once in the request.
    PERFORM incentives_internal.request_refuse((
        SELECT format('transactions[%s].transaction_id duplicates transactions[%s] ("%s")',
                      d.n - 1, d.first - 1, d.id)
          FROM (SELECT t.v ->> 'transaction_id' AS id, t.n,
                       min(t.n) OVER (PARTITION BY t.v ->> 'transaction_id') AS first
                  FROM jsonb_array_elements(v_lines) WITH ORDINALITY AS t(v, n)) AS d
         WHERE d.n <> d.first
         ORDER BY d.n
         LIMIT 1));

    -- enrollments: optional array of enrollment windows, added to the
    -- stored ones for this call (docs/reference.md, Enrollment): a what-if
    -- of a participant not enrolled yet.
    v_enrollments := COALESCE(incentives_internal.request_field(request, 'enrollments', 'array'), '[]');
    PERFORM incentives_internal.request_refuse((
        SELECT format('enrollments[%s]%s', w.n - 1, f.problem)
          FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n)
         CROSS JOIN LATERAL (
            SELECT x.problem
              FROM (VALUES
                (0, CASE WHEN jsonb_typeof(w.v) <> 'object' THEN ' must be a JSON object' END),
                (1, '.' || incentives_internal.request_participant_problem(w.v, v_participant)),
                (2, '.' || incentives_internal.request_field_problem(w.v, 'offer_key', 'string', true)),
                (3, '.' || incentives_internal.request_field_problem(w.v, 'start_date', 'date', true)),
                (4, '.' || incentives_internal.request_field_problem(w.v, 'end_date', 'date')),
                (5, CASE WHEN jsonb_typeof(w.v) = 'object'
                          AND jsonb_typeof(w.v -> 'start_date') = 'string'
                          AND jsonb_typeof(w.v -> 'end_date') = 'string'
                          AND incentives_internal.calculate_is_date(w.v ->> 'start_date')
                          AND incentives_internal.calculate_is_date(w.v ->> 'end_date')
                          AND (w.v ->> 'end_date')::date < (w.v ->> 'start_date')::date
                         THEN '.end_date must not be before start_date' END)
              ) AS x(k, problem)
             WHERE x.problem IS NOT NULL
             ORDER BY x.k
             LIMIT 1) AS f
         ORDER BY w.n
         LIMIT 1));
    -- Two windows of one participant and offer in the request may not
    -- overlap (both ends inclusive, no end_date: open ended).
    PERFORM incentives_internal.request_refuse((
        WITH w AS (
            SELECT w.n, COALESCE(w.v ->> 'participant_key', v_participant) AS participant_key,
                   w.v ->> 'offer_key' AS offer_key, (w.v ->> 'start_date')::date AS start_date,
                   COALESCE((w.v ->> 'end_date')::date, 'infinity') AS end_date
              FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n))
        SELECT format('enrollments[%s] overlaps enrollments[%s] (participant "%s", offer "%s")',
                      b.n - 1, a.n - 1, b.participant_key, b.offer_key)
          FROM w AS a
          JOIN w AS b
            ON b.n > a.n AND b.participant_key = a.participant_key AND b.offer_key = a.offer_key
           AND b.start_date <= a.end_date AND a.start_date <= b.end_date
         ORDER BY b.n, a.n
         LIMIT 1));

    -- The what-if transactions live in a temporary table for this call only
    -- (dropped below, or with the transaction on error).
    CREATE TEMPORARY TABLE incentives_request_transactions (
        transaction_id   text NOT NULL,
        participant_key  text NOT NULL,
        transaction_type text NOT NULL,
        transaction_date date NOT NULL,
        sku_key          text NOT NULL,
        quantity         numeric NOT NULL,
        uom_key          text NOT NULL,
        amount           numeric NOT NULL
    ) ON COMMIT DROP;
    v_relation := to_regclass('pg_temp.incentives_request_transactions');
    PERFORM incentives_internal.request_load(v_relation, v_lines, v_participant);

    IF v_stored THEN
        EXECUTE format($sql$
            SELECT format('transactions[%%s].transaction_id "%%s" is already a stored transaction of the participant (include_stored)',
                          t.n - 1, t.v ->> 'transaction_id')
              FROM jsonb_array_elements($1) WITH ORDINALITY AS t(v, n)
             WHERE EXISTS (SELECT 1 FROM incentives.transactions AS s
                            WHERE s.participant_key = $2
                              AND s.transaction_id = t.v ->> 'transaction_id')
             ORDER BY t.n
             LIMIT 1$sql$)
        INTO v_problem
        USING v_lines, v_participant;
        PERFORM incentives_internal.request_refuse(v_problem);
        EXECUTE format($sql$
            INSERT INTO %s
            SELECT s.transaction_id, s.participant_key, s.transaction_type, s.transaction_date,
                   s.sku_key, s.quantity, s.uom_key, s.amount
              FROM incentives.transactions AS s
             WHERE s.participant_key COLLATE "C" = $1$sql$, v_relation)   -- the participant index
        USING v_participant;
    END IF;

    BEGIN
        SELECT jsonb_build_object('potential_earnings',
                 COALESCE(jsonb_agg(to_jsonb(e)
                                    ORDER BY e.participant_key COLLATE "C", e.offer_key COLLATE "C",
                                             e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                          '[]'::jsonb))
          INTO v_result
          FROM incentives_internal.calculate_request(v_participant, v_properties, v_offer_keys,
                                                     v_relation, v_enrollments, v_as_of, v_through) AS e;
        -- The program rules' state of the offers that have any (enrollment
        -- windows used, requirements against their minimums, limits), per
        -- participant, as the engine diagnosed them; only asked for when a
        -- requested offer has rules (incentives.programs, from the
        -- compiled offers).
        IF EXISTS (SELECT 1 FROM incentives.programs(v_as_of) AS p
                    WHERE (v_offer_keys IS NULL OR p.offer_key = ANY (v_offer_keys))
                      AND (p.enrollment = 'required' OR p.requirements <> '[]'::jsonb
                           OR p.limit_minimum IS NOT NULL OR p.limit_maximum IS NOT NULL)) THEN
            SELECT jsonb_agg(jsonb_build_object('participant_key', d.participant_key,
                                                'offer_key', d.offer_key) || (d.diagnostics -> 'rules')
                             ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C")
              INTO v_rules
              FROM incentives_internal.diagnostics_request(v_participant, v_properties, v_offer_keys,
                                                           v_relation, v_enrollments, v_as_of, v_through) AS d
             WHERE d.diagnostics ? 'rules';
        END IF;
    EXCEPTION WHEN data_exception THEN
        -- The data cannot be calculated (a number past the engine's range,
        -- a unit without conversion, ...): say where in the request.
        GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_detail = PG_EXCEPTION_DETAIL,
                                v_hint = PG_EXCEPTION_HINT;
        v_problem := incentives_internal.calculate_fault(v_participant, v_properties, v_offer_keys, v_lines,
                                                         v_enrollments, v_as_of, v_through);
        v_message := format('invalid request: %s cannot be calculated: %s', v_problem, v_message);
        PERFORM incentives_internal.raise_error('invalid_parameter_value', v_message, v_detail, v_hint);
    END;

    IF v_rules IS NOT NULL THEN
        v_result := v_result || jsonb_build_object('rules', v_rules);
    END IF;

    EXECUTE format('DROP TABLE %s', v_relation);
    RETURN v_result;
END
$function$;
COMMENT ON FUNCTION incentives.calculate(jsonb) IS
  'What-if calculation: {participant_key, properties, offer_keys, transactions: [...], include_stored, enrollments: [...], as_of, through_date} with inline transactions (and enrollment windows added to the stored ones) returns {"potential_earnings": [earning rows as JSON objects]}, the numbers incentive_calculate gives on the same data, and "rules": the program rules'' state per participant and offer when an offer has any; writes nothing permanent; a bad request, or one whose data cannot be calculated, raises 22023 "invalid request: <path> ..." naming the field, transaction or property';

------------------------------------------------------------------------
-- The request's parts (helpers of incentives.calculate)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.request_refuse(problem text)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid request: %', problem USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_refuse(text) IS
  'calculate() helper: raises 22023 "invalid request: <problem>" unless problem is NULL';

CREATE OR REPLACE FUNCTION incentives_internal.request_field_problem(
    object   jsonb,
    field    text,
    kind     text,
    required boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_value jsonb := NULLIF(object -> field, 'null');
BEGIN
    IF v_value IS NULL THEN
        RETURN CASE WHEN required THEN field || ' is required' END;
    END IF;
    CASE kind
    WHEN 'date' THEN              -- YYYY-MM-DD naming a real day
        IF jsonb_typeof(v_value) <> 'string' OR NOT incentives_internal.calculate_is_date(v_value #>> '{}') THEN
            RETURN field || ' must be a date (YYYY-MM-DD)';
        END IF;
    WHEN 'timestamp' THEN
        BEGIN
            PERFORM (v_value #>> '{}')::timestamptz WHERE jsonb_typeof(v_value) = 'string';
        EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format
                       OR invalid_time_zone_displacement_value OR invalid_parameter_value THEN
            v_value := NULL;
        END;
        IF v_value IS NULL OR jsonb_typeof(v_value) <> 'string' THEN
            RETURN field || ' must be a timestamp, e.g. "2026-03-31 23:59:59+00"';
        END IF;
    WHEN 'array of strings' THEN
        IF jsonb_typeof(v_value) <> 'array' THEN
            RETURN field || ' must be an array of strings';
        END IF;
        RETURN (SELECT format('%s[%s] must be a string', field, k.n - 1)
                  FROM jsonb_array_elements(v_value) WITH ORDINALITY AS k(v, n)
                 WHERE jsonb_typeof(k.v) <> 'string'
                 ORDER BY k.n
                 LIMIT 1);
    WHEN 'object of numbers' THEN
        IF jsonb_typeof(v_value) <> 'object' THEN
            RETURN field || ' must be a JSON object';
        END IF;
        RETURN (SELECT format('%s.%s must be a number', field, p.key)
                  FROM jsonb_each(v_value) AS p
                 WHERE jsonb_typeof(p.value) <> 'number'
                 ORDER BY p.key COLLATE "C"
                 LIMIT 1);
    ELSE                          -- a JSON type: string, number, boolean, array, object
        IF jsonb_typeof(v_value) <> kind THEN
            RETURN field || ' must be ' || CASE kind WHEN 'array' THEN 'an array'
                                                     WHEN 'object' THEN 'a JSON object'
                                                     ELSE 'a ' || kind END;
        END IF;
    END CASE;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_field_problem(jsonb, text, text, boolean) IS
  'calculate() helper: what is wrong with a field of a JSON object ("<field> is required", "<field> must be ..."), NULL when nothing is; absent and JSON null are the same; kind: a JSON type, date (YYYY-MM-DD), timestamp, array of strings or object of numbers';

CREATE OR REPLACE FUNCTION incentives_internal.request_field(request jsonb, field text, kind text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    PERFORM incentives_internal.request_refuse(incentives_internal.request_field_problem(request, field, kind));
    RETURN NULLIF(request -> field, 'null');
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_field(jsonb, text, text) IS
  'calculate() helper: an optional field of the request, NULL when absent or JSON null; raises 22023 "invalid request: <field> must be ..." when it is not of the kind (as incentives_internal.request_field_problem)';

CREATE OR REPLACE FUNCTION incentives_internal.request_participant_problem(item jsonb, participant_key text)
RETURNS text
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT CASE COALESCE(jsonb_typeof($1 -> 'participant_key'), 'null')
           WHEN 'null' THEN CASE WHEN $2 IS NULL
                                 THEN 'participant_key is required (the request has no participant_key)' END
           WHEN 'string' THEN CASE WHEN $2 IS NOT NULL AND $1 ->> 'participant_key' <> $2
                                   THEN 'participant_key must equal the request''s participant_key' END
           ELSE 'participant_key must be a string' END
$function$;
COMMENT ON FUNCTION incentives_internal.request_participant_problem(jsonb, text) IS
  'calculate() helper: what is wrong with the participant_key of an inline transaction or enrollment window (required when the request has none, else equal to the request''s), NULL when nothing is';

CREATE OR REPLACE FUNCTION incentives_internal.request_load(
    relation        regclass,
    transactions    jsonb,
    participant_key text,
    first_n         integer DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    EXECUTE format($sql$
        INSERT INTO %s
        SELECT t.v ->> 'transaction_id',
               COALESCE(t.v ->> 'participant_key', $2),
               t.v ->> 'transaction_type',
               (t.v ->> 'transaction_date')::date,
               t.v ->> 'sku_key',
               (t.v ->> 'quantity')::numeric,
               t.v ->> 'uom_key',
               (t.v ->> 'amount')::numeric
          FROM jsonb_array_elements($1) WITH ORDINALITY AS t(v, n)
         WHERE $3 IS NULL OR t.n <= $3$sql$, relation)
    USING transactions, participant_key, first_n;
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_load(regclass, jsonb, text, integer) IS
  'calculate() helper: inserts a request''s inline transactions (the first first_n, or all when NULL; participant_key when one has none) into a table with the transaction columns';

CREATE OR REPLACE FUNCTION incentives_internal.calculate_fault(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    jsonb,
    enrollments     jsonb,
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_key      text;
    v_n        integer;
    v_low      integer;
    v_high     integer;
    v_relation regclass;
BEGIN
    -- Called by incentives.calculate after its calculation failed on the
    -- data; each probe below is that calculation on part of the request.
    CREATE TEMPORARY TABLE incentives_request_probe (
        transaction_id   text NOT NULL,
        participant_key  text NOT NULL,
        transaction_type text NOT NULL,
        transaction_date date NOT NULL,
        sku_key          text NOT NULL,
        quantity         numeric NOT NULL,
        uom_key          text NOT NULL,
        amount           numeric NOT NULL
    ) ON COMMIT DROP;
    v_relation := to_regclass('pg_temp.incentives_request_probe');

    -- the properties alone (no transaction), then each property alone
    BEGIN
        PERFORM count(*) FROM incentives_internal.calculate_request($1, $2, $3, v_relation, $5, $6, $7);
    EXCEPTION WHEN data_exception THEN
        FOR v_key IN SELECT p.key FROM jsonb_each($2) AS p ORDER BY p.key COLLATE "C" LOOP
            BEGIN
                PERFORM count(*) FROM incentives_internal.calculate_request($1, jsonb_build_object(v_key, $2 -> v_key),
                                                                            $3, v_relation, $5, $6, $7);
            EXCEPTION WHEN data_exception THEN
                RETURN format('properties.%s', v_key);
            END;
        END LOOP;
        RETURN 'properties';
    END;

    -- The shortest run of inline transactions, from the first, whose
    -- calculation fails: its last one is at fault (alone, or as the one
    -- that tips a sum over).  Binary search: log2(n) + 1 probes.
    v_low := 0;                          -- no transaction: calculates
    v_high := jsonb_array_length($4);
    IF NOT incentives_internal.calculate_fails($1, $2, $3, $4, v_high, v_relation, $5, $6, $7) THEN
        RETURN 'the transactions';       -- only with the stored ones
    END IF;
    WHILE v_high - v_low > 1 LOOP
        v_n := (v_low + v_high) / 2;
        IF incentives_internal.calculate_fails($1, $2, $3, $4, v_n, v_relation, $5, $6, $7) THEN
            v_high := v_n;
        ELSE
            v_low := v_n;
        END IF;
    END LOOP;
    RETURN format('transactions[%s]', v_high - 1);
END
$function$;
COMMENT ON FUNCTION incentives_internal.calculate_fault(text, jsonb, text[], jsonb, jsonb, timestamptz, date) IS
  'Part of incentives.calculate (call that, not this): after its calculation failed on the data, the path of the request''s part at fault: properties.KEY, transactions[i] (the last of the shortest failing run from the first), or "the transactions" when they fail only with the stored ones';

CREATE OR REPLACE FUNCTION incentives_internal.calculate_fails(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    jsonb,
    first_n         integer,
    probe           regclass,
    enrollments     jsonb,
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- Part of incentives_internal.calculate_fault: does the calculation of
    -- the request's first first_n inline transactions fail on the data?
    EXECUTE format('TRUNCATE %s', $6);
    PERFORM incentives_internal.request_load($6, $4, $1, $5);
    PERFORM count(*) FROM incentives_internal.calculate_request($1, $2, $3, $6, $7, $8, $9);
    RETURN false;
EXCEPTION WHEN data_exception THEN
    RETURN true;
END
$function$;
COMMENT ON FUNCTION incentives_internal.calculate_fails(text, jsonb, text[], jsonb, integer, regclass, jsonb, timestamptz, date) IS
  'Part of incentives_internal.calculate_fault: whether the calculation of the first first_n inline transactions of a request fails on the data (probe: the temporary table to fill)';

CREATE OR REPLACE FUNCTION incentives_internal.calculate_is_date(value text)
RETURNS boolean
LANGUAGE sql
IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- YYYY-MM-DD naming a real day (year 1 to 9999), without raising
    SELECT CASE
           WHEN $1 !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN false
           WHEN substr($1, 1, 4)::int < 1 OR substr($1, 6, 2)::int NOT BETWEEN 1 AND 12 THEN false
           ELSE substr($1, 9, 2)::int BETWEEN 1 AND
                extract(day FROM make_date(substr($1, 1, 4)::int, substr($1, 6, 2)::int, 1)
                                 + interval '1 month' - interval '1 day')::int
           END
$function$;
COMMENT ON FUNCTION incentives_internal.calculate_is_date(text) IS
  'True when the text is an ISO date YYYY-MM-DD naming a real day (used to validate calculate() requests without raising)';

-- ---- src/sql/incentives/code/70_explain.sql

------------------------------------------------------------------------
-- Explain, tier progress, requirement progress and stack progress (built on
-- incentives.incentive_diagnostics)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.incentive_explain(
    participant_key text,
    offer_key       text,
    properties      jsonb       DEFAULT '{}',
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $function$
-- Everything explained comes from the engine: incentive_diagnostics (the
-- entries, thresholds, tiers, coverage and overlaps, for an offer the
-- participant's transactions touch or not) and incentive_calculate (the
-- rows and their totals); the offer's label and calculator from its
-- compiled form.  Nothing is derived from the document here.
#variable_conflict use_column
DECLARE
    v_participant text     := incentive_explain.participant_key;
    v_offer       text     := incentive_explain.offer_key;
    v_properties  jsonb    := COALESCE(incentive_explain.properties, '{}');
    v_relation    regclass := COALESCE(incentive_explain.transactions, 'incentives.transactions');
    v_as_of       timestamptz := incentive_explain.as_of;
    v_through     date     := incentive_explain.through_date;
    v_label       text;
    v_calculator  text;
    v_strategy    text;
    v_earnings    incentives.earning[];
    v_diag        jsonb;
    v_result      jsonb;
BEGIN
    IF v_participant IS NULL THEN
        RAISE EXCEPTION 'participant_key must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_offer IS NULL THEN
        RAISE EXCEPTION 'offer_key must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_as_of IS NULL THEN
        SELECT s.label, s.calculator_key INTO v_label, v_calculator
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_summary(o.document) AS s
         WHERE o.offer_key = v_offer;
    ELSE
        -- the offer as it was (docs/lifecycle.md, Offer versions and as_of)
        SELECT s.label, s.calculator_key INTO v_label, v_calculator
          FROM incentives.offer_versions AS v
         CROSS JOIN LATERAL incentives_internal.offer_summary(v.document) AS s
         WHERE v.offer_key = v_offer
           AND v.valid_from <= v_as_of AND (v.valid_to IS NULL OR v.valid_to > v_as_of);
    END IF;
    IF NOT FOUND AND v_as_of IS NULL THEN
        RAISE EXCEPTION 'offer "%" does not exist', v_offer
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'offer_key must name an offer in incentives.offers.';
    ELSIF NOT FOUND THEN
        RAISE EXCEPTION 'offer "%" does not exist', v_offer
              USING ERRCODE = 'invalid_parameter_value',
                    DETAIL = format('The calculation is as of %s.', v_as_of),
                    HINT = 'offer_key must name an offer that incentives.offer_versions shows valid at as_of.';
    END IF;

    -- The calculation's own rows: the totals are theirs.
    SELECT COALESCE(array_agg(e ORDER BY e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                    '{}')
      INTO v_earnings
      FROM incentives.incentive_calculate(v_participant, v_properties, ARRAY[v_offer], v_relation,
                                          v_as_of, v_through) AS e;

    -- The engine's account: one row, the participant being named (an offer
    -- aggregated by group: of its group, the first in key order when its
    -- transactions count in several, a mid-season move).
    SELECT d.strategy_key, d.diagnostics INTO v_strategy, v_diag
      FROM incentives.incentive_diagnostics(v_participant, v_properties, ARRAY[v_offer], v_relation,
                                            v_as_of, v_through) AS d
     WHERE d.offer_key = v_offer AND d.participant_key = v_participant
     ORDER BY d.group_key IS NULL, d.group_key COLLATE "C"
     LIMIT 1;

    v_result := jsonb_build_object(
        'participant_key', v_participant,
        'offer_key', v_offer,
        'label', v_label,
        'strategy_key', v_strategy,
        'calculator_key', v_calculator,
        'totals', incentives_internal.explain_totals(v_earnings, NULL));
    -- what the calculation was limited to, only when it was
    v_result := v_result || jsonb_strip_nulls(jsonb_build_object('as_of', v_as_of, 'through_date', v_through));
    -- an offer with program rules: their state (enrollment windows,
    -- requirements, limits), as the engine diagnosed them
    IF v_diag ? 'rules' THEN
        v_result := v_result || jsonb_build_object('rules', v_diag -> 'rules');
    END IF;
    -- an offer aggregated by group: the group whose figures these are, and
    -- its members' contributions (those the caller may see)
    IF v_diag ? 'aggregation' THEN
        v_result := v_result || jsonb_build_object('aggregation', v_diag -> 'aggregation');
        v_diag := v_diag - 'aggregation';
    END IF;

    IF v_strategy = 'standard' THEN
        -- each entry as diagnosed, with its rows and their totals
        RETURN v_result || jsonb_build_object('entries', (
            SELECT COALESCE(jsonb_agg(
                     (e - 'transactions' - 'incentive_amount') || jsonb_build_object(
                       'totals', incentives_internal.explain_totals(v_earnings, e ->> 'rate_key'),
                       'rows', incentives_internal.explain_rows(v_earnings, e ->> 'rate_key'))
                     ORDER BY n), '[]'::jsonb)
              FROM jsonb_array_elements(v_diag -> 'entries') WITH ORDINALITY AS en(e, n)));
    END IF;

    IF v_strategy = 'stepped' THEN
        RETURN v_result || v_diag || jsonb_build_object('rows', incentives_internal.explain_rows(v_earnings, NULL));
    END IF;

    -- stacked: each stack as diagnosed, with its rows and their totals
    RETURN v_result || jsonb_build_object(
        'sets', v_diag -> 'sets',
        'stacks', (SELECT COALESCE(jsonb_agg(
                            s || jsonb_build_object(
                                   'totals', incentives_internal.explain_totals(v_earnings, s ->> 'rate_key'),
                                   'rows', incentives_internal.explain_rows(v_earnings, s ->> 'rate_key'))
                            ORDER BY n), '[]'::jsonb)
                     FROM jsonb_array_elements(v_diag -> 'stacks') WITH ORDINALITY AS st(s, n)));
END
$function$;
COMMENT ON FUNCTION incentives.incentive_explain(text, text, jsonb, regclass, timestamptz, date) IS
  'Why a participant earns what it does under one offer, as JSON: standard, each entry with its matched rows and totals; stepped, the threshold value, every tier (met or not, what it would pay), the selected and next tier and the gap, and for incremental tiers the bands and the blended rate; stacked, coverage per SKU set, overlap and factors per stack; with program rules, the enrollment windows used, each requirement against its minimum and the limits applied; aggregated by group, the group and its members'' contributions (the figures are the group''s); totals are incentive_calculate''s; as_of and through_date as for incentive_calculate';

CREATE OR REPLACE FUNCTION incentives_internal.explain_totals(earnings incentives.earning[], rate_key text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT jsonb_build_object(
             'rows', count(*),
             'transactions', count(DISTINCT e.transaction_id),
             'incentivized_amount', COALESCE(sum(e.incentivized_amount), 0.00),
             'incentive_amount', COALESCE(sum(e.incentive_amount), 0.00))
      FROM unnest($1) AS e
     WHERE $2 IS NULL OR e.incentive_rate_key = $2
$function$;
COMMENT ON FUNCTION incentives_internal.explain_totals(incentives.earning[], text) IS
  'incentive_explain helper: rows, distinct transactions and the sums of incentivized_amount and incentive_amount of the earning rows with the given rate key (all rows when NULL)';

CREATE OR REPLACE FUNCTION incentives_internal.explain_rows(earnings incentives.earning[], rate_key text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT COALESCE(jsonb_agg(to_jsonb(e) - 'participant_key' - 'offer_key' - 'offer_calculator'
                              ORDER BY e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                    '[]'::jsonb)
      FROM unnest($1) AS e
     WHERE $2 IS NULL OR e.incentive_rate_key = $2
$function$;
COMMENT ON FUNCTION incentives_internal.explain_rows(incentives.earning[], text) IS
  'incentive_explain helper: the earning rows with the given rate key (all rows when NULL) as JSON objects, without the participant, offer and calculator';

-- tier_progress and stack_progress are SQL functions (an output column may
-- share its name with an argument only in SQL functions).  Their bodies
-- name incentives.incentive_diagnostics, which may be created after this
-- part: like pg_dump, do not check the bodies at creation (CREATE EXTENSION
-- restores the setting when the script ends).
SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION incentives_internal.progress_figure(threshold_type text, value numeric)
RETURNS numeric
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- dollars (aggregated_amount) show at least cents: 850 -> 850.00, while
    -- 0.001 stays 0.001 (padding only, never rounding a gap away)
    SELECT CASE WHEN $1 = 'aggregated_amount' AND scale($2) < 2 THEN round($2, 2) ELSE $2 END
$function$;
COMMENT ON FUNCTION incentives_internal.progress_figure(text, numeric) IS
  'tier_progress helper: a threshold value or gap as shown, at least two decimal places for dollar thresholds (aggregated_amount), never rounded';

CREATE OR REPLACE FUNCTION incentives_internal.own_requirements(requirements jsonb, participant_key text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- a requirement of scope member is judged on each member's own
    -- transactions: the participant's own value, met and gap in its place
    SELECT COALESCE(jsonb_agg(CASE WHEN r.r ->> 'scope' = 'member'
                                   THEN (r.r - 'members') || COALESCE(
                                          (SELECT m - 'participant_key'
                                             FROM jsonb_array_elements(r.r -> 'members') AS m
                                            WHERE m ->> 'participant_key' = $2
                                            LIMIT 1),
                                          '{}'::jsonb)
                                   ELSE r.r END
                              ORDER BY r.n), '[]'::jsonb)
      FROM jsonb_array_elements($1) WITH ORDINALITY AS r(r, n)
$function$;
COMMENT ON FUNCTION incentives_internal.own_requirements(jsonb, text) IS
  'tier_progress and requirement_progress helper: the diagnostics'' requirements with each one of scope member showing the given participant''s own value, met and gap (docs/reference.md, Participant groups)';

CREATE OR REPLACE FUNCTION incentives_internal.progress_volume(threshold_type text, value text)
RETURNS numeric
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- a volume of the offer's threshold, as shown: dollars (the amount
    -- types) with at least cents, units as they are; none for a property
    SELECT CASE WHEN $1 IN ('aggregated_amount', 'growth_amount') AND scale($2::numeric) < 2
                THEN round($2::numeric, 2)
                WHEN $1 IN ('aggregated_amount', 'growth_amount', 'aggregated_quantity', 'growth_quantity')
                THEN $2::numeric END
$function$;
COMMENT ON FUNCTION incentives_internal.progress_volume(text, text) IS
  'tier_progress helper: a volume of a stepped offer''s threshold (a current value, a baseline, the volume of the next tier or still needed) as shown: at least two decimal places for dollars (the amount types), quantities as they are, NULL for a property threshold';

CREATE OR REPLACE FUNCTION incentives.tier_progress(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.tier_progress_row
LANGUAGE sql
STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT d.participant_key,
       d.offer_key,
       -- the offer's own (the diagnostics leave the strategy's figures out
       -- of an offer whose data errors a failed requirement kept back)
       p.threshold_type,
       d.diagnostics ->> 'property_key',
       incentives_internal.progress_figure(p.threshold_type, (d.diagnostics ->> 'threshold_value')::numeric),
       d.diagnostics ->> 'selected_rate_key',
       cur.threshold,
       d.diagnostics ->> 'next_rate_key',
       (d.diagnostics ->> 'next_threshold')::numeric,
       incentives_internal.progress_figure(p.threshold_type, (d.diagnostics ->> 'gap_to_next')::numeric),
       (d.diagnostics ->> 'earning_transactions')::integer,
       -- what the calculation pays: in an offer aggregated by group what
       -- the participant's own rows pay; else after requirements and limits
       -- when the offer has them (the rows the engine held), else the
       -- current tier's
       round(COALESCE(own.incentive_amount,
                      (d.diagnostics -> 'rules' ->> 'incentive_amount')::numeric,
                      cur.incentive_amount, 0), 2),
       round(nxt.incentive_amount, 2),
       p.tier_mode,
       (d.diagnostics ->> 'blended_rate')::numeric,
       (d.diagnostics ->> 'next_blended_rate')::numeric,
       COALESCE((d.diagnostics -> 'rules' ->> 'qualified')::boolean, true)
         AND NOT EXISTS (SELECT FROM jsonb_array_elements(req.reqs) AS r WHERE NOT (r ->> 'met')::boolean),
       -- every requirement not met, one whose value could not be computed
       -- (met null) with a null gap
       COALESCE((SELECT jsonb_object_agg(r ->> 'key', r -> 'gap')
                   FROM jsonb_array_elements(req.reqs) AS r
                  WHERE (r ->> 'met')::boolean IS NOT TRUE), '{}'::jsonb),
       d.diagnostics -> 'rules' -> 'limits' ->> 'applied',
       d.group_key,
       -- the volumes: growth types' current value, next tier's volume and
       -- what is still needed (the engine's); an aggregated threshold is a
       -- volume itself; a property is none
       incentives_internal.progress_volume(p.threshold_type,
         CASE WHEN g.growth THEN d.diagnostics ->> 'current_value' ELSE d.diagnostics ->> 'threshold_value' END),
       incentives_internal.progress_volume(p.threshold_type, d.diagnostics ->> 'baseline_value'),
       d.diagnostics -> 'baseline',
       CASE WHEN g.growth THEN (d.diagnostics ->> 'threshold_value')::numeric END,
       d.diagnostics ->> 'no_growth_value',
       p.pays_on,
       incentives_internal.progress_volume(p.threshold_type,
         CASE WHEN g.growth THEN d.diagnostics ->> 'next_volume' ELSE d.diagnostics ->> 'next_threshold' END),
       incentives_internal.progress_volume(p.threshold_type,
         CASE WHEN g.growth THEN d.diagnostics ->> 'volume_to_next' ELSE d.diagnostics ->> 'gap_to_next' END)
  FROM incentives.incentive_diagnostics(tier_progress.participant_key,
                                        COALESCE(tier_progress.properties, '{}'),
                                        NULL,
                                        COALESCE(tier_progress.transactions, 'incentives.transactions'),
                                        tier_progress.as_of,
                                        tier_progress.through_date) AS d
  -- the offers as the calculation had them (now, or as of as_of)
  LEFT JOIN incentives.programs(tier_progress.as_of) AS p ON p.offer_key = d.offer_key
 CROSS JOIN LATERAL (SELECT p.threshold_type IN ('growth_amount', 'growth_quantity') AS growth) AS g
  LEFT JOIN LATERAL (
        SELECT (t ->> 'threshold')::numeric AS threshold,
               (t ->> 'incentive_amount')::numeric AS incentive_amount
          FROM jsonb_array_elements(d.diagnostics -> 'tiers') AS t
         WHERE t ->> 'rate_key' = d.diagnostics ->> 'selected_rate_key'
         LIMIT 1) AS cur ON true
  LEFT JOIN LATERAL (
        SELECT (t ->> 'incentive_amount')::numeric AS incentive_amount
          FROM jsonb_array_elements(d.diagnostics -> 'tiers') AS t
         WHERE t ->> 'rate_key' = d.diagnostics ->> 'next_rate_key'
         LIMIT 1) AS nxt ON true
  LEFT JOIN LATERAL (
        SELECT (m ->> 'incentive_amount')::numeric AS incentive_amount
          FROM jsonb_array_elements(d.diagnostics -> 'aggregation' -> 'members') AS m
         WHERE m ->> 'participant_key' = d.participant_key
         LIMIT 1) AS own ON true
 CROSS JOIN LATERAL (
        SELECT incentives_internal.own_requirements(
                 COALESCE(d.diagnostics -> 'rules' -> 'requirements', '[]'), d.participant_key) AS reqs) AS req
 WHERE d.strategy_key = 'stepped'
 ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C", d.group_key COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.tier_progress(text, jsonb, regclass, timestamptz, date) IS
  'Per participant (every one with transactions of the offers'' SKUs, or the one named) and stepped offer, touched or not: the threshold value, the current tier, the next tier and the gap to it, what the calculation pays now (after requirements and limits) and what the earning transactions would pay at the next tier (before them); the tier mode and, for incremental tiers, the blended rate now and at the next threshold; whether the participant qualifies, how far each unmet requirement is from its minimum (null: its value could not be computed), and which limit applied; in an offer aggregated by group, a row per group the participant''s transactions count in, with the group''s figures (earned_now: the participant''s own rows) and its group_key; the current value, and for growth types the baseline, the growth percentage or why there is none, and what it pays on; the volume at which the next tier is met and the dollars or units still needed; as_of and through_date as for incentive_calculate';

CREATE OR REPLACE FUNCTION incentives.requirement_progress(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.requirement_progress_row
LANGUAGE sql
STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT d.participant_key,
       d.offer_key,
       d.strategy_key,
       r.r ->> 'key',
       r.r ->> 'type',
       r.r ->> 'property_key',
       (r.r ->> 'value')::numeric,
       (r.r ->> 'minimum')::numeric,
       (r.r ->> 'gap')::numeric,
       (r.r ->> 'met')::boolean,
       (d.diagnostics -> 'rules' ->> 'qualified')::boolean
         AND NOT EXISTS (SELECT FROM jsonb_array_elements(req.reqs) AS q WHERE NOT (q ->> 'met')::boolean),
       d.group_key,
       (r.r ->> 'current_value')::numeric,
       (r.r ->> 'baseline_value')::numeric,
       r.r ->> 'no_growth_value'
  FROM incentives.incentive_diagnostics(requirement_progress.participant_key,
                                        COALESCE(requirement_progress.properties, '{}'),
                                        NULL,
                                        COALESCE(requirement_progress.transactions, 'incentives.transactions'),
                                        requirement_progress.as_of,
                                        requirement_progress.through_date) AS d
 CROSS JOIN LATERAL (
        SELECT incentives_internal.own_requirements(d.diagnostics -> 'rules' -> 'requirements',
                                                    d.participant_key) AS reqs) AS req
 CROSS JOIN LATERAL jsonb_array_elements(req.reqs) WITH ORDINALITY AS r(r, n)
 ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C", d.group_key COLLATE "C", r.n
$function$;
COMMENT ON FUNCTION incentives.requirement_progress(text, jsonb, regclass, timestamptz, date) IS
  'Per participant (every one with transactions of the offers'' SKUs, or the one named), offer with requirements and requirement: its value against its minimum (NULL for a missing property or no growth value), the gap still to close, whether it is met, and whether the participant qualifies for the offer (every requirement met); in an offer aggregated by group, a row per group the participant''s transactions count in: the group''s values (a requirement of scope member: the participant''s own) and its group_key; for growth types the current value, the baseline and why there is no growth value; as_of and through_date as for incentive_calculate';

CREATE OR REPLACE FUNCTION incentives.stack_progress(
    participant_key text        DEFAULT NULL,
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.stack_progress_row
LANGUAGE sql
STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT d.participant_key,
       d.offer_key,
       st.s ->> 'rate_key',
       k.set_key,
       se.coverage_unit,
       round(se.coverage, 6),
       round((st.s ->> 'overlap')::numeric, 6),
       round((st.s -> 'factors' ->> k.set_key)::numeric, 6),
       (st.s ->> 'earns')::boolean,
       round(se.coverage - CASE WHEN (st.s ->> 'earns')::boolean
                                THEN (st.s ->> 'overlap')::numeric ELSE 0 END, 6),
       round(max(se.coverage) OVER (PARTITION BY d.participant_key, d.offer_key, d.group_key, st.n) - se.coverage, 6),
       d.group_key
  FROM incentives.incentive_diagnostics(stack_progress.participant_key, '{}', NULL,
                                        COALESCE(stack_progress.transactions, 'incentives.transactions'),
                                        stack_progress.as_of, stack_progress.through_date) AS d
 CROSS JOIN LATERAL jsonb_array_elements(d.diagnostics -> 'stacks') WITH ORDINALITY AS st(s, n)
 CROSS JOIN LATERAL jsonb_array_elements_text(st.s -> 'sku_set_keys') WITH ORDINALITY AS k(set_key, m)
  LEFT JOIN LATERAL (
        SELECT x ->> 'coverage_unit' AS coverage_unit,
               (x ->> 'coverage')::numeric AS coverage
          FROM jsonb_array_elements(d.diagnostics -> 'sets') AS x
         WHERE x ->> 'key' = k.set_key
         LIMIT 1) AS se ON true
 WHERE d.strategy_key = 'stacked'
 ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C", d.group_key COLLATE "C", st.n, k.m
$function$;
COMMENT ON FUNCTION incentives.stack_progress(text, regclass, timestamptz, date) IS
  'Per participant (every one with transactions of the offers'' SKUs, or the one named), stacked offer, stack and SKU set: the set''s coverage, the stack''s overlap and the set''s factor, the coverage that does not pay (uncovered) and how much more of this set would let every set of the stack pay in full (shortfall); in an offer aggregated by group, the group''s coverage and its group_key; as_of and through_date as for incentive_calculate';

RESET check_function_bodies;

-- ---- src/sql/incentives/code/80_shard.sql

------------------------------------------------------------------------
-- Data placement: the functions a PL/Proxy coordinator calls on every shard
-- (docs/scaling.md).  They are internals of the extension, so they exist on
-- every node, sharded or not:
--
--   reference data, identical on every shard (the coordinator runs them
--   RUN ON ALL):   put_offer, delete_offer, put_sku, delete_sku,
--                  put_uom_conversion, delete_uom_conversion,
--                  put_participant_property, delete_participant_property,
--                  put_participant_group, delete_participant_group
--   transactions and enrollments, on the shard of hashtext(participant_key)
--   (of its group's calculation unit's first key for a member of a group):
--                  put_transaction, delete_transaction, put_transactions,
--                  load_transactions, put_enrollment, delete_enrollment
--   moves:         participant_data, store_participant_data, drop_participant_data
--   checks:        shard_summary (what incentives.cluster_check() compares)
--
-- Each put_* is an idempotent upsert that returns true when it inserted a
-- new row and false when it replaced one, so a change that failed on one
-- shard (PL/Proxy runs each shard's call in its own transaction) can simply
-- be applied again.  They run with the caller's rights (SECURITY INVOKER):
-- the caller needs INSERT/UPDATE/DELETE on the tables concerned.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.put_offer(document jsonb)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.offers AS o (document) VALUES (document)
    ON CONFLICT (offer_key) DO UPDATE SET document = EXCLUDED.document
    RETURNING o.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_offer(jsonb) IS
  'Inserts or replaces an offer (validated like any insert); true when the offer is new. Through a coordinator: on every shard';

-- The other reference tables, and the enrollment windows (docs/reference.md,
-- Enrollment: participant data, on the shard of the participant), have a
-- put_<row> and a delete_<row> of one shape each:
--
--   put_<row>(every column in order, a nullable one DEFAULT NULL): inserts
--     the row, or on a conflict of the primary key replaces its other
--     columns (put_enrollment: the end_date of the window starting that
--     day); true when the row is new.
--   delete_<row>(the primary key's columns): deletes the row; true when it
--     existed.
--
-- Overlapping enrollment windows are refused by the table's trigger
-- (23P01).  put_offer (above) takes the document alone: the key is
-- generated from it.

CREATE OR REPLACE FUNCTION incentives_internal.delete_offer(offer_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.offers AS t WHERE t.offer_key = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_offer(text) IS
  'Deletes an offer; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_sku(sku_key text, uom_key text, label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.skus AS t (sku_key, uom_key, label) VALUES ($1, $2, $3)
    ON CONFLICT (sku_key) DO UPDATE SET uom_key = EXCLUDED.uom_key, label = EXCLUDED.label
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_sku(text, text, text) IS
  'Inserts or replaces a SKU and its unit of measure; true when the SKU is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_sku(sku_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.skus AS t WHERE t.sku_key = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_sku(text) IS
  'Deletes a SKU; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.uom_conversions AS t (from_uom_key, to_uom_key, factor) VALUES ($1, $2, $3)
    ON CONFLICT (from_uom_key, to_uom_key) DO UPDATE SET factor = EXCLUDED.factor
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_uom_conversion(text, text, numeric) IS
  'Inserts or replaces a unit conversion (quantity_in_to = quantity_in_from * factor); true when the pair is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.uom_conversions AS t WHERE t.from_uom_key = $1 AND t.to_uom_key = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_uom_conversion(text, text) IS
  'Deletes a unit conversion; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.participant_properties AS t (participant_key, property_key, value) VALUES ($1, $2, $3)
    ON CONFLICT (participant_key, property_key) DO UPDATE SET value = EXCLUDED.value
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_participant_property(text, text, numeric) IS
  'Inserts or replaces a stored participant property; true when it is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_participant_property(participant_key text, property_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.participant_properties AS t WHERE t.participant_key = $1 AND t.property_key = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_participant_property(text, text) IS
  'Deletes a stored participant property; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_enrollment(participant_key text, offer_key text, start_date date, end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.enrollments AS t (participant_key, offer_key, start_date, end_date) VALUES ($1, $2, $3, $4)
    ON CONFLICT (participant_key, offer_key, start_date) DO UPDATE SET end_date = EXCLUDED.end_date
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_enrollment(text, text, date, date) IS
  'Inserts an enrollment window, or replaces the end_date of the one starting that day; true when it is new. Through a coordinator: on the shard of the participant';

CREATE OR REPLACE FUNCTION incentives_internal.delete_enrollment(participant_key text, offer_key text, start_date date)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.enrollments AS t WHERE t.participant_key = $1 AND t.offer_key = $2 AND t.start_date = $3 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_enrollment(text, text, date) IS
  'Deletes the enrollment window of a participant in an offer starting that day; true when it existed. Through a coordinator: on the shard of the participant';

-- Participant groups (docs/scaling.md, Participant groups): memberships
-- are reference data (every shard); a group and its members live on the
-- shard of their calculation unit's first key, and a coordinator moves a
-- participant's transactions and windows there when its memberships
-- change (participant_data, store_participant_data, drop_participant_data,
-- whose first argument is the partition hash PL/Proxy routes by).
CREATE OR REPLACE FUNCTION incentives_internal.put_participant_group(participant_key text, group_key text,
                                                                     start_date date, end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.participant_groups AS t (participant_key, group_key, start_date, end_date)
    VALUES ($1, $2, $3, $4)
    ON CONFLICT (participant_key, start_date) DO UPDATE SET group_key = EXCLUDED.group_key, end_date = EXCLUDED.end_date
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_participant_group(text, text, date, date) IS
  'Inserts a membership window, or replaces the group and end_date of the one starting that day; true when it is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_participant_group(participant_key text, start_date date)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.participant_groups AS t WHERE t.participant_key = $1 AND t.start_date = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_participant_group(text, date) IS
  'Deletes the membership window of a participant starting that day; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.participant_data(partition_hash integer, participant_key text)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'transactions', (SELECT COALESCE(jsonb_agg(to_jsonb(t) ORDER BY t.transaction_id), '[]')
                           FROM incentives.transactions AS t WHERE t.participant_key = $2),
        'enrollments', (SELECT COALESCE(jsonb_agg(to_jsonb(n) ORDER BY n.offer_key, n.start_date), '[]')
                          FROM incentives.enrollments AS n WHERE n.participant_key = $2))
$$;
COMMENT ON FUNCTION incentives_internal.participant_data(integer, text) IS
  'A participant''s transactions and enrollment windows as JSON ({"transactions": [...], "enrollments": [...]}), for a coordinator that moves them to another shard';

CREATE OR REPLACE FUNCTION incentives_internal.store_participant_data(partition_hash integer, data jsonb)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    n := incentives_internal.put_transactions(ARRAY(SELECT jsonb_array_elements(data -> 'transactions')));
    INSERT INTO incentives.enrollments AS t (participant_key, offer_key, start_date, end_date)
    SELECT r.participant_key, r.offer_key, r.start_date, r.end_date
      FROM jsonb_populate_recordset(NULL::incentives.enrollments, data -> 'enrollments') AS r
    ON CONFLICT (participant_key, offer_key, start_date) DO UPDATE SET end_date = EXCLUDED.end_date;
    RETURN COALESCE(n, 0);
END
$$;
COMMENT ON FUNCTION incentives_internal.store_participant_data(integer, jsonb) IS
  'Stores what participant_data returned on another shard (transactions upserted, windows inserted or replaced); returns how many transactions';

CREATE OR REPLACE FUNCTION incentives_internal.drop_participant_data(partition_hash integer, participant_key text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM incentives.enrollments AS e WHERE e.participant_key = $2;
    DELETE FROM incentives.transactions AS t WHERE t.participant_key = $2;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;
COMMENT ON FUNCTION incentives_internal.drop_participant_data(integer, text) IS
  'Deletes a participant''s transactions and enrollment windows (moved to another shard by a coordinator); returns how many transactions';

-- Transactions.  A transaction never changes participant through an
-- upsert: on a sharded deployment that would leave it on the wrong shard.
-- store_transactions is the one upsert that says so; put_transactions and
-- put_transaction call it.
CREATE OR REPLACE FUNCTION incentives_internal.store_transactions(transactions jsonb[])
RETURNS SETOF boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n      bigint;
    bad_id text;
    bad_pk text;
    old_pk text;
BEGIN
    RETURN QUERY
    WITH changed AS (
        INSERT INTO incentives.transactions AS x
               (transaction_id, participant_key, transaction_type, transaction_date,
                sku_key, quantity, uom_key, amount)
        SELECT t ->> 'transaction_id', t ->> 'participant_key', t ->> 'transaction_type',
               (t ->> 'transaction_date')::date, t ->> 'sku_key', (t ->> 'quantity')::numeric,
               t ->> 'uom_key', (t ->> 'amount')::numeric
          FROM unnest(transactions) AS t
        ON CONFLICT (transaction_id) DO UPDATE
           SET transaction_type = EXCLUDED.transaction_type,
               transaction_date = EXCLUDED.transaction_date,
               sku_key = EXCLUDED.sku_key, quantity = EXCLUDED.quantity,
               uom_key = EXCLUDED.uom_key, amount = EXCLUDED.amount
         WHERE x.participant_key = EXCLUDED.participant_key
        RETURNING x.xmax = 0 AS is_new)
    SELECT c.is_new FROM changed AS c;
    GET DIAGNOSTICS n = ROW_COUNT;

    IF n < cardinality(transactions) THEN
        SELECT t ->> 'transaction_id', t ->> 'participant_key', x.participant_key
          INTO bad_id, bad_pk, old_pk
          FROM unnest(transactions) AS t
          JOIN incentives.transactions x ON x.transaction_id = t ->> 'transaction_id'
         WHERE x.participant_key IS DISTINCT FROM t ->> 'participant_key'
         LIMIT 1;
        RAISE EXCEPTION 'transaction "%" belongs to participant "%", not "%"', bad_id, old_pk, bad_pk
              USING ERRCODE = 'unique_violation',
                    HINT = 'Delete it (incentives_internal.delete_transaction) before storing it under another participant.';
    END IF;
END
$$;
COMMENT ON FUNCTION incentives_internal.store_transactions(jsonb[]) IS
  'Part of put_transactions and put_transaction: inserts or replaces transactions given as JSON objects with the transaction columns, refusing one that would change participant (23505); per row stored, true when it is new';

CREATE OR REPLACE FUNCTION incentives_internal.put_transactions(transactions jsonb[])
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*) FROM incentives_internal.store_transactions($1)
$$;
COMMENT ON FUNCTION incentives_internal.put_transactions(jsonb[]) IS
  'Inserts or replaces transactions given as JSON objects with the transaction columns; returns how many. Through a coordinator: each on the shard of its participant';

CREATE OR REPLACE FUNCTION incentives_internal.put_transaction(
    transaction_id   text,
    participant_key  text,
    transaction_type text,
    transaction_date date,
    sku_key          text,
    quantity         numeric,
    uom_key          text,
    amount           numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.is_new
      FROM incentives_internal.store_transactions(ARRAY[jsonb_build_object(
               'transaction_id', $1, 'participant_key', $2, 'transaction_type', $3, 'transaction_date', $4,
               'sku_key', $5, 'quantity', $6, 'uom_key', $7, 'amount', $8)]) AS s(is_new)
$$;
COMMENT ON FUNCTION incentives_internal.put_transaction(text, text, text, date, text, numeric, text, numeric) IS
  'Inserts or replaces one transaction; true when it is new. Through a coordinator: on the shard of its participant';

CREATE OR REPLACE FUNCTION incentives_internal.delete_transaction(participant_key text, transaction_id text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.transactions x
                WHERE x.participant_key = $1 AND x.transaction_id = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_transaction(text, text) IS
  'Deletes one transaction of a participant; true when it existed. Through a coordinator: on the shard of the participant';

CREATE OR REPLACE FUNCTION incentives_internal.load_transactions(transactions jsonb)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_internal.put_transactions(ARRAY(SELECT jsonb_array_elements($1)))
$$;
COMMENT ON FUNCTION incentives_internal.load_transactions(jsonb) IS
  'Inserts or replaces a JSON array of transactions (objects with the transaction columns); returns how many. Through a coordinator: each on the shard of its participant';

-- What incentives.cluster_check() on a coordinator compares across shards:
-- a digest of each reference table (they must be identical everywhere) and
-- the transactions that do not hash to this shard's partition.
CREATE OR REPLACE FUNCTION incentives_internal.shard_summary(partitions integer, partition integer)
RETURNS TABLE (object text, row_count bigint, digest text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- each reference table: its rows as lines in key order, and their md5;
    -- the offer history without its times (each shard writes its own)
    SELECT * FROM (
        SELECT t.object, count(l.object),
               md5(coalesce(string_agg(l.line, E'\n' ORDER BY l.key1 COLLATE "C", l.key2 COLLATE "C", l.version), ''))
          FROM (VALUES (1, 'offers'), (2, 'offer_versions'), (3, 'skus'), (4, 'uom_conversions'),
                       (5, 'participant_properties'), (6, 'participant_groups')) AS t(n, object)
          LEFT JOIN (
            SELECT 'offers' AS object, o.offer_key || ' ' || o.document::text AS line,
                   o.offer_key AS key1, NULL::text AS key2, NULL::integer AS version
              FROM incentives.offers o
            UNION ALL
            SELECT 'offer_versions', format('%s %s %s %s', v.offer_key, v.version, v.document, v.valid_to IS NULL),
                   v.offer_key, NULL, v.version
              FROM incentives.offer_versions v
            UNION ALL
            SELECT 'skus', format('%s %s %s', s.sku_key, s.uom_key, s.label), s.sku_key, NULL, NULL
              FROM incentives.skus s
            UNION ALL
            SELECT 'uom_conversions', format('%s %s %s', c.from_uom_key, c.to_uom_key, c.factor),
                   c.from_uom_key, c.to_uom_key, NULL
              FROM incentives.uom_conversions c
            UNION ALL
            SELECT 'participant_properties', format('%s %s %s', p.participant_key, p.property_key, p.value),
                   p.participant_key, p.property_key, NULL
              FROM incentives.participant_properties p
            UNION ALL
            SELECT 'participant_groups', format('%s %s %s %s', g.participant_key, g.group_key, g.start_date, g.end_date),
                   g.participant_key, g.start_date::text, NULL
              FROM incentives.participant_groups g) AS l ON l.object = t.object
         GROUP BY t.n, t.object
         ORDER BY t.n) AS reference_tables
    UNION ALL
    -- each participant table: its rows, and those not on this partition
    -- (a member of a group: the partition of its unit's first key)
    SELECT x.object, x.row_count, NULL
      FROM (SELECT 'transactions' AS tab, count(*) AS total,
                   count(*) FILTER (WHERE (hashtext(COALESCE(u.unit_key, t.participant_key)) & ($1 - 1)) <> $2) AS misplaced
              FROM incentives.transactions t
              LEFT JOIN incentives_internal.participant_units() AS u ON u.participant_key = t.participant_key
            UNION ALL
            SELECT 'enrollments', count(*),
                   count(*) FILTER (WHERE (hashtext(COALESCE(u.unit_key, n.participant_key)) & ($1 - 1)) <> $2)
              FROM incentives.enrollments n
              LEFT JOIN incentives_internal.participant_units() AS u ON u.participant_key = n.participant_key) AS c
     CROSS JOIN LATERAL (VALUES (c.tab, c.total), ('misplaced_' || c.tab, c.misplaced)) AS x(object, row_count)
$$;
COMMENT ON FUNCTION incentives_internal.shard_summary(integer, integer) IS
  'Row counts and digests of the reference tables (the memberships included) and the offer history (without its times), the transaction and enrollment counts, and how many transactions and enrollments do not belong to this partition (hashtext(placement key) & (partitions - 1) <> partition; the placement key is the participant''s own, or its group''s calculation unit''s first key)';

-- incentives.refresh_earnings as a function, so that a coordinator can run
-- it on the shards (PL/Proxy calls functions, not procedures).  Called from
-- a function, the procedure cannot COMMIT: the refresh is one transaction
-- on each shard, and a failure leaves that shard's earnings and run log as
-- they were.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_run(
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions',
    progress_every  integer  DEFAULT 1000,
    on_error        text     DEFAULT 'raise',
    changed_only    boolean  DEFAULT false)
RETURNS TABLE (run_id bigint, participants integer, rows bigint, total_incentive numeric, status text,
               exceptions integer)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    CALL incentives.refresh_earnings(refresh_earnings_run.participant_key,
                                     refresh_earnings_run.transactions,
                                     refresh_earnings_run.progress_every,
                                     refresh_earnings_run.on_error,
                                     refresh_earnings_run.changed_only);
    RETURN QUERY
        SELECT r.run_id, r.participants, r.rows, r.total_incentive, r.status, r.exceptions
          FROM incentives.calculation_runs AS r
         WHERE r.pid = pg_backend_pid()
         ORDER BY r.run_id DESC
         LIMIT 1;
END
$$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_run(text, regclass, integer, text, boolean) IS
  'CALLs incentives.refresh_earnings in the caller''s transaction and returns its run (what a coordinator''s refresh_earnings runs on each shard)';

-- incentives.settle as a function, for a coordinator (each shard settles
-- its own participants: statements and their numbers are per shard).
-- Called from a function the procedure cannot COMMIT: the statement is
-- part of the caller's transaction on the shard.
CREATE OR REPLACE FUNCTION incentives_internal.settle_run(
    statement_date  date,
    participant_key text DEFAULT NULL)
RETURNS TABLE (statement_id bigint, lines bigint, amount_due numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_id bigint;
BEGIN
    v_id := incentives_internal.settle_work(settle_run.statement_date, settle_run.participant_key);
    RETURN QUERY
        SELECT v_id, count(*), COALESCE(sum(l.amount_due), 0.00)
          FROM incentives.statement_lines AS l
         WHERE l.statement_id = v_id;
END
$$;
COMMENT ON FUNCTION incentives_internal.settle_run(date, text) IS
  'Settles in the caller''s transaction (incentives.settle''s work) and returns the statement: what a coordinator''s settle runs on each shard';

-- The accrual of a shard's own participants (docs/lifecycle.md, Accruals;
-- accruals and their numbers are per shard), in the caller's transaction
-- on the shard: what a coordinator's accrue runs on each shard.
CREATE OR REPLACE FUNCTION incentives_internal.accrue_run(as_of_date date)
RETURNS TABLE (accrual_id bigint, lines bigint, delta numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_id bigint;
BEGIN
    v_id := incentives_internal.accrue_work(accrue_run.as_of_date);
    RETURN QUERY
        SELECT v_id, count(*), COALESCE(sum(l.delta), 0.00)
          FROM incentives.accrual_lines AS l
         WHERE l.accrual_id = v_id;
END
$$;
COMMENT ON FUNCTION incentives_internal.accrue_run(date) IS
  'Accrues in the caller''s transaction (incentives.accrue''s work) and returns the accrual: what a coordinator''s accrue runs on each shard';

-- ---- src/sql/incentives/code/85_row_security.sql

------------------------------------------------------------------------
-- Row-level security by participant (docs/security.md, the authoritative
-- account).
--
-- The DBA decides once, on incentives.transactions, which participants a
-- role may see (row-level security policies of their own).  Everything
-- derived from or kept per participant follows from that: every table of
-- the extension in schema incentives with a participant_key column (except
-- incentives.transactions itself) gets row-level security enabled (not
-- forced: the owner and superusers see everything) and one policy: the
-- run log incentives.calculation_runs the policy run_visible below, every
-- other table the policy participant_visible, created by the loop at the
-- end of this part for whatever tables exist when the extension is
-- installed or updated -- a table added by a later version needs nothing
-- more than its participant_key column.  The views are security_invoker,
-- so they show what their tables show.
--
-- participant_visible: a role sees (and may change) a row when
--   * the row names no participant (participant_key IS NULL: a refresh of
--     every participant in incentives.calculation_runs), or
--   * row-level security is not active on incentives.transactions for the
--     role (it is disabled there, or the role owns the table, is a
--     superuser or has BYPASSRLS): then the role sees every transaction,
--     and every row, or
--   * the role can see at least one transaction of that participant,
--     through the transactions' own policies:
--     incentives.visible_participants().
-- The policy is FOR ALL: what a role may not see it may not insert,
-- update or delete either (docs/security.md, Refreshing).
--
-- run_visible: a run of every participant (participant_key NULL) carries
-- the program's totals (participants, rows, total_incentive, exceptions)
-- and its error may name any participant's transaction.  So where
-- row-level security on incentives.transactions applies to a role, the
-- role sees the runs of its visible participants and its own runs
-- (run_by), and no run of every participant by another role; a DBA lets a
-- role see those too with a policy of its own (docs/security.md, step 4,
-- does so for incentives_admin).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.visible_participants()
RETURNS SETOF text
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $function$
    -- The distinct participant keys of the transactions the caller can
    -- see (its row-level security applies), walked through the index on
    -- (participant_key COLLATE "C", transaction_id COLLATE "C") one key at
    -- a time: one index probe per visible participant, plus the index
    -- entries the caller may not see stepped over.
    WITH RECURSIVE p(participant_key) AS (
        (SELECT t.participant_key COLLATE "C"
           FROM incentives.transactions AS t
          ORDER BY 1
          LIMIT 1)
        UNION ALL
        SELECT (SELECT t.participant_key COLLATE "C"
                  FROM incentives.transactions AS t
                 WHERE t.participant_key COLLATE "C" > p.participant_key
                 ORDER BY 1
                 LIMIT 1)
          FROM p
         WHERE p.participant_key IS NOT NULL)
    SELECT p.participant_key FROM p WHERE p.participant_key IS NOT NULL
$function$;
COMMENT ON FUNCTION incentives.visible_participants() IS
  'The participants of which the caller can see at least one row of incentives.transactions (through its row-level security); the row-level security policy participant_visible of every participant table uses it (docs/security.md)';

-- Catalog-driven (the one loop that creates objects in these parts): for
-- every table of the extension in schema incentives with a participant_key
-- column but incentives.transactions and incentives.calculation_runs
-- (below), it runs ALTER TABLE ... ENABLE ROW LEVEL SECURITY, and DROP
-- POLICY IF EXISTS, CREATE POLICY and COMMENT ON POLICY of
-- participant_visible (written out in docs/security.md, "The convention
-- for a new table"): an update creates the policy again, as every trigger.
DO $row_security$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT c.oid::pg_catalog.regclass AS rel
               FROM pg_catalog.pg_depend AS d
               JOIN pg_catalog.pg_extension AS x ON x.oid OPERATOR(pg_catalog.=) d.refobjid
               JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) d.objid
               JOIN pg_catalog.pg_attribute AS a ON a.attrelid OPERATOR(pg_catalog.=) c.oid
              WHERE x.extname OPERATOR(pg_catalog.=) 'incentives'
                AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                AND d.deptype OPERATOR(pg_catalog.=) 'e'
                AND c.relnamespace OPERATOR(pg_catalog.=) 'incentives'::pg_catalog.regnamespace
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])
                AND c.oid OPERATOR(pg_catalog.<>) 'incentives.transactions'::pg_catalog.regclass
                AND c.oid OPERATOR(pg_catalog.<>) 'incentives.calculation_runs'::pg_catalog.regclass
                AND a.attname OPERATOR(pg_catalog.=) 'participant_key'
                AND NOT a.attisdropped
              ORDER BY c.relname
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t.rel);
        EXECUTE pg_catalog.format('DROP POLICY IF EXISTS participant_visible ON %s', t.rel);
        EXECUTE pg_catalog.format($policy$
            CREATE POLICY participant_visible ON %s
                USING (participant_key IS NULL
                       OR NOT pg_catalog.row_security_active('incentives.transactions'::pg_catalog.regclass)
                       OR participant_key IN (SELECT incentives.visible_participants()))$policy$, t.rel);
        EXECUTE pg_catalog.format($comment$
            COMMENT ON POLICY participant_visible ON %s IS
              'Rows of the participants the role can see in incentives.transactions (and rows naming no participant); docs/security.md'$comment$,
            t.rel);
    END LOOP;
END
$row_security$;

-- The run log.
ALTER TABLE incentives.calculation_runs ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS run_visible ON incentives.calculation_runs;
CREATE POLICY run_visible ON incentives.calculation_runs
    USING (NOT pg_catalog.row_security_active('incentives.transactions'::pg_catalog.regclass)
           OR participant_key IN (SELECT incentives.visible_participants())
           OR (participant_key IS NULL AND run_by OPERATOR(pg_catalog.=) CURRENT_USER::text));
COMMENT ON POLICY run_visible ON incentives.calculation_runs IS
  'Runs of the participants the role can see in incentives.transactions, and the role''s own runs; a run of every participant by another role only where row-level security on incentives.transactions does not apply to the role (it carries the program''s totals); docs/security.md';

-- ---- src/sql/incentives/code/90_grants.sql

------------------------------------------------------------------------
-- Privileges: who may calculate, who may edit offers (docs/security.md)
--
-- Every function of the extension runs with the caller's rights (none is
-- SECURITY DEFINER), and the views are security_invoker: what a role may
-- calculate is exactly what it may read, and row-level security on the
-- transactions applies.  The extension creates no roles (role names are
-- the DBA's, cluster-wide, and must not be created by CREATE EXTENSION);
-- it leaves PUBLIC without access to the schema and its tables, so by
-- default only the owner (the superuser who installed it) can use it.
--
-- The model a DBA applies after CREATE EXTENSION and after every ALTER
-- EXTENSION ... UPDATE -- the reader and admin roles, their grants, and
-- row-level security by participant set once on incentives.transactions
-- and followed by every participant table (code/85_row_security.sql) --
-- is written out, statement by statement, in docs/security.md;
-- test/pgtap/30_security.sql and 35_participant_rls.sql apply it.
------------------------------------------------------------------------

-- Explicit secure defaults: nothing for PUBLIC on the schemas (schema
-- incentives: the released base script), tables, views and sequences this
-- script created, even where the installing role
-- has default privileges granting PUBLIC access to new ones.  What existed
-- before the update keeps its privileges, the DBA's grants to PUBLIC
-- included (src/sql/update_begin.sql lists it).  Catalog-driven: for each
-- such schema REVOKE ALL ON SCHEMA ... FROM PUBLIC, for each such relation
-- of schema incentives REVOKE ALL ON TABLE ... FROM PUBLIC.
DO $grants$
DECLARE
    o record;
BEGIN
    FOR o IN SELECT pg_catalog.format('SCHEMA %I', n.nspname) AS object
               FROM pg_catalog.pg_namespace AS n
               JOIN pg_catalog.pg_depend AS d
                 ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                AND d.objid OPERATOR(pg_catalog.=) n.oid
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                AND d.deptype OPERATOR(pg_catalog.=) 'e'
              WHERE d.refobjid OPERATOR(pg_catalog.=) (SELECT e.oid FROM pg_catalog.pg_extension AS e
                                                        WHERE e.extname OPERATOR(pg_catalog.=) 'incentives')
                AND NOT EXISTS (SELECT FROM pg_temp.update_members AS m
                                 WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                                   AND m.objid OPERATOR(pg_catalog.=) n.oid)
             UNION ALL
             SELECT pg_catalog.format('TABLE %s', c.oid::pg_catalog.regclass)
               FROM pg_catalog.pg_class AS c
              WHERE c.relnamespace OPERATOR(pg_catalog.=) 'incentives'::pg_catalog.regnamespace
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p', 'v', 'm', 'S']::"char"[])
                AND NOT EXISTS (SELECT FROM pg_temp.update_members AS m
                                 WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                                   AND m.objid OPERATOR(pg_catalog.=) c.oid)
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM PUBLIC', o.object);
    END LOOP;
END
$grants$;

-- ---- src/sql/update_end.sql

-- update_end.sql: the last part of every update script, of both
-- extensions (the Makefile; update_begin.sql says what was set aside).
-- The successors of the replaced objects exist now: each gets its
-- predecessor's privileges (and each object the version added those of the
-- one it extends), and the user's views set aside are created again, over
-- the successors, each as it was.
------------------------------------------------------------------------

-- update_grant(kind, target, owner, acl, column_acls): grants on target
-- (ROUTINE, TABLE, SEQUENCE or SCHEMA) what acl and column_acls, the
-- privileges of an object
-- owned by owner, granted to others: each grant by the grantor that made
-- it.  When acl is not the default and gives PUBLIC nothing, PUBLIC keeps
-- nothing (a routine's default would give it EXECUTE).
CREATE FUNCTION pg_temp.update_grant(kind text, target text, owner oid, acl aclitem[], column_acls jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e record;
BEGIN
    FOR e IN SELECT g.*
               FROM (SELECT a.grantor, a.grantee, a.privilege_type, a.is_grantable, NULL::name AS attname
                       FROM aclexplode(acl) a
                     UNION ALL
                     SELECT a.grantor, a.grantee, a.privilege_type, a.is_grantable, c.key::name
                       FROM jsonb_each(column_acls) c,
                            aclexplode(ARRAY(SELECT jsonb_array_elements_text(c.value))::aclitem[]) a) AS g
              WHERE g.grantee <> owner
              ORDER BY g.grantor <> owner, g.attname NULLS FIRST
    LOOP
        IF e.grantor <> owner THEN
            -- a grant by a role that had the grant option
            PERFORM set_config('role', pg_get_userbyid(e.grantor), true);
        END IF;
        EXECUTE format('GRANT %s%s ON %s %s TO %s%s', e.privilege_type,
                       CASE WHEN e.attname IS NOT NULL THEN format(' (%I)', e.attname) ELSE '' END,
                       kind, target,
                       CASE WHEN e.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(e.grantee)) END,
                       CASE WHEN e.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        IF e.grantor <> owner THEN
            PERFORM set_config('role', 'none', true);
        END IF;
    END LOOP;
    IF acl IS NOT NULL AND NOT EXISTS (SELECT FROM aclexplode(acl) a WHERE a.grantee = 0) THEN
        EXECUTE format('REVOKE ALL ON %s %s FROM PUBLIC', kind, target);
    END IF;
END
$$;

-- update_restore(): the initial privileges of what existed, the
-- privileges of the replaced objects on their successors (and of what the
-- version added), then the views set aside, each after the views it
-- reads.
CREATE FUNCTION pg_temp.update_restore()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p      record;
    v      record;
    c      record;
    v_oid  oid;
    v_class oid;
    v_target text;
    v_init pg_init_privs[];
BEGIN
    -- The initial privileges of what existed before the update, as they
    -- were (whatever the script granted or revoked on it meanwhile).
    DELETE FROM pg_init_privs i
     USING update_members m
     WHERE m.classid = i.classoid AND m.objid = i.objoid;
    INSERT INTO pg_init_privs
    SELECT s.*
      FROM update_init_privs s
     WHERE EXISTS (SELECT FROM pg_depend d
                    WHERE d.classid = s.classoid AND d.objid = s.objoid AND d.deptype = 'e'
                      AND d.refobjid = (SELECT e.oid FROM pg_extension e WHERE e.extname = 'incentives'));

    FOR p IN SELECT * FROM update_saved_privileges LOOP
        IF p.kind = 'ROUTINE' THEN
            SELECT CASE WHEN count(*) = 1 THEN min(r.oid) END INTO v_oid
              FROM pg_proc r
             WHERE r.pronamespace = to_regnamespace(split_part(p.name, '.', 1))
               AND r.proname = split_part(p.name, '.', 2);
            IF v_oid IS NULL THEN
                RAISE EXCEPTION 'the update script replaced % but created no single successor of that name', p.name;
            END IF;
            v_class := 'pg_proc'::regclass;
            v_target := v_oid::regprocedure::text;
        ELSIF p.kind = 'SCHEMA' THEN
            v_oid := to_regnamespace(p.name);
            v_class := 'pg_namespace'::regclass;
            v_target := quote_ident(p.name);
        ELSE
            v_oid := to_regclass(p.name);
            v_class := 'pg_class'::regclass;
            v_target := v_oid::regclass::text;
        END IF;
        IF v_oid IS NULL THEN
            RAISE EXCEPTION 'the update script gives privileges to %, which it did not create', p.name;
        END IF;
        -- Granted by the update script, these would become the extension's
        -- initial privileges, which pg_dump leaves out: the successor's
        -- initial privileges stay those the script gave it.
        v_init := ARRAY(SELECT i FROM pg_init_privs i WHERE i.objoid = v_oid AND i.classoid = v_class);
        PERFORM pg_temp.update_grant(p.kind, v_target, p.owner, p.acl, p.column_acls);
        DELETE FROM pg_init_privs i WHERE i.objoid = v_oid AND i.classoid = v_class;
        INSERT INTO pg_init_privs SELECT * FROM unnest(v_init);
    END LOOP;

    LOOP
        SELECT * INTO v FROM update_saved_views s
         WHERE NOT s.created
           AND NOT EXISTS (SELECT FROM update_saved_views r
                            WHERE r.view_oid = ANY (s.reads) AND NOT r.created)
         ORDER BY s.view_oid
         LIMIT 1;
        EXIT WHEN NOT FOUND;
        -- Catalog-driven, and no declaration of the extension's: the
        -- user's view as update_begin.sql read it from the catalog.
        EXECUTE format('CREATE VIEW %s%s AS %s', v.view_name,
                       CASE WHEN v.options IS NOT NULL
                            THEN format(' WITH (%s)', array_to_string(v.options, ', ')) ELSE '' END,
                       v.definition);
        EXECUTE format('ALTER VIEW %s OWNER TO %I', v.view_name, v.owner);
        PERFORM pg_temp.update_grant('TABLE', v.view_name, to_regrole(quote_ident(v.owner)), v.acl, v.column_acls);
        IF v.comment IS NOT NULL THEN
            EXECUTE format('COMMENT ON VIEW %s IS %L', v.view_name, v.comment);
        END IF;
        FOR c IN SELECT * FROM jsonb_each_text(v.column_comments) LOOP
            EXECUTE format('COMMENT ON COLUMN %s.%I IS %L', v.view_name, c.key, c.value);
        END LOOP;
        -- the user's, not the extension's: pg_dump dumps it, with its
        -- privileges (leaving the extension also drops the initial
        -- privileges the grants above recorded)
        EXECUTE format('ALTER EXTENSION incentives DROP VIEW %s', v.view_name);
        UPDATE update_saved_views SET created = true WHERE view_oid = v.view_oid;
    END LOOP;
    IF EXISTS (SELECT FROM update_saved_views WHERE NOT created) THEN
        RAISE EXCEPTION 'views set aside by the update could not be created again: %',
                        (SELECT string_agg(view_name, ', ') FROM update_saved_views WHERE NOT created);
    END IF;
END
$$;

SELECT pg_temp.update_restore();

DROP FUNCTION pg_temp.update_restore();
DROP FUNCTION pg_temp.update_grant(text, text, oid, aclitem[], jsonb);
DROP FUNCTION pg_temp.update_check();
DROP FUNCTION pg_temp.update_grant_like(text, text, text, text);
DROP FUNCTION pg_temp.update_drop_function(regprocedure);
DROP FUNCTION pg_temp.update_replace_relation(regclass);
DROP FUNCTION pg_temp.update_replace_function(regprocedure);
DROP FUNCTION pg_temp.update_drop_saved(text, text[]);
DROP FUNCTION pg_temp.update_set_aside(oid, oid, text);
DROP FUNCTION pg_temp.update_object_name(oid, oid);
DROP TABLE pg_temp.update_saved_privileges, pg_temp.update_saved_views, pg_temp.update_init_privs,
           pg_temp.update_members, pg_temp.update_problems;
