-- rules_incremental_tiers: stepped offers with tier_mode "incremental"
-- (docs/reference.md, Incremental tiers): each tier pays on its band of
-- the threshold value, as one blended rate on every earning transaction.
-- Fixture: test/fixtures/rules_incremental_tiers/ (see its README.md).
\set fixture rules_incremental_tiers
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- $30,000 at 2% / 4% / 6% over 10,000 / 25,000: the rows' exact amounts add
-- up to $1,100 (each row rounded on its own), where all-volume would pay
-- $1,800.
SELECT sum(incentive_amount)
  FROM incentives.incentive_calculate('retailer_001', offer_keys => ARRAY['mfr.2026.growth.incremental_percent']);

-- The bands and the blended rate.
SELECT participant_key, offer_key, diagnostics ->> 'blended_rate' AS blended_rate,
       diagnostics ->> 'next_blended_rate' AS next_blended_rate,
       (SELECT string_agg(format('%s..%s@%s:%s', b ->> 'from', COALESCE(b ->> 'to', ''), b ->> 'value', b ->> 'volume'), ' ')
          FROM jsonb_array_elements(diagnostics -> 'bands') b) AS bands
  FROM incentives.incentive_diagnostics()
 ORDER BY participant_key, offer_key;
