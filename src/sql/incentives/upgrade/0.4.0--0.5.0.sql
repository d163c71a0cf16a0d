-- incentives 0.4.0 -> 0.5.0: what changes in schemas, tables and types,
-- and the 0.4.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function, procedure and view of 0.5.0, created or replaced in place;
-- triggers and policies created again), 0.4.0--0.5.0.finish.sql if there
-- is one, then src/sql/update_end.sql (the Makefile).  A fresh install
-- runs the released scripts up to 0.4.0 and then this same update script,
-- so this file is where 0.5.0's tables and types are defined.  How a
-- feature adds a table, a column of incentives.earning or a column of a
-- function's result, and what to do when a signature must change:
-- docs/architecture.md, Install and upgrade scripts.  What the update does
-- to each object a user can depend on: docs/backup-and-upgrade.md,
-- Upgrade (keep it listed there).

------------------------------------------------------------------------
-- The run log's failed runs of one participant (docs/security.md, The run
-- log): the transaction of another member of its group that failed the
-- run is logged in incentives.calculation_exceptions under that member's
-- key.
------------------------------------------------------------------------
COMMENT ON TABLE incentives.calculation_exceptions IS
  'Participants a refresh_earnings(on_error => ''skip'') could not calculate for a data reason (they kept their previous earnings), and the member of a group whose transaction failed a refresh of another of its participants (docs/security.md, The run log)';

------------------------------------------------------------------------
-- Logical replication of the earnings (docs/operations.md, Logical
-- replication): published through their root (publish_via_partition_root),
-- a refresh's deletes reach a subscriber identified by the root's replica
-- identity.  The partitioned table has no key of its own (its partitions
-- have theirs), so its identity is the whole row: with wal_level = logical
-- a deleted earning row is logged whole; below that, nothing changes.
------------------------------------------------------------------------
ALTER TABLE incentives.earnings REPLICA IDENTITY FULL;

------------------------------------------------------------------------
-- Products (docs/reference.md, Products): product nodes (brands, lines,
-- categories) forming a forest, and the dated windows in which a SKU
-- belongs to a node.  Reference data like incentives.skus: every reader
-- reads them (no row-level security: no participant_key), the roles that
-- write SKUs write them.  Their checks (code/15_products.sql): product
-- keys follow the offer keys' hygiene, no cycle, no overlapping windows
-- of one SKU in one node, and the references (parent_key, a window's
-- product_key) name a stored node.  The references are checked by the
-- triggers, not by foreign keys: pg_restore -j loads the rows of an
-- extension's tables in parallel, whatever foreign keys tie them, so a
-- window could be loaded before its node and the restore would fail
-- (docs/reference.md, Products).
------------------------------------------------------------------------

CREATE TABLE incentives.products (
    product_key text PRIMARY KEY,
    parent_key  text NULL,           -- a node of this table (products_check)
    label       text
);
CREATE INDEX products_parent_idx ON incentives.products (parent_key);
COMMENT ON TABLE incentives.products IS
  'Product nodes (a brand, a product line, a category, a segment) forming a forest: an offer may name them in product_keys, exclude_product_keys and a standard rate''s product_key (docs/reference.md, Products); a cycle and a key equal to another but for letter case are refused';
COMMENT ON COLUMN incentives.products.product_key IS 'The node''s key: not empty, no surrounding white space or control character, unique without regard to letter case';
COMMENT ON COLUMN incentives.products.parent_key IS 'The node it belongs to (a line''s brand, a category''s parent category), a stored node; NULL: a root. Following it up never comes back to a node';
COMMENT ON COLUMN incentives.products.label IS 'A name for people; never read by a calculation';
COMMENT ON CONSTRAINT products_pkey ON incentives.products IS 'One node per key';
COMMENT ON INDEX incentives.products_pkey IS 'One node per key';
COMMENT ON INDEX incentives.products_parent_idx IS 'Children by parent (the check that a deleted or renamed node has no children, the descendants of a node)';
SELECT pg_catalog.pg_extension_config_dump('incentives.products', '');
-- reference data: the privileges of incentives.skus
SELECT pg_temp.update_grant_like('TABLE', 'incentives.products', 'TABLE', 'incentives.skus');

