------------------------------------------------------------------------
-- Settlement (docs/lifecycle.md, "Settlement statements")
--
-- CALL incentives.settle(statement_date, participant_key) writes one
-- statement and its lines: for every (participant, offer) with earnings
-- through statement_date or earlier settlements, what was earned to date,
-- what of it may be paid (less an offer's holdback until its final line),
-- what earlier lines settled, and the difference due.  A tier reached late
-- pays the difference (true-up); a return after payment comes back as a
-- negative amount due (clawback); a participant's total due below
-- minimum_payment stays owed (below_minimum).  The earning rows each line
-- sums are kept with the statement, and final_offer_keys closes offers
-- (docs/lifecycle.md, Why a line moved, holdbacks, minimums and closing a
-- season).
--
-- One transaction: the statement and all its lines, or nothing.  CALLed
-- outside a transaction block the procedure commits its statement before
-- it returns; inside one, it is part of the caller's transaction.
--
-- Serialized: every settle (and void) locks incentives.statements in
-- SHARE ROW EXCLUSIVE mode, which only a role that may write it can take
-- (docs/operations.md, Concurrency), before it reads the earlier lines, and reads them with a snapshot taken
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

-- A total per currency for a NOTICE (settle, accrue and their voids):
-- amounts of two currencies are never added.  '150.00' when every amount
-- has no currency (as before 0.5.0), '1200.00 CAD, 40.00 USD' otherwise
-- (an amount without a currency first, bare); '0.00' for none.
CREATE OR REPLACE FUNCTION incentives_internal.amounts_by_currency(amounts numeric[], currencies text[])
RETURNS text
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT COALESCE(string_agg(t.total::text || COALESCE(' ' || t.currency, ''), ', '
                               ORDER BY t.currency COLLATE "C" NULLS FIRST),
                    '0.00')
      FROM (SELECT u.currency, sum(u.amount) AS total
              FROM unnest($1, $2) AS u (amount, currency)
             GROUP BY u.currency) AS t
$function$;
COMMENT ON FUNCTION incentives_internal.amounts_by_currency(numeric[], text[]) IS
  'The sum of amounts per currency as text for a NOTICE (''1200.00 CAD, 40.00 USD''; bare when without currency; ''0.00'' when empty): settle and accrue never add two currencies';

-- The state of every offer a statement ever closed (docs/lifecycle.md,
-- Why a line moved, holdbacks, minimums and closing a season): closed
-- (its latest closing not reopened since) or reopened (its next lines are
-- final), with that closing.
CREATE OR REPLACE FUNCTION incentives_internal.offer_closing_states()
RETURNS TABLE (offer_key text, state text, statement_id bigint, statement_date date)
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT c.offer_key,
           CASE WHEN EXISTS (SELECT FROM incentives.offer_reopenings AS r
                              WHERE r.offer_key = c.offer_key AND r.statement_id = c.statement_id)
                THEN 'reopened' ELSE 'closed' END,
           c.statement_id, c.statement_date
      FROM (SELECT DISTINCT ON (o.offer_key) o.offer_key, o.statement_id, o.statement_date
              FROM incentives.offer_closings AS o
             ORDER BY o.offer_key, o.statement_id DESC) AS c
$function$;
COMMENT ON FUNCTION incentives_internal.offer_closing_states() IS
  'Every offer a statement closed: closed (its latest closing not reopened) or reopened, with that closing''s statement and date';

CREATE OR REPLACE FUNCTION incentives_internal.offer_closed(offer_key text)
RETURNS boolean
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT EXISTS (SELECT FROM incentives_internal.offer_closing_states() AS s
                    WHERE s.offer_key = $1 AND s.state = 'closed')
$function$;
COMMENT ON FUNCTION incentives_internal.offer_closed(text) IS
  'Whether a statement closed the offer and no reopening followed (what a coordinator''s reopen_offer asks every shard first)';

CREATE OR REPLACE VIEW incentives.closed_offers WITH (security_invoker = true) AS
SELECT s.offer_key, s.statement_id AS final_statement_id, s.statement_date AS final_statement_date
  FROM incentives_internal.offer_closing_states() AS s
 WHERE s.state = 'closed';
COMMENT ON VIEW incentives.closed_offers IS
  'The offers closed now: a statement closed them (settle''s final_offer_keys) and no reopen_offer has reopened them since; they get no line in a later statement';
COMMENT ON COLUMN incentives.closed_offers.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.closed_offers.final_statement_id IS 'The statement that closed it (its lines for the offer are final)';
COMMENT ON COLUMN incentives.closed_offers.final_statement_date IS 'That statement''s date';

-- The refusals of final_offer_keys, before anything is written (a
-- coordinator asks every shard first: docs/scaling.md, Settling).  Returns
-- the keys to close: a key a statement of the same date already closed is
-- a retry and closes nothing more.
CREATE OR REPLACE FUNCTION incentives_internal.settle_final_check(statement_date date, participant_key text,
                                                                  final_offer_keys text[])
RETURNS text[]
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_date  date := settle_final_check.statement_date;
    v_key   text;
    v_state record;
    v_last  date;
    v_close text[] := '{}';
BEGIN
    IF final_offer_keys IS NULL THEN
        RETURN v_close;
    END IF;
    IF settle_final_check.participant_key IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('final_offer_keys cannot be given with participant_key "%s"', settle_final_check.participant_key),
            'A season closes for every participant at once.',
            'Settle every participant (participant_key NULL) to close offers.');
    END IF;
    IF array_position(final_offer_keys, NULL) IS NOT NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'final_offer_keys must not contain NULL', '', '');
    END IF;
    FOREACH v_key IN ARRAY final_offer_keys LOOP
        IF v_key = ANY (v_close) THEN
            PERFORM incentives_internal.raise_error(
                '22023', format('final_offer_keys names offer "%s" twice', v_key), '', '');
        END IF;
        IF NOT EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = v_key) THEN
            PERFORM incentives_internal.raise_error(
                '22023', format('final_offer_keys names offer "%s", which does not exist', v_key), '',
                COALESCE(format('Did you mean the offer "%s"?',
                                incentives_internal.suggested_key(v_key, ARRAY(SELECT o.offer_key FROM incentives.offers AS o))),
                         ''));
        END IF;
        SELECT * INTO v_state FROM incentives_internal.offer_closing_states() AS s
         WHERE s.offer_key = v_key AND s.state = 'closed';
        IF FOUND AND v_state.statement_date = v_date THEN
            CONTINUE;   -- closed by a statement of this date: a retry
        END IF;
        IF FOUND THEN
            PERFORM incentives_internal.raise_error(
                '22023',
                format('offer "%s" is already closed (statement %s of %s)', v_key, v_state.statement_id, v_state.statement_date),
                '', format('To settle it again, reopen it first: SELECT incentives.reopen_offer(%L, reason).', v_key));
        END IF;
        SELECT max(r.end_date) INTO v_last
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_references(o.document) AS r
         WHERE o.offer_key = v_key AND r.kind = 'period';
        IF v_date < v_last THEN
            PERFORM incentives_internal.raise_error(
                '22023',
                format('statement_date %s is before the last day of offer "%s" (%s)', v_date, v_key, v_last),
                'A final statement closes the offer: its transactions must all be dated on or before the statement.',
                format('Close it with a statement dated %s or later.', v_last));
        END IF;
        v_close := v_close || v_key;
    END LOOP;
    RETURN v_close;
END
$function$;
COMMENT ON FUNCTION incentives_internal.settle_final_check(date, text, text[]) IS
  'Part of incentives.settle: refuses final_offer_keys with a participant_key, a NULL, a repeated or unknown key, an offer already closed by a statement of another date, or a statement dated before an offer''s last day (22023); returns the keys to close (an offer a statement of the same date closed is a retry)';

