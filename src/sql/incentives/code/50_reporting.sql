------------------------------------------------------------------------
-- Reporting views over incentives.earnings: each groups the materialized
-- earnings by a key (participant, offer, SKU, month, group) and measures the
-- group; earnings_by_product and earnings_by_group_level roll each row up
-- to every product node and every group above it, so a row counts under
-- several keys of those two.  Amounts are in the offers' currencies
-- (docs/reference.md, Currencies): every view groups by the rows'
-- currency as well (its last column), so no figure adds two currencies.
------------------------------------------------------------------------

CREATE OR REPLACE VIEW incentives.earnings_by_participant WITH (security_invoker = true) AS
SELECT e.participant_key,
       count(DISTINCT e.offer_key)      AS offers,
       count(DISTINCT e.transaction_id) AS transactions,
       count(*)                         AS rows,
       sum(e.incentivized_amount)       AS incentivized_amount,
       sum(e.incentive_amount)          AS incentive_amount,
       max(e.calculated_at)             AS calculated_at,
       e.currency
  FROM incentives.earnings AS e
 GROUP BY e.participant_key, e.currency;
COMMENT ON VIEW incentives.earnings_by_participant IS 'Materialized earnings per participant and currency';
COMMENT ON COLUMN incentives.earnings_by_participant.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.earnings_by_participant.offers IS 'Offers it earns under';
COMMENT ON COLUMN incentives.earnings_by_participant.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_participant.rows IS 'Earning rows (a transaction earns once per offer and rate key)';
COMMENT ON COLUMN incentives.earnings_by_participant.incentivized_amount IS 'Sum of incentivized_amount over the rows (a transaction earning under two rates counts twice)';
COMMENT ON COLUMN incentives.earnings_by_participant.incentive_amount IS 'Total incentive earned';
COMMENT ON COLUMN incentives.earnings_by_participant.calculated_at IS 'When the newest of its rows was calculated';
COMMENT ON COLUMN incentives.earnings_by_participant.currency IS 'The offers'' currency the amounts are in: one row per currency, amounts of two currencies are never added (NULL: offers without a currency)';

CREATE OR REPLACE VIEW incentives.earnings_by_offer WITH (security_invoker = true) AS
SELECT e.offer_key,
       min(e.offer_calculator)           AS offer_calculator,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at,
       e.currency
  FROM incentives.earnings AS e
 GROUP BY e.offer_key, e.currency;
COMMENT ON VIEW incentives.earnings_by_offer IS 'Materialized earnings per offer (and its currency)';
COMMENT ON COLUMN incentives.earnings_by_offer.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.earnings_by_offer.offer_calculator IS 'Its calculator';
COMMENT ON COLUMN incentives.earnings_by_offer.participants IS 'Participants earning under it';
COMMENT ON COLUMN incentives.earnings_by_offer.transactions IS 'Distinct transactions that earn under it';
COMMENT ON COLUMN incentives.earnings_by_offer.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_offer.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_offer.incentive_amount IS 'Total incentive paid by the offer';
COMMENT ON COLUMN incentives.earnings_by_offer.calculated_at IS 'When the newest of its rows was calculated';
COMMENT ON COLUMN incentives.earnings_by_offer.currency IS 'The offers'' currency the amounts are in: one row per currency, amounts of two currencies are never added (NULL: offers without a currency)';

CREATE OR REPLACE VIEW incentives.earnings_by_sku WITH (security_invoker = true) AS
SELECT e.sku_key,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_quantity)      AS incentivized_quantity,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at,
       e.currency
  FROM incentives.earnings AS e
 GROUP BY e.sku_key, e.currency;
