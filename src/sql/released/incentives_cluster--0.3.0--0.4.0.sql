-- incentives_cluster--0.3.0--0.4.0.sql: built by make from the parts of incentives_cluster 0.4.0 in src/sql/incentives_cluster/
-- (docs/architecture.md); released, it is kept as it is in src/sql/released/.
\echo Use "ALTER EXTENSION incentives_cluster UPDATE TO '0.4.0'" to load this file. \quit

-- ---- src/sql/update_begin.sql

-- update_begin.sql: the first part of every update script, of both
-- extensions (the Makefile; docs/architecture.md, Install and upgrade
-- scripts).  The build puts the extension's name in place of incentives_cluster.
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
                                           WHERE e.extname OPERATOR(pg_catalog.=) 'incentives_cluster')
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
        RAISE EXCEPTION 'ALTER EXTENSION incentives_cluster UPDATE cannot replace objects that objects of yours depend on'
              USING ERRCODE = 'dependent_objects_still_exist',
                    DETAIL = v_list || '.',
                    HINT = 'Drop them, update, and create them again (views need not be dropped: the update creates them again); docs/backup-and-upgrade.md, Upgrade.';
    END IF;
END
$$;

-- ---- src/sql/incentives_cluster/upgrade/0.3.0--0.4.0.sql

-- incentives_cluster 0.3.0 -> 0.4.0: what changes in schemas and types,
-- and the 0.3.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function and procedure of 0.4.0, created or replaced in place), then
-- src/sql/update_end.sql (the Makefile).  A result type the shards' type
-- gains a column (incentives.earning, incentives.tier_progress_row, ...)
-- gains it here too, with the same ALTER TYPE ... ADD ATTRIBUTE
-- (docs/architecture.md, Install and upgrade scripts).

-- settle and accrue take the relation of the transactions (a new last
-- argument, its name on the shards, as refresh_earnings): the procedures
-- are re-created with their privileges, their proxies too.
SELECT pg_temp.update_replace_function('incentives.settle(date, text)');
SELECT pg_temp.update_replace_function('incentives.accrue(date)');
SELECT pg_temp.update_replace_function('incentives_cluster.settle(date, text)');
SELECT pg_temp.update_replace_function('incentives_cluster.accrue(date)');
SELECT pg_temp.update_check();
DROP PROCEDURE incentives.settle(date, text);
DROP PROCEDURE incentives.accrue(date);
DROP FUNCTION incentives_cluster.settle(date, text);
DROP FUNCTION incentives_cluster.accrue(date);
-- incentives.delete_offer becomes PL/pgSQL (it asks every shard first):
-- replaced in place by its code part.

-- ---- src/sql/incentives_cluster/code/10_placement.sql

------------------------------------------------------------------------
-- Placement: which partition holds a participant
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.cluster_partitions()
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    SELECT count(*) INTO n
      FROM pg_foreign_server s
      JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw AND w.fdwname = 'plproxy',
           unnest(s.srvoptions) AS o
     WHERE s.srvname = 'incentives_cluster' AND o ~ '^p[0-9]+=';
    IF n = 0 THEN
        RAISE EXCEPTION 'PL/Proxy cluster "incentives_cluster" is not configured'
              USING ERRCODE = 'undefined_object',
                    HINT = 'CREATE SERVER incentives_cluster FOREIGN DATA WRAPPER plproxy OPTIONS (p0 ''dbname=... host=...'', p1 ''...''); see docs/scaling.md';
    END IF;
    RETURN n;
END
$$;
COMMENT ON FUNCTION incentives.cluster_partitions() IS
  'Number of partitions of the PL/Proxy cluster incentives_cluster (its p0, p1, ... server options; a power of 2)';

CREATE OR REPLACE FUNCTION incentives.placement_key(participant_key text)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE((SELECT p.placement_key FROM incentives_cluster.placements AS p
                      WHERE p.participant_key = $1), $1)
$$;
COMMENT ON FUNCTION incentives.placement_key(text) IS
  'The key a participant''s partition is the hash of: the first key of its group''s calculation unit (docs/scaling.md, Participant groups), else the participant itself';

CREATE OR REPLACE FUNCTION incentives.placement_hash(participant_key text)
RETURNS integer
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT hashtext(incentives.placement_key($1))
$$;
COMMENT ON FUNCTION incentives.placement_hash(text) IS
  'RUN ON target of a participant''s data and calculations: hashtext(placement_key(participant_key))';

CREATE OR REPLACE FUNCTION incentives.partition_of(participant_key text)
RETURNS integer
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives.placement_hash($1) & (incentives.cluster_partitions() - 1)
$$;
COMMENT ON FUNCTION incentives.partition_of(text) IS
  'The partition that holds a participant''s transactions: hashtext(placement_key(participant_key)) & (partitions - 1), PL/Proxy''s mapping of RUN ON placement_hash(participant_key) (the participant''s own key when it is in no group); for bulk loaders';

