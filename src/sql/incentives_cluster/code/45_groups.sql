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

CREATE OR REPLACE FUNCTION incentives_cluster.placement_units()
RETURNS TABLE (participant_key text, unit_key text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ANY;
    TARGET incentives_internal.placement_units;
$$;
COMMENT ON FUNCTION incentives_cluster.placement_units() IS
  'incentives_internal.placement_units on any partition (memberships, types of groups and offers are the same everywhere)';

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
    SELECT u.participant_key, u.unit_key FROM incentives_cluster.placement_units() AS u;
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

-- incentives_cluster.place_again(what): replace_participants(), with a
-- notice of how many moved after what.
CREATE OR REPLACE FUNCTION incentives_cluster.place_again(what text)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    moved integer := incentives_cluster.replace_participants();
BEGIN
    IF moved > 0 THEN
        RAISE NOTICE '%: % participant(s) moved to the partition of their group', what, moved;
    END IF;
    RETURN moved;
END
$$;
COMMENT ON FUNCTION incentives_cluster.place_again(text) IS
  'replace_participants() after a change of memberships, types of groups or offers, with a notice naming the change when participants moved; returns how many moved';

CREATE OR REPLACE FUNCTION incentives.put_participant_group(participant_key text, group_key text,
                                                            start_date date, end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_row boolean;
BEGIN
    new_row := incentives_cluster.agreed(
        ARRAY(SELECT incentives_cluster.put_participant_group($1, $2, $3, $4)),
        format('put_participant_group(%L, %L, %L)', $1, $2, $3));
    PERFORM incentives_cluster.place_again('put_participant_group');
    RETURN new_row;
END
$$;
COMMENT ON FUNCTION incentives.put_participant_group(text, text, date, date) IS
  'Inserts a membership window on every partition, or replaces the group and end_date of the one starting that day (overlaps and cycles are refused there); true when it is new; then moves the data of every participant whose placement changed to the partition of its group';

CREATE OR REPLACE FUNCTION incentives.delete_participant_group(participant_key text, start_date date)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    existed boolean;
BEGIN
    existed := incentives_cluster.agreed(
        ARRAY(SELECT incentives_cluster.delete_participant_group($1, $2)),
        format('delete_participant_group(%L, %L)', $1, $2));
    PERFORM incentives_cluster.place_again('delete_participant_group');
    RETURN existed;
END
$$;
COMMENT ON FUNCTION incentives.delete_participant_group(text, date) IS
  'Deletes a membership window on every partition; true when it existed; then moves the data of every participant whose placement changed';