COMMENT ON VIEW incentives.earnings_by_sku IS 'Materialized earnings per SKU and currency';
COMMENT ON COLUMN incentives.earnings_by_sku.sku_key IS 'The SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.offers IS 'Offers it earns under';
COMMENT ON COLUMN incentives.earnings_by_sku.participants IS 'Participants earning on it';
COMMENT ON COLUMN incentives.earnings_by_sku.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_sku.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_sku.incentivized_quantity IS 'Sum of incentivized_quantity over the rows, in the SKU''s unit of measure (incentives.skus; each transaction''s own unit when the SKU is not there)';
COMMENT ON COLUMN incentives.earnings_by_sku.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_sku.incentive_amount IS 'Total incentive earned on the SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.calculated_at IS 'When the newest of its rows was calculated';
COMMENT ON COLUMN incentives.earnings_by_sku.currency IS 'The offers'' currency the amounts are in: one row per currency, amounts of two currencies are never added (NULL: offers without a currency)';

CREATE OR REPLACE VIEW incentives.earnings_by_month WITH (security_invoker = true) AS
SELECT CAST(date_trunc('month', e.transaction_date) AS date) AS month,
       count(DISTINCT e.participant_key)                     AS participants,
       count(DISTINCT e.offer_key)                           AS offers,
       count(DISTINCT e.transaction_id)                      AS transactions,
       count(*)                                              AS rows,
       sum(e.incentivized_amount)                            AS incentivized_amount,
       sum(e.incentive_amount)                               AS incentive_amount,
       max(e.calculated_at)                                  AS calculated_at,
       e.currency
  FROM incentives.earnings AS e
 GROUP BY 1, e.currency;
COMMENT ON VIEW incentives.earnings_by_month IS 'Materialized earnings per calendar month of the transaction date and currency';
COMMENT ON COLUMN incentives.earnings_by_month.month IS 'First day of the month of the earning transactions'' date';
COMMENT ON COLUMN incentives.earnings_by_month.participants IS 'Participants earning in the month';
COMMENT ON COLUMN incentives.earnings_by_month.offers IS 'Offers earned under in the month';
COMMENT ON COLUMN incentives.earnings_by_month.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_month.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_month.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_month.incentive_amount IS 'Total incentive earned by the month''s transactions';
COMMENT ON COLUMN incentives.earnings_by_month.calculated_at IS 'When the newest of its rows was calculated';
COMMENT ON COLUMN incentives.earnings_by_month.currency IS 'The offers'' currency the amounts are in: one row per currency, amounts of two currencies are never added (NULL: offers without a currency)';

CREATE OR REPLACE VIEW incentives.earnings_by_group WITH (security_invoker = true) AS
SELECT e.group_key,
       count(DISTINCT e.participant_key) AS members,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at,
       e.currency
  FROM incentives.earnings AS e
 WHERE e.group_key IS NOT NULL
 GROUP BY e.group_key, e.currency;
COMMENT ON VIEW incentives.earnings_by_group IS 'Materialized earnings per group: the rows of offers aggregated by group computed over a group''s figures (docs/reference.md, Participant groups); a reader sees the rows of the members it may see';
COMMENT ON COLUMN incentives.earnings_by_group.group_key IS 'The group';
COMMENT ON COLUMN incentives.earnings_by_group.members IS 'Members with earning rows under it';
COMMENT ON COLUMN incentives.earnings_by_group.offers IS 'Offers aggregated by group its members earn under';
COMMENT ON COLUMN incentives.earnings_by_group.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_group.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_group.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_group.incentive_amount IS 'Total incentive earned by its members under it';
COMMENT ON COLUMN incentives.earnings_by_group.calculated_at IS 'When the newest of its rows was calculated';
COMMENT ON COLUMN incentives.earnings_by_group.currency IS 'The offers'' currency the amounts are in: one row per currency, amounts of two currencies are never added (NULL: offers without a currency)';

