-- bench/load/calculate.sql: one participant's earnings (pgbench script of
-- test/ops/load.sh; :participants is set there)
\set p random(1, :participants)
SELECT count(*) FROM incentives.incentive_calculate(participant_key => 'retailer_' || lpad(:p::text, 4, '0'));
