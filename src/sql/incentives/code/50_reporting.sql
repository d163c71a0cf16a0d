------------------------------------------------------------------------
-- Reporting views over incentives.earnings
--
-- Four views of one shape: incentives.earnings_by_<key> groups the
-- materialized earnings by a key and measures each group with columns of
-- the list below (each defined once, with its comment; a view may say of
-- a column something of its own).
------------------------------------------------------------------------

DO $reporting$
DECLARE
    -- every column: its expression and its comment (NULL: each view says)
    columns CONSTANT jsonb := '{
        "participant_key":  ["e.participant_key", "The participant"],
        "offer_key":        ["e.offer_key", "The offer"],
        "sku_key":          ["e.sku_key", "The SKU"],
        "month":            ["CAST(date_trunc(''month'', e.transaction_date) AS date)",
                             "First day of the month of the earning transactions'' date"],
        "offer_calculator": ["min(e.offer_calculator)", "Its calculator"],
        "offers":           ["count(DISTINCT e.offer_key)", "Offers it earns under"],
        "participants":     ["count(DISTINCT e.participant_key)", null],
        "transactions":     ["count(DISTINCT e.transaction_id)", "Distinct transactions that earn"],
        "rows":             ["count(*)", "Earning rows"],
        "incentivized_quantity": ["sum(e.incentivized_quantity)",
            "Sum of incentivized_quantity over the rows, in the SKU''s unit of measure (incentives.skus; each transaction''s own unit when the SKU is not there)"],
        "incentivized_amount": ["sum(e.incentivized_amount)", "Sum of incentivized_amount over the rows"],
        "incentive_amount": ["sum(e.incentive_amount)", null],
        "calculated_at":    ["max(e.calculated_at)", "When the newest of its rows was calculated"]}';
    v record;
BEGIN
    FOR v IN SELECT * FROM (VALUES
        ('earnings_by_participant', 'Materialized earnings per participant', 'e.participant_key',
         ARRAY['participant_key', 'offers', 'transactions', 'rows', 'incentivized_amount', 'incentive_amount',
               'calculated_at'],
         '{"rows": "Earning rows (a transaction earns once per offer and rate key)",
           "incentivized_amount": "Sum of incentivized_amount over the rows (a transaction earning under two rates counts twice)",
           "incentive_amount": "Total incentive earned"}'::jsonb),
        ('earnings_by_offer', 'Materialized earnings per offer', 'e.offer_key',
         ARRAY['offer_key', 'offer_calculator', 'participants', 'transactions', 'rows', 'incentivized_amount',
               'incentive_amount', 'calculated_at'],
         '{"participants": "Participants earning under it",
           "transactions": "Distinct transactions that earn under it",
           "incentive_amount": "Total incentive paid by the offer"}'),
        ('earnings_by_sku', 'Materialized earnings per SKU', 'e.sku_key',
         ARRAY['sku_key', 'offers', 'participants', 'transactions', 'rows', 'incentivized_quantity',
               'incentivized_amount', 'incentive_amount', 'calculated_at'],
         '{"participants": "Participants earning on it",
           "incentive_amount": "Total incentive earned on the SKU"}'),
        ('earnings_by_month', 'Materialized earnings per calendar month of the transaction date', '1',
         ARRAY['month', 'participants', 'offers', 'transactions', 'rows', 'incentivized_amount',
               'incentive_amount', 'calculated_at'],
         '{"participants": "Participants earning in the month",
           "offers": "Offers earned under in the month",
           "incentive_amount": "Total incentive earned by the month''s transactions"}'))
        AS x(view, comment, group_by, columns, comments)
    LOOP
        EXECUTE format(E'CREATE VIEW incentives.%I WITH (security_invoker = true) AS\nSELECT %s\n  FROM incentives.earnings AS e\n GROUP BY %s',
                       v.view,
                       (SELECT string_agg(format('%s AS %I', columns -> n.name ->> 0, n.name), E',\n       '
                                          ORDER BY n.i)
                          FROM unnest(v.columns) WITH ORDINALITY AS n(name, i)),
                       v.group_by);
        EXECUTE format('COMMENT ON VIEW incentives.%I IS %L', v.view, v.comment);
        EXECUTE (SELECT string_agg(format('COMMENT ON COLUMN incentives.%I.%I IS %L', v.view, n.name,
                                          COALESCE(v.comments ->> n.name, columns -> n.name ->> 1)), '; ')
                   FROM unnest(v.columns) AS n(name));
    END LOOP;
END
$reporting$;
