-- incentives--0.3.0--0.4.0.sql: built by make from the parts of incentives 0.4.0 in src/sql/incentives/
-- (docs/architecture.md); released, it is kept as it is in src/sql/released/.
\echo Use "ALTER EXTENSION incentives UPDATE TO '0.4.0'" to load this file. \quit

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

-- ---- src/sql/incentives/upgrade/0.3.0--0.4.0.sql

-- incentives 0.3.0 -> 0.4.0: what changes in schemas, tables and types,
-- and the 0.3.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function, procedure and view of 0.4.0, created or replaced in place;
-- triggers and policies created again), 0.3.0--0.4.0.finish.sql if there
-- is one, then src/sql/update_end.sql (the Makefile).  A fresh install
-- runs the released scripts up to 0.3.0 and then this same update script,
-- so this file is where 0.4.0's tables and types are defined.  How a
-- feature adds a table, a column of incentives.earning or a column of a
-- function's result, and what to do when a signature must change:
-- docs/architecture.md, Install and upgrade scripts.  What the update does
-- to each object a user can depend on: docs/backup-and-upgrade.md,
-- Upgrade (keep it listed there).

------------------------------------------------------------------------
-- Ledger guards (docs/lifecycle.md, Settlement statements, Removing a
-- settled offer, Accruals)
------------------------------------------------------------------------

-- settle and accrue record the relation they read their transactions from
-- (NULL: written before 0.4.0, from incentives.transactions).
ALTER TABLE incentives.statements ADD COLUMN transactions text;
COMMENT ON COLUMN incentives.statements.transactions IS
  'The relation incentives.settle read the transactions from (its transactions argument); NULL for a statement written before 0.4.0 (incentives.transactions)';
ALTER TABLE incentives.accruals ADD COLUMN transactions text;
COMMENT ON COLUMN incentives.accruals.transactions IS
  'The relation incentives.accrue read the transactions from (its transactions argument); NULL for an accrual written before 0.4.0 (incentives.transactions)';

-- A statement or an accrual dated in the future is voided by one that
-- reverses it (incentives.void_statement, void_accrual): appended, never
-- deleted.
ALTER TABLE incentives.statements ADD COLUMN reverses bigint, ADD COLUMN reason text;
COMMENT ON COLUMN incentives.statements.reverses IS
  'The statement this one reverses (incentives.void_statement: its lines negate that statement''s, with the same date); NULL for a settlement';
COMMENT ON COLUMN incentives.statements.reason IS 'Why the reversal was written (NULL for a settlement)';
ALTER TABLE incentives.accruals ADD COLUMN reverses bigint, ADD COLUMN reason text;
COMMENT ON COLUMN incentives.accruals.reverses IS
  'The accrual this one reverses (incentives.void_accrual: its lines take each pair back to where it was before that accrual, with the same date); NULL for an accrual';
COMMENT ON COLUMN incentives.accruals.reason IS 'Why the reversal was written (NULL for an accrual)';

-- A statement line says why: its kind, computed from its amounts (so the
-- lines of 0.3.0 get theirs as the column is added), and the offer's
-- version when it was written.
ALTER TABLE incentives.statement_lines
    ADD COLUMN kind text GENERATED ALWAYS AS (
        CASE WHEN amount_due = 0 THEN 'unchanged'
             WHEN amount_due < 0 THEN 'clawback'
             WHEN settled_before = 0 THEN 'payment'
             ELSE 'true_up' END) STORED,
    ADD COLUMN offer_version integer;
COMMENT ON COLUMN incentives.statement_lines.kind IS
  'Why the line: unchanged (amount_due 0), clawback (amount_due < 0), payment (amount_due > 0, nothing settled before), true_up (amount_due > 0 over an earlier settlement)';
COMMENT ON COLUMN incentives.statement_lines.offer_version IS
  'The offer''s current version (incentives.offer_versions) when the line was written; NULL when the offer did not exist then (a clawback after its removal). A version different from the pair''s previous line''s shows a change of terms';
-- Lines of 0.3.0: the version current when their statement was written.
ALTER TABLE incentives.statement_lines DISABLE TRIGGER statement_lines_append_only;
UPDATE incentives.statement_lines AS l
   SET offer_version = v.version
  FROM incentives.statements AS s, incentives.offer_versions AS v
 WHERE s.statement_id = l.statement_id
   AND v.offer_key = l.offer_key
   AND v.valid_from <= s.created_at
   AND (v.valid_to IS NULL OR v.valid_to > s.created_at);
ALTER TABLE incentives.statement_lines ENABLE TRIGGER statement_lines_append_only;
CREATE INDEX statement_lines_offer_idx ON incentives.statement_lines (offer_key);
COMMENT ON INDEX incentives.statement_lines_offer_idx IS
  'Lines by offer (the check that refuses removing a settled offer)';

-- The deliberate removals of settled offers (incentives.remove_settled_offer).
CREATE TABLE incentives.offer_removals (
    removal_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    offer_key       text NOT NULL,
    reason          text NOT NULL CHECK (btrim(reason) <> ''),
    settled_total   numeric(20, 2) NOT NULL,
    participants    integer NOT NULL,
    last_statement_date date,
    document        jsonb NOT NULL,
    removed_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    removed_by      text NOT NULL DEFAULT CURRENT_USER,
    removed_in      xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id()
);
COMMENT ON TABLE incentives.offer_removals IS
  'Every offer removed on purpose by incentives.remove_settled_offer: who, when, why, and what it had settled (the next statement claws that back); append-only';
COMMENT ON COLUMN incentives.offer_removals.removal_id IS 'Removal number (identity)';
COMMENT ON COLUMN incentives.offer_removals.offer_key IS 'The offer removed';
COMMENT ON COLUMN incentives.offer_removals.reason IS 'Why, as given to remove_settled_offer';
COMMENT ON COLUMN incentives.offer_removals.settled_total IS 'Sum of amount_due of its statement lines when it was removed';
COMMENT ON COLUMN incentives.offer_removals.participants IS 'Participants with a settled total other than zero for it';
COMMENT ON COLUMN incentives.offer_removals.last_statement_date IS 'Its latest statement''s date (NULL: never settled)';
COMMENT ON COLUMN incentives.offer_removals.document IS 'The offer document removed';
COMMENT ON COLUMN incentives.offer_removals.removed_at IS 'Start of the transaction that removed it';
COMMENT ON COLUMN incentives.offer_removals.removed_by IS 'The role that removed it';
COMMENT ON COLUMN incentives.offer_removals.removed_in IS 'The transaction that removed it (the end-of-transaction check lets that transaction''s delete through)';
SELECT pg_catalog.pg_extension_config_dump('incentives.offer_removals', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.offer_removals', 'removal_id'), '');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.offer_removals', 'TABLE', 'incentives.offers');
SELECT pg_temp.update_grant_like('SEQUENCE', 'incentives.offer_removals_removal_id_seq',
                                 'SEQUENCE', 'incentives.statements_statement_id_seq');

-- Statements and accruals dated after today lock the ledger: a later
-- settle or accrue of an earlier date is refused.  0.4.0 refuses such
-- dates; the update reports those already written (the remedy:
-- docs/lifecycle.md, Statements dated in the future).  (An extension
-- script runs with client_min_messages raised to warning: the report
-- lowers it for the length of its function, so that the NOTICEs reach the
-- client that runs ALTER EXTENSION ... UPDATE.)
CREATE FUNCTION pg_temp.update_report_future()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET client_min_messages = notice
AS $function$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT s.statement_id, s.statement_date FROM incentives.statements AS s
              WHERE s.statement_date > current_date ORDER BY s.statement_id LOOP
        RAISE NOTICE 'statement % is dated % (after today): later statements of an earlier date are refused; incentives.void_statement(%, reason) voids it (docs/lifecycle.md, Statements dated in the future)',
                     r.statement_id, r.statement_date, r.statement_id;
    END LOOP;
    FOR r IN SELECT a.accrual_id, a.as_of_date FROM incentives.accruals AS a
              WHERE a.as_of_date > current_date ORDER BY a.accrual_id LOOP
        RAISE NOTICE 'accrual % is dated % (after today): later accruals of an earlier date are refused; incentives.void_accrual(%, reason) voids it (docs/lifecycle.md, Statements dated in the future)',
                     r.accrual_id, r.as_of_date, r.accrual_id;
    END LOOP;
END
$function$;
SELECT pg_temp.update_report_future();
DROP FUNCTION pg_temp.update_report_future();

-- settle and accrue take the relation of the transactions (a new last
-- argument), and so do their internal parts: the users' views over them
-- are kept (there are none over a procedure), their privileges carried
-- over, and the 0.3.0 ones dropped.
SELECT pg_temp.update_replace_function('incentives.settle(date, text)');
SELECT pg_temp.update_replace_function('incentives.accrue(date)');
SELECT pg_temp.update_replace_function('incentives_internal.settle_work(date, text)');
SELECT pg_temp.update_replace_function('incentives_internal.accrue_work(date)');
SELECT pg_temp.update_replace_function('incentives_internal.settle_run(date, text)');
SELECT pg_temp.update_replace_function('incentives_internal.accrue_run(date)');
-- A refresh in place writes its rows from C as a full one does:
-- refresh_write takes the participant (a new last argument), and the
-- batch's INSERT ... SELECT is gone.
SELECT pg_temp.update_replace_function('incentives_internal.refresh_write(regclass, bigint, regclass, integer, boolean, integer)');
SELECT pg_temp.update_drop_function('incentives_internal.refresh_earnings_batch(regclass, bigint, text, regclass, boolean)');
-- A refresh with jobs > 1 writes into a partition committed before its
-- writers start: refresh_earnings_work takes it (a new last argument).
SELECT pg_temp.update_replace_function('incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean, integer)');
SELECT pg_temp.update_check();
DROP PROCEDURE incentives.settle(date, text);
DROP PROCEDURE incentives.accrue(date);
DROP FUNCTION incentives_internal.settle_work(date, text);
DROP FUNCTION incentives_internal.accrue_work(date);
DROP FUNCTION incentives_internal.settle_run(date, text);
DROP FUNCTION incentives_internal.accrue_run(date);
DROP FUNCTION incentives_internal.refresh_write(regclass, bigint, regclass, integer, boolean, integer);
DROP FUNCTION incentives_internal.refresh_earnings_batch(regclass, bigint, text, regclass, boolean);
DROP FUNCTION incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean, integer);

-- The accrual floor: what is already earned is owed.
COMMENT ON COLUMN incentives.forecast_row.accrual_to_date IS
  'max(round(projected_earnings x elapsed_days / span_days, 2), earned_to_date): the straight-line share of the projected payout accrued by as_of_date, never less than what is already earned';

------------------------------------------------------------------------
-- Checking a program book (code/32_offer_warnings.sql): the row types of
-- offer_warnings, program_skus and transaction_warnings (named, so that
-- each can gain a column without a drop).
------------------------------------------------------------------------

CREATE TYPE incentives.offer_warning_row AS (
    offer_key text,
    path      text,
    code      text,
    message   text
);
COMMENT ON TYPE incentives.offer_warning_row IS
  'A row of incentives.offer_warnings(): the offer, the JSON path of what the warning is about (NULL when it is about no field), its code and a sentence naming the value';
COMMENT ON COLUMN incentives.offer_warning_row.offer_key IS 'The offer (for enrollment_without_offer: the enrollments'' offer_key, which names no offer)';
COMMENT ON COLUMN incentives.offer_warning_row.path IS 'The JSON path in the offer document of what the warning is about; NULL when it is about no field of the document';
COMMENT ON COLUMN incentives.offer_warning_row.code IS 'What kind of warning (docs/reference.md, Offer warnings)';
COMMENT ON COLUMN incentives.offer_warning_row.message IS 'A sentence naming the value, with a suggestion where one fits';

CREATE TYPE incentives.offer_change_row AS (
    participant_key text,
    earned_now      numeric,
    earned_after    numeric,
    settled         numeric,
    change          numeric,
    due_after       numeric
);
COMMENT ON TYPE incentives.offer_change_row IS
  'A row of incentives.preview_offer_change(): what storing an offer document would change for one participant';
COMMENT ON COLUMN incentives.offer_change_row.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.offer_change_row.earned_now IS 'Earned under the stored offer (0 when there is none), 2 places';
COMMENT ON COLUMN incentives.offer_change_row.earned_after IS 'Earned under the document previewed, 2 places';
COMMENT ON COLUMN incentives.offer_change_row.settled IS 'The participant''s settled total for the offer (the amount_due of its statement lines)';
COMMENT ON COLUMN incentives.offer_change_row.change IS 'earned_after - earned_now';
COMMENT ON COLUMN incentives.offer_change_row.due_after IS 'earned_after - settled: what the next statement would pay (negative: claw back) after the change';

CREATE TYPE incentives.program_sku_row AS (
    offer_key    text,
    sku_key      text,
    role         text,
    transactions bigint
);
COMMENT ON TYPE incentives.program_sku_row IS
  'A row of incentives.program_skus(): a SKU an offer reads, its role and how many transactions match it';
COMMENT ON COLUMN incentives.program_sku_row.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_sku_row.sku_key IS 'A SKU the offer reads';
COMMENT ON COLUMN incentives.program_sku_row.role IS 'earning, threshold, requirement, set:<sku_set key>, price or conversion';
COMMENT ON COLUMN incentives.program_sku_row.transactions IS 'Transactions that match it in that role';

CREATE TYPE incentives.transaction_warning_row AS (
    participant_key text,
    transaction_id  text,
    code            text,
    message         text
);
COMMENT ON TYPE incentives.transaction_warning_row IS
  'A row of incentives.transaction_warnings(): a transaction a calculation would refuse, what is wrong with it and a sentence naming it';
COMMENT ON COLUMN incentives.transaction_warning_row.participant_key IS 'The transaction''s participant (NULL when that is what is missing)';
COMMENT ON COLUMN incentives.transaction_warning_row.transaction_id IS 'The transaction (NULL when that is what is missing)';
COMMENT ON COLUMN incentives.transaction_warning_row.code IS 'null_column, no_unit_conversion, invalid_number or duplicate_transaction';
COMMENT ON COLUMN incentives.transaction_warning_row.message IS 'A sentence naming the transaction, the column or the units';

-- Prospective rate changes (docs/lifecycle.md, Prospective rate changes)
ALTER TABLE incentives.offer_versions ADD COLUMN effective_from date;
COMMENT ON COLUMN incentives.offer_versions.effective_from IS
  'The first transaction date this version''s rate values apply to (incentives.change_rates); NULL: an ordinary, retrospective version';
-- The locks of a refresh of one participant (docs/operations.md,
-- Concurrency): a participant's row, inserted and deleted by the refresh
-- in its transaction, so a second refresh of it waits (which needs INSERT
-- and DELETE on the table): a role without those privileges cannot take
-- it first, as it could an advisory lock.  Empty between refreshes.
CREATE TABLE incentives.refresh_locks (
    participant_key text NOT NULL PRIMARY KEY
);
COMMENT ON TABLE incentives.refresh_locks IS
  'The row of a participant refreshed on its own, inserted and deleted by the refresh so that two refreshes of one participant take turns (docs/operations.md, Concurrency); empty between refreshes';
COMMENT ON COLUMN incentives.refresh_locks.participant_key IS 'The participant';
SELECT pg_temp.update_grant_like('TABLE', 'incentives.refresh_locks', 'TABLE', 'incentives.earnings');
-- When a change was logged, so that a changed_only refresh under
-- incentives.changed_only_limit takes the participants logged first
-- (docs/lifecycle.md, changed_only => true).  The rows of 0.3.0 get the
-- time of the update.
ALTER TABLE incentives.earnings_changes ADD COLUMN logged_at timestamptz NOT NULL DEFAULT pg_catalog.now();
COMMENT ON COLUMN incentives.earnings_changes.logged_at IS
  'Start of the transaction that logged the change; a changed_only refresh under incentives.changed_only_limit takes the participants logged first';
-- The change log by participant: a changed_only refresh under
-- incentives.changed_only_limit finds each participant's first entry and
-- deletes the entries of those it takes without reading the whole log,
-- which grows while writers outpace the runs (docs/lifecycle.md,
-- changed_only => true).
CREATE INDEX earnings_changes_participant_idx ON incentives.earnings_changes (participant_key, logged_at);
COMMENT ON INDEX incentives.earnings_changes_participant_idx IS
  'Each participant''s entries in the order they were logged: a changed_only refresh under incentives.changed_only_limit reads the first of each and deletes those of the participants it takes';

-- ---- src/sql/incentives/code/10_offers.sql

------------------------------------------------------------------------
-- Offer validation
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.offer_error(document jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_offer_error'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives.offer_error(jsonb) IS
  'Checks an offer document against every rule a write does (unknown fields under incentives.unknown_offer_fields, a percent above 100), over the offer''s stored version if any; NULL when it may be stored, else the message the offers table would raise';

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


------------------------------------------------------------------------
-- What the engine reads of an offer, for the checks of a program book
-- (docs/reference.md, Strict offers, Offer warnings, Checking a program
-- book)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.offer_fields()
RETURNS TABLE (object text, field text)
AS 'MODULE_PATHNAME', 'incentives_offer_fields'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION incentives.offer_fields() IS
  'Every object of an offer document (and of the request of incentives.calculate(jsonb)) with the fields it defines, besides the annotation fields label, description and name (and the offer''s metadata): any other field is refused when a document is written (docs/reference.md, Fields of every object)';

CREATE OR REPLACE FUNCTION incentives_internal.offer_findings(document jsonb)
RETURNS TABLE (path text, code text, message text)
AS 'MODULE_PATHNAME', 'incentives_offer_findings'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives_internal.offer_findings(jsonb) IS
  'offer_warnings helper: what an offer document says alone that is legal but likely wrong (unknown_field: a field no object defines, with the field meant; implausible_rate: a percent rate above 25 or below 0.1, or a percent tier more than 4 times the next lower one), each at its JSON path; an invalid document is an error (22023)';

CREATE OR REPLACE FUNCTION incentives_internal.offer_references(document jsonb)
RETURNS TABLE (path text, kind text, role text, sku_key text, transaction_type text,
               period_key text, start_date date, end_date date, from_uom text,
               per_unit boolean)
AS 'MODULE_PATHNAME', 'incentives_offer_references'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives_internal.offer_references(jsonb) IS
  'program_skus and offer_warnings helper: what an offer reads, read from the compiled offer: each SKU key (kind sku) with its role (earning, threshold, requirement, set:KEY, price, conversion), the transaction type and period of the item holding it, a stacked conversion''s from unit and whether it is paid per unit; each transaction_type (kind transaction_type) and each period (kind period), at its JSON path';

CREATE OR REPLACE FUNCTION incentives_internal.unknown_fields(object jsonb, kind text)
RETURNS TABLE (field text, problem text)
AS 'MODULE_PATHNAME', 'incentives_unknown_fields'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives_internal.unknown_fields(jsonb, text) IS
  'calculate(jsonb) helper: each field of a JSON object that an object of kind (an object of incentives.offer_fields()) does not define, with the problem ("is not a field of ...; did you mean ...?")';

-- ---- src/sql/incentives/code/11_offer_keys.sql

------------------------------------------------------------------------
-- Offer keys and the enrollments' references to them (docs/reference.md,
-- Offers and Enrollment)
--
-- On every write:
--   * an offer_key is non-empty, has no leading or trailing white space
--     and no control character (22023, the key shown as a JSON string so
--     that the bad character can be seen);
--   * an offer_key equal to another offer's but for letter case is refused
--     (23505, naming the existing offer).  Writers of keys that differ
--     only by case take turns (a transaction-level advisory lock on the
--     lower-case key, taken before the lookup), so in READ COMMITTED (the
--     default) the second sees the first once it has committed; under
--     SERIALIZABLE the two conflict and one is cancelled (40001).  Under
--     REPEATABLE READ a writer that had to wait for a rival gets 40001
--     (its snapshot cannot see the rival's row);
--   * an enrollment names an existing offer (23503, with a hint when an
--     offer differs only by case).  It is not a foreign key: deleting an
--     offer leaves its enrollments.
--
-- What is already stored is never refused: the checks apply to a key
-- being written, not to one a row already has (an UPDATE that keeps the
-- key, an upsert of an existing key, an upsert of an existing enrollment
-- window), and a restore reports instead of refusing (a NOTICE):
--   * an offer row whose key's open version in incentives.offer_versions
--     holds this very document is already stored: the restore of a dump
--     (offer_versions is loaded before offers; the versioning trigger
--     treats it the same way);
--   * while row_security or check_function_bodies is off: pg_dump's
--     scripts and pg_restore set both for every session of a restore
--     (enrollments are loaded before the offers they name), and
--     store_participant_data turns check_function_bodies off for the rows a
--     coordinator moves between shards.
-- So a 0.3.0 database whose offers include "VCS26.base_cp" beside
-- "vcs26.base_cp" updates, dumps and restores as it is; incentives.
-- offer_warnings and the update's NOTICEs report what it holds.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_key_problem(offer_key text)
RETURNS text
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- white space: the ASCII and Unicode spaces (control characters are
    -- checked after, so a trailing tab is trailing white space)
    SELECT CASE
        WHEN $1 IS NULL THEN NULL
        WHEN $1 = '' THEN 'offer key "" is empty'
        WHEN $1 ~ '^[\s\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]'
            THEN format('offer key %s has leading white space', to_jsonb($1)::text)
        WHEN $1 ~ '[\s\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]$'
            THEN format('offer key %s has trailing white space', to_jsonb($1)::text)
        WHEN $1 ~ '[\u0001-\u001f\u007f-\u009f]'
            THEN format('offer key %s has a control character (U+%s)', to_jsonb($1)::text,
                        lpad(upper(to_hex(ascii(substring($1 from '[\u0001-\u001f\u007f-\u009f]')))), 4, '0'))
    END
$function$;
COMMENT ON FUNCTION incentives_internal.offer_key_problem(text) IS
  'What is wrong with an offer key (empty, leading or trailing white space, a control character), the key shown as a JSON string; NULL when it is well formed';

CREATE OR REPLACE FUNCTION incentives_internal.restoring()
RETURNS boolean
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- pg_dump's output sets both for every session of a restore; a single
    -- session restore has check_function_bodies on again after CREATE
    -- EXTENSION (the released scripts end with RESET check_function_bodies),
    -- row_security stays off
    SELECT current_setting('row_security') = 'off'
        OR current_setting('check_function_bodies') = 'off'
$function$;
COMMENT ON FUNCTION incentives_internal.restoring() IS
  'True while row_security or check_function_bodies is off, as in every session restoring pg_dump''s output (and in store_participant_data): the key and reference checks then report what they would refuse';

CREATE OR REPLACE FUNCTION incentives_internal.offer_key_case_rival(offer_key text, except_key text DEFAULT NULL)
RETURNS text
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- the first (in byte order) stored offer whose key equals this one but
    -- for letter case; except_key: the row being updated
    SELECT o.offer_key
      FROM incentives.offers AS o
     WHERE lower(o.offer_key) = lower($1)
       AND o.offer_key <> $1
       AND o.offer_key IS DISTINCT FROM $2
     ORDER BY o.offer_key COLLATE "C"
     LIMIT 1
$function$;
COMMENT ON FUNCTION incentives_internal.offer_key_case_rival(text, text) IS
  'The stored offer whose key differs from the given one only in letter case (the first in byte order), other than except_key; NULL when there is none';

CREATE OR REPLACE FUNCTION incentives_internal.offers_check_key()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_key     text := NEW.document ->> 'offer_key';  -- the generated column is not computed yet
    v_old     text;
    v_problem text;
    v_rival   text;
BEGIN
    IF v_key IS NULL OR jsonb_typeof(NEW.document -> 'offer_key') <> 'string' THEN
        RETURN NEW;          -- offers_validate refuses the document
    END IF;
    IF TG_OP = 'UPDATE' THEN
        v_old := OLD.offer_key;
        IF v_old = v_key THEN
            RETURN NEW;      -- the key it already has
        END IF;
    ELSIF EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = v_key) THEN
        RETURN NEW;          -- a stored key: an upsert's update, or the primary key refuses it
    END IF;

    v_problem := incentives_internal.offer_key_problem(v_key);
    IF v_problem IS NULL THEN
        -- writers of one lower-case key take turns; the lookup, a later
        -- statement, sees a rival that committed meanwhile
        IF NOT pg_try_advisory_xact_lock(hashtext('incentives.offer_key'), hashtext(lower(v_key))) THEN
            PERFORM pg_advisory_xact_lock(hashtext('incentives.offer_key'), hashtext(lower(v_key)));
            IF current_setting('transaction_isolation') = 'repeatable read' THEN
                RAISE EXCEPTION 'could not check offer key "%" against a concurrent write of the same key but for case', v_key
                      USING ERRCODE = 'serialization_failure',
                            HINT = 'Retry the transaction.';
            END IF;
        END IF;
        v_rival := incentives_internal.offer_key_case_rival(v_key, v_old);
        IF v_rival IS NOT NULL THEN
            v_problem := format('offer key "%s" differs only in letter case from the existing offer "%s"', v_key, v_rival);
        END IF;
    END IF;
    IF v_problem IS NULL THEN
        RETURN NEW;
    END IF;

    IF incentives_internal.restoring()
       OR EXISTS (SELECT FROM incentives.offer_versions AS v
                   WHERE v.offer_key = v_key AND v.valid_to IS NULL AND v.document = NEW.document) THEN
        RAISE NOTICE '%; restored as it was stored', v_problem
              USING HINT = 'SELECT * FROM incentives.offer_warnings lists what the offers hold.';
        RETURN NEW;
    END IF;
    IF v_rival IS NOT NULL THEN
        RAISE EXCEPTION '%', v_problem
              USING ERRCODE = 'unique_violation',
                    DETAIL = 'Offer keys are compared without regard to letter case.',
                    HINT = format('Update the offer "%s", or choose another key.', v_rival);
    END IF;
    RAISE EXCEPTION '%', v_problem
          USING ERRCODE = 'invalid_parameter_value',
                HINT = 'An offer key has no surrounding white space and no control character.';
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_check_key() IS
  'Trigger: refuses an offer key that is empty, has leading or trailing white space or a control character (22023), or equals another offer''s but for letter case (23505, naming it); a key a row already has is never refused, and a restore (the open version holds this document, or row_security or check_function_bodies is off) reports with a NOTICE instead';

