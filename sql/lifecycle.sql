-- lifecycle: the earnings lifecycle (docs/lifecycle.md): offer
-- versions and as_of, through_date, settlement statements, refreshes that
-- keep going (on_error => 'skip') and that do less (changed_only), the run
-- log across languages.  Every statement runs on its own (autocommit), so
-- each change has a time of its own.  In a database of its own, so that
-- its runs, statements and ids are its own.
\set regress_db :DBNAME
CREATE DATABASE incentives_lifecycle;
\c incentives_lifecycle
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;
\set fixture stepped_amount
\i test/sql/load_fixture.psql
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;

------------------------------------------------------------------------
-- Offer versions
------------------------------------------------------------------------
-- The fixture's offer has its version 1 (the load truncated the offers:
-- every earlier version is closed).
SELECT offer_key, valid_to IS NULL AS current, changed_by = current_user AS by_me
  FROM incentives.offer_versions ORDER BY offer_key, version DESC LIMIT 1;
SELECT max(version) AS v1 FROM incentives.offer_versions WHERE offer_key = 'offer_a' \gset
SELECT valid_from AS v1_from FROM incentives.offer_versions WHERE offer_key = 'offer_a' AND version = :v1 \gset

-- A change writes the next version and closes the previous one at the
-- same instant.
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentive,rates,0,value}', '3')
 WHERE offer_key = 'offer_a';
SELECT version - :v1 AS version_after_v1, valid_to IS NULL AS current,
       document #> '{incentive,rates,0}' AS first_tier
  FROM incentives.offer_versions WHERE offer_key = 'offer_a' AND version >= :v1 ORDER BY version;
SELECT (SELECT valid_to FROM incentives.offer_versions WHERE offer_key = 'offer_a' AND version = :v1)
     = (SELECT valid_from FROM incentives.offer_versions WHERE offer_key = 'offer_a' AND version = :v1 + 1)
       AS contiguous;
SELECT valid_from AS v2_from FROM incentives.offer_versions WHERE offer_key = 'offer_a' AND version = :v1 + 1 \gset

-- An update that leaves the document as it is writes no version.
UPDATE incentives.offers SET document = document WHERE offer_key = 'offer_a';
SELECT count(*) - :v1 AS versions_after_v1 FROM incentives.offer_versions WHERE offer_key = 'offer_a';

-- as_of: the offers as they were.  Now, and at version 1's time.
SELECT participant_key, sum(incentive_amount) AS now
  FROM incentives.incentive_calculate() GROUP BY 1 ORDER BY 1;
SELECT participant_key, sum(incentive_amount) AS at_v1
  FROM incentives.incentive_calculate(as_of => :'v1_from') GROUP BY 1 ORDER BY 1;
SELECT participant_key, sum(incentive_amount) AS just_before_v2
  FROM incentives.incentive_calculate(as_of => :'v2_from'::timestamptz - interval '1 microsecond')
 GROUP BY 1 ORDER BY 1;
-- Before the offer existed: it is not there, and naming it is an error.
SELECT count(*) FROM incentives.incentive_calculate(as_of => :'v1_from'::timestamptz - interval '1 microsecond');
\set VERBOSITY terse
SELECT count(*) FROM incentives.incentive_calculate(offer_keys => '{offer_a}',
                                                    as_of => '2000-01-01');
\set VERBOSITY default

-- programs, program_rates and incentive_explain as of a time.
SELECT offer_key, version - :v1 AS version_after_v1, valid_to IS NOT NULL AS closed
  FROM incentives.programs(:'v1_from');
SELECT offer_key, version - :v1 AS version_after_v1, valid_to IS NOT NULL AS closed
  FROM incentives.programs(NULL);
SELECT rate_key, rate_value, threshold FROM incentives.program_rates(:'v1_from') ORDER BY threshold;
SELECT rate_key, rate_value, threshold FROM incentives.program_rates ORDER BY threshold;
SELECT x ->> 'selected_rate_key' AS selected, x -> 'totals' ->> 'incentive_amount' AS total,
       x ? 'as_of' AS shows_as_of
  FROM incentives.incentive_explain('retailer_001', 'offer_a', as_of => :'v1_from') AS x;
SELECT x ->> 'selected_rate_key' AS selected, x -> 'totals' ->> 'incentive_amount' AS total,
       x ? 'as_of' AS shows_as_of
  FROM incentives.incentive_explain('retailer_001', 'offer_a') AS x;

