------------------------------------------------------------------------
-- Forecast and accrual (docs/reference.md, Forecast; docs/lifecycle.md,
-- Accruals)
--
-- incentives.forecast(as_of_date, ...) asks the engine: per participant
-- and offer, the calculation through as_of_date and the same calculation
-- with every transaction of the offer's span to date projected to the
-- span's end at the same pace (core/engine/forecast.c), and the
-- straight-line share of the projected payout accrued by as_of_date.
-- Nothing here re-derives a figure.
--
-- CALL incentives.accrue(as_of_date) books that share: one accrual and its
-- lines, per participant and offer accrued to date, accrued before (the
-- previous line's) and the difference, the journal entry.  As settle does
-- (55_settle.sql): one transaction, serialized by a lock on
-- incentives.accruals (SHARE ROW EXCLUSIVE) and a READ COMMITTED snapshot
-- taken after it, and refused
-- for an as_of_date before the latest accrual; append-only tables
-- (16_append_only.sql).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.forecast(
    as_of_date      date,
    participant_key text     DEFAULT NULL,
    offer_keys      text[]   DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.forecast_row
AS 'MODULE_PATHNAME', 'incentives_forecast'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SUPPORT incentives_internal.forecast_support
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.forecast(date, text, text[], regclass) IS
  'Per participant and offer with a row in either calculation: earned through as_of_date, projected to the end of the offer''s span at the same pace (transactions dated span_start..as_of_date x span_days / elapsed_days; tiers, pools, requirements and limits on the projected volume), the stepped basis and tier of each, and accrual_to_date = max(round(projected x elapsed / span, 2), earned_to_date); stored properties; runs with the caller''s rights';

CREATE OR REPLACE FUNCTION incentives_internal.accrue_work(
    as_of_date   date,
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_date   date := accrue_work.as_of_date;
    v_txns   regclass := accrue_work.transactions;
    v_latest date;
    v_id     bigint;
    v_lines  integer;
    v_delta  text;
BEGIN
    IF v_date IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'as_of_date must not be NULL', '', '');
    END IF;
    IF v_date > current_date THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('as_of_date %s is after today (%s)', v_date, current_date),
            'An accrual books what has accrued; one dated in the future would refuse every later accrual of an earlier date.',
            'Accrue as of today or an earlier date.');
    END IF;
    IF v_txns IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'transactions must not be NULL', '', '');
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM incentives_internal.raise_error(
            '25000',
            format('incentives.accrue needs isolation level READ COMMITTED, not %s',
                   upper(current_setting('transaction_isolation'))),
            'It reads the earlier accruals after it has waited for any other accrue to commit; a snapshot taken before that could book the same accrual twice.',
            'CALL it outside a transaction block, or in a READ COMMITTED one.');
    END IF;

    -- One accrue at a time; everything below reads after the wait.
    LOCK TABLE incentives.accruals IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency

    -- a voided accrual and its reversal hold no date
    SELECT max(a.as_of_date) INTO v_latest FROM incentives.accruals AS a
     WHERE a.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.accruals AS r WHERE r.reverses = a.accrual_id);
    IF v_latest > v_date THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('as_of_date %s is earlier than the latest accrual (%s)', v_date, v_latest), '',
            'Accruals go forward in time: accrue on or after the latest as_of_date.');
    END IF;

    INSERT INTO incentives.accruals (as_of_date, transactions) VALUES (v_date, v_txns::text)
    RETURNING accrual_id INTO v_id;
    INSERT INTO incentives.accrual_lines (accrual_id, participant_key, offer_key,
                                          accrued_to_date, accrued_before, delta, currency)
    WITH closed AS (
        SELECT c.offer_key, c.final_statement_id FROM incentives.closed_offers AS c),
    accrued AS (
        -- a member that moved between groups has a forecast row per group
        SELECT f.participant_key, f.offer_key, sum(f.accrual_to_date) AS amount
          FROM incentives.forecast(v_date, transactions => v_txns) AS f
         WHERE NOT EXISTS (SELECT FROM closed AS c WHERE c.offer_key = f.offer_key)
         GROUP BY f.participant_key, f.offer_key
        UNION ALL
        -- a closed offer accrues what its final lines settled
        -- (docs/lifecycle.md, Why a line moved, holdbacks, minimums and closing a season)
        SELECT l.participant_key, l.offer_key, l.earned_to_date
          FROM incentives.statement_lines AS l
          JOIN closed AS c ON c.offer_key = l.offer_key AND c.final_statement_id = l.statement_id),
    before AS (
        SELECT DISTINCT ON (l.participant_key, l.offer_key)
               l.participant_key, l.offer_key, l.accrued_to_date AS amount, l.currency
          FROM incentives.accrual_lines AS l
         WHERE l.accrual_id < v_id
         ORDER BY l.participant_key, l.offer_key, l.accrual_id DESC),
    lines AS (
        SELECT COALESCE(a.participant_key, b.participant_key) AS participant_key,
               COALESCE(a.offer_key, b.offer_key)             AS offer_key,
               COALESCE(a.amount, 0.00)                       AS accrued_to_date,
               COALESCE(b.amount, 0.00)                       AS accrued_before,
               -- the offer's currency; a removed offer's is its last line's
               -- (an offer's currency cannot change once a line covers it)
               COALESCE((SELECT o.document ->> 'currency' FROM incentives.offers AS o
                          WHERE o.offer_key = COALESCE(a.offer_key, b.offer_key)),
                        b.currency)                           AS currency
          FROM accrued AS a
          FULL JOIN before AS b
            ON b.participant_key = a.participant_key AND b.offer_key = a.offer_key)
    SELECT v_id, n.participant_key, n.offer_key, n.accrued_to_date, n.accrued_before,
           n.accrued_to_date - n.accrued_before, n.currency
      FROM lines AS n
     WHERE n.accrued_to_date <> 0 OR n.accrued_before <> 0
     ORDER BY n.participant_key COLLATE "C", n.offer_key COLLATE "C";
    GET DIAGNOSTICS v_lines = ROW_COUNT;
    -- never one figure of two currencies: a total per currency
    v_delta := incentives_internal.amounts_by_currency(
                   ARRAY(SELECT l.delta FROM incentives.accrual_lines AS l WHERE l.accrual_id = v_id),
                   ARRAY(SELECT l.currency FROM incentives.accrual_lines AS l WHERE l.accrual_id = v_id));

    RAISE NOTICE 'accrue: accrual % as of %: % lines, % booked', v_id, v_date, v_lines, v_delta;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives_internal.accrue_work(date, regclass) IS
  'Part of incentives.accrue (call the procedure, not this): waits for any other accrue, writes the accrual and its lines, returns the accrual_id';

CREATE OR REPLACE PROCEDURE incentives.accrue(
    as_of_date   date,
    transactions regclass DEFAULT 'incentives.transactions')
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name is
-- schema-qualified; the SQL work is in incentives_internal.accrue_work.
DECLARE
    v_can_commit pg_catalog.bool := incentives_internal.transaction_control_allowed();
BEGIN
    PERFORM incentives_internal.refuse_read_only('accrue');
    IF v_can_commit THEN
        -- a fresh READ COMMITTED transaction of its own, whatever the
        -- session's default isolation
        COMMIT;
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    END IF;
    PERFORM incentives_internal.accrue_work(accrue.as_of_date, accrue.transactions);
    IF v_can_commit THEN
        COMMIT;   -- the accrual is durable when CALL returns
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.accrue(date, regclass) IS
  'Books the accrual as of as_of_date from the transactions relation (recorded on the accrual): per participant and offer the forecast''s accrual_to_date, the previous accrual of the pair and the difference (the journal entry), in one transaction; serialized against other accrues; refuses a date after today or before the latest accrual (22023)';

CREATE OR REPLACE VIEW incentives.accrual_balances WITH (security_invoker = true) AS
WITH latest AS (
    SELECT DISTINCT ON (l.participant_key, l.offer_key)
           l.participant_key, l.offer_key, l.accrual_id, a.as_of_date,
           l.accrued_to_date, l.delta, l.currency
      FROM incentives.accrual_lines AS l
      JOIN incentives.accruals AS a ON a.accrual_id = l.accrual_id
     -- a voided accrual and its reversal cancel out
     WHERE a.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.accruals AS r WHERE r.reverses = a.accrual_id)
     ORDER BY l.participant_key, l.offer_key, l.accrual_id DESC),