-- after offers_validate (triggers fire in name order): a bad document is
-- reported first
DROP TRIGGER IF EXISTS offers_validate_key ON incentives.offers;
CREATE TRIGGER offers_validate_key
    BEFORE INSERT OR UPDATE OF document ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_check_key();
COMMENT ON TRIGGER offers_validate_key ON incentives.offers IS
  'Refuses malformed offer keys and keys that differ from another offer''s only in letter case';

CREATE OR REPLACE FUNCTION incentives_internal.enrollments_check_offer()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_rival text;
BEGIN
    IF NEW.offer_key IS NULL
       OR EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = NEW.offer_key) THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF OLD.offer_key = NEW.offer_key THEN
            RETURN NEW;      -- the offer it already names
        END IF;
    ELSIF EXISTS (SELECT FROM incentives.enrollments AS e
                   WHERE e.participant_key = NEW.participant_key AND e.offer_key = NEW.offer_key
                     AND e.start_date = NEW.start_date) THEN
        RETURN NEW;          -- a stored window: an upsert's update, or the primary key refuses it
    END IF;
    IF incentives_internal.restoring() THEN
        RAISE NOTICE 'enrollment of participant "%" names no offer "%"; restored as it was stored',
              NEW.participant_key, NEW.offer_key;
        RETURN NEW;
    END IF;
    SELECT o.offer_key INTO v_rival
      FROM incentives.offers AS o
     WHERE lower(o.offer_key) = lower(NEW.offer_key)
     ORDER BY o.offer_key COLLATE "C"
     LIMIT 1;
    RAISE EXCEPTION 'enrollment of participant "%" names no offer "%"', NEW.participant_key, NEW.offer_key
          USING ERRCODE = 'foreign_key_violation',
                HINT = CASE WHEN v_rival IS NOT NULL
                            THEN format('The offer "%s" differs only in letter case.', v_rival)
                            ELSE 'Store the offer first.' END;
END
$function$;
COMMENT ON FUNCTION incentives_internal.enrollments_check_offer() IS
  'Trigger: refuses an enrollment naming no stored offer (23503, with a hint when an offer differs only by case); not a foreign key, so deleting an offer leaves its enrollments; a window already stored is never refused, and a restore (row_security or check_function_bodies off) reports with a NOTICE instead';

DROP TRIGGER IF EXISTS enrollments_check_offer ON incentives.enrollments;
CREATE TRIGGER enrollments_check_offer
    BEFORE INSERT OR UPDATE OF offer_key ON incentives.enrollments
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.enrollments_check_offer();
COMMENT ON TRIGGER enrollments_check_offer ON incentives.enrollments IS
  'Refuses an enrollment naming no stored offer';

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

------------------------------------------------------------------------
-- A factor the engine cannot calculate with is refused when it is written
-- (docs/reference.md, Unit conversions): every calculation reads every
-- conversion, so one such factor would fail them all.  A restore session
-- (incentives_internal.restoring()) loads it with a WARNING, as the offers
-- table does with what a write would refuse.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.number_problem(value numeric)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_number_problem'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives_internal.number_problem(numeric) IS
  'NULL when the engine calculates with the number exactly (at most 38 digits and 38 decimal places, finite), else what is wrong with it';

CREATE OR REPLACE FUNCTION incentives_internal.uom_conversions_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_problem text := incentives_internal.number_problem(NEW.factor);
BEGIN
    -- NaN and infinity: the table's check constraint refuses them (23514)
    IF v_problem IS NULL OR NEW.factor::text IN ('NaN', 'Infinity', '-Infinity') THEN
        RETURN NEW;
    END IF;
    IF incentives_internal.restoring() THEN
        RAISE WARNING 'unit conversion "%" to "%": factor % %', NEW.from_uom_key, NEW.to_uom_key, NEW.factor, v_problem
              USING DETAIL = 'Restored as it was dumped; every calculation fails while it is there.',
                    HINT = 'Round the factor to fewer digits with UPDATE incentives.uom_conversions.';
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'unit conversion "%" to "%": factor % %', NEW.from_uom_key, NEW.to_uom_key, NEW.factor, v_problem
          USING ERRCODE = 'invalid_parameter_value',
                COLUMN = 'factor', TABLE = 'uom_conversions', SCHEMA = 'incentives',
                DETAIL = 'Every calculation reads every unit conversion: one it cannot calculate with would fail them all.',
                HINT = 'Round the factor to fewer digits.';
END
$function$;
COMMENT ON FUNCTION incentives_internal.uom_conversions_check() IS
  'Trigger on incentives.uom_conversions: refuses (22023) a factor the engine cannot calculate with exactly; a restore session loads it with a WARNING';

DROP TRIGGER IF EXISTS uom_conversions_check ON incentives.uom_conversions;
CREATE TRIGGER uom_conversions_check
    BEFORE INSERT OR UPDATE OF factor ON incentives.uom_conversions
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.uom_conversions_check();
COMMENT ON TRIGGER uom_conversions_check ON incentives.uom_conversions IS
  'Refuses a unit conversion factor the engine cannot calculate with (more than 38 digits or 38 decimal places)';

-- ---- src/sql/incentives/code/14_offer_difference.sql

------------------------------------------------------------------------
-- How a new document of an offer differs from the one before it
-- (docs/lifecycle.md, Prospective rate changes): asked of the engine core,
-- which knows where an offer's rate values and annotations are.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_difference(old_document jsonb, new_document jsonb,
                                                                OUT kind text, OUT path text)
RETURNS record
AS 'MODULE_PATHNAME', 'incentives_offer_difference'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives_internal.offer_difference(jsonb, jsonb) IS
  'How new_document differs from old_document: kind same, annotations (label, description, name, metadata only), rates (rate values: standard and stacked rates[].rate, stepped tiers'' value), pool (a fixed_amount pool) or structure (anything else); path: the first field of the strongest kind found (NULL: none)';

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
    v_effective_from date;
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
    -- A restore writes no version: the dump holds them, and a parallel
    -- pg_restore may copy the offers before their versions (or while).
    IF TG_OP = 'INSERT' AND incentives_internal.restoring() THEN
        RETURN NULL;
    END IF;
    -- One writer of versions at a time.
    LOCK TABLE incentives.offer_versions IN SHARE ROW EXCLUSIVE MODE;
    -- a prospective rate change, or an annotation edit of one, has a date
    -- (17_rate_changes.sql), read while the current version is open
    IF TG_OP = 'UPDATE' AND OLD.offer_key = NEW.offer_key THEN
        v_effective_from := incentives_internal.version_effective_from(NEW.offer_key, OLD.document,
                                                                       NEW.document);
    END IF;
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
        INSERT INTO incentives.offer_versions (offer_key, version, document, valid_from, changed_by,
                                               effective_from)
        SELECT NEW.offer_key,
               COALESCE(max(v.version), 0) + 1,
               NEW.document,
               incentives_internal.offer_change_time(NEW.offer_key),
               current_user,
               v_effective_from
          FROM incentives.offer_versions AS v
         WHERE v.offer_key = NEW.offer_key;
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_version() IS
  'Trigger: keeps incentives.offer_versions in step with incentives.offers (a new version per insert or change of the document, the current one closed by a change or the delete; TRUNCATE closes every current one); an insert in a restore session (incentives_internal.restoring()) writes none: the dump holds the versions';

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
       AND $2.effective_from IS NOT DISTINCT FROM $1.effective_from
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

-- ---- src/sql/incentives/code/17_rate_changes.sql

------------------------------------------------------------------------
-- Prospective rate changes (docs/lifecycle.md, Prospective rate changes)
--
-- incentives.change_rates(offer_key, effective_from, document) stores a
-- document that differs from the current one only in rate values (and
-- annotations) as the offer's new version, with effective_from: the
-- transactions dated on or after it take its values, those before keep
-- the schedule's earlier ones.  The versioning trigger (15_offer_versions
-- .sql) writes the version; it reads the date from the transaction-local
-- setting incentives_internal.rate_change_from, which change_rates and
-- cancel_rate_change set, and checks the change itself, so setting it by
-- hand allows nothing change_rates would refuse.
--
-- The schedule of an offer is the chain of its versions from the latest
-- one without effective_from (a retrospective version: an INSERT, or an
-- UPDATE other than an annotation edit) to the current one.  A transaction
-- dated d takes the rate values of the highest-numbered version of the
-- chain whose effective_from <= d, the first version's before every
-- effective_from.  So a version is in force while no later version of
-- the chain starts on or before its own date: rate_schedule lists those.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.rate_schedule(offer_key text, as_of timestamptz DEFAULT NULL)
RETURNS TABLE (version integer, effective_from date, document jsonb)
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH known AS (          -- the versions that existed at as_of (NULL: now)
        SELECT v.version, v.effective_from, v.document, v.valid_from, v.valid_to
          FROM incentives.offer_versions AS v
         WHERE v.offer_key = $1
           AND ($2 IS NULL OR v.valid_from <= $2)),
    current_version AS (     -- the one valid then
        SELECT k.version, k.effective_from
          FROM known AS k
         WHERE ($2 IS NULL AND k.valid_to IS NULL)
            OR ($2 IS NOT NULL AND (k.valid_to IS NULL OR k.valid_to > $2))),
    chain AS (               -- back to the latest retrospective version
        SELECT k.version, k.effective_from, k.document
          FROM known AS k, current_version AS c
         WHERE c.effective_from IS NOT NULL
           AND k.version <= c.version
           AND k.version >= (SELECT max(b.version) FROM known AS b
                              WHERE b.version <= c.version AND b.effective_from IS NULL))
    SELECT s.version, s.effective_from, s.document
      FROM chain AS s
     WHERE NOT EXISTS (SELECT 1 FROM chain AS l
                        WHERE l.version > s.version
                          AND s.effective_from IS NOT NULL
                          AND l.effective_from <= s.effective_from)
     ORDER BY s.version
$function$;
COMMENT ON FUNCTION incentives_internal.rate_schedule(text, timestamptz) IS
  'The rate schedule of an offer as of as_of (NULL: now): the versions in force, first version (effective_from NULL) to current, in order; no rows when its current version is retrospective (no schedule); the calculation loads it';

CREATE OR REPLACE FUNCTION incentives_internal.latest_statement_date(offer_key text)
RETURNS date
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT max(s.statement_date)
      FROM incentives.statements AS s
      JOIN incentives.statement_lines AS l ON l.statement_id = s.statement_id
     WHERE l.offer_key = $1
       AND s.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
$function$;
COMMENT ON FUNCTION incentives_internal.latest_statement_date(text) IS
  'The date of the latest statement with a line of the offer, voided statements and their reversals left out (NULL: never settled)';

CREATE OR REPLACE FUNCTION incentives_internal.rate_change_check(offer_key text, old_document jsonb,
                                                                 new_document jsonb, effective_from date)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_kind     text;
    v_path     text;
    v_start    date;
    v_end      date;
    v_latest   date;
    v_settled  date;
BEGIN
    IF effective_from IS NULL THEN
        RAISE EXCEPTION 'offer "%": effective_from must not be NULL', offer_key
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'A change of every transaction''s rates is an UPDATE of incentives.offers.';
    END IF;
    SELECT d.kind, d.path INTO v_kind, v_path
      FROM incentives_internal.offer_difference(old_document, new_document) AS d;
    IF v_kind = 'pool' THEN
        RAISE EXCEPTION 'offer "%": % is a fixed_amount pool, and a rate change may change only rate values',
                        offer_key, v_path
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Such a change is retrospective: make it with UPDATE incentives.offers.';
    END IF;
    IF v_kind = 'structure' THEN
        RAISE EXCEPTION 'offer "%": % differs, and a rate change may change only rate values', offer_key,
                        COALESCE(v_path, 'the document')
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Such a change is retrospective: make it with UPDATE incentives.offers.';
    END IF;
    IF v_kind IN ('same', 'annotations') THEN
        RAISE EXCEPTION 'offer "%": the document changes no rate value', offer_key
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'An edit of labels, descriptions, names or metadata is an UPDATE of incentives.offers; it keeps the rate schedule.';
    END IF;
    SELECT min((p.value ->> 'start_date')::date), max((p.value ->> 'end_date')::date)
      INTO v_start, v_end
      FROM jsonb_array_elements(new_document -> 'periods') AS p;
    IF effective_from < v_start OR effective_from > v_end THEN
        RAISE EXCEPTION 'offer "%": effective_from % is outside the offer''s span % to %',
                        offer_key, effective_from, v_start, v_end
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT v.effective_from INTO v_latest
      FROM incentives.offer_versions AS v
     WHERE v.offer_key = rate_change_check.offer_key AND v.valid_to IS NULL;
    IF effective_from <= v_latest THEN
        RAISE EXCEPTION 'offer "%": effective_from % is not after its latest scheduled change, from %',
                        offer_key, effective_from, v_latest
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Undo that change first with incentives.cancel_rate_change.';
    END IF;
    v_settled := incentives_internal.latest_statement_date(offer_key);
    IF effective_from <= v_settled THEN
        RAISE EXCEPTION 'offer "%": effective_from % is not after its latest statement, dated %',
                        offer_key, effective_from, v_settled
              USING ERRCODE = 'invalid_parameter_value',
                    DETAIL = 'Settled dates change only retrospectively, on purpose.',
                    HINT = 'Choose a date after the statement, or change the offer with UPDATE incentives.offers and let the next statement true up.';
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.rate_change_check(text, jsonb, jsonb, date) IS
  'Refuses (22023) a prospective rate change that changes more than rate values, no rate value, a fixed_amount pool, or starts outside the offer''s span, on or before its latest scheduled change or on or before its latest statement';

CREATE OR REPLACE FUNCTION incentives.change_rates(offer_key text, effective_from date, document jsonb)
RETURNS integer
LANGUAGE plpgsql
VOLATILE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_old jsonb;
BEGIN
    SELECT o.document INTO v_old FROM incentives.offers AS o
     WHERE o.offer_key = change_rates.offer_key FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'offer "%" does not exist', offer_key
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'A new offer is an INSERT into incentives.offers.';
    END IF;
    IF document IS NULL THEN
        RAISE EXCEPTION 'offer "%": document must not be NULL', offer_key
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM incentives_internal.rate_change_check(offer_key, v_old, document, effective_from);
    PERFORM set_config('incentives_internal.rate_change_from', effective_from::text, true);
    UPDATE incentives.offers AS o SET document = change_rates.document
     WHERE o.offer_key = change_rates.offer_key;
    PERFORM set_config('incentives_internal.rate_change_from', '', true);
    RETURN (SELECT max(v.version) FROM incentives.offer_versions AS v
             WHERE v.offer_key = change_rates.offer_key);
END
$function$;
COMMENT ON FUNCTION incentives.change_rates(text, date, jsonb) IS
  'A prospective rate change: stores document (the current one but for rate values and annotations) as the offer''s new version, whose rate values apply to transactions dated on or after effective_from (inside the span, after the latest scheduled change and the latest statement); returns the version; runs with the caller''s rights (an UPDATE of incentives.offers)';

CREATE OR REPLACE FUNCTION incentives.cancel_rate_change(offer_key text)
RETURNS integer
LANGUAGE plpgsql
VOLATILE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_latest   date;
    v_previous jsonb;
BEGIN
    PERFORM 1 FROM incentives.offers AS o WHERE o.offer_key = cancel_rate_change.offer_key FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'offer "%" does not exist', offer_key USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT s.effective_from INTO v_latest
      FROM incentives_internal.rate_schedule(offer_key) AS s ORDER BY s.version DESC LIMIT 1;
    IF v_latest IS NULL THEN
        RAISE EXCEPTION 'offer "%" has no scheduled rate change', offer_key
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT s.document INTO v_previous
      FROM incentives_internal.rate_schedule(offer_key) AS s ORDER BY s.version DESC OFFSET 1 LIMIT 1;
    PERFORM set_config('incentives_internal.rate_change_from', 'cancel', true);
    UPDATE incentives.offers AS o SET document = v_previous
     WHERE o.offer_key = cancel_rate_change.offer_key;
    PERFORM set_config('incentives_internal.rate_change_from', '', true);
    RETURN (SELECT max(v.version) FROM incentives.offer_versions AS v
             WHERE v.offer_key = cancel_rate_change.offer_key);
END
$function$;
COMMENT ON FUNCTION incentives.cancel_rate_change(text) IS
  'Undoes the offer''s latest scheduled rate change: a new version equal to the one in force before it (its document and effective_from), the history kept; refused when that change starts on or before the latest statement; returns the version';

-- The versioning trigger's part: the effective_from of the version an
-- UPDATE writes, and the WARNING of an UPDATE that replaces a schedule.
CREATE OR REPLACE FUNCTION incentives_internal.version_effective_from(offer_key text, old_document jsonb,
                                                                      new_document jsonb)
RETURNS date
LANGUAGE plpgsql
VOLATILE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_setting  text := current_setting('incentives_internal.rate_change_from', true);
    v_current  date;
    v_from     date;
    v_previous jsonb;
    v_settled  date;
    v_dropped  text;
