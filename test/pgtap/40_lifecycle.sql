-- 40_lifecycle: the earnings lifecycle as assertions (docs/lifecycle.md):
-- the new signatures and their compatibility with 0.1.0's declarations,
-- offer versions and their append-only rule, through_date against a
-- date-filtered relation, settlement rules, refreshes that skip, that do
-- less, that a non-owner runs, and runs left behind by a dead session.
-- (sql/lifecycle.sql shows the same rules with real times between the
-- changes; here everything is one transaction and rolled back.)
\ir ../sql/pgtap_begin.psql
SET client_min_messages = warning;
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties;

SELECT plan(67);

------------------------------------------------------------------------
-- The surface
------------------------------------------------------------------------
SELECT is(c.got, c.expected, c.description)
  FROM (VALUES
    (pg_temp.argument_names('incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)'),
     'participant_key, properties, offer_keys, transactions, as_of, through_date',
     'incentive_calculate(participant_key, properties, offer_keys, transactions, as_of, through_date)'),
    (pg_temp.argument_names('incentives.refresh_earnings(text, regclass, integer, text, boolean, integer)'),
     'participant_key, transactions, progress_every, on_error, changed_only, jobs',
     'refresh_earnings(participant_key, transactions, progress_every, on_error, changed_only, jobs)'),
    (pg_temp.argument_defaults('incentives.refresh_earnings(text, regclass, integer, text, boolean, integer)'),
     'NULL::text, ''incentives.transactions''::regclass, 1000, ''raise''::text, false, 1',
     'refresh_earnings defaults: on_error raise, changed_only false, jobs 1'),
    (pg_temp.argument_names('incentives.settle(date, text, regclass, numeric, text[])') || ' / ' || pg_temp.argument_defaults('incentives.settle(date, text, regclass, numeric, text[])'),
     'statement_date, participant_key, transactions, minimum_payment, final_offer_keys / NULL::text, ''incentives.transactions''::regclass, 0, NULL::text[]',
     'settle(statement_date, participant_key DEFAULT NULL, transactions DEFAULT incentives.transactions, minimum_payment DEFAULT 0, final_offer_keys DEFAULT NULL) is a procedure')) AS c(got, expected, description);
SELECT ok(to_regprocedure('incentives.incentive_diagnostics(text, jsonb, text[], regclass, timestamptz, date)') IS NOT NULL
          AND to_regprocedure('incentives.incentive_explain(text, text, jsonb, regclass, timestamptz, date)') IS NOT NULL
          AND to_regprocedure('incentives.tier_progress(text, jsonb, regclass, timestamptz, date)') IS NOT NULL
          AND to_regprocedure('incentives.stack_progress(text, regclass, timestamptz, date)') IS NOT NULL
          AND to_regprocedure('incentives.programs(timestamptz)') IS NOT NULL
          AND to_regprocedure('incentives.program_rates(timestamptz)') IS NOT NULL,
          'diagnostics, explain, tier and stack progress take as_of and through_date; programs and program_rates take as_of');
SELECT results_eq(
  $$SELECT c.relname::text COLLATE "default", c.relkind::text FROM pg_class c
     WHERE c.relnamespace = 'incentives'::regnamespace
       AND c.relname IN ('offer_versions', 'statements', 'statement_lines', 'calculation_exceptions', 'earnings',
                         'participant_statements', 'settlement_balances', 'unsettled_earnings')
     ORDER BY 1$$,
  $$VALUES ('calculation_exceptions', 'r'), ('earnings', 'p'), ('offer_versions', 'r'),
           ('participant_statements', 'v'), ('settlement_balances', 'v'), ('statement_lines', 'r'),
           ('statements', 'r'), ('unsettled_earnings', 'v')$$,
  'the lifecycle tables and views; incentives.earnings is partitioned');
