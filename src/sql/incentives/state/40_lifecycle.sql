------------------------------------------------------------------------
-- The earnings lifecycle (docs/lifecycle.md): offer versions,
-- settlement statements, the exceptions of refreshes that keep going and
-- the change log of refreshes that do less.  The same tables come to an
-- upgraded database through upgrade/0.1.0--0.2.0.sql.
------------------------------------------------------------------------

-- Offer versions: written by the triggers on incentives.offers
-- (code/15_offer_versions.sql), never by hand.  Append-only: a trigger
-- refuses UPDATE, DELETE and TRUNCATE for every role; the one UPDATE it
-- lets through is the versioning trigger's own closing of the current
-- version (valid_to set from NULL to the time of the change, nothing else,
-- while the offer really has changed), so history cannot be rewritten.
CREATE TABLE incentives.offer_versions (
    offer_key  text NOT NULL,
    version    integer NOT NULL CHECK (version > 0),
    document   jsonb NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    changed_by text NOT NULL DEFAULT CURRENT_USER,
    PRIMARY KEY (offer_key, version),
    CONSTRAINT offer_versions_valid_check CHECK (valid_to >= valid_from)
);
CREATE UNIQUE INDEX offer_versions_current_idx ON incentives.offer_versions (offer_key) WHERE valid_to IS NULL;
COMMENT ON TABLE incentives.offer_versions IS
  'Every state every offer has had: a version per insert or change of incentives.offers, closed (valid_to) by the next change or the delete; append-only; incentive_calculate(as_of => ...) reads it';
COMMENT ON COLUMN incentives.offer_versions.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.offer_versions.version IS 'Version number, from 1 per offer (an offer deleted and inserted again goes on counting)';
COMMENT ON COLUMN incentives.offer_versions.document IS 'The offer document of this version';
COMMENT ON COLUMN incentives.offer_versions.valid_from IS 'When this version came into force: the start of the transaction that wrote it';
COMMENT ON COLUMN incentives.offer_versions.valid_to IS 'When the next change or the delete ended it (exclusive); NULL for the current version';
COMMENT ON COLUMN incentives.offer_versions.changed_by IS 'The role that inserted or changed the offer';
COMMENT ON INDEX incentives.offer_versions_current_idx IS 'At most one current (open) version per offer';

-- Settlement statements: written by CALL incentives.settle,
-- append-only like the versions (no exception at all).
CREATE TABLE incentives.statements (
    statement_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    statement_date  date NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    created_by      text NOT NULL DEFAULT CURRENT_USER,
    participant_key text
);
CREATE INDEX statements_date_idx ON incentives.statements (statement_date);
COMMENT ON TABLE incentives.statements IS
  'Settlement statements written by CALL incentives.settle: what was due per participant and offer for the earnings through statement_date; append-only';
COMMENT ON COLUMN incentives.statements.statement_id IS 'Statement number (identity)';
COMMENT ON COLUMN incentives.statements.statement_date IS 'The earnings settled are those of transactions dated on or before it';
COMMENT ON COLUMN incentives.statements.created_at IS 'Start of the transaction that wrote it';
COMMENT ON COLUMN incentives.statements.created_by IS 'The role that ran incentives.settle';
COMMENT ON COLUMN incentives.statements.participant_key IS 'The participant settled; NULL for a statement of every participant';
COMMENT ON INDEX incentives.statements_date_idx IS 'Statements by date';

CREATE TABLE incentives.statement_lines (
    statement_id    bigint NOT NULL,
    participant_key text NOT NULL,
    offer_key       text NOT NULL,
    earned_to_date  numeric(20, 2) NOT NULL,
    settled_before  numeric(20, 2) NOT NULL,
    amount_due      numeric(20, 2) NOT NULL,
    PRIMARY KEY (statement_id, participant_key, offer_key),
    CONSTRAINT statement_lines_amount_due_check CHECK (amount_due = earned_to_date - settled_before)
);
CREATE INDEX statement_lines_participant_idx ON incentives.statement_lines (participant_key, offer_key);
COMMENT ON TABLE incentives.statement_lines IS
  'One line per participant and offer of a statement with earnings or earlier settlements: earned to date, settled before, and the difference due (negative: a clawback); append-only';
COMMENT ON COLUMN incentives.statement_lines.statement_id IS 'The statement (written with it in one transaction; no foreign key, so that a parallel pg_restore may load the two tables in any order)';
COMMENT ON COLUMN incentives.statement_lines.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.statement_lines.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.statement_lines.earned_to_date IS 'Sum of incentive_amount of incentive_calculate(participant_key, through_date => statement_date) for the offer';
COMMENT ON COLUMN incentives.statement_lines.settled_before IS 'Sum of amount_due of the earlier lines of the same participant and offer';
COMMENT ON COLUMN incentives.statement_lines.amount_due IS 'earned_to_date - settled_before: positive is paid (a late tier is a true-up), negative is clawed back (a return after payment)';
COMMENT ON INDEX incentives.statement_lines_participant_idx IS 'Lines by participant and offer (settled_before, balances)';

-- Refreshes that keep going: one row per participant a refresh
-- with on_error => 'skip' could not calculate.
CREATE TABLE incentives.calculation_exceptions (
    run_id          bigint NOT NULL,
    participant_key text NOT NULL,
    transaction_id  text,
    sqlstate        text NOT NULL,
    message         text NOT NULL,
    PRIMARY KEY (run_id, participant_key)
);
COMMENT ON TABLE incentives.calculation_exceptions IS
  'Participants a refresh_earnings(on_error => ''skip'') could not calculate for a data reason: they kept their previous earnings';
COMMENT ON COLUMN incentives.calculation_exceptions.run_id IS 'The incentives.calculation_runs row of the refresh (no foreign key: the run log may be truncated on its own)';
COMMENT ON COLUMN incentives.calculation_exceptions.participant_key IS 'The participant that kept its previous earnings';
COMMENT ON COLUMN incentives.calculation_exceptions.transaction_id IS 'The transaction the calculation failed on; NULL when the failure was not about one transaction (a property, say)';
COMMENT ON COLUMN incentives.calculation_exceptions.sqlstate IS 'The error''s SQLSTATE (class 22 data exception or 23 integrity constraint violation)';
COMMENT ON COLUMN incentives.calculation_exceptions.message IS 'The error message (and its detail)';

-- Refreshes that do less: participants whose materialized
-- earnings may differ from a calculation on incentives.transactions, one
-- row per change (NULL: everyone).  Written by statement-level triggers on
-- the inputs with the writer's rights, consumed by refresh_earnings.  Not
-- dumped: after a restore the triggers have logged every loaded row.
CREATE TABLE incentives.earnings_changes (
    participant_key text
);
COMMENT ON TABLE incentives.earnings_changes IS
  'Participants whose inputs changed since their earnings were calculated (NULL: everyone, after a change of offers, SKUs or unit conversions); what refresh_earnings(changed_only => true) recalculates';
COMMENT ON COLUMN incentives.earnings_changes.participant_key IS 'The participant; NULL for everyone';

SELECT pg_catalog.pg_extension_config_dump('incentives.offer_versions', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.statements', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.statements', 'statement_id'), '');
SELECT pg_catalog.pg_extension_config_dump('incentives.statement_lines', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.calculation_exceptions', '');
