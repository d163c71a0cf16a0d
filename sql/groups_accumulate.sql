-- groups_accumulate: participant groups (docs/reference.md, Participant
-- groups).  An offer aggregated by group picks its tier on the group's
-- purchases and pays each member on its own: coop_north's $60,000,
-- $90,000 and $50,000 reach 4% together.  A member that joins mid-season
-- brings only its purchases from then on; properties are read under the
-- group; incremental bands are the group's.  Each row keeps its
-- participant and carries the group_key.
-- Fixture: test/fixtures/groups_accumulate/ (see its README.md).
\set fixture groups_accumulate
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- Each member's call gives its rows of the whole calculation.
SELECT participant_key, offer_key, transaction_id, incentive_amount, group_key
  FROM incentives.incentive_calculate('retailer_004')
 ORDER BY offer_key, transaction_id;

-- The group's figures in each member's diagnostics: the group's value and
-- tier, and its members' contributions.
SELECT participant_key, offer_key, group_key, diagnostics ->> 'threshold_value' AS threshold_value,
       diagnostics ->> 'selected_rate_key' AS tier,
       diagnostics -> 'aggregation' -> 'members' AS members
  FROM incentives.incentive_diagnostics(offer_keys => ARRAY['mfr.2026.group_volume'])
 ORDER BY participant_key, group_key;

-- incentive_explain says whose figures it shows (docs/analyst-guide.md,
-- incentive_explain).  For retailer_001, a member of coop_north under the
-- group offer: the threshold, the tiers and the earning transactions are
-- the group's ("basis": "group": $240,000, 5 earning transactions, the 4%
-- tier paying the group $9,600); the totals are the member's own rows
-- ("basis": "member": 2 transactions, $2,400.00).
SELECT x ->> 'basis' AS basis,
       (x ->> 'threshold_value')::numeric AS group_value,
       (x ->> 'earning_transactions')::integer AS group_transactions,
       x ->> 'selected_rate_key' AS group_tier,
       (SELECT (t ->> 'incentive_amount')::numeric FROM jsonb_array_elements(x -> 'tiers') AS t
         WHERE t ->> 'rate_key' = x ->> 'selected_rate_key') AS group_tier_pays,
       x -> 'totals' ->> 'basis' AS totals_basis,
       (x -> 'totals' ->> 'transactions')::integer AS member_transactions,
       (x -> 'totals' ->> 'incentive_amount')::numeric AS member_incentive_amount,
       jsonb_array_length(x -> 'rows') AS member_rows
  FROM incentives.incentive_explain('retailer_001', 'mfr.2026.group_volume') AS x;
-- ... which are the calculation's: the group's rows and the member's own.
SELECT count(DISTINCT transaction_id) AS group_transactions, sum(incentive_amount) AS group_pays,
       count(*) FILTER (WHERE participant_key = 'retailer_001') AS member_transactions,
       sum(incentive_amount) FILTER (WHERE participant_key = 'retailer_001') AS member_incentive_amount
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.group_volume'])
 WHERE group_key = 'coop_north';
SELECT sum(provided_amount) AS group_value
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.group_volume'])
 WHERE group_key = 'coop_north';
-- Figures of the participant's own: in no group (retailer_solo), under an
-- offer aggregated by participant, and retailer_004, whose January
-- purchase (before it joined) is its own but whose figures explain shows
-- are its group's (the first of its aggregation keys).
SELECT p AS participant_key, o AS offer_key, x ->> 'basis' AS basis,
       x -> 'totals' ->> 'basis' AS totals_basis, x ->> 'threshold_value' AS threshold_value,
       x -> 'totals' ->> 'incentive_amount' AS own_incentive_amount
  FROM (VALUES ('retailer_solo', 'mfr.2026.group_volume'), ('retailer_001', 'mfr.2026.location_volume'),
               ('retailer_004', 'mfr.2026.group_volume'), ('retailer_004', 'mfr.2026.location_volume')) AS v(p, o),
       incentives.incentive_explain(p, o) AS x
 ORDER BY 1, 2;

-- A group is no participant: its key in a call of its own has no rows.
SELECT count(*) FROM incentives.incentive_calculate('coop_north');

