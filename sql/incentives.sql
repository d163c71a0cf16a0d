-- incentives: the install script (the Makefile turns it into
-- incentives--<version>.sql).  Tables of SPEC §1, the earning row type and
-- the calculation function of SPEC §4.1.

\echo Use "CREATE EXTENSION incentives" to load this file. \quit

COMMENT ON SCHEMA incentives IS 'Channel incentives (rebates): offers, transactions, and their exact calculation';

------------------------------------------------------------------------
-- Reference data
------------------------------------------------------------------------

CREATE TABLE incentives.offers (
    document  jsonb NOT NULL,
    offer_key text GENERATED ALWAYS AS (document ->> 'offer_key') STORED PRIMARY KEY
);
COMMENT ON TABLE incentives.offers IS
  'Offers (programs) as JSON documents; insert the document alone, offer_key is taken from it. Every insert/update is validated.';
COMMENT ON COLUMN incentives.offers.document IS 'The offer document, as in the programs response (SPEC §1.1)';
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

------------------------------------------------------------------------
-- Offer validation
------------------------------------------------------------------------

CREATE FUNCTION incentives.offer_error(document jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_offer_error'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives.offer_error(jsonb) IS
  'Checks an offer document against every rule; NULL when it is valid, else the message the offers table would raise';

CREATE FUNCTION incentives.offers_validate()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_offers_validate'
LANGUAGE C;
COMMENT ON FUNCTION incentives.offers_validate() IS
  'Trigger: rejects an invalid offer document with SQLSTATE 22023, naming the offer and the JSON path';

CREATE TRIGGER offers_validate
    BEFORE INSERT OR UPDATE OF document ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives.offers_validate();
COMMENT ON TRIGGER offers_validate ON incentives.offers IS 'Validates every offer document on insert and update';

------------------------------------------------------------------------
-- The calculation
------------------------------------------------------------------------

CREATE TYPE incentives.earning AS (
    participant_key                text,
    offer_key                      text,
    offer_calculator               text,
    sku_key                        text,
    incentive_rate_key             text,
    incentive_rate_measure         text,
    incentive_rate_value           numeric,
    offer_sku_pay_rate             numeric,
    transaction_id                 text,
    provided_quantity              numeric,
    provided_uom_key               text,
    provided_amount                numeric,
    incentivized_quantity          numeric,
    incentivized_amount            numeric,
    incentive_amount               numeric,
    incentive_contribution_percent numeric,
    incentive_effective_rate       numeric
);
COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (SPEC §4.1)';
COMMENT ON COLUMN incentives.earning.participant_key IS 'The participant (retailer) who earns';
COMMENT ON COLUMN incentives.earning.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.earning.offer_calculator IS 'The offer''s calculator_key';
COMMENT ON COLUMN incentives.earning.sku_key IS 'The transaction''s SKU';
COMMENT ON COLUMN incentives.earning.incentive_rate_key IS 'Standard: the entry key; stepped: the tier key; stacked: the stack key';
COMMENT ON COLUMN incentives.earning.incentive_rate_measure IS 'percent or dollars';
COMMENT ON COLUMN incentives.earning.incentive_rate_value IS 'The rate as written in the offer (tier value for stepped, pool for fixed_amount)';
COMMENT ON COLUMN incentives.earning.offer_sku_pay_rate IS 'Rate as a multiplier: rate/100 for percent, rate for dollars, pool / sum of base amounts (6 places) for fixed_amount';
COMMENT ON COLUMN incentives.earning.transaction_id IS 'The earning transaction';
COMMENT ON COLUMN incentives.earning.provided_quantity IS 'The transaction''s quantity, as stored';
COMMENT ON COLUMN incentives.earning.provided_uom_key IS 'The transaction''s unit of measure';
COMMENT ON COLUMN incentives.earning.provided_amount IS 'The transaction''s amount, as stored';
COMMENT ON COLUMN incentives.earning.incentivized_quantity IS 'Quantity in the SKU''s unit (times the contribution factor for stacked), 6 places';
COMMENT ON COLUMN incentives.earning.incentivized_amount IS 'Base amount: quantity x program price when the offer prices the SKU, else the amount (times the contribution factor for stacked), 2 places';
COMMENT ON COLUMN incentives.earning.incentive_amount IS 'What the row earns, 2 places, half away from zero';
COMMENT ON COLUMN incentives.earning.incentive_contribution_percent IS 'Stacked: overlap / set coverage (<= 1); 1 otherwise; 6 places';
COMMENT ON COLUMN incentives.earning.incentive_effective_rate IS 'incentive_amount / incentivized_amount from the reported figures, 4 places; NULL when incentivized_amount is 0';

CREATE FUNCTION incentives.incentive_calculate(
    participant_key text     DEFAULT NULL,
    properties      jsonb    DEFAULT '{}',
    offer_keys      text[]   DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.earning
AS 'MODULE_PATHNAME', 'incentives_incentive_calculate'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.incentive_calculate(text, jsonb, text[], regclass) IS
  'Earnings of one participant (or all when NULL) under the given offers (or all), reading transactions from any relation with the transaction columns; runs with the caller''s rights';

CREATE FUNCTION incentives.incentive_diagnostics(
    participant_key text     DEFAULT NULL,
    properties      jsonb    DEFAULT '{}',
    offer_keys      text[]   DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS TABLE (participant_key text, offer_key text, strategy_key text, diagnostics jsonb)
AS 'MODULE_PATHNAME', 'incentives_incentive_diagnostics'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], regclass) IS
  'Why participants earn what they do under stepped and stacked offers: threshold value, every tier (met, what it would pay), next tier and gap; coverage per SKU set, overlap and factors per stack (JSON per participant and offer)';
