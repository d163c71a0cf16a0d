-- update_begin.sql: the first part of every update script, of both
-- extensions (the Makefile; docs/architecture.md, Install and upgrade
-- scripts).  The build puts the extension's name in place of @extension@.
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
                                           WHERE e.extname OPERATOR(pg_catalog.=) '@extension@')
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
        RAISE EXCEPTION 'ALTER EXTENSION @extension@ UPDATE cannot replace objects that objects of yours depend on'
              USING ERRCODE = 'dependent_objects_still_exist',
                    DETAIL = v_list || '.',
                    HINT = 'Drop them, update, and create them again (views need not be dropped: the update creates them again); docs/backup-and-upgrade.md, Upgrade.';
    END IF;
END
$$;