BEGIN
    SELECT v.effective_from INTO v_current
      FROM incentives.offer_versions AS v
     WHERE v.offer_key = version_effective_from.offer_key AND v.valid_to IS NULL;
    IF v_setting = 'cancel' THEN      -- cancel_rate_change: the version before the latest change
        SELECT s.effective_from, s.document INTO v_from, v_previous
          FROM incentives_internal.rate_schedule(offer_key) AS s
         ORDER BY s.version DESC OFFSET 1 LIMIT 1;
        IF NOT FOUND OR v_previous IS DISTINCT FROM new_document THEN
            RAISE EXCEPTION 'offer "%": the document is not the version in force before its latest scheduled change',
                            offer_key
                  USING ERRCODE = 'invalid_parameter_value',
                        HINT = 'Undo a scheduled change with incentives.cancel_rate_change.';
        END IF;
        v_settled := incentives_internal.latest_statement_date(offer_key);
        IF v_current <= v_settled THEN
            RAISE EXCEPTION 'offer "%": its change from % is settled: the latest statement is dated %',
                            offer_key, v_current, v_settled
                  USING ERRCODE = 'invalid_parameter_value',
                        DETAIL = 'Settled dates change only retrospectively, on purpose.',
                        HINT = 'Change the offer with UPDATE incentives.offers and let the next statement true up.';
        END IF;
        RETURN v_from;
    END IF;
    IF v_setting IS NOT NULL AND v_setting <> '' THEN   -- change_rates
        v_from := v_setting::date;
        PERFORM incentives_internal.rate_change_check(offer_key, old_document, new_document, v_from);
        RETURN v_from;
    END IF;
    IF (SELECT d.kind FROM incentives_internal.offer_difference(old_document, new_document) AS d)
       = 'annotations' THEN
        RETURN v_current;             -- an annotation edit keeps the schedule
    END IF;
    IF v_current IS NOT NULL THEN
        SELECT string_agg(format('%s (from %s)', s.version, s.effective_from), ', ' ORDER BY s.version)
          INTO v_dropped
          FROM incentives_internal.rate_schedule(offer_key) AS s
         WHERE s.effective_from IS NOT NULL;
        RAISE WARNING 'offer "%": this change replaces its rate schedule; versions % no longer apply',
                      offer_key, v_dropped
              USING HINT = 'A change of rate values from a date is incentives.change_rates; this one applies to every transaction.';
    END IF;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.version_effective_from(text, jsonb, jsonb) IS
  'Offer versioning helper: the effective_from of the version an UPDATE writes (change_rates'' date, checked; cancel_rate_change''s earlier version; an annotation edit keeps the current one; otherwise NULL, with a WARNING naming the scheduled versions it replaces)';

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
-- Programs: what the engine compiled from each offer document (src/pg/load/
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

-- An offer with a rate schedule (docs/lifecycle.md, Prospective rate
-- changes) shows the rates of each version in force, with the days they
-- apply to: effective_from (NULL: from the start) to effective_to (the
-- day before the next version's effective_from; NULL: to the end).
CREATE OR REPLACE VIEW incentives.program_rates WITH (security_invoker = true) AS
SELECT r.*, s.effective_from, s.effective_to
  FROM incentives.offers AS o
  LEFT JOIN LATERAL (SELECT rs.document, rs.effective_from,
                            lead(rs.effective_from) OVER (ORDER BY rs.version) - 1 AS effective_to
                       FROM incentives_internal.rate_schedule(o.offer_key) AS rs) AS s ON true
 CROSS JOIN LATERAL incentives_internal.offer_rates(COALESCE(s.document, o.document)) AS r;
COMMENT ON VIEW incentives.program_rates IS
  'Every rate of every offer as a flat row, keyed as the calculation reports it (incentive_rate_key): standard, one row per entry and SKU; stepped, one row per tier; stacked, one row per stack, set and SKU';
COMMENT ON COLUMN incentives.program_rates.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_rates.effective_from IS 'An offer with a rate schedule: the first transaction date the rate applies to (NULL: from the start)';
COMMENT ON COLUMN incentives.program_rates.effective_to IS 'An offer with a rate schedule: the last transaction date the rate applies to (NULL: to the end)';
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
    SELECT r.*, s.effective_from, s.effective_to
      FROM incentives.offer_versions AS v
      LEFT JOIN LATERAL (SELECT rs.document, rs.effective_from,
                                lead(rs.effective_from) OVER (ORDER BY rs.version) - 1 AS effective_to
                           FROM incentives_internal.rate_schedule(v.offer_key, $1) AS rs) AS s
        ON true
     CROSS JOIN LATERAL incentives_internal.offer_rates(COALESCE(s.document, v.document)) AS r
     WHERE v.valid_from <= COALESCE($1, now())
       AND (v.valid_to IS NULL OR v.valid_to > COALESCE($1, now()))
$function$;
COMMENT ON FUNCTION incentives.program_rates(timestamptz) IS
  'incentives.program_rates with the offers as they were at as_of (NULL: now; incentives.offer_versions)';

-- ---- src/sql/incentives/code/32_offer_warnings.sql

------------------------------------------------------------------------
-- Checking a program book (docs/analyst-guide.md, Checking a program
-- book): what in the stored offers is legal but likely wrong
-- (offer_warnings), every SKU each offer reads with the transactions that
-- match it (program_skus), and every stored transaction a calculation
-- would refuse (transaction_warnings).  All computed on read, against the
-- data as it is.
--
-- What an offer reads comes from the engine (src/pg/load/offer_info.c):
-- incentives_internal.offer_references (every SKU, transaction type and
-- period of a document, with its JSON path and role) and
-- incentives_internal.offer_findings (what the document alone says:
-- unknown fields, implausible rates); nothing here walks a document.
--
-- Every function reads the transactions with the caller's rights (none is
-- SECURITY DEFINER) and the views are security_invoker: a role under
-- row-level security on the transactions counts and checks only the
-- transactions it can see, and sees only the enrollments and memberships
-- its policies show (docs/security.md).  A relation other than
-- incentives.transactions is checked as the calculation checks it (its
-- columns and their types, the same errors) and named only by its
-- regclass, which is always a quoted, qualified name.
------------------------------------------------------------------------

-- The transactions relation checked as the calculation checks it
-- (src/pg/read/txn_relation.c): every column present, of a type that converts
-- exactly (through domains).  Returns whether a unique index on
-- transaction_id alone makes a repeated transaction_id impossible.
CREATE OR REPLACE FUNCTION incentives_internal.transactions_relation_check(transactions regclass)
RETURNS boolean
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_relation regclass := transactions_relation_check.transactions;
    v_column   record;
    v_type     oid;
    v_attnum   smallint;
    v_id_attnum smallint;
    v_fits     boolean;
BEGIN
    IF v_relation IS NULL THEN
        RAISE EXCEPTION 'transactions must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_class AS c WHERE c.oid = v_relation) THEN
        RAISE EXCEPTION 'relation with OID % does not exist', v_relation::oid
              USING ERRCODE = 'undefined_table';
    END IF;
    FOR v_column IN SELECT * FROM (VALUES
            (1, 'transaction_id', 't'), (2, 'participant_key', 't'), (3, 'transaction_type', 't'),
            (4, 'transaction_date', 'd'), (5, 'sku_key', 't'), (6, 'quantity', 'n'),
            (7, 'uom_key', 't'), (8, 'amount', 'n')) AS r(i, name, kind)
        ORDER BY r.i
    LOOP
        SELECT a.atttypid, a.attnum INTO v_type, v_attnum
          FROM pg_attribute AS a
         WHERE a.attrelid = v_relation AND a.attname = v_column.name
           AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'relation % has no column "%"', v_relation, v_column.name
                  USING ERRCODE = 'undefined_column',
                        HINT = 'The transactions relation needs the columns transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key and amount.';
        END IF;
        -- the base type of a domain (of a domain ...)
        v_type := (WITH RECURSIVE b(oid, base) AS (
                       SELECT t.oid, t.typbasetype FROM pg_type AS t WHERE t.oid = v_type
                       UNION ALL
                       SELECT t.oid, t.typbasetype FROM b JOIN pg_type AS t ON t.oid = b.base
                        WHERE b.base <> 0)
                   SELECT b.oid FROM b WHERE b.base = 0);
        v_fits := CASE v_column.kind
                      WHEN 't' THEN v_type IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype)
                      WHEN 'd' THEN v_type = 'date'::regtype
                      ELSE v_type IN ('numeric'::regtype, 'int2'::regtype, 'int4'::regtype, 'int8'::regtype)
                  END;
        IF NOT v_fits THEN
            RAISE EXCEPTION 'column "%" of relation % has type %, expected %',
                  v_column.name, v_relation,
                  (SELECT format_type(a.atttypid, NULL) FROM pg_attribute AS a
                    WHERE a.attrelid = v_relation AND a.attnum = v_attnum),
                  CASE v_column.kind WHEN 't' THEN 'text or varchar' WHEN 'd' THEN 'date'
                                     ELSE 'numeric or an integer type' END
                  USING ERRCODE = 'datatype_mismatch';
        END IF;
        IF v_column.name = 'transaction_id' THEN
            v_id_attnum := v_attnum;
        END IF;
    END LOOP;
    -- a valid, immediate, non-partial unique index on the plain column alone
    RETURN EXISTS (SELECT FROM pg_class AS c
                     JOIN pg_index AS i ON i.indrelid = c.oid
                    WHERE c.oid = v_relation AND c.relkind IN ('r', 'p')
                      AND i.indisunique AND i.indimmediate AND i.indisvalid
                      AND i.indnkeyatts = 1 AND i.indkey[0] = v_id_attnum
                      AND i.indpred IS NULL AND i.indexprs IS NULL);
END
$function$;
COMMENT ON FUNCTION incentives_internal.transactions_relation_check(regclass) IS
  'offer_warnings, program_skus and transaction_warnings helper: the transactions relation checked as the calculation checks it (every transaction column present, of a type that converts exactly; the calculation''s errors), and whether a unique index on transaction_id alone makes a repeated transaction_id impossible';

-- The transactions counted by SKU, unit, type and date: what offer_warnings
-- and program_skus need of them, in one read of the relation.
CREATE OR REPLACE FUNCTION incentives_internal.transaction_profile(transactions regclass)
RETURNS TABLE (sku_key text, uom_key text, transaction_type text, transaction_date date,
               n bigint)
LANGUAGE plpgsql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_relation regclass := COALESCE(transaction_profile.transactions, 'incentives.transactions');
BEGIN
    PERFORM incentives_internal.transactions_relation_check(v_relation);
    RETURN QUERY EXECUTE format(
        'SELECT t.sku_key::pg_catalog.text, t.uom_key::pg_catalog.text,'
        ' t.transaction_type::pg_catalog.text, t.transaction_date, pg_catalog.count(*)'
        '  FROM %s AS t GROUP BY 1, 2, 3, 4', v_relation);
END
$function$;
COMMENT ON FUNCTION incentives_internal.transaction_profile(regclass) IS
  'offer_warnings and program_skus helper: the transactions of a relation (NULL: incentives.transactions) counted by sku_key, uom_key, transaction_type and transaction_date (one read, with the caller''s rights: row-level security applies)';

-- What every stored offer reads: incentives_internal.offer_references of
-- each document, with its offer.
CREATE OR REPLACE FUNCTION incentives_internal.offer_references_all()
RETURNS TABLE (offer_key text, path text, kind text, role text, sku_key text,
               transaction_type text, period_key text, start_date date, end_date date,
               from_uom text, per_unit boolean)
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT o.offer_key, r.path, r.kind, r.role, r.sku_key, r.transaction_type, r.period_key,
           r.start_date, r.end_date, r.from_uom, r.per_unit
      FROM incentives.offers AS o
     CROSS JOIN LATERAL incentives_internal.offer_references(o.document) AS r
$function$;
COMMENT ON FUNCTION incentives_internal.offer_references_all() IS
  'offer_warnings, program_skus and transaction_warnings helper: incentives_internal.offer_references of every stored offer, with its offer_key';

------------------------------------------------------------------------
-- offer_warnings
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.offer_warnings(
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.offer_warning_row
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 10
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH refs AS MATERIALIZED (
        SELECT * FROM incentives_internal.offer_references_all()),
    profile AS MATERIALIZED (
        SELECT * FROM incentives_internal.transaction_profile($1)),
    known_skus AS MATERIALIZED (
        SELECT s.sku_key FROM incentives.skus AS s
        UNION
        SELECT p.sku_key FROM profile AS p WHERE p.sku_key IS NOT NULL),
    known_types AS MATERIALIZED (
        SELECT DISTINCT p.transaction_type FROM profile AS p WHERE p.transaction_type IS NOT NULL),
    programs AS MATERIALIZED (
        SELECT o.offer_key, s.enrollment, s.aggregation
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_summary(o.document) AS s),
    w AS (
    -- what the document alone says (the engine's findings: unknown_field,
    -- implausible_rate)
    SELECT o.offer_key, f.path, f.code, f.message
      FROM incentives.offers AS o
     CROSS JOIN LATERAL incentives_internal.offer_findings(o.document) AS f
    UNION ALL
    -- unknown_sku: no row of incentives.skus and no transaction has it; a
    -- known SKU equal to it but for case, O/0, I/l/1 or -/_ is suggested
    SELECT r.offer_key, r.path, 'unknown_sku',
           format('sku %s matches no row of incentives.skus and no transaction', to_json(r.sku_key))
           || COALESCE('; did you mean '
                       || to_json((SELECT min(k.sku_key COLLATE "C") FROM known_skus AS k
                                    WHERE translate(lower(k.sku_key), 'oil-', '011_')
                                          = translate(lower(r.sku_key), 'oil-', '011_')))::text
                       || '?', '')
      FROM refs AS r
     WHERE r.kind = 'sku' AND r.sku_key IS NOT NULL
       AND NOT EXISTS (SELECT FROM known_skus AS k WHERE k.sku_key = r.sku_key)
    UNION ALL
    -- unknown_transaction_type: no transaction has it; a type equal to it
    -- but for case, -/_/space or an s is suggested
    SELECT r.offer_key, r.path, 'unknown_transaction_type',
           format('transaction_type %s matches no transaction', to_json(r.transaction_type))
           || COALESCE('; did you mean '
                       || to_json((SELECT min(k.transaction_type COLLATE "C") FROM known_types AS k
                                    WHERE regexp_replace(lower(k.transaction_type), '[-_ s]', '', 'g')
                                          = regexp_replace(lower(r.transaction_type), '[-_ s]', '', 'g')))::text
                       || '?', '')
      FROM refs AS r
     WHERE r.kind = 'transaction_type' AND r.transaction_type IS NOT NULL
       AND NOT EXISTS (SELECT FROM known_types AS k WHERE k.transaction_type = r.transaction_type)
    UNION ALL
    -- empty_period: ended (before today), transactions dated after its end
    -- exist, and no transaction of any SKU the offer reads is dated in it
    SELECT r.offer_key, r.path, 'empty_period',
           format('period %s (%s to %s) has ended and no transaction of the offer''s SKUs is dated in it, while transactions dated after it exist (the latest on %s)',
                  to_json(r.period_key), to_char(r.start_date, 'YYYY-MM-DD'),
                  to_char(r.end_date, 'YYYY-MM-DD'),
                  (SELECT to_char(max(p.transaction_date), 'YYYY-MM-DD') FROM profile AS p))
      FROM refs AS r
     WHERE r.kind = 'period' AND r.end_date < current_date
       AND EXISTS (SELECT FROM profile AS p WHERE p.transaction_date > r.end_date)
       AND NOT EXISTS (SELECT FROM profile AS p
                        WHERE p.transaction_date BETWEEN r.start_date AND r.end_date
                          AND p.sku_key IN (SELECT s.sku_key FROM refs AS s
                                             WHERE s.offer_key = r.offer_key AND s.kind = 'sku'))
    UNION ALL
    -- unknown_unit: a stacked conversion's "from" that nothing connects
    -- with the SKU's unit (a SKU of incentives.skus), or that nothing names
    -- (a SKU without a row there)
    SELECT r.offer_key, regexp_replace(r.path, 'sku_key$', 'from'), 'unknown_unit',
           CASE WHEN s.uom_key IS NOT NULL THEN
               format('conversion unit %s of sku %s has no conversion to or from the sku''s unit %s in incentives.uom_conversions',
                      to_json(r.from_uom), to_json(r.sku_key), to_json(s.uom_key))
           ELSE
               format('conversion unit %s of sku %s is named by no row of incentives.skus or incentives.uom_conversions and no transaction',
                      to_json(r.from_uom), to_json(r.sku_key))
           END
      FROM refs AS r
      LEFT JOIN incentives.skus AS s ON s.sku_key = r.sku_key
     WHERE r.kind = 'sku' AND r.from_uom IS NOT NULL
       AND CASE WHEN s.uom_key IS NOT NULL THEN
               r.from_uom <> s.uom_key
               AND NOT EXISTS (SELECT FROM incentives.uom_conversions AS c
                                WHERE (c.from_uom_key, c.to_uom_key) IN ((r.from_uom, s.uom_key),
                                                                         (s.uom_key, r.from_uom)))
           ELSE
               NOT EXISTS (SELECT FROM incentives.skus AS k WHERE k.uom_key = r.from_uom)
               AND NOT EXISTS (SELECT FROM incentives.uom_conversions AS c
                                WHERE r.from_uom IN (c.from_uom_key, c.to_uom_key))
               AND NOT EXISTS (SELECT FROM profile AS p WHERE p.uom_key = r.from_uom)
           END
    UNION ALL
    -- sku_without_unit: paid per unit, no row in incentives.skus, and its
    -- transactions come in more than one unit
    SELECT r.offer_key, r.path, 'sku_without_unit',
           format('sku %s is paid in dollars per unit but has no row in incentives.skus, and its transactions come in %s units (%s): each is paid per unit of its own',
                  to_json(r.sku_key), u.n, u.units)
      FROM refs AS r
     CROSS JOIN LATERAL (SELECT count(DISTINCT p.uom_key) AS n,
                                string_agg(DISTINCT p.uom_key, ', ' ORDER BY p.uom_key) AS units
                           FROM profile AS p
                          WHERE p.sku_key = r.sku_key AND p.uom_key IS NOT NULL) AS u
     WHERE r.kind = 'sku' AND r.per_unit
       AND NOT EXISTS (SELECT FROM incentives.skus AS s WHERE s.sku_key = r.sku_key)
       AND u.n > 1
    UNION ALL
    -- no_enrollments: "enrollment": "required" and no enrollment row
    SELECT p.offer_key, 'enrollment', 'no_enrollments',
           'the offer requires enrollment ("enrollment": "required") but incentives.enrollments has no row for it: no participant earns under it'
      FROM programs AS p
     WHERE p.enrollment = 'required'
       AND NOT EXISTS (SELECT FROM incentives.enrollments AS e WHERE e.offer_key = p.offer_key)
    UNION ALL
    -- no_groups: "aggregation": "group" and no membership row
    SELECT p.offer_key, 'aggregation', 'no_groups',
           'the offer aggregates by group ("aggregation": "group") but incentives.participant_groups has no row: every participant is calculated alone'
      FROM programs AS p
     WHERE p.aggregation = 'group'
       AND NOT EXISTS (SELECT FROM incentives.participant_groups)
    UNION ALL
    -- offer_key_format: empty, or leading or trailing white space, or a
    -- control character (what a write refuses since 0.4)
    SELECT o.offer_key, 'offer_key', 'offer_key_format',
           format('offer_key %s %s; it would be refused if written today', to_json(o.offer_key),
                  CASE WHEN o.offer_key = '' THEN 'is empty'
                       WHEN o.offer_key ~ '[\x01-\x1f\x7f]' THEN 'contains a control character'
                       ELSE 'has leading or trailing white space' END)
      FROM incentives.offers AS o
     WHERE o.offer_key = '' OR o.offer_key ~ '^[[:space:]]|[[:space:]]$|[\x01-\x1f\x7f]'
    UNION ALL
    -- offer_key_case: equal to another offer's key but for letter case
    SELECT o.offer_key, 'offer_key', 'offer_key_case',
           format('offer_key %s differs from the offer_key %s only by letter case: each pays on its own; it would be refused if written today',
                  to_json(o.offer_key), to_json(x.offer_key))
      FROM incentives.offers AS o
      JOIN incentives.offers AS x
        ON lower(x.offer_key) = lower(o.offer_key) AND x.offer_key <> o.offer_key
    UNION ALL
    -- enrollment_without_offer: enrollment rows of an offer_key no offer has
    SELECT e.offer_key, NULL, 'enrollment_without_offer',
           format('incentives.enrollments has %s for offer %s, which does not exist',
                  CASE count(*) WHEN 1 THEN '1 row' ELSE count(*) || ' rows' END, to_json(e.offer_key))
           || COALESCE('; did you mean '
                       || to_json((SELECT min(o.offer_key COLLATE "C") FROM incentives.offers AS o
                                    WHERE lower(o.offer_key) = lower(e.offer_key)))::text
                       || '?', '')
      FROM incentives.enrollments AS e
     WHERE NOT EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = e.offer_key)
     GROUP BY e.offer_key)
    SELECT w.offer_key, w.path, w.code, w.message
      FROM w
     ORDER BY w.offer_key COLLATE "C", w.path COLLATE "C" NULLS FIRST, w.code COLLATE "C",
              w.message COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.offer_warnings(regclass) IS
  'What in the stored offers is legal but likely wrong, computed now against the data as it is (transactions from any relation with the transaction columns; row-level security applies): one row per finding with the offer, the JSON path, a code and a sentence naming the value.  Codes: unknown_field and implausible_rate (the document alone, as the engine reads it); unknown_sku (no row of incentives.skus and no transaction has the SKU; a key equal but for case, O/0, I/l/1 or -/_ is suggested); unknown_transaction_type (no transaction has it); empty_period (ended before today, transactions dated after its end exist, none of the offer''s SKUs dated in it); unknown_unit (a stacked conversion''s "from" with no conversion either way to the SKU''s unit in incentives.skus, or, for a SKU without a row there, named by no row of incentives.skus, incentives.uom_conversions or the transactions); sku_without_unit (dollars per unit on a SKU without a row in incentives.skus whose transactions come in more than one unit); no_enrollments ("enrollment": "required", no enrollment row); no_groups ("aggregation": "group", no membership row); and stored keys a write now refuses: offer_key_format (empty, surrounding white space, a control character), offer_key_case (equal to another offer''s but for case) and enrollment_without_offer (enrollment rows of a missing offer)';

CREATE OR REPLACE VIEW incentives.offer_warnings WITH (security_invoker = true) AS
SELECT w.offer_key, w.path, w.code, w.message
  FROM incentives.offer_warnings() AS w;
COMMENT ON VIEW incentives.offer_warnings IS
  'incentives.offer_warnings() over incentives.transactions: what in the stored offers is legal but likely wrong, computed on read; a correct program book has no row';
COMMENT ON COLUMN incentives.offer_warnings.offer_key IS 'The offer (for enrollment_without_offer: the enrollments'' offer_key, which names no offer)';
COMMENT ON COLUMN incentives.offer_warnings.path IS 'The JSON path in the offer document of what the warning is about (periods[0], incentives[1].rates[0].sku_key, ...); NULL when it is about no field of the document';
COMMENT ON COLUMN incentives.offer_warnings.code IS 'unknown_sku, unknown_transaction_type, empty_period, implausible_rate, unknown_unit, sku_without_unit, no_enrollments, no_groups, unknown_field, offer_key_format, offer_key_case or enrollment_without_offer';
COMMENT ON COLUMN incentives.offer_warnings.message IS 'A sentence naming the value, with a suggestion where one fits';

