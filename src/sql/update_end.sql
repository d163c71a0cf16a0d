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
                      AND d.refobjid = (SELECT e.oid FROM pg_extension e WHERE e.extname = '@extension@'));

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
        EXECUTE format('ALTER EXTENSION @extension@ DROP VIEW %s', v.view_name);
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
