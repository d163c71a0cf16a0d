-- bench/bench.sql: the measuring helpers of bench/run.sh (schema bench).
--
--   bench.results           one row per timed run
--   bench.measure(...)      time one query (clock_timestamp() around EXECUTE)
--   bench.loop_sql(k)       the per-participant loop over the first k participants
--   bench.crosscheck_all()  engine vs reference, per (offer, participant) and per row
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS bench;

CREATE TABLE IF NOT EXISTS bench.results (
    n           bigint  NOT NULL,   -- transactions in the data set
    measure     text    NOT NULL,   -- scan, engine, reference, loop
    run         int     NOT NULL,
    ms          numeric NOT NULL,   -- wall time of the query
    scale       numeric NOT NULL DEFAULT 1,  -- ms * scale estimates the full measure (sampled loop)
    rows_out    bigint,             -- count(*) of the query
    total       numeric,            -- its sum
    at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    cpu_ms      numeric             -- the backend's CPU time (schedstat), when readable
);
ALTER TABLE bench.results ADD COLUMN IF NOT EXISTS cpu_ms numeric;

-- bench.cpu_ns: this backend's CPU time so far (Linux /proc/self/schedstat,
-- nanoseconds), or NULL when it cannot be read.  Wall time moves with other
-- work on the machine and with the kernel's writeback of temporary files;
-- CPU time much less.
CREATE OR REPLACE FUNCTION bench.cpu_ns()
RETURNS numeric
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::numeric;
EXCEPTION WHEN OTHERS THEN
    RETURN NULL;
END
$$;

-- bench.measure: run sql (which returns one row: a count and a sum), time
-- it and record it.  Returns the milliseconds.
CREATE OR REPLACE FUNCTION bench.measure(p_n bigint, p_measure text, p_run int, p_sql text,
                                         p_scale numeric DEFAULT 1)
RETURNS numeric
LANGUAGE plpgsql
AS $$
DECLARE
    t0 timestamptz;
    t1 timestamptz;
    c0 numeric;
    c1 numeric;
    c bigint;
    s numeric;
    ms numeric;
BEGIN
    c0 := bench.cpu_ns();
    t0 := clock_timestamp();
    EXECUTE p_sql INTO c, s;
    t1 := clock_timestamp();
    c1 := bench.cpu_ns();
    ms := round(extract(epoch FROM t1 - t0)::numeric * 1000, 1);
    INSERT INTO bench.results (n, measure, run, ms, scale, rows_out, total, cpu_ms)
    VALUES (p_n, p_measure, p_run, ms, p_scale, c, s, round((c1 - c0) / 1e6, 1));
    RETURN ms;
END
$$;

-- bench.loop_sql: one incentive_calculate call per participant, for the
-- first k participants.
CREATE OR REPLACE FUNCTION bench.loop_sql(k int)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT format('SELECT count(*), sum(e.incentive_amount)'
                  ' FROM (SELECT participant_key FROM bench.participants ORDER BY participant_key LIMIT %s) p,'
                  ' LATERAL incentives.incentive_calculate(p.participant_key) e', k)
$$;

-- bench.calls: one row per timed per-participant call (bench.time_calls).
CREATE TABLE IF NOT EXISTS bench.calls (
    n       bigint  NOT NULL,
    run     int     NOT NULL,
    ms      numeric NOT NULL,       -- one call, wall time
    rows_out bigint NOT NULL
);

-- bench.time_calls: one incentive_calculate(participant) call per k-th
-- participant (every one when k = 1), each its own statement timed alone,
-- as an application calling per participant would; records every call's
-- time in bench.calls and returns the total milliseconds and rows.
-- Timings are kept in arrays while calling (a write would give the calls
-- a transaction of their own, and each call a new snapshot).
DROP FUNCTION IF EXISTS bench.time_calls(bigint, int, int);
CREATE OR REPLACE FUNCTION bench.time_calls(p_n bigint, p_run int, k int DEFAULT 1,
                                            OUT total_ms numeric, OUT total_rows bigint,
                                            OUT cpu_ms numeric)
LANGUAGE plpgsql
AS $$
DECLARE
    p record;
    t0 timestamptz;
    c bigint;
    s numeric;
    times numeric[] := '{}';
    counts bigint[] := '{}';
    c0 numeric := bench.cpu_ns();
BEGIN
    FOR p IN SELECT participant_key
               FROM (SELECT participant_key, row_number() OVER (ORDER BY participant_key) AS rn
                       FROM bench.participants) x
              WHERE rn % k = 0
              ORDER BY participant_key
    LOOP
        t0 := clock_timestamp();
        SELECT count(*), sum(incentive_amount) INTO c, s
          FROM incentives.incentive_calculate(p.participant_key);
        times := times || round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 3);
        counts := counts || c;
    END LOOP;
    cpu_ms := round((bench.cpu_ns() - c0) / 1e6, 1);
    INSERT INTO bench.calls (n, run, ms, rows_out)
    SELECT p_n, p_run, t, r FROM unnest(times, counts) AS u(t, r);
    SELECT sum(t), sum(r) INTO total_ms, total_rows FROM unnest(times, counts) AS u(t, r);
END
$$;