-- Earnings per product of the catalog (docs/reference.md, Products): a row
-- counts under every node its SKU is in on the row's transaction_date --
-- the nodes of the SKU's windows in incentives.sku_products containing
-- that date, and every ancestor of those nodes (parent_key followed
-- upward) -- once per node, however many windows reach it.  A row without
-- a transaction_date is in no node.  The tables refuse cycles, but restored
-- data may hold one: the UNION keeps each (node, ancestor) pair once, so
-- the walk up ends at the first pair it has already found.
CREATE OR REPLACE VIEW incentives.earnings_by_product WITH (security_invoker = true) AS
WITH RECURSIVE product_ancestors (product_key, ancestor_key) AS (
    SELECT p.product_key, p.product_key
      FROM incentives.products AS p
    UNION
    SELECT a.product_key, p.parent_key
      FROM product_ancestors AS a
      JOIN incentives.products AS p ON p.product_key = a.ancestor_key
     WHERE p.parent_key IS NOT NULL
),
sku_day_products (sku_key, transaction_date, product_key) AS (
    SELECT DISTINCT d.sku_key, d.transaction_date, a.ancestor_key
      FROM (SELECT DISTINCT e.sku_key, e.transaction_date
              FROM incentives.earnings AS e) AS d
      JOIN incentives.sku_products AS s
        ON s.sku_key = d.sku_key
       AND s.start_date <= d.transaction_date
       AND (s.end_date IS NULL OR d.transaction_date <= s.end_date)
      JOIN product_ancestors AS a ON a.product_key = s.product_key
)
SELECT p.product_key,
       p.parent_key,
       p.label,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at,
       e.currency
  FROM sku_day_products AS x
  JOIN incentives.earnings AS e
    ON e.sku_key = x.sku_key
   AND e.transaction_date = x.transaction_date
  JOIN incentives.products AS p ON p.product_key = x.product_key
 GROUP BY p.product_key, p.parent_key, p.label, e.currency;
COMMENT ON VIEW incentives.earnings_by_product IS 'Materialized earnings per product node (docs/reference.md, Products): each row counts under every node its SKU is in on the row''s transaction_date (its incentives.sku_products windows then, and every ancestor of their nodes), so a category shows its brands'' earnings rolled up; a row counts under several nodes, and summing across products double counts; a reader sees the rows it may see';
COMMENT ON COLUMN incentives.earnings_by_product.product_key IS 'The product node';
COMMENT ON COLUMN incentives.earnings_by_product.parent_key IS 'The node it belongs to (NULL: the top of a tree)';
COMMENT ON COLUMN incentives.earnings_by_product.label IS 'Its name for people (incentives.products)';
COMMENT ON COLUMN incentives.earnings_by_product.offers IS 'Offers earned under on its SKUs';
COMMENT ON COLUMN incentives.earnings_by_product.participants IS 'Participants earning on its SKUs';
COMMENT ON COLUMN incentives.earnings_by_product.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_product.rows IS 'Earning rows of SKUs in it or in a node below it on the row''s transaction_date';
COMMENT ON COLUMN incentives.earnings_by_product.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_product.incentive_amount IS 'Total incentive earned on its SKUs';
COMMENT ON COLUMN incentives.earnings_by_product.calculated_at IS 'When the newest of its rows was calculated';
COMMENT ON COLUMN incentives.earnings_by_product.currency IS 'The offers'' currency the amounts are in: one row per currency, amounts of two currencies are never added (NULL: offers without a currency)';

