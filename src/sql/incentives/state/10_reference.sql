------------------------------------------------------------------------
-- Reference data
------------------------------------------------------------------------

CREATE TABLE incentives.offers (
    document  jsonb NOT NULL,
    offer_key text GENERATED ALWAYS AS (document ->> 'offer_key') STORED PRIMARY KEY
);
COMMENT ON TABLE incentives.offers IS
  'Offers (programs) as JSON documents; insert the document alone, offer_key is taken from it. Every insert/update is validated.';
COMMENT ON COLUMN incentives.offers.document IS 'The offer document, in the shape of the programs response (docs/reference.md, Offer documents)';
COMMENT ON COLUMN incentives.offers.offer_key IS 'The document''s offer_key (generated)';

CREATE TABLE incentives.transactions (
    transaction_id   text PRIMARY KEY,
    participant_key  text NOT NULL,
    transaction_type text NOT NULL,
    transaction_date date NOT NULL,
    sku_key          text NOT NULL,
    quantity         numeric NOT NULL,
    uom_key          text NOT NULL,
    amount           numeric NOT NULL
);
CREATE INDEX transactions_participant_idx ON incentives.transactions (participant_key COLLATE "C", transaction_id COLLATE "C");
COMMENT ON TABLE incentives.transactions IS 'Purchases and sales of participants (retailers); negative quantity and amount for a return';
COMMENT ON COLUMN incentives.transactions.transaction_id IS 'Unique transaction identifier';
COMMENT ON COLUMN incentives.transactions.participant_key IS 'Whose earnings (the retailer)';
COMMENT ON COLUMN incentives.transactions.transaction_type IS 'e.g. retailer_purchases_from_distribution, retailer_sales_to_growers';
COMMENT ON COLUMN incentives.transactions.transaction_date IS 'Date of the transaction';
COMMENT ON COLUMN incentives.transactions.sku_key IS 'Product';
COMMENT ON COLUMN incentives.transactions.quantity IS 'Quantity in uom_key; negative for a return';
COMMENT ON COLUMN incentives.transactions.uom_key IS 'Unit of measure of quantity';
COMMENT ON COLUMN incentives.transactions.amount IS 'Dollars; negative for a return';

CREATE TABLE incentives.skus (
    sku_key text PRIMARY KEY,
    uom_key text NOT NULL,
    label   text
);
COMMENT ON TABLE incentives.skus IS 'SKU catalog: the unit of measure each SKU is incentivized in (a SKU missing here is measured in each transaction''s own unit)';
COMMENT ON COLUMN incentives.skus.sku_key IS 'Product';
COMMENT ON COLUMN incentives.skus.uom_key IS 'The SKU''s unit of measure: incentivized_quantity and program prices are in this unit';
COMMENT ON COLUMN incentives.skus.label IS 'Optional display name';

CREATE TABLE incentives.uom_conversions (
    from_uom_key text NOT NULL,
    to_uom_key   text NOT NULL,
    factor       numeric NOT NULL CHECK (factor > 0 AND factor::text <> ALL (ARRAY['NaN', 'Infinity'])),
    PRIMARY KEY (from_uom_key, to_uom_key)
);
COMMENT ON TABLE incentives.uom_conversions IS
  'Unit conversions: quantity_in_to = quantity_in_from * factor; a pair found only the other way round is used as 1 / factor; no chaining';
COMMENT ON COLUMN incentives.uom_conversions.from_uom_key IS 'Unit converted from';
COMMENT ON COLUMN incentives.uom_conversions.to_uom_key IS 'Unit converted to';
COMMENT ON COLUMN incentives.uom_conversions.factor IS 'How many to-units one from-unit is (> 0)';

-- The conversions the extension ships (SPEC §1.3), defined once: the
-- install copies them into incentives.uom_conversions, where they are
-- ordinary rows a DBA may edit or delete.
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
INSERT INTO incentives.uom_conversions (from_uom_key, to_uom_key, factor)
SELECT s.from_uom_key, s.to_uom_key, s.factor FROM incentives_internal.shipped_uom_conversions AS s;

-- What became of the shipped conversions: one row per shipped pair whose
-- row in incentives.uom_conversions was edited (factor: the current one)
-- or deleted (factor NULL); kept by the trigger uom_conversions_track.
-- pg_dump keeps it, and restoring a row re-applies the change to the rows
-- CREATE EXTENSION has just shipped (trigger uom_conversion_changes_apply):
-- docs/backup-and-upgrade.md.
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

CREATE TABLE incentives.participant_properties (
    participant_key text NOT NULL,
    property_key    text NOT NULL,
    value           numeric NOT NULL CHECK (value::text <> ALL (ARRAY['NaN', 'Infinity', '-Infinity'])),
    PRIMARY KEY (participant_key, property_key)
);
COMMENT ON TABLE incentives.participant_properties IS
  'Stored property values per participant (e.g. business_plan_achieved), used by property-based stepped offers when the call does not pass the property';
COMMENT ON COLUMN incentives.participant_properties.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.participant_properties.property_key IS 'The property, as named in threshold_definition.property.key';
COMMENT ON COLUMN incentives.participant_properties.value IS 'Its numeric value';

-- pg_dump keeps the data of every table (docs/backup-and-upgrade.md).
-- incentives.uom_conversions: every row but the shipped pairs, which
-- CREATE EXTENSION ships again on restore; what became of those is in
-- incentives.uom_conversion_changes.
SELECT pg_catalog.pg_extension_config_dump('incentives.offers', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.transactions', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.skus', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.participant_properties', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.uom_conversions',
  $$WHERE (from_uom_key, to_uom_key) NOT IN (SELECT s.from_uom_key, s.to_uom_key FROM incentives_internal.shipped_uom_conversions AS s)$$);
SELECT pg_catalog.pg_extension_config_dump('incentives.uom_conversion_changes', '');
