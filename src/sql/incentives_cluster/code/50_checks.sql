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
