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

CREATE TYPE incentives.program_sku_row AS (
    offer_key    text,
    sku_key      text,
    role         text,
    transactions bigint
);
COMMENT ON TYPE incentives.program_sku_row IS
  'A row of incentives.program_skus(): a SKU an offer reads, its role and how many transactions match it';

CREATE TYPE incentives.transaction_warning_row AS (
    participant_key text,
    transaction_id  text,
    code            text,
    message         text
);
COMMENT ON TYPE incentives.transaction_warning_row IS
  'A row of incentives.transaction_warnings(): a transaction a calculation would refuse, what is wrong with it and a sentence naming it';
