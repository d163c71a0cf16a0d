------------------------------------------------------------------------
-- Schemas: incentives holds what users call and read; incentives_internal
-- holds the machinery behind it (trigger functions, helpers of the
-- procedures and views, the functions a coordinator calls on its shards),
-- so that \df incentives.* lists the user-facing surface only.
------------------------------------------------------------------------

COMMENT ON SCHEMA incentives IS 'Channel incentives (rebates): offers, transactions, and their exact calculation';

CREATE SCHEMA incentives_internal;
COMMENT ON SCHEMA incentives_internal IS
  'incentives internals: trigger functions, helpers of the procedures and views, and the functions a sharded coordinator calls; not for direct use';
