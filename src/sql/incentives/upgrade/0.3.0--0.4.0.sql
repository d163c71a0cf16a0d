-- incentives 0.3.0 -> 0.4.0: what changes in schemas, tables and types,
-- and the 0.3.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function, procedure and view of 0.4.0, created or replaced in place;
-- triggers and policies created again), 0.3.0--0.4.0.finish.sql if there
-- is one, then src/sql/update_end.sql (the Makefile).  A fresh install
-- runs the released scripts up to 0.3.0 and then this same update script,
-- so this file is where 0.4.0's tables and types are defined.  How a
-- feature adds a table, a column of incentives.earning or a column of a
-- function's result, and what to do when a signature must change:
-- docs/architecture.md, Install and upgrade scripts.  What the update does
-- to each object a user can depend on: docs/backup-and-upgrade.md,
-- Upgrade (keep it listed there).

------------------------------------------------------------------------
-- Ledger guards (docs/lifecycle.md, Settlement statements, Removing a
-- settled offer, Accruals)
------------------------------------------------------------------------

-- settle and accrue record the relation they read their transactions from
-- (NULL: written before 0.4.0, from incentives.transactions).
ALTER TABLE incentives.statements ADD COLUMN transactions text;
COMMENT ON COLUMN incentives.statements.transactions IS
  'The relation incentives.settle read the transactions from (its transactions argument); NULL for a statement written before 0.4.0 (incentives.transactions)';
ALTER TABLE incentives.accruals ADD COLUMN transactions text;
COMMENT ON COLUMN incentives.accruals.transactions IS
  'The relation incentives.accrue read the transactions from (its transactions argument); NULL for an accrual written before 0.4.0 (incentives.transactions)';

-- A statement or an accrual dated in the future is voided by one that
-- reverses it (incentives.void_statement, void_accrual): appended, never
-- deleted.
ALTER TABLE incentives.statements ADD COLUMN reverses bigint, ADD COLUMN reason text;
COMMENT ON COLUMN incentives.statements.reverses IS
  'The statement this one reverses (incentives.void_statement: its lines negate that statement''s, with the same date); NULL for a settlement';
COMMENT ON COLUMN incentives.statements.reason IS 'Why the reversal was written (NULL for a settlement)';
ALTER TABLE incentives.accruals ADD COLUMN reverses bigint, ADD COLUMN reason text;
COMMENT ON COLUMN incentives.accruals.reverses IS
  'The accrual this one reverses (incentives.void_accrual: its lines take each pair back to where it was before that accrual, with the same date); NULL for an accrual';
COMMENT ON COLUMN incentives.accruals.reason IS 'Why the reversal was written (NULL for an accrual)';

-- A statement line says why: its kind, computed from its amounts (so the
-- lines of 0.3.0 get theirs as the column is added), and the offer's
-- version when it was written.
ALTER TABLE incentives.statement_lines
    ADD COLUMN kind text GENERATED ALWAYS AS (
        CASE WHEN amount_due = 0 THEN 'unchanged'
             WHEN amount_due < 0 THEN 'clawback'
             WHEN settled_before = 0 THEN 'payment'
             ELSE 'true_up' END) STORED,
    ADD COLUMN offer_version integer;
COMMENT ON COLUMN incentives.statement_lines.kind IS
  'Why the line: unchanged (amount_due 0), clawback (amount_due < 0), payment (amount_due > 0, nothing settled before), true_up (amount_due > 0 over an earlier settlement)';
COMMENT ON COLUMN incentives.statement_lines.offer_version IS
  'The offer''s current version (incentives.offer_versions) when the line was written; NULL when the offer did not exist then (a clawback after its removal). A version different from the pair''s previous line''s shows a change of terms';
-- Lines of 0.3.0: the version current when their statement was written.
ALTER TABLE incentives.statement_lines DISABLE TRIGGER statement_lines_append_only;
UPDATE incentives.statement_lines AS l
   SET offer_version = v.version
  FROM incentives.statements AS s, incentives.offer_versions AS v
 WHERE s.statement_id = l.statement_id
   AND v.offer_key = l.offer_key
   AND v.valid_from <= s.created_at
   AND (v.valid_to IS NULL OR v.valid_to > s.created_at);