CREATE OR REPLACE FUNCTION incentives_internal.settle_work(
    statement_date   date,
    participant_key  text,
    transactions     regclass DEFAULT 'incentives.transactions',
    minimum_payment  numeric  DEFAULT 0,
    final_offer_keys text[]   DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_date        date := settle_work.statement_date;
    v_participant text := settle_work.participant_key;
    v_txns        regclass := settle_work.transactions;
    v_minimum     numeric := settle_work.minimum_payment;
    v_close       text[];
    v_offer_keys  text[];
    v_id          bigint;
    v_late        record;
    v_lines       integer;
    v_due         text;
    v_extra       text := '';
    v_closes      text := '';
    v_totals      record;
BEGIN
    IF v_date IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'statement_date must not be NULL', '', '');
    END IF;
    IF v_date > current_date THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('statement_date %s is after today (%s)', v_date, current_date),
            'A statement settles what has been earned; one dated in the future would refuse every later statement of an earlier date.',
            'Settle through today or an earlier date.');
    END IF;
    IF v_txns IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'transactions must not be NULL', '', '');
    END IF;
    IF v_minimum IS NULL OR v_minimum < 0 THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('minimum_payment must be 0 or more, not %s', COALESCE(v_minimum::text, 'NULL')), '',
            'Give the smallest amount a payment is made for (0: every amount).');
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM incentives_internal.raise_error(
            '25000',
            format('incentives.settle needs isolation level READ COMMITTED, not %s',
                   upper(current_setting('transaction_isolation'))),
            'It reads the earlier statements after it has waited for any other settle to commit; a snapshot taken before that could count the same earnings twice.',
            'CALL it outside a transaction block, or in a READ COMMITTED one.');
    END IF;

    -- One settle at a time; everything below reads after the wait.
    LOCK TABLE incentives.statements IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency

    v_close := incentives_internal.settle_final_check(v_date, v_participant, settle_work.final_offer_keys);

    -- Offers closed now get no line; the others' lines are final when the
    -- statement closes them or they were reopened.
    CREATE TEMPORARY TABLE incentives_settle_offers (
        offer_key text PRIMARY KEY,
        state     text NOT NULL      -- closed, reopened or closing
    ) ON COMMIT DROP;
    INSERT INTO pg_temp.incentives_settle_offers
    SELECT s.offer_key, s.state FROM incentives_internal.offer_closing_states() AS s
     WHERE NOT s.offer_key = ANY (v_close);
    INSERT INTO pg_temp.incentives_settle_offers SELECT k, 'closing' FROM unnest(v_close) AS k;
    IF EXISTS (SELECT FROM pg_temp.incentives_settle_offers AS c WHERE c.state = 'closed') THEN
        v_offer_keys := ARRAY(SELECT o.offer_key FROM incentives.offers AS o
                               WHERE NOT EXISTS (SELECT FROM pg_temp.incentives_settle_offers AS c
                                                  WHERE c.offer_key = o.offer_key AND c.state = 'closed'));
    END IF;

    -- No statement earlier than the latest one of a participant it covers
    -- (a statement covers the participant it names and those it has lines
    -- for): asked before anything is calculated, of the participants a
    -- later statement covers (usually none), so that the statement can be
    -- written first and the rows kept as the lines are summed.
    FOR v_late IN
        SELECT c.participant_key, max(st.statement_date) AS latest
          FROM incentives.statements AS st
         CROSS JOIN LATERAL (SELECT st.participant_key WHERE st.participant_key IS NOT NULL
                             UNION
                             SELECT l.participant_key FROM incentives.statement_lines AS l
                              WHERE l.statement_id = st.statement_id) AS c (participant_key)
         WHERE st.statement_date > v_date
           -- a voided statement and its reversal hold no date
           AND st.reverses IS NULL
           AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = st.statement_id)
           AND (v_participant IS NULL OR c.participant_key = v_participant)
         GROUP BY c.participant_key
         ORDER BY max(st.statement_date) DESC, c.participant_key COLLATE "C"
    LOOP
        IF v_participant IS NOT NULL OR EXISTS (
            SELECT FROM (SELECT e.offer_key, sum(e.incentive_amount) AS amount
                           FROM incentives_internal.calculate_dated(v_late.participant_key, NULL, v_offer_keys, v_txns,
                                                                    NULL, v_date) AS e
                          WHERE v_offer_keys IS NULL OR cardinality(v_offer_keys) > 0
                          GROUP BY e.offer_key) AS e
              FULL JOIN (SELECT l.offer_key, sum(l.amount_due) AS amount
                           FROM incentives.statement_lines AS l
                          WHERE l.participant_key = v_late.participant_key
                            AND NOT EXISTS (SELECT FROM pg_temp.incentives_settle_offers AS c
                                             WHERE c.offer_key = l.offer_key AND c.state = 'closed')
                          GROUP BY l.offer_key) AS s ON s.offer_key = e.offer_key
             WHERE COALESCE(e.amount, 0) <> 0 OR COALESCE(s.amount, 0) <> 0) THEN
            PERFORM incentives_internal.raise_error(
                '22023',
                format('statement_date %s is earlier than the latest statement of participant "%s" (%s)',
                       v_date, v_late.participant_key, v_late.latest),
                '', 'Statements go forward in time: settle on or after the latest statement date.');
        END IF;
    END LOOP;

    INSERT INTO incentives.statements (statement_date, participant_key, transactions)
    VALUES (v_date, v_participant, v_txns::text)
    RETURNING statement_id INTO v_id;

    CREATE TEMPORARY TABLE incentives_settle_lines (
        participant_key   text NOT NULL,
        offer_key         text NOT NULL,
        earned_to_date    numeric NOT NULL,
        settled_before    numeric NOT NULL,
        currency          text,
        final             boolean NOT NULL,
        payable_to_date   numeric NOT NULL,
        amount_due        numeric NOT NULL
    ) ON COMMIT DROP;
    WITH earned_rows AS MATERIALIZED (
        -- each participant's earning rows, kept with its lines (the
        -- aggregates of one group see its rows in one order: the arrays
        -- are in step)
        SELECT e.participant_key,
               array_agg(e.offer_key) AS offer_keys,
               array_agg(e.transaction_id) AS transaction_ids,
               array_agg(e.transaction_date) AS transaction_dates,
               array_agg(e.incentive_rate_key) AS rate_keys,
               array_agg(e.offer_sku_pay_rate) AS pay_rates,
               array_agg(e.incentive_amount) AS amounts
          FROM incentives_internal.calculate_dated(v_participant, NULL, v_offer_keys, v_txns, NULL, v_date) AS e
         WHERE v_offer_keys IS NULL OR cardinality(v_offer_keys) > 0
         GROUP BY e.participant_key),
    -- what each line sums, one participant's rows at a time
    earned AS MATERIALIZED (
        SELECT r.participant_key, u.offer_key, u.amount
          FROM earned_rows AS r
         CROSS JOIN LATERAL (SELECT x.offer_key, sum(x.amount) AS amount
                               FROM unnest(r.offer_keys, r.amounts) AS x (offer_key, amount)
                              GROUP BY x.offer_key) AS u),
    settled AS MATERIALIZED (
        SELECT l.participant_key, l.offer_key, sum(l.amount_due) AS amount,
               -- a removed offer's currency is its last line's (an
               -- offer's currency cannot change once a line covers it)
               (array_agg(l.currency ORDER BY l.statement_id DESC))[1] AS currency
          FROM incentives.statement_lines AS l
         WHERE (v_participant IS NULL OR l.participant_key = v_participant)
           AND NOT EXISTS (SELECT FROM pg_temp.incentives_settle_offers AS c
                            WHERE c.offer_key = l.offer_key AND c.state = 'closed')
         GROUP BY l.participant_key, l.offer_key),
    -- each offer's terms, read once: its currency and
    -- settlement.holdback_percent (a removed offer holds nothing back)
    terms AS MATERIALIZED (
        SELECT o.offer_key, o.document ->> 'currency' AS currency,
               COALESCE((o.document -> 'settlement' ->> 'holdback_percent')::numeric, 0) AS holdback_percent,
               EXISTS (SELECT FROM pg_temp.incentives_settle_offers AS c
                        WHERE c.offer_key = o.offer_key AND c.state IN ('reopened', 'closing')) AS final
          FROM incentives.offers AS o),
    -- the pairs with earnings that get no line (they summed to 0 and
    -- nothing was settled: a sale and its return, say); usually none
    unwritten AS MATERIALIZED (
        SELECT e.participant_key, e.offer_key
          FROM earned AS e
         WHERE e.amount = 0
           AND NOT EXISTS (SELECT FROM settled AS s
                            WHERE s.participant_key = e.participant_key AND s.offer_key = e.offer_key
                              AND s.amount <> 0)),
    -- the rows of every participant with a line: as summed, or without
    -- those of pairs that get no line, or none (lines of what was settled
    -- before only)
    kept AS (
        INSERT INTO incentives.statement_kept_rows (statement_id, participant_key, offer_keys, transaction_ids,
                                                    transaction_dates, rate_keys, pay_rates, amounts)
        SELECT v_id, r.participant_key, r.offer_keys, r.transaction_ids, r.transaction_dates, r.rate_keys,
               r.pay_rates, r.amounts
          FROM earned_rows AS r
         WHERE NOT EXISTS (SELECT FROM unwritten AS w WHERE w.participant_key = r.participant_key)
        UNION ALL
        SELECT v_id, r.participant_key,
               COALESCE(f.offer_keys, '{}'), COALESCE(f.transaction_ids, '{}'), COALESCE(f.transaction_dates, '{}'),
               COALESCE(f.rate_keys, '{}'), COALESCE(f.pay_rates, '{}'), COALESCE(f.amounts, '{}')
          FROM earned_rows AS r
         CROSS JOIN LATERAL (
               SELECT array_agg(u.offer_key) AS offer_keys, array_agg(u.transaction_id) AS transaction_ids,
                      array_agg(u.transaction_date) AS transaction_dates, array_agg(u.rate_key) AS rate_keys,
                      array_agg(u.pay_rate) AS pay_rates, array_agg(u.amount) AS amounts
                 FROM unnest(r.offer_keys, r.transaction_ids, r.transaction_dates, r.rate_keys, r.pay_rates, r.amounts)
                      AS u (offer_key, transaction_id, transaction_date, rate_key, pay_rate, amount)
                WHERE NOT EXISTS (SELECT FROM unwritten AS w
                                   WHERE w.participant_key = r.participant_key AND w.offer_key = u.offer_key)) AS f
         WHERE EXISTS (SELECT FROM unwritten AS w WHERE w.participant_key = r.participant_key)
           AND (f.offer_keys IS NOT NULL
                OR EXISTS (SELECT FROM settled AS s WHERE s.participant_key = r.participant_key AND s.amount <> 0))
        UNION ALL
        SELECT DISTINCT v_id, s.participant_key, '{}'::text[], '{}'::text[], '{}'::date[], '{}'::text[],
               '{}'::numeric[], '{}'::numeric[]
          FROM settled AS s
         WHERE s.amount <> 0
           AND NOT EXISTS (SELECT FROM earned_rows AS r WHERE r.participant_key = s.participant_key)),
    pairs AS (
        SELECT COALESCE(e.participant_key, s.participant_key) AS participant_key,
               COALESCE(e.offer_key, s.offer_key) AS offer_key,
               round(COALESCE(e.amount, 0), 2) AS earned_to_date,
               round(COALESCE(s.amount, 0), 2) AS settled_before,
               CASE WHEN t.offer_key IS NOT NULL THEN t.currency ELSE s.currency END AS currency,
               COALESCE(t.final, EXISTS (SELECT FROM pg_temp.incentives_settle_offers AS c
                                          WHERE c.offer_key = s.offer_key AND c.state = 'reopened')) AS final,
               COALESCE(t.holdback_percent, 0) AS holdback_percent
          FROM earned AS e
          FULL JOIN settled AS s
            ON s.participant_key = e.participant_key AND s.offer_key = e.offer_key
          LEFT JOIN terms AS t ON t.offer_key = COALESCE(e.offer_key, s.offer_key)
         WHERE COALESCE(e.amount, 0) <> 0 OR COALESCE(s.amount, 0) <> 0)
    INSERT INTO pg_temp.incentives_settle_lines
    SELECT p.participant_key, p.offer_key, p.earned_to_date, p.settled_before, p.currency, p.final,
           p.payable_to_date, p.payable_to_date - p.settled_before
      FROM (SELECT q.participant_key, q.offer_key, q.earned_to_date, q.settled_before, q.currency, q.final,
                   CASE WHEN q.final THEN q.earned_to_date
                        ELSE round(q.earned_to_date * (100 - q.holdback_percent) / 100, 2) END AS payable_to_date
              FROM pairs AS q) AS p;

    -- No payment below the minimum (docs/lifecycle.md, Why a line moved,
    -- holdbacks, minimums and closing a season): per participant and
    -- currency, when what the lines that are not final make due is positive
    -- and below it, their positive amounts stay owed (amount_due 0, kind
    -- below_minimum); clawbacks and final lines are written as they are.
    -- (amount_due is payable_to_date - settled_before as written above;
    -- one pass over the lines for the totals, then only the lines held
    -- are rewritten)
    UPDATE pg_temp.incentives_settle_lines AS n
       SET amount_due = 0
      FROM (SELECT m.participant_key, m.currency
              FROM pg_temp.incentives_settle_lines AS m
             WHERE NOT m.final
             GROUP BY m.participant_key, m.currency
            HAVING sum(m.payable_to_date - m.settled_before) > 0
               AND sum(m.payable_to_date - m.settled_before) < v_minimum) AS t
     WHERE t.participant_key = n.participant_key
       AND t.currency IS NOT DISTINCT FROM n.currency
       AND NOT n.final AND n.payable_to_date - n.settled_before > 0;

    INSERT INTO incentives.statement_lines (statement_id, participant_key, offer_key,
                                            earned_to_date, settled_before, amount_due,
                                            offer_version, currency, kind,
                                            payable_to_date, held_back, final)
    SELECT v_id, n.participant_key, n.offer_key, n.earned_to_date, n.settled_before, n.amount_due,
           (SELECT v.version FROM incentives.offer_versions AS v
             WHERE v.offer_key = n.offer_key AND v.valid_to IS NULL),
           n.currency,
           -- the kind the check statement_lines_kind_check asks for
           CASE WHEN n.amount_due = 0 AND n.payable_to_date - n.settled_before > 0 THEN 'below_minimum'
                WHEN n.amount_due = 0 THEN 'unchanged'
                WHEN n.amount_due < 0 THEN 'clawback'
                WHEN n.settled_before = 0 THEN 'payment'
                ELSE 'true_up' END,
           n.payable_to_date, n.earned_to_date - n.payable_to_date, n.final
      FROM pg_temp.incentives_settle_lines AS n
     ORDER BY n.participant_key COLLATE "C", n.offer_key COLLATE "C";
    GET DIAGNOSTICS v_lines = ROW_COUNT;
    -- the offers this statement closes: those listed, and the reopened
    -- ones in a statement of every participant
    INSERT INTO incentives.offer_closings (offer_key, statement_id, statement_date)
    SELECT c.offer_key, v_id, v_date
      FROM pg_temp.incentives_settle_offers AS c
     WHERE c.state = 'closing' OR (c.state = 'reopened' AND v_participant IS NULL)
     ORDER BY c.offer_key COLLATE "C";
    IF FOUND THEN
        v_closes := format('; closes %s',
                          (SELECT string_agg(format('"%s"', c.offer_key), ', ' ORDER BY c.offer_key COLLATE "C")
                             FROM incentives.offer_closings AS c WHERE c.statement_id = v_id));
    END IF;

    -- never one figure of two currencies: totals per currency, from one
    -- read of the lines (a line below the minimum: amount_due 0 where
    -- something was due)
    SELECT array_agg(n.amount_due) AS due,
           array_agg(n.earned_to_date - n.payable_to_date) AS held,
           array_agg(n.currency) AS currencies,
           bool_or(n.earned_to_date <> n.payable_to_date) AS any_held,
           array_agg(n.payable_to_date - n.settled_before)
               FILTER (WHERE n.amount_due = 0 AND n.payable_to_date - n.settled_before > 0) AS below,
           array_agg(n.currency)
               FILTER (WHERE n.amount_due = 0 AND n.payable_to_date - n.settled_before > 0) AS below_currencies
      INTO v_totals
      FROM pg_temp.incentives_settle_lines AS n;
    v_due := incentives_internal.amounts_by_currency(COALESCE(v_totals.due, '{}'), COALESCE(v_totals.currencies, '{}'));
    IF v_totals.any_held THEN
        v_extra := v_extra || format('; %s held back',
                                     incentives_internal.amounts_by_currency(v_totals.held, v_totals.currencies));
    END IF;
    IF v_totals.below IS NOT NULL THEN
        v_extra := v_extra || format('; %s below the minimum',
                                     incentives_internal.amounts_by_currency(v_totals.below, v_totals.below_currencies));
    END IF;
    DROP TABLE pg_temp.incentives_settle_lines;
    DROP TABLE pg_temp.incentives_settle_offers;

    RAISE NOTICE 'settle: statement % of % (%): % lines, % due%',
                 v_id, v_date, CASE WHEN v_participant IS NULL THEN 'every participant' ELSE format('participant "%s"', v_participant) END,
                 v_lines, v_due, v_extra || v_closes;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives_internal.settle_work(date, text, regclass, numeric, text[]) IS
  'Part of incentives.settle (call the procedure, not this): waits for any other settle, writes the statement, its lines and the rows each line sums, closes the offers it closes, returns the statement_id';

CREATE OR REPLACE PROCEDURE incentives.settle(
    statement_date   date,
    participant_key  text     DEFAULT NULL,
    transactions     regclass DEFAULT 'incentives.transactions',
    minimum_payment  numeric  DEFAULT 0,
    final_offer_keys text[]   DEFAULT NULL)
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name is
-- schema-qualified; the SQL work is in incentives_internal.settle_work.
DECLARE
    v_can_commit pg_catalog.bool := incentives_internal.transaction_control_allowed();
BEGIN
    PERFORM incentives_internal.refuse_read_only('settle');
    IF v_can_commit THEN
        -- a fresh READ COMMITTED transaction of its own, whatever the
        -- session's default isolation
        COMMIT;
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    END IF;
    PERFORM incentives_internal.settle_work(settle.statement_date, settle.participant_key,
                                            settle.transactions, settle.minimum_payment,
                                            settle.final_offer_keys);
    IF v_can_commit THEN
        COMMIT;   -- the statement is durable when CALL returns
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.settle(date, text, regclass, numeric, text[]) IS
  'Writes a settlement statement for the earnings through statement_date of one participant or all (NULL), calculated from the transactions relation (recorded on the statement): per participant and offer earned_to_date, payable_to_date (less the offer''s settlement.holdback_percent unless final), held_back, settled_before, amount_due (true-ups positive, clawbacks negative; 0 and kind below_minimum for a participant and currency whose total due is below minimum_payment), the kind, the offer''s version and the rows summed (incentives.statement_line_rows), in one transaction; final_offer_keys closes those offers (final lines, for every participant); serialized against other settles; refuses a date after today or before a covered participant''s latest statement (22023)';


------------------------------------------------------------------------
-- Why a line moved (docs/lifecycle.md, Why a line moved, holdbacks, minimums and closing a season)
--
-- Every line settle writes keeps the earning rows it summed
-- (incentives.statement_kept_rows, one row per statement and participant
-- with the rows' columns as arrays); statement_line_rows shows them one
-- by one, and
-- statement_line_changes compares each line's rows, per transaction, with
-- the pair's previous line's: the latest earlier line of the same
-- participant and offer in a statement that is neither voided nor a
-- reversal.
------------------------------------------------------------------------

CREATE OR REPLACE VIEW incentives.statement_line_rows WITH (security_invoker = true) AS
SELECT k.statement_id, k.participant_key, r.offer_key,
       r.transaction_id, r.incentive_rate_key, r.offer_sku_pay_rate, r.incentive_amount,
       r.transaction_date
  FROM incentives.statement_kept_rows AS k
 CROSS JOIN LATERAL unnest(k.offer_keys, k.transaction_ids, k.rate_keys, k.pay_rates, k.amounts, k.transaction_dates)
       AS r (offer_key, transaction_id, incentive_rate_key, offer_sku_pay_rate, incentive_amount, transaction_date);
COMMENT ON VIEW incentives.statement_line_rows IS
  'The earning rows each statement line written by settle summed: their incentive_amount adds up to the line''s earned_to_date (lines written before 0.5.0 kept none)';
COMMENT ON COLUMN incentives.statement_line_rows.statement_id IS 'The statement';
COMMENT ON COLUMN incentives.statement_line_rows.participant_key IS 'The line''s participant';
COMMENT ON COLUMN incentives.statement_line_rows.offer_key IS 'The line''s offer';
COMMENT ON COLUMN incentives.statement_line_rows.transaction_id IS 'The earning transaction';
COMMENT ON COLUMN incentives.statement_line_rows.incentive_rate_key IS 'The row''s rate key (entry, tier or stack)';
COMMENT ON COLUMN incentives.statement_line_rows.offer_sku_pay_rate IS 'The row''s rate as a multiplier';
COMMENT ON COLUMN incentives.statement_line_rows.incentive_amount IS 'What the row earned';
COMMENT ON COLUMN incentives.statement_line_rows.transaction_date IS 'The transaction''s own date';

-- The changes of one line against the previous line (NULL: none, a
-- pair's first line), whose statement is dated previous_date.  A previous
-- line without kept rows (written before 0.5.0) is one row of reason
-- not_kept taking its whole earned_to_date back.
CREATE OR REPLACE FUNCTION incentives_internal.statement_line_changes(
    statement_id bigint, participant_key text, offer_key text,
    previous_statement_id bigint, previous_date date, previous_earned numeric)
RETURNS TABLE (transaction_id text, previous_rate_key text, previous_amount numeric,
               rate_key text, amount numeric, change numeric, reason text)
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH now_rows AS (
        SELECT r.transaction_id, r.transaction_date, r.rate_key, r.pay_rate, r.amount
          FROM incentives.statement_kept_rows AS k
         CROSS JOIN LATERAL unnest(k.offer_keys, k.transaction_ids, k.transaction_dates, k.rate_keys, k.pay_rates,
                                   k.amounts)
               AS r (offer_key, transaction_id, transaction_date, rate_key, pay_rate, amount)
         WHERE k.statement_id = $1 AND k.participant_key = $2 AND r.offer_key = $3),
    before_kept AS (
        SELECT k.* FROM incentives.statement_kept_rows AS k
         WHERE k.statement_id = $4 AND k.participant_key = $2),
    before_rows AS (
        SELECT r.transaction_id, r.transaction_date, r.rate_key, r.pay_rate, r.amount
          FROM before_kept AS k
         CROSS JOIN LATERAL unnest(k.offer_keys, k.transaction_ids, k.transaction_dates, k.rate_keys, k.pay_rates,
                                   k.amounts)
               AS r (offer_key, transaction_id, transaction_date, rate_key, pay_rate, amount)
         WHERE r.offer_key = $3),
    now_tx AS (
        SELECT x.transaction_id, min(x.transaction_date) AS transaction_date, sum(x.amount) AS amount,
               CASE WHEN count(*) = 1 THEN min(x.rate_key) END AS rate_key,
               array_agg(DISTINCT ROW(x.rate_key, x.pay_rate)) AS rates,
               array_agg(ROW(x.rate_key, x.pay_rate, x.amount) ORDER BY x.rate_key, x.pay_rate, x.amount) AS rows_
          FROM now_rows AS x GROUP BY x.transaction_id),
    before_tx AS (
        SELECT x.transaction_id, sum(x.amount) AS amount,
               CASE WHEN count(*) = 1 THEN min(x.rate_key) END AS rate_key,
               array_agg(DISTINCT ROW(x.rate_key, x.pay_rate)) AS rates,
               array_agg(ROW(x.rate_key, x.pay_rate, x.amount) ORDER BY x.rate_key, x.pay_rate, x.amount) AS rows_
          FROM before_rows AS x GROUP BY x.transaction_id)
    SELECT COALESCE(n.transaction_id, b.transaction_id),
           b.rate_key, b.amount, n.rate_key, n.amount,
           COALESCE(n.amount, 0) - COALESCE(b.amount, 0),
           CASE WHEN b.transaction_id IS NULL
                     THEN CASE WHEN $4 IS NULL OR n.transaction_date > $5 THEN 'new' ELSE 'late' END
                WHEN n.transaction_id IS NULL THEN 'removed'
                WHEN n.rates <> b.rates THEN 'rate'
                ELSE 'amount' END
      FROM now_tx AS n
      FULL JOIN before_tx AS b ON b.transaction_id = n.transaction_id
     WHERE n.transaction_id IS NULL OR b.transaction_id IS NULL
        OR n.amount <> b.amount OR n.rows_ <> b.rows_
    UNION ALL
    SELECT NULL, NULL, $6, NULL, NULL, -$6, 'not_kept'
     WHERE $4 IS NOT NULL AND NOT EXISTS (SELECT FROM before_kept)
$function$;
COMMENT ON FUNCTION incentives_internal.statement_line_changes(bigint, text, text, bigint, date, numeric) IS
  'statement_line_changes helper: one line''s rows against the previous line''s, per transaction, where the amount or the rows differ, with the reason (new, late, removed, rate, amount; not_kept for a previous line written before 0.5.0)';

CREATE OR REPLACE VIEW incentives.statement_line_changes WITH (security_invoker = true) AS
SELECT l.statement_id, l.participant_key, l.offer_key,
       c.transaction_id, c.previous_rate_key, c.previous_amount, c.rate_key, c.amount, c.change, c.reason,
       p.statement_id AS previous_statement_id
  FROM incentives.statement_lines AS l
  JOIN incentives.statement_kept_rows AS k
    ON k.statement_id = l.statement_id AND k.participant_key = l.participant_key
  LEFT JOIN LATERAL (
        SELECT b.statement_id, s.statement_date, b.earned_to_date
          FROM incentives.statement_lines AS b
          JOIN incentives.statements AS s ON s.statement_id = b.statement_id
         WHERE b.participant_key = l.participant_key AND b.offer_key = l.offer_key
           AND b.statement_id < l.statement_id
           AND s.reverses IS NULL
           AND NOT EXISTS (SELECT FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
         ORDER BY b.statement_id DESC
         LIMIT 1) AS p ON true
 CROSS JOIN LATERAL incentives_internal.statement_line_changes(l.statement_id, l.participant_key, l.offer_key,
                                                              p.statement_id, p.statement_date, p.earned_to_date) AS c;
COMMENT ON VIEW incentives.statement_line_changes IS
  'Why each statement line settle wrote moved: per transaction, its rows against the pair''s previous line''s (the latest earlier line of the participant and offer, voided statements and reversals left out), where the summed amount or the rows differ; the changes of a line add up to its earned_to_date minus the previous line''s';
COMMENT ON COLUMN incentives.statement_line_changes.statement_id IS 'The statement';
COMMENT ON COLUMN incentives.statement_line_changes.participant_key IS 'The line''s participant';
COMMENT ON COLUMN incentives.statement_line_changes.offer_key IS 'The line''s offer';
COMMENT ON COLUMN incentives.statement_line_changes.transaction_id IS 'The transaction (NULL on a row of reason not_kept)';
COMMENT ON COLUMN incentives.statement_line_changes.previous_rate_key IS 'Its rate key on the previous line when it had one row there; NULL otherwise or when absent';
COMMENT ON COLUMN incentives.statement_line_changes.previous_amount IS 'What its rows summed on the previous line (NULL: absent)';
COMMENT ON COLUMN incentives.statement_line_changes.rate_key IS 'Its rate key on this line when it has one row here; NULL otherwise or when absent';
COMMENT ON COLUMN incentives.statement_line_changes.amount IS 'What its rows sum on this line (NULL: absent)';
COMMENT ON COLUMN incentives.statement_line_changes.change IS 'amount - previous_amount (an absent side counts 0)';
COMMENT ON COLUMN incentives.statement_line_changes.reason IS 'new (absent before, dated after the previous line''s statement, or the pair''s first line), late (absent before, dated on or before it), removed (absent now), rate (the set of its rows'' rate keys and pay rates differs), amount (the same set, another amount); not_kept: the previous line was written before 0.5.0 and kept no rows (previous_amount its earned_to_date)';
COMMENT ON COLUMN incentives.statement_line_changes.previous_statement_id IS 'The statement of the previous line (NULL: the pair''s first line)';

------------------------------------------------------------------------
-- Closing a season (docs/lifecycle.md, Why a line moved, holdbacks, minimums and closing a season)
------------------------------------------------------------------------

CREATE OR REPLACE VIEW incentives.closed_offer_changes WITH (security_invoker = true) AS
WITH closed AS (
    SELECT c.offer_key, c.final_statement_id FROM incentives.closed_offers AS c),
final_lines AS (
    SELECT l.participant_key, l.offer_key, l.earned_to_date
      FROM incentives.statement_lines AS l
      JOIN closed AS c ON c.offer_key = l.offer_key AND c.final_statement_id = l.statement_id),
earned_now AS (
    SELECT e.participant_key, e.offer_key, round(sum(e.incentive_amount), 2) AS amount
      FROM incentives.earnings AS e
      JOIN closed AS c ON c.offer_key = e.offer_key
     GROUP BY e.participant_key, e.offer_key)
SELECT COALESCE(f.participant_key, n.participant_key) AS participant_key,
       c.offer_key,
       c.final_statement_id,
       COALESCE(f.earned_to_date, 0.00) AS final_earned,
       COALESCE(n.amount, 0.00)         AS earned_now,
       COALESCE(n.amount, 0.00) - COALESCE(f.earned_to_date, 0.00) AS change
  FROM final_lines AS f
  FULL JOIN earned_now AS n ON n.participant_key = f.participant_key AND n.offer_key = f.offer_key
  JOIN closed AS c ON c.offer_key = COALESCE(f.offer_key, n.offer_key)
 WHERE COALESCE(n.amount, 0.00) <> COALESCE(f.earned_to_date, 0.00);
COMMENT ON VIEW incentives.closed_offer_changes IS
  'Where a closed offer moved since it closed: per participant, its final line''s earned_to_date against its earnings in the materialized incentives.earnings (as of their last refresh); a late transaction, a late return, an edited offer. incentives.reopen_offer lets the next statement settle it';
COMMENT ON COLUMN incentives.closed_offer_changes.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.closed_offer_changes.offer_key IS 'The closed offer';
COMMENT ON COLUMN incentives.closed_offer_changes.final_statement_id IS 'The statement that closed it';
COMMENT ON COLUMN incentives.closed_offer_changes.final_earned IS 'The participant''s final line''s earned_to_date (0: no final line)';
COMMENT ON COLUMN incentives.closed_offer_changes.earned_now IS 'Its earnings for the offer in incentives.earnings';
COMMENT ON COLUMN incentives.closed_offer_changes.change IS 'earned_now - final_earned';

-- offer_warnings' closed_offer_changed (docs/reference.md, Offer
-- warnings): per closed offer, how many participants moved and by how much
-- in all, of the rows of closed_offer_changes the caller sees.  Nothing
-- for a caller that may not read what the view reads (a role that checks
-- the program book without the ledger gets its other warnings).
CREATE OR REPLACE FUNCTION incentives_internal.closed_offer_change_totals()
RETURNS TABLE (offer_key text, final_statement_id bigint, participants integer, total_change numeric)
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF NOT (has_table_privilege('incentives.closed_offer_changes', 'SELECT')
            AND has_table_privilege('incentives.closed_offers', 'SELECT')
            AND has_table_privilege('incentives.statement_lines', 'SELECT')
            AND has_table_privilege('incentives.earnings', 'SELECT')
            AND has_table_privilege('incentives.offer_closings', 'SELECT')
            AND has_table_privilege('incentives.offer_reopenings', 'SELECT')) THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT c.offer_key, max(c.final_statement_id), count(*)::integer, sum(c.change)
      FROM incentives.closed_offer_changes AS c
     GROUP BY c.offer_key;
END
$function$;
COMMENT ON FUNCTION incentives_internal.closed_offer_change_totals() IS
  'offer_warnings helper (closed_offer_changed): per closed offer with rows in incentives.closed_offer_changes, the statement that closed it, the participants and the sum of their change (the rows the caller sees); none when the caller may not read the views, the statement lines, the earnings or the closings';

CREATE OR REPLACE FUNCTION incentives.reopen_offer(offer_key text, reason text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_state record;
    v_id    bigint;
BEGIN
    PERFORM incentives_internal.refuse_read_only('reopen_offer');
    IF reopen_offer.reason IS NULL OR btrim(reopen_offer.reason) = '' THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('a reason is required to reopen offer "%s"', COALESCE(reopen_offer.offer_key, '<NULL>')),
            '', 'Say why: it is logged in incentives.offer_reopenings.');
    END IF;
    -- serialized with settle: the next statement sees the reopening whole
    LOCK TABLE incentives.statements IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency
    SELECT * INTO v_state FROM incentives_internal.offer_closing_states() AS s
     WHERE s.offer_key = reopen_offer.offer_key;
    IF NOT FOUND OR v_state.state <> 'closed' THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('offer "%s" is not closed%s', COALESCE(reopen_offer.offer_key, '<NULL>'),
                   CASE WHEN FOUND THEN format(' (reopened since statement %s closed it)', v_state.statement_id) ELSE '' END),
            '', 'A statement closes an offer through settle''s final_offer_keys; incentives.closed_offers lists the closed ones.');
    END IF;
    INSERT INTO incentives.offer_reopenings (offer_key, reason, statement_id)
    VALUES (v_state.offer_key, reopen_offer.reason, v_state.statement_id)
    RETURNING reopening_id INTO v_id;
    RAISE NOTICE 'reopen_offer: offer "%" reopened (reopening %): the next statement writes its lines as final lines',
                 v_state.offer_key, v_id;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives.reopen_offer(text, text) IS
  'Reopens a closed offer on purpose (a non-blank reason, logged in incentives.offer_reopenings): the next statement that covers it writes its lines again, as final lines (nothing held back, no minimum), and a statement of every participant closes it again. Returns the reopening_id';

DROP TRIGGER IF EXISTS statement_kept_rows_append_only ON incentives.statement_kept_rows;
CREATE TRIGGER statement_kept_rows_append_only
    BEFORE UPDATE OR DELETE ON incentives.statement_kept_rows
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'Settlement statements are a ledger: no role may change or remove them.',
        'Corrections are the next statement''s business: CALL incentives.settle again.');
COMMENT ON TRIGGER statement_kept_rows_append_only ON incentives.statement_kept_rows IS
  'The rows of statement lines are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS statement_kept_rows_no_truncate ON incentives.statement_kept_rows;
CREATE TRIGGER statement_kept_rows_no_truncate
    BEFORE TRUNCATE ON incentives.statement_kept_rows
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'Settlement statements are a ledger: no role may change or remove them.',
        'Corrections are the next statement''s business: CALL incentives.settle again.');
