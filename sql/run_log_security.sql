-- run_log_security: what the run log tells a reader (docs/security.md,
-- The run log).  A refresh of one participant that fails on a transaction
-- of another member of its group logs, in the participant's run row that
-- the participant's readers read, only that a transaction of another
-- member of the group cannot be calculated; the failing transaction is
-- named in incentives.calculation_exceptions under the member's key, which
-- only the roles that see that member read.  Every statement runs on its
-- own (autocommit), so a failed run's row is committed as a CALL from
-- psql commits it.  In a database of its own.
\set regress_db :DBNAME
CREATE DATABASE incentives_run_log_security;
\c incentives_run_log_security
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;

-- r1 and r2 are the chain chain_x; r2 bought in jugs, which convert to
-- nothing.  regress_run_reader sees r1 only.
INSERT INTO incentives.offers (document) VALUES ('{
  "offer_key": "chain.volume", "strategy_key": "stepped", "calculator_key": "percent_of_amount",
  "aggregation": "group",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s1"], "transaction_type": "buy"}],
                "threshold_definition": {"type": "aggregated_quantity",
                                         "filters": [{"period_key": "p", "sku_keys": ["s1"], "transaction_type": "buy"}]},
                "rates": [{"threshold": 0, "value": 2, "measure": "percent"}]}}');
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('s1', 'gal');
INSERT INTO incentives.participant_groups (participant_key, group_key, start_date) VALUES
  ('r1', 'chain_x', '2026-01-01'), ('r2', 'chain_x', '2026-01-01');
INSERT INTO incentives.transactions VALUES
  ('R1-INV-1', 'r1', 'buy', '2026-03-01', 's1', 10, 'gal', 1000.00),
  ('SECRET-R2-INV-77', 'r2', 'buy', '2026-03-02', 's1', 4, 'jug', 400.00);
CREATE ROLE regress_run_reader;
GRANT USAGE ON SCHEMA incentives TO regress_run_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA incentives TO regress_run_reader;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA incentives TO regress_run_reader;
ALTER TABLE incentives.transactions ENABLE ROW LEVEL SECURITY;
CREATE POLICY regress_run_reader_r1 ON incentives.transactions
    FOR SELECT TO regress_run_reader USING (participant_key = 'r1');

-- The owner refreshes r1: the calculation of chain_x fails on r2's jug.
-- The owner is told which transaction.
SET client_min_messages = warning;
CALL incentives.refresh_earnings(participant_key => 'r1');
RESET client_min_messages;
-- The run is r1's, so r1's reader reads it: the error names no
-- transaction of r2.
SET ROLE regress_run_reader;
SELECT participant_key, status, sqlstate, error FROM incentives.calculation_runs ORDER BY run_id;
SELECT count(*) AS exceptions_seen FROM incentives.calculation_exceptions;
RESET ROLE;
-- The owner reads the transaction under r2's key, beside the run.
SELECT e.participant_key, e.transaction_id, e.sqlstate, e.message, r.participant_key AS run_of
  FROM incentives.calculation_exceptions AS e
  JOIN incentives.calculation_runs AS r USING (run_id);

-- A refresh of r2 fails on r2's own transaction: its run names it (only
-- r2's readers read that row).
SET client_min_messages = warning;
CALL incentives.refresh_earnings(participant_key => 'r2');
RESET client_min_messages;
SELECT participant_key, status, error FROM incentives.calculation_runs ORDER BY run_id;
SET ROLE regress_run_reader;
SELECT participant_key, status FROM incentives.calculation_runs ORDER BY run_id;
RESET ROLE;

-- Once the conversion exists, r1's refresh succeeds.
INSERT INTO incentives.uom_conversions (from_uom_key, to_uom_key, factor) VALUES ('jug', 'gal', 2.5);
SET client_min_messages = warning;
CALL incentives.refresh_earnings(participant_key => 'r1');
RESET client_min_messages;
SELECT participant_key, transaction_id, incentive_amount, group_key FROM incentives.earnings ORDER BY 1, 2;

\c :regress_db
DROP DATABASE incentives_run_log_security;
DROP ROLE regress_run_reader;