CREATE TABLE incentives.sku_products (
    sku_key     text NOT NULL,
    product_key text NOT NULL,       -- a node of incentives.products (sku_products_check)
    start_date  date NOT NULL DEFAULT '-infinity',
    end_date    date NULL,
    PRIMARY KEY (sku_key, product_key, start_date),
    CONSTRAINT sku_products_end_date_check CHECK (end_date >= start_date)
);
CREATE INDEX sku_products_product_idx ON incentives.sku_products (product_key);
COMMENT ON TABLE incentives.sku_products IS
  'The products a SKU is in, by dated window (docs/reference.md, Products): a SKU may be in several nodes at once (a brand and a category); two windows of one SKU in one node that overlap are refused';
COMMENT ON COLUMN incentives.sku_products.sku_key IS 'The SKU (as in the transactions; it need not have a row in incentives.skus)';
COMMENT ON COLUMN incentives.sku_products.product_key IS 'The node the SKU is in during the window (and so in every ancestor of the node), a stored node of incentives.products';
COMMENT ON COLUMN incentives.sku_products.start_date IS 'First day in the node (inclusive); -infinity (the default): always';
COMMENT ON COLUMN incentives.sku_products.end_date IS 'Last day in the node (inclusive); NULL: open ended';
COMMENT ON CONSTRAINT sku_products_pkey ON incentives.sku_products IS 'One window of a SKU in a node per start_date';
COMMENT ON INDEX incentives.sku_products_pkey IS 'One window of a SKU in a node per start_date';
COMMENT ON CONSTRAINT sku_products_end_date_check ON incentives.sku_products IS 'A window ends on or after the day it starts';
COMMENT ON INDEX incentives.sku_products_product_idx IS 'Windows by node (the check that a deleted or renamed node has no windows, the SKUs of a node)';
SELECT pg_catalog.pg_extension_config_dump('incentives.sku_products', '');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.sku_products', 'TABLE', 'incentives.skus');

------------------------------------------------------------------------
-- Standard rates by product (docs/reference.md, Products): the row's
-- product_key, after group_key, in the earning row and the materialized
-- earnings; what refresh_earnings materializes gains it too (its result
-- is a table of its own, which cannot change in place).
------------------------------------------------------------------------
ALTER TYPE incentives.earning ADD ATTRIBUTE product_key text;
COMMENT ON COLUMN incentives.earning.product_key IS 'In a standard offer, the product whose rate the row took (NULL when the SKU''s own rate applied, and in stepped and stacked offers)';
ALTER TABLE incentives.earnings ADD COLUMN product_key text;
COMMENT ON COLUMN incentives.earnings.product_key IS 'In a standard offer, the product whose rate the row took (NULL when the SKU''s own rate applied, and in stepped and stacked offers)';
SELECT pg_temp.update_replace_function('incentives_internal.calculate_dated(text,jsonb,text[],regclass,timestamp with time zone,date)');
-- what an offer reads gains its products and exclusions (product_key)
SELECT pg_temp.update_replace_function('incentives_internal.offer_references(jsonb)');
SELECT pg_temp.update_replace_function('incentives_internal.offer_references_all()');
SELECT pg_temp.update_check();
DROP FUNCTION incentives_internal.calculate_dated(text, jsonb, text[], regclass, timestamptz, date);
DROP FUNCTION incentives_internal.offer_references(jsonb);
DROP FUNCTION incentives_internal.offer_references_all();
-- program_skus says through which product it reads a SKU
ALTER TYPE incentives.program_sku_row ADD ATTRIBUTE product_key text;
COMMENT ON COLUMN incentives.program_sku_row.product_key IS 'The listed product the offer reads the SKU through (NULL: the SKU is listed itself)';
-- program_rates shows a standard rate of a product
ALTER TYPE incentives_internal.offer_rate_row ADD ATTRIBUTE product_key text;
COMMENT ON COLUMN incentives_internal.offer_rate_row.product_key IS 'A standard rate of a product: the product (NULL otherwise)';

