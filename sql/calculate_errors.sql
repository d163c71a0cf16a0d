-- calculate_errors: what the calculation refuses, through SQL
-- (docs/reference.md, Calculation errors): an unknown offer key, a
-- transactions relation without a column or with a column of the wrong type,
-- a missing unit conversion, a property that is not a number.  Also: a
-- participant without transactions, and reading from a user's view instead of
-- incentives.transactions.
-- An error raised while the engine calculates carries a CONTEXT line naming
-- the transaction (when it was working on one) and the participant.
\set VERBOSITY default
\set SHOW_CONTEXT errors
\set fixture stepped_property
\i test/sql/load_fixture.psql

-- An offer_keys entry that names no offer is an error naming it (a typo must
-- not silently return nothing), alone or beside a real one.
SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY['nope']);
SELECT count(*)
  FROM incentives.incentive_calculate(offer_keys => ARRAY['basf.2026.retailer.business_plan', 'nope']);
-- An empty list names no unknown offer.
SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY[]::text[]);

-- A participant with no transactions: no rows, no error.
SELECT count(*) FROM incentives.incentive_calculate(participant_key => 'retailer_999');

-- The transactions relation: any table or view with the transaction columns.
CREATE SCHEMA myschema;
-- differences(relation): the calculation's rows over the relation that one
-- over incentives.transactions does not return, and the reverse, each with
-- its problem; none when the relation gives the same rows as the table.
CREATE TEMP TABLE difference AS
SELECT ''::text AS problem, * FROM incentives.incentive_calculate() WITH NO DATA;
CREATE FUNCTION pg_temp.differences(relation regclass) RETURNS SETOF difference LANGUAGE sql AS $$
  WITH by_view AS (SELECT * FROM incentives.incentive_calculate(transactions => relation)),
       by_table AS (SELECT * FROM incentives.incentive_calculate())
  (SELECT 'only through the view' AS problem, * FROM (TABLE by_view EXCEPT ALL TABLE by_table) a)
  UNION ALL
  (SELECT 'only from the table', * FROM (TABLE by_table EXCEPT ALL TABLE by_view) b)
$$;

-- A view over incentives.transactions gives the same rows as the table.
CREATE VIEW myschema.myview AS SELECT * FROM incentives.transactions;
SELECT * FROM pg_temp.differences('myschema.myview') ORDER BY participant_key, transaction_id, problem;
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.myview');

-- Accepted column types: varchar keys, integer quantity, numeric(12,2)
-- amount, extra columns, any column order.  Same rows again.
CREATE VIEW myschema.erp_lines AS
SELECT amount::numeric(12,2) AS amount, 'ERP' AS source,
       transaction_id::varchar(40) AS transaction_id,
       participant_key::varchar AS participant_key,
       transaction_type::varchar AS transaction_type, transaction_date,
       sku_key::varchar AS sku_key, quantity::integer AS quantity,
       uom_key::varchar AS uom_key
  FROM incentives.transactions;
SELECT * FROM pg_temp.differences('myschema.erp_lines') ORDER BY participant_key, transaction_id, problem;

