-- catalog.sql: everything an extension installs, as sorted text lines, so
-- that two databases can be compared with diff (test/ops/upgrade.sh and
-- dump_restore.sh; docs/architecture.md, Install and upgrade scripts):
-- members, pg_dump settings, routines (definition, privileges, comment),
-- relations (options, privileges, comment), columns (also of composite
-- types), sequences, views, indexes, constraints, triggers, row-level
-- security policies and flags, initial privileges, types and schemas.  Run with
-- psql -X -A -t -v ext=NAME.  Members are found through pg_depend, so a new
-- kind of object is listed as "member" even before it has a line of its
-- own here.
WITH ext AS (
    SELECT oid FROM pg_extension WHERE extname = :'ext'
), members AS (
    SELECT d.classid, d.objid
      FROM pg_depend d, ext
     WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
       -- the types that come with another member (a relation's row type, an array
       -- type) are not members of their own: PostgreSQL 17 records them, 15 does not
       AND NOT EXISTS (SELECT 1 FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
                         WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                           AND (t.typcategory = 'A' OR c.relkind <> 'c'))
), rels AS (
    SELECT c.oid FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
)
SELECT line FROM (
    SELECT 'member ' || pg_describe_object(classid, objid, 0) AS line FROM members
    UNION ALL
    SELECT format('extension %s version %s relocatable %s schema %s requires %s',
                  e.extname, e.extversion, e.extrelocatable, e.extnamespace::regnamespace,
                  (SELECT array_agg(r.extname ORDER BY r.extname) FROM pg_depend d
                     JOIN pg_extension r ON r.oid = d.refobjid
                    WHERE d.classid = 'pg_extension'::regclass AND d.objid = e.oid
                      AND d.refclassid = 'pg_extension'::regclass))
      FROM pg_extension e, ext WHERE e.oid = ext.oid
    UNION ALL
    -- pg_dump settings, one line per table or sequence (in any order of
    -- registration)
    SELECT format('config %s condition %s', c.rel::regclass, c.condition)
      FROM pg_extension e JOIN ext ON ext.oid = e.oid,
           unnest(e.extconfig, e.extcondition) AS c(rel, condition)
    UNION ALL
    SELECT format('routine %s: %s acl %s comment %s', p.oid::regprocedure,
                  pg_get_functiondef(p.oid), p.proacl, obj_description(p.oid, 'pg_proc'))
      FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
    UNION ALL
    SELECT format('relation %s kind %s options %s acl %s comment %s', c.oid::regclass, c.relkind,
                  c.reloptions, c.relacl, obj_description(c.oid, 'pg_class'))
      FROM pg_class c JOIN rels r ON r.oid = c.oid
    UNION ALL
    SELECT format('column %s.%s #%s %s notnull %s default %s generated %s identity %s collation %s acl %s comment %s',
                  c.oid::regclass, a.attname, a.attnum, format_type(a.atttypid, a.atttypmod),
                  a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attgenerated, a.attidentity,
                  a.attcollation::regcollation, a.attacl, col_description(c.oid, a.attnum))
      FROM pg_class c
      JOIN (SELECT oid FROM rels
            UNION  -- the attributes of composite types (incentives.earning)
            SELECT t.typrelid FROM pg_type t JOIN members m ON m.classid = 'pg_type'::regclass AND m.objid = t.oid
             WHERE t.typtype = 'c') AS r ON r.oid = c.oid
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
    UNION ALL
    SELECT format('sequence %s: %s start %s increment %s min %s max %s cache %s cycle %s',
                  s.seqrelid::regclass, format_type(s.seqtypid, NULL), s.seqstart, s.seqincrement,
                  s.seqmin, s.seqmax, s.seqcache, s.seqcycle)
      FROM pg_sequence s JOIN rels r ON r.oid = s.seqrelid
    UNION ALL
    SELECT format('view %s: %s', c.oid::regclass, pg_get_viewdef(c.oid))
      FROM pg_class c JOIN rels r ON r.oid = c.oid WHERE c.relkind IN ('v', 'm')
    UNION ALL
    SELECT format('index %s: %s comment %s', i.indexrelid::regclass, pg_get_indexdef(i.indexrelid),
                  obj_description(i.indexrelid, 'pg_class'))
      FROM pg_index i JOIN rels r ON r.oid = i.indrelid
    UNION ALL
    SELECT format('constraint %s on %s: %s', co.conname, co.conrelid::regclass, pg_get_constraintdef(co.oid))
      FROM pg_constraint co JOIN rels r ON r.oid = co.conrelid
    UNION ALL
    SELECT format('trigger %s on %s: %s comment %s', t.tgname, t.tgrelid::regclass,
                  pg_get_triggerdef(t.oid), obj_description(t.oid, 'pg_trigger'))
      FROM pg_trigger t JOIN rels r ON r.oid = t.tgrelid WHERE NOT t.tgisinternal
    UNION ALL
    SELECT format('policy %s on %s: %s permissive %s to %s using %s check %s comment %s',
                  po.polname, po.polrelid::regclass, po.polcmd, po.polpermissive,
                  (SELECT array_agg(CASE WHEN ro = 0 THEN 'public' ELSE ro::regrole::text END ORDER BY 1)
                     FROM unnest(po.polroles) AS ro),
                  pg_get_expr(po.polqual, po.polrelid), pg_get_expr(po.polwithcheck, po.polrelid),
                  obj_description(po.oid, 'pg_policy'))
      FROM pg_policy po JOIN rels r ON r.oid = po.polrelid
    UNION ALL
    SELECT format('rls %s enabled %s forced %s', c.oid::regclass, c.relrowsecurity, c.relforcerowsecurity)
      FROM pg_class c JOIN rels r ON r.oid = c.oid WHERE c.relkind IN ('r', 'p')
    UNION ALL
    SELECT format('type %s comment %s', t.oid::regtype, obj_description(t.oid, 'pg_type'))
      FROM pg_type t JOIN members m ON m.classid = 'pg_type'::regclass AND m.objid = t.oid
    UNION ALL
    -- the initial privileges pg_dump compares an object's with (what the
    -- extension's scripts granted; a user's grant must not land here, or
    -- pg_dump would leave it out)
    SELECT format('initprivs %s %s %s', pg_describe_object(ip.classoid, ip.objoid, ip.objsubid),
                  ip.privtype, ip.initprivs)
      FROM pg_init_privs ip JOIN members m ON m.classid = ip.classoid AND m.objid = ip.objoid
    UNION ALL
    SELECT format('schema %s acl %s comment %s', n.nspname, n.nspacl, obj_description(n.oid, 'pg_namespace'))
      FROM pg_namespace n
     WHERE n.nspname IN ('incentives', 'incentives_internal', 'incentives_cluster')
) AS l
ORDER BY line COLLATE "C";