-- A delete closes the current version; an insert of the same key goes on
-- counting.
DELETE FROM incentives.offers WHERE offer_key = 'offer_a';
SELECT version - :v1 AS version_after_v1, valid_to IS NULL AS current
  FROM incentives.offer_versions WHERE offer_key = 'offer_a' AND version >= :v1 ORDER BY version;
SELECT count(*) AS rows_now FROM incentives.incentive_calculate();
SELECT sum(incentive_amount) AS as_of_v2 FROM incentives.incentive_calculate(as_of => :'v2_from');
\set fixture stepped_amount
\i test/sql/load_fixture.psql
SELECT version - :v1 AS version_after_v1, valid_to IS NULL AS current
  FROM incentives.offer_versions WHERE offer_key = 'offer_a' AND version >= :v1 ORDER BY version;

-- Append-only: no role changes or removes a version, the owner included;
-- not even the closing of a current version the versioning trigger does.
\set VERBOSITY terse
UPDATE incentives.offer_versions SET document = '{}' WHERE offer_key = 'offer_a';
UPDATE incentives.offer_versions SET valid_to = now() WHERE offer_key = 'offer_a' AND valid_to IS NULL;
DELETE FROM incentives.offer_versions WHERE offer_key = 'offer_a';
TRUNCATE incentives.offer_versions;
\set VERBOSITY default

------------------------------------------------------------------------
-- through_date: only the transactions dated on or before it exist
------------------------------------------------------------------------
SELECT transaction_id, participant_key, transaction_date, amount
  FROM incentives.transactions ORDER BY transaction_date, transaction_id;
SELECT d AS through_date, e.participant_key, count(*) AS rows, sum(e.incentive_amount) AS earned
  FROM unnest(ARRAY['2026-01-31', '2026-02-28', '2026-03-31']::date[]) AS d,
       LATERAL incentives.incentive_calculate(through_date => d) AS e
 GROUP BY 1, 2 ORDER BY 1, 2;
-- the threshold counts only those transactions too
SELECT participant_key, threshold_value, current_rate_key, gap_to_next, earned_now
  FROM incentives.tier_progress(through_date => '2026-01-31');
SELECT participant_key, d.diagnostics ->> 'threshold_value' AS threshold_value
  FROM incentives.incentive_diagnostics(through_date => '2026-01-31') AS d ORDER BY 1;
SELECT x ->> 'through_date' AS through_date, x ->> 'threshold_value' AS threshold_value,
       x -> 'totals' ->> 'incentive_amount' AS total
  FROM incentives.incentive_explain('retailer_001', 'offer_a', through_date => '2026-01-31') AS x;
SELECT jsonb_array_length(incentives.calculate(
         '{"participant_key": "retailer_001", "include_stored": true, "through_date": "2026-01-31"}')
         -> 'potential_earnings') AS rows;
\set VERBOSITY terse
SELECT incentives.calculate('{"through_date": "2026-02-30"}');
SELECT incentives.calculate('{"as_of": "yesterday-ish"}');
\set VERBOSITY default

------------------------------------------------------------------------
-- Settlement
------------------------------------------------------------------------
CALL incentives.settle('2026-01-31');
CALL incentives.settle('2026-02-28');
SELECT statement_id - min(statement_id) OVER () AS n, statement_date, participant_key,
       offers, earned_to_date, settled_before, amount_due
  FROM incentives.participant_statements ORDER BY 1, 3;
-- A return after payment: retailer_001's March purchase comes back.
INSERT INTO incentives.transactions VALUES
  ('RETURN-1', 'retailer_001', 'retailer_purchases_from_distribution', '2026-03-20',
   'crop_guard_30_l_herbicide_2.5_gal_22654', -1, 'gal', -500);
CALL incentives.settle('2026-03-31', 'retailer_001');
SELECT statement_id - min(statement_id) OVER () AS n, statement_date, participant_key,
       offers, earned_to_date, settled_before, amount_due, lines
  FROM incentives.participant_statements ORDER BY 1, 3;
SELECT participant_key, offer_key, settled_total, statements, last_statement_date, last_amount_due
  FROM incentives.settlement_balances ORDER BY 1, 2;
