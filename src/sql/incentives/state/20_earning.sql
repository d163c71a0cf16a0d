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
COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (docs/reference.md, Earning rows)';
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