------------------------------------------------------------------------
-- Participant hierarchies (docs/reference.md, Participant hierarchies):
-- a group may be a member of another group; the trigger refuses cycles
-- instead of groups of groups.
------------------------------------------------------------------------
COMMENT ON TABLE incentives.participant_groups IS
  'Members of groups (retail chains, buying groups, regions) by dated window; a group may itself be a member of a group: an offer with "aggregation": "group" computes its figures over all the transactions of a transaction''s aggregation key (docs/reference.md, Participant groups and Participant hierarchies); overlapping windows of one participant and cycles are refused';
COMMENT ON COLUMN incentives.participant_groups.group_key IS 'The group it belongs to in the window (its parent account, chain, buying group or region); a group may itself be a member of a group';

-- The types of groups (docs/reference.md, Participant hierarchies): an
-- offer with "group_type" aggregates at the first of a participant and
-- its ancestors whose type it names.  A row here does not make a group;
-- membership rows do.  Keys are checked by a trigger
-- (code/15_participant_groups.sql); the index makes two keys equal but
-- for letter case impossible also between concurrent sessions.
CREATE TABLE incentives.groups (
    group_key  text PRIMARY KEY,
    group_type text NOT NULL,
    label      text
);
CREATE UNIQUE INDEX groups_group_key_case_idx ON incentives.groups (lower(group_key));
COMMENT ON TABLE incentives.groups IS
  'The type (chain, region, buying_group, ...) and label of a group of incentives.participant_groups: an offer with "group_type" aggregates at the first of a participant and its ancestors of that type (docs/reference.md, Participant hierarchies); a row here does not make a group, membership rows do';
COMMENT ON COLUMN incentives.groups.group_key IS 'The group (a group_key of incentives.participant_groups); non-empty, no surrounding white space or control character, unique regardless of letter case';
COMMENT ON COLUMN incentives.groups.group_type IS 'Its type, as an offer''s "group_type" names it (chain, region, buying_group, ...)';
COMMENT ON COLUMN incentives.groups.label IS 'A name for people (never changes a figure)';
COMMENT ON INDEX incentives.groups_group_key_case_idx IS 'Group keys are unique regardless of letter case (23505)';
SELECT pg_catalog.pg_extension_config_dump('incentives.groups', '');
-- read by every calculation, written by those who write the memberships
SELECT pg_temp.update_grant_like('TABLE', 'incentives.groups', 'TABLE', 'incentives.participant_groups');
-- programs shows each offer's group_type (code/30_programs.sql)
ALTER TYPE incentives_internal.offer_summary_row ADD ATTRIBUTE group_type text;
COMMENT ON COLUMN incentives_internal.offer_summary_row.group_type IS 'An offer aggregated by group: the "group_type" it aggregates at; NULL otherwise';
-- program_rates shows each rate's offer's group_type (code/30_programs.sql)
ALTER TYPE incentives_internal.offer_rate_row ADD ATTRIBUTE group_type text;
COMMENT ON COLUMN incentives_internal.offer_rate_row.group_type IS 'The offer''s "group_type" (an offer aggregated by group at a type of group); NULL otherwise';
-- tier_progress names the type of the aggregation key (code/70_explain.sql)
ALTER TYPE incentives.tier_progress_row ADD ATTRIBUTE group_type text;
COMMENT ON COLUMN incentives.tier_progress_row.group_type IS 'An offer aggregated by group: the type (incentives.groups) of the group_key whose figures these are; NULL when it has none or there is no group';

------------------------------------------------------------------------
-- Roll-ups of the earnings by product and by group at every level
-- (code/50_reporting.sql): two new reporting views, with the privileges
-- of earnings_by_participant.
------------------------------------------------------------------------
SELECT pg_temp.update_grant_like('TABLE', 'incentives.earnings_by_product', 'TABLE', 'incentives.earnings_by_participant');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.earnings_by_group_level', 'TABLE', 'incentives.earnings_by_participant');

------------------------------------------------------------------------
-- Growers, currencies and returns against their sale (docs/reference.md,
-- Transactions, Growers, Currencies, Returns against their sale): the
-- transactions gain three optional columns (a relation without them is
-- read as NULL there); the earning row and the earnings gain grower_key,
-- currency and exchange_rate after product_key.
------------------------------------------------------------------------
ALTER TABLE incentives.transactions
    ADD COLUMN grower_key text NULL,
    ADD COLUMN currency text NULL,
    ADD COLUMN original_transaction_id text NULL;