CREATE OR REPLACE FUNCTION incentives.partitions_for(participant_key text)
RETURNS SETOF integer
LANGUAGE sql STABLE
ROWS 1
AS $$
    SELECT incentives.placement_hash($1) WHERE $1 IS NOT NULL
    UNION ALL
    SELECT pg_catalog.generate_series(0, incentives.cluster_partitions() OPERATOR(pg_catalog.-) 1) WHERE $1 IS NULL
$$;
COMMENT ON FUNCTION incentives.partitions_for(text) IS
  'RUN ON target of the calculations: the participant''s placement hash when one is given (its partition), else every partition number (all of them)';

-- ---- src/sql/incentives_cluster/code/20_calculations.sql

------------------------------------------------------------------------
-- The calculations: one participant on its partition, everyone on all
-- partitions (rows merged; any failing partition fails the call)
--
-- Each is a PL/Proxy function with a single node's name, arguments and
-- result, but for transactions: the name of a relation (text), resolved on
-- each shard.  Without a TARGET, PL/Proxy calls the function of the same
-- name and arguments on the shard.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.incentive_calculate(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    offer_keys      text[]      DEFAULT NULL,
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.earning
LANGUAGE plproxy
ROWS 1000
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.incentive_calculate(text, jsonb, text[], text, timestamptz, date) IS
  'Earnings computed on the shards: one participant on its partition, all participants (NULL) on every partition; transactions names a relation on the shards; as_of reads each shard''s offer history, through_date limits the transactions';

CREATE OR REPLACE FUNCTION incentives.incentive_diagnostics(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    offer_keys      text[]      DEFAULT NULL,
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.diagnostics_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], text, timestamptz, date) IS
  'Diagnostics computed on the shards: one participant on its partition, all participants (NULL) on every partition';

