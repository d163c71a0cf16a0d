-- 00_surface: the SQL surface of the extension (docs/reference.md): tables,
-- the earning row type, the calculation's signature and labels, and a
-- COMMENT on every object.  Run by pg_prove; everything is rolled back.
\ir ../sql/pgtap_begin.psql

SELECT plan(45);

SELECT has_extension('incentives');
SELECT has_schema('incentives');
SELECT has_table('incentives', 'offers', 'table incentives.offers');
SELECT has_table('incentives', 'transactions', 'table incentives.transactions');
SELECT has_table('incentives', 'skus', 'table incentives.skus');
SELECT has_table('incentives', 'uom_conversions', 'table incentives.uom_conversions');
SELECT has_table('incentives', 'participant_properties', 'table incentives.participant_properties');
SELECT col_is_pk('incentives', 'offers', 'offer_key', 'offer_key is the primary key of offers');
SELECT col_is_pk('incentives', 'transactions', 'transaction_id', 'transaction_id is the primary key of transactions');
SELECT col_is_pk('incentives', 'uom_conversions', ARRAY['from_uom_key', 'to_uom_key'], 'a conversion is keyed by its pair of units');
SELECT col_is_pk('incentives', 'participant_properties', ARRAY['participant_key', 'property_key'], 'a property is keyed by participant and property');
-- the product catalog (docs/reference.md, Products)
SELECT has_table('incentives', 'products', 'table incentives.products');
SELECT has_table('incentives', 'sku_products', 'table incentives.sku_products');
SELECT col_is_pk('incentives', 'products', 'product_key', 'product_key is the primary key of products');
SELECT col_is_pk('incentives', 'sku_products', ARRAY['sku_key', 'product_key', 'start_date'], 'a SKU''s window in a product is keyed by SKU, product and start date');

-- The transaction columns, typed as docs/reference.md, Transactions, says.
SELECT results_eq(
  $$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod), attnotnull
      FROM pg_attribute
     WHERE attrelid = 'incentives.transactions'::regclass AND attnum > 0 AND NOT attisdropped
     ORDER BY attnum$$,
  $$VALUES ('transaction_id', 'text', true), ('participant_key', 'text', true),
           ('transaction_type', 'text', true), ('transaction_date', 'date', true),
           ('sku_key', 'text', true), ('quantity', 'numeric', true),
           ('uom_key', 'text', true), ('amount', 'numeric', true),
           ('grower_key', 'text', false), ('currency', 'text', false),
           ('original_transaction_id', 'text', false)$$,
  'incentives.transactions has the columns of docs/reference.md, Transactions');

-- The nine shipped unit conversions.
SELECT bag_eq(
  $$SELECT from_uom_key, to_uom_key, factor FROM incentives.uom_conversions$$,
  $$VALUES ('gal', 'qt', 4::numeric), ('gal', 'pt', 8), ('gal', 'fl_oz', 128),
           ('gal', 'l', 3.785411784), ('l', 'ml', 1000), ('lb', 'oz', 16),
           ('ton', 'lb', 2000), ('kg', 'g', 1000), ('lb', 'kg', 0.45359237)$$,
  'the shipped unit conversions are there');

-- The earning row type: 17 columns, named and typed exactly, then group_key,
-- product_key, grower_key, currency and exchange_rate (docs/reference.md,
-- Earning rows).
SELECT has_type('incentives', 'earning', 'type incentives.earning');
SELECT results_eq(
  $$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod)
      FROM pg_attribute
     WHERE attrelid = 'incentives.earning'::regclass AND attnum > 0 AND NOT attisdropped
     ORDER BY attnum$$,
  $$VALUES ('participant_key', 'text'), ('offer_key', 'text'),
           ('offer_calculator', 'text'), ('sku_key', 'text'),
           ('incentive_rate_key', 'text'), ('incentive_rate_measure', 'text'),
           ('incentive_rate_value', 'numeric'), ('offer_sku_pay_rate', 'numeric'),
           ('transaction_id', 'text'), ('provided_quantity', 'numeric'),
           ('provided_uom_key', 'text'), ('provided_amount', 'numeric'),
           ('incentivized_quantity', 'numeric'), ('incentivized_amount', 'numeric'),
           ('incentive_amount', 'numeric'), ('incentive_contribution_percent', 'numeric'),
           ('incentive_effective_rate', 'numeric'), ('group_key', 'text'),
           ('product_key', 'text'), ('grower_key', 'text'), ('currency', 'text'),
           ('exchange_rate', 'numeric')$$,
  'incentives.earning has the 17 columns of docs/reference.md, Earning rows, in order, then group_key, product_key, grower_key, currency and exchange_rate');

