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