CREATE OR REPLACE FUNCTION incentives.tier_progress(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.tier_progress_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.tier_progress(text, jsonb, text, timestamptz, date) IS
  'Tier progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

CREATE OR REPLACE FUNCTION incentives.requirement_progress(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.requirement_progress_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.requirement_progress(text, jsonb, text, timestamptz, date) IS
  'Requirement progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

CREATE OR REPLACE FUNCTION incentives.stack_progress(
    participant_key text        DEFAULT NULL,
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.stack_progress_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.stack_progress(text, text, timestamptz, date) IS
  'Stack progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

CREATE OR REPLACE FUNCTION incentives.forecast(
    as_of_date      date,
    participant_key text   DEFAULT NULL,
    offer_keys      text[] DEFAULT NULL,
    transactions    text   DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.forecast_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.forecast(date, text, text[], text) IS
  'The forecast computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

-- One participant, always: a NULL participant_key goes to one partition,
-- which raises the function's own error.
CREATE OR REPLACE FUNCTION incentives.incentive_explain(
    participant_key text,
    offer_key       text,
    properties      jsonb       DEFAULT '{}',
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.placement_hash(coalesce(participant_key, ''));
$$;
COMMENT ON FUNCTION incentives.incentive_explain(text, text, jsonb, text, timestamptz, date) IS
  'incentive_explain on the participant''s partition';

CREATE OR REPLACE FUNCTION incentives.request_hash(request jsonb)
RETURNS integer
LANGUAGE sql VOLATILE
AS $$
    SELECT coalesce(incentives.placement_hash($1 OPERATOR(pg_catalog.->>) 'participant_key'),
                    (pg_catalog.random() OPERATOR(pg_catalog.*) 2147483647)::integer)
$$;
COMMENT ON FUNCTION incentives.request_hash(jsonb) IS
  'RUN ON target of calculate(): the request''s participant''s partition (its stored transactions and properties), any partition when it names none';

CREATE OR REPLACE FUNCTION incentives.calculate(request jsonb)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.request_hash(request);
$$;
COMMENT ON FUNCTION incentives.calculate(jsonb) IS
  'The JSON what-if entry point, on the partition of the request''s participant_key (any partition without one)';

-- The procedures of a single node that write on the shards: each is a
-- procedure of the same name and arguments that calls
-- incentives_internal.<name>_run on the participant's partition, or on
-- every partition (NULL), through the proxy incentives_cluster.<name>
-- (which passes every argument: it has no defaults), and reports each
-- shard's row as a NOTICE.
--
--   refresh_earnings: each shard materializes its own participants'
--     earnings (incentives.earnings lives on the shards).  One transaction
--     per shard: when a shard fails the call fails, that shard keeps its
--     previous earnings, and the others keep their new ones -- call it
--     again.
--   settle: each shard writes the statement of its own participants (one
--     transaction per shard, serialized there against other settles).
--     When one shard fails the call fails and that shard has no statement;
--     the others keep theirs: call it again with the same date (a shard
--     that has one settles nothing new on the same date).
--   accrue: each shard books the accrual of its own participants, as
--     settle writes statements (an accrual on the same date again books
--     nothing new).

CREATE OR REPLACE FUNCTION incentives_cluster.refresh_earnings(
    participant_key text,
    transactions    text,
    progress_every  integer,
    on_error        text,
    changed_only    boolean)
RETURNS TABLE (run_id bigint, participants integer, rows bigint, total_incentive numeric, status text, exceptions integer)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
    TARGET incentives_internal.refresh_earnings_run;
$$;
COMMENT ON FUNCTION incentives_cluster.refresh_earnings(text, text, integer, text, boolean) IS
  'incentives.refresh_earnings_run on the participant''s partition, or on every partition (NULL)';

CREATE OR REPLACE PROCEDURE incentives.refresh_earnings(
    participant_key text    DEFAULT NULL,
    transactions    text    DEFAULT 'incentives.transactions',
    progress_every  integer DEFAULT 1000,
    on_error        text    DEFAULT 'raise',
    changed_only    boolean DEFAULT false)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM incentives_cluster.refresh_earnings(participant_key, transactions, progress_every, on_error, changed_only) LOOP
        RAISE NOTICE 'refresh_earnings: shard run % %: % participants, % rows, total %, % exceptions',
              r.run_id, r.status, r.participants, r.rows, r.total_incentive, r.exceptions;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE incentives.refresh_earnings(text, text, integer, text, boolean) IS
  'Refreshes incentives.earnings on the shards: the participant''s partition, or every partition in parallel (NULL); each shard atomically; on_error and changed_only as on a single node';

CREATE OR REPLACE FUNCTION incentives_cluster.settle(
    statement_date  date,
    participant_key text,
    transactions    text)
RETURNS TABLE (statement_id bigint, lines bigint, amount_due numeric)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
    TARGET incentives_internal.settle_run;
$$;
COMMENT ON FUNCTION incentives_cluster.settle(date, text, text) IS
  'incentives.settle_run on the participant''s partition, or on every partition (NULL)';

CREATE OR REPLACE PROCEDURE incentives.settle(
    statement_date  date,
    participant_key text DEFAULT NULL,
    transactions    text DEFAULT 'incentives.transactions')
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM incentives_cluster.settle(statement_date, participant_key, transactions) LOOP
        RAISE NOTICE 'settle: shard statement %: % lines, % due', r.statement_id, r.lines, r.amount_due;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE incentives.settle(date, text, text) IS
  'Settles on the shards from the transactions relation (its name on the shards): the participant''s partition, or every partition (NULL); each shard writes its own statement atomically and refuses a date after today';

CREATE OR REPLACE FUNCTION incentives_cluster.accrue(as_of_date date, transactions text)
RETURNS TABLE (accrual_id bigint, lines bigint, delta numeric)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.accrue_run;
$$;
COMMENT ON FUNCTION incentives_cluster.accrue(date, text) IS
  'incentives.accrue_run on every partition';

CREATE OR REPLACE PROCEDURE incentives.accrue(
    as_of_date   date,
    transactions text DEFAULT 'incentives.transactions')
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM incentives_cluster.accrue(as_of_date, transactions) LOOP
        RAISE NOTICE 'accrue: shard accrual %: % lines, % booked', r.accrual_id, r.lines, r.delta;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE incentives.accrue(date, text) IS
  'Books the accrual on the shards from the transactions relation (its name on the shards): every partition, each shard its own participants'' accrual atomically; refuses a date after today';

-- ---- src/sql/incentives_cluster/code/30_reference_data.sql

------------------------------------------------------------------------
-- Reference data: the same change on every partition
------------------------------------------------------------------------

-- What the shards answered: true when any shard answered true (put: the
-- row was new; delete: it existed); a warning when they disagreed, which
-- means the shards had diverged before this change (the change itself has
-- now been applied everywhere).
CREATE OR REPLACE FUNCTION incentives_cluster.agreed(answers boolean[], change text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF coalesce(cardinality(answers), 0) = 0 THEN
        RAISE EXCEPTION 'no partition of incentives_cluster answered %', change;
    END IF;
    IF true = ANY (answers) AND false = ANY (answers) THEN
        RAISE WARNING '%: the partitions disagreed (% of % had the row); they had diverged and now agree',
              change, (SELECT count(*) FROM unnest(answers) a WHERE NOT a), cardinality(answers)
              USING HINT = 'SELECT * FROM incentives.cluster_check() compares the partitions.';
    END IF;
    RETURN true = ANY (answers);
END
$$;
COMMENT ON FUNCTION incentives_cluster.agreed(boolean[], text) IS
  'Combines the partitions'' answers to a reference-data change; warns when they disagreed';

CREATE OR REPLACE FUNCTION incentives_cluster.offer_error(document jsonb)
RETURNS text
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ANY;
    TARGET incentives.offer_error;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_error(jsonb) IS
  'incentives.offer_error on any one partition: validates an offer before it is sent to all of them';

-- A change of reference data goes to every partition: for each,
-- incentives_cluster.<change> calls incentives_internal.<change> on all
-- of them (the proxy passes every argument: it has no defaults), and
-- incentives.<change> combines their answers (incentives_cluster.agreed),
-- naming the row by its key in a warning when they disagreed.
-- (incentives.put_offer, below, validates the offer first.)

CREATE OR REPLACE FUNCTION incentives_cluster.put_offer(document jsonb)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.put_offer(jsonb) IS
  'incentives.put_offer on every partition';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_offer(offer_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_offer(text) IS
  'incentives.delete_offer on every partition';

-- An offer with settled money on any shard is removed by none
-- (docs/lifecycle.md, Removing a settled offer): delete_offer asks every
-- shard first (each shard's own end-of-transaction check refuses it too,
-- but only for itself); remove_settled_offer removes it on purpose on
-- every shard, each logging it.
CREATE OR REPLACE FUNCTION incentives_cluster.offer_settled(offer_key text)
RETURNS TABLE (settled_total numeric, participants integer, last_statement_date date)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.offer_settled;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_settled(text) IS
  'incentives_internal.offer_settled on every partition: each shard''s settled money for the offer';

CREATE OR REPLACE FUNCTION incentives_cluster.offer_removal_refuse(offer_key text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v record;
BEGIN
    SELECT COALESCE(sum(s.settled_total), 0.00) AS settled_total, COALESCE(sum(s.participants), 0) AS participants,
           max(s.last_statement_date) AS last_statement_date
      INTO v FROM incentives_cluster.offer_settled(offer_removal_refuse.offer_key) AS s;
    IF v.participants > 0 THEN
        RAISE EXCEPTION 'offer "%" cannot be removed (DELETE): % settled for it, the latest statement %',
                        offer_removal_refuse.offer_key, v.settled_total, v.last_statement_date
              USING ERRCODE = 'object_not_in_prerequisite_state',
                    DETAIL = format('Participants with a settled balance for it, on all shards: %s. The next statement would claw it all back. No shard removed it.', v.participants),
                    HINT = format('To stop it paying from a date, change its rates to zero from that date (a prospective change). To remove it on purpose and claw its payments back: SELECT incentives.remove_settled_offer(%L, reason).',
                                  offer_removal_refuse.offer_key);
    END IF;
END
$$;
COMMENT ON FUNCTION incentives_cluster.offer_removal_refuse(text) IS
  'Raises 55000 when any shard has settled money for the offer: the total over the shards and the latest statement';

CREATE OR REPLACE FUNCTION incentives.delete_offer(offer_key text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM incentives_cluster.offer_removal_refuse(delete_offer.offer_key);
    RETURN incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_offer(delete_offer.offer_key)),
                                     format('delete_offer(%s)', delete_offer.offer_key));
END
$$;
COMMENT ON FUNCTION incentives.delete_offer(text) IS
  'Deletes an offer on every partition; true when it existed; refused (55000) before any partition deletes it when one has settled money for it; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.remove_settled_offer(offer_key text, reason text)
RETURNS SETOF bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.remove_settled_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.remove_settled_offer(text, text) IS
  'incentives.remove_settled_offer on every partition';

CREATE OR REPLACE FUNCTION incentives.remove_settled_offer(offer_key text, reason text)
RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*)::integer FROM incentives_cluster.remove_settled_offer($1, $2)
$$;
COMMENT ON FUNCTION incentives.remove_settled_offer(text, text) IS
  'Removes an offer on purpose on every partition, settled money and all (each shard logs it in incentives.offer_removals; its next statement claws it back); returns the number of partitions';

CREATE OR REPLACE FUNCTION incentives_cluster.put_sku(sku_key text, uom_key text, label text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_sku;
$$;
COMMENT ON FUNCTION incentives_cluster.put_sku(text, text, text) IS
  'incentives.put_sku on every partition';

CREATE OR REPLACE FUNCTION incentives.put_sku(sku_key text, uom_key text, label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_sku($1, $2, $3)),
                                     format('put_sku(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.put_sku(text, text, text) IS
  'Inserts or replaces a SKU on every partition; true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_sku(sku_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_sku;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_sku(text) IS
  'incentives.delete_sku on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_sku(sku_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_sku($1)),
                                     format('delete_sku(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.delete_sku(text) IS
  'Deletes a SKU on every partition; true when it existed; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_uom_conversion;
$$;
COMMENT ON FUNCTION incentives_cluster.put_uom_conversion(text, text, numeric) IS
  'incentives.put_uom_conversion on every partition';

CREATE OR REPLACE FUNCTION incentives.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_uom_conversion($1, $2, $3)),
                                     format('put_uom_conversion(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.put_uom_conversion(text, text, numeric) IS
  'Inserts or replaces a unit conversion on every partition; true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_uom_conversion;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_uom_conversion(text, text) IS
  'incentives.delete_uom_conversion on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_uom_conversion($1, $2)),
                                     format('delete_uom_conversion(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.delete_uom_conversion(text, text) IS
  'Deletes a unit conversion on every partition; true when it existed; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_participant_property;
$$;
COMMENT ON FUNCTION incentives_cluster.put_participant_property(text, text, numeric) IS
  'incentives.put_participant_property on every partition';

CREATE OR REPLACE FUNCTION incentives.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_participant_property($1, $2, $3)),
                                     format('put_participant_property(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.put_participant_property(text, text, numeric) IS
  'Inserts or replaces a stored participant property on every partition; true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_participant_property(participant_key text, property_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_participant_property;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_participant_property(text, text) IS
  'incentives.delete_participant_property on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_participant_property(participant_key text, property_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_participant_property($1, $2)),
                                     format('delete_participant_property(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.delete_participant_property(text, text) IS
  'Deletes a stored participant property on every partition; true when it existed; fails if any partition fails';


CREATE OR REPLACE FUNCTION incentives.put_offer(document jsonb)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- the coordinator's setting applies on the shards (NULL: theirs)
    fields  text := current_setting('incentives.unknown_offer_fields', true);
    problem jsonb;
BEGIN
    -- An offer a shard's write would refuse (its document, its key) is
    -- refused before any partition stores anything, with the shard's
    -- SQLSTATE (code/35_offer_checks.sql).
    problem := incentives_cluster.offer_problem(document, NULLIF(fields, ''));
    IF problem ? 'hint' THEN
        RAISE EXCEPTION '%', problem ->> 'message'
              USING ERRCODE = problem ->> 'sqlstate', HINT = problem ->> 'hint';
    ELSIF problem IS NOT NULL THEN
        RAISE EXCEPTION '%', problem ->> 'message' USING ERRCODE = problem ->> 'sqlstate';
    END IF;
    RETURN incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_offer_under(document, NULLIF(fields, ''))),
                                     format('put_offer(%s)', document ->> 'offer_key'));
END
$$;
COMMENT ON FUNCTION incentives.put_offer(jsonb) IS
  'Checks an offer on one partition (its document under the coordinator''s incentives.unknown_offer_fields, its key), then inserts or replaces it on every partition; true when it is new; fails if any partition fails';

-- ---- src/sql/incentives_cluster/code/35_offer_checks.sql

------------------------------------------------------------------------
-- Offer checks through the coordinator (docs/scaling.md): the same
-- strictness as a single node, and the same warnings, over the shards
--
-- put_offer (code/30_reference_data.sql) asks one shard what a write would
-- refuse (incentives_internal.offer_problem: the document under the
-- coordinator's incentives.unknown_offer_fields, the key: malformed, or
-- equal to another's but for case), then writes every shard with that
-- setting.  Enrollments go to their participant's shard, which refuses one
-- naming no offer (the offers are on every shard).
--
-- The warnings are each shard's, merged (each shard holds every offer and
-- its own participants' transactions and enrollments):
--   offer_warnings: a warning about what the data lacks (unknown_sku,
--     unknown_transaction_type, empty_period, unknown_unit, no_enrollments,
--     no_groups) holds only if every shard reports it, and so does one
--     about the document alone (every shard reports it anyway): the
--     intersection, on (offer_key, path, code), the message of the first
--     partition.  A warning about what a shard holds (enrollment_without_offer,
--     sku_without_unit) is reported by any shard: the union.  Edge cases:
--     sku_without_unit is missed when each shard sees its SKU in one unit but
--     the shards in different units; empty_period ("transactions dated after
--     its end exist") is missed when only some shards have such later
--     transactions and those have none in the period.
--   program_skus: the counts of transactions summed over the shards.
--   transaction_warnings: the union (a transaction is on one shard).
-- transactions names a relation on the shards (text), as for
-- incentive_calculate.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_cluster.offer_problem(document jsonb, unknown_offer_fields text)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ANY;
    TARGET incentives_internal.offer_problem;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_problem(jsonb, text) IS
  'incentives_internal.offer_problem on any one partition: what a write of the offer would refuse, before it is sent to all of them';

CREATE OR REPLACE FUNCTION incentives_cluster.put_offer_under(document jsonb, unknown_offer_fields text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_offer_under;
$$;
COMMENT ON FUNCTION incentives_cluster.put_offer_under(jsonb, text) IS
  'incentives.put_offer on every partition, under the coordinator''s incentives.unknown_offer_fields';

CREATE OR REPLACE FUNCTION incentives_cluster.offer_warnings(partition integer, transactions text)
RETURNS TABLE (offer_key text, path text, code text, message text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition;
    SELECT w.offer_key, w.path, w.code, w.message FROM incentives.offer_warnings(transactions::regclass) AS w;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_warnings(integer, text) IS
  'incentives.offer_warnings on one partition';

CREATE OR REPLACE FUNCTION incentives.offer_warnings(transactions text DEFAULT 'incentives.transactions')
RETURNS TABLE (offer_key text, path text, code text, message text)
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    WITH w AS (
        SELECT p.p, w.*
          FROM generate_series(0, incentives.cluster_partitions() - 1) AS p(p)
         CROSS JOIN LATERAL incentives_cluster.offer_warnings(p.p, $1) AS w)
    SELECT w.offer_key, w.path, w.code, (array_agg(w.message ORDER BY w.p))[1]
      FROM w
     GROUP BY w.offer_key, w.path, w.code
    HAVING w.code IN ('enrollment_without_offer', 'sku_without_unit')
        OR count(DISTINCT w.p) = incentives.cluster_partitions()
     ORDER BY w.offer_key COLLATE "C", w.path COLLATE "C", w.code COLLATE "C"
$$;
COMMENT ON FUNCTION incentives.offer_warnings(text) IS
  'The offers'' warnings over the shards: what every shard reports, and what any shard reports about what it holds (enrollment_without_offer, sku_without_unit); transactions names a relation on the shards';

CREATE OR REPLACE VIEW incentives.offer_warnings WITH (security_invoker = true) AS
    SELECT w.offer_key, w.path, w.code, w.message FROM incentives.offer_warnings() AS w;
COMMENT ON VIEW incentives.offer_warnings IS
  'incentives.offer_warnings() over incentives.transactions of the shards';

CREATE OR REPLACE FUNCTION incentives_cluster.program_skus(partition integer)
RETURNS TABLE (offer_key text, sku_key text, role text, transactions bigint)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition;
    SELECT s.offer_key, s.sku_key, s.role, s.transactions FROM incentives.program_skus AS s;
$$;
COMMENT ON FUNCTION incentives_cluster.program_skus(integer) IS
  'incentives.program_skus of one partition';

CREATE OR REPLACE VIEW incentives.program_skus WITH (security_invoker = true) AS
    SELECT s.offer_key, s.sku_key, s.role, sum(s.transactions)::bigint AS transactions
      FROM generate_series(0, incentives.cluster_partitions() - 1) AS p(p)
     CROSS JOIN LATERAL incentives_cluster.program_skus(p.p) AS s
     GROUP BY s.offer_key, s.sku_key, s.role;
COMMENT ON VIEW incentives.program_skus IS
  'Every SKU each offer reads, its role, and how many transactions of all the shards match it';

CREATE OR REPLACE FUNCTION incentives_cluster.transaction_warnings(transactions text)
RETURNS TABLE (participant_key text, transaction_id text, code text, message text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    SELECT w.participant_key, w.transaction_id, w.code, w.message
      FROM incentives.transaction_warnings(transactions::regclass) AS w;
$$;
COMMENT ON FUNCTION incentives_cluster.transaction_warnings(text) IS
  'incentives.transaction_warnings on every partition';

CREATE OR REPLACE FUNCTION incentives.transaction_warnings(transactions text DEFAULT 'incentives.transactions')
RETURNS TABLE (participant_key text, transaction_id text, code text, message text)
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT w.participant_key, w.transaction_id, w.code, w.message
      FROM incentives_cluster.transaction_warnings($1) AS w
     ORDER BY w.participant_key COLLATE "C", w.transaction_id COLLATE "C", w.code COLLATE "C"
$$;
COMMENT ON FUNCTION incentives.transaction_warnings(text) IS
  'Every stored transaction of the shards a calculation would refuse (the union of the shards''); transactions names a relation on the shards';

CREATE OR REPLACE VIEW incentives.transaction_warnings WITH (security_invoker = true) AS
    SELECT w.participant_key, w.transaction_id, w.code, w.message FROM incentives.transaction_warnings() AS w;
COMMENT ON VIEW incentives.transaction_warnings IS
  'incentives.transaction_warnings() over incentives.transactions of the shards';

-- ---- src/sql/incentives_cluster/code/40_transactions.sql

------------------------------------------------------------------------
-- Transactions and enrollments: each on the partition of its participant
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.put_transaction(
    transaction_id   text,
    participant_key  text,
    transaction_type text,
    transaction_date date,
    sku_key          text,
    quantity         numeric,
    uom_key          text,
    amount           numeric)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.placement_hash(participant_key);
    TARGET incentives_internal.put_transaction;
$$;
COMMENT ON FUNCTION incentives.put_transaction(text, text, text, date, text, numeric, text, numeric) IS
  'Inserts or replaces one transaction on the partition of its participant; true when it is new';

CREATE OR REPLACE FUNCTION incentives.delete_transaction(participant_key text, transaction_id text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.placement_hash(participant_key);
    TARGET incentives_internal.delete_transaction;
$$;
COMMENT ON FUNCTION incentives.delete_transaction(text, text) IS
  'Deletes one transaction of a participant on the participant''s partition; true when it existed';

-- Enrollment windows (docs/reference.md, Enrollment) are participant data:
-- on the partition of the participant, next to its transactions.
CREATE OR REPLACE FUNCTION incentives.put_enrollment(participant_key text, offer_key text, start_date date, end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.placement_hash(participant_key);
    TARGET incentives_internal.put_enrollment;
$$;
COMMENT ON FUNCTION incentives.put_enrollment(text, text, date, date) IS
  'Inserts an enrollment window on the partition of its participant, or replaces the end_date of the one starting that day; true when it is new; an overlapping window is refused (23P01)';

CREATE OR REPLACE FUNCTION incentives.delete_enrollment(participant_key text, offer_key text, start_date date)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.placement_hash(participant_key);
    TARGET incentives_internal.delete_enrollment;
$$;
COMMENT ON FUNCTION incentives.delete_enrollment(text, text, date) IS
  'Deletes the enrollment window of a participant in an offer starting that day, on the participant''s partition; true when it existed';

CREATE OR REPLACE FUNCTION incentives_cluster.put_transactions(transactions jsonb[])
RETURNS SETOF bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    SPLIT transactions;
    RUN ON incentives.placement_hash(transactions ->> 'participant_key');
    TARGET incentives_internal.put_transactions;
$$;
COMMENT ON FUNCTION incentives_cluster.put_transactions(jsonb[]) IS
  'incentives.put_transactions with the array split by partition (each element to the partition of its participant_key)';

CREATE OR REPLACE FUNCTION incentives.put_transactions(transactions jsonb[])
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bad jsonb;
BEGIN
    IF coalesce(cardinality(transactions), 0) = 0 THEN
        RETURN 0;
    END IF;
    SELECT t INTO bad FROM unnest(transactions) AS t
     WHERE jsonb_typeof(t) IS DISTINCT FROM 'object' OR t ->> 'participant_key' IS NULL
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'a transaction must be a JSON object with a participant_key: %', bad
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN (SELECT sum(n) FROM incentives_cluster.put_transactions(transactions) AS n);
END
$$;
COMMENT ON FUNCTION incentives.put_transactions(jsonb[]) IS
  'Inserts or replaces transactions (JSON objects with the transaction columns), each on the partition of its participant; returns how many; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives.load_transactions(transactions jsonb)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives.put_transactions(ARRAY(SELECT jsonb_array_elements($1)))
$$;
COMMENT ON FUNCTION incentives.load_transactions(jsonb) IS
  'Inserts or replaces a JSON array of transactions, each on the partition of its participant; returns how many';

-- ---- src/sql/incentives_cluster/code/45_groups.sql

------------------------------------------------------------------------
-- Participant groups (docs/scaling.md, Participant groups): memberships
-- are reference data, the same on every partition; a group and all its
-- members live on one partition, that of hashtext(placement_key), the
-- first key of their calculation unit.  A change of memberships that
-- changes a participant's placement moves its transactions and enrollment
-- windows to its new partition.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_cluster.put_participant_group(participant_key text, group_key text,
                                                                    start_date date, end_date date)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_participant_group;
$$;
COMMENT ON FUNCTION incentives_cluster.put_participant_group(text, text, date, date) IS
  'incentives.put_participant_group on every partition';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_participant_group(participant_key text, start_date date)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_participant_group;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_participant_group(text, date) IS
  'incentives.delete_participant_group on every partition';

CREATE OR REPLACE FUNCTION incentives_cluster.participant_units()
RETURNS TABLE (participant_key text, unit_key text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ANY;
    TARGET incentives_internal.participant_units;
$$;
COMMENT ON FUNCTION incentives_cluster.participant_units() IS
  'incentives_internal.participant_units on any partition (memberships are the same everywhere)';

CREATE OR REPLACE FUNCTION incentives_cluster.participant_data(partition_hash integer, participant_key text)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition_hash;
    TARGET incentives_internal.participant_data;
$$;
COMMENT ON FUNCTION incentives_cluster.participant_data(integer, text) IS
  'incentives_internal.participant_data on the partition of partition_hash';

CREATE OR REPLACE FUNCTION incentives_cluster.store_participant_data(partition_hash integer, data jsonb)
RETURNS bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition_hash;
    TARGET incentives_internal.store_participant_data;
$$;
COMMENT ON FUNCTION incentives_cluster.store_participant_data(integer, jsonb) IS
  'incentives_internal.store_participant_data on the partition of partition_hash';

CREATE OR REPLACE FUNCTION incentives_cluster.drop_participant_data(partition_hash integer, participant_key text)
RETURNS bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition_hash;
    TARGET incentives_internal.drop_participant_data;
$$;
COMMENT ON FUNCTION incentives_cluster.drop_participant_data(integer, text) IS
  'incentives_internal.drop_participant_data on the partition of partition_hash';

-- incentives_cluster.replace_participants(): the placements of every key of
-- the memberships, as the partitions compute them now, into
-- incentives_cluster.placements; then each participant whose partition
-- changed (or that was placed by its own key and is now in a group, or
-- the reverse) has its transactions and enrollment windows copied to its
-- new partition and then dropped from its old one (copy first: a failure
-- in between leaves them on both, which cluster_check reports and the
-- next call repairs).  Returns how many participants moved.
CREATE OR REPLACE FUNCTION incentives_cluster.replace_participants()
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n     integer := incentives.cluster_partitions();
    old   jsonb := (SELECT COALESCE(jsonb_object_agg(p.participant_key, p.placement_key), '{}')
                      FROM incentives_cluster.placements AS p);
    m     record;
    moved integer := 0;
BEGIN
    DELETE FROM incentives_cluster.placements;
    INSERT INTO incentives_cluster.placements (participant_key, placement_key)
    SELECT u.participant_key, u.unit_key FROM incentives_cluster.participant_units() AS u;
    FOR m IN
        SELECT k.participant_key,
               hashtext(COALESCE(old ->> k.participant_key, k.participant_key)) AS old_hash,
               hashtext(COALESCE(p.placement_key, k.participant_key)) AS new_hash
          FROM (SELECT jsonb_object_keys(old) AS participant_key
                UNION
                SELECT p.participant_key FROM incentives_cluster.placements AS p) AS k
          LEFT JOIN incentives_cluster.placements AS p USING (participant_key)
         ORDER BY k.participant_key
    LOOP
        CONTINUE WHEN (m.old_hash & (n - 1)) = (m.new_hash & (n - 1));
        PERFORM incentives_cluster.store_participant_data(
                    m.new_hash, incentives_cluster.participant_data(m.old_hash, m.participant_key));
        PERFORM incentives_cluster.drop_participant_data(m.old_hash, m.participant_key);
        moved := moved + 1;
    END LOOP;
    RETURN moved;
END
$$;
COMMENT ON FUNCTION incentives_cluster.replace_participants() IS
  'Recomputes incentives_cluster.placements from the memberships and moves the transactions and enrollment windows of every participant whose partition changed; returns how many moved';

CREATE OR REPLACE FUNCTION incentives.put_participant_group(participant_key text, group_key text,
                                                            start_date date, end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_row boolean;
    moved   integer;
BEGIN
    new_row := incentives_cluster.agreed(
        ARRAY(SELECT incentives_cluster.put_participant_group($1, $2, $3, $4)),
        format('put_participant_group(%L, %L, %L)', $1, $2, $3));
    moved := incentives_cluster.replace_participants();
    IF moved > 0 THEN
        RAISE NOTICE 'put_participant_group: % participant(s) moved to the partition of their group', moved;
    END IF;
    RETURN new_row;
END
$$;
COMMENT ON FUNCTION incentives.put_participant_group(text, text, date, date) IS
  'Inserts a membership window on every partition, or replaces the group and end_date of the one starting that day (overlaps and groups of groups are refused there); true when it is new; then moves the data of every participant whose placement changed to the partition of its group';

CREATE OR REPLACE FUNCTION incentives.delete_participant_group(participant_key text, start_date date)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    existed boolean;
    moved   integer;
BEGIN
    existed := incentives_cluster.agreed(
        ARRAY(SELECT incentives_cluster.delete_participant_group($1, $2)),
        format('delete_participant_group(%L, %L)', $1, $2));
    moved := incentives_cluster.replace_participants();
    IF moved > 0 THEN
        RAISE NOTICE 'delete_participant_group: % participant(s) moved to the partition of their group', moved;
    END IF;
    RETURN existed;
END
$$;
COMMENT ON FUNCTION incentives.delete_participant_group(text, date) IS
  'Deletes a membership window on every partition; true when it existed; then moves the data of every participant whose placement changed';

-- ---- src/sql/incentives_cluster/code/50_checks.sql

------------------------------------------------------------------------
-- Checks
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_cluster.shard_summary(partitions integer, partition integer)
RETURNS TABLE (object text, row_count bigint, digest text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition;
    TARGET incentives_internal.shard_summary;
$$;
COMMENT ON FUNCTION incentives_cluster.shard_summary(integer, integer) IS
  'incentives.shard_summary on one partition';

CREATE OR REPLACE FUNCTION incentives.cluster_check()
RETURNS SETOF incentives_cluster.shard_row
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n        integer := incentives.cluster_partitions();
    summary  incentives_cluster.shard_row[];
    problems text[];
BEGIN
    summary := ARRAY(
        SELECT ROW(p, s.object, s.row_count, s.digest)::incentives_cluster.shard_row
          FROM generate_series(0, n - 1) AS p,
               LATERAL incentives_cluster.shard_summary(n, p) AS s);

    SELECT array_agg(problem ORDER BY problem) INTO problems
      FROM (SELECT format('%s differ between partitions (%s)', object,
                          string_agg(format('p%s: %s rows, md5 %s', partition, row_count, digest), '; '
                                     ORDER BY partition)) AS problem
              FROM unnest(summary)
             WHERE digest IS NOT NULL
             GROUP BY object
            HAVING count(DISTINCT digest) > 1
            UNION ALL
            SELECT format('%s transactions of partition %s belong to another partition', row_count, partition)
              FROM unnest(summary)
             WHERE object = 'misplaced_transactions' AND row_count > 0
            UNION ALL
            SELECT format('%s enrollments of partition %s belong to another partition', row_count, partition)
              FROM unnest(summary)
             WHERE object = 'misplaced_enrollments' AND row_count > 0) x;
    IF problems IS NOT NULL THEN
        RAISE EXCEPTION 'incentives_cluster is inconsistent: %', array_to_string(problems, '; ')
              USING ERRCODE = 'data_exception';
    END IF;
    RETURN QUERY SELECT * FROM unnest(summary);
END
$$;
COMMENT ON FUNCTION incentives.cluster_check() IS
  'Compares the partitions: reference tables must be identical everywhere and every transaction and enrollment on the partition of its participant; raises naming what differs, else returns the per-partition counts and digests';

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
                      AND d.refobjid = (SELECT e.oid FROM pg_extension e WHERE e.extname = 'incentives_cluster'));

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
        EXECUTE format('ALTER EXTENSION incentives_cluster DROP VIEW %s', v.view_name);
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
