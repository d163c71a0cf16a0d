-- settlement_season: settlement finance (docs/lifecycle.md, Why a line
-- moved, holdbacks, minimums and closing a season): the documents' season
-- month by month with a holdback, a month below the minimum, a late
-- invoice and a return explained line by line, the final statement, a
-- closed offer that moves and its reopening; then every reason of
-- statement_line_changes, and that the changes of every line add up to
-- its movement.  In a database of its own, so that its statements and
-- ids are its own.
\set regress_db :DBNAME
CREATE DATABASE incentives_settlement;
\c incentives_settlement
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;

INSERT INTO incentives.offers (document) VALUES
('{"offer_key": "treat.h1", "label": "Seed treatment rebate",
   "strategy_key": "standard", "calculator_key": "percent_of_amount",
   "periods": [{"key": "h1", "start_date": "2026-01-01", "end_date": "2026-06-30"}],
   "incentives": [{"period_key": "h1", "transaction_type": "purchase",
                   "rates": [{"sku_key": "seed_treatment", "rate": 5, "measure": "percent"}]}],
   "settlement": {"holdback_percent": 10}}'),
-- an offer without settlement: its lines are 0.4.0's
('{"offer_key": "plain.h1", "label": "Plain rebate",
   "strategy_key": "standard", "calculator_key": "percent_of_amount",
   "periods": [{"key": "h1", "start_date": "2026-01-01", "end_date": "2026-06-30"}],
   "incentives": [{"period_key": "h1", "transaction_type": "purchase",
                   "rates": [{"sku_key": "herbicide", "rate": 2, "measure": "percent"}]}]}');
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount) VALUES
  ('T-1', 'retailer_a', 'purchase', '2026-01-15', 'seed_treatment', 200, 'gal', 20000.00),
  ('T-2', 'retailer_b', 'purchase', '2026-01-20', 'seed_treatment', 9, 'gal', 900.00),
  ('H-1', 'retailer_a', 'purchase', '2026-01-16', 'herbicide', 10, 'gal', 1234.56);
-- retailer_c's treatment purchase and its return sum to nothing: no line,
-- and their rows are not kept (its herbicide line's are)
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount, original_transaction_id) VALUES
  ('C-1', 'retailer_c', 'purchase', '2026-01-05', 'seed_treatment', 10, 'gal', 1000.00, NULL),
  ('C-2', 'retailer_c', 'purchase', '2026-01-06', 'seed_treatment', -10, 'gal', -1000.00, 'C-1'),
  ('C-3', 'retailer_c', 'purchase', '2026-01-07', 'herbicide', 100, 'gal', 10000.00, NULL);

-- January, no check under 100 per participant and currency
CALL incentives.settle('2026-01-31', minimum_payment => 100);
SELECT participant_key, offer_key, earned_to_date, payable_to_date, held_back, settled_before,
       amount_due, kind, final
  FROM incentives.statement_lines WHERE statement_id = 1 ORDER BY 1, 2;

-- February: new purchases and a late invoice dated in January
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount) VALUES
  ('T-3', 'retailer_a', 'purchase', '2026-02-10', 'seed_treatment', 100, 'gal', 10000.00),
  ('T-4', 'retailer_b', 'purchase', '2026-02-12', 'seed_treatment', 20, 'gal', 2000.00),
  ('T-5', 'retailer_a', 'purchase', '2026-01-25', 'seed_treatment', 10, 'gal', 1000.00);
CALL incentives.settle('2026-02-28', minimum_payment => 100);
SELECT participant_key, offer_key, earned_to_date, payable_to_date, held_back, settled_before,
       amount_due, kind, final
  FROM incentives.statement_lines WHERE statement_id = 2 ORDER BY 1, 2;
SELECT participant_key, transaction_id, previous_rate_key, previous_amount, rate_key, amount, change, reason,
       previous_statement_id
  FROM incentives.statement_line_changes WHERE statement_id = 2 ORDER BY 1, 2;

-- March: a return against its January sale
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount, original_transaction_id) VALUES
  ('T-6', 'retailer_a', 'purchase', '2026-03-05', 'seed_treatment', -40, 'gal', -4000.00, 'T-1');