ALTER TABLE incentives.statement_lines ENABLE TRIGGER statement_lines_append_only;
CREATE INDEX statement_lines_offer_idx ON incentives.statement_lines (offer_key);
COMMENT ON INDEX incentives.statement_lines_offer_idx IS
  'Lines by offer (the check that refuses removing a settled offer)';

-- The deliberate removals of settled offers (incentives.remove_settled_offer).
CREATE TABLE incentives.offer_removals (
    removal_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    offer_key       text NOT NULL,
    reason          text NOT NULL CHECK (btrim(reason) <> ''),
    settled_total   numeric(20, 2) NOT NULL,
    participants    integer NOT NULL,
    last_statement_date date,
    document        jsonb NOT NULL,
    removed_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    removed_by      text NOT NULL DEFAULT CURRENT_USER,
    removed_in      xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id()
);
COMMENT ON TABLE incentives.offer_removals IS
  'Every offer removed on purpose by incentives.remove_settled_offer: who, when, why, and what it had settled (the next statement claws that back); append-only';
COMMENT ON COLUMN incentives.offer_removals.removal_id IS 'Removal number (identity)';
COMMENT ON COLUMN incentives.offer_removals.offer_key IS 'The offer removed';
COMMENT ON COLUMN incentives.offer_removals.reason IS 'Why, as given to remove_settled_offer';
COMMENT ON COLUMN incentives.offer_removals.settled_total IS 'Sum of amount_due of its statement lines when it was removed';
COMMENT ON COLUMN incentives.offer_removals.participants IS 'Participants with a settled total other than zero for it';
COMMENT ON COLUMN incentives.offer_removals.last_statement_date IS 'Its latest statement''s date (NULL: never settled)';
COMMENT ON COLUMN incentives.offer_removals.document IS 'The offer document removed';
COMMENT ON COLUMN incentives.offer_removals.removed_at IS 'Start of the transaction that removed it';
COMMENT ON COLUMN incentives.offer_removals.removed_by IS 'The role that removed it';
COMMENT ON COLUMN incentives.offer_removals.removed_in IS 'The transaction that removed it (the end-of-transaction check lets that transaction''s delete through)';
SELECT pg_catalog.pg_extension_config_dump('incentives.offer_removals', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.offer_removals', 'removal_id'), '');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.offer_removals', 'TABLE', 'incentives.offers');
SELECT pg_temp.update_grant_like('SEQUENCE', 'incentives.offer_removals_removal_id_seq',
                                 'SEQUENCE', 'incentives.statements_statement_id_seq');

-- Statements and accruals dated after today lock the ledger: a later
-- settle or accrue of an earlier date is refused.  0.4.0 refuses such
-- dates; the update reports those already written (the remedy:
-- docs/lifecycle.md, Statements dated in the future).  (An extension
-- script runs with client_min_messages raised to warning: the report
-- lowers it for the length of its function, so that the NOTICEs reach the
-- client that runs ALTER EXTENSION ... UPDATE.)
CREATE FUNCTION pg_temp.update_report_future()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET client_min_messages = notice
AS $function$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT s.statement_id, s.statement_date FROM incentives.statements AS s
              WHERE s.statement_date > current_date ORDER BY s.statement_id LOOP
        RAISE NOTICE 'statement % is dated % (after today): later statements of an earlier date are refused; incentives.void_statement(%, reason) voids it (docs/lifecycle.md, Statements dated in the future)',
                     r.statement_id, r.statement_date, r.statement_id;
    END LOOP;
    FOR r IN SELECT a.accrual_id, a.as_of_date FROM incentives.accruals AS a
              WHERE a.as_of_date > current_date ORDER BY a.accrual_id LOOP
        RAISE NOTICE 'accrual % is dated % (after today): later accruals of an earlier date are refused; incentives.void_accrual(%, reason) voids it (docs/lifecycle.md, Statements dated in the future)',
                     r.accrual_id, r.as_of_date, r.accrual_id;
    END LOOP;
END
$function$;
SELECT pg_temp.update_report_future();
DROP FUNCTION pg_temp.update_report_future();

