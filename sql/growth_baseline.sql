-- growth_baseline: stepped offers whose tiers are growth percentages over
-- a baseline (docs/reference.md, Growth over a baseline): last season's
-- purchases (a baseline by dates) or a stored property, paid on all the
-- volume, on the growth only, or band by band.
-- Fixture: test/fixtures/growth_baseline/ (see its README.md).
\set fixture growth_baseline
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- The peer's three ways to pay +17.5% over 2,000,000 (the rows' exact
-- amounts): all the volume 70,500.00, only the growth 10,500.00, band by
-- band 3,500.00; and 2% of 112,000 against a plan of 100,000.
SELECT offer_key, sum(incentive_amount) AS incentive_amount
  FROM incentives.incentive_calculate()
 GROUP BY offer_key
 ORDER BY offer_key;

-- What each participant's growth is, and why there is none.
SELECT participant_key, offer_key,
       diagnostics -> 'baseline' AS baseline,
       diagnostics ->> 'baseline_value' AS baseline_value,
       diagnostics ->> 'current_value' AS current_value,
       diagnostics ->> 'threshold_value' AS growth,
       diagnostics ->> 'no_growth_value' AS no_growth_value,
       diagnostics ->> 'selected_rate_key' AS tier
  FROM incentives.incentive_diagnostics()
 ORDER BY participant_key, offer_key;

-- The next tier and the volume still needed to reach it.
SELECT participant_key, offer_key, diagnostics ->> 'next_rate_key' AS next_rate_key,
       diagnostics ->> 'gap_to_next' AS points_to_next,
       diagnostics ->> 'next_volume' AS next_volume,
       diagnostics ->> 'volume_to_next' AS volume_to_next
  FROM incentives.incentive_diagnostics(offer_keys => ARRAY['mfr.2026.growth_all_volume', 'mfr.2026.growth_vs_plan'])
 ORDER BY participant_key, offer_key;

-- The bands of the incremental offer: edges at 2,200,000, 2,300,000 and
-- 2,400,000 on the 2,350,000 bought.
SELECT (SELECT string_agg(format('%s..%s@%s:%s', b ->> 'start_volume', COALESCE(b ->> 'end_volume', ''),
                                 b ->> 'value', b ->> 'volume'), ' ')
          FROM jsonb_array_elements(diagnostics -> 'bands') b) AS bands,
       diagnostics ->> 'blended_rate' AS blended_rate
  FROM incentives.incentive_diagnostics('retailer_001', offer_keys => ARRAY['mfr.2026.growth_banded']);

-- A baseline is what the transactions say: a late return of half of last
-- season's first purchase lowers it to 1,400,000 and raises the growth to
-- +67.9%, the 4% tier.
INSERT INTO incentives.transactions
VALUES ('GR-0107', 'retailer_001', 'retailer_purchases_from_distribution', '2025-04-01',
        'agri_shield_insecticide_2.5_gal_53551', -1200, 'gal', -600000.00);
SELECT diagnostics ->> 'baseline_value' AS baseline_value, diagnostics ->> 'threshold_value' AS growth,
       diagnostics ->> 'selected_rate_key' AS tier
  FROM incentives.incentive_diagnostics('retailer_001', offer_keys => ARRAY['mfr.2026.growth_all_volume']);

DELETE FROM incentives.transactions WHERE transaction_id = 'GR-0107';

-- through_date applies to the baseline's transactions too: through
-- 2025-02-28 the baseline has only 2024-11-15's 1,200,000, and this
-- season nothing yet (-100%).
SELECT diagnostics ->> 'baseline_value' AS baseline_value, diagnostics ->> 'current_value' AS current_value,
       diagnostics ->> 'threshold_value' AS growth
  FROM incentives.incentive_diagnostics('retailer_001', offer_keys => ARRAY['mfr.2026.growth_all_volume'],
                                        through_date => '2025-02-28');

-- An enrollment does not filter the baseline: retailer_001 enrolled from
-- 2025-11-01 still has last season (and the 2025-11-05 purchase counts).
UPDATE incentives.offers
   SET document = jsonb_set(document, '{enrollment}', '"required"')
 WHERE offer_key = 'mfr.2026.growth_all_volume';