SELECT results_eq(
  $$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod) FROM pg_attribute
     WHERE attrelid = 'incentives.statement_lines'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum$$,
  $$VALUES ('statement_id', 'bigint'), ('participant_key', 'text'), ('offer_key', 'text'),
           ('earned_to_date', 'numeric(20,2)'), ('settled_before', 'numeric(20,2)'), ('amount_due', 'numeric(20,2)'),
           ('kind', 'text'), ('offer_version', 'integer'), ('currency', 'text'),
           ('payable_to_date', 'numeric(20,2)'), ('held_back', 'numeric(20,2)'), ('final', 'boolean')$$,
  'statement_lines: amounts with 2 places, the line''s kind, the offer''s version and currency, payable, held back, final');

-- The released 0.1.0 script declares the calculation with four arguments
-- and the same C symbols: the library serves both declarations.
SELECT lives_ok(format($$CREATE FUNCTION pg_temp.calc_010(text, jsonb, text[], regclass)
                         RETURNS SETOF incentives.earning AS %L, 'incentives_incentive_calculate' LANGUAGE C STABLE$$,
                       (SELECT probin FROM pg_proc WHERE oid = 'incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)'::regprocedure)),
                'a 0.1.0-style four-argument declaration of incentives_incentive_calculate');
SELECT lives_ok(format($$CREATE FUNCTION pg_temp.diag_010(text, jsonb, text[], regclass)
                         RETURNS TABLE (participant_key text, offer_key text, strategy_key text, diagnostics jsonb)
                         AS %L, 'incentives_incentive_diagnostics' LANGUAGE C STABLE$$,
                       (SELECT probin FROM pg_proc WHERE oid = 'incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)'::regprocedure)),
                'a 0.1.0-style four-argument declaration of incentives_incentive_diagnostics');