COMMENT ON TRIGGER statement_kept_rows_no_truncate ON incentives.statement_kept_rows IS
  'The rows of statement lines are append-only: TRUNCATE is refused for every role';

DROP TRIGGER IF EXISTS offer_closings_append_only ON incentives.offer_closings;
CREATE TRIGGER offer_closings_append_only
    BEFORE UPDATE OR DELETE ON incentives.offer_closings
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'The closings of offers are a log: no role may change or remove them.',
        'To settle a closed offer again: SELECT incentives.reopen_offer(offer_key, reason).');
COMMENT ON TRIGGER offer_closings_append_only ON incentives.offer_closings IS
  'Offer closings are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS offer_closings_no_truncate ON incentives.offer_closings;
CREATE TRIGGER offer_closings_no_truncate
    BEFORE TRUNCATE ON incentives.offer_closings
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'The closings of offers are a log: no role may change or remove them.',
        'To settle a closed offer again: SELECT incentives.reopen_offer(offer_key, reason).');
COMMENT ON TRIGGER offer_closings_no_truncate ON incentives.offer_closings IS
  'Offer closings are append-only: TRUNCATE is refused for every role';

DROP TRIGGER IF EXISTS offer_reopenings_append_only ON incentives.offer_reopenings;
CREATE TRIGGER offer_reopenings_append_only
    BEFORE UPDATE OR DELETE ON incentives.offer_reopenings
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'The reopenings of offers are a log: no role may change or remove them.',
        'A statement of every participant closes a reopened offer again.');