CALL incentives.settle('2026-03-31', minimum_payment => 100);
SELECT participant_key, offer_key, earned_to_date, payable_to_date, held_back, settled_before,
       amount_due, kind, final
  FROM incentives.statement_lines WHERE statement_id = 3 ORDER BY 1, 2;
SELECT participant_key, transaction_id, previous_amount, amount, change, reason
  FROM incentives.statement_line_changes WHERE statement_id = 3 ORDER BY 1, 2;
SELECT transaction_id, incentive_rate_key, offer_sku_pay_rate, incentive_amount, transaction_date
  FROM incentives.statement_line_rows
 WHERE statement_id = 3 AND participant_key = 'retailer_a' AND offer_key = 'treat.h1' ORDER BY 1;

-- April: the other reasons.  The plain offer's rate goes from 2 % to 3 %
-- (rate; H-1's amount is corrected too: under another rate, still rate),
-- T-2's amount is corrected (amount), a herbicide purchase is entered
-- (new), one is deleted (removed)
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount) VALUES
  ('H-2', 'retailer_b', 'purchase', '2026-04-02', 'herbicide', 10, 'gal', 5000.00),
  ('H-3', 'retailer_b', 'purchase', '2026-04-03', 'herbicide', 10, 'gal', 6000.00);
CALL incentives.settle('2026-04-10', minimum_payment => 100);
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '3')
 WHERE offer_key = 'plain.h1';
UPDATE incentives.transactions SET amount = 1000.00 WHERE transaction_id = 'H-1';
UPDATE incentives.transactions SET amount = 1000.00 WHERE transaction_id = 'T-2';
DELETE FROM incentives.transactions WHERE transaction_id = 'H-3';
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount) VALUES
  ('H-4', 'retailer_b', 'purchase', '2026-04-20', 'herbicide', 10, 'gal', 100.00);
CALL incentives.settle('2026-04-30', minimum_payment => 100);
SELECT participant_key, offer_key, earned_to_date, payable_to_date, held_back, settled_before,
       amount_due, kind, final
  FROM incentives.statement_lines WHERE statement_id = 5 ORDER BY 1, 2;
SELECT participant_key, transaction_id, previous_rate_key, previous_amount, rate_key, amount, change, reason
  FROM incentives.statement_line_changes WHERE statement_id = 5 ORDER BY 1, 2;

-- The final statement: before the offers' last day it is refused
\set VERBOSITY terse
CALL incentives.settle('2026-06-29', final_offer_keys => ARRAY['treat.h1']);
CALL incentives.settle('2026-07-15', 'retailer_a', final_offer_keys => ARRAY['treat.h1']);
\set VERBOSITY default
CALL incentives.settle('2026-07-15', final_offer_keys => ARRAY['treat.h2']);
\set VERBOSITY terse
CALL incentives.settle('2026-07-15', final_offer_keys => ARRAY['treat.h1', 'treat.h1']);
CALL incentives.settle('2026-07-15', minimum_payment => -1);
\set VERBOSITY default
CALL incentives.settle('2026-07-15', minimum_payment => 100, final_offer_keys => ARRAY['treat.h1']);
SELECT participant_key, offer_key, earned_to_date, payable_to_date, held_back, settled_before,
       amount_due, kind, final
  FROM incentives.statement_lines WHERE statement_id = 6 ORDER BY 1, 2;
SELECT * FROM incentives.closed_offers;
SELECT offer_key, statement_id, statement_date, closed_by = current_user AS by_me FROM incentives.offer_closings;
-- settled again on the same date with the same keys (a retry, as after a
-- shard that failed): accepted, and it closes nothing more
CALL incentives.settle('2026-07-15', final_offer_keys => ARRAY['treat.h1']);
SELECT count(*) AS closings FROM incentives.offer_closings;

-- A late invoice for the closed offer: shown, and not settled
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount) VALUES
  ('T-7', 'retailer_b', 'purchase', '2026-06-20', 'seed_treatment', 10, 'gal', 1000.00);
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;
SELECT * FROM incentives.closed_offer_changes;
CALL incentives.settle('2026-08-31');
SELECT count(*) AS lines_of_treat_h1 FROM incentives.statement_lines
 WHERE statement_id = (SELECT max(statement_id) FROM incentives.statements) AND offer_key = 'treat.h1';
