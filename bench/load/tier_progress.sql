-- bench/load/tier_progress.sql: one participant's progress through the
-- tiers of the stepped offers
\set p random(1, :participants)
SELECT count(*) FROM incentives.tier_progress('retailer_' || lpad(:p::text, 4, '0'));