settled AS (
    -- what had been settled by the accrual's date: the statements dated
    -- on or before its as_of_date (all of them for a pair never accrued)
    SELECT l.participant_key, l.offer_key, l.currency,
           sum(l.amount_due)     AS amount,
           max(s.statement_date) AS last_statement_date
      FROM incentives.statement_lines AS l
      JOIN incentives.statements AS s ON s.statement_id = l.statement_id
      LEFT JOIN latest AS la
        ON la.participant_key = l.participant_key AND la.offer_key = l.offer_key
     WHERE (la.as_of_date IS NULL OR s.statement_date <= la.as_of_date)
       AND s.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
     GROUP BY l.participant_key, l.offer_key, l.currency)
SELECT COALESCE(a.participant_key, s.participant_key)         AS participant_key,
       COALESCE(a.offer_key, s.offer_key)                     AS offer_key,
       a.accrual_id                                           AS last_accrual_id,
       a.as_of_date                                           AS last_as_of_date,
       COALESCE(a.accrued_to_date, 0.00)                      AS accrued,
       a.delta                                                AS last_delta,
       COALESCE(s.amount, 0.00)                               AS settled,
       COALESCE(a.accrued_to_date, 0.00) - COALESCE(s.amount, 0.00) AS accrued_unsettled,
       s.last_statement_date,
       CASE WHEN a.participant_key IS NOT NULL THEN a.currency ELSE s.currency END AS currency
  FROM latest AS a
  FULL JOIN settled AS s
    ON s.participant_key = a.participant_key AND s.offer_key = a.offer_key
   AND s.currency IS NOT DISTINCT FROM a.currency;