COMMENT ON TRIGGER offer_reopenings_append_only ON incentives.offer_reopenings IS
  'Offer reopenings are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS offer_reopenings_no_truncate ON incentives.offer_reopenings;
CREATE TRIGGER offer_reopenings_no_truncate
    BEFORE TRUNCATE ON incentives.offer_reopenings
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'The reopenings of offers are a log: no role may change or remove them.',
        'A statement of every participant closes a reopened offer again.');
COMMENT ON TRIGGER offer_reopenings_no_truncate ON incentives.offer_reopenings IS
  'Offer reopenings are append-only: TRUNCATE is refused for every role';

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
                                             'amount_due', l.amount_due,
                                             'kind', l.kind,
                                             'offer_version', l.offer_version,
                                             'payable_to_date', l.payable_to_date,
                                             'held_back', l.held_back,
                                             'final', l.final)
                          ORDER BY l.offer_key COLLATE "C")
                FILTER (WHERE l.offer_key IS NOT NULL), '[]'::jsonb) AS lines,
       s.created_at,
       s.created_by,
       COALESCE(s.transactions, 'incentives.transactions') AS transactions,
       s.reverses,
       l.currency
  FROM incentives.statements AS s
  LEFT JOIN incentives.statement_lines AS l ON l.statement_id = s.statement_id
 WHERE COALESCE(l.participant_key, s.participant_key) IS NOT NULL
 GROUP BY s.statement_id, s.statement_date, COALESCE(l.participant_key, s.participant_key),
          s.created_at, s.created_by, s.transactions, s.reverses, l.currency;
