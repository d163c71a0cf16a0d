CREATE FUNCTION incentives_internal.refresh_earnings_begin(
    participant_key text,
    transactions    regclass)
RETURNS bigint
LANGUAGE sql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    INSERT INTO incentives.calculation_runs (participant_key, transactions)
    VALUES ($1, $2::text)   -- schema-qualified: only pg_catalog is on the path
    RETURNING run_id
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_begin(text, regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): logs a new run as running and returns its run_id';

CREATE FUNCTION incentives_internal.refresh_earnings_work(
    run_id          bigint,
    participant_key text,
    transactions    regclass,
    progress_every  integer)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run         bigint  := refresh_earnings_work.run_id;
    v_participant text    := refresh_earnings_work.participant_key;
    v_relation    regclass := refresh_earnings_work.transactions;
    v_every       integer := GREATEST(COALESCE(refresh_earnings_work.progress_every, 1000), 1);
    v_insert      text;
    v_starts      text[];
    v_total       integer;
    v_batch       integer;
    v_batch_rel   regclass;
    v_table       text;
    v_done        integer := 0;
    v_rows        bigint  := 0;
    v_sum         numeric := 0.00;
    v_step_rows   bigint;
    v_step_sum    numeric;
BEGIN
    -- One refresh of everything at a time; refreshes of single participants
    -- run side by side (one at a time per participant).
    IF v_participant IS NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('incentives.earnings'), 0);
    ELSE
        PERFORM pg_advisory_xact_lock_shared(hashtext('incentives.earnings'), 0);
        PERFORM pg_advisory_xact_lock(hashtext('incentives.earnings'), hashtext(v_participant));
    END IF;

    -- $1 run, $2 participant (NULL: all in $3), $3 relation to calculate on;
    -- the date comes from the caller's relation.
    v_insert := format($sql$
        WITH ins AS (
            INSERT INTO incentives.earnings
            SELECT e.participant_key, e.offer_key, e.offer_calculator, e.sku_key,
                   e.incentive_rate_key, e.incentive_rate_measure, e.incentive_rate_value,
                   e.offer_sku_pay_rate, e.transaction_id, e.provided_quantity,
                   e.provided_uom_key, e.provided_amount, e.incentivized_quantity,
                   e.incentivized_amount, e.incentive_amount,
                   e.incentive_contribution_percent, e.incentive_effective_rate,
                   (SELECT t.transaction_date FROM %s AS t
                     WHERE t.transaction_id::text = e.transaction_id
                       AND t.participant_key::text COLLATE "C" = e.participant_key
                     LIMIT 1),
                   now(), $1
              FROM incentives.incentive_calculate(participant_key => $2,
                                                  transactions => $3) AS e
            RETURNING incentive_amount)
        SELECT count(*), COALESCE(sum(incentive_amount), 0.00) FROM ins$sql$,
        v_relation);

    IF v_participant IS NOT NULL THEN
        DELETE FROM incentives.earnings AS e WHERE e.participant_key = v_participant;
        EXECUTE v_insert INTO v_rows, v_sum USING v_run, v_participant, v_relation;
        v_done := 1;
    ELSE
        DELETE FROM incentives.earnings;
        -- Batches of progress_every participants in byte order: the first
        -- key of each batch.  Each batch is one incentive_calculate call over
        -- a temporary view of the relation restricted to the batch's key
        -- range (an index on participant_key COLLATE "C" serves it).
        EXECUTE format($sql$
            SELECT count(*)::integer,
                   array_agg(p ORDER BY p) FILTER (WHERE (n - 1) %% $1 = 0)
              FROM (SELECT p, row_number() OVER (ORDER BY p) AS n
                      FROM (SELECT DISTINCT participant_key::text COLLATE "C" AS p
                              FROM %s) AS d) AS r$sql$, v_relation)
           INTO v_total, v_starts
          USING v_every;
        -- Several batches: what every participant's calculation shares
        -- stays put until this transaction ends, so all batches see the
        -- same offers, units, properties and enrollments (SHARE locks: writers wait,
        -- readers do not; taken where the role may lock, i.e. has UPDATE,
        -- DELETE or TRUNCATE on the table).  Transactions are not locked:
        -- each participant's rows come from one statement.
        IF array_length(v_starts, 1) > 1 THEN
            FOR v_table IN SELECT unnest(ARRAY['incentives.offers', 'incentives.skus',
                                               'incentives.uom_conversions',
                                               'incentives.participant_properties',
                                               'incentives.enrollments']) LOOP
                IF has_table_privilege(v_table, 'UPDATE, DELETE, TRUNCATE') THEN
                    EXECUTE format('LOCK TABLE %s IN SHARE MODE', v_table);
                END IF;
            END LOOP;
        END IF;
        FOR v_batch IN 1 .. COALESCE(array_length(v_starts, 1), 0) LOOP
            EXECUTE format($sql$
                CREATE TEMPORARY VIEW incentives_refresh_batch AS
                SELECT t.transaction_id, t.participant_key, t.transaction_type,
                       t.transaction_date, t.sku_key, t.quantity, t.uom_key, t.amount
                  FROM %s AS t
                 WHERE t.participant_key::text COLLATE "C" >= %L%s$sql$,
                v_relation, v_starts[v_batch],
                CASE WHEN v_batch < array_length(v_starts, 1)
                     THEN format(' AND t.participant_key::text COLLATE "C" < %L', v_starts[v_batch + 1])
                     ELSE '' END);
            v_batch_rel := to_regclass('pg_temp.incentives_refresh_batch');
            EXECUTE v_insert INTO v_step_rows, v_step_sum USING v_run, NULL::text, v_batch_rel;
            EXECUTE format('DROP VIEW %s', v_batch_rel);
            v_done := LEAST(v_batch * v_every, v_total);
            v_rows := v_rows + v_step_rows;
            v_sum  := v_sum + v_step_sum;
            RAISE NOTICE 'refresh_earnings: % of % participants, % rows', v_done, v_total, v_rows;
            -- visible to other sessions at once in pg_stat_activity, unlike
            -- the run row, which commits with the earnings
            PERFORM set_config('application_name',
                               format('incentives refresh run %s: %s/%s', v_run, v_done, v_total),
                               true);
        END LOOP;
    END IF;

    UPDATE incentives.calculation_runs AS r
       SET status = 'succeeded',
           finished_at = clock_timestamp(),
           participants = v_done,
           rows = v_rows,
           total_incentive = v_sum
     WHERE r.run_id = v_run;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_work(bigint, text, regclass, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): replaces one participant''s or all earnings and marks the run succeeded';