-- A relation that does not exist (PostgreSQL's own regclass error).
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.no_such_view');

-- A relation missing a column: an error naming the relation and the column.
CREATE VIEW myschema.no_amount AS
SELECT transaction_id, participant_key, transaction_type, transaction_date,
       sku_key, quantity, uom_key
  FROM incentives.transactions;
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.no_amount');

-- A column of the wrong type: float is inexact, so it is refused (naming the
-- relation and the column); so is a date kept as text.
CREATE VIEW myschema.float_quantity AS
SELECT transaction_id, participant_key, transaction_type, transaction_date,
       sku_key, quantity::double precision AS quantity, uom_key, amount
  FROM incentives.transactions;
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.float_quantity');
CREATE VIEW myschema.text_date AS
SELECT transaction_id, participant_key, transaction_type,
       transaction_date::text AS transaction_date, sku_key, quantity, uom_key, amount
  FROM incentives.transactions;
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.text_date');

-- A NULL where a figure needs a value (the table's columns are NOT NULL;
-- a view can still yield one): an error naming the column, the transaction
-- and the participant when the engine computes the figure (docs/reference.md,
-- Errors), never a crash nor a silently dropped row.
CREATE VIEW myschema.null_amount AS
SELECT transaction_id, participant_key, transaction_type, transaction_date,
       sku_key, quantity, uom_key,
       CASE WHEN transaction_id = '01JB0000000000000000000003' THEN NULL ELSE amount END AS amount
  FROM incentives.transactions;
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.null_amount');
-- A refresh that skips failing participants reads where the failed
-- calculation was (docs/lifecycle.md, on_error => 'skip'): the row's
-- participant and transaction.
SELECT * FROM incentives_internal.calculation_failure();
-- So does a number that cannot be calculated with.
CREATE VIEW myschema.nan_quantity AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key,
       CASE WHEN transaction_id = '01JB0000000000000000000004' THEN 'NaN' ELSE quantity END AS quantity,
       uom_key, amount
  FROM incentives.transactions;
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.nan_quantity');
SELECT * FROM incentives_internal.calculation_failure();

-- The same transaction_id twice (a view joining to a wider table, say): an
-- error naming the transaction and the relation, not a doubled earning.
CREATE VIEW myschema.doubled AS
SELECT * FROM incentives.transactions
UNION ALL
SELECT * FROM incentives.transactions WHERE transaction_id = '01JB0000000000000000000002';
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.doubled');

-- The same transaction_id under two participants (two feeds that both carry
-- a line, say): an error naming the id and both participants, not an
-- earning under each.  A relation with a unique index on transaction_id
-- alone (incentives.transactions' primary key) cannot have one, so it is
-- not checked.
CREATE VIEW myschema.two_owners AS
SELECT * FROM incentives.transactions
UNION ALL
SELECT transaction_id, 'retailer_009', transaction_type, transaction_date,
       sku_key, quantity, uom_key, amount, grower_key, currency, original_transaction_id
  FROM incentives.transactions WHERE transaction_id = '01JB0000000000000000000002';
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.two_owners');
SELECT * FROM incentives_internal.calculation_failure();
-- through_date filters at the read (docs/lifecycle.md, Through-date): a
-- repeated id dated after it is neither read nor checked, for everyone or
-- for one participant; without it, the repeat is an error.
CREATE VIEW myschema.late_owner AS
SELECT * FROM incentives.transactions
UNION ALL
SELECT transaction_id, 'retailer_009', transaction_type, DATE '2026-12-01',
       sku_key, quantity, uom_key, amount, grower_key, currency, original_transaction_id
  FROM incentives.transactions WHERE transaction_id = '01JB0000000000000000000002';
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.late_owner');
SELECT count(*), sum(incentive_amount)
  FROM incentives.incentive_calculate(transactions => 'myschema.late_owner',
                                      through_date => '2026-11-30');
SELECT count(*), sum(incentive_amount) FROM incentives.incentive_calculate();
SELECT participant_key, count(*), sum(incentive_amount)
  FROM (VALUES ('retailer_001'), ('retailer_009')) p(k),
       LATERAL incentives.incentive_calculate(p.k, transactions => 'myschema.late_owner',
                                              through_date => '2026-11-30')
 GROUP BY 1 ORDER BY 1;
-- and a through_date before a participant's last purchase leaves it out
SELECT participant_key, count(*), sum(incentive_amount)
  FROM (VALUES ('retailer_001'), ('retailer_009')) p(k),
       LATERAL incentives.incentive_calculate(p.k, transactions => 'myschema.late_owner',
                                              through_date => '2026-01-10')
 GROUP BY 1 ORDER BY 1;
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'myschema.late_owner',
                                                    through_date => '2026-12-01');

-- A transaction whose unit has no conversion to its SKU's unit: an error
-- naming the transaction, the SKU and both units (docs/reference.md, Unit
-- conversions).  The SKU is measured in gal; the transaction comes in jug,
-- and no jug row exists.  (jug_purchase(transaction_id, participant_key,
-- sku_key, amount): a new SKU measured in gal, and a purchase of 4 jug of it
-- on 2026-03-01.)
CREATE PROCEDURE pg_temp.jug_purchase(id text, participant text, sku text, amount numeric) LANGUAGE sql AS $$
  INSERT INTO incentives.skus (sku_key, uom_key) VALUES (sku, 'gal');
  INSERT INTO incentives.transactions
  VALUES (id, participant, 'retailer_purchases_from_distribution', '2026-03-01', sku, 4, 'jug', amount);
$$;
CALL pg_temp.jug_purchase('01JB0000000000000000000099', 'retailer_005', 'crop_guard_30_l_herbicide_2.5_gal_22654', 430.00);
SELECT count(*)
  FROM incentives.incentive_calculate(participant_key => 'retailer_005',
                                      properties => '{"business_plan_achieved": 90}');
-- With a conversion row it calculates (1 jug = 2.5 gal).
INSERT INTO incentives.uom_conversions VALUES ('jug', 'gal', 2.5);
SELECT transaction_id, provided_quantity, provided_uom_key, incentivized_quantity, incentive_amount
  FROM incentives.incentive_calculate(participant_key => 'retailer_005',
                                      properties => '{"business_plan_achieved": 90}');
DELETE FROM incentives.uom_conversions WHERE from_uom_key = 'jug';
DELETE FROM incentives.transactions WHERE participant_key = 'retailer_005';

-- A transaction of a SKU that no offer mentions is skipped before any unit
-- conversion: no error even though its unit cannot be converted.
CALL pg_temp.jug_purchase('01JB0000000000000000000098', 'retailer_001', 'unrelated_sku', 100.00);
SELECT count(*)
  FROM incentives.incentive_calculate(participant_key => 'retailer_001',
                                      properties => '{"business_plan_achieved": 90}');
DELETE FROM incentives.transactions WHERE transaction_id = '01JB0000000000000000000098';

-- A call property that is not a number: an error naming the property and the
-- participant.  A string, a JSON null, an object.
SELECT count(*)
  FROM incentives.incentive_calculate(participant_key => 'retailer_002',
                                      properties => '{"business_plan_achieved": "high"}');
SELECT count(*)
  FROM incentives.incentive_calculate(participant_key => 'retailer_002',
                                      properties => '{"business_plan_achieved": null}');
SELECT count(*)
  FROM incentives.incentive_calculate(participant_key => 'retailer_002',
                                      properties => '{"business_plan_achieved": {"value": 90}}');
-- A number written as a JSON string is still not a number.
SELECT count(*)
  FROM incentives.incentive_calculate(participant_key => 'retailer_002',
                                      properties => '{"business_plan_achieved": "90"}');
-- properties must be a JSON object.
SELECT count(*) FROM incentives.incentive_calculate(properties => '[90]');

SET client_min_messages = warning;
DROP SCHEMA myschema CASCADE;
RESET client_min_messages;