COMMENT ON COLUMN incentives.transactions.grower_key IS 'The end customer of a sale (a farm), as the program identifies it; NULL: none (docs/reference.md, Growers)';
COMMENT ON COLUMN incentives.transactions.currency IS 'The currency of amount (a three-letter code such as USD, CAD); NULL: taken as it is in every offer (docs/reference.md, Currencies)';
COMMENT ON COLUMN incentives.transactions.original_transaction_id IS 'A return''s original sale: a transaction of the same participant and SKU dated on or before it, whose date then answers every "which date" question of the return (docs/reference.md, Returns against their sale)';
-- the read finds the returns that name their sale through it (src/pg/read/txn_relation.c)
CREATE INDEX transactions_original_idx ON incentives.transactions (original_transaction_id)
    WHERE original_transaction_id IS NOT NULL;
COMMENT ON INDEX incentives.transactions_original_idx IS 'The transactions that name an original sale (a calculation''s read finds the returns it matches through it)';

ALTER TYPE incentives.earning ADD ATTRIBUTE grower_key text;
ALTER TYPE incentives.earning ADD ATTRIBUTE currency text;
ALTER TYPE incentives.earning ADD ATTRIBUTE exchange_rate numeric;
COMMENT ON COLUMN incentives.earning.grower_key IS 'The transaction''s grower_key (NULL when it has none)';
COMMENT ON COLUMN incentives.earning.currency IS 'The offer''s currency: every amount of the row but provided_amount is in it (NULL when the offer has none)';
COMMENT ON COLUMN incentives.earning.exchange_rate IS 'The rate that converted the transaction''s amount into the offer''s currency (exact, or rounded to 12 places for an inverse rate); NULL when the amount was taken as it is';
ALTER TABLE incentives.earnings
    ADD COLUMN grower_key text,
    ADD COLUMN currency text,
    ADD COLUMN exchange_rate numeric;
COMMENT ON COLUMN incentives.earnings.grower_key IS 'The transaction''s grower_key (NULL when it has none)';
COMMENT ON COLUMN incentives.earnings.currency IS 'The offer''s currency: every amount of the row but provided_amount is in it (NULL when the offer has none)';
COMMENT ON COLUMN incentives.earnings.exchange_rate IS 'The rate that converted the transaction''s amount into the offer''s currency (exact, or rounded to 12 places for an inverse rate); NULL when the amount was taken as it is';
-- (incentives_internal.calculate_dated, replaced above, gains them too)

-- Exchange rates (docs/reference.md, Currencies): reference data like
-- incentives.skus, read by every reader, written by the roles that write
-- SKUs; in a dump as the extension's configuration.
CREATE TABLE incentives.exchange_rates (
    from_currency text NOT NULL,
    to_currency   text NOT NULL,
    rate_date     date NOT NULL,
    rate          numeric NOT NULL,
    PRIMARY KEY (from_currency, to_currency, rate_date),
    CONSTRAINT exchange_rates_rate_check CHECK (rate > 0 AND rate <> 'Infinity'),
    CONSTRAINT exchange_rates_currency_check
        CHECK (from_currency ~ '^[A-Z]{3}$' COLLATE "C" AND to_currency ~ '^[A-Z]{3}$' COLLATE "C"),
    CONSTRAINT exchange_rates_pair_check CHECK (from_currency <> to_currency),
    CONSTRAINT exchange_rates_date_check CHECK (rate_date > '-infinity' AND rate_date < 'infinity')
);
COMMENT ON TABLE incentives.exchange_rates IS
  'Exchange rates by day (docs/reference.md, Currencies): one unit of from_currency is rate units of to_currency from rate_date on; a transaction in another currency than its offer''s is converted by the later of the direct pair''s and the inverse pair''s latest rows on or before its matching date (the direct one on a tie)';
