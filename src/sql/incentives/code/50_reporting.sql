------------------------------------------------------------------------
-- Reporting views over incentives.earnings: each groups the materialized
-- earnings by a key (participant, offer, SKU, month, group) and measures the
-- group.
------------------------------------------------------------------------

CREATE OR REPLACE VIEW incentives.earnings_by_participant WITH (security_invoker = true) AS
SELECT e.participant_key,
       count(DISTINCT e.offer_key)      AS offers,
       count(DISTINCT e.transaction_id) AS transactions,
       count(*)                         AS rows,
       sum(e.incentivized_amount)       AS incentivized_amount,
       sum(e.incentive_amount)          AS incentive_amount,
       max(e.calculated_at)             AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.participant_key;
COMMENT ON VIEW incentives.earnings_by_participant IS 'Materialized earnings per participant';
COMMENT ON COLUMN incentives.earnings_by_participant.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.earnings_by_participant.offers IS 'Offers it earns under';
COMMENT ON COLUMN incentives.earnings_by_participant.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_participant.rows IS 'Earning rows (a transaction earns once per offer and rate key)';
COMMENT ON COLUMN incentives.earnings_by_participant.incentivized_amount IS 'Sum of incentivized_amount over the rows (a transaction earning under two rates counts twice)';
COMMENT ON COLUMN incentives.earnings_by_participant.incentive_amount IS 'Total incentive earned';
COMMENT ON COLUMN incentives.earnings_by_participant.calculated_at IS 'When the newest of its rows was calculated';

CREATE OR REPLACE VIEW incentives.earnings_by_offer WITH (security_invoker = true) AS
SELECT e.offer_key,
       min(e.offer_calculator)           AS offer_calculator,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.offer_key;
COMMENT ON VIEW incentives.earnings_by_offer IS 'Materialized earnings per offer';
COMMENT ON COLUMN incentives.earnings_by_offer.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.earnings_by_offer.offer_calculator IS 'Its calculator';
COMMENT ON COLUMN incentives.earnings_by_offer.participants IS 'Participants earning under it';
COMMENT ON COLUMN incentives.earnings_by_offer.transactions IS 'Distinct transactions that earn under it';
COMMENT ON COLUMN incentives.earnings_by_offer.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_offer.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_offer.incentive_amount IS 'Total incentive paid by the offer';
COMMENT ON COLUMN incentives.earnings_by_offer.calculated_at IS 'When the newest of its rows was calculated';

CREATE OR REPLACE VIEW incentives.earnings_by_sku WITH (security_invoker = true) AS
SELECT e.sku_key,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_quantity)      AS incentivized_quantity,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.sku_key;
COMMENT ON VIEW incentives.earnings_by_sku IS 'Materialized earnings per SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.sku_key IS 'The SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.offers IS 'Offers it earns under';
COMMENT ON COLUMN incentives.earnings_by_sku.participants IS 'Participants earning on it';
COMMENT ON COLUMN incentives.earnings_by_sku.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_sku.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_sku.incentivized_quantity IS 'Sum of incentivized_quantity over the rows, in the SKU''s unit of measure (incentives.skus; each transaction''s own unit when the SKU is not there)';
COMMENT ON COLUMN incentives.earnings_by_sku.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_sku.incentive_amount IS 'Total incentive earned on the SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.calculated_at IS 'When the newest of its rows was calculated';

CREATE OR REPLACE VIEW incentives.earnings_by_month WITH (security_invoker = true) AS
SELECT CAST(date_trunc('month', e.transaction_date) AS date) AS month,
       count(DISTINCT e.participant_key)                     AS participants,
       count(DISTINCT e.offer_key)                           AS offers,
       count(DISTINCT e.transaction_id)                      AS transactions,
       count(*)                                              AS rows,
       sum(e.incentivized_amount)                            AS incentivized_amount,
       sum(e.incentive_amount)                               AS incentive_amount,
       max(e.calculated_at)                                  AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY 1;
COMMENT ON VIEW incentives.earnings_by_month IS 'Materialized earnings per calendar month of the transaction date';
COMMENT ON COLUMN incentives.earnings_by_month.month IS 'First day of the month of the earning transactions'' date';
COMMENT ON COLUMN incentives.earnings_by_month.participants IS 'Participants earning in the month';
COMMENT ON COLUMN incentives.earnings_by_month.offers IS 'Offers earned under in the month';
COMMENT ON COLUMN incentives.earnings_by_month.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_month.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_month.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_month.incentive_amount IS 'Total incentive earned by the month''s transactions';
COMMENT ON COLUMN incentives.earnings_by_month.calculated_at IS 'When the newest of its rows was calculated';

CREATE OR REPLACE VIEW incentives.earnings_by_group WITH (security_invoker = true) AS
SELECT e.group_key,
       count(DISTINCT e.participant_key) AS members,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at
  FROM incentives.earnings AS e
 WHERE e.group_key IS NOT NULL
 GROUP BY e.group_key;
COMMENT ON VIEW incentives.earnings_by_group IS 'Materialized earnings per group: the rows of offers aggregated by group computed over a group''s figures (docs/reference.md, Participant groups); a reader sees the rows of the members it may see';
COMMENT ON COLUMN incentives.earnings_by_group.group_key IS 'The group';
COMMENT ON COLUMN incentives.earnings_by_group.members IS 'Members with earning rows under it';
COMMENT ON COLUMN incentives.earnings_by_group.offers IS 'Offers aggregated by group its members earn under';
COMMENT ON COLUMN incentives.earnings_by_group.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_group.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_group.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_group.incentive_amount IS 'Total incentive earned by its members under it';
COMMENT ON COLUMN incentives.earnings_by_group.calculated_at IS 'When the newest of its rows was calculated';
