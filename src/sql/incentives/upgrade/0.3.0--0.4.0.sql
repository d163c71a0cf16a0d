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