-- A head office buying directly (its key is the group_key) aggregates
-- with its group: coop_north's own $70,000 lifts the group to 5%.
INSERT INTO incentives.transactions VALUES
  ('GA-9999', 'coop_north', 'retailer_purchases_from_distribution', '2026-06-01',
   'agri_shield_insecticide_2.5_gal_53551', 140, 'gal', 70000.00);
SELECT participant_key, transaction_id, incentive_rate_key, incentive_amount, group_key
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.group_volume'])
 ORDER BY participant_key, transaction_id;
SELECT participant_key, transaction_id, incentive_amount
  FROM incentives.incentive_calculate('retailer_002', offer_keys => ARRAY['mfr.2026.group_volume']);
DELETE FROM incentives.transactions WHERE transaction_id = 'GA-9999';

-- through_date: only what was bought by the end of March counts for the
-- group (retailer_004's May purchase is not there yet): $200,000, 4%.
SELECT participant_key, transaction_id, incentive_amount, group_key
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.group_volume'],
                                      through_date => '2026-03-31')
 ORDER BY participant_key, transaction_id;

-- Windows are dated: retailer_004 joins on 2026-01-01 instead, so its
-- January purchase counts for the group too and lifts everyone to 5%.
UPDATE incentives.participant_groups SET start_date = '2026-01-01' WHERE participant_key = 'retailer_004';
SELECT participant_key, transaction_id, incentive_rate_key, incentive_amount
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.group_volume'])
 ORDER BY participant_key, transaction_id;

-- The materialized earnings (docs/lifecycle.md, Participant groups): a
-- full refresh, then one member's purchase changes.  Refreshing another
-- member alone gives it its rows over the whole group; a changed_only
-- refresh recalculates the whole group, and the earnings equal a full
-- calculation again.  (In a transaction rolled back at the end: the
-- tests after this one expect no refresh.)
BEGIN;
UPDATE incentives.participant_groups SET start_date = '2026-04-01' WHERE participant_key = 'retailer_004';
SET LOCAL client_min_messages = warning;
CALL incentives.refresh_earnings();
UPDATE incentives.transactions SET amount = 190000.00, quantity = 380 WHERE transaction_id = 'GA-0201';
CALL incentives.refresh_earnings(participant_key => 'retailer_001');
SELECT e.transaction_id, e.incentive_rate_key, e.incentive_amount, e.group_key
  FROM incentives.earnings e WHERE e.participant_key = 'retailer_001' AND e.offer_key = 'mfr.2026.group_volume'
 ORDER BY 1;
SELECT participant_key, count(*) FROM incentives.earnings_changes GROUP BY 1 ORDER BY 1;
CALL incentives.refresh_earnings(changed_only => true);
SELECT participants FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
(SELECT 'only materialized' AS problem, participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
   FROM incentives.earnings
 EXCEPT ALL
 SELECT 'only materialized', participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
   FROM incentives.incentive_calculate())
UNION ALL
(SELECT 'not materialized', participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
   FROM incentives.incentive_calculate()
 EXCEPT ALL
 SELECT 'not materialized', participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
   FROM incentives.earnings);
SELECT group_key, members, offers, rows, incentive_amount FROM incentives.earnings_by_group ORDER BY 1;
ROLLBACK;

-- The forecast of an offer aggregated by group: the basis and the tiers
-- are the group's (to date 280,000.00 of coop_north, with retailer_004 a
-- member all season here: 4 %; projected at the same pace 280,000 x 365
-- / 182 = 561,538.46: 5 %), the earnings each member's own rows
-- (retailer_001: 35,000 and 25,000 x 365 / 182 x 5 %, each row rounded,
-- 3,509.62 + 2,506.87 = 6,016.49).  A member's own call gives its rows of
-- the same forecast.
SELECT participant_key, group_key, elapsed_days, span_days, basis_to_date, projected_basis,
       rate_key_to_date, projected_rate_key, earned_to_date, projected_earnings, accrual_to_date
  FROM incentives.forecast('2026-03-31', offer_keys => ARRAY['mfr.2026.group_volume'])
 ORDER BY participant_key, group_key;
SELECT (SELECT array_agg(f ORDER BY f::text) FROM incentives.forecast('2026-03-31', 'retailer_002') f)
     = (SELECT array_agg(f ORDER BY f::text) FROM incentives.forecast('2026-03-31') f WHERE f.participant_key = 'retailer_002')
       AS member_call_equals_whole;
