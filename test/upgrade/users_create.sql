-- test/upgrade/users_create.sql: what users build on the incentives
-- extension, on every version (test/upgrade/users.sh; docs/backup-and-
-- upgrade.md, Upgrade): views over every view of the extension, over
-- incentive_calculate() (with options, comments, column privileges, and a
-- view over that view), over the other calculation functions, over
-- incentives.earnings and over the statement lines' kind; functions over
-- the type incentives.earning; a trigger and row-level security policies
-- of the DBA's on incentives.transactions; privileges.  Owned by bi_owner, read by
-- bi_reader.  Run as a superuser after CREATE EXTENSION incentives.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SELECT format('CREATE ROLE %I NOLOGIN', r)
  FROM unnest(ARRAY['bi_analysts', 'bi_owner', 'bi_reader', 'bi_limited']) AS r
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r)
\gexec
GRANT bi_analysts TO bi_owner, bi_reader;
CREATE SCHEMA bi AUTHORIZATION bi_owner;
\ir users_security.sql
SET client_min_messages = warning;

-- The DBA's audit trigger on the transactions.
CREATE TABLE bi.audit (transaction_id text, participant_key text);
CREATE FUNCTION bi.audit_transaction() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bi.audit VALUES (NEW.transaction_id, NEW.participant_key);
    RETURN NULL;
END
$$;
CREATE TRIGGER bi_audit AFTER INSERT ON incentives.transactions
    FOR EACH ROW EXECUTE FUNCTION bi.audit_transaction();

SET ROLE bi_owner;
-- A view over every view of the extension, as dashboards do.
SELECT format('CREATE VIEW bi.%I AS SELECT * FROM %s', 'over_' || c.relname, c.oid::regclass)
  FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
 WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'incentives')
   AND d.deptype = 'e' AND c.relkind = 'v'
 ORDER BY c.relname
\gexec

-- Over the calculation: options, comments, a view over the view.
CREATE VIEW bi.calc WITH (security_barrier = true) AS
SELECT * FROM incentives.incentive_calculate();
COMMENT ON VIEW bi.calc IS 'Every earning, calculated now';
COMMENT ON COLUMN bi.calc.incentive_amount IS 'What the row earns';
CREATE VIEW bi.calc_by_offer AS
SELECT offer_key, count(*) AS rows, sum(incentive_amount) AS amount FROM bi.calc GROUP BY offer_key;
CREATE VIEW bi.calc_one AS
SELECT e.offer_key, e.transaction_id, e.incentive_amount
  FROM incentives.incentive_calculate(participant_key => 'retailer_0001') AS e;
-- Over the materialized earnings, and a security_invoker view over that.
CREATE VIEW bi.earned AS
SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount, transaction_date
  FROM incentives.earnings;
CREATE VIEW bi.earned_by_month WITH (security_invoker = true) AS
SELECT date_trunc('month', transaction_date) AS month, sum(incentive_amount) AS amount
  FROM bi.earned GROUP BY 1;
-- Over the other calculation functions.
CREATE VIEW bi.tiers AS
SELECT participant_key, offer_key, threshold_value, current_rate_key, next_rate_key, gap_to_next, earned_now
  FROM incentives.tier_progress();
CREATE VIEW bi.stacks AS
SELECT * FROM incentives.stack_progress();
CREATE VIEW bi.diagnosed AS
SELECT d.participant_key, d.offer_key, d.strategy_key FROM incentives.incentive_diagnostics() AS d;
CREATE VIEW bi.explained AS
SELECT o.offer_key, incentives.incentive_explain('retailer_0001', o.offer_key) -> 'totals' AS totals
  FROM incentives.offers AS o;
-- Over the statement lines' kind (0.4.0 on: a generated column then, a
-- written one from 0.5.0, docs/lifecycle.md, Settlement statements).
SELECT 'CREATE VIEW bi.line_kinds AS SELECT statement_id, participant_key, offer_key, kind, amount_due FROM incentives.statement_lines'
 WHERE EXISTS (SELECT FROM pg_attribute
                WHERE attrelid = to_regclass('incentives.statement_lines') AND attname = 'kind' AND NOT attisdropped)
\gexec
-- Functions over the earning type.
CREATE FUNCTION bi.earnings_of(p text) RETURNS SETOF incentives.earning LANGUAGE sql STABLE AS $$
    SELECT * FROM incentives.incentive_calculate(participant_key => p)
$$;
CREATE FUNCTION bi.total_of(p text) RETURNS numeric LANGUAGE plpgsql STABLE AS $$
DECLARE
    e incentives.earning;
    t numeric := 0;
BEGIN
    FOR e IN SELECT * FROM incentives.incentive_calculate(participant_key => p) LOOP
        t := t + e.incentive_amount;
    END LOOP;
    RETURN t;
END
$$;
RESET ROLE;

-- Who reads them.
GRANT USAGE ON SCHEMA bi TO bi_reader, bi_limited;
GRANT SELECT ON ALL TABLES IN SCHEMA bi TO bi_reader;
GRANT SELECT (offer_key, incentive_amount) ON bi.calc TO bi_limited;
GRANT EXECUTE ON FUNCTION bi.earnings_of(text), bi.total_of(text) TO bi_reader;
RESET client_min_messages;