COMMENT ON VIEW incentives.accrual_balances IS
  'Per participant and offer: its latest accrual beside what the settlement statements dated on or before its as_of_date had paid; accrued_unsettled is the liability still on the books at that date';
COMMENT ON COLUMN incentives.accrual_balances.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.accrual_balances.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.accrual_balances.last_accrual_id IS 'The latest accrual with a line for it (NULL: never accrued)';
COMMENT ON COLUMN incentives.accrual_balances.last_as_of_date IS 'Its as_of_date';
COMMENT ON COLUMN incentives.accrual_balances.accrued IS 'accrued_to_date of that line (0.00: never accrued)';
COMMENT ON COLUMN incentives.accrual_balances.last_delta IS 'What that accrual booked (negative: a reversal)';
COMMENT ON COLUMN incentives.accrual_balances.settled IS 'Sum of amount_due of its statement lines dated on or before last_as_of_date (every line when never accrued)';
COMMENT ON COLUMN incentives.accrual_balances.accrued_unsettled IS 'accrued - settled';
COMMENT ON COLUMN incentives.accrual_balances.last_statement_date IS 'The latest of those statements'' date (NULL: none)';
COMMENT ON COLUMN incentives.accrual_balances.currency IS 'The currency of the amounts (the offer''s; NULL: none): accruals and settlements of another currency are another row, never netted';