-- bench.crosscheck_all: the engine's and the reference's earnings, once
-- each, compared per (offer, participant) on row count and total
-- incentive_amount (pair_mismatches), and, when rows is true, row by row
-- on (transaction_id, offer_key, incentive_rate_key, incentive_amount), and
-- then the engine's rows with and without the arithmetic's fast path
-- (fast_exact_differences: rows in one and not the other).
DROP FUNCTION IF EXISTS bench.crosscheck_all(boolean);
CREATE OR REPLACE FUNCTION bench.crosscheck_all(p_rows boolean,
    OUT pairs bigint, OUT pair_mismatches bigint,
    OUT engine_rows bigint, OUT reference_rows bigint,
    OUT engine_total numeric, OUT reference_total numeric,
    OUT rows_only_engine bigint, OUT rows_only_reference bigint,
    OUT fast_exact_differences bigint)
LANGUAGE plpgsql
AS $$
BEGIN
    DROP TABLE IF EXISTS pg_temp.cc_engine, pg_temp.cc_reference;
    CREATE TEMP TABLE cc_engine AS
    SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
      FROM incentives.incentive_calculate();
    CREATE TEMP TABLE cc_reference AS
    SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
      FROM bench.reference_calculate();
    ANALYZE pg_temp.cc_engine, pg_temp.cc_reference;

    WITH e AS (SELECT offer_key, participant_key, count(*) AS n, sum(incentive_amount) AS total
                 FROM pg_temp.cc_engine GROUP BY 1, 2),
         r AS (SELECT offer_key, participant_key, count(*) AS n, sum(incentive_amount) AS total
                 FROM pg_temp.cc_reference GROUP BY 1, 2)
    SELECT count(*),
           count(*) FILTER (WHERE e.n IS DISTINCT FROM r.n OR e.total IS DISTINCT FROM r.total),
           coalesce(sum(e.n), 0), coalesce(sum(r.n), 0), coalesce(sum(e.total), 0), coalesce(sum(r.total), 0)
      INTO pairs, pair_mismatches, engine_rows, reference_rows, engine_total, reference_total
      FROM e FULL JOIN r USING (offer_key, participant_key);

    IF p_rows THEN
        -- the fast path and the exact arithmetic give the same rows
        -- (incentives.exact_only: big rationals only)
        SET LOCAL incentives.exact_only = on;
        CREATE TEMP TABLE cc_exact AS
        SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount,
               incentivized_quantity, incentivized_amount, offer_sku_pay_rate,
               incentive_contribution_percent, incentive_effective_rate
          FROM incentives.incentive_calculate();
        RESET incentives.exact_only;
        CREATE TEMP TABLE cc_fast AS
        SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount,
               incentivized_quantity, incentivized_amount, offer_sku_pay_rate,
               incentive_contribution_percent, incentive_effective_rate
          FROM incentives.incentive_calculate();
        SELECT count(*) INTO fast_exact_differences FROM (
            (SELECT e::text FROM pg_temp.cc_fast e EXCEPT ALL SELECT e::text FROM pg_temp.cc_exact e)
            UNION ALL
            (SELECT e::text FROM pg_temp.cc_exact e EXCEPT ALL SELECT e::text FROM pg_temp.cc_fast e)) x;
        DROP TABLE pg_temp.cc_exact, pg_temp.cc_fast;

        SELECT count(*) INTO rows_only_engine FROM (
            SELECT transaction_id, offer_key, incentive_rate_key, incentive_amount FROM pg_temp.cc_engine
            EXCEPT ALL
            SELECT transaction_id, offer_key, incentive_rate_key, incentive_amount FROM pg_temp.cc_reference) x;
        SELECT count(*) INTO rows_only_reference FROM (
            SELECT transaction_id, offer_key, incentive_rate_key, incentive_amount FROM pg_temp.cc_reference
            EXCEPT ALL
            SELECT transaction_id, offer_key, incentive_rate_key, incentive_amount FROM pg_temp.cc_engine) x;
    END IF;
    DROP TABLE pg_temp.cc_engine, pg_temp.cc_reference;
END
$$;

-- bench.report: the table of one data set size.
DROP FUNCTION IF EXISTS bench.report(bigint);
CREATE OR REPLACE FUNCTION bench.report(p_n bigint)
RETURNS TABLE (measure text, runs bigint, median_s numeric, min_s numeric, max_s numeric,
               cpu_s numeric, txn_per_s numeric, rows_out bigint, rows_out_per_s numeric)
LANGUAGE sql
AS $$
    SELECT r.measure || CASE WHEN max(r.scale) > 1 THEN ' (est.)' ELSE '' END,
           count(*),
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY r.ms * r.scale)::numeric / 1000, 3),
           round(min(r.ms * r.scale) / 1000, 3),
           round(max(r.ms * r.scale) / 1000, 3),
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY r.cpu_ms * r.scale)::numeric / 1000, 3),
           round(p_n / (percentile_cont(0.5) WITHIN GROUP (ORDER BY r.ms * r.scale)::numeric / 1000)),
           max(round(r.rows_out * r.scale))::bigint,
           round(max(r.rows_out * r.scale) / (percentile_cont(0.5) WITHIN GROUP (ORDER BY r.ms * r.scale)::numeric / 1000))
      FROM bench.results r
     WHERE r.n = p_n
     GROUP BY r.measure
     ORDER BY array_position(ARRAY['scan', 'scan, 2 workers', 'engine', 'reference', 'calls'], r.measure)
$$;

-- bench.median_s: the median seconds of one measure, wall clock or, with
-- cpu, CPU (NULL when not read).
CREATE OR REPLACE FUNCTION bench.median_s(p_n bigint, p_measure text, cpu boolean DEFAULT false)
RETURNS numeric
LANGUAGE sql
AS $$
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY CASE WHEN cpu THEN cpu_ms ELSE ms END * scale)::numeric / 1000
      FROM bench.results WHERE n = p_n AND measure = p_measure
$$;
RESET client_min_messages;
