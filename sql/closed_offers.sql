-- closed_offers: closing a season (docs/lifecycle.md, Settlement
-- statements): settle's final_offer_keys closes an offer for everyone;
-- what moves after (a late transaction) shows in closed_offer_changes and
-- offer_warnings (closed_offer_changed) but is settled by no statement
-- until reopen_offer; accrue books a closed offer's final lines;
-- remove_settled_offer of a closed offer reopens it so that the next
-- statement claws back.  In a database of its own: statements are
-- append-only and a settled offer cannot be truncated away.
--
-- stepped_amount's offer_a (2025-10-01 to 2026-09-30) pays retailer_001
-- 13800.00 (15% of 78500.00 + 13500.00) and retailer_002 50.00 (10% of
-- 500.00); retailer_003's threshold purchases (999.99) reach no tier.
\set regress_db :DBNAME
CREATE DATABASE incentives_closed_offers;
\c incentives_closed_offers
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;
\set fixture stepped_amount
\i test/sql/load_fixture.psql
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;

-- A statement of the season, then the refusals of final_offer_keys.
CALL incentives.settle('2026-06-30');
\set VERBOSITY terse
CALL incentives.settle('2026-09-30', 'retailer_001', final_offer_keys => ARRAY['offer_a']);
CALL incentives.settle('2026-09-29', final_offer_keys => ARRAY['offer_a']);
\set VERBOSITY default
\set SHOW_CONTEXT never
CALL incentives.settle('2026-09-30', final_offer_keys => ARRAY['Offer_A']);
\set SHOW_CONTEXT errors
-- The offer's last day itself closes it: final lines for every participant
-- with money (retailer_003 has none), nothing held back.
CALL incentives.settle('2026-09-30', final_offer_keys => ARRAY['offer_a']);
SELECT l.statement_id, l.participant_key, l.earned_to_date, l.settled_before, l.amount_due, l.kind,
       l.payable_to_date, l.held_back, l.final
  FROM incentives.statement_lines AS l ORDER BY l.statement_id, l.participant_key;
SELECT * FROM incentives.closed_offers;
-- the same date again is a retry: nothing more closed, no line
CALL incentives.settle('2026-09-30', final_offer_keys => ARRAY['offer_a']);
SELECT offer_key, statement_id, statement_date FROM incentives.offer_closings;

-- Late transactions of the season: retailer_002 buys 20 gal more (10% of
-- 20 x 50.00 = 100.00), retailer_003's threshold reaches 1000 (10% of its
-- 500.00 = 50.00).
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount) VALUES
  ('LATE-1', 'retailer_002', 'retailer_purchases_from_distribution', '2026-09-15',
   'agri_shield_insecticide_2.5_gal_53551', 20, 'gal', 1120.00),
  ('LATE-2', 'retailer_003', 'retailer_purchases_from_distribution', '2026-09-20',
   'crop_guard_30_l_herbicide_2.5_gal_22654', 1, 'gal', 50.00);
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;
SELECT * FROM incentives.closed_offer_changes ORDER BY participant_key;
SELECT offer_key, path, code, message FROM incentives.offer_warnings WHERE code = 'closed_offer_changed';

-- Closed: a later statement writes no line for it, and closing it again
-- at another date is refused.
CALL incentives.settle('2026-10-31');
SELECT count(*) AS lines_after_closing FROM incentives.statement_lines WHERE statement_id = 4;
\set VERBOSITY terse
CALL incentives.settle('2026-10-31', final_offer_keys => ARRAY['offer_a']);
\set VERBOSITY default
-- accrue books the final lines' earned_to_date (retailer_003: none)
CALL incentives.accrue('2026-10-31');
SELECT participant_key, offer_key, accrued_to_date, accrued_before, delta
  FROM incentives.accrual_lines ORDER BY participant_key;

-- Reopening: a reason is required, and only a closed offer reopens.
\set VERBOSITY terse
SELECT incentives.reopen_offer('offer_a', '  ');
SELECT incentives.reopen_offer('offer_b', 'late sales');
\set VERBOSITY default
SELECT incentives.reopen_offer('offer_a', 'late September sales');
\set VERBOSITY terse
SELECT incentives.reopen_offer('offer_a', 'again');
\set VERBOSITY default
SELECT offer_key, reason, statement_id, reopened_by = current_user AS by_me FROM incentives.offer_reopenings;
SELECT count(*) AS closed FROM incentives.closed_offers;
SELECT count(*) AS changes FROM incentives.closed_offer_changes;
SELECT count(*) AS warnings FROM incentives.offer_warnings WHERE code = 'closed_offer_changed';
-- The next statement writes final lines, the true-up of what moved, and
-- closes the offer again.
CALL incentives.settle('2026-11-15');
SELECT l.participant_key, l.earned_to_date, l.settled_before, l.amount_due, l.kind,
       l.payable_to_date, l.held_back, l.final
  FROM incentives.statement_lines AS l WHERE l.statement_id = 5 ORDER BY l.participant_key;
SELECT participant_key, transaction_id, previous_amount, amount, change, reason, previous_statement_id
  FROM incentives.statement_line_changes WHERE statement_id = 5 ORDER BY participant_key, transaction_id;
SELECT * FROM incentives.closed_offers;
SELECT count(*) AS changes FROM incentives.closed_offer_changes;

-- Removing a closed offer on purpose reopens it (the removal's reason);
-- the next statement claws back with final lines and closes it again.
SELECT incentives.remove_settled_offer('offer_a', 'the program was withdrawn') AS removal_id;
SELECT offer_key, reason, statement_id FROM incentives.offer_reopenings ORDER BY reopening_id;
SELECT count(*) AS closed FROM incentives.closed_offers;
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;
CALL incentives.settle('2026-11-30');
SELECT l.participant_key, l.earned_to_date, l.settled_before, l.amount_due, l.kind,
       l.payable_to_date, l.held_back, l.final
  FROM incentives.statement_lines AS l WHERE l.statement_id = 6 ORDER BY l.participant_key;
SELECT * FROM incentives.closed_offers;
SELECT participant_key, settled_total, last_kind FROM incentives.settlement_balances ORDER BY participant_key;

\c :regress_db
DROP DATABASE incentives_closed_offers;
