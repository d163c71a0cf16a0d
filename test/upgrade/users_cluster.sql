-- test/upgrade/users_cluster.sql: what users build on a coordinator
-- (incentives_cluster), on every version: views over its calculations and
-- one over such a view, owned by bi_owner, read by bi_reader
-- (test/upgrade/users.sh; the shards are not needed to create or keep
-- them).  Run as a superuser after CREATE EXTENSION incentives_cluster.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SELECT format('CREATE ROLE %I NOLOGIN', r)
  FROM unnest(ARRAY['bi_owner', 'bi_reader']) AS r
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r)
\gexec
CREATE SCHEMA bi AUTHORIZATION bi_owner;
GRANT USAGE ON SCHEMA incentives TO bi_owner, bi_reader;
SET ROLE bi_owner;
CREATE VIEW bi.calc WITH (security_barrier = true) AS SELECT * FROM incentives.incentive_calculate();
COMMENT ON VIEW bi.calc IS 'Every earning, calculated on the shards';
CREATE VIEW bi.calc_by_offer AS SELECT offer_key, sum(incentive_amount) AS amount FROM bi.calc GROUP BY offer_key;
CREATE VIEW bi.tiers AS SELECT participant_key, offer_key, earned_now FROM incentives.tier_progress();
CREATE VIEW bi.stacks AS SELECT * FROM incentives.stack_progress();
CREATE VIEW bi.diagnosed AS SELECT participant_key, offer_key FROM incentives.incentive_diagnostics();
RESET ROLE;
GRANT USAGE ON SCHEMA bi TO bi_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA bi TO bi_reader;
RESET client_min_messages;