------------------------------------------------------------------------
-- program_skus
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.program_skus(
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.program_sku_row
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH refs AS MATERIALIZED (
        SELECT r.offer_key, r.sku_key, r.role, r.transaction_type, r.start_date, r.end_date
          FROM incentives_internal.offer_references_all() AS r
         WHERE r.kind = 'sku' AND r.sku_key IS NOT NULL),
    profile AS MATERIALIZED (
        SELECT * FROM incentives_internal.transaction_profile($1)),
    keys AS (
        SELECT DISTINCT r.offer_key, r.sku_key, r.role FROM refs AS r)
    SELECT k.offer_key, k.sku_key, k.role,
           COALESCE((SELECT sum(p.n)
                       FROM profile AS p
                      WHERE p.sku_key = k.sku_key
                        AND EXISTS (SELECT FROM refs AS r
                                     WHERE r.offer_key = k.offer_key AND r.sku_key = k.sku_key
                                       AND r.role = k.role
                                       AND (r.transaction_type IS NULL
                                            OR r.transaction_type = p.transaction_type)
                                       AND (r.start_date IS NULL OR p.transaction_date >= r.start_date)
                                       AND (r.end_date IS NULL OR p.transaction_date <= r.end_date))),
                    0)::bigint
      FROM keys AS k
     ORDER BY k.offer_key COLLATE "C", k.role COLLATE "C", k.sku_key COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.program_skus(regclass) IS
  'Every SKU each stored offer reads, with its role (earning, threshold, requirement, set:<sku_set key>, price or conversion) and the number of transactions of the relation (row-level security applies) that match it: its sku_key and, where the offer gives them for that role, the transaction_type and the period''s dates (a price matches every transaction of the SKU)';

CREATE OR REPLACE VIEW incentives.program_skus WITH (security_invoker = true) AS
SELECT s.offer_key, s.sku_key, s.role, s.transactions
  FROM incentives.program_skus() AS s;
COMMENT ON VIEW incentives.program_skus IS
  'incentives.program_skus() over incentives.transactions: every SKU each offer reads, its role and how many transactions match it';
COMMENT ON COLUMN incentives.program_skus.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_skus.sku_key IS 'A SKU the offer reads';
COMMENT ON COLUMN incentives.program_skus.role IS 'What the offer reads it for: earning, threshold, requirement, set:<sku_set key>, price or conversion';
COMMENT ON COLUMN incentives.program_skus.transactions IS 'Transactions that match it in that role (sku_key, and the transaction_type and period the offer gives for it); 0 for a SKU no transaction matches';

------------------------------------------------------------------------
-- transaction_warnings
------------------------------------------------------------------------

-- What a calculation of every offer needs of the transactions of each SKU
-- an offer reads: one row per SKU, the places it is read at as arrays (the
-- engine refuses a transaction only where it computes a figure of it:
-- src/core/calc/calc.c).
CREATE OR REPLACE FUNCTION incentives_internal.transaction_needs()
RETURNS TABLE (sku_key text, observed boolean, sku_uom_key text, transaction_types text[],
               start_dates date[], end_dates date[], need_quantity boolean[],
               need_amount boolean[], need_sku_unit boolean[], from_uoms text[])
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH base AS (
        SELECT o.offer_key, r.sku_key, r.role, r.transaction_type, r.start_date, r.end_date,
               r.from_uom, s.threshold_type, s.requirements, s.baseline
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_summary(o.document) AS s
         CROSS JOIN LATERAL incentives_internal.offer_references(o.document) AS r
         WHERE r.kind = 'sku' AND r.sku_key IS NOT NULL),
    -- the SKUs of stacked sets that pay (a SKU at rate 0 only anchors
    -- coverage: no row of it is shown)
    paying AS (
        SELECT o.offer_key, q.sku_set_key, q.sku_key
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_rates(o.document) AS q
         WHERE o.document ->> 'strategy_key' = 'stacked' AND q.rate_value <> 0),
    refs AS (
        SELECT b.sku_key, b.role, b.transaction_type, d.start_date, d.end_date, b.from_uom,
               -- what the role computes of a matching transaction: an
               -- earning row shows quantity (in the SKU's unit) and amount;
               -- a set's coverage is the quantity in the conversion's unit,
               -- and a paying SKU's rows show both; a threshold or
               -- requirement sums amounts or quantities
               CASE WHEN b.role = 'earning' OR b.role LIKE 'set:%' OR b.role = 'conversion' THEN true
                    WHEN b.role = 'threshold' THEN b.threshold_type LIKE '%quantity'
                    WHEN b.role = 'requirement' THEN
                        EXISTS (SELECT FROM jsonb_array_elements(b.requirements) AS q
                                 WHERE q ->> 'type' LIKE '%quantity')
                    ELSE false END AS need_quantity,
               CASE WHEN b.role = 'earning' THEN true
                    WHEN b.role LIKE 'set:%' THEN p.sku_key IS NOT NULL
                    WHEN b.role = 'threshold' THEN b.threshold_type LIKE '%amount'
                    WHEN b.role = 'requirement' THEN
                        EXISTS (SELECT FROM jsonb_array_elements(b.requirements) AS q
                                 WHERE q ->> 'type' LIKE '%amount')
                    ELSE false END AS need_amount,
               CASE WHEN b.role = 'earning' THEN true
                    WHEN b.role LIKE 'set:%' THEN p.sku_key IS NOT NULL
                    WHEN b.role = 'threshold' THEN b.threshold_type LIKE '%quantity'
                    WHEN b.role = 'requirement' THEN
                        EXISTS (SELECT FROM jsonb_array_elements(b.requirements) AS q
                                 WHERE q ->> 'type' LIKE '%quantity')
                    ELSE false END AS need_sku_unit
          FROM base AS b
          LEFT JOIN paying AS p
            ON b.role LIKE 'set:%' AND p.offer_key = b.offer_key
           AND p.sku_set_key = substr(b.role, 5) AND p.sku_key = b.sku_key
         -- the item's period, and the baseline's dates of a growth
         -- threshold or requirement (the same filters, summed over them)
         CROSS JOIN LATERAL (
              SELECT b.start_date, b.end_date
              UNION ALL
              SELECT (b.baseline ->> 'start_date')::date, (b.baseline ->> 'end_date')::date
               WHERE b.role = 'threshold' AND b.baseline ? 'start_date'
              UNION ALL
              SELECT (q -> 'baseline' ->> 'start_date')::date, (q -> 'baseline' ->> 'end_date')::date
                FROM jsonb_array_elements(CASE WHEN b.role = 'requirement' THEN b.requirements END) AS q
               WHERE q -> 'baseline' ? 'start_date') AS d)
    SELECT r.sku_key,
           bool_or(r.role <> 'price'),
           (SELECT k.uom_key FROM incentives.skus AS k WHERE k.sku_key = r.sku_key),
           array_agg(r.transaction_type) FILTER (WHERE r.role <> 'price'),
           array_agg(r.start_date) FILTER (WHERE r.role <> 'price'),
           array_agg(r.end_date) FILTER (WHERE r.role <> 'price'),
           array_agg(r.need_quantity) FILTER (WHERE r.role <> 'price'),
           array_agg(r.need_amount) FILTER (WHERE r.role <> 'price'),
           array_agg(r.need_sku_unit) FILTER (WHERE r.role <> 'price'),
           array_agg(r.from_uom) FILTER (WHERE r.role <> 'price')
      FROM refs AS r
     GROUP BY r.sku_key
$function$;
COMMENT ON FUNCTION incentives_internal.transaction_needs() IS
  'transaction_warnings helper: per SKU the stored offers read, whether a calculation matches its transactions (any role but price), the SKU''s unit in incentives.skus, and per place it is read (transaction type, period dates): whether a matching transaction''s quantity, amount and quantity in the SKU''s unit are computed, and the stacked conversion''s unit';

CREATE OR REPLACE FUNCTION incentives.transaction_warnings(
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.transaction_warning_row
LANGUAGE plpgsql
STABLE PARALLEL SAFE
ROWS 10
SET search_path = pg_catalog, pg_temp
AS $function$
-- The rules are the calculation's (src/pg/read/txn_source.c, src/core/calc/
-- calc.c): a row of a SKU no offer reads is never read (but for a NULL
-- sku_key); a NULL transaction_id, participant_key or sku_key, a quantity
-- or amount that is not a finite number, and a repeated transaction_id
-- (unless a unique index on transaction_id alone rules it out) fail at
-- once; a NULL transaction_type or transaction_date fails where the row is
-- matched against an offer's filters; a NULL quantity, uom_key or amount,
-- and a unit with no conversion to the SKU's unit or a stacked
-- conversion's unit, fail where a figure of a matching row needs them.
DECLARE
    v_relation regclass := COALESCE(transaction_warnings.transactions, 'incentives.transactions');
    v_unique   boolean := incentives_internal.transactions_relation_check(v_relation);
BEGIN
    RETURN QUERY EXECUTE format($query$
        WITH needs AS MATERIALIZED (SELECT * FROM incentives_internal.transaction_needs()),
        rows AS (
            SELECT t.transaction_id::pg_catalog.text AS transaction_id,
                   t.participant_key::pg_catalog.text AS participant_key,
                   t.transaction_type::pg_catalog.text AS transaction_type,
                   t.transaction_date AS transaction_date,
                   t.sku_key::pg_catalog.text AS sku_key,
                   t.quantity::pg_catalog.numeric AS quantity,
                   t.uom_key::pg_catalog.text AS uom_key,
                   t.amount::pg_catalog.numeric AS amount
              FROM %1$s AS t),
        -- per SKU, type and date of the rows (one read of the relation,
        -- grouped): what a matching row's figures need there, and the
        -- units its quantity is converted to
        places AS MATERIALIZED (
            SELECT c.sku_key, c.transaction_type, c.transaction_date,
                   m.need_quantity, m.need_amount, m.targets
              FROM (SELECT DISTINCT t.sku_key::pg_catalog.text AS sku_key,
                           t.transaction_type::pg_catalog.text AS transaction_type,
                           t.transaction_date AS transaction_date
                      FROM %1$s AS t
                     WHERE t.transaction_type IS NOT NULL AND t.transaction_date IS NOT NULL
                       AND t.sku_key::pg_catalog.text IN (SELECT n.sku_key FROM needs AS n)) AS c
              JOIN needs AS n ON n.sku_key = c.sku_key
             CROSS JOIN LATERAL (
                  SELECT bool_or(u.q) AS need_quantity, bool_or(u.a) AS need_amount,
                         array_remove(array_agg(DISTINCT u.target), NULL) AS targets
                    FROM (SELECT x.q, x.a, t.target
                            FROM unnest(n.transaction_types, n.start_dates, n.end_dates,
                                        n.need_quantity, n.need_amount, n.need_sku_unit, n.from_uoms)
                                 AS x(transaction_type, start_date, end_date, q, a, s, from_uom)
                           CROSS JOIN LATERAL (VALUES (CASE WHEN x.s THEN n.sku_uom_key END),
                                                      (CASE WHEN x.q THEN x.from_uom END)) AS t(target)
                           WHERE (x.transaction_type IS NULL OR x.transaction_type = c.transaction_type)
                             AND (x.start_date IS NULL OR c.transaction_date >= x.start_date)
                             AND (x.end_date IS NULL OR c.transaction_date <= x.end_date)) AS u
              ) AS m),
        -- every row the calculation reads (a row of a SKU no offer reads is
        -- skipped, but for a NULL sku_key), with what its figures need
        read AS NOT MATERIALIZED (
            SELECT r.*, n.observed, p.need_quantity, p.need_amount, p.targets
              FROM rows AS r
              LEFT JOIN needs AS n ON n.sku_key = r.sku_key
              LEFT JOIN places AS p
                ON p.sku_key = r.sku_key AND p.transaction_type = r.transaction_type
               AND p.transaction_date = r.transaction_date
             WHERE r.sku_key IS NULL OR n.sku_key IS NOT NULL),
        -- the rows that may be refused, named for the messages: only they
        -- are kept while the problems are listed
        named AS MATERIALIZED (
            SELECT r.*,
                   CASE WHEN r.transaction_id IS NULL
                        THEN ' of a transaction of participant '
                             || COALESCE(to_json(r.participant_key)::text, '(NULL)')
                             || ' (sku ' || COALESCE(to_json(r.sku_key)::text, '(NULL)') || ')'
                        ELSE ' of transaction ' || to_json(r.transaction_id)::text
                             || ' of participant ' || COALESCE(to_json(r.participant_key)::text, '(NULL)')
                   END AS whose
              FROM read AS r
             WHERE r.transaction_id IS NULL OR r.participant_key IS NULL OR r.sku_key IS NULL
                OR (r.observed AND (r.transaction_type IS NULL OR r.transaction_date IS NULL))
                OR (r.need_quantity AND (r.quantity IS NULL OR r.uom_key IS NULL))
                OR (r.need_amount AND r.amount IS NULL)
                OR r.quantity::pg_catalog.text IN ('NaN', 'Infinity', '-Infinity')
                OR r.amount::pg_catalog.text IN ('NaN', 'Infinity', '-Infinity')
                OR r.uom_key <> ANY (r.targets))
        SELECT w.participant_key, w.transaction_id, w.code, w.message FROM (
        SELECT r.participant_key, r.transaction_id, 'null_column'::text AS code,
               'column ' || to_json(c.name)::text || r.whose || ' is NULL'
               || CASE WHEN c.name IN ('transaction_id', 'participant_key', 'sku_key')
                       THEN ': the calculation cannot place it' ELSE '' END AS message
          FROM named AS r
         CROSS JOIN LATERAL (VALUES
                (1, 'transaction_id', r.transaction_id IS NULL),
                (2, 'participant_key', r.participant_key IS NULL),
                (3, 'sku_key', r.sku_key IS NULL),
                (4, 'transaction_type', r.observed AND r.transaction_type IS NULL),
                (5, 'transaction_date', r.observed AND r.transaction_date IS NULL),
                (6, 'quantity', r.need_quantity AND r.quantity IS NULL),
                (7, 'uom_key', r.need_quantity AND r.uom_key IS NULL),
                (8, 'amount', r.need_amount AND r.amount IS NULL)) AS c(i, name, bad)
         WHERE c.bad
        UNION ALL
        SELECT r.participant_key, r.transaction_id, 'invalid_number',
               c.name || ' ' || c.value::text || r.whose || ' is not a finite number'
          FROM named AS r
         CROSS JOIN LATERAL (VALUES ('quantity', r.quantity), ('amount', r.amount)) AS c(name, value)
         WHERE r.sku_key IS NOT NULL AND c.value::text IN ('NaN', 'Infinity', '-Infinity')
        UNION ALL
        SELECT r.participant_key, r.transaction_id, 'no_unit_conversion',
               'no unit conversion from ' || to_json(r.uom_key)::text || ' to ' || to_json(u.target)::text
               || ' for transaction ' || COALESCE(to_json(r.transaction_id)::text, '(NULL)')
               || ' (sku ' || to_json(r.sku_key)::text || ')'
          FROM named AS r
         CROSS JOIN LATERAL unnest(r.targets) AS u(target)
         WHERE r.uom_key IS NOT NULL AND r.quantity IS NOT NULL AND r.uom_key <> u.target
           AND NOT EXISTS (SELECT FROM incentives.uom_conversions AS c
                            WHERE (c.from_uom_key = r.uom_key AND c.to_uom_key = u.target)
                               OR (c.from_uom_key = u.target AND c.to_uom_key = r.uom_key))
        UNION ALL
        SELECT r.participant_key, r.transaction_id, 'duplicate_transaction',
               'transaction_id ' || to_json(d.transaction_id)::text || ' appears '
               || d.n || ' times among the transactions the offers read (participants '
               || d.participants || '): a calculation refuses a repeated transaction_id'
          FROM read AS r
          JOIN (SELECT r.transaction_id, count(*) AS n,
                       string_agg(COALESCE(to_json(r.participant_key)::text, '(NULL)'), ', '
                                  ORDER BY r.participant_key COLLATE "C") AS participants
                  FROM read AS r
                 WHERE NOT %2$L AND r.transaction_id IS NOT NULL AND r.sku_key IS NOT NULL
                 GROUP BY r.transaction_id
                HAVING count(*) > 1) AS d
            ON d.transaction_id = r.transaction_id AND r.sku_key IS NOT NULL
         WHERE NOT %2$L
        ) AS w
        ORDER BY w.participant_key COLLATE "C", w.transaction_id COLLATE "C", w.code COLLATE "C",
                 w.message COLLATE "C"
        $query$, v_relation, v_unique);
END
$function$;
COMMENT ON FUNCTION incentives.transaction_warnings(regclass) IS
  'Every transaction of the relation (row-level security applies) that a calculation of every stored offer refuses, all of them, one row per problem: null_column (a NULL transaction_id, participant_key or sku_key; a NULL transaction_type or transaction_date on a SKU an offer matches; a NULL quantity, uom_key or amount where a matching transaction''s figure needs it: an earning row needs all three, a stacked set''s coverage the quantity and unit and a paying SKU''s row all three, a threshold or requirement the amount or the quantity it sums, over its period and a growth baseline''s dates), no_unit_conversion (a matching transaction whose quantity is needed and whose unit has no conversion, either way, to its SKU''s unit in incentives.skus or to a stacked conversion''s unit), invalid_number (a quantity or amount that is NaN or infinite) and duplicate_transaction (a transaction_id repeated, unless a unique index on transaction_id alone rules it out).  Only rows of SKUs some offer reads are checked (the calculation reads no other), but for a NULL sku_key.  A line is listed as soon as an offer''s terms reach it, also while the data keep the calculation from computing its figure (a participant that meets no tier or requirement, a line outside its enrollment windows, a stack whose overlap is 0): the calculation refuses it once that changes';

CREATE OR REPLACE VIEW incentives.transaction_warnings WITH (security_invoker = true) AS
SELECT w.participant_key, w.transaction_id, w.code, w.message
  FROM incentives.transaction_warnings() AS w;
COMMENT ON VIEW incentives.transaction_warnings IS
  'incentives.transaction_warnings() over incentives.transactions: every stored transaction a calculation would refuse, all of them, computed on read';
COMMENT ON COLUMN incentives.transaction_warnings.participant_key IS 'The transaction''s participant (NULL when that is what is missing)';
COMMENT ON COLUMN incentives.transaction_warnings.transaction_id IS 'The transaction (NULL when that is what is missing)';
COMMENT ON COLUMN incentives.transaction_warnings.code IS 'null_column, no_unit_conversion, invalid_number or duplicate_transaction';
COMMENT ON COLUMN incentives.transaction_warnings.message IS 'A sentence naming the transaction, the column or the units';

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
--   one participant: its rows are calculated again and replace its old
--     ones.
--   changed_only: the participants incentives.earnings_changes
--     names (their transactions, properties or enrollments changed; under
--     incentives.changed_only_limit the ones logged first), or everyone
--     when it says so (an offer, SKU or unit conversion changed), always
--     in place, never swapped.
-- Every row is written by refresh_write (refresh_earnings_rows): into
-- the new partition, or, in place, into a temporary table whose rows then
-- replace the batch's rows that differ from them.
--
-- on_error => 'skip': a participant whose calculation fails for a data
-- reason (SQLSTATE class 22 or 23) keeps its previous earnings and gets a
-- row in incentives.calculation_exceptions; the run ends
-- completed_with_exceptions.  refresh_write skips a participant whose
-- calculation fails (every member of a participant group's unit that
-- fails) and reports it; a read that fails (a NULL key, a repeated
-- transaction_id) runs in a subtransaction, and what failed is read and
-- calculated again participant by participant.
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
    -- held by this session until refresh_earnings_end (or its end); never
    -- waited for: a session of any role could hold the key first, and
    -- then the run only looks alive to the next refresh while it does
    -- (docs/operations.md, Concurrency)
    PERFORM pg_try_advisory_lock(hashtext('incentives.calculation_runs'), (v_run % 2147483647)::integer);
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
    -- only if this session holds it (the try-lock of begin may not have
    -- got it)
    SELECT pg_advisory_unlock(hashtext('incentives.calculation_runs'), ($1 % 2147483647)::integer)
      FROM pg_locks AS l
     WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
       AND l.classid = hashtext('incentives.calculation_runs')::oid
       AND l.objid = (($1 % 2147483647)::integer)::oid
       AND l.objsubid = 2
     LIMIT 1;
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

COMMENT ON COLUMN incentives.earnings.calculated_at IS
  'Start of the transaction of the refresh that wrote the row (a refresh in place leaves a row whose figures did not move as it was)';
COMMENT ON COLUMN incentives.earnings.run_id IS
  'The incentives.calculation_runs row of the refresh that wrote it (the partition key; a refresh in place leaves a row whose figures did not move as it was)';

-- refresh_earnings_rows: the rows of batch (the caller's relation, or a
-- temporary view of part of it; participant: only it, with its groups'
-- members) calculated and written from C by refresh_write, in one
-- snapshot, by jobs processes.  replace_filter NULL: into target, a table
-- this transaction created (the run's new partition).  Else into a
-- temporary table, then moved in place: the rows of incentives.earnings
-- that match replace_filter (a condition on t) and differ from the new
-- ones are deleted and the new ones not already there inserted, with the
-- caller's privileges and row-level security.
-- With skip, a participant whose calculation fails keeps its previous
-- earnings (in place, or copied into target; rows written before it
-- failed go first), gets a row in incentives.calculation_exceptions and
-- stays marked as changed for the next changed_only refresh.  A NOTICE
-- every progress_every participants (0: none).  Returns the participants
-- read, the rows written and their total (the skipped ones' not
-- counted), and how many were skipped.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_rows(
    target            regclass,
    run_id            bigint,
    batch             regclass,
    participant       text,
    skip              boolean,
    replace_filter    text,
    progress_every    integer,
    jobs              integer,
    OUT participants  integer,
    OUT rows          bigint,
    OUT total         numeric,
    OUT exceptions    integer)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run     bigint   := refresh_earnings_rows.run_id;
    v_replace boolean  := refresh_earnings_rows.replace_filter IS NOT NULL;
    v_rows    regclass := refresh_earnings_rows.target;
    v_w       record;
    v_same_key     text;
    v_same_figures text;
BEGIN
    IF v_replace THEN
        -- Runtime DDL, not a declaration: the batch's rows before they
        -- move (a table this transaction creates, as refresh_write needs)
        IF to_regclass('pg_temp.incentives_refresh_rows') IS NOT NULL THEN
            DROP TABLE pg_temp.incentives_refresh_rows;
        END IF;
        CREATE TEMPORARY TABLE incentives_refresh_rows (LIKE incentives.earnings) ON COMMIT DROP;
        v_rows := 'pg_temp.incentives_refresh_rows'::regclass;
    END IF;
    SELECT * INTO v_w
      FROM incentives_internal.refresh_write(v_rows, v_run, refresh_earnings_rows.batch,
                                             refresh_earnings_rows.progress_every,
                                             refresh_earnings_rows.skip, refresh_earnings_rows.jobs,
                                             refresh_earnings_rows.participant);
    participants := v_w.participants;
    rows := v_w.rows;
    total := v_w.total;
    exceptions := COALESCE(cardinality(v_w.failed_participants), 0);
    IF exceptions > 0 THEN
        IF cardinality(v_w.partial_participants) > 0 THEN
            EXECUTE format('DELETE FROM %s AS t WHERE t.participant_key = ANY ($1)', v_rows)
              USING v_w.partial_participants;
        END IF;
        INSERT INTO incentives.calculation_exceptions (run_id, participant_key, transaction_id, sqlstate, message)
        SELECT v_run, f.p, f.t, f.s, f.m
          FROM unnest(v_w.failed_participants, v_w.failed_transactions, v_w.failed_sqlstates,
                      v_w.failed_messages) AS f(p, t, s, m);
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT unnest(v_w.failed_participants);
    END IF;
    IF v_replace THEN
        -- A row whose figures did not move stays as it is, with the run
        -- and the time that wrote it; the others are deleted and the new
        -- rows that are not already there inserted (docs/lifecycle.md,
        -- changed_only => true).  The same row: the same primary key and,
        -- byte for byte, every other column but run_id and calculated_at.
        -- Both statements join the batch's rows to the earnings in primary
        -- key order: the index spares them a sort or a hash of the whole
        -- batch, which spill to disk beyond work_mem.
        CREATE INDEX ON pg_temp.incentives_refresh_rows (participant_key, offer_key, incentive_rate_key, transaction_id);
        v_same_key := 'n.participant_key = t.participant_key AND n.offer_key = t.offer_key
                       AND n.incentive_rate_key = t.incentive_rate_key AND n.transaction_id = t.transaction_id';
        SELECT format('record_image_eq(ROW(%s), ROW(%s))',
                      string_agg(format('n.%I', a.attname), ', ' ORDER BY a.attnum),
                      string_agg(format('t.%I', a.attname), ', ' ORDER BY a.attnum))
          INTO v_same_figures
          FROM pg_attribute AS a
         WHERE a.attrelid = 'incentives.earnings'::regclass
           AND a.attnum > 0 AND NOT a.attisdropped
           AND a.attname NOT IN ('participant_key', 'offer_key', 'incentive_rate_key', 'transaction_id',
                                 'run_id', 'calculated_at');
        EXECUTE format('DELETE FROM incentives.earnings AS t WHERE (%s) AND t.participant_key <> ALL ($1)
                          AND NOT EXISTS (SELECT FROM pg_temp.incentives_refresh_rows AS n WHERE %s AND %s)',
                       refresh_earnings_rows.replace_filter, v_same_key, v_same_figures)
          USING COALESCE(v_w.failed_participants, '{}');
        EXECUTE format('INSERT INTO incentives.earnings
                        SELECT n.* FROM pg_temp.incentives_refresh_rows AS n
                         WHERE NOT EXISTS (SELECT FROM incentives.earnings AS t WHERE (%s) AND %s)',
                       refresh_earnings_rows.replace_filter, v_same_key);
        DROP TABLE pg_temp.incentives_refresh_rows;
    ELSIF exceptions > 0 THEN
        EXECUTE format('INSERT INTO %s SELECT * FROM incentives.earnings AS e WHERE e.participant_key = ANY ($1)',
                       v_rows)
          USING v_w.failed_participants;
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_rows(regclass, bigint, regclass, text, boolean, text, integer, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): writes the calculated rows of a relation (or of one participant) from C into a new partition, or in place of the earnings that match a filter; with skip, a failing participant keeps its previous earnings and is logged';

-- refresh_earnings_one: one participant, in a subtransaction, for
-- on_error => 'skip' when a batch's read failed (a NULL key, a repeated
-- transaction_id).  Replaces its rows in incentives.earnings (replace)
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
    v_done    record;
BEGIN
    BEGIN
        SELECT * INTO v_done
          FROM incentives_internal.refresh_earnings_rows(
                   target, run_id, relation, participant, true,
                   CASE WHEN replace THEN format('t.participant_key = %L', participant) END, 0, 1);
        rows := v_done.rows;
        total := v_done.total;
        failed := v_done.exceptions > 0;
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

-- refresh_earnings_plan: whom a run refreshes, with the locks that keep
-- other refreshes off them, and the change log consumed.  everyone: every
-- participant of the relation; else keys, in byte order (one participant,
-- or the changed ones with their groups' members).  grouped: an offer
-- aggregates by participant group and there are memberships (docs/
-- lifecycle.md, Participant groups), so a group's members are calculated
-- together, never split between batches.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_plan(
    participant_key  text,
    transactions     regclass,
    changed_only     boolean,
    OUT everyone     boolean,
    OUT keys         text[],
    OUT grouped      boolean)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_participant text     := refresh_earnings_plan.participant_key;
    v_tracked     boolean  := refresh_earnings_plan.transactions = 'incentives.transactions'::regclass;
    v_everyone    boolean;
    v_changed     text[];
    v_first       text[];
    v_keys        text[];
    v_grouped     boolean := EXISTS (SELECT FROM incentives.programs AS p WHERE p.aggregation = 'group');
    -- incentives_internal.participant_units() reads every membership as
    -- its owner, so only the roles granted it run it (docs/security.md,
    -- step 2); a role that may refresh without it (a restricted role of
    -- its own) refreshes whole: every participant it sees, groups whole
    v_units       boolean := has_function_privilege('incentives_internal.participant_units()', 'EXECUTE');
    v_limit       integer := CASE WHEN refresh_earnings_plan.changed_only
                                  THEN incentives_internal.changed_only_limit() END;
BEGIN
    IF v_grouped AND v_units THEN
        v_grouped := EXISTS (SELECT FROM incentives_internal.participant_units());
    ELSIF v_grouped THEN
        v_grouped := EXISTS (SELECT FROM incentives.participant_groups);
    END IF;
    IF v_participant IS NOT NULL THEN
        -- One participant: refreshes of different participants run side
        -- by side, never beside a refresh of everyone.
        -- Table and row locks only a role that may write the earnings can
        -- take (docs/operations.md, Concurrency): ROW SHARE on
        -- incentives.earnings itself (ONLY: its partitions are the
        -- owner's), which a refresh of everyone's EXCLUSIVE waits for, and
        -- the participant's row of incentives.refresh_locks.
        LOCK TABLE ONLY incentives.earnings IN ROW SHARE MODE;
        -- (inserted, then deleted: the delete holds the row until the
        -- refresh commits, a second refresh's insert waits for that, and
        -- the table stays empty)
        INSERT INTO incentives.refresh_locks AS l (participant_key) VALUES (v_participant)
            ON CONFLICT (participant_key) DO NOTHING;
        DELETE FROM incentives.refresh_locks AS l WHERE l.participant_key = v_participant;
        v_everyone := false;
        v_keys := ARRAY[v_participant];
        IF v_tracked AND v_grouped AND NOT v_units THEN
            -- its units unknown to the caller: the next changed_only
            -- refresh recalculates it
            NULL;
        ELSIF v_tracked AND v_grouped
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
        -- one refresh of everyone at a time, never beside a refresh of
        -- one participant (ROW SHARE, above); readers' ACCESS SHARE does
        -- not conflict, and a role that may not write the earnings
        -- cannot take it
        LOCK TABLE ONLY incentives.earnings IN EXCLUSIVE MODE;
        -- The change log is consumed first: what this statement deletes was
        -- committed before it, so the calculations after it (later
        -- snapshots) include it; what commits after it stays for the next
        -- run.
        IF v_limit IS NOT NULL
           AND NOT EXISTS (SELECT FROM incentives.earnings_changes AS c WHERE c.participant_key IS NULL) THEN
            -- incentives.changed_only_limit: the participants logged
            -- first; the others' rows stay for the next run.  Read
            -- through the log's participant index, one participant to the
            -- next and the first entry of each, not the whole log (which
            -- grows while writers outpace the runs).
            WITH RECURSIVE logged AS (
                SELECT (SELECT min(c.participant_key) FROM incentives.earnings_changes AS c) AS participant_key
                UNION ALL
                SELECT (SELECT min(c.participant_key) FROM incentives.earnings_changes AS c
                         WHERE c.participant_key > l.participant_key)
                  FROM logged AS l
                 WHERE l.participant_key IS NOT NULL)
            SELECT array_agg(f.participant_key)
              INTO v_first
              FROM (SELECT l.participant_key
                      FROM logged AS l
                     WHERE l.participant_key IS NOT NULL
                     ORDER BY (SELECT min(c.logged_at) FROM incentives.earnings_changes AS c
                                WHERE c.participant_key = l.participant_key),
                              l.participant_key COLLATE "C"
                     LIMIT v_limit) AS f;
            WITH consumed AS (
                DELETE FROM incentives.earnings_changes AS c
                 WHERE c.participant_key = ANY (v_first)
                RETURNING c.participant_key)
            SELECT false, array_agg(DISTINCT c.participant_key COLLATE "C")
              INTO v_everyone, v_changed
              FROM consumed AS c;
            IF EXISTS (SELECT FROM incentives.earnings_changes) THEN
                RAISE NOTICE 'refresh_earnings: % changed participants taken (incentives.changed_only_limit); the others stay for the next run',
                             COALESCE(cardinality(v_changed), 0);
            END IF;
        ELSE
            WITH consumed AS (
                DELETE FROM incentives.earnings_changes AS c
                RETURNING c.participant_key)
            SELECT bool_or(c.participant_key IS NULL),
                   array_agg(DISTINCT c.participant_key COLLATE "C") FILTER (WHERE c.participant_key IS NOT NULL)
              INTO v_everyone, v_changed
              FROM consumed AS c;
        END IF;
        v_everyone := NOT refresh_earnings_plan.changed_only OR COALESCE(v_everyone, false);
        IF NOT v_tracked THEN
            -- earnings from another relation: everyone differs from a
            -- calculation on incentives.transactions now
            INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
        END IF;
        IF NOT v_everyone AND v_grouped AND NOT v_units THEN
            -- the changed ones' groups unknown to the caller: everyone
            -- it sees
            v_everyone := true;
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
            -- at a time (not under incentives.changed_only_limit, which
            -- bounds what a run takes)
            IF v_limit IS NULL AND array_length(v_keys, 1) >= 100
               AND array_length(v_keys, 1) * 2 >= (SELECT count(DISTINCT t.participant_key)
                                                     FROM incentives.transactions AS t) THEN
                v_everyone := true;
                v_keys := NULL;
            END IF;
        END IF;
    END IF;
    everyone := v_everyone;
    keys := v_keys;
    grouped := v_grouped;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_plan(text, regclass, boolean) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): takes the run''s locks, consumes the change log and returns whom the run refreshes (everyone, or the keys) and whether participant groups are calculated whole';

-- refresh_earnings_drop_orphans: every table a refresh of everyone left
-- behind unattached (incentives_internal.earnings_run_<run_id>, with its
-- leaves: a run with jobs > 1 that failed, was cancelled or whose server
-- crashed).
-- Called only under a lock no other refresh of everyone holds (the
-- session's refresh lock, or EXCLUSIVE on incentives.earnings), so that
-- none of them belongs to a live run; one-transaction runs' tables are
-- not visible until they commit, attached.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_drop_orphans()
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_orphan regclass;
BEGIN
    FOR v_orphan IN SELECT c.oid::regclass
                      FROM pg_class AS c
                     WHERE c.relnamespace = 'incentives_internal'::regnamespace
                       AND c.relkind IN ('r', 'p')
                       AND NOT c.relispartition
                       AND c.relname ~ '^earnings_run_[0-9]+$'
                     ORDER BY c.oid LOOP
        EXECUTE format('DROP TABLE %s', v_orphan);
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_drop_orphans() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): drops the unattached partitions of runs that ended without their swap';

-- refresh_earnings_new_partition: the run's new, empty partition
-- incentives_internal.earnings_run_<run_id>: a table, or with leaves > 1
-- a table partitioned by hash of participant_key into that many leaves
-- incentives_internal.earnings_run_<run_id>_<remainder> (jobs > 1: each
-- writer fills and indexes leaves of its own).  Owned by the owner of
-- incentives.earnings (whichever member of its role refreshes) and read
-- only through incentives.earnings and its row-level security (docs/
-- security.md, Refresh partitions): whatever default privileges granted
-- on it or its leaves, PUBLIC and every role but its owner lose them.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_new_partition(run_id bigint, leaves integer)
RETURNS regclass
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_name   text := format('earnings_run_%s', refresh_earnings_new_partition.run_id);
    v_owner  oid := (SELECT c.relowner FROM pg_class AS c WHERE c.oid = 'incentives.earnings'::regclass);
    v_leaves integer := refresh_earnings_new_partition.leaves;
    v_target regclass;
    v_rel    regclass;
BEGIN
    -- Runtime DDL, not a declaration.
    IF v_leaves > 1 THEN
        EXECUTE format('CREATE TABLE incentives_internal.%I (LIKE incentives.earnings) PARTITION BY HASH (participant_key)',
                       v_name);
        FOR r IN 0 .. v_leaves - 1 LOOP
            EXECUTE format('CREATE TABLE incentives_internal.%I PARTITION OF incentives_internal.%I '
                           'FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                           v_name || '_' || r, v_name, v_leaves, r);
        END LOOP;
    ELSE
        EXECUTE format('CREATE TABLE incentives_internal.%I (LIKE incentives.earnings)', v_name);
    END IF;
    v_target := format('incentives_internal.%I', v_name)::regclass;
    FOR v_rel IN SELECT v_target
                 UNION ALL
                 (SELECT i.inhrelid::regclass FROM pg_inherits AS i WHERE i.inhparent = v_target ORDER BY 1) LOOP
        IF (SELECT c.relowner FROM pg_class AS c WHERE c.oid = v_rel) <> v_owner THEN
            EXECUTE format('ALTER TABLE %s OWNER TO %I', v_rel, pg_get_userbyid(v_owner));
        END IF;
        PERFORM incentives_internal.earnings_partition_revoke(v_rel);
    END LOOP;
    RETURN v_target;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_new_partition(bigint, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): creates the run''s new, empty partition (with more than one leaf: partitioned by hash of participant_key), owned by the owner of incentives.earnings and without privileges for anyone else';

-- refresh_earnings_leaves: how many leaves the run's partition gets: at
-- least one per job, and enough that each leaf's primary key build sorts
-- in memory (about 256 bytes of maintenance_work_mem a row; with jobs,
-- each writer builds with its share of it), for the rows of the earnings
-- now (the statistics their index builds left) or, in an empty table, the
-- transactions relation's estimate; a multiple of jobs, at most 64 (or
-- jobs, when more).  A build in memory over rows in its order only checks the order
-- (docs/architecture.md, A refresh of everyone).
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_leaves(transactions regclass, jobs integer)
RETURNS integer
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH rows AS (
        SELECT COALESCE(NULLIF((SELECT sum(GREATEST(c.reltuples, 0))
                                  FROM pg_partition_tree('incentives.earnings') AS t
                                  JOIN pg_class AS c ON c.oid = t.relid
                                 WHERE t.isleaf), 0),
                        (SELECT GREATEST(c.reltuples, 0) FROM pg_class AS c
                          WHERE c.oid = $1 AND c.relkind = 'r'),
                        0) AS n),
    per_leaf AS (
        SELECT GREATEST(pg_size_bytes(current_setting('maintenance_work_mem')) / $2 / 256, 1000) AS n)
    SELECT LEAST(GREATEST(ceil(rows.n / per_leaf.n / $2)::integer, 1), GREATEST(64 / $2, 1)) * $2
      FROM rows, per_leaf
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_leaves(regclass, integer) IS
  'Part of incentives.refresh_earnings: the leaves of a run''s partition (a multiple of jobs, enough for each leaf''s index build to sort in maintenance_work_mem)';

-- refresh_earnings_index: the primary key and the offer index of an
-- earnings partition, named after it; on one partitioned into leaves,
-- they take in the leaves' own (each leaf is indexed first, by a writer
-- of a refresh with jobs > 1 or here).  One process per build: a
-- partition's rows come in its primary key's order, which a parallel
-- build would sort again.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_index(target regclass)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_target regclass := refresh_earnings_index.target;
    v_name   text := (SELECT c.relname FROM pg_class AS c WHERE c.oid = refresh_earnings_index.target);
    v_leaf   regclass;
BEGIN
    -- until this function returns (its SET clause ends what it set)
    PERFORM set_config('max_parallel_maintenance_workers', '0', true);
    FOR v_leaf IN SELECT i.inhrelid::regclass
                    FROM pg_inherits AS i
                   WHERE i.inhparent = v_target
                     AND NOT EXISTS (SELECT FROM pg_index AS x WHERE x.indrelid = i.inhrelid)
                   ORDER BY i.inhrelid LOOP
        PERFORM incentives_internal.refresh_earnings_index(v_leaf);
    END LOOP;
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I PRIMARY KEY '
                   '(participant_key, offer_key, incentive_rate_key, transaction_id)',
                   v_target, v_name || '_pkey');
    EXECUTE format('CREATE INDEX %I ON %s (offer_key)', v_name || '_offer_idx', v_target);
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_index(regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): builds an earnings partition''s primary key and offer index (on a partitioned one, those of its leaves first)';

-- refresh_earnings_prepare: the first transaction of a refresh of
-- everyone with jobs > 1 (outside a transaction block): the refresh lock
-- this session holds until the run ends, across its commits
-- (refresh_hold), the orphans of earlier runs dropped, and the run's new
-- partition, its leaves shared among the jobs (refresh_earnings_leaves),
-- committed by the procedure before the writers start.  NULL for a role that does not own incentives.earnings:
-- it refreshes in place, in one process.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_prepare(run_id bigint, transactions regclass, jobs integer)
RETURNS regclass
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF NOT pg_has_role((SELECT c.relowner FROM pg_class AS c
                         WHERE c.oid = 'incentives.earnings'::regclass), 'USAGE') THEN
        RETURN NULL;
    END IF;
    PERFORM incentives_internal.refresh_hold();
    PERFORM incentives_internal.refresh_earnings_drop_orphans();
    RETURN incentives_internal.refresh_earnings_new_partition(
               refresh_earnings_prepare.run_id,
               incentives_internal.refresh_earnings_leaves(refresh_earnings_prepare.transactions,
                                                           refresh_earnings_prepare.jobs));
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_prepare(bigint, regclass, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): with jobs > 1, takes the refresh lock held across the run''s transactions, drops orphaned partitions and creates the run''s new partition, its leaves shared among the jobs (NULL for a role that refreshes in place)';

-- refresh_earnings_partition: a refresh of everyone by the owner, written
-- from C into the run's new partition, in one snapshot, by jobs
-- processes: partition, committed before by refresh_earnings_prepare
-- (jobs > 1), or, when NULL, a table this transaction creates.  With
-- skip, a participant that fails keeps its previous earnings (copied into
-- the partition), is logged and stays marked as changed; a read that
-- fails (a NULL, a repeated transaction_id) returns written false with
-- the partition emptied, and the batches (refresh_earnings_in_batches)
-- fill it instead.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_partition(
    run_id            bigint,
    transactions      regclass,
    progress_every    integer,
    skip              boolean,
    jobs              integer,
    partition         regclass,
    OUT target        regclass,
    OUT written       boolean,
    OUT participants  integer,
    OUT rows          bigint,
    OUT total         numeric,
    OUT exceptions    integer)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run    bigint := refresh_earnings_partition.run_id;
    v_target regclass := refresh_earnings_partition.partition;
    v_w      record;
BEGIN
    IF v_target IS NULL THEN
        -- EXCLUSIVE on incentives.earnings is held (refresh_earnings_plan)
        PERFORM incentives_internal.refresh_earnings_drop_orphans();
        v_target := incentives_internal.refresh_earnings_new_partition(
                        v_run, incentives_internal.refresh_earnings_leaves(refresh_earnings_partition.transactions, 1));
    END IF;
    target := v_target;
    written := true;
    IF refresh_earnings_partition.skip THEN
        BEGIN
            SELECT * INTO v_w
              FROM incentives_internal.refresh_earnings_rows(v_target, v_run, refresh_earnings_partition.transactions,
                                                             NULL, true, NULL,
                                                             refresh_earnings_partition.progress_every,
                                                             refresh_earnings_partition.jobs);
        EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
            -- the rows the writers committed go too; the batches write
            -- into a table of this transaction
            EXECUTE format('DROP TABLE %s', v_target);
            target := incentives_internal.refresh_earnings_new_partition(v_run, 1);
            written := false;
            RETURN;
        END;
    ELSE
        SELECT * INTO v_w
          FROM incentives_internal.refresh_earnings_rows(v_target, v_run, refresh_earnings_partition.transactions,
                                                         NULL, false, NULL,
                                                         refresh_earnings_partition.progress_every,
                                                         refresh_earnings_partition.jobs);
    END IF;
    participants := v_w.participants;
    rows := v_w.rows;
    total := v_w.total;
    exceptions := v_w.exceptions;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_partition(bigint, regclass, integer, boolean, integer, regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): writes every participant''s rows from C into the run''s new partition (the one given, or one it creates); with skip, logs the participants skipped and keeps their previous rows, or returns written false when the read itself failed';

-- refresh_earnings_ranges: the batches of a refresh of everyone in
-- place: the participants of relation in byte order, cut into key ranges
-- of at most every participants and about work_mem's worth of
-- transactions each; returns how many participants there are, each
-- range's first key, and how many participants come before it, plus 1.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_ranges(
    relation          regclass,
    every             integer,
    OUT participants  integer,
    OUT starts        text[],
    OUT start_rn      bigint[])
