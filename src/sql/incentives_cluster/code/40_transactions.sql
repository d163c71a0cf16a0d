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