INSERT INTO incentives.enrollments VALUES ('retailer_001', 'mfr.2026.growth_all_volume', '2025-11-01', NULL);
SELECT sum(incentive_amount), min(incentive_rate_key)
  FROM incentives.incentive_calculate('retailer_001', offer_keys => ARRAY['mfr.2026.growth_all_volume']);
-- Without a window this season counts for nothing, last season still does:
-- -100%.
DELETE FROM incentives.enrollments;
SELECT diagnostics ->> 'baseline_value' AS baseline_value, diagnostics ->> 'current_value' AS current_value,
       diagnostics ->> 'threshold_value' AS growth
  FROM incentives.incentive_diagnostics('retailer_001', offer_keys => ARRAY['mfr.2026.growth_all_volume']);
UPDATE incentives.offers
   SET document = document - 'enrollment'
 WHERE offer_key = 'mfr.2026.growth_all_volume';

-- tier_progress: the current value, the baseline, the growth and why there
-- is none, the next tier and the dollars still needed to reach it.
SELECT participant_key, offer_key, threshold_type, current_value, baseline_value, baseline,
       growth_percent, no_growth_value, pays_on, current_rate_key, next_rate_key,
       gap_to_next, next_volume, volume_to_next, earned_now, earned_at_next
  FROM incentives.tier_progress()
 ORDER BY participant_key, offer_key;

-- explain shows the baseline too.
SELECT e -> 'baseline' AS baseline, e ->> 'baseline_value' AS baseline_value,
       e ->> 'current_value' AS current_value, e ->> 'threshold_value' AS growth,
       e ->> 'pays_on' AS pays_on, e -> 'totals' ->> 'incentive_amount' AS incentive_amount
  FROM incentives.incentive_explain('retailer_001', 'mfr.2026.growth_excess') AS e;
SELECT e ->> 'no_growth_value' AS no_growth_value, e ->> 'baseline_value' AS baseline_value
  FROM incentives.incentive_explain('retailer_003', 'mfr.2026.growth_vs_plan') AS e;

-- programs and program_rates show the baseline and what the tiers pay on.
SELECT offer_key, threshold_type, tier_mode, pays_on, baseline
  FROM incentives.programs
 ORDER BY offer_key;
SELECT offer_key, rate_key, threshold, threshold_type, pays_on, baseline_start_date,
       baseline_end_date, baseline_property_key
  FROM incentives.program_rates
 WHERE offer_key IN ('mfr.2026.growth_excess', 'mfr.2026.growth_vs_plan')
 ORDER BY offer_key, threshold;

-- A requirement of a growth type: +15% over last season or nothing.  The
-- standard 1% offer pays retailer_001 (+17.5%); nobody else has a growth
-- value or enough of it.
INSERT INTO incentives.offers (document) VALUES ('{
  "offer_key": "mfr.2026.base_if_growing", "strategy_key": "standard", "calculator_key": "percent_of_amount",
  "periods": [{"key": "season", "start_date": "2025-10-01", "end_date": "2026-09-30"}],
  "incentives": [{"period_key": "season", "transaction_type": "retailer_purchases_from_distribution",
                  "rates": [{"sku_key": "agri_shield_insecticide_2.5_gal_53551", "rate": 1, "measure": "percent"}]}],
  "requirements": [{"key": "growth_15", "type": "growth_amount", "minimum": 15,
                    "filters": [{"period_key": "season", "transaction_type": "retailer_purchases_from_distribution",
                                 "sku_keys": ["agri_shield_insecticide_2.5_gal_53551", "crop_guard_30_l_herbicide_2.5_gal_22654"]}],
                    "baseline": {"start_date": "2024-10-01", "end_date": "2025-09-30"}}]}');
SELECT participant_key, sum(incentive_amount)
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.base_if_growing'])
 GROUP BY participant_key
 ORDER BY participant_key;
SELECT participant_key, requirement_key, requirement_type, current_value, baseline_value,
       value, minimum, gap, met, no_growth_value
  FROM incentives.requirement_progress()
 WHERE offer_key = 'mfr.2026.base_if_growing'
 ORDER BY participant_key;
SELECT requirements FROM incentives.programs WHERE offer_key = 'mfr.2026.base_if_growing';
