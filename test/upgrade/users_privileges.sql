-- test/upgrade/users_privileges.sql: the privileges of every routine,
-- relation and schema of the extension's schemas and of schema bi, one
-- line each keyed by schema and name (an update may change a routine's
-- signature, not its name; overloads with the same privileges are one
-- line), aclitems sorted; test/upgrade/users.sh requires every key before
-- an update to have the same privileges after.
SELECT DISTINCT line COLLATE "C" AS line FROM (
    SELECT format('routine %s.%s %s', p.pronamespace::regnamespace, p.proname,
                  CASE WHEN p.proacl IS NULL THEN 'default' ELSE ARRAY(SELECT a::text FROM unnest(p.proacl) AS a ORDER BY 1)::text END) AS line
      FROM pg_proc p
     WHERE p.pronamespace::regnamespace::text IN ('incentives', 'incentives_internal', 'incentives_cluster', 'bi')
    UNION ALL
    SELECT format('relation %s %s', c.oid::regclass,
                  CASE WHEN c.relacl IS NULL THEN 'default' ELSE ARRAY(SELECT a::text FROM unnest(c.relacl) AS a ORDER BY 1)::text END)
      FROM pg_class c
     WHERE c.relnamespace::regnamespace::text IN ('incentives', 'incentives_internal', 'incentives_cluster', 'bi')
       AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
    UNION ALL
    SELECT format('column %s.%s %s', c.oid::regclass, a.attname,
                  ARRAY(SELECT x::text FROM unnest(a.attacl) AS x ORDER BY 1)::text)
      FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND a.attacl IS NOT NULL
     WHERE c.relnamespace::regnamespace::text IN ('incentives', 'incentives_internal', 'incentives_cluster', 'bi')
    UNION ALL
    SELECT format('schema %s %s', n.nspname,
                  CASE WHEN n.nspacl IS NULL THEN 'default' ELSE ARRAY(SELECT a::text FROM unnest(n.nspacl) AS a ORDER BY 1)::text END)
      FROM pg_namespace n
     WHERE n.nspname IN ('incentives', 'incentives_internal', 'incentives_cluster', 'bi')
) AS l
ORDER BY 1;