-- incentive_calculate(participant_key, properties, offer_keys, transactions)
SELECT has_function('incentives', 'incentive_calculate',
                    ARRAY['text', 'jsonb', 'text[]', 'regclass', 'timestamp with time zone', 'date'],
                    'incentive_calculate(text, jsonb, text[], regclass, timestamptz, date) exists');
SELECT function_returns('incentives', 'incentive_calculate',
                        ARRAY['text', 'jsonb', 'text[]', 'regclass', 'timestamp with time zone', 'date'], 'setof incentives.earning',
                        'incentive_calculate returns setof incentives.earning');
SELECT function_lang_is('incentives', 'incentive_calculate',
                        ARRAY['text', 'jsonb', 'text[]', 'regclass', 'timestamp with time zone', 'date'], 'c',
                        'incentive_calculate is written in C');
SELECT volatility_is('incentives', 'incentive_calculate',
                     ARRAY['text', 'jsonb', 'text[]', 'regclass', 'timestamp with time zone', 'date'], 'stable',
                     'incentive_calculate is STABLE (it reads tables)');
SELECT isnt_definer('incentives', 'incentive_calculate',
                    ARRAY['text', 'jsonb', 'text[]', 'regclass', 'timestamp with time zone', 'date'],
                    'incentive_calculate runs with the caller''s rights (not SECURITY DEFINER)');
SELECT isnt_strict('incentives', 'incentive_calculate',
                   ARRAY['text', 'jsonb', 'text[]', 'regclass', 'timestamp with time zone', 'date'],
                   'incentive_calculate is not STRICT (a NULL participant_key means everyone)');
SELECT is(pg_temp.argument_names('incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)'),
          'participant_key, properties, offer_keys, transactions, as_of, through_date',
          'argument names of incentive_calculate');
SELECT is(pg_temp.argument_defaults('incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)'),
          'NULL::text, ''{}''::jsonb, NULL::text[], ''incentives.transactions''::regclass, NULL::timestamp with time zone, NULL::date',
          'argument defaults of incentive_calculate');
SELECT ok((SELECT prorows FROM pg_proc
            WHERE oid = 'incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)'::regprocedure) > 0,
          'incentive_calculate has a ROWS estimate');

-- offer_error(jsonb) and the validation trigger.
SELECT has_function('incentives', 'offer_error', ARRAY['jsonb'], 'offer_error(jsonb) exists');
SELECT function_returns('incentives', 'offer_error', ARRAY['jsonb'], 'text',
                        'offer_error returns text');
SELECT is_strict('incentives', 'offer_error', ARRAY['jsonb'], 'offer_error is STRICT');
SELECT isnt_definer('incentives', 'offer_error', ARRAY['jsonb'], 'offer_error is not SECURITY DEFINER');
SELECT has_trigger('incentives', 'offers', 'offers_validate', 'offers has the validation trigger');
SELECT trigger_is('incentives', 'offers', 'offers_validate', 'incentives_internal', 'offers_validate',
                  'the trigger calls incentives_internal.offers_validate()');
SELECT ok((SELECT tgtype::int & 2 = 2 AND tgtype::int & 1 = 1   -- BEFORE, FOR EACH ROW
             FROM pg_trigger
            WHERE tgrelid = 'incentives.offers'::regclass AND tgname = 'offers_validate'),
          'the validation trigger fires BEFORE, for each row');
SELECT ok((SELECT tgtype::int & 4 = 4 AND tgtype::int & 16 = 16   -- INSERT, UPDATE
             FROM pg_trigger
            WHERE tgrelid = 'incentives.offers'::regclass AND tgname = 'offers_validate'),
          'the validation trigger fires on INSERT and UPDATE');