CREATE PROCEDURE incentives.refresh_earnings(
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions',
    progress_every  integer  DEFAULT 1000)
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name and
-- operator below is schema-qualified; the SQL work is in
-- incentives_internal.refresh_earnings_work.
DECLARE
    v_run        bigint;
    v_can_commit boolean;
    v_failed     boolean := false;
    v_probe      text;
    v_state      text;
    v_message    text;
    v_detail     text;
    v_hint       text;
    v_where      text;
BEGIN
    -- Can this call commit?  Yes when CALLed as a top-level statement
    -- outside a transaction block (psql, pg_cron); no inside BEGIN ... COMMIT
    -- or a function.  COMMIT inside an exception block always fails, and the
    -- message tells the two cases apart.
    BEGIN
        COMMIT;
    EXCEPTION WHEN invalid_transaction_termination THEN
        GET STACKED DIAGNOSTICS v_probe = MESSAGE_TEXT;
    END;
    v_can_commit := v_probe OPERATOR(pg_catalog.=) 'cannot commit while a subtransaction is active';

    v_run := incentives_internal.refresh_earnings_begin(refresh_earnings.participant_key,
                                               refresh_earnings.transactions);
    IF v_can_commit THEN
        COMMIT;   -- the 'running' row is visible while the refresh runs
    END IF;

    -- The replacement runs in a subtransaction: on error its deletes and
    -- inserts are undone, the previous earnings stay, and the failure is
    -- recorded after it.
    BEGIN
        PERFORM incentives_internal.refresh_earnings_work(v_run, refresh_earnings.participant_key,
                                                 refresh_earnings.transactions,
                                                 refresh_earnings.progress_every);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS v_state   = RETURNED_SQLSTATE,
                                v_message = MESSAGE_TEXT,
                                v_detail  = PG_EXCEPTION_DETAIL,
                                v_hint    = PG_EXCEPTION_HINT,
                                v_where   = PG_EXCEPTION_CONTEXT;
        -- where the engine was when a calculation failed: its own context
        -- line ("calculating transaction ... of participant ..."), if any
        v_where := pg_catalog.substring(v_where, '(?n)^calculating .*$');
        v_failed := true;
    END;

    IF v_failed THEN
        UPDATE incentives.calculation_runs AS r
           SET status = 'failed',
               finished_at = pg_catalog.clock_timestamp(),
               sqlstate = v_state,
               error = v_message
                       OPERATOR(pg_catalog.||) CASE WHEN v_detail OPERATOR(pg_catalog.=) '' THEN ''
                            ELSE pg_catalog.chr(10) OPERATOR(pg_catalog.||) 'DETAIL: '
                                 OPERATOR(pg_catalog.||) v_detail END
                       OPERATOR(pg_catalog.||) CASE WHEN v_where IS NULL THEN ''
                            ELSE pg_catalog.chr(10) OPERATOR(pg_catalog.||) 'CONTEXT: '
                                 OPERATOR(pg_catalog.||) v_where END
         WHERE r.run_id OPERATOR(pg_catalog.=) v_run;
        IF v_can_commit THEN
            COMMIT;   -- the failed run's row survives the error below
        END IF;
        IF v_detail OPERATOR(pg_catalog.<>) '' AND v_hint OPERATOR(pg_catalog.<>) '' THEN
            RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message, DETAIL = v_detail, HINT = v_hint;
        ELSIF v_detail OPERATOR(pg_catalog.<>) '' THEN
            RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message, DETAIL = v_detail;
        ELSIF v_hint OPERATOR(pg_catalog.<>) '' THEN
            RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message, HINT = v_hint;
        ELSE
            RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message;
        END IF;
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.refresh_earnings(text, regclass, integer) IS
  'Recalculates one participant''s (or, with NULL, every participant''s) earnings into incentives.earnings atomically and logs the run in incentives.calculation_runs; on error the previous earnings stay and, when CALLed outside a transaction block, the failed run is committed before the error is raised; NOTICE every progress_every participants';