LANGUAGE plpgsql
STABLE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
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
                        WINDOW w AS (ORDER BY p)) AS x) AS y$sql$, relation)
       INTO participants, starts, start_rn
      USING every, GREATEST(50000, pg_size_bytes(current_setting('work_mem')) / 256);
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_ranges(regclass, integer) IS
  'Part of incentives.refresh_earnings: the key ranges of a refresh of everyone batch by batch (at most every participants, about work_mem''s worth of transactions each)';

-- refresh_earnings_retry: with on_error => 'skip', a batch whose read
-- failed, participant by participant (refresh_earnings_one): members, or
-- with filter (a key range) those with transactions in the range and
-- those with earnings there, so that a participant whose transactions
-- are gone loses its rows.  Returns the rows, their total and how many
-- participants were skipped.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_retry(
    target           regclass,
    swap             boolean,
    run_id           bigint,
    relation         regclass,
    filter           text,
    members          text[],
    OUT rows         bigint,
    OUT total        numeric,
    OUT exceptions   integer)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_members text[] := refresh_earnings_retry.members;
    v_member  text;
    v_one     record;
BEGIN
    IF refresh_earnings_retry.filter IS NOT NULL THEN
        EXECUTE format($sql$
            SELECT array_agg(k ORDER BY k)
              FROM (SELECT t.participant_key::text COLLATE "C" AS k FROM %s AS t WHERE %s
                    UNION
                    SELECT t.participant_key COLLATE "C" FROM incentives.earnings AS t WHERE %s) AS u
             WHERE k IS NOT NULL$sql$, relation, refresh_earnings_retry.filter, refresh_earnings_retry.filter)
           INTO v_members;
    END IF;
    rows := 0;
    total := 0.00;
    exceptions := 0;
    FOREACH v_member IN ARRAY COALESCE(v_members, '{}') LOOP
        SELECT * INTO v_one
          FROM incentives_internal.refresh_earnings_one(target, NOT swap, refresh_earnings_retry.run_id,
                                                        v_member, relation);
        rows := rows + v_one.rows;
        total := total + v_one.total;
        IF v_one.failed THEN
            exceptions := exceptions + 1;
        END IF;
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_retry(regclass, boolean, bigint, regclass, text, text[]) IS
  'Part of incentives.refresh_earnings(on_error => ''skip''): a batch whose read failed, participant by participant; returns the rows, their total and the participants skipped';

-- refresh_earnings_in_batches: the rows of everyone or of keys written batch
-- by batch (refresh_earnings_rows) into target: in place in
-- incentives.earnings (the batch's participants' rows replaced), or into
-- a new partition when swap.  Everyone: participants in byte order, at
-- most progress_every of them and about work_mem's worth of transactions
-- per batch (so that a batch's rows stay in memory instead of a temporary
-- file), as key ranges (the first and last ranges are open, so every row
-- already materialized falls in one); keys: progress_every per batch.
-- With skip, a participant whose calculation fails keeps its earnings
-- (refresh_earnings_rows), and a batch whose read fails is done again
-- participant by participant (refresh_earnings_one).  A NOTICE every
-- progress_every participants and at the end.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_in_batches(
    run_id            bigint,
    participant_key   text,
    transactions      regclass,
    target            regclass,
    progress_every    integer,
    skip              boolean,
    everyone          boolean,
    keys              text[],
    grouped           boolean,
    swap              boolean,
    OUT participants  integer,
    OUT rows          bigint,
    OUT total         numeric,
    OUT exceptions    integer)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run         bigint   := refresh_earnings_in_batches.run_id;
    v_participant text     := refresh_earnings_in_batches.participant_key;
    v_relation    regclass := refresh_earnings_in_batches.transactions;
    v_target      regclass := refresh_earnings_in_batches.target;
    v_every       integer  := refresh_earnings_in_batches.progress_every;
    v_everyone    boolean  := refresh_earnings_in_batches.everyone;
    v_keys        text[]   := refresh_earnings_in_batches.keys;
    v_grouped     boolean  := refresh_earnings_in_batches.grouped;
    v_swap        boolean  := refresh_earnings_in_batches.swap;
    v_starts      text[];          -- everyone: the first key of each batch
    v_start_rn    bigint[];        -- and how many participants come before it, plus 1
    v_prev_done   integer := 0;
    v_nbatches    integer;
    v_total       integer;
    v_batch       integer;
    v_batch_rel   regclass;
    v_members     text[];
    v_filter      text;
    v_delete_filter text;
    v_table       text;
    v_done        integer := 0;
    v_rows        bigint  := 0;
    v_sum         numeric := 0.00;
    v_step_rows   bigint;
    v_step_sum    numeric;
    v_step        record;
    v_batch_ok    boolean;
    v_exceptions  integer := 0;