COMMENT ON VIEW incentives.participant_statements IS
  'One statement per participant and currency: its totals and its lines (a JSON array, one object per offer), what finance sends the participant; the lines of offers in two currencies make two rows, never one total';
COMMENT ON COLUMN incentives.participant_statements.statement_id IS 'The statement';
COMMENT ON COLUMN incentives.participant_statements.statement_date IS 'Earnings settled through this date';
COMMENT ON COLUMN incentives.participant_statements.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.participant_statements.offers IS 'Lines (offers) on the participant''s statement';
COMMENT ON COLUMN incentives.participant_statements.earned_to_date IS 'Sum of the lines'' earned_to_date';
COMMENT ON COLUMN incentives.participant_statements.settled_before IS 'Sum of the lines'' settled_before';
COMMENT ON COLUMN incentives.participant_statements.amount_due IS 'What is due to the participant (negative: owed back)';
COMMENT ON COLUMN incentives.participant_statements.lines IS 'The lines: [{offer_key, earned_to_date, settled_before, amount_due, kind, offer_version, payable_to_date, held_back, final}] in offer order';
COMMENT ON COLUMN incentives.participant_statements.created_at IS 'When the statement was written';
COMMENT ON COLUMN incentives.participant_statements.created_by IS 'Who ran incentives.settle';
COMMENT ON COLUMN incentives.participant_statements.transactions IS 'The relation the statement''s earnings were calculated from';
COMMENT ON COLUMN incentives.participant_statements.reverses IS 'The statement this one reverses (incentives.void_statement); NULL for a settlement';
COMMENT ON COLUMN incentives.participant_statements.currency IS 'The currency of the lines and totals (their offers''); NULL: offers without a currency, or a statement without lines for the participant';

