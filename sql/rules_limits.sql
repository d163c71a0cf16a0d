-- rules_limits: a maximum and a minimum payout per participant and offer
-- (docs/reference.md, Limits): a capped offer's rows are scaled and
-- rounded again so they add up to the maximum exactly; below the minimum
-- the offer pays nothing.
-- Fixture: test/fixtures/rules_limits/ (see its README.md).
\set fixture rules_limits
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- Capped rows add up to the maximum exactly; the pay rate stays nominal.
SELECT participant_key, sum(incentive_amount), min(offer_sku_pay_rate), max(offer_sku_pay_rate)
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.capped_percent'])
 GROUP BY participant_key ORDER BY participant_key;

-- The amount before the limits, and which applied.
SELECT participant_key, offer_key, diagnostics -> 'rules' -> 'limits' AS limits,
       diagnostics -> 'rules' ->> 'incentive_amount' AS incentive_amount
  FROM incentives.incentive_diagnostics()
 ORDER BY participant_key, offer_key;
