-- 45_ledger: the ledger guards (docs/lifecycle.md, Settlement statements,
-- Removing a settled offer, Accruals): settle and accrue refuse a date
-- after today and read the transactions they are given; statement lines
-- say why (kind) and under which version of the offer; an offer with
-- settled money cannot be removed by accident (checked at the end of the
-- transaction: here SET CONSTRAINTS ALL IMMEDIATE stands for the commit),
-- only on purpose; an accrual never books less than what is earned.
\ir ../sql/pgtap_begin.psql
SET client_min_messages = warning;
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties;

SELECT plan(60);

-- at_commit(sql): sql, then the end-of-transaction checks at once
CREATE FUNCTION pg_temp.at_commit(sql text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE sql;
  SET CONSTRAINTS ALL IMMEDIATE;
  SET CONSTRAINTS ALL DEFERRED;
END
$$;

------------------------------------------------------------------------
-- The surface
------------------------------------------------------------------------
SELECT is(pg_temp.argument_names('incentives.settle(date, text, regclass, numeric, text[])') || ' / '
          || pg_temp.argument_defaults('incentives.settle(date, text, regclass, numeric, text[])'),
          'statement_date, participant_key, transactions, minimum_payment, final_offer_keys / NULL::text, ''incentives.transactions''::regclass, 0, NULL::text[]',
          'settle(statement_date, participant_key, transactions DEFAULT incentives.transactions, minimum_payment DEFAULT 0, final_offer_keys DEFAULT NULL)');
SELECT is(pg_temp.argument_names('incentives.accrue(date, regclass)') || ' / '
          || pg_temp.argument_defaults('incentives.accrue(date, regclass)'),
          'as_of_date, transactions / ''incentives.transactions''::regclass',
          'accrue(as_of_date, transactions DEFAULT incentives.transactions)');
SELECT ok(to_regprocedure('incentives.settle(date, text)') IS NULL AND to_regprocedure('incentives.accrue(date)') IS NULL,
          'the 0.3.0 signatures are gone');

------------------------------------------------------------------------
-- Data: 10% of purchases, and the same capped at $100 a participant.
------------------------------------------------------------------------
INSERT INTO incentives.offers (document) VALUES
  (pg_temp.standard_offer('led.std', 'percent_of_amount', '[{"sku_key": "seed_a", "rate": 10, "measure": "percent"}]')),
  (pg_temp.standard_offer('led.capped', 'percent_of_amount', '[{"sku_key": "chem_c", "rate": 10, "measure": "percent"}]')
   || '{"limits": {"maximum": 100}}');
INSERT INTO incentives.transactions VALUES
  ('LG01', 'p1', 'buy', '2026-01-10', 'seed_a', 10, 'bag', 1000),
  ('LG02', 'p2', 'buy', '2026-01-12', 'seed_a', 5, 'bag', 500),
  ('LG03', 'p4', 'buy', '2026-01-15', 'chem_c', 20, 'gal', 2000);

------------------------------------------------------------------------
-- No date after today
------------------------------------------------------------------------
SELECT throws_ok($$CALL incentives.settle(current_date + 1)$$, '22023', NULL, 'settle after today is refused');
SELECT throws_ok($$CALL incentives.settle(current_date + 1, 'p1')$$, '22023', NULL, 'also for one participant');
SELECT throws_ok($$CALL incentives.accrue(current_date + 1)$$, '22023', NULL, 'accrue after today is refused');
SELECT is((SELECT count(*) FROM incentives.statements) + (SELECT count(*) FROM incentives.statement_lines)
          + (SELECT count(*) FROM incentives.accruals) + (SELECT count(*) FROM incentives.accrual_lines),
          0::bigint, 'and nothing is written');
SELECT throws_ok($$CALL incentives.settle('2026-01-31', transactions => NULL)$$, '22023',
                 'transactions must not be NULL', 'a NULL relation is refused');

------------------------------------------------------------------------
-- Kinds: a payment, a return's clawback, more volume's true-up, nothing new
------------------------------------------------------------------------
CALL incentives.settle('2026-01-31');
INSERT INTO incentives.transactions VALUES ('LG04', 'p1', 'buy', '2026-02-05', 'seed_a', -4, 'bag', -400);
CALL incentives.settle('2026-02-28');
INSERT INTO incentives.transactions VALUES ('LG05', 'p1', 'buy', '2026-03-05', 'seed_a', 8, 'bag', 800);
CALL incentives.settle('2026-03-31');
SELECT results_eq(
  $$SELECT s.statement_date, l.participant_key, l.offer_key, l.amount_due, l.kind
      FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
     WHERE l.offer_key = 'led.std' ORDER BY 1, 2$$,
  $$VALUES ('2026-01-31'::date, 'p1', 'led.std', 100.00::numeric(20,2), 'payment'),
           ('2026-01-31', 'p2', 'led.std', 50.00, 'payment'),
           ('2026-02-28', 'p1', 'led.std', -40.00, 'clawback'),
           ('2026-02-28', 'p2', 'led.std', 0.00, 'unchanged'),
           ('2026-03-31', 'p1', 'led.std', 80.00, 'true_up'),
           ('2026-03-31', 'p2', 'led.std', 0.00, 'unchanged')$$,
  'payment, then a return''s clawback, then more volume''s true-up; unchanged where nothing is due');
SELECT is_empty(
  $$SELECT 1 FROM incentives.statement_lines l
     WHERE l.offer_version IS DISTINCT FROM (SELECT v.version FROM incentives.offer_versions v
                                              WHERE v.offer_key = l.offer_key AND v.valid_to IS NULL)$$,
  'every line carries the offer''s current version');
SELECT is((SELECT lines -> 0 ->> 'kind' FROM incentives.participant_statements
            WHERE participant_key = 'p1' AND statement_date = '2026-02-28'),
          'clawback', 'participant_statements shows the kind in its lines');
SELECT is((SELECT (lines -> 0 ->> 'offer_version')::int FROM incentives.participant_statements
            WHERE participant_key = 'p1' AND statement_date = '2026-03-31'),
          (SELECT version FROM incentives.offer_versions WHERE offer_key = 'led.std' AND valid_to IS NULL),
          'and the offer version');
SELECT results_eq(
  $$SELECT participant_key, settled_total, last_kind FROM incentives.settlement_balances
     WHERE offer_key = 'led.std' ORDER BY 1$$,
  $$VALUES ('p1', 140.00::numeric, 'true_up'), ('p2', 50.00, 'unchanged')$$,
  'settlement_balances shows the latest line''s kind');
SELECT is((SELECT count(*) FROM incentives.statements WHERE transactions = 'incentives.transactions'), 3::bigint,
          'each statement records the relation it read');

------------------------------------------------------------------------
-- Previewing a change: per participant, storing nothing
------------------------------------------------------------------------
CREATE TEMPORARY TABLE led_before AS
SELECT (SELECT document FROM incentives.offers WHERE offer_key = 'led.std') AS document,
       (SELECT count(*) FROM incentives.offer_versions) AS versions;
SELECT results_eq(
  $$SELECT * FROM incentives.preview_offer_change(
      jsonb_set((SELECT document FROM led_before), '{incentives,0,rates,0,rate}', '15'))$$,
  $$VALUES ('p1'::text, 140.00::numeric, 210.00::numeric, 140.00::numeric, 70.00::numeric, 70.00::numeric),
           ('p2', 50.00, 75.00, 50.00, 25.00, 25.00)$$,
  'preview_offer_change: earned now, after the change, settled, the change and what would be due');
SELECT ok((SELECT document FROM incentives.offers WHERE offer_key = 'led.std') = (SELECT document FROM led_before)
          AND (SELECT count(*) FROM incentives.offer_versions) = (SELECT versions FROM led_before),
          'the preview stores nothing: the offer and its versions as they were');
SELECT results_eq(
  $$SELECT participant_key, earned_now, earned_after, due_after FROM incentives.preview_offer_change(
      jsonb_set((SELECT document FROM led_before), '{incentives,0,rates,0,rate}', '15'),
      through_date => '2026-02-28')$$,
  $$VALUES ('p1'::text, 60.00::numeric, 90.00::numeric, -50.00::numeric), ('p2', 50.00, 75.00, 25.00)$$,
  'through_date: the earnings of the transactions dated on or before it');
SELECT results_eq(
  $$SELECT participant_key, earned_now, earned_after, settled FROM incentives.preview_offer_change(
      jsonb_set((SELECT document FROM led_before), '{offer_key}', '"led.new"'))$$,
  $$VALUES ('p1'::text, 0.00::numeric, 140.00::numeric, 0.00::numeric), ('p2', 0.00, 50.00, 0.00)$$,
  'a new offer: nothing earned now, nothing settled');
SELECT ok(NOT EXISTS (SELECT 1 FROM incentives.offers WHERE offer_key = 'led.new')
          AND NOT EXISTS (SELECT 1 FROM incentives.offer_versions WHERE offer_key = 'led.new'),
          'and it is not stored');
SELECT throws_ok($$SELECT * FROM incentives.preview_offer_change(
                     jsonb_set((SELECT document FROM led_before), '{incentives,0,ratez}', '15'))$$,
                 '22023', 'invalid offer "led.std": incentives[0].ratez is not a field of incentives[]; did you mean "rates"?',
                 'a document a write would refuse is refused, with the write''s message');
SELECT results_eq(
  $$SELECT participant_key, earned_now, earned_after, change FROM incentives.preview_offer_change(
      jsonb_set((SELECT document FROM led_before), '{incentives,0,rates,0,rate}', '15'), '2026-04-01')$$,
  $$VALUES ('p1'::text, 140.00::numeric, 140.00::numeric, 0.00::numeric), ('p2', 50.00, 50.00, 0.00)$$,
  'a change from a date after every transaction (effective_from) changes nothing earned');
SELECT throws_like($$SELECT * FROM incentives.preview_offer_change(
                       jsonb_set((SELECT document FROM led_before), '{incentives,0,rates,0,rate}', '15'), '2026-03-01')$$,
                   '%is not after its latest statement, dated 2026-03-31',
                   'a change from a settled date is refused, as change_rates refuses it');

------------------------------------------------------------------------
-- settle and accrue from another relation
------------------------------------------------------------------------
CREATE VIEW pg_temp.led_erp AS
SELECT 'ERP-' || t.transaction_id AS transaction_id, 'pv'::text AS participant_key, t.transaction_type,
       t.transaction_date, t.sku_key, t.quantity * 2 AS quantity, t.uom_key, t.amount * 2 AS amount
  FROM incentives.transactions AS t WHERE t.participant_key = 'p1';
CALL incentives.settle('2026-03-31', 'pv', transactions => 'pg_temp.led_erp');
SELECT results_eq(
  $$SELECT l.offer_key, l.earned_to_date, l.kind, s.transactions
      FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
     WHERE l.participant_key = 'pv'$$,
  $$SELECT 'led.std'::text, 280.00::numeric(20,2), 'payment'::text,
           (SELECT 'pg_temp.led_erp'::regclass::text)$$,
  'settle(transactions => a view) settles the view''s earnings and records the view');
CALL incentives.accrue('2026-03-31', transactions => 'pg_temp.led_erp');
SELECT results_eq(
  $$SELECT l.participant_key, l.offer_key, l.accrued_to_date, a.transactions
      FROM incentives.accrual_lines l JOIN incentives.accruals a USING (accrual_id)$$,
  $$SELECT f.participant_key, f.offer_key, f.accrual_to_date::numeric(20,2), (SELECT 'pg_temp.led_erp'::regclass::text)
      FROM incentives.forecast('2026-03-31', transactions => 'pg_temp.led_erp') f$$,
  'accrue(transactions => a view) books the view''s forecast and records the view');

------------------------------------------------------------------------
-- The accrual floor
------------------------------------------------------------------------
SELECT results_eq(
  $$SELECT earned_to_date, accrual_to_date FROM incentives.forecast('2026-01-31', 'p4')$$,
  $$VALUES (100.00::numeric, 100.00::numeric)$$,
  'a capped offer that reached its cap accrues the cap, not its straight-line share (8.49)');
SELECT is_empty(
  $$SELECT * FROM generate_series(date '2026-01-01', date '2026-12-31', interval '1 month') AS d,
                  LATERAL incentives.forecast(d::date) AS f
     WHERE f.accrual_to_date < f.earned_to_date
        OR f.accrual_to_date <> GREATEST(round(f.projected_earnings * f.elapsed_days / f.span_days, 2), f.earned_to_date)$$,
  'no forecast row accrues less than it has earned; otherwise the straight-line share');
CALL incentives.accrue('2026-04-30');
SELECT results_eq(
  $$SELECT participant_key, offer_key, accrued, settled, last_statement_date FROM incentives.accrual_balances
     WHERE participant_key IN ('p1', 'p4') ORDER BY 1, 2$$,
  $$VALUES ('p1', 'led.std', 140.00::numeric, 140.00::numeric, '2026-03-31'::date),
           ('p4', 'led.capped', 100.00, 100.00, '2026-03-31')$$,
  'accrual_balances: the accrual beside what was settled by its date');

------------------------------------------------------------------------
-- Removing an offer with settled money
------------------------------------------------------------------------
SELECT throws_ok($$SELECT pg_temp.at_commit('DELETE FROM incentives.offers WHERE offer_key = ''led.std''')$$, '55000',
                 'offer "led.std" cannot be removed (DELETE): 470.00 settled for it, the latest statement 2026-03-31',
                 'DELETE of a settled offer is refused at the end of the transaction, with the total and the latest statement');
SELECT lives_ok($$DELETE FROM incentives.offers WHERE offer_key = 'led.std'$$,
                'the DELETE itself is not refused: the check waits for the end of the transaction');
SELECT throws_ok($$SET CONSTRAINTS ALL IMMEDIATE$$, '55000', NULL, 'where it is refused');
SET CONSTRAINTS ALL DEFERRED;
SELECT lives_ok($$SELECT pg_temp.at_commit($q$INSERT INTO incentives.offers (document)
                    SELECT document FROM incentives.offer_versions WHERE offer_key = 'led.std' ORDER BY version DESC LIMIT 1$q$)$$,
                'inserted again, the same transaction passes the check');
SELECT lives_ok($$SELECT pg_temp.at_commit($q$DELETE FROM incentives.offers WHERE offer_key = 'led.std'$q$
                                   || $q$; INSERT INTO incentives.offers (document) SELECT document FROM incentives.offer_versions
                                          WHERE offer_key = 'led.std' ORDER BY version DESC LIMIT 1$q$)$$,
                'a delete and re-insert of the same offer in one transaction passes');
SELECT throws_ok($$SELECT pg_temp.at_commit($q$UPDATE incentives.offers SET document = jsonb_set(document, '{offer_key}', '"led.renamed"')
                                        WHERE offer_key = 'led.std'$q$)$$,
                 '55000', NULL, 'a change of offer_key is refused');
SELECT throws_ok($$TRUNCATE incentives.offers$$, '55000', NULL, 'TRUNCATE is refused');
SELECT throws_ok($$TRUNCATE incentives.offers CASCADE$$, '55000', NULL, 'TRUNCATE ... CASCADE too');
SELECT lives_ok($$SELECT pg_temp.at_commit($q$DELETE FROM incentives.offers WHERE offer_key = 'led.none'$q$)$$,
                'deleting what is not there is no removal');
INSERT INTO incentives.offers (document)
VALUES (pg_temp.standard_offer('led.unsettled', 'percent_of_amount', '[{"sku_key": "none", "rate": 1, "measure": "percent"}]'));
SELECT lives_ok($$SELECT pg_temp.at_commit($q$DELETE FROM incentives.offers WHERE offer_key = 'led.unsettled'$q$)$$,
                'an offer without settled money is deleted as ever');

-- On purpose
SELECT throws_ok($$SELECT incentives.remove_settled_offer('led.std', ' ')$$, '22023', NULL, 'a reason is required');
SELECT throws_ok($$SELECT incentives.remove_settled_offer('led.none', 'typo')$$, 'P0002', NULL, 'an offer that does not exist');
SELECT lives_ok($$SELECT pg_temp.at_commit($q$SELECT incentives.remove_settled_offer('led.std', 'the program was cancelled')$q$)$$,
                'remove_settled_offer removes a settled offer, through the end-of-transaction check');
SELECT results_eq(
  $$SELECT offer_key, reason, settled_total, participants, last_statement_date, removed_by = current_user
      FROM incentives.offer_removals$$,
  $$VALUES ('led.std', 'the program was cancelled', 470.00::numeric(20,2), 3, '2026-03-31'::date, true)$$,
  'and logs who, why and what was settled');
SELECT is((SELECT count(*) FROM incentives.offers WHERE offer_key = 'led.std'), 0::bigint, 'the offer is gone');
CALL incentives.settle('2026-04-30');
SELECT results_eq(
  $$SELECT l.participant_key, l.amount_due, l.kind, l.offer_version
      FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
     WHERE s.statement_date = '2026-04-30' AND l.offer_key = 'led.std' ORDER BY 1$$,
  $$VALUES ('p1', -140.00::numeric(20,2), 'clawback', NULL::int), ('p2', -50.00, 'clawback', NULL),
           ('pv', -280.00, 'clawback', NULL)$$,
  'the next statement claws it back (no current version any more)');
SELECT throws_ok($$DELETE FROM incentives.offer_removals$$, '42501', NULL, 'the removals are append-only');

------------------------------------------------------------------------
-- A statement and an accrual dated in the future (written before 0.4.0
-- refused them; here inserted as they were) are voided by appending
------------------------------------------------------------------------
WITH s AS (INSERT INTO incentives.statements (statement_date) VALUES (current_date + 30) RETURNING statement_id)
INSERT INTO incentives.statement_lines (statement_id, participant_key, offer_key, earned_to_date, settled_before, amount_due,
                                        kind, payable_to_date)
SELECT statement_id, 'p4', 'led.capped', 150.00, 100.00, 50.00, 'true_up', 150.00 FROM s;
SELECT throws_ok($$CALL incentives.settle('2026-05-31')$$, '22023', NULL, 'a statement dated in the future locks the ledger');
SELECT throws_ok($$SELECT incentives.void_statement((SELECT min(statement_id) FROM incentives.statements), 'typo')$$,
                 '22023', NULL, 'only a statement dated in the future is voided');
SELECT lives_ok($$SELECT incentives.void_statement((SELECT max(statement_id) FROM incentives.statements), 'typo: 2026 meant')$$,
                'void_statement appends the reversal of the one dated in the future');
SELECT results_eq(
  $$SELECT s.statement_date = current_date + 30, s.reverses IS NOT NULL, s.reason, l.participant_key, l.amount_due, l.settled_before
      FROM incentives.statements s JOIN incentives.statement_lines l USING (statement_id)
     WHERE s.statement_id = (SELECT max(statement_id) FROM incentives.statements)$$,
  $$VALUES (true, true, 'typo: 2026 meant', 'p4', -50.00::numeric(20,2), 150.00::numeric(20,2))$$,
  'the reversal: the same date, every line negated, what it reverses and why');
SELECT throws_ok($$SELECT incentives.void_statement((SELECT max(statement_id) - 1 FROM incentives.statements), 'again')$$,
                 '22023', NULL, 'a statement is voided once');
SELECT results_eq(
  $$SELECT settled_total, last_statement_date FROM incentives.settlement_balances WHERE participant_key = 'p4'$$,
  $$VALUES (100.00::numeric, '2026-04-30'::date)$$,
  'the voided statement and its reversal leave the balances');
CALL incentives.settle('2026-05-31');
SELECT is((SELECT l.kind FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
            WHERE s.statement_date = '2026-05-31' AND l.participant_key = 'p4'),
          'unchanged', 'and settle goes on from its own latest date, nothing due twice');

WITH a AS (INSERT INTO incentives.accruals (as_of_date) VALUES (current_date + 30) RETURNING accrual_id)
INSERT INTO incentives.accrual_lines (accrual_id, participant_key, offer_key, accrued_to_date, accrued_before, delta)
SELECT accrual_id, 'p4', 'led.capped', 500.00, 100.00, 400.00 FROM a;
SELECT throws_ok($$CALL incentives.accrue('2026-05-31')$$, '22023', NULL, 'an accrual dated in the future locks the accruals');
SELECT lives_ok($$SELECT incentives.void_accrual((SELECT max(accrual_id) FROM incentives.accruals), 'typo')$$,
                'void_accrual appends its reversal');
CALL incentives.accrue('2026-05-31');
SELECT results_eq(
  $$SELECT l.accrued_before, l.accrued_to_date FROM incentives.accrual_lines l
     WHERE l.participant_key = 'p4' AND l.accrual_id = (SELECT max(accrual_id) FROM incentives.accruals)$$,
  $$VALUES (100.00::numeric(20,2), 100.00::numeric(20,2))$$,
  'the next accrual starts from where the pair was before the voided one');

------------------------------------------------------------------------
-- An offer's currency once a line covers it (docs/lifecycle.md,
-- Statements per currency)
------------------------------------------------------------------------
SELECT is((SELECT count(*) FROM incentives.statement_lines WHERE offer_key = 'led.capped' AND currency IS NULL),
          (SELECT count(*) FROM incentives.statement_lines WHERE offer_key = 'led.capped'),
          'the lines of an offer without a currency have none');