COMMENT ON COLUMN incentives.exchange_rates.from_currency IS 'The currency converted from: three upper-case letters (ISO 4217 form)';
COMMENT ON COLUMN incentives.exchange_rates.to_currency IS 'The currency converted to: three upper-case letters, not from_currency';
COMMENT ON COLUMN incentives.exchange_rates.rate_date IS 'The first day the rate applies (until the pair''s next row, or the inverse pair''s later row)';
COMMENT ON COLUMN incentives.exchange_rates.rate IS 'Units of to_currency per unit of from_currency: greater than 0, exact';
COMMENT ON CONSTRAINT exchange_rates_pkey ON incentives.exchange_rates IS 'One rate of a pair per day';
COMMENT ON INDEX incentives.exchange_rates_pkey IS 'One rate of a pair per day';
COMMENT ON CONSTRAINT exchange_rates_rate_check ON incentives.exchange_rates IS 'A rate is a finite number greater than 0';
COMMENT ON CONSTRAINT exchange_rates_currency_check ON incentives.exchange_rates IS 'Currencies are three upper-case letters (ISO 4217 form)';
COMMENT ON CONSTRAINT exchange_rates_pair_check ON incentives.exchange_rates IS 'A rate converts between two currencies';
COMMENT ON CONSTRAINT exchange_rates_date_check ON incentives.exchange_rates IS 'A rate starts on a finite day';
SELECT pg_catalog.pg_extension_config_dump('incentives.exchange_rates', '');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.exchange_rates', 'TABLE', 'incentives.skus');

-- A relation of the database that already has a column
-- original_transaction_id besides the transaction columns (a user's view
-- read by the calculations) now matches its returns to their sales, which
-- moves what they earn from the next refresh and statement on
-- (docs/backup-and-upgrade.md, Upgrade): say how many it matches.
DO $update$
DECLARE
    r record;
    n bigint;
BEGIN
    FOR r IN
        SELECT c.oid::regclass AS relation
          FROM pg_catalog.pg_class AS c
          JOIN pg_catalog.pg_namespace AS s ON s.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
           AND s.nspname NOT IN ('pg_catalog', 'information_schema', 'incentives',
                                 'incentives_internal', 'incentives_cluster')
           AND s.nspname NOT LIKE 'pg\_%'
           AND (SELECT count(*) FROM pg_catalog.pg_attribute AS a
                 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                   AND a.attname IN ('transaction_id', 'participant_key', 'transaction_date',
                                     'sku_key', 'quantity', 'amount',
                                     'original_transaction_id')) = 7
         ORDER BY 1::text
    LOOP
        BEGIN
            EXECUTE format($q$
                SELECT count(*) FROM %1$s AS t
                 WHERE t.original_transaction_id IS NOT NULL
                   AND (t.quantity < 0 OR (t.quantity = 0 AND t.amount < 0))
                   AND EXISTS (SELECT FROM %1$s AS o
                                WHERE o.transaction_id::text = t.original_transaction_id::text
                                  AND o.participant_key::text = t.participant_key::text
                                  AND o.sku_key::text = t.sku_key::text
                                  AND o.transaction_date <= t.transaction_date)$q$, r.relation)
              INTO n;
            IF n > 0 THEN
                RAISE NOTICE 'relation % has % returns matched to their sales through original_transaction_id: read by a calculation, they count at their sales'' dates from now on',
                    r.relation, n
                    USING HINT = 'The next refresh_earnings and statement true up what they moved (docs/backup-and-upgrade.md, Upgrade).';
            END IF;
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'relation % has a column original_transaction_id; its returns could not be counted: %',
                r.relation, SQLERRM;
        END;
    END LOOP;
END
$update$;

-- The forecast names the offer's currency (docs/reference.md, Forecast,
-- Currencies), at the end of its row.
ALTER TYPE incentives.forecast_row ADD ATTRIBUTE currency text;
COMMENT ON COLUMN incentives.forecast_row.currency IS 'The offer''s currency: earned_to_date, projected_earnings and accrual_to_date are in it (NULL when the offer has none)';

------------------------------------------------------------------------
-- Statements and accruals per currency (docs/lifecycle.md, Statements per
-- currency): a line carries its offer's currency, written by settle and
-- accrue from the offer's "currency", so that no figure adds amounts of
-- two currencies.  Lines of 0.4.0 keep NULL: offers had no currency then.
-- The currency of an offer that a line covers cannot change any more
-- (code/55_settle.sql, offers_currency_check).
------------------------------------------------------------------------
ALTER TABLE incentives.statement_lines ADD COLUMN currency text;
COMMENT ON COLUMN incentives.statement_lines.currency IS
  'The offer''s currency (its "currency" when the line was written): every amount of the line is in it; NULL for an offer without a currency and for lines written before 0.5.0';