------------------------------------------------------------------------
-- Data: a stepped offer (tiers at $1,000 and $2,000 of purchases) and a
-- standard one; three participants over three months.
------------------------------------------------------------------------
INSERT INTO incentives.offers (document) VALUES
('{"offer_key": "life.stepped", "strategy_key": "stepped", "calculator_key": "percent_of_amount",
   "periods": [{"key": "season", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
   "incentive": {"filters": [{"period_key": "season", "sku_keys": ["seed_a", "chem_b"], "transaction_type": "purchase"}],
                 "threshold_definition": {"type": "aggregated_amount",
                                          "filters": [{"period_key": "season", "sku_keys": ["seed_a", "chem_b"], "transaction_type": "purchase"}]},
                 "rates": [{"key": "t1", "threshold": 1000, "value": 2, "measure": "percent"},
                           {"key": "t2", "threshold": 2000, "value": 5, "measure": "percent"}]}}'),
('{"offer_key": "life.standard", "strategy_key": "standard", "calculator_key": "dollars_per_unit",
   "periods": [{"key": "season", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
   "incentives": [{"period_key": "season", "transaction_type": "purchase",
                   "rates": [{"sku_key": "chem_b", "rate": 1.5, "measure": "dollars"}]}]}');
INSERT INTO incentives.skus VALUES ('chem_b', 'gal', NULL);
INSERT INTO incentives.transactions VALUES
  ('L01', 'p1', 'purchase', '2026-01-10', 'seed_a', 10, 'bag', 800),
  ('L02', 'p1', 'purchase', '2026-02-10', 'chem_b', 20, 'gal', 700),
  ('L03', 'p1', 'purchase', '2026-03-10', 'seed_a', 10, 'bag', 900),
  ('L04', 'p2', 'purchase', '2026-01-15', 'chem_b', 40, 'gal', 1200),
  ('L05', 'p2', 'purchase', '2026-03-15', 'chem_b', -4, 'gal', -120),
  ('L06', 'p3', 'purchase', '2026-02-20', 'seed_a', 5, 'bag', 400),
  ('L07', 'p3', 'purchase', '2026-03-20', 'chem_b', 2, 'qt', 30);

SELECT bag_eq($$SELECT * FROM pg_temp.calc_010(NULL, '{}', NULL, 'incentives.transactions')$$,
              $$SELECT * FROM incentives.incentive_calculate()$$,
              'the four-argument declaration returns what the six-argument one does');
SELECT bag_eq($$SELECT * FROM pg_temp.diag_010(NULL, '{}', NULL, 'incentives.transactions')$$,
              $$SELECT participant_key, offer_key, strategy_key, diagnostics FROM incentives.incentive_diagnostics()$$,
              'the four-argument diagnostics return what the six-argument ones do (but their group_key)');

------------------------------------------------------------------------
-- Offer versions
------------------------------------------------------------------------
SELECT results_eq(
  $$SELECT offer_key, version, valid_to IS NULL, changed_by = current_user FROM incentives.offer_versions
     WHERE offer_key LIKE 'life.%' ORDER BY 1, 2$$,
  $$VALUES ('life.standard', 1, true, true), ('life.stepped', 1, true, true)$$,
  'an inserted offer has version 1, current, by the role that inserted it');
UPDATE incentives.offers SET document = jsonb_set(document, '{label}', '"Standard"') WHERE offer_key = 'life.standard';
UPDATE incentives.offers SET document = document WHERE offer_key = 'life.standard';
SELECT results_eq(
  $$SELECT version, valid_to IS NULL, document ->> 'label' FROM incentives.offer_versions
     WHERE offer_key = 'life.standard' ORDER BY version$$,
  $$VALUES (1, false, NULL), (2, true, 'Standard')$$,
  'a change writes version 2 and closes version 1; an update that changes nothing writes no version');
SELECT is((SELECT valid_to FROM incentives.offer_versions WHERE offer_key = 'life.standard' AND version = 1),
          (SELECT valid_from FROM incentives.offer_versions WHERE offer_key = 'life.standard' AND version = 2),
          'version 1 ends when version 2 begins');
SELECT bag_eq($$SELECT * FROM incentives.incentive_calculate(as_of => now())$$,
              $$SELECT * FROM incentives.incentive_calculate()$$,
              'as_of => now() is the current offers');
SELECT is((SELECT count(*) FROM incentives.incentive_calculate(as_of => now() - interval '1 day')), 0::bigint,
          'before the offers existed there is nothing to calculate');
SELECT throws_ok($$SELECT * FROM incentives.incentive_calculate(offer_keys => '{life.stepped}', as_of => now() - interval '1 day')$$,
                 '22023', 'offer "life.stepped" does not exist',
                 'an offer_keys entry that did not exist at as_of is the "does not exist" error');
SELECT throws_ok($$SELECT incentives.incentive_explain('p1', 'life.stepped', as_of => now() - interval '1 day')$$,
                 '22023', 'offer "life.stepped" does not exist',
                 'incentive_explain as of a time the offer did not exist');

-- The append-only rule, for the owner and for a role with every privilege.
SELECT throws_ok($$UPDATE incentives.offer_versions SET document = '{}'$$, '42501', NULL,
                 'UPDATE of offer versions is refused, even to their owner');
SELECT throws_ok($$UPDATE incentives.offer_versions SET valid_to = now() WHERE valid_to IS NULL$$, '42501', NULL,
                 'closing a current version by hand is refused');
SELECT throws_ok($$DELETE FROM incentives.offer_versions$$, '42501', NULL, 'DELETE of offer versions is refused');
SELECT throws_ok($$TRUNCATE incentives.offer_versions$$, '42501', NULL, 'TRUNCATE of offer versions is refused');
CREATE ROLE incentives_test_life_admin NOLOGIN;
GRANT USAGE ON SCHEMA incentives, incentives_internal TO incentives_test_life_admin;
GRANT ALL ON ALL TABLES IN SCHEMA incentives TO incentives_test_life_admin;
GRANT ALL ON ALL TABLES IN SCHEMA incentives_internal TO incentives_test_life_admin;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO incentives_test_life_admin;
SELECT throws_ok($$SELECT pg_temp.exec_as('incentives_test_life_admin', 'DELETE FROM incentives.offer_versions')$$,
                 '42501', NULL, 'a role with DELETE privilege cannot delete versions either');
SELECT lives_ok($$SELECT pg_temp.exec_as('incentives_test_life_admin',
                    $q$UPDATE incentives.offers SET document = jsonb_set(document, '{label}', '"Standard 3"')
                        WHERE offer_key = 'life.standard'$q$)$$,
                'the versioning trigger closes the current version for any role that may change offers');
DELETE FROM incentives.offers WHERE offer_key = 'life.standard';
INSERT INTO incentives.offers (document)
SELECT document FROM incentives.offer_versions WHERE offer_key = 'life.standard' AND version = 2;
SELECT results_eq(
  $$SELECT version, valid_to IS NULL FROM incentives.offer_versions WHERE offer_key = 'life.standard' ORDER BY version$$,
  $$VALUES (1, false), (2, false), (3, false), (4, true)$$,
  'a delete closes the current version; inserting the offer again goes on counting');
-- A restore loads the versions first: loading the offer then adds none.
SELECT lives_ok($$INSERT INTO incentives.offer_versions (offer_key, version, document, valid_from)
                  VALUES ('life.restored', 1, '{"offer_key": "life.restored", "strategy_key": "standard", "calculator_key": "fixed_amount",
                          "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
                          "incentives": [{"period_key": "p", "transaction_type": "purchase",
                                          "rates": [{"sku_key": "none", "rate": 10, "measure": "dollars"}]}]}',
                          '2026-01-01')$$,
                'versions can be added (a restore loads them)');
INSERT INTO incentives.offers (document)
SELECT document FROM incentives.offer_versions WHERE offer_key = 'life.restored';
SELECT is((SELECT count(*) FROM incentives.offer_versions WHERE offer_key = 'life.restored'), 1::bigint,
          'an offer whose document is already its current version adds no version');
DELETE FROM incentives.offers WHERE offer_key = 'life.restored';

------------------------------------------------------------------------
-- through_date equals the calculation over the transactions of those dates
------------------------------------------------------------------------
CREATE TEMP VIEW life_through (d) AS VALUES (date '2026-01-31'), ('2026-02-28'), ('2026-03-14'), ('2026-12-31');
CREATE TEMP TABLE life_dated AS SELECT * FROM incentives.transactions;
CREATE FUNCTION pg_temp.calc_upto(d date) RETURNS SETOF incentives.earning LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE OR REPLACE TEMP VIEW life_upto AS SELECT * FROM life_dated WHERE transaction_date <= %L', d);
  RETURN QUERY SELECT * FROM incentives.incentive_calculate(transactions => 'pg_temp.life_upto');
END
$$;
SELECT bag_eq($$SELECT x.d, e.* FROM life_through x, LATERAL incentives.incentive_calculate(through_date => x.d) e$$,
              $$SELECT x.d, e.* FROM life_through x, LATERAL pg_temp.calc_upto(x.d) e$$,
              'through_date: thresholds, tiers and amounts as if the later transactions did not exist');
SELECT is((SELECT sum(incentive_amount) FROM incentives.incentive_calculate(through_date => '2026-02-28')),
          (SELECT sum(incentive_amount) FROM pg_temp.calc_upto('2026-02-28')),
          'through_date total at the end of February');
SELECT is((SELECT d.diagnostics ->> 'threshold_value' FROM incentives.incentive_diagnostics('p1', through_date => '2026-02-28') d
            WHERE d.offer_key = 'life.stepped'),
          '1500', 'diagnostics: the threshold counts only transactions through the date');
SELECT is((SELECT threshold_value FROM incentives.tier_progress('p1', through_date => '2026-01-31')),
          800.00, 'tier_progress through a date');
SELECT is(jsonb_array_length(incentives.calculate('{"participant_key": "p1", "include_stored": true,
                                                    "through_date": "2026-02-28"}') -> 'potential_earnings'),
          (SELECT count(*)::int FROM incentives.incentive_calculate('p1', through_date => '2026-02-28')),
          'calculate(jsonb) takes through_date');

------------------------------------------------------------------------
-- Settlement
------------------------------------------------------------------------
CALL incentives.settle('2026-01-31');
CALL incentives.settle('2026-02-28');
SELECT results_eq(
  $$SELECT l.participant_key, l.offer_key, l.earned_to_date, l.settled_before, l.amount_due
      FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
     WHERE s.statement_date = '2026-02-28' ORDER BY 1, 2$$,
  $$SELECT participant_key, offer_key, round(sum(incentive_amount), 2), COALESCE(
             (SELECT sum(l.amount_due) FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
               WHERE s.statement_date = '2026-01-31' AND l.participant_key = e.participant_key AND l.offer_key = e.offer_key), 0.00),
           round(sum(incentive_amount), 2) - COALESCE(
             (SELECT sum(l.amount_due) FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
               WHERE s.statement_date = '2026-01-31' AND l.participant_key = e.participant_key AND l.offer_key = e.offer_key), 0.00)
      FROM incentives.incentive_calculate(through_date => '2026-02-28') e
     GROUP BY 1, 2 HAVING sum(incentive_amount) <> 0 ORDER BY 1, 2$$,
  'a line per participant and offer: earned through the date, settled before, the difference due');
-- March: p1 reaches tier t2 (true-up), p2's return claws back.
CALL incentives.settle('2026-03-31');
SELECT results_eq(
  $$SELECT l.participant_key, l.offer_key, sign(l.amount_due)::int
      FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
     WHERE s.statement_date = '2026-03-31' ORDER BY 1, 2$$,
  $$VALUES ('p1', 'life.standard', 0), ('p1', 'life.stepped', 1), ('p2', 'life.standard', -1),
           ('p2', 'life.stepped', -1), ('p3', 'life.standard', 1)$$,
  'March: a true-up for p1''s late tier, clawbacks for p2''s return, a zero line where something was settled, none where nothing ever was');
SELECT is_empty(
  $$SELECT participant_key, offer_key FROM incentives.statement_lines GROUP BY 1, 2
    HAVING sum(amount_due) <> (SELECT COALESCE(sum(incentive_amount), 0) FROM incentives.incentive_calculate(through_date => '2026-03-31') e
                                WHERE e.participant_key = statement_lines.participant_key AND e.offer_key = statement_lines.offer_key)$$,
  'the amounts due of all statements add up to what was earned through the last date');
SELECT is_empty(
  $$SELECT * FROM incentives.settlement_balances b
     WHERE b.settled_total <> (SELECT sum(l.amount_due) FROM incentives.statement_lines l
                                WHERE l.participant_key = b.participant_key AND l.offer_key = b.offer_key)
        OR b.last_statement_date <> '2026-03-31'$$,
  'settlement_balances: the settled total and the last statement');
SELECT results_eq(
  $$SELECT participant_key, amount_due, jsonb_array_length(lines) FROM incentives.participant_statements
     WHERE statement_date = '2026-03-31' ORDER BY 1$$,
  $$SELECT l.participant_key, sum(l.amount_due), count(*)::int FROM incentives.statement_lines l
      JOIN incentives.statements s USING (statement_id) WHERE s.statement_date = '2026-03-31' GROUP BY 1 ORDER BY 1$$,
  'participant_statements: one statement per participant with its lines');
SELECT throws_ok($$CALL incentives.settle('2026-03-30')$$, '22023',
                 'statement_date 2026-03-30 is earlier than the latest statement of participant "p1" (2026-03-31)',
                 'a date before a covered participant''s latest statement is refused');
SELECT throws_ok($$CALL incentives.settle(NULL)$$, '22023', 'statement_date must not be NULL', 'a NULL date is refused');
SELECT throws_ok($$UPDATE incentives.statement_lines SET amount_due = amount_due$$, '42501', NULL,
                 'statement lines are append-only (UPDATE)');
SELECT throws_ok($$DELETE FROM incentives.statements$$, '42501', NULL, 'statements are append-only (DELETE)');
SELECT throws_ok($$SELECT pg_temp.exec_as('incentives_test_life_admin', 'DELETE FROM incentives.statement_lines')$$,
                 '42501', NULL, 'also for a role with DELETE privilege');
SELECT throws_ok($$TRUNCATE incentives.statements, incentives.statement_lines$$, '42501', NULL,
                 'statements are append-only (TRUNCATE)');
SELECT ok(incentives_internal.transaction_control_allowed() IS FALSE,
          'inside a transaction block a procedure may not commit');

------------------------------------------------------------------------
-- Refreshes
------------------------------------------------------------------------
CALL incentives.refresh_earnings();
SELECT bag_eq($$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount, transaction_date
                  FROM incentives.earnings$$,
              $$SELECT e.participant_key, e.offer_key, e.incentive_rate_key, e.transaction_id, e.incentive_amount, t.transaction_date
                  FROM incentives.incentive_calculate() e JOIN incentives.transactions t USING (transaction_id)$$,
              'a full refresh materializes the calculation, with the transaction dates');
SELECT is((SELECT count(*) FROM pg_inherits WHERE inhparent = 'incentives.earnings'::regclass), 2::bigint,
          'the swapped-in partition and the default partition');

-- A run left 'running' by a session that died is marked interrupted.
INSERT INTO incentives.calculation_runs (transactions, pid) VALUES ('incentives.transactions', 0);
CALL incentives.refresh_earnings('p3');
SELECT results_eq(
  $$SELECT status, finished_at IS NOT NULL FROM incentives.calculation_runs WHERE pid = 0$$,
  $$VALUES ('interrupted', true)$$,
  'the next refresh marks a run whose session is gone interrupted');

-- on_error => 'skip'
INSERT INTO incentives.transactions VALUES ('L08', 'p2', 'purchase', '2026-03-16', 'chem_b', 1, 'drum', 50);
SELECT throws_ok($$CALL incentives.refresh_earnings()$$, '22023', NULL, 'the default raises on a data error');
CREATE TEMP TABLE life_before AS SELECT * FROM incentives.earnings;
CALL incentives.refresh_earnings(on_error => 'skip');
SELECT results_eq(
  $$SELECT status, exceptions, participants FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1$$,
  $$VALUES ('completed_with_exceptions', 1, 3)$$,
  'skip: the run completes with one exception');
SELECT results_eq(
  $$SELECT participant_key, transaction_id, sqlstate FROM incentives.calculation_exceptions
     WHERE run_id = (SELECT max(run_id) FROM incentives.calculation_runs)$$,
  $$VALUES ('p2', 'L08', '22023')$$,
  'the exception names the participant, the transaction and the SQLSTATE');
SELECT bag_eq($$SELECT * FROM incentives.earnings WHERE participant_key = 'p2'$$,
              $$SELECT * FROM life_before WHERE participant_key = 'p2'$$,
              'the failing participant keeps its previous earnings, row for row');
SELECT bag_eq($$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
                  FROM incentives.earnings WHERE participant_key <> 'p2'$$,
              $$SELECT e.participant_key, e.offer_key, e.incentive_rate_key, e.transaction_id, e.incentive_amount
                  FROM (VALUES ('p1'), ('p3')) p(k), LATERAL incentives.incentive_calculate(p.k) e$$,
              'everyone else is refreshed');
SELECT throws_ok($$SELECT * FROM incentives.incentive_calculate('p2')$$, '22023', NULL, 'p2 fails to calculate');
SELECT results_eq($$SELECT participant_key, transaction_id FROM incentives_internal.calculation_failure()$$,
                  $$VALUES ('p2', 'L08')$$,
                  'calculation_failure() names the participant and transaction of the last failed calculation');
DELETE FROM incentives.transactions WHERE transaction_id = 'L08';

-- changed_only equals a full refresh after changes of every kind
UPDATE incentives.transactions SET amount = 1100 WHERE transaction_id = 'L04';
INSERT INTO incentives.transactions VALUES ('L09', 'p4', 'purchase', '2026-04-01', 'seed_a', 30, 'bag', 2500);
DELETE FROM incentives.transactions WHERE transaction_id = 'L06';
UPDATE incentives.transactions SET participant_key = 'p5' WHERE transaction_id = 'L07';
CALL incentives.refresh_earnings(changed_only => true);
SELECT is((SELECT participants FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1), 4,
          'changed_only recalculates the participants that changed: p2 (skipped before, and changed), p3, p4, p5');
SELECT bag_eq($$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount, transaction_date
                  FROM incentives.earnings$$,
              $$SELECT e.participant_key, e.offer_key, e.incentive_rate_key, e.transaction_id, e.incentive_amount, t.transaction_date
                  FROM incentives.incentive_calculate() e JOIN incentives.transactions t USING (transaction_id)$$,
              'after changed_only the earnings equal a full calculation');
UPDATE incentives.offers SET document = jsonb_set(document, '{incentive,rates,1,value}', '6') WHERE offer_key = 'life.stepped';
CALL incentives.refresh_earnings(changed_only => true);
SELECT results_eq($$SELECT participants, changed_only FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1$$,
                  $$VALUES (4, true)$$, 'an offer change recalculates everyone');
SELECT bag_eq($$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings$$,
              $$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate()$$,
              'and equals the calculation');
SELECT throws_ok($$CALL incentives.refresh_earnings(transactions => 'pg_temp.life_upto', changed_only => true)$$,
                 '0A000', NULL, 'changed_only is refused for a relation other than incentives.transactions');

-- A role that does not own incentives.earnings replaces the rows in place.
GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA incentives TO incentives_test_life_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA incentives, incentives_internal TO incentives_test_life_admin;
UPDATE incentives.transactions SET amount = 1300 WHERE transaction_id = 'L04';
SELECT lives_ok($$SELECT pg_temp.exec_as('incentives_test_life_admin', 'CALL incentives.refresh_earnings()')$$,
                'a non-owner with INSERT and DELETE refreshes everyone');
SELECT bag_eq($$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings$$,
              $$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate()$$,
              'with the same result');
SELECT is((SELECT count(*) FROM pg_inherits WHERE inhparent = 'incentives.earnings'::regclass), 2::bigint,
          '(no partition swapped: it has no right to)');

-- on_error => 'skip' when the read fails (a repeated transaction_id): the
-- batch is read again participant by participant, and only the one whose
-- rows repeat is skipped, in a refresh of everyone and of one participant.
CREATE TEMP VIEW life_doubled AS
SELECT * FROM incentives.transactions
UNION ALL
SELECT * FROM incentives.transactions WHERE transaction_id = 'L01';
CREATE TEMP TABLE life_before_read AS
SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings;
CALL incentives.refresh_earnings(transactions => 'pg_temp.life_doubled', on_error => 'skip');
SELECT results_eq($$SELECT status, exceptions FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1$$,
                  $$VALUES ('completed_with_exceptions', 1)$$,
                  'skip: a read that fails skips its participant only');
SELECT results_eq($$SELECT participant_key, transaction_id FROM incentives.calculation_exceptions
                     WHERE run_id = (SELECT max(run_id) FROM incentives.calculation_runs)$$,
                  $$VALUES ('p1', 'L01')$$,
                  'the exception names the participant and the repeated transaction');
SELECT bag_eq($$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings$$,
              $$SELECT * FROM life_before_read$$,
              'p1 keeps its earnings, everyone else is refreshed from the same transactions');
CALL incentives.refresh_earnings(participant_key => 'p1', transactions => 'pg_temp.life_doubled', on_error => 'skip');
SELECT results_eq($$SELECT status, exceptions FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1$$,
                  $$VALUES ('completed_with_exceptions', 1)$$,
                  'skip: a refresh of one participant whose read fails keeps going');
SELECT bag_eq($$SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings$$,
              $$SELECT * FROM life_before_read$$,
              'and the participant keeps its earnings');

SELECT * FROM finish();
ROLLBACK;