BEGIN
    IF v_everyone THEN
        SELECT r.participants, r.starts, r.start_rn INTO v_total, v_starts, v_start_rn
          FROM incentives_internal.refresh_earnings_ranges(v_relation, v_every) AS r;
        v_nbatches := COALESCE(array_length(v_starts, 1), 0);
        IF v_nbatches = 0 AND NOT v_swap THEN
            DELETE FROM incentives.earnings;
        ELSIF NOT v_swap THEN
            -- in place, each batch replaces the rows of its participants
            -- (found through the primary key); the rows of participants
            -- with no transactions left go first
            EXECUTE format('SELECT array_agg(e.k) FROM (SELECT DISTINCT e.participant_key::text AS k
                                                          FROM incentives.earnings AS e) AS e
                             WHERE NOT EXISTS (SELECT FROM %s AS t
                                                WHERE t.participant_key::text COLLATE "C" = e.k COLLATE "C")',
                           v_relation)
              INTO v_members;
            IF v_members IS NOT NULL THEN
                DELETE FROM incentives.earnings AS t WHERE t.participant_key = ANY (v_members);
            END IF;
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
            IF NOT v_swap THEN
                EXECUTE format('SELECT array_agg(DISTINCT t.participant_key::text) FROM %s AS t WHERE %s',
                               v_relation, v_filter)
                  INTO v_members;
                v_delete_filter := format('t.participant_key = ANY (%L::text[])', v_members);
            END IF;
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

        -- the batch written from C (in a subtransaction: with skip, a
        -- batch whose read fails is done again participant by participant)
        v_batch_ok := true;
        BEGIN
            SELECT * INTO v_step
              FROM incentives_internal.refresh_earnings_rows(v_target, v_run, v_batch_rel,
                                                             CASE WHEN v_grouped THEN v_participant END,
                                                             refresh_earnings_in_batches.skip,
                                                             CASE WHEN NOT v_swap THEN v_delete_filter END,
                                                             0, 1);
            v_step_rows := v_step.rows;
            v_step_sum := v_step.total;
            v_exceptions := v_exceptions + v_step.exceptions;
        EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
            IF NOT refresh_earnings_in_batches.skip THEN
                RAISE;
            END IF;
            v_batch_ok := false;
        END;
        IF NOT v_batch_ok THEN
            -- skip: the batch's read failed; again, participant by participant
            SELECT * INTO v_step
              FROM incentives_internal.refresh_earnings_retry(v_target, v_swap, v_run, v_relation,
                                                              CASE WHEN v_everyone THEN v_filter END,
                                                              v_members);
            v_step_rows := v_step.rows;
            v_step_sum := v_step.total;
            v_exceptions := v_exceptions + v_step.exceptions;
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
        v_sum  := v_sum + v_step_sum;
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
    participants := v_total;
    rows := v_rows;
    total := v_sum;
    exceptions := v_exceptions;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_in_batches(bigint, text, regclass, regclass, integer, boolean, boolean, text[], boolean, boolean) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): replaces the earnings of everyone or of the given participants batch by batch (with skip, a failing batch participant by participant) and returns the participants, rows, total and exceptions';

-- refresh_earnings_attach: the new partition indexed (the leaves its
-- writers indexed are taken as they are), then swapped in for the old
-- one(s); readers wait for the commit (the detach locks the table) and
-- then see only the new rows.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_attach(
    run_id  bigint,
    target  regclass)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_target regclass := refresh_earnings_attach.target;
    v_old    regclass;
BEGIN
    PERFORM incentives_internal.refresh_earnings_index(v_target);
    EXECUTE format('COMMENT ON TABLE %s IS %L', v_target,
                   format('Partition of incentives.earnings written by refresh run %s (replaced by the next full refresh)',
                          refresh_earnings_attach.run_id));
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
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_attach(bigint, regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): builds the new partition''s indexes and swaps it in for the old partitions of incentives.earnings';

-- refresh_earnings_purge: the run log's rows of changed_only refreshes
-- that succeeded without exceptions and finished longer ago than
-- incentives.run_log_keep (docs/lifecycle.md, The run log).  With the
-- caller's rights: a role that may not delete from the run log (or sees
-- none of its rows) purges nothing.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_purge()
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_before timestamptz := now() - incentives_internal.run_log_keep();
BEGIN
    IF v_before IS NULL OR NOT has_table_privilege('incentives.calculation_runs', 'DELETE') THEN
        RETURN;
    END IF;
    DELETE FROM incentives.calculation_runs AS r
     WHERE r.started_at < v_before
       AND r.finished_at < v_before
       AND r.changed_only
       AND r.status = 'succeeded';
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_purge() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): deletes the run log''s rows of changed_only refreshes that succeeded without exceptions longer ago than incentives.run_log_keep';

-- refresh_earnings_work: one run, start to end (partition: the run's
-- partition committed by refresh_earnings_prepare, with jobs > 1).
-- Everyone by a role that owns incentives.earnings (or is a member of its
-- owner): a new partition written from C and swapped in.  Anything else (one participant, the
-- changed ones, everyone by a role that may only insert and delete):
-- batches replacing the rows in place.  Then the run row gets its counts.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_work(
    run_id          bigint,
    participant_key text,
    transactions    regclass,
    progress_every  integer,
    on_error        text,
    changed_only    boolean,
    jobs            integer,
    partition       regclass)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run     bigint  := refresh_earnings_work.run_id;
    v_every   integer := GREATEST(COALESCE(refresh_earnings_work.progress_every, 1000), 1);
    v_skip    boolean := refresh_earnings_work.on_error = 'skip';
    v_plan    record;
    v_swap    boolean;
    v_target  regclass := 'incentives.earnings'::regclass;
    v_written boolean := false;
    v_done    record;
BEGIN
    SELECT * INTO v_plan
      FROM incentives_internal.refresh_earnings_plan(refresh_earnings_work.participant_key,
                                                     refresh_earnings_work.transactions,
                                                     refresh_earnings_work.changed_only);
    -- a changed_only run replaces rows in place even when everyone
    -- changed: it never waits for the swap's detach (docs/analyst-guide.md,
    -- Live earnings)
    v_swap := v_plan.everyone AND NOT refresh_earnings_work.changed_only
              AND pg_has_role((SELECT c.relowner FROM pg_class AS c
                                WHERE c.oid = 'incentives.earnings'::regclass), 'USAGE');
    IF v_swap THEN
        SELECT * INTO v_done
          FROM incentives_internal.refresh_earnings_partition(v_run, refresh_earnings_work.transactions,
                                                              v_every, v_skip, refresh_earnings_work.jobs,
                                                              refresh_earnings_work.partition);
        v_target := v_done.target;
        v_written := v_done.written;
    END IF;
    IF NOT v_written THEN
        SELECT * INTO v_done
          FROM incentives_internal.refresh_earnings_in_batches(v_run, refresh_earnings_work.participant_key,
                                                            refresh_earnings_work.transactions, v_target,
                                                            v_every, v_skip, v_plan.everyone, v_plan.keys,
                                                            v_plan.grouped, v_swap);
    END IF;
    IF v_swap THEN
        PERFORM incentives_internal.refresh_earnings_attach(v_run, v_target);
    END IF;

    UPDATE incentives.calculation_runs AS r
       SET status = CASE WHEN v_done.exceptions > 0 THEN 'completed_with_exceptions' ELSE 'succeeded' END,
           finished_at = clock_timestamp(),
           participants = v_done.participants,
           rows = v_done.rows,
           total_incentive = v_done.total,
           exceptions = v_done.exceptions
     WHERE r.run_id = v_run;
    IF refresh_earnings_work.changed_only THEN
        PERFORM incentives_internal.refresh_earnings_purge();
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean, integer, regclass) IS
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
    -- types too: a domain "text" in a schema before pg_catalog on the
    -- caller's search_path must not run (docs/security.md, Search path)
    v_run        pg_catalog.int8;
    v_can_commit pg_catalog.bool;
    v_failed     pg_catalog.bool := false;
    v_state      pg_catalog.text;
    v_message    pg_catalog.text;
    v_detail     pg_catalog.text;
    v_hint       pg_catalog.text;
    v_where      pg_catalog.text;
    -- jobs apply to a refresh of everyone (changed_only: one process)
    v_jobs       pg_catalog.int4 := CASE WHEN refresh_earnings.participant_key IS NULL
                                              AND NOT refresh_earnings.changed_only
                                         THEN refresh_earnings.jobs ELSE 1 END;
    v_partition  pg_catalog.regclass;
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
    -- jobs > 1: background writers in transactions of their own, which
    -- need the run's partition committed before they start
    IF refresh_earnings.jobs OPERATOR(pg_catalog.>) 1 AND NOT v_can_commit THEN
        PERFORM incentives_internal.raise_error(
            '25001', 'refresh_earnings with jobs > 1 cannot run inside a transaction block or a function', '',
            'CALL it as a statement of its own (outside BEGIN ... COMMIT), or use jobs => 1 here.');
    END IF;
    -- changed_only with nothing changed: nothing to do, no run logged
    -- (a live job every few seconds, docs/analyst-guide.md, Live earnings)
    IF refresh_earnings.changed_only AND NOT EXISTS (SELECT FROM incentives.earnings_changes) THEN
        RETURN;
    END IF;
    -- changed_only that may commit never waits for another refresh: it
    -- takes the refresh lock for the run or returns at once, and the
    -- changes stay logged for the next run
    IF refresh_earnings.changed_only AND v_can_commit THEN
        IF NOT incentives_internal.refresh_try_hold() THEN
            RAISE NOTICE 'refresh_earnings: another refresh is running; the changes stay for the next one';
            RETURN;
        END IF;
    END IF;

    v_run := incentives_internal.refresh_earnings_begin(refresh_earnings.participant_key,
                                                        refresh_earnings.transactions,
                                                        refresh_earnings.on_error,
                                                        refresh_earnings.changed_only);
    IF v_can_commit THEN
        COMMIT;   -- the 'running' row is visible while the refresh runs
    END IF;

    -- jobs > 1: the refresh lock and the new partition, committed
    IF v_jobs OPERATOR(pg_catalog.>) 1 THEN
        BEGIN
            v_partition := incentives_internal.refresh_earnings_prepare(v_run, refresh_earnings.transactions,
                                                                        v_jobs);
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            GET STACKED DIAGNOSTICS v_state   = RETURNED_SQLSTATE,
                                    v_message = MESSAGE_TEXT,
                                    v_detail  = PG_EXCEPTION_DETAIL,
                                    v_hint    = PG_EXCEPTION_HINT;
            v_failed := true;
        END;
        IF v_partition IS NULL THEN
            v_jobs := 1;   -- a role that refreshes in place: one process
        END IF;
        IF NOT v_failed THEN
            COMMIT;
        END IF;
    END IF;

    -- The replacement runs in a subtransaction: on error its deletes and
    -- inserts are undone, the previous earnings stay, and the failure is
    -- recorded after it.
    IF NOT v_failed THEN
        BEGIN
            PERFORM incentives_internal.refresh_earnings_work(v_run, refresh_earnings.participant_key,
                                                              refresh_earnings.transactions,
                                                              refresh_earnings.progress_every,
                                                              refresh_earnings.on_error,
                                                              refresh_earnings.changed_only,
                                                              v_jobs, v_partition);
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
    END IF;
    IF v_failed AND v_partition IS NOT NULL THEN
        -- the writers' committed rows go with the run's partition
        PERFORM incentives_internal.refresh_earnings_drop_orphans();
    END IF;
    PERFORM incentives_internal.refresh_release();
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
-- incentives_internal.refresh_write: a refresh's rows written from C into
-- a table of the run's transaction: the new partition of a full refresh,
-- or the temporary table a batch moves into the earnings in place
-- (docs/lifecycle.md, "How a refresh replaces the earnings";
-- src/pg/refresh/refresh.h)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.refresh_write(
    target                   regclass,
    run_id                   bigint,
    transactions             regclass,
    progress_every           integer,
    skip                     boolean,
    jobs                     integer,
    participant              text DEFAULT NULL,
    OUT participants         integer,
    OUT rows                 bigint,
    OUT total                numeric,
    OUT failed_participants  text[],
    OUT failed_transactions  text[],
    OUT failed_sqlstates     text[],
    OUT failed_messages      text[],
    OUT partial_participants text[])
AS 'MODULE_PATHNAME', 'incentives_refresh_write'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_write(regclass, bigint, regclass, integer, boolean, integer, text) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): calculates every participant of the transactions relation (or only participant, with its groups'' members) in one snapshot, by jobs processes (a participant group with all its members in one), and writes the rows straight into target (a table this transaction created, without indexes); a NOTICE every progress_every participants (0: none); returns the participants read, the rows and total written, and the participants skipped (skip: participant, transaction, SQLSTATE, message; those with rows already written apart)';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_hold()
RETURNS void
AS 'MODULE_PATHNAME', 'incentives_refresh_hold'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_hold() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): takes the lock a refresh with jobs > 1 holds across its transactions (incentives.earnings in EXCLUSIVE mode, for the session; the privileges LOCK TABLE asks for that mode), released by refresh_release, by an error that ends the transaction or by the session''s end';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_try_hold()
RETURNS boolean
AS 'MODULE_PATHNAME', 'incentives_refresh_try_hold'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_try_hold() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): takes the lock of refresh_hold if no other session holds a conflicting one, without waiting; false when it could not';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_release()
RETURNS void
AS 'MODULE_PATHNAME', 'incentives_refresh_release'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_release() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): releases the lock refresh_hold took, if this session holds it';

CREATE OR REPLACE FUNCTION incentives_internal.run_log_keep()
RETURNS interval
AS 'MODULE_PATHNAME', 'incentives_run_log_keep'
LANGUAGE C STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.run_log_keep() IS
  'Part of incentives.refresh_earnings: the setting incentives.run_log_keep as an interval, NULL when it is -1 (keep every run)';

CREATE OR REPLACE FUNCTION incentives_internal.changed_only_limit()
RETURNS integer
AS 'MODULE_PATHNAME', 'incentives_changed_only_limit'
LANGUAGE C STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.changed_only_limit() IS
  'Part of incentives.refresh_earnings: the setting incentives.changed_only_limit, NULL when it is -1 (no limit)';

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
-- Serialized: every settle (and void) locks incentives.statements in
-- SHARE ROW EXCLUSIVE mode, which only a role that may write it can take
-- (docs/operations.md, Concurrency), before it reads the earlier lines, and reads them with a snapshot taken
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

CREATE OR REPLACE FUNCTION incentives_internal.settle_work(
    statement_date  date,
    participant_key text,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_date        date := settle_work.statement_date;
    v_participant text := settle_work.participant_key;
    v_txns        regclass := settle_work.transactions;
    v_id          bigint;
    v_late        record;
    v_lines       integer;
    v_due         numeric;
BEGIN
    IF v_date IS NULL THEN
        RAISE EXCEPTION 'statement_date must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_date > current_date THEN
        RAISE EXCEPTION 'statement_date % is after today (%)', v_date, current_date
              USING ERRCODE = 'invalid_parameter_value',
                    DETAIL = 'A statement settles what has been earned; one dated in the future would refuse every later statement of an earlier date.',
                    HINT = 'Settle through today or an earlier date.';
    END IF;
    IF v_txns IS NULL THEN
        RAISE EXCEPTION 'transactions must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'incentives.settle needs isolation level READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
              USING ERRCODE = 'invalid_transaction_state',
                    DETAIL = 'It reads the earlier statements after it has waited for any other settle to commit; a snapshot taken before that could count the same earnings twice.',
                    HINT = 'CALL it outside a transaction block, or in a READ COMMITTED one.';
    END IF;

    -- One settle at a time; everything below reads after the wait.
    LOCK TABLE incentives.statements IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency

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
                                              transactions => v_txns,
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
        ON (st.participant_key = c.participant_key
            OR EXISTS (SELECT 1 FROM incentives.statement_lines AS l
                        WHERE l.statement_id = st.statement_id AND l.participant_key = c.participant_key))
       -- a voided statement and its reversal hold no date
       AND st.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = st.statement_id)
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

    INSERT INTO incentives.statements (statement_date, participant_key, transactions)
    VALUES (v_date, v_participant, v_txns::text)
    RETURNING statement_id INTO v_id;
    INSERT INTO incentives.statement_lines (statement_id, participant_key, offer_key,
                                            earned_to_date, settled_before, amount_due,
                                            offer_version)
    SELECT v_id, n.participant_key, n.offer_key, n.earned_to_date, n.settled_before,
           n.earned_to_date - n.settled_before,
           (SELECT v.version FROM incentives.offer_versions AS v
             WHERE v.offer_key = n.offer_key AND v.valid_to IS NULL)
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
COMMENT ON FUNCTION incentives_internal.settle_work(date, text, regclass) IS
  'Part of incentives.settle (call the procedure, not this): waits for any other settle, writes the statement and its lines, returns the statement_id';

CREATE OR REPLACE PROCEDURE incentives.settle(
    statement_date  date,
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name is
-- schema-qualified; the SQL work is in incentives_internal.settle_work.
DECLARE
    v_can_commit pg_catalog.bool := incentives_internal.transaction_control_allowed();
BEGIN
    IF v_can_commit THEN
        -- a fresh READ COMMITTED transaction of its own, whatever the
        -- session's default isolation
        COMMIT;
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    END IF;
    PERFORM incentives_internal.settle_work(settle.statement_date, settle.participant_key,
                                            settle.transactions);
    IF v_can_commit THEN
        COMMIT;   -- the statement is durable when CALL returns
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.settle(date, text, regclass) IS
  'Writes a settlement statement for the earnings through statement_date of one participant or all (NULL), calculated from the transactions relation (recorded on the statement): per participant and offer earned_to_date, settled_before, amount_due (true-ups positive, clawbacks negative), the line''s kind and the offer''s version, in one transaction; serialized against other settles; refuses a date after today or before a covered participant''s latest statement (22023)';

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
                                             'amount_due', l.amount_due,
                                             'kind', l.kind,
                                             'offer_version', l.offer_version)
                          ORDER BY l.offer_key COLLATE "C")
                FILTER (WHERE l.offer_key IS NOT NULL), '[]'::jsonb) AS lines,
       s.created_at,
       s.created_by,
       COALESCE(s.transactions, 'incentives.transactions') AS transactions,
       s.reverses
  FROM incentives.statements AS s
  LEFT JOIN incentives.statement_lines AS l ON l.statement_id = s.statement_id
 WHERE COALESCE(l.participant_key, s.participant_key) IS NOT NULL
 GROUP BY s.statement_id, s.statement_date, COALESCE(l.participant_key, s.participant_key),
          s.created_at, s.created_by, s.transactions, s.reverses;
COMMENT ON VIEW incentives.participant_statements IS
  'One statement per participant: its totals and its lines (a JSON array, one object per offer), what finance sends the participant';
COMMENT ON COLUMN incentives.participant_statements.statement_id IS 'The statement';
COMMENT ON COLUMN incentives.participant_statements.statement_date IS 'Earnings settled through this date';
COMMENT ON COLUMN incentives.participant_statements.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.participant_statements.offers IS 'Lines (offers) on the participant''s statement';
COMMENT ON COLUMN incentives.participant_statements.earned_to_date IS 'Sum of the lines'' earned_to_date';
COMMENT ON COLUMN incentives.participant_statements.settled_before IS 'Sum of the lines'' settled_before';
COMMENT ON COLUMN incentives.participant_statements.amount_due IS 'What is due to the participant (negative: owed back)';
COMMENT ON COLUMN incentives.participant_statements.lines IS 'The lines: [{offer_key, earned_to_date, settled_before, amount_due, kind, offer_version}] in offer order';
COMMENT ON COLUMN incentives.participant_statements.created_at IS 'When the statement was written';
COMMENT ON COLUMN incentives.participant_statements.created_by IS 'Who ran incentives.settle';
COMMENT ON COLUMN incentives.participant_statements.transactions IS 'The relation the statement''s earnings were calculated from';
COMMENT ON COLUMN incentives.participant_statements.reverses IS 'The statement this one reverses (incentives.void_statement); NULL for a settlement';

CREATE OR REPLACE VIEW incentives.settlement_balances WITH (security_invoker = true) AS
SELECT l.participant_key,
       l.offer_key,
       sum(l.amount_due)  AS settled_total,
       count(*)           AS statements,
       (array_agg(s.statement_id ORDER BY s.statement_date DESC, s.statement_id DESC))[1]   AS last_statement_id,
       max(s.statement_date)                                                                AS last_statement_date,
       (array_agg(l.amount_due ORDER BY s.statement_date DESC, s.statement_id DESC))[1]     AS last_amount_due,
       (array_agg(l.kind ORDER BY s.statement_date DESC, s.statement_id DESC))[1]           AS last_kind,
       (array_agg(l.offer_version ORDER BY s.statement_date DESC, s.statement_id DESC))[1]  AS last_offer_version
  FROM incentives.statement_lines AS l
  JOIN incentives.statements AS s ON s.statement_id = l.statement_id
 -- a voided statement and its reversal cancel out
 WHERE s.reverses IS NULL
   AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
 GROUP BY l.participant_key, l.offer_key;
COMMENT ON VIEW incentives.settlement_balances IS
  'Per participant and offer: everything settled so far and the last statement (a voided statement and its reversal left out: they cancel out)';
COMMENT ON COLUMN incentives.settlement_balances.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.settlement_balances.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.settlement_balances.settled_total IS 'Sum of amount_due over all its lines (= earned_to_date of the last one)';
COMMENT ON COLUMN incentives.settlement_balances.statements IS 'Statements with a line for it';
COMMENT ON COLUMN incentives.settlement_balances.last_statement_id IS 'The latest statement with a line for it';
COMMENT ON COLUMN incentives.settlement_balances.last_statement_date IS 'Its statement_date';
COMMENT ON COLUMN incentives.settlement_balances.last_amount_due IS 'What the latest statement settled (negative: a clawback)';
COMMENT ON COLUMN incentives.settlement_balances.last_kind IS 'The latest line''s kind: unchanged, clawback, payment or true_up';
COMMENT ON COLUMN incentives.settlement_balances.last_offer_version IS 'The offer''s version when the latest line was written';

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
     WHERE s.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
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