CREATE OR REPLACE VIEW incentives.settlement_balances WITH (security_invoker = true) AS
SELECT l.participant_key,
       l.offer_key,
       sum(l.amount_due)  AS settled_total,
       count(*)           AS statements,
       (array_agg(s.statement_id ORDER BY s.statement_date DESC, s.statement_id DESC))[1]   AS last_statement_id,
       max(s.statement_date)                                                                AS last_statement_date,
       (array_agg(l.amount_due ORDER BY s.statement_date DESC, s.statement_id DESC))[1]     AS last_amount_due,
       (array_agg(l.kind ORDER BY s.statement_date DESC, s.statement_id DESC))[1]           AS last_kind,
       (array_agg(l.offer_version ORDER BY s.statement_date DESC, s.statement_id DESC))[1]  AS last_offer_version,
       l.currency
  FROM incentives.statement_lines AS l
  JOIN incentives.statements AS s ON s.statement_id = l.statement_id
 -- a voided statement and its reversal cancel out
 WHERE s.reverses IS NULL
   AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
 -- (an offer's lines share its currency: it cannot change once settled)
 GROUP BY l.participant_key, l.offer_key, l.currency;
COMMENT ON VIEW incentives.settlement_balances IS
  'Per participant and offer: everything settled so far and the last statement (a voided statement and its reversal left out: they cancel out)';
COMMENT ON COLUMN incentives.settlement_balances.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.settlement_balances.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.settlement_balances.settled_total IS 'Sum of amount_due over all its lines (= earned_to_date of the last one)';
COMMENT ON COLUMN incentives.settlement_balances.statements IS 'Statements with a line for it';
COMMENT ON COLUMN incentives.settlement_balances.last_statement_id IS 'The latest statement with a line for it';
COMMENT ON COLUMN incentives.settlement_balances.last_statement_date IS 'Its statement_date';
COMMENT ON COLUMN incentives.settlement_balances.last_amount_due IS 'What the latest statement settled (negative: a clawback)';
COMMENT ON COLUMN incentives.settlement_balances.last_kind IS 'The latest line''s kind: unchanged, below_minimum, clawback, payment or true_up';
COMMENT ON COLUMN incentives.settlement_balances.last_offer_version IS 'The offer''s version when the latest line was written';
COMMENT ON COLUMN incentives.settlement_balances.currency IS 'The currency of the amounts (the offer''s; NULL: none)';

CREATE OR REPLACE VIEW incentives.unsettled_earnings WITH (security_invoker = true) AS
WITH accrued AS (
    SELECT e.participant_key, e.offer_key, e.currency,
           sum(e.incentive_amount) AS amount,
           max(e.calculated_at)    AS calculated_at
      FROM incentives.earnings AS e
     GROUP BY e.participant_key, e.offer_key, e.currency),
settled AS (
    SELECT l.participant_key, l.offer_key, l.currency,
           sum(l.amount_due)     AS amount,
           max(s.statement_date) AS last_statement_date
      FROM incentives.statement_lines AS l
      JOIN incentives.statements AS s ON s.statement_id = l.statement_id
     WHERE s.reverses IS NULL
       AND NOT EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id)
     GROUP BY l.participant_key, l.offer_key, l.currency)
SELECT COALESCE(a.participant_key, s.participant_key)  AS participant_key,
       COALESCE(a.offer_key, s.offer_key)              AS offer_key,
       COALESCE(a.amount, 0.00)                        AS accrued,
       COALESCE(s.amount, 0.00)                        AS settled,
       COALESCE(a.amount, 0.00) - COALESCE(s.amount, 0.00) AS unsettled,
       s.last_statement_date,
       a.calculated_at,
       CASE WHEN a.participant_key IS NOT NULL THEN a.currency ELSE s.currency END AS currency
  FROM accrued AS a
  FULL JOIN settled AS s
    ON s.participant_key = a.participant_key AND s.offer_key = a.offer_key
   AND s.currency IS NOT DISTINCT FROM a.currency;
COMMENT ON VIEW incentives.unsettled_earnings IS
  'Per participant and offer: accrued earnings (the materialized incentives.earnings, all dates) against what statements settled; unsettled is what the next statements will pay (negative: claw back)';
COMMENT ON COLUMN incentives.unsettled_earnings.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.unsettled_earnings.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.unsettled_earnings.accrued IS 'Sum of incentive_amount in incentives.earnings (as of its last refresh)';
COMMENT ON COLUMN incentives.unsettled_earnings.settled IS 'Sum of amount_due of its statement lines';
COMMENT ON COLUMN incentives.unsettled_earnings.unsettled IS 'accrued - settled';
COMMENT ON COLUMN incentives.unsettled_earnings.last_statement_date IS 'Its latest statement''s date (NULL: never settled)';
COMMENT ON COLUMN incentives.unsettled_earnings.calculated_at IS 'When its materialized earnings were calculated (NULL: none)';
COMMENT ON COLUMN incentives.unsettled_earnings.currency IS 'The currency of the amounts (the offer''s; NULL: none): earnings and lines of another currency are another row, never netted';

------------------------------------------------------------------------
-- Removing a settled offer (docs/lifecycle.md, Removing a settled offer)
--
-- An offer some participant has a settled total other than zero for
-- cannot be removed by accident: the next statement would claw back all
-- of it.  A DELETE, or a change of offer_key, is checked at the end of the
-- transaction (a deferred constraint trigger: a delete and re-insert of the
-- same offer in one transaction finds it there again and passes); a
-- TRUNCATE, which has no row triggers, is refused at once when any offer
-- in the table has settled money.  Refused with 55000, the settled total
-- and the latest statement.  incentives.remove_settled_offer(offer_key,
-- reason) is the one way to remove such an offer on purpose: it logs the
-- removal in incentives.offer_removals and the check lets that
-- transaction's delete through.  The check counts the statement lines the
-- removing role may read (row-level security applies to it as to every
-- read: an offer admin reads them all).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_settled(offer_key text)
RETURNS TABLE (settled_total numeric, participants integer, last_statement_date date)
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT COALESCE(sum(p.total), 0.00), count(*)::integer, max(p.latest)
      FROM (SELECT l.participant_key, sum(l.amount_due) AS total,
                   -- a voided statement and its reversal hold no date
                   max(s.statement_date) FILTER (WHERE s.reverses IS NULL AND NOT EXISTS (
                         SELECT 1 FROM incentives.statements AS r WHERE r.reverses = s.statement_id))
                     AS latest
              FROM incentives.statement_lines AS l
              JOIN incentives.statements AS s ON s.statement_id = l.statement_id
             WHERE l.offer_key = $1
             GROUP BY l.participant_key
            HAVING sum(l.amount_due) <> 0) AS p
$function$;
COMMENT ON FUNCTION incentives_internal.offer_settled(text) IS
  'The offer''s settled money: the sum of amount_due over the participants whose settled total for it is not zero, how many they are, and their latest statement date (0.00, 0, NULL: nothing settled)';

CREATE OR REPLACE FUNCTION incentives_internal.offer_removal_refuse(offer_key text, how text)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v record;
BEGIN
    SELECT * INTO v FROM incentives_internal.offer_settled(offer_removal_refuse.offer_key);
    IF v.participants > 0 THEN
        PERFORM incentives_internal.raise_error(
            '55000',
            format('offer "%s" cannot be removed (%s): %s settled for it, the latest statement %s',
                   offer_removal_refuse.offer_key, how, v.settled_total, v.last_statement_date),
            format('Participants with a settled balance for it: %s. The next statement would claw it all back.', v.participants),
            format('To stop it paying from a date, change its rates to zero from that date (a prospective change). To remove it on purpose and claw its payments back: SELECT incentives.remove_settled_offer(%L, reason).',
                   offer_removal_refuse.offer_key));
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offer_removal_refuse(text, text) IS
  'Raises 55000 when the offer has settled money (incentives_internal.offer_settled): the total, the latest statement, and the hint of a prospective change to zero';

CREATE OR REPLACE FUNCTION incentives_internal.offers_settled_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN   -- TRUNCATE: every offer goes
        PERFORM incentives_internal.offer_removal_refuse(o.offer_key, 'TRUNCATE')
           FROM incentives.offers AS o;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.offer_key IS NOT DISTINCT FROM NEW.offer_key THEN
        RETURN NULL;
    END IF;
    -- at the end of the transaction: the offer back (a delete and
    -- re-insert), or removed on purpose in this transaction, passes
    IF EXISTS (SELECT 1 FROM incentives.offers AS o WHERE o.offer_key = OLD.offer_key)
       OR EXISTS (SELECT 1 FROM incentives.offer_removals AS r
                   WHERE r.offer_key = OLD.offer_key
                     AND r.removed_in = pg_current_xact_id() AND r.removed_at = now()) THEN
        RETURN NULL;
    END IF;
    PERFORM incentives_internal.offer_removal_refuse(
              OLD.offer_key, CASE WHEN TG_OP = 'DELETE' THEN 'DELETE'
                                  ELSE format('its offer_key changed to "%s"', NEW.offer_key) END);
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_settled_check() IS
  'Trigger: refuses removing an offer with settled money (55000): a DELETE or a change of offer_key at the end of the transaction, unless the offer is there again or was removed by incentives.remove_settled_offer; a TRUNCATE at once';