-- Every object of the extension explains itself in \d+ and \df+.
SELECT is_empty(
  $$SELECT c.oid::regclass::text
      FROM pg_class c
     WHERE c.relnamespace = 'incentives'::regnamespace
       AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
       AND obj_description(c.oid, 'pg_class') IS NULL$$,
  'every table and view in schema incentives has a COMMENT');
SELECT is_empty(
  $$SELECT c.oid::regclass::text || '.' || a.attname
      FROM pg_class c
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE c.relnamespace = 'incentives'::regnamespace
       AND c.relkind IN ('r', 'v', 'm', 'p', 'f', 'c')
       AND col_description(c.oid, a.attnum) IS NULL$$,
  'every column of every table, view and row type in schema incentives has a COMMENT');
SELECT is_empty(
  $$SELECT p.oid::regprocedure::text
      FROM pg_proc p
     WHERE p.pronamespace IN ('incentives'::regnamespace, 'incentives_internal'::regnamespace)
       AND obj_description(p.oid, 'pg_proc') IS NULL$$,
  'every function and procedure in schemas incentives and incentives_internal has a COMMENT');
SELECT is_empty(
  $$SELECT t.oid::regtype::text
      FROM pg_type t
     WHERE t.typnamespace = 'incentives'::regnamespace
       AND t.typelem = 0 AND t.typtype <> 'b'
       AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
       AND obj_description(t.oid, 'pg_type') IS NULL$$,
  'every type in schema incentives has a COMMENT');
SELECT is_empty(
  $$SELECT tgname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.relnamespace = 'incentives'::regnamespace AND NOT t.tgisinternal
       AND obj_description(t.oid, 'pg_trigger') IS NULL$$,
  'every trigger in schema incentives has a COMMENT');

-- The earning row is defined once, as the type incentives.earning: the
-- materialized earnings table starts with exactly its 17 first columns
-- (names, types, comments) and adds its own after them; the column 0.3.0
-- added to both (group_key) is the same in both.
SELECT results_eq(
  $$SELECT a.attnum, a.attname::text, format_type(a.atttypid, a.atttypmod), col_description(a.attrelid, a.attnum)
      FROM pg_attribute a
     WHERE a.attrelid = 'incentives.earnings'::regclass AND a.attnum BETWEEN 1 AND 17
     ORDER BY a.attnum$$,
  $$SELECT a.attnum, a.attname::text, format_type(a.atttypid, a.atttypmod), col_description(a.attrelid, a.attnum)
      FROM pg_attribute a
     WHERE a.attrelid = 'incentives.earning'::regclass AND a.attnum BETWEEN 1 AND 17 AND NOT a.attisdropped
     ORDER BY a.attnum$$,
  'incentives.earnings begins with the columns of incentives.earning, comments included');
SELECT results_eq(
  $$SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
     WHERE a.attrelid = 'incentives.earnings'::regclass AND a.attname = 'group_key'$$,
  $$SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
     WHERE a.attrelid = 'incentives.earning'::regclass AND a.attname = 'group_key'$$,
  'incentives.earnings has the group_key of incentives.earning');

-- search_path: every SQL and PL/pgSQL function declares
-- SET search_path = pg_catalog, pg_temp; a procedure has no SET clause (it
-- would forbid COMMIT).
SELECT is_empty(
  $$SELECT p.oid::regprocedure::text
      FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
     WHERE p.pronamespace IN ('incentives'::regnamespace, 'incentives_internal'::regnamespace)
       AND p.prokind = 'f' AND l.lanname IN ('sql', 'plpgsql')
       AND p.proconfig IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp']$$,
  'every SQL and PL/pgSQL function in schemas incentives and incentives_internal sets search_path = pg_catalog, pg_temp, and nothing else');
SELECT is_empty(
  $$SELECT p.oid::regprocedure::text
      FROM pg_proc p
     WHERE p.pronamespace IN ('incentives'::regnamespace, 'incentives_internal'::regnamespace)
       AND p.prokind = 'p' AND p.proconfig IS NOT NULL$$,
  'no procedure in schemas incentives and incentives_internal has a SET clause');

SELECT * FROM finish();
ROLLBACK;
