-- bench/load/calculate_json.sql: a what-if through the JSON entry point,
-- one inline transaction on top of the participant's stored ones
\set p random(1, :participants)
\set q random(1, 200)
SELECT jsonb_array_length(incentives.calculate(jsonb_build_object(
         'participant_key', 'retailer_' || lpad(:p::text, 4, '0'),
         'include_stored', true,
         'transactions', jsonb_build_array(jsonb_build_object(
             'transaction_id', 'whatif-' || :client_id,
             'transaction_type', 'retailer_purchases_from_distribution',
             'transaction_date', '2026-03-15',
             'sku_key', 'chem_001_gal',
             'quantity', :q,
             'uom_key', 'gal',
             'amount', :q * 45)))) -> 'potential_earnings');
