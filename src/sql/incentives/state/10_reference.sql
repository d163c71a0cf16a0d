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

INSERT INTO incentives.uom_conversions (from_uom_key, to_uom_key, factor) VALUES
    ('gal', 'qt', 4),
    ('gal', 'pt', 8),
    ('gal', 'fl_oz', 128),
    ('gal', 'l', 3.785411784),
    ('l', 'ml', 1000),
    ('lb', 'oz', 16),
    ('ton', 'lb', 2000),
    ('kg', 'g', 1000),
    ('lb', 'kg', 0.45359237);

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

-- pg_dump keeps user data of extension tables (shipped conversions excluded).
SELECT pg_catalog.pg_extension_config_dump('incentives.offers', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.transactions', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.skus', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.participant_properties', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.uom_conversions',
  $$WHERE (from_uom_key, to_uom_key) NOT IN (('gal','qt'),('gal','pt'),('gal','fl_oz'),('gal','l'),('l','ml'),('lb','oz'),('ton','lb'),('kg','g'),('lb','kg'))$$);

