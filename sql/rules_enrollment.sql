-- rules_enrollment: offers whose enrollment is "required" (docs/reference.md,
-- Enrollment): a transaction outside every window of its participant
-- counts for nothing in the offer -- no row, no threshold.
-- Fixture: test/fixtures/rules_enrollment/ (see its README.md).
\set fixture rules_enrollment
\i test/sql/load_fixture.psql

-- The checks every fixture gets: its rows, the decisive comparison with
-- expected.csv, per-participant calls, totals, the unique row key.
\i test/sql/fixture_checks.psql

-- The windows each participant's calculation used, and the transactions
-- they left out: retailer_001's October purchase is before its window;
-- retailer_002 has none; retailer_003's December purchase falls between
-- its two windows.
SELECT participant_key, offer_key, diagnostics -> 'rules' -> 'windows' AS windows,
       diagnostics -> 'rules' -> 'transactions_outside_windows' AS outside
  FROM incentives.incentive_diagnostics()
 ORDER BY participant_key, offer_key;

-- Only enrolled purchases count towards the stepped threshold: retailer_001
-- has $6,000 of them, below the 10,000 tier.
SELECT participant_key, diagnostics ->> 'threshold_value' AS threshold_value,
       diagnostics ->> 'selected_rate_key' AS selected
  FROM incentives.incentive_diagnostics(offer_keys => ARRAY['mfr.2026.enrolled_stepped'])
 ORDER BY participant_key;

-- Enrolling retailer_001 from October makes its October purchase count.
INSERT INTO incentives.enrollments VALUES ('retailer_001', 'mfr.2026.enrolled_standard', '2025-10-01', '2025-12-31');
SELECT transaction_id, incentive_amount
  FROM incentives.incentive_calculate('retailer_001', offer_keys => ARRAY['mfr.2026.enrolled_standard'])
 ORDER BY transaction_id;

-- Windows of one participant and offer may not overlap (23P01, naming both);
-- end_date >= start_date.
\set VERBOSITY default
\set SHOW_CONTEXT never
INSERT INTO incentives.enrollments VALUES ('retailer_001', 'mfr.2026.enrolled_standard', '2025-12-31', '2026-01-31');
\echo :SQLSTATE
INSERT INTO incentives.enrollments VALUES ('retailer_003', 'mfr.2026.enrolled_stepped', '2025-11-30', NULL);
INSERT INTO incentives.enrollments VALUES ('retailer_002', 'mfr.2026.enrolled_stepped', '2026-03-01', '2026-02-01');
\echo :SQLSTATE
-- an enrollment names a stored offer (23503; code/11_offer_keys.sql):
-- a scratch offer "x", deleted below (its enrollments stay)
INSERT INTO incentives.offers (document) VALUES
('{"offer_key": "x", "strategy_key": "standard", "calculator_key": "percent_of_amount",
   "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
   "incentives": [{"period_key": "p", "transaction_type": "none",
                   "rates": [{"sku_key": "none", "rate": 1, "measure": "percent"}]}]}');
-- two overlapping windows in one statement
INSERT INTO incentives.enrollments VALUES ('retailer_002', 'x', '2026-01-01', '2026-06-30'),
                                          ('retailer_002', 'x', '2026-06-30', NULL);
-- an update that makes a window overlap the next
UPDATE incentives.enrollments SET end_date = '2026-03-01'
 WHERE participant_key = 'retailer_003' AND offer_key = 'mfr.2026.enrolled_standard'
   AND start_date = '2025-10-01';
-- adjacent windows are fine; so is another offer or participant
INSERT INTO incentives.enrollments VALUES ('retailer_002', 'x', '2026-01-01', '2026-06-29'),
                                          ('retailer_002', 'x', '2026-06-30', NULL),
                                          ('retailer_004', 'x', '2026-01-01', NULL);
DELETE FROM incentives.offers WHERE offer_key = 'x';
SELECT * FROM incentives.enrollments ORDER BY 1, 2, 3;
\set VERBOSITY terse
