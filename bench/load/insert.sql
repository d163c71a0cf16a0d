-- bench/load/insert.sql: a new transaction of a random participant
\set p random(1, :participants)
\set d random(0, 300)
\set q random(1, 50)
INSERT INTO incentives.transactions
VALUES ('load-' || gen_random_uuid(), 'retailer_' || lpad(:p::text, 4, '0'),
        'retailer_purchases_from_distribution', DATE '2026-01-01' + :d,
        'chem_001_gal', :q, 'gal', :q * 40);