-- settle and accrue take the relation of the transactions (a new last
-- argument), and so do their internal parts: the users' views over them
-- are kept (there are none over a procedure), their privileges carried
-- over, and the 0.3.0 ones dropped.
SELECT pg_temp.update_replace_function('incentives.settle(date, text)');
SELECT pg_temp.update_replace_function('incentives.accrue(date)');
SELECT pg_temp.update_replace_function('incentives_internal.settle_work(date, text)');
SELECT pg_temp.update_replace_function('incentives_internal.accrue_work(date)');
SELECT pg_temp.update_replace_function('incentives_internal.settle_run(date, text)');
SELECT pg_temp.update_replace_function('incentives_internal.accrue_run(date)');
-- A refresh in place writes its rows from C as a full one does:
-- refresh_write takes the participant (a new last argument), and the
-- batch's INSERT ... SELECT is gone.
SELECT pg_temp.update_replace_function('incentives_internal.refresh_write(regclass, bigint, regclass, integer, boolean, integer)');
SELECT pg_temp.update_drop_function('incentives_internal.refresh_earnings_batch(regclass, bigint, text, regclass, boolean)');
-- A refresh with jobs > 1 writes into a partition committed before its
-- writers start: refresh_earnings_work takes it (a new last argument).
SELECT pg_temp.update_replace_function('incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean, integer)');
SELECT pg_temp.update_check();
DROP PROCEDURE incentives.settle(date, text);
DROP PROCEDURE incentives.accrue(date);
DROP FUNCTION incentives_internal.settle_work(date, text);
DROP FUNCTION incentives_internal.accrue_work(date);
DROP FUNCTION incentives_internal.settle_run(date, text);
DROP FUNCTION incentives_internal.accrue_run(date);
DROP FUNCTION incentives_internal.refresh_write(regclass, bigint, regclass, integer, boolean, integer);
DROP FUNCTION incentives_internal.refresh_earnings_batch(regclass, bigint, text, regclass, boolean);
DROP FUNCTION incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean, integer);

-- The accrual floor: what is already earned is owed.
COMMENT ON COLUMN incentives.forecast_row.accrual_to_date IS
  'max(round(projected_earnings x elapsed_days / span_days, 2), earned_to_date): the straight-line share of the projected payout accrued by as_of_date, never less than what is already earned';

------------------------------------------------------------------------
-- Checking a program book (code/32_offer_warnings.sql): the row types of
-- offer_warnings, program_skus and transaction_warnings (named, so that
-- each can gain a column without a drop).
------------------------------------------------------------------------

CREATE TYPE incentives.offer_warning_row AS (
    offer_key text,
    path      text,
    code      text,
    message   text
);
COMMENT ON TYPE incentives.offer_warning_row IS
  'A row of incentives.offer_warnings(): the offer, the JSON path of what the warning is about (NULL when it is about no field), its code and a sentence naming the value';
COMMENT ON COLUMN incentives.offer_warning_row.offer_key IS 'The offer (for enrollment_without_offer: the enrollments'' offer_key, which names no offer)';
COMMENT ON COLUMN incentives.offer_warning_row.path IS 'The JSON path in the offer document of what the warning is about; NULL when it is about no field of the document';
COMMENT ON COLUMN incentives.offer_warning_row.code IS 'What kind of warning (docs/reference.md, Offer warnings)';
COMMENT ON COLUMN incentives.offer_warning_row.message IS 'A sentence naming the value, with a suggestion where one fits';

CREATE TYPE incentives.offer_change_row AS (
    participant_key text,
    earned_now      numeric,
    earned_after    numeric,
    settled         numeric,
    change          numeric,
    due_after       numeric
);
COMMENT ON TYPE incentives.offer_change_row IS
  'A row of incentives.preview_offer_change(): what storing an offer document would change for one participant';
COMMENT ON COLUMN incentives.offer_change_row.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.offer_change_row.earned_now IS 'Earned under the stored offer (0 when there is none), 2 places';
COMMENT ON COLUMN incentives.offer_change_row.earned_after IS 'Earned under the document previewed, 2 places';
COMMENT ON COLUMN incentives.offer_change_row.settled IS 'The participant''s settled total for the offer (the amount_due of its statement lines)';
COMMENT ON COLUMN incentives.offer_change_row.change IS 'earned_after - earned_now';
COMMENT ON COLUMN incentives.offer_change_row.due_after IS 'earned_after - settled: what the next statement would pay (negative: claw back) after the change';

