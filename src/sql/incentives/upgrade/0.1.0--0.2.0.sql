-- incentives 0.1.0 -> 0.2.0: the changes to schemas, tables and types.
-- The upgrade script is src/sql/drop_code.sql (0.1.0's functions, views
-- and triggers go), this file, then the code parts (0.2.0's come).

-- Internals have a schema of their own.
CREATE SCHEMA incentives_internal;
COMMENT ON SCHEMA incentives_internal IS
  'incentives internals: trigger functions, helpers of the procedures and views, and the functions a sharded coordinator calls; not for direct use';

-- Comments that cite docs/reference.md instead of documents users never see.
COMMENT ON COLUMN incentives.offers.document IS 'The offer document, in the shape of the programs response (docs/reference.md, Offer documents)';
COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (docs/reference.md, Earning rows)';

-- incentives.earnings takes its 17 earning columns' comments from the
-- type incentives.earning, as a fresh install's LIKE ... INCLUDING COMMENTS.
DO $upgrade$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT a.attname, pg_catalog.col_description(a.attrelid, a.attnum) AS comment
               FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid OPERATOR(pg_catalog.=) 'incentives.earning'::pg_catalog.regclass
                AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
    LOOP
        EXECUTE pg_catalog.format('COMMENT ON COLUMN incentives.earnings.%I IS %L', c.attname, c.comment);
    END LOOP;
END
$upgrade$;

-- The shipped unit conversions survive pg_dump/pg_restore as they are
-- (state/10_reference.sql, code/12_uom_conversions.sql): the shipped pairs
-- get a table of their own, and what became of each in this database
-- (edited or deleted under 0.1.0) is recorded now.
CREATE TABLE incentives_internal.shipped_uom_conversions (
    from_uom_key text NOT NULL,
    to_uom_key   text NOT NULL,
    factor       numeric NOT NULL,
    PRIMARY KEY (from_uom_key, to_uom_key)
);
COMMENT ON TABLE incentives_internal.shipped_uom_conversions IS
  'The unit conversions this version of the extension ships (copied into incentives.uom_conversions by CREATE EXTENSION); extension data, not dumped';
COMMENT ON COLUMN incentives_internal.shipped_uom_conversions.from_uom_key IS 'Unit converted from';
COMMENT ON COLUMN incentives_internal.shipped_uom_conversions.to_uom_key IS 'Unit converted to';
COMMENT ON COLUMN incentives_internal.shipped_uom_conversions.factor IS 'The shipped factor';
INSERT INTO incentives_internal.shipped_uom_conversions (from_uom_key, to_uom_key, factor) VALUES
    ('gal', 'qt', 4),
    ('gal', 'pt', 8),
    ('gal', 'fl_oz', 128),
    ('gal', 'l', 3.785411784),
    ('l', 'ml', 1000),
    ('lb', 'oz', 16),
    ('ton', 'lb', 2000),
    ('kg', 'g', 1000),
    ('lb', 'kg', 0.45359237);

CREATE TABLE incentives.uom_conversion_changes (
    from_uom_key text NOT NULL,
    to_uom_key   text NOT NULL,
    factor       numeric,
    PRIMARY KEY (from_uom_key, to_uom_key),
    FOREIGN KEY (from_uom_key, to_uom_key)
        REFERENCES incentives_internal.shipped_uom_conversions (from_uom_key, to_uom_key)
);
COMMENT ON TABLE incentives.uom_conversion_changes IS
  'Edits and deletions of the shipped unit conversions (maintained by a trigger on incentives.uom_conversions), so that pg_dump/pg_restore reproduces incentives.uom_conversions exactly';
COMMENT ON COLUMN incentives.uom_conversion_changes.from_uom_key IS 'Unit converted from (a shipped pair)';
COMMENT ON COLUMN incentives.uom_conversion_changes.to_uom_key IS 'Unit converted to (a shipped pair)';
COMMENT ON COLUMN incentives.uom_conversion_changes.factor IS 'The factor the pair has now; NULL when the row was deleted';
INSERT INTO incentives.uom_conversion_changes (from_uom_key, to_uom_key, factor)
SELECT s.from_uom_key, s.to_uom_key, c.factor
  FROM incentives_internal.shipped_uom_conversions AS s
  LEFT JOIN incentives.uom_conversions AS c
    ON c.from_uom_key OPERATOR(pg_catalog.=) s.from_uom_key
   AND c.to_uom_key OPERATOR(pg_catalog.=) s.to_uom_key
 WHERE c.factor::text IS DISTINCT FROM s.factor::text;

SELECT pg_catalog.pg_extension_config_dump('incentives.uom_conversions',
  $$WHERE (from_uom_key, to_uom_key) NOT IN (SELECT s.from_uom_key, s.to_uom_key FROM incentives_internal.shipped_uom_conversions AS s)$$);
SELECT pg_catalog.pg_extension_config_dump('incentives.uom_conversion_changes', '');

-- Enrollments (docs/reference.md, Enrollment), as state/40_enrollments.sql
-- creates them in a fresh install.
CREATE TABLE incentives.enrollments (
    participant_key text NOT NULL,
    offer_key       text NOT NULL,
    start_date      date NOT NULL,
    end_date        date NULL,
    PRIMARY KEY (participant_key, offer_key, start_date),
    CONSTRAINT enrollments_end_date_check CHECK (end_date >= start_date)
);
COMMENT ON TABLE incentives.enrollments IS
  'Enrollment windows of participants in offers whose enrollment is "required": a transaction counts for such an offer only when a window of its participant contains its date; two windows of one participant and offer may not overlap';
COMMENT ON COLUMN incentives.enrollments.participant_key IS 'The participant enrolled';
COMMENT ON COLUMN incentives.enrollments.offer_key IS 'The offer it is enrolled in';
COMMENT ON COLUMN incentives.enrollments.start_date IS 'First day of the window (inclusive)';
COMMENT ON COLUMN incentives.enrollments.end_date IS 'Last day of the window (inclusive); NULL: open ended';
COMMENT ON CONSTRAINT enrollments_end_date_check ON incentives.enrollments IS 'A window ends on or after the day it starts';
SELECT pg_catalog.pg_extension_config_dump('incentives.enrollments', '');

-- The participant index covers every transaction column, so a
-- one-participant calculation reads its transactions from the index alone
-- (docs/operations.md, Performance).  Rebuilt here: on a large table this
-- step takes about as long as building the index did.
DROP INDEX incentives.transactions_participant_idx;
CREATE INDEX transactions_participant_idx ON incentives.transactions (participant_key COLLATE "C", transaction_id COLLATE "C")
    INCLUDE (transaction_type, transaction_date, sku_key, quantity, uom_key, amount);
COMMENT ON INDEX incentives.transactions_participant_idx IS
  'A participant''s transactions, every column: what a one-participant calculation reads (an index-only scan)';