ALTER TABLE incentives.accrual_lines ADD COLUMN currency text;
COMMENT ON COLUMN incentives.accrual_lines.currency IS
  'The offer''s currency (its "currency" when the line was written): every amount of the line is in it; NULL for an offer without a currency and for lines written before 0.5.0';

------------------------------------------------------------------------
-- Settlement finance (docs/lifecycle.md, Why a line moved, holdbacks,
-- minimums and closing a season).
--
-- A statement line gains payable_to_date, held_back and final; its kind,
-- computed from its amounts until now, becomes a column settle writes
-- (below_minimum is a kind the amounts alone do not tell from unchanged),
-- checked against them as before.  Lines of 0.4.0 held nothing back:
-- payable_to_date is their earned_to_date.  The kind's column keeps its
-- place and values, so users' views over the lines keep working.
------------------------------------------------------------------------
ALTER TABLE incentives.statement_lines ALTER COLUMN kind DROP EXPRESSION;
ALTER TABLE incentives.statement_lines
    ADD COLUMN payable_to_date numeric(20, 2),
    ADD COLUMN held_back       numeric(20, 2) NOT NULL DEFAULT 0,
    ADD COLUMN final           boolean NOT NULL DEFAULT false;
ALTER TABLE incentives.statement_lines DISABLE TRIGGER statement_lines_append_only;
UPDATE incentives.statement_lines SET payable_to_date = earned_to_date;
ALTER TABLE incentives.statement_lines ENABLE TRIGGER statement_lines_append_only;
ALTER TABLE incentives.statement_lines
    ALTER COLUMN payable_to_date SET NOT NULL,
    ALTER COLUMN kind SET NOT NULL,
    DROP CONSTRAINT statement_lines_amount_due_check,
    ADD CONSTRAINT statement_lines_amount_due_check CHECK (
        held_back = earned_to_date - payable_to_date
        AND (NOT final OR held_back = 0)
        AND (amount_due = payable_to_date - settled_before
             OR (kind = 'below_minimum' AND NOT final AND amount_due = 0
                 AND payable_to_date - settled_before > 0))),
    ADD CONSTRAINT statement_lines_kind_check CHECK (
        kind = CASE WHEN amount_due = 0 AND payable_to_date - settled_before > 0 THEN 'below_minimum'
                    WHEN amount_due = 0 THEN 'unchanged'
                    WHEN amount_due < 0 THEN 'clawback'
                    WHEN settled_before = 0 THEN 'payment'
                    ELSE 'true_up' END);
COMMENT ON COLUMN incentives.statement_lines.kind IS
  'Why the line: unchanged (amount_due 0), below_minimum (amount_due 0: the participant''s total due in the currency was below the statement''s minimum_payment; it stays owed), clawback (amount_due < 0), payment (amount_due > 0, nothing settled before), true_up (amount_due > 0 over an earlier settlement)';
COMMENT ON COLUMN incentives.statement_lines.payable_to_date IS
  'What may be paid of earned_to_date: all of it on a final line, else earned_to_date less the offer''s settlement.holdback_percent, rounded to the cent; lines written before 0.5.0 held nothing back';
COMMENT ON COLUMN incentives.statement_lines.held_back IS
  'earned_to_date - payable_to_date: held back until the offer''s final line (0 on a final line)';
COMMENT ON COLUMN incentives.statement_lines.final IS
  'A final line (its statement closed the offer, or the offer had been reopened): nothing held back, no minimum';
COMMENT ON CONSTRAINT statement_lines_amount_due_check ON incentives.statement_lines IS
  'amount_due = payable_to_date - settled_before (0 on a line below the minimum), held_back = earned_to_date - payable_to_date, nothing held back on a final line';
COMMENT ON CONSTRAINT statement_lines_kind_check ON incentives.statement_lines IS
  'The kind follows from the amounts';