-- closed at another date: refused
\set VERBOSITY terse
CALL incentives.settle('2026-08-31', final_offer_keys => ARRAY['treat.h1']);
SELECT incentives.reopen_offer('treat.h1', ' ');
SELECT incentives.reopen_offer('plain.h1', 'not closed');
\set VERBOSITY default

-- Reopened: the next statement writes final lines and closes it again
SELECT incentives.reopen_offer('treat.h1', 'retailer_b''s invoice of June 20 arrived in August');
\set VERBOSITY terse
SELECT incentives.reopen_offer('treat.h1', 'twice');
\set VERBOSITY default
SELECT * FROM incentives.closed_offers;
CALL incentives.settle('2026-09-30', minimum_payment => 1000);
SELECT max(statement_id) AS september FROM incentives.statements \gset
SELECT participant_key, offer_key, earned_to_date, payable_to_date, held_back, settled_before,
       amount_due, kind, final
  FROM incentives.statement_lines WHERE statement_id = :september ORDER BY 1, 2;
SELECT participant_key, transaction_id, previous_amount, amount, change, reason
  FROM incentives.statement_line_changes WHERE statement_id = :september AND offer_key = 'treat.h1' ORDER BY 1, 2;
SELECT offer_key, reason, statement_id, reopened_by = current_user AS by_me FROM incentives.offer_reopenings;
SELECT * FROM incentives.closed_offers;
SELECT count(*) AS closed_offer_changes FROM incentives.closed_offer_changes;

-- Every line's changes add up to its movement since the pair's previous line
SELECT count(*) AS lines_checked,
       count(*) FILTER (WHERE l.earned_to_date - COALESCE(p.earned_to_date, 0)
                              <> COALESCE((SELECT sum(c.change) FROM incentives.statement_line_changes AS c
                                            WHERE c.statement_id = l.statement_id
                                              AND c.participant_key = l.participant_key
                                              AND c.offer_key = l.offer_key), 0)) AS lines_not_adding_up,
       count(*) FILTER (WHERE l.earned_to_date
                              <> COALESCE((SELECT sum(r.incentive_amount) FROM incentives.statement_line_rows AS r
                                            WHERE r.statement_id = l.statement_id
                                              AND r.participant_key = l.participant_key
                                              AND r.offer_key = l.offer_key), 0)) AS rows_not_adding_up
  FROM incentives.statement_lines AS l
  LEFT JOIN LATERAL (SELECT b.earned_to_date FROM incentives.statement_lines AS b
                      WHERE b.participant_key = l.participant_key AND b.offer_key = l.offer_key
                        AND b.statement_id < l.statement_id
                      ORDER BY b.statement_id DESC LIMIT 1) AS p ON true;

-- and no kept row belongs to no line
SELECT count(*) AS rows_without_line
  FROM incentives.statement_line_rows AS r
 WHERE NOT EXISTS (SELECT FROM incentives.statement_lines AS l
                    WHERE l.statement_id = r.statement_id AND l.participant_key = r.participant_key
                      AND l.offer_key = r.offer_key);
SELECT statement_id, offer_key, transaction_id, incentive_amount
  FROM incentives.statement_line_rows WHERE participant_key = 'retailer_c' AND statement_id = 1;

-- The ledger is append-only
\set VERBOSITY terse
UPDATE incentives.statement_kept_rows SET amounts = amounts;
DELETE FROM incentives.offer_closings;
TRUNCATE incentives.offer_reopenings;
-- a line's kind and amounts agree
INSERT INTO incentives.statement_lines (statement_id, participant_key, offer_key, earned_to_date, settled_before,
                                        amount_due, payable_to_date, held_back, final, kind)
VALUES (99, 'x', 'y', 10, 0, 0, 10, 0, false, 'unchanged');
\set VERBOSITY default

\c :regress_db
DROP DATABASE incentives_settlement;
