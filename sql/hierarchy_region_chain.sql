-- hierarchy_region_chain: participant hierarchies (docs/reference.md,
-- Participant hierarchies).  Locations in chains, chains in a region.
-- Without group_type a location aggregates at its immediate group on the
-- transaction's date, and a group's own purchase stays with the group (a
-- head office: chain_north, and chain_east before any location joins it);
-- with "group_type": "region" every transaction goes to the first of its
-- participant and its ancestors on its date typed region, else its own
-- key (loc_c before chain_south joined region_west).  A member
-- requirement's member is the transaction's own participant.
-- Fixture: test/fixtures/hierarchy_region_chain/ (see its README.md).
\set fixture hierarchy_region_chain
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- One location's call computes over its whole hierarchy: loc_a's rows
-- are at chain_north's 1% and region_west's 3%.
SELECT participant_key, offer_key, transaction_id, incentive_amount, group_key
  FROM incentives.incentive_calculate('loc_a')
 ORDER BY offer_key, transaction_id;

-- A head office's own call: chain_north's purchase stays with
-- chain_north (1%) and goes to region_west under the region offer.
SELECT participant_key, offer_key, transaction_id, incentive_amount, group_key
  FROM incentives.incentive_calculate('chain_north')
 ORDER BY offer_key, transaction_id;

-- incentive_explain names the aggregation key and its type: loc_a's
-- figures are chain_north's (a chain) under the chain offer, region_west's
-- (a region) under the region offer.
SELECT o.offer_key, x -> 'aggregation' ->> 'group_key' AS group_key,
       x -> 'aggregation' ->> 'group_type' AS group_type, x ->> 'basis' AS basis
  FROM incentives.offers AS o,
       LATERAL incentives.incentive_explain('loc_a', o.offer_key) AS x
 ORDER BY o.offer_key;

-- The programs show each offer's aggregation and group type.
SELECT offer_key, aggregation, group_type FROM incentives.programs ORDER BY offer_key;

-- A type no group has: every transaction keeps its own key.
UPDATE incentives.offers SET document = jsonb_set(document, '{group_type}', '"district"')
 WHERE offer_key = 'mfr.2026.region_volume';
SELECT participant_key, transaction_id, incentive_amount, group_key
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.region_volume'])
 ORDER BY transaction_id;
-- offer_warnings says so (unknown_group_type), with the type meant when
-- one is near.
SELECT * FROM incentives.offer_warnings;
UPDATE incentives.offers SET document = jsonb_set(document, '{group_type}', '"regions"')
 WHERE offer_key = 'mfr.2026.region_volume';
SELECT * FROM incentives.offer_warnings;

-- refresh_earnings(changed_only => true) after a change of a group's type
-- (docs/lifecycle.md, "changed_only => true"): the change logs the group;
-- the refresh recalculates its whole hierarchy and equals a calculation
-- of everyone.  (In a transaction rolled back at the end: the tests after
-- this one expect no refresh.)
BEGIN;
SET LOCAL client_min_messages = warning;
UPDATE incentives.offers SET document = jsonb_set(document, '{group_type}', '"region"')
 WHERE offer_key = 'mfr.2026.region_volume';
CALL incentives.refresh_earnings();
UPDATE incentives.groups SET group_type = 'chain' WHERE group_key = 'region_west';
SELECT participant_key FROM incentives.earnings_changes ORDER BY 1;
CALL incentives.refresh_earnings(changed_only => true);
SELECT count(*) AS differing
  FROM ((SELECT participant_key, offer_key, transaction_id, incentive_amount, group_key
           FROM incentives.earnings
         EXCEPT ALL
         SELECT participant_key, offer_key, transaction_id, incentive_amount, group_key
           FROM incentives.incentive_calculate())
        UNION ALL
        (SELECT participant_key, offer_key, transaction_id, incentive_amount, group_key
           FROM incentives.incentive_calculate()
         EXCEPT ALL
         SELECT participant_key, offer_key, transaction_id, incentive_amount, group_key
           FROM incentives.earnings)) AS d;
-- no region any more: the region offers pay each key alone
SELECT participant_key, transaction_id, incentive_amount, group_key
  FROM incentives.earnings WHERE offer_key = 'mfr.2026.region_volume'
 ORDER BY transaction_id;
ROLLBACK;