CREATE TYPE incentives.program_sku_row AS (
    offer_key    text,
    sku_key      text,
    role         text,
    transactions bigint
);
COMMENT ON TYPE incentives.program_sku_row IS
  'A row of incentives.program_skus(): a SKU an offer reads, its role and how many transactions match it';
COMMENT ON COLUMN incentives.program_sku_row.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_sku_row.sku_key IS 'A SKU the offer reads';
COMMENT ON COLUMN incentives.program_sku_row.role IS 'earning, threshold, requirement, set:<sku_set key>, price or conversion';
COMMENT ON COLUMN incentives.program_sku_row.transactions IS 'Transactions that match it in that role';

CREATE TYPE incentives.transaction_warning_row AS (
    participant_key text,
    transaction_id  text,
    code            text,
    message         text
);
COMMENT ON TYPE incentives.transaction_warning_row IS
  'A row of incentives.transaction_warnings(): a transaction a calculation would refuse, what is wrong with it and a sentence naming it';
COMMENT ON COLUMN incentives.transaction_warning_row.participant_key IS 'The transaction''s participant (NULL when that is what is missing)';
COMMENT ON COLUMN incentives.transaction_warning_row.transaction_id IS 'The transaction (NULL when that is what is missing)';
COMMENT ON COLUMN incentives.transaction_warning_row.code IS 'null_column, no_unit_conversion, invalid_number or duplicate_transaction';
COMMENT ON COLUMN incentives.transaction_warning_row.message IS 'A sentence naming the transaction, the column or the units';

-- Prospective rate changes (docs/lifecycle.md, Prospective rate changes)
ALTER TABLE incentives.offer_versions ADD COLUMN effective_from date;
COMMENT ON COLUMN incentives.offer_versions.effective_from IS
  'The first transaction date this version''s rate values apply to (incentives.change_rates); NULL: an ordinary, retrospective version';
-- The locks of a refresh of one participant (docs/operations.md,
-- Concurrency): a participant's row, inserted and deleted by the refresh
-- in its transaction, so a second refresh of it waits (which needs INSERT
-- and DELETE on the table): a role without those privileges cannot take
-- it first, as it could an advisory lock.  Empty between refreshes.
CREATE TABLE incentives.refresh_locks (
    participant_key text NOT NULL PRIMARY KEY
);
COMMENT ON TABLE incentives.refresh_locks IS
  'The row of a participant refreshed on its own, inserted and deleted by the refresh so that two refreshes of one participant take turns (docs/operations.md, Concurrency); empty between refreshes';
COMMENT ON COLUMN incentives.refresh_locks.participant_key IS 'The participant';
SELECT pg_temp.update_grant_like('TABLE', 'incentives.refresh_locks', 'TABLE', 'incentives.earnings');
-- When a change was logged, so that a changed_only refresh under
-- incentives.changed_only_limit takes the participants logged first
-- (docs/lifecycle.md, changed_only => true).  The rows of 0.3.0 get the
-- time of the update.
ALTER TABLE incentives.earnings_changes ADD COLUMN logged_at timestamptz NOT NULL DEFAULT pg_catalog.now();
COMMENT ON COLUMN incentives.earnings_changes.logged_at IS
  'Start of the transaction that logged the change; a changed_only refresh under incentives.changed_only_limit takes the participants logged first';
-- The change log by participant: a changed_only refresh under
-- incentives.changed_only_limit finds each participant's first entry and
-- deletes the entries of those it takes without reading the whole log,
-- which grows while writers outpace the runs (docs/lifecycle.md,
-- changed_only => true).
CREATE INDEX earnings_changes_participant_idx ON incentives.earnings_changes (participant_key, logged_at);
COMMENT ON INDEX incentives.earnings_changes_participant_idx IS
  'Each participant''s entries in the order they were logged: a changed_only refresh under incentives.changed_only_limit reads the first of each and deletes those of the participants it takes';