SELECT throws_ok($$UPDATE incentives.offers SET document = document || '{"currency": "CAD"}'
                    WHERE offer_key = 'led.capped'$$,
                 '22023', 'offer "led.capped" cannot change its currency from none to CAD: statement lines cover it',
                 'a currency is not added to an offer a statement line covers');
SELECT lives_ok($$UPDATE incentives.offers SET document = document || '{"label": "capped"}'
                   WHERE offer_key = 'led.capped'$$,
                'any other change of it passes');
SELECT lives_ok($$INSERT INTO incentives.offers (document)
                  SELECT document || '{"offer_key": "led.cad", "currency": "CAD"}'
                    FROM incentives.offers WHERE offer_key = 'led.capped'$$,
                'an offer no line covers takes a currency');
SELECT lives_ok($$UPDATE incentives.offers SET document = document || '{"currency": "USD"}'
                   WHERE offer_key = 'led.cad'$$,
                'and changes it');
SELECT is(incentives_internal.amounts_by_currency(ARRAY[1.50, 2.00, -0.50, 3.25]::numeric[],
                                                  ARRAY['USD', NULL, 'USD', 'CAD']),
          '2.00, 3.25 CAD, 1.00 USD',
          'NOTICE totals per currency: without a currency first, bare; never one figure of two');

SELECT * FROM finish();
ROLLBACK;
