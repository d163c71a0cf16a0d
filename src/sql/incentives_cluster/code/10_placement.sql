------------------------------------------------------------------------
-- Placement: which partition holds a participant
------------------------------------------------------------------------

CREATE FUNCTION incentives.cluster_partitions()
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

CREATE FUNCTION incentives.partition_of(participant_key text)
RETURNS integer
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT hashtext($1) & (incentives.cluster_partitions() - 1)
$$;
COMMENT ON FUNCTION incentives.partition_of(text) IS
  'The partition that holds a participant''s transactions: hashtext(participant_key) & (partitions - 1), PL/Proxy''s mapping of RUN ON hashtext(participant_key); for bulk loaders';

CREATE FUNCTION incentives.partitions_for(participant_key text)
RETURNS SETOF integer
LANGUAGE sql STABLE
ROWS 1
AS $$
    SELECT pg_catalog.hashtext($1) WHERE $1 IS NOT NULL
    UNION ALL
    SELECT pg_catalog.generate_series(0, incentives.cluster_partitions() OPERATOR(pg_catalog.-) 1) WHERE $1 IS NULL
$$;
COMMENT ON FUNCTION incentives.partitions_for(text) IS
  'RUN ON target of the calculations: the participant''s hash when one is given (its partition), else every partition number (all of them)';

------------------------------------------------------------------------
-- The proxies: every function of the parts below that runs on the shards
-- has one shape, written by this helper of the install script (dropped by
-- its last part, 90_end.sql):
--
--   CREATE FUNCTION name(arguments, ...) RETURNS result LANGUAGE plproxy [ROWS rows]
--   AS $$ CLUSTER 'incentives_cluster'; RUN ON run_on; [TARGET target;] $$;
--   COMMENT ON FUNCTION name IS comment;
--
-- Without a target PL/Proxy calls the function of the same name and
-- arguments on the shard.
------------------------------------------------------------------------

CREATE FUNCTION incentives_cluster.create_proxy(
    name      text,
    arguments text[],
    result    text,
    run_on    text,
    target    text,
    comment   text,
    rows      integer DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format(E'CREATE FUNCTION %s(%s)\nRETURNS %s\nLANGUAGE plproxy\n%sAS %L',
                   name, array_to_string(arguments, ', '), result,
                   CASE WHEN rows IS NOT NULL THEN format(E'ROWS %s\n', rows) ELSE '' END,
                   format(E'\n    CLUSTER %L;\n    RUN ON %s;\n%s', 'incentives_cluster', run_on,
                          CASE WHEN target IS NOT NULL THEN format(E'    TARGET %s;\n', target) ELSE '' END));
    EXECUTE format('COMMENT ON FUNCTION %s IS %L', to_regproc(name)::regprocedure, comment);
END
$$;
COMMENT ON FUNCTION incentives_cluster.create_proxy(text, text[], text, text, text, text, integer) IS
  'Install script helper (dropped at its end): creates a PL/Proxy function of incentives_cluster and its comment';