-- Earnings per group at every level of the hierarchy (docs/reference.md,
-- Participant hierarchies): a row counts under each ancestor of its
-- participant on the row's transaction_date -- the group of the
-- participant's incentives.participant_groups window containing that date
-- (depth 1), that group's group on the date (depth 2), and so on up -- and,
-- when the participant is itself a group (a group_key of some membership
-- row, a head office buying directly), under the participant at depth 0.
-- A participant has one window on a date, so one group per depth.  The
-- tables refuse cycles, but restored data may hold one: the walk up stops
-- at a key already on its path.  A row without a transaction_date has no
-- ancestor.
CREATE OR REPLACE VIEW incentives.earnings_by_group_level WITH (security_invoker = true) AS
WITH RECURSIVE ancestors (participant_key, transaction_date, group_key, depth, path) AS (
    SELECT d.participant_key, d.transaction_date, m.group_key, 1, ARRAY[d.participant_key, m.group_key]
      FROM (SELECT DISTINCT e.participant_key, e.transaction_date
              FROM incentives.earnings AS e
             WHERE e.transaction_date IS NOT NULL) AS d
      JOIN incentives.participant_groups AS m
        ON m.participant_key = d.participant_key
       AND m.start_date <= d.transaction_date
       AND (m.end_date IS NULL OR d.transaction_date <= m.end_date)
    UNION ALL
    SELECT a.participant_key, a.transaction_date, m.group_key, a.depth + 1, a.path || m.group_key
      FROM ancestors AS a
      JOIN incentives.participant_groups AS m
        ON m.participant_key = a.group_key
       AND m.start_date <= a.transaction_date
       AND (m.end_date IS NULL OR a.transaction_date <= m.end_date)
     WHERE m.group_key <> ALL (a.path)
),
levels (group_key, depth, participant_key, offer_key, transaction_id,
        incentivized_amount, incentive_amount, calculated_at, currency) AS (
    SELECT e.participant_key, 0, e.participant_key, e.offer_key, e.transaction_id,
           e.incentivized_amount, e.incentive_amount, e.calculated_at, e.currency
      FROM incentives.earnings AS e
     WHERE EXISTS (SELECT FROM incentives.participant_groups AS m
                    WHERE m.group_key = e.participant_key)
    UNION ALL
    SELECT a.group_key, a.depth, e.participant_key, e.offer_key, e.transaction_id,
           e.incentivized_amount, e.incentive_amount, e.calculated_at, e.currency
      FROM ancestors AS a
      JOIN incentives.earnings AS e
        ON e.participant_key = a.participant_key
       AND e.transaction_date = a.transaction_date
)
SELECT l.group_key,
       g.group_type,
       l.depth,
       count(DISTINCT l.participant_key) AS members,
       count(DISTINCT l.offer_key)       AS offers,
       count(DISTINCT l.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(l.incentivized_amount)        AS incentivized_amount,
       sum(l.incentive_amount)           AS incentive_amount,
       max(l.calculated_at)              AS calculated_at,
       l.currency
  FROM levels AS l
  LEFT JOIN incentives.groups AS g ON g.group_key = l.group_key
 GROUP BY l.group_key, g.group_type, l.depth, l.currency;
COMMENT ON VIEW incentives.earnings_by_group_level IS 'Materialized earnings per group and depth, whatever the offers'' aggregation (docs/reference.md, Participant hierarchies): each row counts under every ancestor group of its participant on the row''s transaction_date (incentives.participant_groups windows followed upward), at its distance from the participant (depth 1: the participant''s own group), and a group''s own rows at depth 0; a group''s total is the sum over its depths, and summing across groups double counts; a reader sees the rows, memberships and group types it may see (docs/security.md)';
COMMENT ON COLUMN incentives.earnings_by_group_level.group_key IS 'The group';
COMMENT ON COLUMN incentives.earnings_by_group_level.group_type IS 'Its type (incentives.groups); NULL when it has none the reader may see';
COMMENT ON COLUMN incentives.earnings_by_group_level.depth IS 'How many levels above the earning participant the group is on the row''s date: 1, the participant''s own group; 2, that group''s group; ...; 0, the group''s own rows (a head office buying directly)';
COMMENT ON COLUMN incentives.earnings_by_group_level.members IS 'Participants with earning rows under it at this depth';
COMMENT ON COLUMN incentives.earnings_by_group_level.offers IS 'Offers those rows earn under';
COMMENT ON COLUMN incentives.earnings_by_group_level.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_group_level.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_group_level.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_group_level.incentive_amount IS 'Total incentive earned by the participants at this depth under it';
COMMENT ON COLUMN incentives.earnings_by_group_level.calculated_at IS 'When the newest of its rows was calculated';
COMMENT ON COLUMN incentives.earnings_by_group_level.currency IS 'The offers'' currency the amounts are in: one row per currency, amounts of two currencies are never added (NULL: offers without a currency)';