-- Voiding an accrual dated in the future (docs/lifecycle.md, Statements
-- dated in the future): its reversal, of the same date, takes each of its
-- pairs back to where they were before it (accrued_to_date the voided
-- line's accrued_before, delta the opposite); nothing is deleted.  Only the
-- latest accrual, dated after today; serialized with accrue.
CREATE OR REPLACE FUNCTION incentives.void_accrual(accrual_id bigint, reason text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_old   incentives.accruals;
    v_later bigint;
    v_id    bigint;
    v_delta text;
BEGIN
    PERFORM incentives_internal.refuse_read_only('void_accrual');
    IF void_accrual.reason IS NULL OR btrim(void_accrual.reason) = '' THEN
        -- (a NULL id is written <NULL>, as RAISE writes a NULL)
        PERFORM incentives_internal.raise_error(
            '22023',
            format('a reason is required to void accrual %s', COALESCE(void_accrual.accrual_id::text, '<NULL>')),
            '', '');
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM incentives_internal.raise_error(
            '25000',
            format('incentives.void_accrual needs isolation level READ COMMITTED, not %s',
                   upper(current_setting('transaction_isolation'))),
            '', '');
    END IF;
    LOCK TABLE incentives.accruals IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency
    SELECT * INTO v_old FROM incentives.accruals AS a WHERE a.accrual_id = void_accrual.accrual_id;
    IF NOT FOUND THEN
        PERFORM incentives_internal.raise_error(
            'P0002', format('accrual %s does not exist', COALESCE(void_accrual.accrual_id::text, '<NULL>')), '', '');
    END IF;
    IF v_old.reverses IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('accrual %s is the reversal of accrual %s', v_old.accrual_id, v_old.reverses), '', '');
    END IF;
    IF EXISTS (SELECT 1 FROM incentives.accruals AS r WHERE r.reverses = v_old.accrual_id) THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('accrual %s is already voided', v_old.accrual_id), '', '');
    END IF;
    IF v_old.as_of_date <= current_date THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('accrual %s is dated %s, not after today: only an accrual dated in the future is voided',
                   v_old.accrual_id, v_old.as_of_date),
            '', 'Corrections of the past are the next accrual''s business: CALL incentives.accrue again.');
    END IF;
    SELECT max(a.accrual_id) INTO v_later FROM incentives.accruals AS a
     WHERE a.accrual_id > v_old.accrual_id AND a.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.accruals AS r WHERE r.reverses = a.accrual_id);
    IF v_later IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('accrual %s is not the latest: void accrual %s first', v_old.accrual_id, v_later),
            '', '');
    END IF;
    INSERT INTO incentives.accruals (as_of_date, transactions, reverses, reason)
    VALUES (v_old.as_of_date, v_old.transactions, v_old.accrual_id, void_accrual.reason)
    RETURNING accrual_id INTO v_id;
    INSERT INTO incentives.accrual_lines (accrual_id, participant_key, offer_key,
                                          accrued_to_date, accrued_before, delta, currency)
    SELECT v_id, l.participant_key, l.offer_key, l.accrued_before, l.accrued_to_date, -l.delta, l.currency
      FROM incentives.accrual_lines AS l
     WHERE l.accrual_id = v_old.accrual_id AND l.delta <> 0
     ORDER BY l.participant_key COLLATE "C", l.offer_key COLLATE "C";
    v_delta := incentives_internal.amounts_by_currency(
                   ARRAY(SELECT l.delta FROM incentives.accrual_lines AS l WHERE l.accrual_id = v_id),
                   ARRAY(SELECT l.currency FROM incentives.accrual_lines AS l WHERE l.accrual_id = v_id));
    RAISE NOTICE 'void_accrual: accrual % reverses accrual % as of %: % booked', v_id, v_old.accrual_id, v_old.as_of_date, v_delta;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives.void_accrual(bigint, text) IS
  'Voids the latest accrual when it is dated after today by appending its reversal (the same date, each pair back to its accrual before, reverses and reason recorded); the voided accrual and its reversal then hold no date and leave the balances. Returns the reversal''s accrual_id';