------------------------------------------------------------------------
-- Removing a settled offer (docs/lifecycle.md, Removing a settled offer)
--
-- An offer some participant has a settled total other than zero for
-- cannot be removed by accident: the next statement would claw back all
-- of it.  A DELETE, or a change of offer_key, is checked at the end of the
-- transaction (a deferred constraint trigger: a delete and re-insert of the
-- same offer in one transaction finds it there again and passes); a
-- TRUNCATE, which has no row triggers, is refused at once when any offer
-- in the table has settled money.  Refused with 55000, the settled total
-- and the latest statement.  incentives.remove_settled_offer(offer_key,
-- reason) is the one way to remove such an offer on purpose: it logs the
-- removal in incentives.offer_removals and the check lets that
-- transaction's delete through.  The check counts the statement lines the
-- removing role may read (row-level security applies to it as to every
-- read: an offer admin reads them all).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_settled(offer_key text)
RETURNS TABLE (settled_total numeric, participants integer, last_statement_date date)
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT COALESCE(sum(p.total), 0.00), count(*)::integer, max(p.latest)
      FROM (SELECT l.participant_key, sum(l.amount_due) AS total,
                   -- a voided statement and its reversal hold no date
                   max(s.statement_date) FILTER (WHERE s.reverses IS NULL AND NOT EXISTS (
                         SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id))
                     AS latest
              FROM incentives.statement_lines AS l
              JOIN incentives.statements AS s ON s.statement_id = l.statement_id
             WHERE l.offer_key = $1
             GROUP BY l.participant_key
            HAVING sum(l.amount_due) <> 0) AS p
$function$;
COMMENT ON FUNCTION incentives_internal.offer_settled(text) IS
  'The offer''s settled money: the sum of amount_due over the participants whose settled total for it is not zero, how many they are, and their latest statement date (0.00, 0, NULL: nothing settled)';

CREATE OR REPLACE FUNCTION incentives_internal.offer_removal_refuse(offer_key text, how text)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v record;
BEGIN
    SELECT * INTO v FROM incentives_internal.offer_settled(offer_removal_refuse.offer_key);
    IF v.participants > 0 THEN
        RAISE EXCEPTION 'offer "%" cannot be removed (%): % settled for it, the latest statement %',
                        offer_removal_refuse.offer_key, how, v.settled_total, v.last_statement_date
              USING ERRCODE = 'object_not_in_prerequisite_state',
                    DETAIL = format('Participants with a settled balance for it: %s. The next statement would claw it all back.', v.participants),
                    HINT = format('To stop it paying from a date, change its rates to zero from that date (a prospective change). To remove it on purpose and claw its payments back: SELECT incentives.remove_settled_offer(%L, reason).',
                                  offer_removal_refuse.offer_key);
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offer_removal_refuse(text, text) IS
  'Raises 55000 when the offer has settled money (incentives_internal.offer_settled): the total, the latest statement, and the hint of a prospective change to zero';

CREATE OR REPLACE FUNCTION incentives_internal.offers_settled_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN   -- TRUNCATE: every offer goes
        PERFORM incentives_internal.offer_removal_refuse(o.offer_key, 'TRUNCATE')
           FROM incentives.offers AS o;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.offer_key IS NOT DISTINCT FROM NEW.offer_key THEN
        RETURN NULL;
    END IF;
    -- at the end of the transaction: the offer back (a delete and
    -- re-insert), or removed on purpose in this transaction, passes
    IF EXISTS (SELECT 1 FROM incentives.offers AS o WHERE o.offer_key = OLD.offer_key)
       OR EXISTS (SELECT 1 FROM incentives.offer_removals AS r
                   WHERE r.offer_key = OLD.offer_key
                     AND r.removed_in = pg_current_xact_id() AND r.removed_at = now()) THEN
        RETURN NULL;
    END IF;
    PERFORM incentives_internal.offer_removal_refuse(
              OLD.offer_key, CASE WHEN TG_OP = 'DELETE' THEN 'DELETE'
                                  ELSE format('its offer_key changed to "%s"', NEW.offer_key) END);
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_settled_check() IS
  'Trigger: refuses removing an offer with settled money (55000): a DELETE or a change of offer_key at the end of the transaction, unless the offer is there again or was removed by incentives.remove_settled_offer; a TRUNCATE at once';

DROP TRIGGER IF EXISTS offers_settled_check ON incentives.offers;
CREATE CONSTRAINT TRIGGER offers_settled_check
    AFTER DELETE OR UPDATE OF offer_key ON incentives.offers
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_settled_check();
COMMENT ON TRIGGER offers_settled_check ON incentives.offers IS
  'At the end of the transaction: an offer deleted or re-keyed that has settled money and is not there again is refused (55000)';

DROP TRIGGER IF EXISTS offers_settled_truncate ON incentives.offers;
CREATE TRIGGER offers_settled_truncate
    BEFORE TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.offers_settled_check();
COMMENT ON TRIGGER offers_settled_truncate ON incentives.offers IS
  'TRUNCATE of the offers is refused (55000) while any of them has settled money';

CREATE OR REPLACE FUNCTION incentives.remove_settled_offer(offer_key text, reason text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_offer    incentives.offers;
    v_settled  record;
    v_id       bigint;
BEGIN
    IF remove_settled_offer.reason IS NULL OR btrim(remove_settled_offer.reason) = '' THEN
        RAISE EXCEPTION 'a reason is required to remove offer "%"', remove_settled_offer.offer_key
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Say why: it is logged in incentives.offer_removals.';
    END IF;
    SELECT * INTO v_offer FROM incentives.offers AS o
     WHERE o.offer_key = remove_settled_offer.offer_key FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'offer "%" does not exist', remove_settled_offer.offer_key
              USING ERRCODE = 'no_data_found';
    END IF;
    SELECT * INTO v_settled FROM incentives_internal.offer_settled(remove_settled_offer.offer_key);
    INSERT INTO incentives.offer_removals (offer_key, reason, settled_total, participants,
                                           last_statement_date, document)
    VALUES (v_offer.offer_key, remove_settled_offer.reason, v_settled.settled_total,
            v_settled.participants, v_settled.last_statement_date, v_offer.document)
    RETURNING removal_id INTO v_id;
    DELETE FROM incentives.offers AS o WHERE o.offer_key = v_offer.offer_key;
    RAISE NOTICE 'remove_settled_offer: offer "%" removed (removal %): % settled for % participants will be clawed back by the next statement',
                 v_offer.offer_key, v_id, v_settled.settled_total, v_settled.participants;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives.remove_settled_offer(text, text) IS
  'Removes an offer on purpose, settled money and all: logs who, when, why and what it had settled in incentives.offer_removals and deletes it; the next statement claws its settled total back. Returns the removal_id';

DROP TRIGGER IF EXISTS offer_removals_append_only ON incentives.offer_removals;
CREATE TRIGGER offer_removals_append_only
    BEFORE UPDATE OR DELETE ON incentives.offer_removals
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'The removals of settled offers are a log: no role may change or remove them.',
        'Nothing to correct: an offer removed by mistake is inserted again.');
COMMENT ON TRIGGER offer_removals_append_only ON incentives.offer_removals IS
  'Offer removals are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS offer_removals_no_truncate ON incentives.offer_removals;
CREATE TRIGGER offer_removals_no_truncate
    BEFORE TRUNCATE ON incentives.offer_removals
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'The removals of settled offers are a log: no role may change or remove them.',
        'Nothing to correct: an offer removed by mistake is inserted again.');
COMMENT ON TRIGGER offer_removals_no_truncate ON incentives.offer_removals IS
  'Offer removals are append-only: TRUNCATE is refused for every role';

