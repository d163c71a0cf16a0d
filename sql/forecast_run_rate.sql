-- forecast_run_rate: incentives.forecast (docs/reference.md, Forecast):
-- the earnings to date, the same pace projected to the end of the offer's
-- span, and the straight-line share accrued; then CALL incentives.accrue
-- month by month (docs/lifecycle.md, Accruals).
-- Fixture: test/fixtures/forecast_run_rate/ (see its README.md).
\set fixture forecast_run_rate
\i test/sql/load_fixture.psql

-- The plain calculation (expected.csv), June purchases included.
\i test/sql/fixture_checks.psql

-- The forecast as of 2026-05-31 against expected_forecast_2026-05-31.csv,
-- every column compared as text: no row missing or unexpected.
CREATE TEMPORARY TABLE expected_forecast (
    participant_key text, offer_key text, group_key text, span_start text, span_end text,
    elapsed_days text, span_days text, basis_to_date text, projected_basis text,
    rate_key_to_date text, projected_rate_key text, earned_to_date text,
    projected_earnings text, accrual_to_date text);
\copy expected_forecast FROM 'test/fixtures/forecast_run_rate/expected_forecast_2026-05-31.csv' WITH (FORMAT csv, HEADER true)
CREATE TEMPORARY VIEW actual_forecast AS
SELECT participant_key, offer_key, group_key, span_start::text, span_end::text,
       elapsed_days::text, span_days::text, basis_to_date::text, projected_basis::text,
       rate_key_to_date, projected_rate_key, earned_to_date::text,
       projected_earnings::text, accrual_to_date::text
  FROM incentives.forecast('2026-05-31');
SET datestyle = 'ISO';
(SELECT 'missing' AS problem, * FROM (TABLE expected_forecast EXCEPT ALL TABLE actual_forecast) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual_forecast EXCEPT ALL TABLE expected_forecast) u)
 ORDER BY participant_key, offer_key, problem;

-- The peer's case: 110,000 bought half-way, earned 3,300.00 at 3%,
-- projected 220,000 at 4% = 8,800.00, accrued 4,400.00.
SELECT participant_key, offer_key, span_start, span_end, elapsed_days, span_days,
       basis_to_date, projected_basis, rate_key_to_date, projected_rate_key,
       earned_to_date, projected_earnings, accrual_to_date
  FROM incentives.forecast('2026-05-31')
 ORDER BY participant_key, offer_key;

-- One participant, one offer; a date before the span: no rows; after its
-- end the projection is the actual (k = 1).
SELECT offer_key, earned_to_date, projected_earnings, accrual_to_date
  FROM incentives.forecast('2026-05-31', 'retailer_002', ARRAY['mfr.2026.season_volume_tiers']);
SELECT count(*) FROM incentives.forecast('2026-02-28');
SELECT participant_key, offer_key, elapsed_days, earned_to_date, projected_earnings, accrual_to_date
  FROM incentives.forecast('2026-09-30')
 ORDER BY participant_key, offer_key;

-- k = 184 / 31 on 2026-03-31 is not a whole number: retailer_001's 45,000
-- projects to 267,096.774193...: the 4% tier, each row rounded once.
SELECT participant_key, offer_key, elapsed_days, basis_to_date, projected_basis, projected_rate_key,
       earned_to_date, projected_earnings, accrual_to_date
  FROM incentives.forecast('2026-03-31')
 ORDER BY participant_key, offer_key;

-- An unknown offer key is the calculation's error; a NULL date is refused.
\set VERBOSITY terse
SELECT * FROM incentives.forecast('2026-05-31', offer_keys => ARRAY['no.such.offer']);
SELECT * FROM incentives.forecast(NULL);
\set VERBOSITY default

-- Month-end accruals: the journal entry of each month is the change of
-- the accrual to date.
CALL incentives.accrue('2026-03-31');
CALL incentives.accrue('2026-04-30');
CALL incentives.accrue('2026-05-31');
SELECT a.accrual_id, a.as_of_date, l.participant_key, l.offer_key,
       l.accrued_to_date, l.accrued_before, l.delta
  FROM incentives.accruals a JOIN incentives.accrual_lines l USING (accrual_id)
 ORDER BY a.accrual_id, l.participant_key, l.offer_key;

-- The accruals equal the forecasts of their dates.
SELECT a.as_of_date, count(*) AS lines,
       count(*) FILTER (WHERE f.accrual_to_date IS DISTINCT FROM l.accrued_to_date) AS differ
  FROM incentives.accruals a
  JOIN incentives.accrual_lines l USING (accrual_id)
  LEFT JOIN LATERAL incentives.forecast(a.as_of_date) f
         ON f.participant_key = l.participant_key AND f.offer_key = l.offer_key
 GROUP BY a.as_of_date
 ORDER BY a.as_of_date;

-- A date before the latest accrual is refused; the same date again books
-- nothing new (every delta 0.00).
\set VERBOSITY terse
CALL incentives.accrue('2026-04-30');
\set VERBOSITY default
CALL incentives.accrue('2026-05-31');
SELECT count(*) AS lines, sum(delta) AS booked
  FROM incentives.accrual_lines
 WHERE accrual_id = (SELECT max(accrual_id) FROM incentives.accruals);

-- A return reverses part of the accrual: retailer_002 returns half of its
-- purchase; by June it has no tier any more, projected or not.
INSERT INTO incentives.transactions
VALUES ('FC-0202', 'retailer_002', 'retailer_purchases_from_distribution', '2026-06-10',
        'crop_guard_30_l_herbicide_2.5_gal_22654', -60, 'gal', -30000.00);
CALL incentives.accrue('2026-06-30');
SELECT participant_key, offer_key, accrued_to_date, accrued_before, delta
  FROM incentives.accrual_lines
 WHERE accrual_id = (SELECT max(accrual_id) FROM incentives.accruals)
 ORDER BY participant_key, offer_key;

-- The latest accrual beside what settlement statements have paid.
CALL incentives.settle('2026-06-30');
SELECT participant_key, offer_key, last_as_of_date, accrued, last_delta, settled,
       accrued_unsettled, last_statement_date
  FROM incentives.accrual_balances
 ORDER BY participant_key, offer_key;

-- Accruals are append-only for every role.
\set VERBOSITY terse
UPDATE incentives.accrual_lines SET delta = delta;
DELETE FROM incentives.accruals;
TRUNCATE incentives.accrual_lines;
\set VERBOSITY default

-- Accrual floor: never less than what is already earned.
SELECT count(*) AS rows, count(*) FILTER (WHERE accrual_to_date < earned_to_date) AS below_earned
  FROM unnest(ARRAY['2026-01-31', '2026-03-31', '2026-06-30', '2026-12-01']::date[]) AS d,
       LATERAL incentives.forecast(d) AS f;

-- The offers have settled money, so the next test's TRUNCATE of the
-- offers would be refused: they are removed on purpose, and the next
-- statement claws their payments back (docs/lifecycle.md, Removing a
-- settled offer).
SELECT offer_key, incentives.remove_settled_offer(offer_key, 'forecast_run_rate: the test is over') IS NOT NULL AS removed
  FROM incentives.offers ORDER BY 1;
CALL incentives.settle('2026-06-30');
SELECT participant_key, offer_key, settled_total, last_amount_due, last_kind
  FROM incentives.settlement_balances ORDER BY 1, 2;