-- The rows each line summed (docs/lifecycle.md, Why a line moved,
-- holdbacks, minimums and closing a season): one row per statement and
-- participant with lines in it, the earning rows' columns as arrays in
-- step (the view incentives.statement_line_rows shows one row each).  Per participant rather than per line: a few large
-- rows compress well and cost settle a fraction of one row per line.
CREATE TABLE incentives.statement_kept_rows (
    statement_id      bigint NOT NULL,
    participant_key   text NOT NULL,
    offer_keys        text[] NOT NULL,
    transaction_ids   text[] NOT NULL,
    transaction_dates date[] NOT NULL,
    rate_keys         text[] NOT NULL,
    pay_rates         numeric[] NOT NULL,
    amounts           numeric[] NOT NULL,
    PRIMARY KEY (statement_id, participant_key),
    CONSTRAINT statement_kept_rows_arrays_check CHECK (
        cardinality(transaction_ids) = cardinality(offer_keys)
        AND cardinality(transaction_dates) = cardinality(offer_keys)
        AND cardinality(rate_keys) = cardinality(offer_keys)
        AND cardinality(pay_rates) = cardinality(offer_keys)
        AND cardinality(amounts) = cardinality(offer_keys))
);
COMMENT ON TABLE incentives.statement_kept_rows IS
  'The earning rows the statement lines written by settle summed, one row per statement and participant with lines in it (empty arrays when its lines summed none), the rows'' columns as arrays in step: the rows of an offer add up to its line''s earned_to_date; append-only. Read them through incentives.statement_line_rows and incentives.statement_line_changes';
COMMENT ON COLUMN incentives.statement_kept_rows.statement_id IS 'The statement (written with it in one transaction)';
COMMENT ON COLUMN incentives.statement_kept_rows.participant_key IS 'The participant of the lines';
COMMENT ON COLUMN incentives.statement_kept_rows.offer_keys IS 'Each row''s offer (its line''s)';
COMMENT ON COLUMN incentives.statement_kept_rows.transaction_ids IS 'Each row''s transaction_id';
COMMENT ON COLUMN incentives.statement_kept_rows.transaction_dates IS 'Each row''s transaction''s own date';
COMMENT ON COLUMN incentives.statement_kept_rows.rate_keys IS 'Each row''s incentive_rate_key';
COMMENT ON COLUMN incentives.statement_kept_rows.pay_rates IS 'Each row''s offer_sku_pay_rate';
COMMENT ON COLUMN incentives.statement_kept_rows.amounts IS 'Each row''s incentive_amount';
COMMENT ON CONSTRAINT statement_kept_rows_pkey ON incentives.statement_kept_rows IS 'One set of rows per statement and participant';
COMMENT ON INDEX incentives.statement_kept_rows_pkey IS 'One set of rows per statement and participant';
COMMENT ON CONSTRAINT statement_kept_rows_arrays_check ON incentives.statement_kept_rows IS 'The arrays are in step: one element per row';
-- lz4 where the server has it: it compresses the arrays several times
-- faster than pglz (settle writes them for every participant)
DO $lz4$
BEGIN
    ALTER TABLE incentives.statement_kept_rows
        ALTER COLUMN offer_keys SET COMPRESSION lz4,
        ALTER COLUMN transaction_ids SET COMPRESSION lz4,
        ALTER COLUMN transaction_dates SET COMPRESSION lz4,
        ALTER COLUMN rate_keys SET COMPRESSION lz4,
        ALTER COLUMN pay_rates SET COMPRESSION lz4,
        ALTER COLUMN amounts SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;   -- built without lz4: the default compression
END
$lz4$;
SELECT pg_catalog.pg_extension_config_dump('incentives.statement_kept_rows', '');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.statement_kept_rows', 'TABLE', 'incentives.statement_lines');

-- Closing a season (docs/lifecycle.md, Why a line moved, holdbacks,
-- minimums and closing a season): the statements that closed an offer,
-- and the reopenings that let the next statement write its lines again.  Offer-level facts without amounts: no
-- participant_key, read as the offers are.
CREATE TABLE incentives.offer_closings (
    offer_key      text NOT NULL,
    statement_id   bigint NOT NULL,
    statement_date date NOT NULL,
    closed_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    closed_by      text NOT NULL DEFAULT CURRENT_USER,
    PRIMARY KEY (offer_key, statement_id)
);
COMMENT ON TABLE incentives.offer_closings IS
  'Offers closed by a statement (settle''s final_offer_keys, or the next statement of everyone after a reopening): a closed offer gets no line in a later statement until incentives.reopen_offer; append-only';