------------------------------------------------------------------------
-- Voiding a statement dated in the future (docs/lifecycle.md, Statements
-- dated in the future)
--
-- A statement dated after today (written before 0.4.0 refused such a date)
-- would refuse every later statement of an earlier date.  void_statement
-- appends its reversal: a statement of the same date whose lines negate
-- its lines (settled_before the pair's settled total, amount_due the
-- opposite of the voided line's), reverses naming it and reason saying
-- why.  The pair's settled total is then what it was; a voided statement
-- and its reversal hold no date for the forward-only rule and are left
-- out of the balances.  Serialized with settle (the same lock); nothing is
-- deleted.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.void_statement(statement_id bigint, reason text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_old incentives.statements;
    v_id  bigint;
    v_due numeric;
BEGIN
    IF void_statement.reason IS NULL OR btrim(void_statement.reason) = '' THEN
        RAISE EXCEPTION 'a reason is required to void statement %', void_statement.statement_id
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'incentives.void_statement needs isolation level READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
              USING ERRCODE = 'invalid_transaction_state';
    END IF;
    LOCK TABLE incentives.statements IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency
    SELECT * INTO v_old FROM incentives.statements AS s WHERE s.statement_id = void_statement.statement_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'statement % does not exist', void_statement.statement_id USING ERRCODE = 'no_data_found';
    END IF;
    IF v_old.reverses IS NOT NULL THEN
        RAISE EXCEPTION 'statement % is the reversal of statement %', v_old.statement_id, v_old.reverses
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = v_old.statement_id) THEN
        RAISE EXCEPTION 'statement % is already voided', v_old.statement_id USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_old.statement_date <= current_date THEN
        RAISE EXCEPTION 'statement % is dated %, not after today: only a statement dated in the future is voided',
                        v_old.statement_id, v_old.statement_date
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Corrections of the past are the next statement''s business: CALL incentives.settle again.';
    END IF;
    INSERT INTO incentives.statements (statement_date, participant_key, transactions, reverses, reason)
    VALUES (v_old.statement_date, v_old.participant_key, v_old.transactions, v_old.statement_id, void_statement.reason)
    RETURNING statement_id INTO v_id;
    INSERT INTO incentives.statement_lines (statement_id, participant_key, offer_key,
                                            earned_to_date, settled_before, amount_due, offer_version)
    SELECT v_id, l.participant_key, l.offer_key,
           p.settled - l.amount_due, p.settled, -l.amount_due,
           (SELECT v.version FROM incentives.offer_versions AS v
             WHERE v.offer_key = l.offer_key AND v.valid_to IS NULL)
      FROM incentives.statement_lines AS l
      CROSS JOIN LATERAL (SELECT sum(o.amount_due) AS settled FROM incentives.statement_lines AS o
                           WHERE o.participant_key = l.participant_key AND o.offer_key = l.offer_key) AS p
     WHERE l.statement_id = v_old.statement_id AND l.amount_due <> 0
     ORDER BY l.participant_key COLLATE "C", l.offer_key COLLATE "C";
    SELECT COALESCE(sum(l.amount_due), 0.00) INTO v_due FROM incentives.statement_lines AS l WHERE l.statement_id = v_id;
    RAISE NOTICE 'void_statement: statement % reverses statement % of %: % due', v_id, v_old.statement_id, v_old.statement_date, v_due;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives.void_statement(bigint, text) IS
  'Voids a statement dated after today by appending its reversal (the same date, every line negated, reverses and reason recorded); the voided statement and its reversal then hold no date and leave the balances. Returns the reversal''s statement_id';

------------------------------------------------------------------------
-- Previewing a change of an offer (docs/lifecycle.md, Previewing a change)
--
-- preview_offer_change stores the document in a subtransaction (every
-- check of a write applies, with its warnings), calculates the offer's
-- earnings there, and rolls the subtransaction back: nothing is stored,
-- no version written, no lock kept.  Per participant it compares them with
-- the earnings under the stored offer and with what was settled for it.
-- Without effective_from the change previewed is retrospective, as an
-- UPDATE of the offer is; with it, prospective, as incentives.change_rates
-- makes it (docs/lifecycle.md, Prospective rate changes).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_earned(offer_key text, transactions regclass,
                                                            through_date date)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT COALESCE(jsonb_object_agg(e.participant_key, e.amount), '{}')
      FROM (SELECT c.participant_key, sum(c.incentive_amount) AS amount
              FROM incentives.incentive_calculate(offer_keys => ARRAY[$1], transactions => $2,
                                                  through_date => $3) AS c
             GROUP BY c.participant_key) AS e
$function$;
COMMENT ON FUNCTION incentives_internal.offer_earned(text, regclass, date) IS
  'preview_offer_change helper: {participant_key: earned} under the offer as stored, over the transactions dated through through_date';

CREATE OR REPLACE FUNCTION incentives.preview_offer_change(
    document       jsonb,
    effective_from date     DEFAULT NULL,
    transactions   regclass DEFAULT 'incentives.transactions',
    through_date   date     DEFAULT NULL)
RETURNS SETOF incentives.offer_change_row
ROWS 100
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_document jsonb := preview_offer_change.document;
    v_txns     regclass := preview_offer_change.transactions;
    v_through  date := preview_offer_change.through_date;
    v_key      text;
    v_now      jsonb;
    v_after    jsonb;
BEGIN
    IF v_document IS NULL THEN
        RAISE EXCEPTION 'document must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_txns IS NULL THEN
        RAISE EXCEPTION 'transactions must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF jsonb_typeof(v_document) = 'object' AND jsonb_typeof(v_document -> 'offer_key') = 'string' THEN
        v_key := v_document ->> 'offer_key';
    END IF;

    -- the earnings under the stored offer (none when it does not exist)
    IF v_key IS NOT NULL AND EXISTS (SELECT 1 FROM incentives.offers AS o WHERE o.offer_key = v_key) THEN
        v_now := incentives_internal.offer_earned(v_key, v_txns, v_through);
    END IF;

    -- the earnings under the document, stored in a subtransaction that is
    -- rolled back (an invalid document is refused by the write's checks):
    -- from effective_from on, as incentives.change_rates stores it
    BEGIN
        IF preview_offer_change.effective_from IS NULL THEN
            INSERT INTO incentives.offers (document) VALUES (v_document)
                ON CONFLICT (offer_key) DO UPDATE SET document = EXCLUDED.document;
        ELSE
            PERFORM incentives.change_rates(v_key, preview_offer_change.effective_from, v_document);
        END IF;
        v_key := v_document ->> 'offer_key';
        v_after := incentives_internal.offer_earned(v_key, v_txns, v_through);
        RAISE EXCEPTION 'preview_offer_change: rolled back' USING ERRCODE = 'IP000';
    EXCEPTION WHEN SQLSTATE 'IP000' THEN
        NULL;
    END;

    RETURN QUERY
    WITH now_earned AS (
        SELECT n.key AS participant_key, n.value::numeric AS amount FROM jsonb_each_text(COALESCE(v_now, '{}')) AS n),
    after_earned AS (
        SELECT a.key AS participant_key, a.value::numeric AS amount FROM jsonb_each_text(v_after) AS a),
    settled_total AS (
        SELECT l.participant_key, sum(l.amount_due) AS amount
          FROM incentives.statement_lines AS l
         WHERE l.offer_key = v_key
         GROUP BY l.participant_key),
    figures AS (
        SELECT p.participant_key,
               round(COALESCE(n.amount, 0), 2) AS earned_now,
               round(COALESCE(a.amount, 0), 2) AS earned_after,
               round(COALESCE(s.amount, 0), 2) AS settled
          FROM (SELECT x.participant_key FROM now_earned AS x
                UNION SELECT x.participant_key FROM after_earned AS x
                UNION SELECT x.participant_key FROM settled_total AS x) AS p
          LEFT JOIN now_earned AS n ON n.participant_key = p.participant_key
          LEFT JOIN after_earned AS a ON a.participant_key = p.participant_key
          LEFT JOIN settled_total AS s ON s.participant_key = p.participant_key)
    SELECT f.participant_key, f.earned_now, f.earned_after, f.settled,
           f.earned_after - f.earned_now, f.earned_after - f.settled
      FROM figures AS f
     WHERE f.earned_now <> 0 OR f.earned_after <> 0 OR f.settled <> 0
     ORDER BY f.participant_key COLLATE "C";
END
$function$;
COMMENT ON FUNCTION incentives.preview_offer_change(jsonb, date, regclass, date) IS
  'What storing an offer document would change, storing nothing: per participant earned_now (the stored offer), earned_after (the document), settled (the statements'' total for the offer), change (earned_after - earned_now) and due_after (earned_after - settled), over the transactions of transactions dated through through_date. The document passes every check of a write; with effective_from, the change is previewed as incentives.change_rates would make it';

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
-- (55_settle.sql): one transaction, serialized by a lock on
-- incentives.accruals (SHARE ROW EXCLUSIVE) and a READ COMMITTED snapshot
-- taken after it, and refused
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
  'Per participant and offer with a row in either calculation: earned through as_of_date, projected to the end of the offer''s span at the same pace (transactions dated span_start..as_of_date x span_days / elapsed_days; tiers, pools, requirements and limits on the projected volume), the stepped basis and tier of each, and accrual_to_date = max(round(projected x elapsed / span, 2), earned_to_date); stored properties; runs with the caller''s rights';

CREATE OR REPLACE FUNCTION incentives_internal.accrue_work(
    as_of_date   date,
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_date   date := accrue_work.as_of_date;
    v_txns   regclass := accrue_work.transactions;
    v_latest date;
    v_id     bigint;
    v_lines  integer;
    v_delta  numeric;
BEGIN
    IF v_date IS NULL THEN
        RAISE EXCEPTION 'as_of_date must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_date > current_date THEN
        RAISE EXCEPTION 'as_of_date % is after today (%)', v_date, current_date
              USING ERRCODE = 'invalid_parameter_value',
                    DETAIL = 'An accrual books what has accrued; one dated in the future would refuse every later accrual of an earlier date.',
                    HINT = 'Accrue as of today or an earlier date.';
    END IF;
    IF v_txns IS NULL THEN
        RAISE EXCEPTION 'transactions must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'incentives.accrue needs isolation level READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
              USING ERRCODE = 'invalid_transaction_state',
                    DETAIL = 'It reads the earlier accruals after it has waited for any other accrue to commit; a snapshot taken before that could book the same accrual twice.',
                    HINT = 'CALL it outside a transaction block, or in a READ COMMITTED one.';
    END IF;

    -- One accrue at a time; everything below reads after the wait.
    LOCK TABLE incentives.accruals IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency

    -- a voided accrual and its reversal hold no date
    SELECT max(a.as_of_date) INTO v_latest FROM incentives.accruals AS a
     WHERE a.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.accruals AS r WHERE r.reverses = a.accrual_id);
    IF v_latest > v_date THEN
        RAISE EXCEPTION 'as_of_date % is earlier than the latest accrual (%)', v_date, v_latest
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Accruals go forward in time: accrue on or after the latest as_of_date.';
    END IF;

    INSERT INTO incentives.accruals (as_of_date, transactions) VALUES (v_date, v_txns::text)
    RETURNING accrual_id INTO v_id;
    INSERT INTO incentives.accrual_lines (accrual_id, participant_key, offer_key,
                                          accrued_to_date, accrued_before, delta)
    WITH accrued AS (
        -- a member that moved between groups has a forecast row per group
        SELECT f.participant_key, f.offer_key, sum(f.accrual_to_date) AS amount
          FROM incentives.forecast(v_date, transactions => v_txns) AS f
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
COMMENT ON FUNCTION incentives_internal.accrue_work(date, regclass) IS
  'Part of incentives.accrue (call the procedure, not this): waits for any other accrue, writes the accrual and its lines, returns the accrual_id';

CREATE OR REPLACE PROCEDURE incentives.accrue(
    as_of_date   date,
    transactions regclass DEFAULT 'incentives.transactions')
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name is
-- schema-qualified; the SQL work is in incentives_internal.accrue_work.
DECLARE
    v_can_commit pg_catalog.bool := incentives_internal.transaction_control_allowed();
BEGIN
    IF v_can_commit THEN
        -- a fresh READ COMMITTED transaction of its own, whatever the
        -- session's default isolation
        COMMIT;
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    END IF;
    PERFORM incentives_internal.accrue_work(accrue.as_of_date, accrue.transactions);
    IF v_can_commit THEN
        COMMIT;   -- the accrual is durable when CALL returns
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.accrue(date, regclass) IS
  'Books the accrual as of as_of_date from the transactions relation (recorded on the accrual): per participant and offer the forecast''s accrual_to_date, the previous accrual of the pair and the difference (the journal entry), in one transaction; serialized against other accrues; refuses a date after today or before the latest accrual (22023)';

CREATE OR REPLACE VIEW incentives.accrual_balances WITH (security_invoker = true) AS
WITH latest AS (
    SELECT DISTINCT ON (l.participant_key, l.offer_key)
           l.participant_key, l.offer_key, l.accrual_id, a.as_of_date,
           l.accrued_to_date, l.delta
      FROM incentives.accrual_lines AS l
      JOIN incentives.accruals AS a ON a.accrual_id = l.accrual_id
     -- a voided accrual and its reversal cancel out
     WHERE a.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.accruals AS r WHERE r.reverses = a.accrual_id)
     ORDER BY l.participant_key, l.offer_key, l.accrual_id DESC),
settled AS (
    -- what had been settled by the accrual's date: the statements dated
    -- on or before its as_of_date (all of them for a pair never accrued)
    SELECT l.participant_key, l.offer_key,
           sum(l.amount_due)     AS amount,
           max(s.statement_date) AS last_statement_date
      FROM incentives.statement_lines AS l
      JOIN incentives.statements AS s ON s.statement_id = l.statement_id
      LEFT JOIN latest AS la
        ON la.participant_key = l.participant_key AND la.offer_key = l.offer_key
     WHERE (la.as_of_date IS NULL OR s.statement_date <= la.as_of_date)
       AND s.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
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
  'Per participant and offer: its latest accrual beside what the settlement statements dated on or before its as_of_date had paid; accrued_unsettled is the liability still on the books at that date';
COMMENT ON COLUMN incentives.accrual_balances.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.accrual_balances.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.accrual_balances.last_accrual_id IS 'The latest accrual with a line for it (NULL: never accrued)';
COMMENT ON COLUMN incentives.accrual_balances.last_as_of_date IS 'Its as_of_date';
COMMENT ON COLUMN incentives.accrual_balances.accrued IS 'accrued_to_date of that line (0.00: never accrued)';
COMMENT ON COLUMN incentives.accrual_balances.last_delta IS 'What that accrual booked (negative: a reversal)';
COMMENT ON COLUMN incentives.accrual_balances.settled IS 'Sum of amount_due of its statement lines dated on or before last_as_of_date (every line when never accrued)';
COMMENT ON COLUMN incentives.accrual_balances.accrued_unsettled IS 'accrued - settled';
COMMENT ON COLUMN incentives.accrual_balances.last_statement_date IS 'The latest of those statements'' date (NULL: none)';

-- Voiding an accrual dated in the future (docs/lifecycle.md, Statements
-- dated in the future): its reversal, of the same date, takes each of its
-- pairs back to where they were before it (accrued_to_date the voided
-- line's accrued_before, delta the opposite); nothing is deleted.  Only the
-- latest accrual, dated after today; serialized with accrue.
CREATE OR REPLACE FUNCTION incentives.void_accrual(accrual_id bigint, reason text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_old   incentives.accruals;
    v_later bigint;
    v_id    bigint;
    v_delta numeric;
BEGIN
    IF void_accrual.reason IS NULL OR btrim(void_accrual.reason) = '' THEN
        RAISE EXCEPTION 'a reason is required to void accrual %', void_accrual.accrual_id
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'incentives.void_accrual needs isolation level READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
              USING ERRCODE = 'invalid_transaction_state';
    END IF;
    LOCK TABLE incentives.accruals IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency
    SELECT * INTO v_old FROM incentives.accruals AS a WHERE a.accrual_id = void_accrual.accrual_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'accrual % does not exist', void_accrual.accrual_id USING ERRCODE = 'no_data_found';
    END IF;
    IF v_old.reverses IS NOT NULL THEN
        RAISE EXCEPTION 'accrual % is the reversal of accrual %', v_old.accrual_id, v_old.reverses
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF EXISTS (SELECT 1 FROM incentives.accruals AS r WHERE r.reverses = v_old.accrual_id) THEN
        RAISE EXCEPTION 'accrual % is already voided', v_old.accrual_id USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_old.as_of_date <= current_date THEN
        RAISE EXCEPTION 'accrual % is dated %, not after today: only an accrual dated in the future is voided',
                        v_old.accrual_id, v_old.as_of_date
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Corrections of the past are the next accrual''s business: CALL incentives.accrue again.';
    END IF;
    SELECT max(a.accrual_id) INTO v_later FROM incentives.accruals AS a
     WHERE a.accrual_id > v_old.accrual_id AND a.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.accruals AS r WHERE r.reverses = a.accrual_id);
    IF v_later IS NOT NULL THEN
        RAISE EXCEPTION 'accrual % is not the latest: void accrual % first', v_old.accrual_id, v_later
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO incentives.accruals (as_of_date, transactions, reverses, reason)
    VALUES (v_old.as_of_date, v_old.transactions, v_old.accrual_id, void_accrual.reason)
    RETURNING accrual_id INTO v_id;
    INSERT INTO incentives.accrual_lines (accrual_id, participant_key, offer_key,
                                          accrued_to_date, accrued_before, delta)
    SELECT v_id, l.participant_key, l.offer_key, l.accrued_before, l.accrued_to_date, -l.delta
      FROM incentives.accrual_lines AS l
     WHERE l.accrual_id = v_old.accrual_id AND l.delta <> 0
     ORDER BY l.participant_key COLLATE "C", l.offer_key COLLATE "C";
    SELECT COALESCE(sum(l.delta), 0.00) INTO v_delta FROM incentives.accrual_lines AS l WHERE l.accrual_id = v_id;
    RAISE NOTICE 'void_accrual: accrual % reverses accrual % as of %: % booked', v_id, v_old.accrual_id, v_old.as_of_date, v_delta;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives.void_accrual(bigint, text) IS
  'Voids the latest accrual when it is dated after today by appending its reversal (the same date, each pair back to its accrual before, reverses and reason recorded); the voided accrual and its reversal then hold no date and leave the balances. Returns the reversal''s accrual_id';

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
    -- Only the fields a request defines, at its top level and in its
    -- enrollments (docs/reference.md, Strict offers); inline transactions
    -- may carry others (rows from other systems), which are ignored.
    PERFORM incentives_internal.request_unknown_fields(request);

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

    -- Each window names an offer (stored, or at as_of: the calculation
    -- reads no other), as a stored enrollment must (code/11_offer_keys.sql).
    PERFORM incentives_internal.request_refuse((
        SELECT format('enrollments[%s].offer_key names no offer ("%s")', w.n - 1, w.v ->> 'offer_key')
          FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n)
         WHERE NOT EXISTS (SELECT FROM incentives.offers AS o
                            WHERE o.offer_key = w.v ->> 'offer_key' AND v_as_of IS NULL)
           AND NOT EXISTS (SELECT FROM incentives.offer_versions AS o
                            WHERE o.offer_key = w.v ->> 'offer_key' AND v_as_of IS NOT NULL
                              AND o.valid_from <= v_as_of
                              AND (o.valid_to IS NULL OR o.valid_to > v_as_of))
         ORDER BY w.n
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

CREATE OR REPLACE FUNCTION incentives_internal.request_unknown_fields(request jsonb)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    f record;
BEGIN
    FOR f IN
        SELECT u.field AS path, u.problem, 0 AS n
          FROM incentives_internal.unknown_fields(request, 'request') AS u
        UNION ALL
        SELECT format('enrollments[%s].%s', e.n - 1, u.field), u.problem, e.n
          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(request -> 'enrollments') = 'array'
                                         THEN request -> 'enrollments' ELSE '[]' END)
               WITH ORDINALITY AS e(v, n)
         CROSS JOIN LATERAL incentives_internal.unknown_fields(e.v, 'request enrollments[]') AS u
         ORDER BY n
    LOOP
        IF COALESCE(current_setting('incentives.unknown_offer_fields', true), 'error') = 'warning' THEN
            RAISE WARNING 'request: % %', f.path, f.problem;
        ELSE
            PERFORM incentives_internal.request_refuse(f.path || ' ' || f.problem);
        END IF;
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_unknown_fields(jsonb) IS
  'calculate() helper: a field of the request or of one of its enrollments that the request does not define is refused (22023, with the field meant), or a WARNING under incentives.unknown_offer_fields = ''warning''';

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
        -- without any property too: the stored data (a unit conversion
        -- factor stored before 0.4.0 out of the engine's range, say)
        BEGIN
            PERFORM count(*) FROM incentives_internal.calculate_request($1, '{}', $3, v_relation, $5, $6, $7);
        EXCEPTION WHEN data_exception THEN
            RETURN 'the stored data';
        END;
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
  'Part of incentives.calculate (call that, not this): after its calculation failed on the data, the path of the request''s part at fault: properties.KEY, transactions[i] (the last of the shortest failing run from the first), "the transactions" when they fail only with the stored ones, or "the stored data" when a calculation without the request''s properties and transactions fails too';

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

CREATE OR REPLACE FUNCTION incentives_internal.progress_needed(threshold_type text, value text)
RETURNS numeric
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- the volume at which the next tier is met, or still needed for it:
    -- dollars (the amount types) in cents, rounded up so that the amount
    -- shown does reach the tier (a growth tier's B x (1 + t / 100) has more
    -- places); units as they are; none for a property
    SELECT CASE WHEN $1 IN ('aggregated_amount', 'growth_amount')
                THEN round(ceil($2::numeric * 100) / 100, 2)
                ELSE incentives_internal.progress_volume($1, $2) END
$function$;
COMMENT ON FUNCTION incentives_internal.progress_needed(text, text) IS
  'tier_progress helper: the volume of the next tier or still needed to reach it, as shown: dollars (the amount types) in cents rounded up, quantities as they are, NULL for a property threshold';

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
       incentives_internal.progress_needed(p.threshold_type,
         CASE WHEN g.growth THEN d.diagnostics ->> 'next_volume' ELSE d.diagnostics ->> 'next_threshold' END),
       incentives_internal.progress_needed(p.threshold_type,
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

-- A coordinator's put_offer (incentives_cluster) checks the offer on one
-- shard, then writes it to every shard, with the coordinator's
-- incentives.unknown_offer_fields (NULL: the shard's own) for the length of
-- the call: offer_problem is everything a write would refuse (the
-- document, incentives.offer_error; the key, code/11_offer_keys.sql) as
-- {"sqlstate", "message", "hint"}, NULL when the write would pass.
CREATE OR REPLACE FUNCTION incentives_internal.offer_problem(document jsonb, unknown_offer_fields text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_saved   text := current_setting('incentives.unknown_offer_fields', true);
    v_message text;
    v_key     text := document ->> 'offer_key';
    v_rival   text;
BEGIN
    IF unknown_offer_fields IS NOT NULL THEN
        PERFORM set_config('incentives.unknown_offer_fields', unknown_offer_fields, true);
    END IF;
    v_message := incentives.offer_error(document);
    IF unknown_offer_fields IS NOT NULL THEN
        IF v_saved IS NULL THEN   -- not defined before the module loaded
            RESET incentives.unknown_offer_fields;
        ELSE
            PERFORM set_config('incentives.unknown_offer_fields', v_saved, true);
        END IF;
    END IF;
    IF v_message IS NOT NULL THEN
        RETURN jsonb_build_object('sqlstate', '22023', 'message', v_message);
    END IF;
    IF v_key IS NULL OR EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = v_key) THEN
        RETURN NULL;         -- a stored key is never refused
    END IF;
    v_message := incentives_internal.offer_key_problem(v_key);
    IF v_message IS NOT NULL THEN
        RETURN jsonb_build_object('sqlstate', '22023', 'message', v_message,
                                  'hint', 'An offer key has no surrounding white space and no control character.');
    END IF;
    v_rival := incentives_internal.offer_key_case_rival(v_key);
    IF v_rival IS NOT NULL THEN
        RETURN jsonb_build_object('sqlstate', '23505',
            'message', format('offer key "%s" differs only in letter case from the existing offer "%s"', v_key, v_rival),
            'hint', format('Update the offer "%s", or choose another key.', v_rival));
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION incentives_internal.offer_problem(jsonb, text) IS
  'What a write of the offer would refuse, as {"sqlstate", "message", "hint"} (NULL: nothing), under the given incentives.unknown_offer_fields (NULL: the current one). Through a coordinator: on any one shard, before put_offer';

CREATE OR REPLACE FUNCTION incentives_internal.put_offer_under(document jsonb, unknown_offer_fields text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_saved text := current_setting('incentives.unknown_offer_fields', true);
    v_new   boolean;
BEGIN
    IF unknown_offer_fields IS NOT NULL THEN
        PERFORM set_config('incentives.unknown_offer_fields', unknown_offer_fields, true);
    END IF;
    v_new := incentives_internal.put_offer(document);
    IF unknown_offer_fields IS NOT NULL THEN
        IF v_saved IS NULL THEN   -- not defined before the module loaded
            RESET incentives.unknown_offer_fields;
        ELSE
            PERFORM set_config('incentives.unknown_offer_fields', v_saved, true);
        END IF;
    END IF;
    RETURN v_new;
END
$$;
COMMENT ON FUNCTION incentives_internal.put_offer_under(jsonb, text) IS
  'put_offer under the given incentives.unknown_offer_fields (NULL: the current one), as a coordinator passes its own. Through a coordinator: on every shard';

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
    n     bigint;
    saved text := current_setting('check_function_bodies');
BEGIN
    n := incentives_internal.put_transactions(ARRAY(SELECT jsonb_array_elements(data -> 'transactions')));
    -- check_function_bodies off while the windows go in: they were stored
    -- on another shard, and one naming no offer (kept from before 0.4)
    -- moves as it is (code/11_offer_keys.sql)
    PERFORM set_config('check_function_bodies', 'off', true);
    INSERT INTO incentives.enrollments AS t (participant_key, offer_key, start_date, end_date)
    SELECT r.participant_key, r.offer_key, r.start_date, r.end_date
      FROM jsonb_populate_recordset(NULL::incentives.enrollments, data -> 'enrollments') AS r
    ON CONFLICT (participant_key, offer_key, start_date) DO UPDATE SET end_date = EXCLUDED.end_date;
    PERFORM set_config('check_function_bodies', saved, true);
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
            SELECT 'offer_versions', format('%s %s %s %s %s', v.offer_key, v.version, v.document, v.valid_to IS NULL, v.effective_from),
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
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS TABLE (statement_id bigint, lines bigint, amount_due numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_id bigint;
BEGIN
    v_id := incentives_internal.settle_work(settle_run.statement_date, settle_run.participant_key,
                                            settle_run.transactions);
    RETURN QUERY
        SELECT v_id, count(*), COALESCE(sum(l.amount_due), 0.00)
          FROM incentives.statement_lines AS l
         WHERE l.statement_id = v_id;
END
$$;
COMMENT ON FUNCTION incentives_internal.settle_run(date, text, regclass) IS
  'Settles in the caller''s transaction (incentives.settle''s work) and returns the statement: what a coordinator''s settle runs on each shard';

-- The accrual of a shard's own participants (docs/lifecycle.md, Accruals;
-- accruals and their numbers are per shard), in the caller's transaction
-- on the shard: what a coordinator's accrue runs on each shard.
CREATE OR REPLACE FUNCTION incentives_internal.accrue_run(
    as_of_date   date,
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS TABLE (accrual_id bigint, lines bigint, delta numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_id bigint;
BEGIN
    v_id := incentives_internal.accrue_work(accrue_run.as_of_date, accrue_run.transactions);
    RETURN QUERY
        SELECT v_id, count(*), COALESCE(sum(l.delta), 0.00)
          FROM incentives.accrual_lines AS l
         WHERE l.accrual_id = v_id;
END
$$;
COMMENT ON FUNCTION incentives_internal.accrue_run(date, regclass) IS
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

-- ---- src/sql/incentives/code/86_internal_privileges.sql

------------------------------------------------------------------------
-- The partitions of incentives.earnings (docs/security.md, Refresh
-- partitions): incentives_internal.earnings_default and the partition
-- each full refresh by the owner builds
-- (incentives_internal.earnings_run_<run_id>) are read only through
-- incentives.earnings, whose row-level security they do not carry.  So
-- nobody but their owner holds a privilege on them, whatever the default
-- privileges (ALTER DEFAULT PRIVILEGES ... GRANT SELECT ON TABLES) gave
-- at creation: the refresh revokes them from each new partition, and the
-- install and every update from the partitions that exist.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.earnings_partition_revoke(partition pg_catalog.regclass)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_grantee pg_catalog.oid;
BEGIN
    -- no ACL: the default, its owner's privileges alone (left as it is)
    IF (SELECT c.relacl FROM pg_catalog.pg_class AS c
         WHERE c.oid OPERATOR(pg_catalog.=) partition) IS NULL THEN
        RETURN;
    END IF;
    EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM PUBLIC', partition);
    FOR v_grantee IN
        SELECT DISTINCT a.grantee
          FROM pg_catalog.pg_class AS c,
               LATERAL pg_catalog.aclexplode(c.relacl) AS a
         WHERE c.oid OPERATOR(pg_catalog.=) partition
           AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
           AND a.grantee OPERATOR(pg_catalog.<>) 0::pg_catalog.oid
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM %I', partition,
                                  pg_catalog.pg_get_userbyid(v_grantee));
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.earnings_partition_revoke(pg_catalog.regclass) IS
  'Part of incentives.refresh_earnings: revokes every privilege but its owner''s on a partition of incentives.earnings, which is read only through incentives.earnings and its row-level security (docs/security.md)';

DO $partitions$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT t.relid AS rel
               FROM pg_catalog.pg_partition_tree('incentives.earnings'::pg_catalog.regclass) AS t
              WHERE t.level OPERATOR(pg_catalog.>) 0
              ORDER BY 1
    LOOP
        PERFORM incentives_internal.earnings_partition_revoke(p.rel);
    END LOOP;
END
$partitions$;

------------------------------------------------------------------------
-- Internal functions that read as the owner (docs/security.md, Internal
-- functions).  incentives_internal.participant_units() reads
-- incentives.participant_groups as its owner, past the row-level security
-- of the caller: every member and group key.  Only the refresh needs it,
-- so PUBLIC may not execute it; the roles that may refresh are granted it
-- (docs/security.md, step 2, grants every function of the schema to
-- incentives_admin).  An update grants it to every role that may already
-- run incentives.refresh_earnings, so what refreshed before still does.
------------------------------------------------------------------------
DO $owner_reads$
DECLARE
    f pg_catalog.regprocedure;
    r record;
BEGIN
    FOREACH f IN ARRAY ARRAY['incentives_internal.participant_units()']::pg_catalog.regprocedure[] LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        FOR r IN SELECT DISTINCT pg_catalog.pg_get_userbyid(a.grantee) AS grantee
                   FROM pg_catalog.pg_proc AS p,
                        LATERAL pg_catalog.aclexplode(p.proacl) AS a
                  WHERE p.oid OPERATOR(pg_catalog.=) 'incentives.refresh_earnings'::pg_catalog.regproc
                    AND a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE'
                    AND a.grantee OPERATOR(pg_catalog.<>) 0::pg_catalog.oid
                    AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
        LOOP
            EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %I', f, r.grantee);
        END LOOP;
    END LOOP;
END
$owner_reads$;

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

-- ---- src/sql/incentives/upgrade/0.3.0--0.4.0.finish.sql

-- incentives 0.3.0 -> 0.4.0, after the code parts: the update refuses
-- nothing it finds stored.  0.4.0 refuses on a write what 0.3.0 stored
-- without a word (docs/reference.md: offer keys, enrollments, unknown
-- fields, percent rates); what a database already holds stays as it is,
-- and each existing violation is reported here, one NOTICE each naming the
-- offer (or enrollment), the path and the code it has in
-- incentives.offer_warnings (and each stored unit conversion factor the
-- engine cannot calculate with):
--   unknown_field             a field the contract does not define
--   offer_key_format          an empty key, surrounding white space, a control character
--   offer_key_case            a key equal to another offer's but for letter case
--   enrollment_without_offer  an enrollment naming no stored offer
--   implausible_rate          a percent rate or tier value above 100
-- Unknown fields come from incentives.offer_warnings when this version has
-- it, else from incentives_internal.offer_findings(document) (looked up
-- by name: whichever the code parts above created).  On a fresh install
-- the tables are empty and nothing is reported.

-- PostgreSQL runs an extension script with client_min_messages raised to
-- warning (so that the script's own notices do not spam); the report
-- lowers it again for the length of its function, so the NOTICEs reach
-- the client that runs ALTER EXTENSION ... UPDATE.
CREATE FUNCTION pg_temp.update_report_stored()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET client_min_messages = notice
AS $function$
DECLARE
    r     record;
    n     bigint := 0;
    v_sql text;
BEGIN
    IF to_regclass('incentives.offer_warnings') IS NOT NULL THEN
        v_sql := $q$SELECT w.offer_key, w.path, w.code, w.message
                      FROM incentives.offer_warnings AS w WHERE w.code = 'unknown_field'$q$;
    ELSIF to_regprocedure('incentives_internal.offer_findings(jsonb)') IS NOT NULL THEN
        v_sql := $q$SELECT o.offer_key, f.path, f.code, f.message
                      FROM incentives.offers AS o
                     CROSS JOIN LATERAL incentives_internal.offer_findings(o.document) AS f
                     WHERE f.code = 'unknown_field'$q$;
    ELSE
        v_sql := $q$SELECT NULL::text, NULL::text, NULL::text, NULL::text WHERE false$q$;
    END IF;

    FOR r IN EXECUTE format($q$
        WITH RECURSIVE node (offer_key, path, v) AS (
            SELECT o.offer_key, ''::text, o.document FROM incentives.offers AS o
            UNION ALL
            SELECT n.offer_key,
                   CASE WHEN jsonb_typeof(n.v) = 'object'
                        THEN n.path || CASE WHEN n.path = '' THEN '' ELSE '.' END || c.key
                        ELSE n.path || '[' || (c.i - 1) || ']' END,
                   c.v
              FROM node AS n
             CROSS JOIN LATERAL (
                SELECT e.key, 0::bigint AS i, e.value AS v
                  FROM jsonb_each(CASE WHEN jsonb_typeof(n.v) = 'object' THEN n.v END) AS e
                UNION ALL
                SELECT NULL, e.i, e.v
                  FROM jsonb_array_elements(CASE WHEN jsonb_typeof(n.v) = 'array' THEN n.v END)
                       WITH ORDINALITY AS e(v, i)) AS c
             WHERE jsonb_typeof(n.v) IN ('object', 'array')),
        found (offer_key, path, code, message) AS (
            %s
            UNION ALL
            SELECT o.offer_key, 'offer_key', 'offer_key_format',
                   incentives_internal.offer_key_problem(o.offer_key)
              FROM incentives.offers AS o
             WHERE incentives_internal.offer_key_problem(o.offer_key) IS NOT NULL
            UNION ALL
            -- of keys equal but for case, each but the first stored (its
            -- first version's time, then byte order) names the first
            SELECT k.offer_key, 'offer_key', 'offer_key_case',
                   format('offer key "%%s" differs only in letter case from the offer "%%s"',
                          k.offer_key, k.first_key)
              FROM (SELECT o.offer_key,
                           first_value(o.offer_key) OVER w AS first_key,
                           row_number() OVER w AS n
                      FROM incentives.offers AS o
                      LEFT JOIN LATERAL (SELECT min(v.valid_from) AS since
                                           FROM incentives.offer_versions AS v
                                          WHERE v.offer_key = o.offer_key) AS s ON true
                    WINDOW w AS (PARTITION BY lower(o.offer_key)
                                 ORDER BY s.since NULLS LAST, o.offer_key COLLATE "C")) AS k
             WHERE k.n > 1
            UNION ALL
            SELECT e.offer_key, format('enrollments(participant "%%s", from %%s)', e.participant_key, e.start_date),
                   'enrollment_without_offer',
                   format('enrollment of participant "%%s" names no offer "%%s"', e.participant_key, e.offer_key)
              FROM incentives.enrollments AS e
             WHERE NOT EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = e.offer_key)
            UNION ALL
            SELECT n.offer_key, n.path || '.' || f.field, 'implausible_rate',
                   format('a percent %%s of %%s is above 100', f.field, n.v -> f.field)
              FROM node AS n
             CROSS JOIN LATERAL (VALUES ('rate'), ('value')) AS f(field)
             WHERE jsonb_typeof(n.v) = 'object' AND n.v ->> 'measure' = 'percent'
               AND jsonb_typeof(n.v -> f.field) = 'number' AND (n.v ->> f.field)::numeric > 100)
        SELECT * FROM found ORDER BY offer_key COLLATE "C", path COLLATE "C", code$q$, v_sql)
    LOOP
        RAISE NOTICE 'offer "%", %: % (%): stored before 0.4.0, kept as it is', r.offer_key, r.path, r.message, r.code;
        n := n + 1;
    END LOOP;
    IF n > 0 THEN
        RAISE NOTICE 'incentives 0.4.0: % of the stored offers and enrollments would be refused by a write now; they are kept as they are', n
              USING HINT = 'SELECT * FROM incentives.offer_warnings lists them; a write of the offer or enrollment that keeps the key is accepted.';
    END IF;

    -- a unit conversion factor the engine cannot calculate with (refused
    -- on a write, incentives_internal.uom_conversions_check): kept, and
    -- reported, since every calculation fails while it is there
    FOR r IN SELECT c.from_uom_key, c.to_uom_key, c.factor, incentives_internal.number_problem(c.factor) AS problem
               FROM incentives.uom_conversions AS c
              WHERE incentives_internal.number_problem(c.factor) IS NOT NULL
              ORDER BY c.from_uom_key COLLATE "C", c.to_uom_key COLLATE "C"
    LOOP
        RAISE NOTICE 'unit conversion "%" to "%": factor % %: stored before 0.4.0, kept as it is; every calculation fails until it is rounded',
                     r.from_uom_key, r.to_uom_key, r.factor, r.problem;
    END LOOP;
END
$function$;
SELECT pg_temp.update_report_stored();
DROP FUNCTION pg_temp.update_report_stored();

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