DROP TRIGGER IF EXISTS offers_settled_check ON incentives.offers;
CREATE CONSTRAINT TRIGGER offers_settled_check
    AFTER DELETE OR UPDATE OF offer_key ON incentives.offers
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_settled_check();
COMMENT ON TRIGGER offers_settled_check ON incentives.offers IS
  'At the end of the transaction: an offer deleted or re-keyed that has settled money and is not there again is refused (55000)';

DROP TRIGGER IF EXISTS offers_settled_truncate ON incentives.offers;
CREATE TRIGGER offers_settled_truncate
    BEFORE TRUNCATE ON incentives.offers
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.offers_settled_check();
COMMENT ON TRIGGER offers_settled_truncate ON incentives.offers IS
  'TRUNCATE of the offers is refused (55000) while any of them has settled money';

CREATE OR REPLACE FUNCTION incentives.remove_settled_offer(offer_key text, reason text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_offer    incentives.offers;
    v_settled  record;
    v_id       bigint;
BEGIN
    PERFORM incentives_internal.refuse_read_only('remove_settled_offer');
    IF remove_settled_offer.reason IS NULL OR btrim(remove_settled_offer.reason) = '' THEN
        -- (a NULL key is written <NULL>, as RAISE writes a NULL)
        PERFORM incentives_internal.raise_error(
            '22023',
            format('a reason is required to remove offer "%s"', COALESCE(remove_settled_offer.offer_key, '<NULL>')),
            '', 'Say why: it is logged in incentives.offer_removals.');
    END IF;
    SELECT * INTO v_offer FROM incentives.offers AS o
     WHERE o.offer_key = remove_settled_offer.offer_key FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM incentives_internal.raise_error(
            'P0002', format('offer "%s" does not exist', COALESCE(remove_settled_offer.offer_key, '<NULL>')),
            '', '');
    END IF;
    SELECT * INTO v_settled FROM incentives_internal.offer_settled(remove_settled_offer.offer_key);
    INSERT INTO incentives.offer_removals (offer_key, reason, settled_total, participants,
                                           last_statement_date, document)
    VALUES (v_offer.offer_key, remove_settled_offer.reason, v_settled.settled_total,
            v_settled.participants, v_settled.last_statement_date, v_offer.document)
    RETURNING removal_id INTO v_id;
    DELETE FROM incentives.offers AS o WHERE o.offer_key = v_offer.offer_key;
    -- a closed offer is reopened, so that the next statement claws back
    -- (docs/lifecycle.md, Why a line moved, holdbacks, minimums and closing a season)
    INSERT INTO incentives.offer_reopenings (offer_key, reason, statement_id)
    SELECT s.offer_key, remove_settled_offer.reason, s.statement_id
      FROM incentives_internal.offer_closing_states() AS s
     WHERE s.offer_key = v_offer.offer_key AND s.state = 'closed';
    RAISE NOTICE 'remove_settled_offer: offer "%" removed (removal %): % settled for % participants will be clawed back by the next statement',
                 v_offer.offer_key, v_id, v_settled.settled_total, v_settled.participants;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives.remove_settled_offer(text, text) IS
  'Removes an offer on purpose, settled money and all: logs who, when, why and what it had settled in incentives.offer_removals and deletes it, reopening it when closed (incentives.offer_reopenings, the same reason); the next statement claws its settled total back. Returns the removal_id';

DROP TRIGGER IF EXISTS offer_removals_append_only ON incentives.offer_removals;
CREATE TRIGGER offer_removals_append_only
    BEFORE UPDATE OR DELETE ON incentives.offer_removals
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.append_only(
        'The removals of settled offers are a log: no role may change or remove them.',
        'Nothing to correct: an offer removed by mistake is inserted again.');
COMMENT ON TRIGGER offer_removals_append_only ON incentives.offer_removals IS
  'Offer removals are append-only: UPDATE and DELETE are refused for every role';

DROP TRIGGER IF EXISTS offer_removals_no_truncate ON incentives.offer_removals;
CREATE TRIGGER offer_removals_no_truncate
    BEFORE TRUNCATE ON incentives.offer_removals
    FOR EACH STATEMENT EXECUTE FUNCTION incentives_internal.append_only(
        'The removals of settled offers are a log: no role may change or remove them.',
        'Nothing to correct: an offer removed by mistake is inserted again.');
COMMENT ON TRIGGER offer_removals_no_truncate ON incentives.offer_removals IS
  'Offer removals are append-only: TRUNCATE is refused for every role';

------------------------------------------------------------------------
-- Voiding a statement dated in the future (docs/lifecycle.md, Statements
-- dated in the future)
--
-- A statement dated after today (written before 0.4.0 refused such a date)
-- would refuse every later statement of an earlier date.  void_statement
-- appends its reversal: a statement of the same date whose lines negate
-- its lines (settled_before the pair's settled total, amount_due the
-- opposite of the voided line's), reverses naming it and reason saying
-- why.  The pair's settled total is then what it was; a voided statement
-- and its reversal hold no date for the forward-only rule and are left
-- out of the balances.  Serialized with settle (the same lock); nothing is
-- deleted.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.void_statement(statement_id bigint, reason text)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_old incentives.statements;
    v_id  bigint;
    v_due text;
BEGIN
    PERFORM incentives_internal.refuse_read_only('void_statement');
    IF void_statement.reason IS NULL OR btrim(void_statement.reason) = '' THEN
        -- (a NULL id is written <NULL>, as RAISE writes a NULL)
        PERFORM incentives_internal.raise_error(
            '22023',
            format('a reason is required to void statement %s', COALESCE(void_statement.statement_id::text, '<NULL>')),
            '', '');
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM incentives_internal.raise_error(
            '25000',
            format('incentives.void_statement needs isolation level READ COMMITTED, not %s',
                   upper(current_setting('transaction_isolation'))),
            '', '');
    END IF;
    LOCK TABLE incentives.statements IN SHARE ROW EXCLUSIVE MODE;  -- docs/operations.md, Concurrency
    SELECT * INTO v_old FROM incentives.statements AS s WHERE s.statement_id = void_statement.statement_id;
    IF NOT FOUND THEN
        PERFORM incentives_internal.raise_error(
            'P0002',
            format('statement %s does not exist', COALESCE(void_statement.statement_id::text, '<NULL>')), '', '');
    END IF;
    IF v_old.reverses IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('statement %s is the reversal of statement %s', v_old.statement_id, v_old.reverses),
            '', '');
    END IF;
    IF EXISTS (SELECT 1 FROM incentives.statements AS r WHERE r.reverses = v_old.statement_id) THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('statement %s is already voided', v_old.statement_id), '', '');
    END IF;
    IF v_old.statement_date <= current_date THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('statement %s is dated %s, not after today: only a statement dated in the future is voided',
                   v_old.statement_id, v_old.statement_date),
            '', 'Corrections of the past are the next statement''s business: CALL incentives.settle again.');
    END IF;
    INSERT INTO incentives.statements (statement_date, participant_key, transactions, reverses, reason)
    VALUES (v_old.statement_date, v_old.participant_key, v_old.transactions, v_old.statement_id, void_statement.reason)
    RETURNING statement_id INTO v_id;
    -- (a reversal holds nothing back: payable_to_date is its
    -- earned_to_date, and its kind follows from amount_due as any line's)
    INSERT INTO incentives.statement_lines (statement_id, participant_key, offer_key,
                                            earned_to_date, settled_before, amount_due, offer_version,
                                            currency, payable_to_date, kind)
    SELECT v_id, l.participant_key, l.offer_key,
           p.settled - l.amount_due, p.settled, -l.amount_due,
           (SELECT v.version FROM incentives.offer_versions AS v
             WHERE v.offer_key = l.offer_key AND v.valid_to IS NULL),
           l.currency, p.settled - l.amount_due,
           CASE WHEN l.amount_due > 0 THEN 'clawback'
                WHEN p.settled = 0 THEN 'payment'
                ELSE 'true_up' END
      FROM incentives.statement_lines AS l
      CROSS JOIN LATERAL (SELECT sum(o.amount_due) AS settled FROM incentives.statement_lines AS o
                           WHERE o.participant_key = l.participant_key AND o.offer_key = l.offer_key) AS p
     WHERE l.statement_id = v_old.statement_id AND l.amount_due <> 0
     ORDER BY l.participant_key COLLATE "C", l.offer_key COLLATE "C";
    v_due := incentives_internal.amounts_by_currency(
                 ARRAY(SELECT l.amount_due FROM incentives.statement_lines AS l WHERE l.statement_id = v_id),
                 ARRAY(SELECT l.currency FROM incentives.statement_lines AS l WHERE l.statement_id = v_id));
    RAISE NOTICE 'void_statement: statement % reverses statement % of %: % due', v_id, v_old.statement_id, v_old.statement_date, v_due;
    RETURN v_id;
END
$function$;
COMMENT ON FUNCTION incentives.void_statement(bigint, text) IS
  'Voids a statement dated after today by appending its reversal (the same date, every line negated, reverses and reason recorded); the voided statement and its reversal then hold no date and leave the balances. Returns the reversal''s statement_id';

------------------------------------------------------------------------
-- Previewing a change of an offer (docs/lifecycle.md, Previewing a change)
--
-- preview_offer_change stores the document in a subtransaction (every
-- check of a write applies, with its warnings), calculates the offer's
-- earnings there, and rolls the subtransaction back: nothing is stored,
-- no version written, no lock kept.  Per participant it compares them with
-- the earnings under the stored offer and with what was settled for it.
-- Without effective_from the change previewed is retrospective, as an
-- UPDATE of the offer is; with it, prospective, as incentives.change_rates
-- makes it (docs/lifecycle.md, Prospective rate changes).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_earned(offer_key text, transactions regclass,
                                                            through_date date)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT COALESCE(jsonb_object_agg(e.participant_key, e.amount), '{}')
      FROM (SELECT c.participant_key, sum(c.incentive_amount) AS amount
              FROM incentives.incentive_calculate(offer_keys => ARRAY[$1], transactions => $2,
                                                  through_date => $3) AS c
             GROUP BY c.participant_key) AS e
$function$;
COMMENT ON FUNCTION incentives_internal.offer_earned(text, regclass, date) IS
  'preview_offer_change helper: {participant_key: earned} under the offer as stored, over the transactions dated through through_date';

CREATE OR REPLACE FUNCTION incentives.preview_offer_change(
    document       jsonb,
    effective_from date     DEFAULT NULL,
    transactions   regclass DEFAULT 'incentives.transactions',
    through_date   date     DEFAULT NULL)
RETURNS SETOF incentives.offer_change_row
ROWS 100
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_document jsonb := preview_offer_change.document;
    v_txns     regclass := preview_offer_change.transactions;
    v_through  date := preview_offer_change.through_date;
    v_key      text;
    v_now      jsonb;
    v_after    jsonb;
BEGIN
    IF v_document IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'document must not be NULL', '', '');
    END IF;
    IF v_txns IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'transactions must not be NULL', '', '');
    END IF;
    IF jsonb_typeof(v_document) = 'object' AND jsonb_typeof(v_document -> 'offer_key') = 'string' THEN
        v_key := v_document ->> 'offer_key';
    END IF;

    -- the earnings under the stored offer (none when it does not exist)
    IF v_key IS NOT NULL AND EXISTS (SELECT 1 FROM incentives.offers AS o WHERE o.offer_key = v_key) THEN
        v_now := incentives_internal.offer_earned(v_key, v_txns, v_through);
    END IF;

    -- the earnings under the document, stored in a subtransaction that is
    -- rolled back (an invalid document is refused by the write's checks):
    -- from effective_from on, as incentives.change_rates stores it
    BEGIN
        IF preview_offer_change.effective_from IS NULL THEN
            INSERT INTO incentives.offers (document) VALUES (v_document)
                ON CONFLICT (offer_key) DO UPDATE SET document = EXCLUDED.document;
        ELSE
            PERFORM incentives.change_rates(v_key, preview_offer_change.effective_from, v_document);
        END IF;
        v_key := v_document ->> 'offer_key';
        v_after := incentives_internal.offer_earned(v_key, v_txns, v_through);
        RAISE EXCEPTION 'preview_offer_change: rolled back' USING ERRCODE = 'IP000';
    EXCEPTION WHEN SQLSTATE 'IP000' THEN
        NULL;
    END;

    RETURN QUERY
    WITH now_earned AS (
        SELECT n.key AS participant_key, n.value::numeric AS amount FROM jsonb_each_text(COALESCE(v_now, '{}')) AS n),
    after_earned AS (
        SELECT a.key AS participant_key, a.value::numeric AS amount FROM jsonb_each_text(v_after) AS a),
    settled_total AS (
        SELECT l.participant_key, sum(l.amount_due) AS amount
          FROM incentives.statement_lines AS l
         WHERE l.offer_key = v_key
         GROUP BY l.participant_key),
    figures AS (
        SELECT p.participant_key,
               round(COALESCE(n.amount, 0), 2) AS earned_now,
               round(COALESCE(a.amount, 0), 2) AS earned_after,
               round(COALESCE(s.amount, 0), 2) AS settled
          FROM (SELECT x.participant_key FROM now_earned AS x
                UNION SELECT x.participant_key FROM after_earned AS x
                UNION SELECT x.participant_key FROM settled_total AS x) AS p
          LEFT JOIN now_earned AS n ON n.participant_key = p.participant_key
          LEFT JOIN after_earned AS a ON a.participant_key = p.participant_key
          LEFT JOIN settled_total AS s ON s.participant_key = p.participant_key)
    SELECT f.participant_key, f.earned_now, f.earned_after, f.settled,
           f.earned_after - f.earned_now, f.earned_after - f.settled
      FROM figures AS f
     WHERE f.earned_now <> 0 OR f.earned_after <> 0 OR f.settled <> 0
     ORDER BY f.participant_key COLLATE "C";
END
$function$;
COMMENT ON FUNCTION incentives.preview_offer_change(jsonb, date, regclass, date) IS
  'What storing an offer document would change, storing nothing: per participant earned_now (the stored offer), earned_after (the document), settled (the statements'' total for the offer), change (earned_after - earned_now) and due_after (earned_after - settled), over the transactions of transactions dated through through_date. The document passes every check of a write; with effective_from, the change is previewed as incentives.change_rates would make it';

------------------------------------------------------------------------
-- An offer's currency once settled or accrued (docs/lifecycle.md,
-- Statements per currency)
--
-- Every amount of a statement line and of an accrual line is in its
-- offer's currency, and the next line of the pair subtracts what the
-- earlier ones settled or accrued: a change of currency would subtract
-- dollars from euros.  So once a statement line or an accrual line covers
-- an offer, its "currency" (added, removed or changed) cannot change: an
-- UPDATE that changes it, or an INSERT of the key (after a delete, or
-- remove_settled_offer) in another currency than its lines', is refused
-- (22023).  The check reads the lines the writing role may read, as the
-- removal check does (caller's rights, docs/security.md): a change of
-- currency needs the privilege to read them; an insert by a role that may
-- not read them is not checked.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offers_currency_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    -- (offer_key is generated from the document: not yet computed in a
    -- BEFORE trigger)
    v_key  text := NEW.document ->> 'offer_key';
    v_new  text := NEW.document ->> 'currency';
    v_old  text;
    v_line text;
    v_what text;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        v_old := OLD.document ->> 'currency';
        IF v_old IS NOT DISTINCT FROM v_new THEN
            RETURN NEW;
        END IF;
        IF EXISTS (SELECT 1 FROM incentives.statement_lines AS l WHERE l.offer_key = OLD.offer_key) THEN
            v_what := 'statement lines';
        ELSIF EXISTS (SELECT 1 FROM incentives.accrual_lines AS l WHERE l.offer_key = OLD.offer_key) THEN
            v_what := 'accrual lines';
        END IF;
    ELSIF NOT (has_table_privilege('incentives.statement_lines', 'SELECT')
               AND has_table_privilege('incentives.accrual_lines', 'SELECT')) THEN
        -- a writer who may not read the lines inserts offers as before
        -- (a change of currency, above, needs to read them)
        RETURN NEW;
    ELSE
        -- an offer key inserted again: its lines' currency (the latest's)
        SELECT x.currency, x.what INTO v_line, v_what
          FROM (SELECT l.currency, 'statement lines' AS what, l.statement_id AS id, 1 AS rank
                  FROM incentives.statement_lines AS l WHERE l.offer_key = v_key
                UNION ALL
                SELECT l.currency, 'accrual lines', l.accrual_id, 2
                  FROM incentives.accrual_lines AS l WHERE l.offer_key = v_key) AS x
         ORDER BY x.rank, x.id DESC
         LIMIT 1;
        IF NOT FOUND OR v_line IS NOT DISTINCT FROM v_new THEN
            RETURN NEW;
        END IF;
        v_old := v_line;
    END IF;
    IF v_what IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023',
            format('offer "%s" cannot change its currency from %s to %s: %s cover it',
                   v_key, COALESCE(v_old, 'none'), COALESCE(v_new, 'none'), v_what),
            format('Its settled and accrued amounts are in %s; the next line subtracts them from what it earns.',
                   COALESCE(v_old, 'the transactions'' own currencies (no currency)')),
            format('Keep "currency" %s. To pay in another currency from a date, store a new offer with its own offer_key and change this one''s rates to zero from that date (incentives.change_rates).',
                   CASE WHEN v_old IS NULL THEN 'absent' ELSE format('"%s"', v_old) END));
    END IF;
    RETURN NEW;
END
$function$;
COMMENT ON FUNCTION incentives_internal.offers_currency_check() IS
  'Trigger: refuses a change of an offer''s "currency" (added, removed or changed) once a statement line or an accrual line covers the offer, and the insert of its key in another currency than its lines'' (22023)';

DROP TRIGGER IF EXISTS offers_currency_check ON incentives.offers;
CREATE TRIGGER offers_currency_check
    BEFORE INSERT OR UPDATE OF document ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_currency_check();
COMMENT ON TRIGGER offers_currency_check ON incentives.offers IS
  'An offer''s currency cannot change once a statement or accrual line covers it (22023)';
