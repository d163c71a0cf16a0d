------------------------------------------------------------------------
-- Settlement (docs/lifecycle.md, "Settlement statements")
--
-- CALL incentives.settle(statement_date, participant_key) writes one
-- statement and its lines: for every (participant, offer) with earnings
-- through statement_date or earlier settlements, what was earned to date,
-- what earlier lines settled, and the difference due.  A tier reached late
-- pays the difference (true-up); a return after payment comes back as a
-- negative amount due (clawback).
--
-- One transaction: the statement and all its lines, or nothing.  CALLed
-- outside a transaction block the procedure commits its statement before
-- it returns; inside one, it is part of the caller's transaction.
--
-- Serialized: every settle takes one transaction-level advisory lock
-- before it reads the earlier lines, and reads them with a snapshot taken
-- after it has the lock (READ COMMITTED; a settle in a REPEATABLE READ or
-- SERIALIZABLE transaction block is refused, its snapshot could predate
-- another settle's commit).  So a second settle waits for the first to
-- commit and then counts its lines as settled: the same earnings are never
-- due twice.
--
-- Statements and lines are append-only: UPDATE, DELETE and TRUNCATE are
-- refused for every role (no exception; 16_append_only.sql); corrections
-- are the next statement's business.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.settle_work(statement_date date, participant_key text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_date        date := settle_work.statement_date;
    v_participant text := settle_work.participant_key;
    v_id          bigint;
    v_late        record;
    v_lines       integer;
    v_due         numeric;
BEGIN
    IF v_date IS NULL THEN
        RAISE EXCEPTION 'statement_date must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'incentives.settle needs isolation level READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
              USING ERRCODE = 'invalid_transaction_state',
                    DETAIL = 'It reads the earlier statements after it has waited for any other settle to commit; a snapshot taken before that could count the same earnings twice.',
                    HINT = 'CALL it outside a transaction block, or in a READ COMMITTED one.';
    END IF;

    -- One settle at a time; everything below reads after the wait.
    PERFORM pg_advisory_xact_lock(hashtext('incentives.statements'), 0);

    CREATE TEMPORARY TABLE incentives_settle_lines (
        participant_key text NOT NULL,
        offer_key       text NOT NULL,
        earned_to_date  numeric NOT NULL,
        settled_before  numeric NOT NULL
    ) ON COMMIT DROP;
    INSERT INTO pg_temp.incentives_settle_lines
    WITH earned AS (
        SELECT e.participant_key, e.offer_key, sum(e.incentive_amount) AS amount
          FROM incentives.incentive_calculate(participant_key => v_participant,
                                              through_date => v_date) AS e
         GROUP BY e.participant_key, e.offer_key),
    settled AS (
        SELECT l.participant_key, l.offer_key, sum(l.amount_due) AS amount
          FROM incentives.statement_lines AS l
         WHERE v_participant IS NULL OR l.participant_key = v_participant
         GROUP BY l.participant_key, l.offer_key)
    SELECT COALESCE(e.participant_key, s.participant_key),
           COALESCE(e.offer_key, s.offer_key),
           round(COALESCE(e.amount, 0), 2),
           round(COALESCE(s.amount, 0), 2)
      FROM earned AS e
      FULL JOIN settled AS s
        ON s.participant_key = e.participant_key AND s.offer_key = e.offer_key
     WHERE COALESCE(e.amount, 0) <> 0 OR COALESCE(s.amount, 0) <> 0;

    -- No statement earlier than the latest one of a participant it covers
    -- (a statement covers the participant it names and those it has lines
    -- for).
    SELECT c.participant_key, max(st.statement_date) AS latest INTO v_late
      FROM (SELECT v_participant AS participant_key WHERE v_participant IS NOT NULL
            UNION
            SELECT n.participant_key FROM pg_temp.incentives_settle_lines AS n) AS c
      JOIN incentives.statements AS st
        ON st.participant_key = c.participant_key
        OR EXISTS (SELECT 1 FROM incentives.statement_lines AS l
                    WHERE l.statement_id = st.statement_id AND l.participant_key = c.participant_key)
     GROUP BY c.participant_key
    HAVING max(st.statement_date) > v_date
     ORDER BY max(st.statement_date) DESC, c.participant_key COLLATE "C"
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'statement_date % is earlier than the latest statement of participant "%" (%)',
                        v_date, v_late.participant_key, v_late.latest
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Statements go forward in time: settle on or after the latest statement date.';
    END IF;

    INSERT INTO incentives.statements (statement_date, participant_key)
    VALUES (v_date, v_participant)
    RETURNING statement_id INTO v_id;
    INSERT INTO incentives.statement_lines (statement_id, participant_key, offer_key,
                                            earned_to_date, settled_before, amount_due)
    SELECT v_id, n.participant_key, n.offer_key, n.earned_to_date, n.settled_before,
           n.earned_to_date - n.settled_before
      FROM pg_temp.incentives_settle_lines AS n
     ORDER BY n.participant_key COLLATE "C", n.offer_key COLLATE "C";
    GET DIAGNOSTICS v_lines = ROW_COUNT;
    SELECT COALESCE(sum(n.earned_to_date - n.settled_before), 0.00) INTO v_due
      FROM pg_temp.incentives_settle_lines AS n;
    DROP TABLE pg_temp.incentives_settle_lines;

    RAISE NOTICE 'settle: statement % of % (%): % lines, % due',
                 v_id, v_date, CASE WHEN v_participant IS NULL THEN 'every participant' ELSE format('participant "%s"', v_participant) END,
                 v_lines, v_due;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives_internal.settle_work(date, text) IS
  'Part of incentives.settle (call the procedure, not this): waits for any other settle, writes the statement and its lines, returns the statement_id';

CREATE OR REPLACE PROCEDURE incentives.settle(
    statement_date  date,
    participant_key text DEFAULT NULL)
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name is
-- schema-qualified; the SQL work is in incentives_internal.settle_work.
DECLARE
    v_can_commit boolean := incentives_internal.transaction_control_allowed();
BEGIN
    IF v_can_commit THEN
        -- a fresh READ COMMITTED transaction of its own, whatever the
        -- session's default isolation
        COMMIT;
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    END IF;
    PERFORM incentives_internal.settle_work(settle.statement_date, settle.participant_key);
    IF v_can_commit THEN
        COMMIT;   -- the statement is durable when CALL returns
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.settle(date, text) IS
  'Writes a settlement statement for the earnings through statement_date of one participant or all (NULL): per participant and offer earned_to_date, settled_before and amount_due (true-ups positive, clawbacks negative), in one transaction; serialized against other settles; refuses a date before a covered participant''s latest statement (22023)';

------------------------------------------------------------------------
-- Views for finance and BI
------------------------------------------------------------------------

CREATE OR REPLACE VIEW incentives.participant_statements WITH (security_invoker = true) AS
SELECT s.statement_id,
       s.statement_date,
       COALESCE(l.participant_key, s.participant_key) AS participant_key,
       count(l.offer_key)                             AS offers,
       COALESCE(sum(l.earned_to_date), 0.00)          AS earned_to_date,
       COALESCE(sum(l.settled_before), 0.00)          AS settled_before,
       COALESCE(sum(l.amount_due), 0.00)              AS amount_due,
       COALESCE(jsonb_agg(jsonb_build_object('offer_key', l.offer_key,
                                             'earned_to_date', l.earned_to_date,
                                             'settled_before', l.settled_before,
                                             'amount_due', l.amount_due)
                          ORDER BY l.offer_key COLLATE "C")
                FILTER (WHERE l.offer_key IS NOT NULL), '[]'::jsonb) AS lines,
       s.created_at,
       s.created_by
  FROM incentives.statements AS s
  LEFT JOIN incentives.statement_lines AS l ON l.statement_id = s.statement_id
 WHERE COALESCE(l.participant_key, s.participant_key) IS NOT NULL
 GROUP BY s.statement_id, s.statement_date, COALESCE(l.participant_key, s.participant_key),
          s.created_at, s.created_by;
COMMENT ON VIEW incentives.participant_statements IS
  'One statement per participant: its totals and its lines (a JSON array, one object per offer), what finance sends the participant';
COMMENT ON COLUMN incentives.participant_statements.statement_id IS 'The statement';
COMMENT ON COLUMN incentives.participant_statements.statement_date IS 'Earnings settled through this date';
COMMENT ON COLUMN incentives.participant_statements.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.participant_statements.offers IS 'Lines (offers) on the participant''s statement';
COMMENT ON COLUMN incentives.participant_statements.earned_to_date IS 'Sum of the lines'' earned_to_date';
COMMENT ON COLUMN incentives.participant_statements.settled_before IS 'Sum of the lines'' settled_before';
COMMENT ON COLUMN incentives.participant_statements.amount_due IS 'What is due to the participant (negative: owed back)';
COMMENT ON COLUMN incentives.participant_statements.lines IS 'The lines: [{offer_key, earned_to_date, settled_before, amount_due}] in offer order';
COMMENT ON COLUMN incentives.participant_statements.created_at IS 'When the statement was written';
COMMENT ON COLUMN incentives.participant_statements.created_by IS 'Who ran incentives.settle';

CREATE OR REPLACE VIEW incentives.settlement_balances WITH (security_invoker = true) AS
SELECT l.participant_key,
       l.offer_key,
       sum(l.amount_due)  AS settled_total,
       count(*)           AS statements,
       (array_agg(s.statement_id ORDER BY s.statement_date DESC, s.statement_id DESC))[1]   AS last_statement_id,
       max(s.statement_date)                                                                AS last_statement_date,
       (array_agg(l.amount_due ORDER BY s.statement_date DESC, s.statement_id DESC))[1]     AS last_amount_due
  FROM incentives.statement_lines AS l
  JOIN incentives.statements AS s ON s.statement_id = l.statement_id
 GROUP BY l.participant_key, l.offer_key;
COMMENT ON VIEW incentives.settlement_balances IS
  'Per participant and offer: everything settled so far and the last statement';
COMMENT ON COLUMN incentives.settlement_balances.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.settlement_balances.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.settlement_balances.settled_total IS 'Sum of amount_due over all its lines (= earned_to_date of the last one)';
COMMENT ON COLUMN incentives.settlement_balances.statements IS 'Statements with a line for it';
COMMENT ON COLUMN incentives.settlement_balances.last_statement_id IS 'The latest statement with a line for it';
COMMENT ON COLUMN incentives.settlement_balances.last_statement_date IS 'Its statement_date';
COMMENT ON COLUMN incentives.settlement_balances.last_amount_due IS 'What the latest statement settled (negative: a clawback)';

CREATE OR REPLACE VIEW incentives.unsettled_earnings WITH (security_invoker = true) AS
WITH accrued AS (
    SELECT e.participant_key, e.offer_key,
           sum(e.incentive_amount) AS amount,
           max(e.calculated_at)    AS calculated_at
      FROM incentives.earnings AS e
     GROUP BY e.participant_key, e.offer_key),
settled AS (
    SELECT l.participant_key, l.offer_key,
           sum(l.amount_due)     AS amount,
           max(s.statement_date) AS last_statement_date
      FROM incentives.statement_lines AS l
      JOIN incentives.statements AS s ON s.statement_id = l.statement_id
     GROUP BY l.participant_key, l.offer_key)
SELECT COALESCE(a.participant_key, s.participant_key)  AS participant_key,
       COALESCE(a.offer_key, s.offer_key)              AS offer_key,
       COALESCE(a.amount, 0.00)                        AS accrued,
       COALESCE(s.amount, 0.00)                        AS settled,
       COALESCE(a.amount, 0.00) - COALESCE(s.amount, 0.00) AS unsettled,
       s.last_statement_date,
       a.calculated_at
  FROM accrued AS a
  FULL JOIN settled AS s
    ON s.participant_key = a.participant_key AND s.offer_key = a.offer_key;
COMMENT ON VIEW incentives.unsettled_earnings IS
  'Per participant and offer: accrued earnings (the materialized incentives.earnings, all dates) against what statements settled; unsettled is what the next statements will pay (negative: claw back)';
COMMENT ON COLUMN incentives.unsettled_earnings.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.unsettled_earnings.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.unsettled_earnings.accrued IS 'Sum of incentive_amount in incentives.earnings (as of its last refresh)';
COMMENT ON COLUMN incentives.unsettled_earnings.settled IS 'Sum of amount_due of its statement lines';
COMMENT ON COLUMN incentives.unsettled_earnings.unsettled IS 'accrued - settled';
COMMENT ON COLUMN incentives.unsettled_earnings.last_statement_date IS 'Its latest statement''s date (NULL: never settled)';
COMMENT ON COLUMN incentives.unsettled_earnings.calculated_at IS 'When its materialized earnings were calculated (NULL: none)';