COMMENT ON COLUMN incentives.offer_closings.offer_key IS 'The offer closed';
COMMENT ON COLUMN incentives.offer_closings.statement_id IS 'The statement whose final lines closed it';
COMMENT ON COLUMN incentives.offer_closings.statement_date IS 'That statement''s date';
COMMENT ON COLUMN incentives.offer_closings.closed_at IS 'Start of the transaction that closed it';
COMMENT ON COLUMN incentives.offer_closings.closed_by IS 'The role that ran incentives.settle';
COMMENT ON CONSTRAINT offer_closings_pkey ON incentives.offer_closings IS 'A statement closes an offer once';
COMMENT ON INDEX incentives.offer_closings_pkey IS 'A statement closes an offer once';
SELECT pg_catalog.pg_extension_config_dump('incentives.offer_closings', '');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.offer_closings', 'TABLE', 'incentives.statements');

CREATE TABLE incentives.offer_reopenings (
    reopening_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    offer_key    text NOT NULL,
    reason       text NOT NULL,
    statement_id bigint NOT NULL,
    reopened_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    reopened_by  text NOT NULL DEFAULT CURRENT_USER
);
CREATE INDEX offer_reopenings_offer_idx ON incentives.offer_reopenings (offer_key);
COMMENT ON TABLE incentives.offer_reopenings IS
  'Closed offers reopened, by incentives.reopen_offer or by incentives.remove_settled_offer: the next statement of the offer writes final lines again; append-only';
COMMENT ON COLUMN incentives.offer_reopenings.reopening_id IS 'Reopening number (identity)';
COMMENT ON COLUMN incentives.offer_reopenings.offer_key IS 'The offer reopened';
COMMENT ON COLUMN incentives.offer_reopenings.reason IS 'Why (the removal''s reason when remove_settled_offer reopened it)';
COMMENT ON COLUMN incentives.offer_reopenings.statement_id IS 'The statement whose closing it undid (the offer''s latest row of incentives.offer_closings then)';
COMMENT ON COLUMN incentives.offer_reopenings.reopened_at IS 'Start of the transaction that reopened it';
COMMENT ON COLUMN incentives.offer_reopenings.reopened_by IS 'The role that reopened it';
COMMENT ON CONSTRAINT offer_reopenings_pkey ON incentives.offer_reopenings IS 'One row per reopening';
COMMENT ON INDEX incentives.offer_reopenings_pkey IS 'One row per reopening';
COMMENT ON INDEX incentives.offer_reopenings_offer_idx IS 'Reopenings by offer';
SELECT pg_catalog.pg_extension_config_dump('incentives.offer_reopenings', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.offer_reopenings_reopening_id_seq', '');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.offer_reopenings', 'TABLE', 'incentives.offer_removals');
SELECT pg_temp.update_grant_like('SEQUENCE', 'incentives.offer_reopenings_reopening_id_seq',
                                 'SEQUENCE', 'incentives.offer_removals_removal_id_seq');

-- The views over them read as the statements' view does.
SELECT pg_temp.update_grant_like('TABLE', 'incentives.statement_line_rows', 'TABLE', 'incentives.participant_statements');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.statement_line_changes', 'TABLE', 'incentives.participant_statements');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.closed_offers', 'TABLE', 'incentives.participant_statements');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.closed_offer_changes', 'TABLE', 'incentives.participant_statements');

-- settle gains minimum_payment and final_offer_keys: the procedure and
-- the function doing its work are created again with them.
SELECT pg_temp.update_replace_function('incentives.settle(date,text,regclass)');
SELECT pg_temp.update_replace_function('incentives_internal.settle_work(date,text,regclass)');
SELECT pg_temp.update_replace_function('incentives_internal.settle_run(date,text,regclass)');
SELECT pg_temp.update_check();
DROP PROCEDURE incentives.settle(date, text, regclass);
DROP FUNCTION incentives_internal.settle_work(date, text, regclass);
DROP FUNCTION incentives_internal.settle_run(date, text, regclass);
