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
