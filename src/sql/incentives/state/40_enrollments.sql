------------------------------------------------------------------------
-- Enrollments (docs/reference.md, Enrollment): who may earn from an offer
-- whose enrollment is "required", and when
------------------------------------------------------------------------

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