-- Earlier than a covered participant's latest statement: refused.
\set VERBOSITY terse
CALL incentives.settle('2026-03-30');
CALL incentives.settle('2026-02-28', 'retailer_001');
-- Another participant, settled alone, may still go back to its own date.
CALL incentives.settle('2026-02-28', 'retailer_003');
-- A settle whose snapshot could predate another settle's commit is refused.
BEGIN ISOLATION LEVEL REPEATABLE READ;
CALL incentives.settle('2026-03-31');
ROLLBACK;
-- Statements are append-only.
UPDATE incentives.statement_lines SET amount_due = 0;
DELETE FROM incentives.statements;
TRUNCATE incentives.statement_lines;
\set VERBOSITY default
-- Accrued (the materialized earnings) against settled.
CALL incentives.refresh_earnings();
SELECT participant_key, offer_key, accrued, settled, unsettled, last_statement_date
  FROM incentives.unsettled_earnings ORDER BY 1, 2;
DELETE FROM incentives.transactions WHERE transaction_id = 'RETURN-1';

------------------------------------------------------------------------
-- Refreshes that keep going: on_error => 'skip'
------------------------------------------------------------------------
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;
CREATE TEMP TABLE before AS SELECT * FROM incentives.earnings;
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('agri_shield_insecticide_2.5_gal_53551', 'gal');
INSERT INTO incentives.transactions VALUES
  ('LIFE-BAD', 'retailer_002', 'retailer_purchases_from_distribution', '2026-03-04',
   'agri_shield_insecticide_2.5_gal_53551', 1, 'drum', 50),
  ('LIFE-NEW', 'retailer_003', 'retailer_purchases_from_distribution', '2026-03-04',
   'crop_guard_30_l_herbicide_2.5_gal_22654', 1, 'gal', 5000);
CALL incentives.refresh_earnings(on_error => 'skip');
SELECT participants, rows, total_incentive, status, exceptions, on_error
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT participant_key, transaction_id, sqlstate, message
  FROM incentives.calculation_exceptions
 WHERE run_id = (SELECT max(run_id) FROM incentives.calculation_runs);
-- retailer_002 kept its rows; the others were refreshed.
SELECT e.participant_key, count(*) AS rows, sum(e.incentive_amount) AS earned,
       bool_and(e.run_id = b.run_id) AS kept
  FROM incentives.earnings e LEFT JOIN before b USING (participant_key, offer_key, incentive_rate_key, transaction_id)
 GROUP BY 1 ORDER BY 1;
-- The default still fails the run and changes nothing.
\set VERBOSITY terse
CALL incentives.refresh_earnings();
\set VERBOSITY default
SELECT status, sqlstate FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;

-- The failed run's log row survives whatever the language of the
-- server's messages (the procedure asks SPI whether it may commit; it
-- never reads an error message).
SET lc_messages = 'de_DE.UTF-8';
\set VERBOSITY terse
CALL incentives.refresh_earnings('retailer_002');
\set VERBOSITY default
RESET lc_messages;
SELECT participant_key, status, sqlstate, error IS NOT NULL AS has_error
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;

------------------------------------------------------------------------
-- Refreshes that do less: changed_only
------------------------------------------------------------------------
DELETE FROM incentives.transactions WHERE transaction_id = 'LIFE-BAD';
-- retailer_002 is pending twice: the skipping run logged it again (it kept
-- its old earnings), and its bad transaction went; nobody else is
SELECT participant_key FROM incentives.earnings_changes ORDER BY 1;
SET client_min_messages = warning;
CALL incentives.refresh_earnings(changed_only => true);
RESET client_min_messages;
SELECT participants, rows, total_incentive, status, changed_only
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT count(*) AS pending FROM incentives.earnings_changes;
-- Nothing changed: nothing recalculated, and no run logged (docs/
-- analyst-guide.md, Live earnings).
SELECT count(*) AS runs_before FROM incentives.calculation_runs \gset
CALL incentives.refresh_earnings(changed_only => true);
SELECT count(*) - :runs_before AS runs_logged FROM incentives.calculation_runs;
-- A stored property or a SKU change.
INSERT INTO incentives.participant_properties VALUES ('retailer_001', 'unused_property', 1);
SELECT participant_key FROM incentives.earnings_changes ORDER BY 1;
UPDATE incentives.skus SET label = 'relabelled' WHERE false;
SELECT count(*) AS pending_after_an_update_of_nothing FROM incentives.earnings_changes;
UPDATE incentives.skus SET label = 'relabelled';
SELECT participant_key IS NULL AS everyone FROM incentives.earnings_changes ORDER BY 1;
-- Everyone changed, and a changed_only run still replaces the rows in
-- place: the partition is the same table before and after (no swap).  A
-- SKU's label moves no figure: every row stays as the run before wrote it.
SELECT string_agg(i.inhrelid::regclass::text, ',') AS partition_before
  FROM pg_inherits i
 WHERE i.inhparent = 'incentives.earnings'::regclass
   AND i.inhrelid <> 'incentives_internal.earnings_default'::regclass \gset
SET client_min_messages = warning;
CALL incentives.refresh_earnings(changed_only => true);
RESET client_min_messages;
SELECT participants, status FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT string_agg(i.inhrelid::regclass::text, ',') = :'partition_before' AS same_partition,
       (SELECT count(*) FILTER (WHERE e.run_id = (SELECT max(run_id) FROM incentives.calculation_runs))
          FROM incentives.earnings AS e) AS rows_rewritten
  FROM pg_inherits i
 WHERE i.inhparent = 'incentives.earnings'::regclass
   AND i.inhrelid <> 'incentives_internal.earnings_default'::regclass;
-- The result equals a full calculation.
(SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings
 EXCEPT ALL
 SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate())
UNION ALL
(SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate()
 EXCEPT ALL
 SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings);
-- One transaction's amount: only the rows whose figures moved are
-- written again (the run's id); the participant's other rows stay.
UPDATE incentives.transactions SET amount = amount + 100
 WHERE transaction_id = (SELECT min(transaction_id) FROM incentives.earnings WHERE participant_key = 'retailer_001');
SET client_min_messages = warning;
CALL incentives.refresh_earnings(changed_only => true);
RESET client_min_messages;
SELECT e.transaction_id, e.offer_key, e.incentive_amount,
       e.run_id = (SELECT max(run_id) FROM incentives.calculation_runs) AS rewritten
  FROM incentives.earnings AS e WHERE e.participant_key = 'retailer_001'
 ORDER BY e.transaction_id, e.offer_key;
(SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings
 EXCEPT ALL
 SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate())
UNION ALL
(SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate()
 EXCEPT ALL
 SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings);
-- Everyone again, and one participant's transactions all gone: its rows
-- go too.
CREATE TEMP TABLE gone AS SELECT * FROM incentives.transactions WHERE participant_key = 'retailer_002';
DELETE FROM incentives.transactions WHERE participant_key = 'retailer_002';
UPDATE incentives.skus SET label = 'relabelled again';
SET client_min_messages = warning;
CALL incentives.refresh_earnings(changed_only => true);
RESET client_min_messages;
SELECT participant_key, count(*) FROM incentives.earnings GROUP BY 1 ORDER BY 1;
INSERT INTO incentives.transactions SELECT * FROM gone;
SET client_min_messages = warning;
CALL incentives.refresh_earnings(changed_only => true);
RESET client_min_messages;
SELECT participant_key, count(*) FROM incentives.earnings GROUP BY 1 ORDER BY 1;
-- Only incentives.transactions is tracked.
CREATE VIEW public.lifecycle_lines AS SELECT * FROM incentives.transactions;
\set VERBOSITY terse
CALL incentives.refresh_earnings(transactions => 'public.lifecycle_lines', changed_only => true);
CALL incentives.refresh_earnings('retailer_001', changed_only => true);
CALL incentives.refresh_earnings(on_error => 'ignore');
\set VERBOSITY default
-- A refresh from another relation leaves everyone pending.
SET client_min_messages = warning;
CALL incentives.refresh_earnings(transactions => 'public.lifecycle_lines');
RESET client_min_messages;
SELECT participant_key IS NULL AS everyone FROM incentives.earnings_changes;
DROP VIEW public.lifecycle_lines;

------------------------------------------------------------------------
-- The run log: live runs' rows kept incentives.run_log_keep
------------------------------------------------------------------------
SHOW incentives.run_log_keep;
SET client_min_messages = warning;
CALL incentives.refresh_earnings(changed_only => true);
RESET client_min_messages;
SELECT count(*) FILTER (WHERE changed_only AND status = 'succeeded') > 1 AS live_runs_logged
  FROM incentives.calculation_runs;
SELECT count(*) FILTER (WHERE NOT changed_only) AS other_runs,
       count(*) FILTER (WHERE status <> 'succeeded') AS not_succeeded
  FROM incentives.calculation_runs \gset
-- Kept no time at all: the next live run deletes the succeeded live runs
-- before it; it keeps its own row, the other refreshes' and those that
-- did not succeed.
SET incentives.run_log_keep = 0;
INSERT INTO incentives.participant_properties VALUES ('retailer_002', 'unused_property', 1);
SET client_min_messages = warning;
CALL incentives.refresh_earnings(changed_only => true);
RESET client_min_messages;
SELECT count(*) FILTER (WHERE changed_only AND status = 'succeeded') AS live_runs,
       count(*) FILTER (WHERE NOT changed_only) = :other_runs AS other_runs_kept,
       count(*) FILTER (WHERE status <> 'succeeded') = :not_succeeded AS others_kept
  FROM incentives.calculation_runs;
SELECT participant_key, participants FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
-- -1 keeps every row; the setting takes units of time.
SET incentives.run_log_keep = -1;
SELECT incentives_internal.run_log_keep() IS NULL AS keep_all;
SET incentives.run_log_keep = '90d';
SHOW incentives.run_log_keep;
RESET incentives.run_log_keep;

------------------------------------------------------------------------
-- A live run under incentives.changed_only_limit: the participants
-- logged first, the others left for the next run
------------------------------------------------------------------------
SHOW incentives.changed_only_limit;
SELECT count(*) AS pending FROM incentives.earnings_changes;
-- Three participants change, one transaction each, in this order.
UPDATE incentives.transactions SET amount = amount + 700, quantity = quantity + 7
 WHERE transaction_id = (SELECT min(transaction_id) FROM incentives.earnings WHERE participant_key = 'retailer_003');
UPDATE incentives.transactions SET amount = amount + 700, quantity = quantity + 7
 WHERE transaction_id = (SELECT min(transaction_id) FROM incentives.earnings WHERE participant_key = 'retailer_001');
UPDATE incentives.transactions SET amount = amount + 700, quantity = quantity + 7
 WHERE transaction_id = (SELECT min(transaction_id) FROM incentives.earnings WHERE participant_key = 'retailer_002');
-- The first again: it keeps its place, and a run that takes it takes
-- both of its entries.
UPDATE incentives.transactions SET amount = amount + 100
 WHERE transaction_id = (SELECT max(transaction_id) FROM incentives.earnings WHERE participant_key = 'retailer_003');
SELECT participant_key FROM incentives.earnings_changes ORDER BY logged_at;
SET incentives.changed_only_limit = 2;
CALL incentives.refresh_earnings(changed_only => true);
SELECT participants, changed_only FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT participant_key AS left_for_the_next_run FROM incentives.earnings_changes;
-- The two taken equal a calculation; the one left does not yet.
SELECT c.participant_key, sum(c.incentive_amount) = (SELECT sum(e.incentive_amount) FROM incentives.earnings AS e
                                                      WHERE e.participant_key = c.participant_key) AS current
  FROM incentives.incentive_calculate() AS c
 WHERE c.participant_key IN ('retailer_001', 'retailer_002', 'retailer_003')
 GROUP BY 1 ORDER BY 1;
CALL incentives.refresh_earnings(changed_only => true);
SELECT participants FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT count(*) AS pending FROM incentives.earnings_changes;
-- A change for everyone is never limited.
SET incentives.changed_only_limit = 1;
UPDATE incentives.skus SET label = 'relabelled under a limit';
SET client_min_messages = warning;
CALL incentives.refresh_earnings(changed_only => true);
RESET client_min_messages;
SELECT participants = (SELECT count(DISTINCT participant_key) FROM incentives.transactions) AS everyone
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
(SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings
 EXCEPT ALL
 SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate())
UNION ALL
(SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate()
 EXCEPT ALL
 SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings);
SET incentives.changed_only_limit = -1;
SELECT incentives_internal.changed_only_limit() IS NULL AS no_limit;
RESET incentives.changed_only_limit;

------------------------------------------------------------------------
-- The swap: one partition at a time, owned by the table's owner
------------------------------------------------------------------------
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;
SELECT count(*) AS partitions,
       bool_and(c.relname = 'earnings_run_' || (SELECT max(run_id) FROM incentives.calculation_runs)) AS latest_run,
       bool_and(c.relowner = (SELECT relowner FROM pg_class WHERE oid = 'incentives.earnings'::regclass)) AS owned
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'incentives.earnings'::regclass
   AND i.inhrelid <> 'incentives_internal.earnings_default'::regclass;
SELECT count(*) AS default_partition_rows FROM incentives_internal.earnings_default;

\c :regress_db
DROP DATABASE incentives_lifecycle;
