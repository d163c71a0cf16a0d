------------------------------------------------------------------------
-- Checking a program book (docs/analyst-guide.md, Checking a program
-- book): what in the stored offers is legal but likely wrong
-- (offer_warnings), every SKU each offer reads with the transactions that
-- match it (program_skus), and every stored transaction a calculation
-- would refuse (transaction_warnings).  All computed on read, against the
-- data as it is.
--
-- What an offer reads comes from the engine (src/pg/load/offer_info.c):
-- incentives_internal.offer_references (every SKU, transaction type and
-- period of a document, with its JSON path and role) and
-- incentives_internal.offer_findings (what the document alone says:
-- unknown fields, implausible rates); nothing here walks a document.
-- The suggestions of unknown keys are the engine's too
-- (incentives_internal.suggested_key).
--
-- Every function reads the transactions with the caller's rights (none is
-- SECURITY DEFINER) and the views are security_invoker: a role under
-- row-level security on the transactions counts and checks only the
-- transactions it can see, and sees only the enrollments and memberships
-- its policies show (docs/security.md).  A relation other than
-- incentives.transactions is checked as the calculation checks it (its
-- columns and their types, the same errors) and named only by its
-- regclass, which is always a quoted, qualified name.
------------------------------------------------------------------------

-- The transactions relation checked as the calculation checks it
-- (src/pg/read/txn_relation.c): every column present, of a type that converts
-- exactly (through domains).  Returns whether a unique index on
-- transaction_id alone makes a repeated transaction_id impossible.
CREATE OR REPLACE FUNCTION incentives_internal.transactions_relation_check(transactions regclass)
RETURNS boolean
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_relation regclass := transactions_relation_check.transactions;
    v_column   record;
    v_type     oid;
    v_attnum   smallint;
    v_id_attnum smallint;
    v_fits     boolean;
BEGIN
    IF v_relation IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'transactions must not be NULL', '', '');
    END IF;
    IF NOT EXISTS (SELECT FROM pg_class AS c WHERE c.oid = v_relation) THEN
        PERFORM incentives_internal.raise_error(
            '42P01', format('relation with OID %s does not exist', v_relation::oid), '', '');
    END IF;
    FOR v_column IN SELECT * FROM (VALUES
            (1, 'transaction_id', 't'), (2, 'participant_key', 't'), (3, 'transaction_type', 't'),
            (4, 'transaction_date', 'd'), (5, 'sku_key', 't'), (6, 'quantity', 'n'),
            (7, 'uom_key', 't'), (8, 'amount', 'n')) AS r(i, name, kind)
        ORDER BY r.i
    LOOP
        SELECT a.atttypid, a.attnum INTO v_type, v_attnum
          FROM pg_attribute AS a
         WHERE a.attrelid = v_relation AND a.attname = v_column.name
           AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            PERFORM incentives_internal.raise_error(
                '42703', format('relation %s has no column "%s"', v_relation, v_column.name), '',
                'The transactions relation needs the columns transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key and amount.');
        END IF;
        -- the base type of a domain (of a domain ...)
        v_type := (WITH RECURSIVE b(oid, base) AS (
                       SELECT t.oid, t.typbasetype FROM pg_type AS t WHERE t.oid = v_type
                       UNION ALL
                       SELECT t.oid, t.typbasetype FROM b JOIN pg_type AS t ON t.oid = b.base
                        WHERE b.base <> 0)
                   SELECT b.oid FROM b WHERE b.base = 0);
        v_fits := CASE v_column.kind
                      WHEN 't' THEN v_type IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype)
                      WHEN 'd' THEN v_type = 'date'::regtype
                      ELSE v_type IN ('numeric'::regtype, 'int2'::regtype, 'int4'::regtype, 'int8'::regtype)
                  END;
        IF NOT v_fits THEN
            PERFORM incentives_internal.raise_error(
                '42804',
                format('column "%s" of relation %s has type %s, expected %s',
                       v_column.name, v_relation,
                       (SELECT format_type(a.atttypid, NULL) FROM pg_attribute AS a
                         WHERE a.attrelid = v_relation AND a.attnum = v_attnum),
                       CASE v_column.kind WHEN 't' THEN 'text or varchar' WHEN 'd' THEN 'date'
                                          ELSE 'numeric or an integer type' END),
                '', '');
        END IF;
        IF v_column.name = 'transaction_id' THEN
            v_id_attnum := v_attnum;
        END IF;
    END LOOP;
    -- a valid, immediate, non-partial unique index on the plain column alone
    RETURN EXISTS (SELECT FROM pg_class AS c
                     JOIN pg_index AS i ON i.indrelid = c.oid
                    WHERE c.oid = v_relation AND c.relkind IN ('r', 'p')
                      AND i.indisunique AND i.indimmediate AND i.indisvalid
                      AND i.indnkeyatts = 1 AND i.indkey[0] = v_id_attnum
                      AND i.indpred IS NULL AND i.indexprs IS NULL);
END
$function$;
COMMENT ON FUNCTION incentives_internal.transactions_relation_check(regclass) IS
  'offer_warnings, program_skus and transaction_warnings helper: the transactions relation checked as the calculation checks it (every transaction column present, of a type that converts exactly; the calculation''s errors), and whether a unique index on transaction_id alone makes a repeated transaction_id impossible';

-- The transactions counted by SKU, unit, type and date: what offer_warnings
-- and program_skus need of them, in one read of the relation.
CREATE OR REPLACE FUNCTION incentives_internal.transaction_profile(transactions regclass)
RETURNS TABLE (sku_key text, uom_key text, transaction_type text, transaction_date date,
               n bigint)
LANGUAGE plpgsql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_relation regclass := COALESCE(transaction_profile.transactions, 'incentives.transactions');
BEGIN
    PERFORM incentives_internal.transactions_relation_check(v_relation);
    RETURN QUERY EXECUTE format(
        'SELECT t.sku_key::pg_catalog.text, t.uom_key::pg_catalog.text,'
        ' t.transaction_type::pg_catalog.text, t.transaction_date, pg_catalog.count(*)'
        '  FROM %s AS t GROUP BY 1, 2, 3, 4', v_relation);
END
$function$;
COMMENT ON FUNCTION incentives_internal.transaction_profile(regclass) IS
  'offer_warnings and program_skus helper: the transactions of a relation (NULL: incentives.transactions) counted by sku_key, uom_key, transaction_type and transaction_date (one read, with the caller''s rights: row-level security applies)';

-- The transactions that carry a currency counted by SKU, type, date and
-- currency (mixed_currencies); none when the relation has no currency
-- column (read as NULL, as the calculation reads it).
CREATE OR REPLACE FUNCTION incentives_internal.transaction_currencies(transactions regclass)
RETURNS TABLE (sku_key text, transaction_type text, transaction_date date, currency text,
               n bigint)
LANGUAGE plpgsql
STABLE PARALLEL SAFE
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_relation regclass := COALESCE(transaction_currencies.transactions, 'incentives.transactions');
BEGIN
    PERFORM incentives_internal.transactions_relation_check(v_relation);
    IF NOT EXISTS (SELECT FROM pg_attribute AS a
                    WHERE a.attrelid = v_relation AND a.attname = 'currency'
                      AND a.attnum > 0 AND NOT a.attisdropped) THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT t.sku_key::pg_catalog.text, t.transaction_type::pg_catalog.text,'
        ' t.transaction_date, t.currency::pg_catalog.text, pg_catalog.count(*)'
        '  FROM %s AS t WHERE t.currency IS NOT NULL GROUP BY 1, 2, 3, 4', v_relation);
END
$function$;
COMMENT ON FUNCTION incentives_internal.transaction_currencies(regclass) IS
  'offer_warnings helper: the transactions of a relation (NULL: incentives.transactions) that carry a currency, counted by sku_key, transaction_type, transaction_date and currency (none without a currency column; one read, with the caller''s rights)';

-- What every stored offer reads: incentives_internal.offer_references of
-- each document, with its offer.
CREATE OR REPLACE FUNCTION incentives_internal.offer_references_all()
RETURNS TABLE (offer_key text, path text, kind text, role text, sku_key text,
               transaction_type text, period_key text, start_date date, end_date date,
               from_uom text, per_unit boolean, product_key text)
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT o.offer_key, r.path, r.kind, r.role, r.sku_key, r.transaction_type, r.period_key,
           r.start_date, r.end_date, r.from_uom, r.per_unit, r.product_key
      FROM incentives.offers AS o
     CROSS JOIN LATERAL incentives_internal.offer_references(o.document) AS r
$function$;
COMMENT ON FUNCTION incentives_internal.offer_references_all() IS
  'offer_warnings, program_skus and transaction_warnings helper: incentives_internal.offer_references of every stored offer, with its offer_key';

-- period_outside_book (docs/reference.md, Offer warnings): a period of an
-- offer that overlaps the dates of no other stored offer (from its
-- earliest period start to its latest period end), in a book that has
-- other offers, and in which no transaction of the offer's SKUs is dated
-- (the data would show the period is real): a period typed a year off.
-- Judged against the book and the data, never the clock.  offer_warnings
-- lists it for every stored offer; the validation trigger
-- (src/pg/load/offer_checks.c) raises it as a WARNING for a document being
-- written, against the other stored offers and incentives.transactions.
-- The message suggests the whole years (1 or 2, later first) that would
-- move the period onto another offer's dates.
CREATE OR REPLACE FUNCTION incentives_internal.periods_outside_book(
    transactions regclass,
    document     jsonb DEFAULT NULL,
    except_key   text DEFAULT NULL)
RETURNS TABLE (offer_key text, path text, message text)
LANGUAGE plpgsql
STABLE PARALLEL SAFE
ROWS 10
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_relation regclass := COALESCE(periods_outside_book.transactions, 'incentives.transactions');
    v_key      text := periods_outside_book.document ->> 'offer_key';
    v_checked  boolean := false;
    v_dated    boolean;
    v_period   record;
BEGIN
    FOR v_period IN
        WITH book AS (
            -- the stored offers; for a document being written, the stored
            -- ones but itself (and the row it replaces), and the document
            SELECT o.offer_key, o.document
              FROM incentives.offers AS o
             WHERE v_key IS NULL
                OR (o.offer_key <> v_key AND o.offer_key IS DISTINCT FROM periods_outside_book.except_key)
            UNION ALL
            SELECT v_key, periods_outside_book.document
             WHERE v_key IS NOT NULL),
        refs AS MATERIALIZED (
            SELECT b.offer_key, r.path, r.kind, r.sku_key, r.period_key, r.start_date, r.end_date
              FROM book AS b
             CROSS JOIN LATERAL incentives_internal.offer_references(b.document) AS r
             WHERE r.kind IN ('period', 'sku')),
        -- each offer's dates: its earliest start to its latest end
        spans AS MATERIALIZED (
            SELECT r.offer_key, min(r.start_date) AS first_day, max(r.end_date) AS last_day
              FROM refs AS r
             WHERE r.kind = 'period'
             GROUP BY r.offer_key)
        SELECT p.offer_key, p.path, p.period_key, p.start_date, p.end_date,
               (SELECT min(x.first_day) FROM spans AS x WHERE x.offer_key <> p.offer_key) AS book_first,
               (SELECT max(x.last_day) FROM spans AS x WHERE x.offer_key <> p.offer_key) AS book_last,
               ARRAY(SELECT DISTINCT s.sku_key FROM refs AS s
                      WHERE s.offer_key = p.offer_key AND s.kind = 'sku' AND s.sku_key IS NOT NULL) AS skus,
               -- whole years that would move it onto another offer's dates
               (SELECT y.n FROM unnest(ARRAY[1, -1, 2, -2]) WITH ORDINALITY AS y(n, i)
                 WHERE EXISTS (SELECT FROM spans AS x
                                WHERE x.offer_key <> p.offer_key
                                  AND x.first_day <= (p.end_date + make_interval(years => y.n))::date
                                  AND (p.start_date + make_interval(years => y.n))::date <= x.last_day)
                 ORDER BY y.i
                 LIMIT 1) AS shift
          FROM refs AS p
         WHERE p.kind = 'period'
           AND (v_key IS NULL OR p.offer_key = v_key)
           AND EXISTS (SELECT FROM spans AS x WHERE x.offer_key <> p.offer_key)
           AND NOT EXISTS (SELECT FROM spans AS x
                            WHERE x.offer_key <> p.offer_key
                              AND x.first_day <= p.end_date AND p.start_date <= x.last_day)
         ORDER BY p.offer_key COLLATE "C", p.path COLLATE "C"
    LOOP
        -- a transaction of the offer's SKUs dated in the period silences it
        IF NOT v_checked THEN
            PERFORM incentives_internal.transactions_relation_check(v_relation);
            v_checked := true;
        END IF;
        EXECUTE format('SELECT EXISTS (SELECT FROM %s AS t'
                       ' WHERE t.sku_key::pg_catalog.text = ANY ($1)'
                       '   AND t.transaction_date BETWEEN $2 AND $3)', v_relation)
           INTO v_dated
          USING v_period.skus, v_period.start_date, v_period.end_date;
        CONTINUE WHEN v_dated;
        offer_key := v_period.offer_key;
        path := v_period.path;
        message := format('period %s (%s to %s) overlaps the dates of no other offer (the others run from %s to %s) and no transaction of the offer''s SKUs is dated in it',
                          to_json(v_period.period_key), to_char(v_period.start_date, 'YYYY-MM-DD'),
                          to_char(v_period.end_date, 'YYYY-MM-DD'), to_char(v_period.book_first, 'YYYY-MM-DD'),
                          to_char(v_period.book_last, 'YYYY-MM-DD'))
                   || CASE WHEN v_period.shift IS NOT NULL THEN
                          format('; did you mean %s to %s, %s?',
                                 to_char(v_period.start_date + make_interval(years => v_period.shift), 'YYYY-MM-DD'),
                                 to_char(v_period.end_date + make_interval(years => v_period.shift), 'YYYY-MM-DD'),
                                 CASE v_period.shift WHEN 1 THEN 'a year later' WHEN -1 THEN 'a year earlier'
                                                     WHEN 2 THEN 'two years later' ELSE 'two years earlier' END)
                      ELSE '' END;
        RETURN NEXT;
    END LOOP;
EXCEPTION WHEN invalid_parameter_value OR insufficient_privilege THEN
    -- a document being written is not refused for what the book cannot
    -- tell (a stored offer that no longer compiles, offers or transactions
    -- the writer may not read): it is judged on read instead
    IF v_key IS NULL THEN
        RAISE;
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.periods_outside_book(regclass, jsonb, text) IS
  'offer_warnings and the offers'' validation trigger helper: period_outside_book, each period of an offer that overlaps the dates (earliest period start to latest end) of no other stored offer, when the book has others, and in which no transaction of the relation (NULL: incentives.transactions) with one of the offer''s SKUs is dated; with the whole years (1 or 2) that would move it onto another offer''s dates.  Every stored offer, or, with document, that document against the stored offers but itself and except_key (an UPDATE''s old key), and then nothing when a stored offer does not compile or the caller may not read what it needs';

------------------------------------------------------------------------
-- offer_warnings
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.offer_warnings(
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.offer_warning_row
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 10
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH refs AS MATERIALIZED (
        SELECT * FROM incentives_internal.offer_references_all()),
    profile AS MATERIALIZED (
        SELECT * FROM incentives_internal.transaction_profile($1)),
    known_skus AS MATERIALIZED (
        SELECT s.sku_key FROM incentives.skus AS s
        UNION
        SELECT p.sku_key FROM profile AS p WHERE p.sku_key IS NOT NULL),
    known_types AS MATERIALIZED (
        SELECT DISTINCT p.transaction_type FROM profile AS p WHERE p.transaction_type IS NOT NULL),
    -- the candidates of the suggestions, in byte order (of two that fit as
    -- well, the first is suggested)
    candidates AS MATERIALIZED (
        SELECT ARRAY(SELECT k.sku_key FROM known_skus AS k ORDER BY k.sku_key COLLATE "C") AS skus,
               ARRAY(SELECT k.transaction_type FROM known_types AS k
                      ORDER BY k.transaction_type COLLATE "C") AS types,
               ARRAY(SELECT o.offer_key FROM incentives.offers AS o
                      ORDER BY o.offer_key COLLATE "C") AS offers,
               ARRAY(SELECT p.product_key FROM incentives.products AS p
                      ORDER BY p.product_key COLLATE "C") AS products),
    programs AS MATERIALIZED (
        SELECT o.offer_key, s.enrollment, s.aggregation
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_summary(o.document) AS s),
    w AS (
    -- what the document alone says (the engine's findings: unknown_field,
    -- implausible_rate)
    SELECT o.offer_key, f.path, f.code, f.message
      FROM incentives.offers AS o
     CROSS JOIN LATERAL incentives_internal.offer_findings(o.document) AS f
    UNION ALL
    -- unknown_sku: no row of incentives.skus and no transaction has it; the
    -- known SKU it was probably meant to be is suggested (the engine's
    -- rule of every suggestion: incentives_internal.suggested_key)
    SELECT r.offer_key, r.path, 'unknown_sku',
           format('sku %s matches no row of incentives.skus and no transaction', to_json(r.sku_key))
           || COALESCE('; did you mean '
                       || to_json(incentives_internal.suggested_key(r.sku_key, c.skus))::text
                       || '?', '')
      FROM refs AS r, candidates AS c
     WHERE r.kind = 'sku' AND r.sku_key IS NOT NULL AND r.product_key IS NULL
       AND NOT EXISTS (SELECT FROM known_skus AS k WHERE k.sku_key = r.sku_key)
    UNION ALL
    -- unknown_product: a product key (listed or excluded) that
    -- incentives.products does not have; the product it was probably meant
    -- to be is suggested (the same rule)
    SELECT r.offer_key, r.path, 'unknown_product',
           format('product %s matches no row of incentives.products', to_json(r.product_key))
           || COALESCE('; did you mean '
                       || to_json(incentives_internal.suggested_key(r.product_key, c.products))::text
                       || '?', '')
      FROM refs AS r, candidates AS c
     WHERE r.kind IN ('product', 'excluded_product')
       AND NOT EXISTS (SELECT FROM incentives.products AS p WHERE p.product_key = r.product_key)
    UNION ALL
    -- empty_product: a listed product no SKU is in (through it or a
    -- descendant) on any day of the offer's span
    SELECT r.offer_key, r.path, 'empty_product',
           format('product %s holds no SKU on any day from %s to %s (incentives.sku_products, its own and its descendants'' windows)',
                  to_json(r.product_key), to_char(s.span_start, 'YYYY-MM-DD'),
                  to_char(s.span_end, 'YYYY-MM-DD'))
      FROM refs AS r
      JOIN (SELECT q.offer_key, min(q.start_date) AS span_start, max(q.end_date) AS span_end
              FROM refs AS q WHERE q.kind = 'period' GROUP BY q.offer_key) AS s
        ON s.offer_key = r.offer_key
     WHERE r.kind = 'product'
       AND EXISTS (SELECT FROM incentives.products AS p WHERE p.product_key = r.product_key)
       AND NOT EXISTS (
           WITH RECURSIVE tree(product_key) AS (
               SELECT r.product_key
               UNION
               SELECT c.product_key FROM incentives.products AS c, tree AS t
                WHERE c.parent_key = t.product_key)
           SELECT FROM incentives.sku_products AS w, tree AS t
            WHERE w.product_key = t.product_key
              AND w.start_date <= s.span_end
              AND (w.end_date IS NULL OR w.end_date >= s.span_start))
    UNION ALL
    -- ambiguous_product_rate: a SKU in two products of one entry's rates at
    -- the same nearest distance on some day of the entry's period (the one
    -- listed first applies)
    SELECT o.offer_key, t.path, 'ambiguous_product_rate',
           format('sku %s is in products %s and %s at the same distance (%s) from %s to %s: the rate of %s, listed first, applies',
                  to_json(t.sku_key), to_json(t.taken), to_json(t.other), t.distance,
                  to_char(t.start_date, 'YYYY-MM-DD'), to_char(t.end_date, 'YYYY-MM-DD'),
                  to_json(t.taken))
      FROM incentives.offers AS o
     CROSS JOIN LATERAL incentives_internal.offer_product_ties(o.document) AS t
    UNION ALL
    -- unknown_transaction_type: no transaction has it; the type it was
    -- probably meant to be is suggested (the same rule)
    SELECT r.offer_key, r.path, 'unknown_transaction_type',
           format('transaction_type %s matches no transaction', to_json(r.transaction_type))
           || COALESCE('; did you mean '
                       || to_json(incentives_internal.suggested_key(r.transaction_type, c.types))::text
                       || '?', '')
      FROM refs AS r, candidates AS c
     WHERE r.kind = 'transaction_type' AND r.transaction_type IS NOT NULL
       AND NOT EXISTS (SELECT FROM known_types AS k WHERE k.transaction_type = r.transaction_type)
    UNION ALL
    -- empty_period: ended (before today), transactions dated after its end
    -- exist, and no transaction of any SKU the offer reads is dated in it
    SELECT r.offer_key, r.path, 'empty_period',
           format('period %s (%s to %s) has ended and no transaction of the offer''s SKUs is dated in it, while transactions dated after it exist (the latest on %s)',
                  to_json(r.period_key), to_char(r.start_date, 'YYYY-MM-DD'),
                  to_char(r.end_date, 'YYYY-MM-DD'),
                  (SELECT to_char(max(p.transaction_date), 'YYYY-MM-DD') FROM profile AS p))
      FROM refs AS r
     WHERE r.kind = 'period' AND r.end_date < current_date
       AND EXISTS (SELECT FROM profile AS p WHERE p.transaction_date > r.end_date)
       AND NOT EXISTS (SELECT FROM profile AS p
                        WHERE p.transaction_date BETWEEN r.start_date AND r.end_date
                          AND p.sku_key IN (SELECT s.sku_key FROM refs AS s
                                             WHERE s.offer_key = r.offer_key AND s.kind = 'sku'))
    UNION ALL
    -- period_outside_book: a period outside the dates of every other offer,
    -- with no transaction of the offer's SKUs in it (the rule is the
    -- validation trigger's too)
    SELECT b.offer_key, b.path, 'period_outside_book', b.message
      FROM incentives_internal.periods_outside_book($1) AS b
    UNION ALL
    -- unknown_unit: a stacked conversion's "from" that nothing connects
    -- with the SKU's unit (a SKU of incentives.skus), or that nothing names
    -- (a SKU without a row there)
    SELECT r.offer_key, regexp_replace(r.path, 'sku_key$', 'from'), 'unknown_unit',
           CASE WHEN s.uom_key IS NOT NULL THEN
               format('conversion unit %s of sku %s has no conversion to or from the sku''s unit %s in incentives.uom_conversions',
                      to_json(r.from_uom), to_json(r.sku_key), to_json(s.uom_key))
           ELSE
               format('conversion unit %s of sku %s is named by no row of incentives.skus or incentives.uom_conversions and no transaction',
                      to_json(r.from_uom), to_json(r.sku_key))
           END
      FROM refs AS r
      LEFT JOIN incentives.skus AS s ON s.sku_key = r.sku_key
     WHERE r.kind = 'sku' AND r.from_uom IS NOT NULL
       AND CASE WHEN s.uom_key IS NOT NULL THEN
               r.from_uom <> s.uom_key
               AND NOT EXISTS (SELECT FROM incentives.uom_conversions AS c
                                WHERE (c.from_uom_key, c.to_uom_key) IN ((r.from_uom, s.uom_key),
                                                                         (s.uom_key, r.from_uom)))
           ELSE
               NOT EXISTS (SELECT FROM incentives.skus AS k WHERE k.uom_key = r.from_uom)
               AND NOT EXISTS (SELECT FROM incentives.uom_conversions AS c
                                WHERE r.from_uom IN (c.from_uom_key, c.to_uom_key))
               AND NOT EXISTS (SELECT FROM profile AS p WHERE p.uom_key = r.from_uom)
           END
    UNION ALL
    -- sku_without_unit: paid per unit, no row in incentives.skus, and its
    -- transactions come in more than one unit
    SELECT r.offer_key, r.path, 'sku_without_unit',
           format('sku %s is paid in dollars per unit but has no row in incentives.skus, and its transactions come in %s units (%s): each is paid per unit of its own',
                  to_json(r.sku_key), u.n, u.units)
      FROM refs AS r
     CROSS JOIN LATERAL (SELECT count(DISTINCT p.uom_key) AS n,
                                string_agg(DISTINCT p.uom_key, ', ' ORDER BY p.uom_key) AS units
                           FROM profile AS p
                          WHERE p.sku_key = r.sku_key AND p.uom_key IS NOT NULL) AS u
     WHERE r.kind = 'sku' AND r.per_unit
       AND NOT EXISTS (SELECT FROM incentives.skus AS s WHERE s.sku_key = r.sku_key)
       AND u.n > 1
    UNION ALL
    -- no_enrollments: "enrollment": "required" and no enrollment row
    SELECT p.offer_key, 'enrollment', 'no_enrollments',
           'the offer requires enrollment ("enrollment": "required") but incentives.enrollments has no row for it: no participant earns under it'
      FROM programs AS p
     WHERE p.enrollment = 'required'
       AND NOT EXISTS (SELECT FROM incentives.enrollments AS e WHERE e.offer_key = p.offer_key)
    UNION ALL
    -- no_groups: "aggregation": "group" and no membership row
    SELECT p.offer_key, 'aggregation', 'no_groups',
           'the offer aggregates by group ("aggregation": "group") but incentives.participant_groups has no row: every participant is calculated alone'
      FROM programs AS p
     WHERE p.aggregation = 'group'
       AND NOT EXISTS (SELECT FROM incentives.participant_groups)
    UNION ALL
    -- unknown_group_type: a "group_type" that no row of incentives.groups
    -- has (docs/reference.md, Participant hierarchies); the type it was
    -- probably meant to be is suggested (the same rule)
    SELECT o.offer_key, 'group_type', 'unknown_group_type',
           format('group_type %s is the type of no group in incentives.groups: every transaction of the offer is calculated under its own participant',
                  to_json(o.document ->> 'group_type'))
           || COALESCE('; did you mean '
                       || to_json(incentives_internal.suggested_key(
                              o.document ->> 'group_type',
                              ARRAY(SELECT DISTINCT g.group_type FROM incentives.groups AS g
                                     ORDER BY 1)))::text
                       || '?', '')
      FROM incentives.offers AS o
     WHERE jsonb_typeof(o.document -> 'group_type') = 'string'
       AND NOT EXISTS (SELECT FROM incentives.groups AS g
                        WHERE g.group_type = o.document ->> 'group_type')
    UNION ALL
    -- mixed_currencies: an offer without a currency whose transactions (of
    -- its SKUs, types and periods) carry more than one currency: their
    -- amounts are added as they are (docs/reference.md, Currencies)
    SELECT m.offer_key, NULL, 'mixed_currencies',
           format('the offer has no "currency" but its transactions carry %s currencies (%s): their amounts are added as they are; give it a "currency" (and incentives.exchange_rates the rates) or split it by currency',
                  count(*), string_agg(m.currency || ': ' || m.n || CASE m.n WHEN 1 THEN ' transaction' ELSE ' transactions' END,
                                       ', ' ORDER BY m.currency COLLATE "C"))
      FROM (SELECT r.offer_key, c.currency, sum(c.n) AS n
              FROM (SELECT DISTINCT q.offer_key, q.sku_key, q.transaction_type, q.start_date, q.end_date
                      FROM refs AS q
                     WHERE q.kind = 'sku' AND q.sku_key IS NOT NULL AND q.role <> 'price') AS r
              JOIN incentives.offers AS o ON o.offer_key = r.offer_key
              JOIN incentives_internal.transaction_currencies($1) AS c
                ON c.sku_key = r.sku_key
               AND (r.transaction_type IS NULL OR c.transaction_type = r.transaction_type)
               AND (r.start_date IS NULL OR c.transaction_date >= r.start_date)
               AND (r.end_date IS NULL OR c.transaction_date <= r.end_date)
             WHERE o.document ->> 'currency' IS NULL
             GROUP BY r.offer_key, c.currency) AS m
     GROUP BY m.offer_key
    HAVING count(*) > 1
    UNION ALL
    -- closed_offer_changed: a closed offer whose earnings moved since the
    -- statement that closed it (incentives.closed_offer_changes, the
    -- participants the caller sees; docs/lifecycle.md, Why a line moved,
    -- holdbacks, minimums and closing a season)
    SELECT c.offer_key, NULL, 'closed_offer_changed',
           format('offer %s was closed by statement %s, but the earnings of %s differ from their final lines by %s in total (incentives.closed_offer_changes); no statement settles that until it is reopened: SELECT incentives.reopen_offer(%L, reason)',
                  to_json(c.offer_key), c.final_statement_id,
                  CASE c.participants WHEN 1 THEN '1 participant' ELSE c.participants || ' participants' END,
                  c.total_change::text || COALESCE(' ' || (SELECT o.document ->> 'currency' FROM incentives.offers AS o
                                                            WHERE o.offer_key = c.offer_key), ''),
                  c.offer_key)
      FROM incentives_internal.closed_offer_change_totals() AS c
    UNION ALL
    -- offer_key_format: empty, or leading or trailing white space, or a
    -- control character (what a write refuses since 0.4)
    SELECT o.offer_key, 'offer_key', 'offer_key_format',
           format('offer_key %s %s; it would be refused if written today', to_json(o.offer_key),
                  CASE WHEN o.offer_key = '' THEN 'is empty'
                       WHEN o.offer_key ~ '[\x01-\x1f\x7f]' THEN 'contains a control character'
                       ELSE 'has leading or trailing white space' END)
      FROM incentives.offers AS o
     WHERE o.offer_key = '' OR o.offer_key ~ '^[[:space:]]|[[:space:]]$|[\x01-\x1f\x7f]'
    UNION ALL
    -- offer_key_case: equal to another offer's key but for letter case
    SELECT o.offer_key, 'offer_key', 'offer_key_case',
           format('offer_key %s differs from the offer_key %s only by letter case: each pays on its own; it would be refused if written today',
                  to_json(o.offer_key), to_json(x.offer_key))
      FROM incentives.offers AS o
      JOIN incentives.offers AS x
        ON lower(x.offer_key) = lower(o.offer_key) AND x.offer_key <> o.offer_key
    UNION ALL
    -- enrollment_without_offer: enrollment rows of an offer_key no offer
    -- has; the offer it was probably meant to be is suggested (the same rule)
    SELECT e.offer_key, NULL, 'enrollment_without_offer',
           format('incentives.enrollments has %s for offer %s, which does not exist',
                  CASE count(*) WHEN 1 THEN '1 row' ELSE count(*) || ' rows' END, to_json(e.offer_key))
           || COALESCE('; did you mean '
                       || to_json(incentives_internal.suggested_key(e.offer_key, c.offers))::text
                       || '?', '')
      FROM incentives.enrollments AS e, candidates AS c
     WHERE NOT EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = e.offer_key)
     GROUP BY e.offer_key, c.offers)
    SELECT w.offer_key, w.path, w.code, w.message
      FROM w
     ORDER BY w.offer_key COLLATE "C", w.path COLLATE "C" NULLS FIRST, w.code COLLATE "C",
              w.message COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.offer_warnings(regclass) IS
  'What in the stored offers is legal but likely wrong, computed now against the data as it is (transactions from any relation with the transaction columns; row-level security applies): one row per finding with the offer, the JSON path, a code and a sentence naming the value.  Codes: unknown_field and implausible_rate (the document alone, as the engine reads it); unknown_sku (no row of incentives.skus and no transaction has the SKU); unknown_product (a product key incentives.products does not have); empty_product (a listed product no SKU is in on any day of the offer''s span); ambiguous_product_rate (a SKU in two products of one standard entry''s rates at the same nearest distance: the one listed first applies); unknown_transaction_type (no transaction has it); empty_period (ended before today, transactions dated after its end exist, none of the offer''s SKUs dated in it); period_outside_book (a period that overlaps the dates of no other offer, from its earliest period start to its latest end, in a book with others, and in which no transaction of the offer''s SKUs is dated: judged against the book and the data, never the clock; also raised as a WARNING when the offer is stored); unknown_unit (a stacked conversion''s "from" with no conversion either way to the SKU''s unit in incentives.skus, or, for a SKU without a row there, named by no row of incentives.skus, incentives.uom_conversions or the transactions); sku_without_unit (dollars per unit on a SKU without a row in incentives.skus whose transactions come in more than one unit); no_enrollments ("enrollment": "required", no enrollment row); no_groups ("aggregation": "group", no membership row); mixed_currencies (an offer without a "currency" whose transactions carry more than one currency); closed_offer_changed (a closed offer whose earnings in incentives.earnings differ from its final lines: incentives.closed_offer_changes, with the participants and the total change, and the reopen_offer to settle it; nothing when the caller may not read the statement lines, the earnings or the closings); unknown_group_type (a "group_type" no row of incentives.groups has, with the type it was probably meant to be); and stored keys a write now refuses: offer_key_format (empty, surrounding white space, a control character), offer_key_case (equal to another offer''s but for case) and enrollment_without_offer (enrollment rows of a missing offer).  An unknown SKU, product, transaction type or enrollment offer key comes with the known one it was probably meant to be, by the rule of every suggestion (incentives_internal.suggested_key: the same but for case, separators, look-alike digits or a plural s; an abbreviation; within 1 or 2 edits)';

CREATE OR REPLACE VIEW incentives.offer_warnings WITH (security_invoker = true) AS
SELECT w.offer_key, w.path, w.code, w.message
  FROM incentives.offer_warnings() AS w;
COMMENT ON VIEW incentives.offer_warnings IS
  'incentives.offer_warnings() over incentives.transactions: what in the stored offers is legal but likely wrong, computed on read; a correct program book has no row';
COMMENT ON COLUMN incentives.offer_warnings.offer_key IS 'The offer (for enrollment_without_offer: the enrollments'' offer_key, which names no offer)';
COMMENT ON COLUMN incentives.offer_warnings.path IS 'The JSON path in the offer document of what the warning is about (periods[0], incentives[1].rates[0].sku_key, ...); NULL when it is about no field of the document';
COMMENT ON COLUMN incentives.offer_warnings.code IS 'unknown_sku, unknown_product, empty_product, ambiguous_product_rate, unknown_transaction_type, empty_period, period_outside_book, implausible_rate, unknown_unit, sku_without_unit, no_enrollments, no_groups, mixed_currencies, closed_offer_changed, unknown_group_type, unknown_field, offer_key_format, offer_key_case or enrollment_without_offer';
COMMENT ON COLUMN incentives.offer_warnings.message IS 'A sentence naming the value, with a suggestion where one fits';

------------------------------------------------------------------------
-- program_skus
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.program_skus(
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.program_sku_row
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH refs AS MATERIALIZED (
        SELECT r.offer_key, r.sku_key, r.role, r.transaction_type, r.start_date, r.end_date,
               r.product_key
          FROM incentives_internal.offer_references_all() AS r
         WHERE r.kind = 'sku' AND r.sku_key IS NOT NULL),
    profile AS MATERIALIZED (
        SELECT * FROM incentives_internal.transaction_profile($1)),
    keys AS (
        SELECT DISTINCT r.offer_key, r.sku_key, r.role, r.product_key FROM refs AS r)
    SELECT k.offer_key, k.sku_key, k.role,
           COALESCE((SELECT sum(p.n)
                       FROM profile AS p
                      WHERE p.sku_key = k.sku_key
                        AND EXISTS (SELECT FROM refs AS r
                                     WHERE r.offer_key = k.offer_key AND r.sku_key = k.sku_key
                                       AND r.role = k.role
                                       AND r.product_key IS NOT DISTINCT FROM k.product_key
                                       AND (r.transaction_type IS NULL
                                            OR r.transaction_type = p.transaction_type)
                                       AND (r.start_date IS NULL OR p.transaction_date >= r.start_date)
                                       AND (r.end_date IS NULL OR p.transaction_date <= r.end_date))),
                    0)::bigint,
           k.product_key
      FROM keys AS k
     ORDER BY k.offer_key COLLATE "C", k.role COLLATE "C", k.sku_key COLLATE "C",
              k.product_key COLLATE "C" NULLS FIRST
$function$;
COMMENT ON FUNCTION incentives.program_skus(regclass) IS
  'Every SKU each stored offer reads, with its role (earning, threshold, requirement, set:<sku_set key>, price or conversion) and the number of transactions of the relation (row-level security applies) that match it: its sku_key and, where the offer gives them for that role, the transaction_type and the period''s dates (a price matches every transaction of the SKU); a SKU read through a listed product (docs/reference.md, Products) has that product as product_key and matches on the days it is in it';

CREATE OR REPLACE VIEW incentives.program_skus WITH (security_invoker = true) AS
SELECT s.offer_key, s.sku_key, s.role, s.transactions, s.product_key
  FROM incentives.program_skus() AS s;
COMMENT ON VIEW incentives.program_skus IS
  'incentives.program_skus() over incentives.transactions: every SKU each offer reads, its role and how many transactions match it';
COMMENT ON COLUMN incentives.program_skus.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_skus.sku_key IS 'A SKU the offer reads';
COMMENT ON COLUMN incentives.program_skus.role IS 'What the offer reads it for: earning, threshold, requirement, set:<sku_set key>, price or conversion';
COMMENT ON COLUMN incentives.program_skus.product_key IS 'The listed product the offer reads the SKU through (NULL: the SKU is listed itself)';
COMMENT ON COLUMN incentives.program_skus.transactions IS 'Transactions that match it in that role (sku_key, and the transaction_type and period the offer gives for it); 0 for a SKU no transaction matches';

------------------------------------------------------------------------
-- transaction_warnings
------------------------------------------------------------------------

-- What a calculation of every offer needs of the transactions of each SKU
-- an offer reads: one row per SKU, the places it is read at as arrays (the
-- engine refuses a transaction only where it computes a figure of it:
-- src/core/calc/calc.c).
CREATE OR REPLACE FUNCTION incentives_internal.transaction_needs()
RETURNS TABLE (sku_key text, observed boolean, sku_uom_key text, transaction_types text[],
               start_dates date[], end_dates date[], need_quantity boolean[],
               need_amount boolean[], need_sku_unit boolean[], from_uoms text[])
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH base AS (
        SELECT o.offer_key, r.sku_key, r.role, r.transaction_type, r.start_date, r.end_date,
               r.from_uom, s.threshold_type, s.requirements, s.baseline
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_summary(o.document) AS s
         CROSS JOIN LATERAL incentives_internal.offer_references(o.document) AS r
         WHERE r.kind = 'sku' AND r.sku_key IS NOT NULL),
    -- the SKUs of stacked sets that pay (a SKU at rate 0 only anchors
    -- coverage: no row of it is shown)
    paying AS (
        SELECT o.offer_key, q.sku_set_key, q.sku_key
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_rates(o.document) AS q
         WHERE o.document ->> 'strategy_key' = 'stacked' AND q.rate_value <> 0),
    refs AS (
        SELECT b.sku_key, b.role, b.transaction_type, d.start_date, d.end_date, b.from_uom,
               -- what the role computes of a matching transaction: an
               -- earning row shows quantity (in the SKU's unit) and amount;
               -- a set's coverage is the quantity in the conversion's unit,
               -- and a paying SKU's rows show both; a threshold or
               -- requirement sums amounts or quantities
               CASE WHEN b.role = 'earning' OR b.role LIKE 'set:%' OR b.role = 'conversion' THEN true
                    WHEN b.role = 'threshold' THEN b.threshold_type LIKE '%quantity'
                    WHEN b.role = 'requirement' THEN
                        EXISTS (SELECT FROM jsonb_array_elements(b.requirements) AS q
                                 WHERE q ->> 'type' LIKE '%quantity')
                    ELSE false END AS need_quantity,
               CASE WHEN b.role = 'earning' THEN true
                    WHEN b.role LIKE 'set:%' THEN p.sku_key IS NOT NULL
                    WHEN b.role = 'threshold' THEN b.threshold_type LIKE '%amount'
                    WHEN b.role = 'requirement' THEN
                        EXISTS (SELECT FROM jsonb_array_elements(b.requirements) AS q
                                 WHERE q ->> 'type' LIKE '%amount')
                    ELSE false END AS need_amount,
               CASE WHEN b.role = 'earning' THEN true
                    WHEN b.role LIKE 'set:%' THEN p.sku_key IS NOT NULL
                    WHEN b.role = 'threshold' THEN b.threshold_type LIKE '%quantity'
                    WHEN b.role = 'requirement' THEN
                        EXISTS (SELECT FROM jsonb_array_elements(b.requirements) AS q
                                 WHERE q ->> 'type' LIKE '%quantity')
                    ELSE false END AS need_sku_unit
          FROM base AS b
          LEFT JOIN paying AS p
            ON b.role LIKE 'set:%' AND p.offer_key = b.offer_key
           AND p.sku_set_key = substr(b.role, 5) AND p.sku_key = b.sku_key
         -- the item's period, and the baseline's dates of a growth
         -- threshold or requirement (the same filters, summed over them)
         CROSS JOIN LATERAL (
              SELECT b.start_date, b.end_date
              UNION ALL
              SELECT (b.baseline ->> 'start_date')::date, (b.baseline ->> 'end_date')::date
               WHERE b.role = 'threshold' AND b.baseline ? 'start_date'
              UNION ALL
              SELECT (q -> 'baseline' ->> 'start_date')::date, (q -> 'baseline' ->> 'end_date')::date
                FROM jsonb_array_elements(CASE WHEN b.role = 'requirement' THEN b.requirements END) AS q
               WHERE q -> 'baseline' ? 'start_date') AS d)
    SELECT r.sku_key,
           bool_or(r.role <> 'price'),
           (SELECT k.uom_key FROM incentives.skus AS k WHERE k.sku_key = r.sku_key),
           array_agg(r.transaction_type) FILTER (WHERE r.role <> 'price'),
           array_agg(r.start_date) FILTER (WHERE r.role <> 'price'),
           array_agg(r.end_date) FILTER (WHERE r.role <> 'price'),
           array_agg(r.need_quantity) FILTER (WHERE r.role <> 'price'),
           array_agg(r.need_amount) FILTER (WHERE r.role <> 'price'),
           array_agg(r.need_sku_unit) FILTER (WHERE r.role <> 'price'),
           array_agg(r.from_uom) FILTER (WHERE r.role <> 'price')
      FROM refs AS r
     GROUP BY r.sku_key
$function$;
COMMENT ON FUNCTION incentives_internal.transaction_needs() IS
  'transaction_warnings helper: per SKU the stored offers read, whether a calculation matches its transactions (any role but price), the SKU''s unit in incentives.skus, and per place it is read (transaction type, period dates): whether a matching transaction''s quantity, amount and quantity in the SKU''s unit are computed, and the stacked conversion''s unit';

CREATE OR REPLACE FUNCTION incentives.transaction_warnings(
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.transaction_warning_row
LANGUAGE plpgsql
STABLE PARALLEL SAFE
ROWS 10
SET search_path = pg_catalog, pg_temp
AS $function$
-- The rules are the calculation's (src/pg/read/txn_source.c, src/core/calc/
-- calc.c): a row of a SKU no offer reads is never read (but for a NULL
-- sku_key); a NULL transaction_id, participant_key or sku_key, a quantity
-- or amount that is not a finite number, and a repeated transaction_id
-- (unless a unique index on transaction_id alone rules it out) fail at
-- once; a NULL transaction_type or transaction_date fails where the row is
-- matched against an offer's filters; a NULL quantity, uom_key or amount,
-- and a unit with no conversion to the SKU's unit or a stacked
-- conversion's unit, fail where a figure of a matching row needs them.
--
-- The optional columns (a relation without one reads NULL there, as the
-- calculation reads it: src/pg/read/txn_relation.c) give four codes more:
-- no_grower, no_exchange_rate, return_outside_period and unknown_original
-- (docs/reference.md, Transaction warnings).  A return (a negative
-- quantity, or a zero quantity and a negative amount) whose
-- original_transaction_id names a transaction of the same participant and
-- SKU dated on or before it is matched: its matching date is the
-- original's date, which decides which period and exchange rate apply.
DECLARE
    v_relation regclass := COALESCE(transaction_warnings.transactions, 'incentives.transactions');
    v_unique   boolean := incentives_internal.transactions_relation_check(v_relation);
    v_column   text[];
BEGIN
    v_column := ARRAY(
        SELECT CASE WHEN EXISTS (SELECT FROM pg_attribute AS a
                                  WHERE a.attrelid = v_relation AND a.attname = c.name
                                    AND a.attnum > 0 AND NOT a.attisdropped)
                    THEN format('t.%I::pg_catalog.text', c.name) ELSE 'NULL::pg_catalog.text' END
          FROM unnest(ARRAY['grower_key', 'currency', 'original_transaction_id'])
               WITH ORDINALITY AS c(name, i)
         ORDER BY c.i);
    RETURN QUERY EXECUTE format($query$
        WITH needs AS MATERIALIZED (SELECT * FROM incentives_internal.transaction_needs()),
        rows AS (
            SELECT t.transaction_id::pg_catalog.text AS transaction_id,
                   t.participant_key::pg_catalog.text AS participant_key,
                   t.transaction_type::pg_catalog.text AS transaction_type,
                   t.transaction_date AS transaction_date,
                   t.sku_key::pg_catalog.text AS sku_key,
                   t.quantity::pg_catalog.numeric AS quantity,
                   t.uom_key::pg_catalog.text AS uom_key,
                   t.amount::pg_catalog.numeric AS amount,
                   %3$s AS grower_key,
                   %4$s AS currency,
                   %5$s AS original_transaction_id
              FROM %1$s AS t),
        -- per SKU, type and date of the rows (one read of the relation,
        -- grouped): what a matching row's figures need there, and the
        -- units its quantity is converted to
        places AS MATERIALIZED (
            SELECT c.sku_key, c.transaction_type, c.transaction_date,
                   m.need_quantity, m.need_amount, m.targets
              FROM (SELECT DISTINCT t.sku_key::pg_catalog.text AS sku_key,
                           t.transaction_type::pg_catalog.text AS transaction_type,
                           t.transaction_date AS transaction_date
                      FROM %1$s AS t
                     WHERE t.transaction_type IS NOT NULL AND t.transaction_date IS NOT NULL
                       AND t.sku_key::pg_catalog.text IN (SELECT n.sku_key FROM needs AS n)) AS c
              JOIN needs AS n ON n.sku_key = c.sku_key
             CROSS JOIN LATERAL (
                  SELECT bool_or(u.q) AS need_quantity, bool_or(u.a) AS need_amount,
                         array_remove(array_agg(DISTINCT u.target), NULL) AS targets
                    FROM (SELECT x.q, x.a, t.target
                            FROM unnest(n.transaction_types, n.start_dates, n.end_dates,
                                        n.need_quantity, n.need_amount, n.need_sku_unit, n.from_uoms)
                                 AS x(transaction_type, start_date, end_date, q, a, s, from_uom)
                           CROSS JOIN LATERAL (VALUES (CASE WHEN x.s THEN n.sku_uom_key END),
                                                      (CASE WHEN x.q THEN x.from_uom END)) AS t(target)
                           WHERE (x.transaction_type IS NULL OR x.transaction_type = c.transaction_type)
                             AND (x.start_date IS NULL OR c.transaction_date >= x.start_date)
                             AND (x.end_date IS NULL OR c.transaction_date <= x.end_date)) AS u
              ) AS m),
        -- every row the calculation reads (a row of a SKU no offer reads is
        -- skipped, but for a NULL sku_key), with what its figures need
        read AS NOT MATERIALIZED (
            SELECT r.*, n.observed, p.need_quantity, p.need_amount, p.targets
              FROM rows AS r
              LEFT JOIN needs AS n ON n.sku_key = r.sku_key
              LEFT JOIN places AS p
                ON p.sku_key = r.sku_key AND p.transaction_type = r.transaction_type
               AND p.transaction_date = r.transaction_date
             WHERE r.sku_key IS NULL OR n.sku_key IS NOT NULL),
        -- the rows that may be refused, named for the messages: only they
        -- are kept while the problems are listed
        named AS MATERIALIZED (
            SELECT r.*,
                   CASE WHEN r.transaction_id IS NULL
                        THEN ' of a transaction of participant '
                             || COALESCE(to_json(r.participant_key)::text, '(NULL)')
                             || ' (sku ' || COALESCE(to_json(r.sku_key)::text, '(NULL)') || ')'
                        ELSE ' of transaction ' || to_json(r.transaction_id)::text
                             || ' of participant ' || COALESCE(to_json(r.participant_key)::text, '(NULL)')
                   END AS whose
              FROM read AS r
             WHERE r.transaction_id IS NULL OR r.participant_key IS NULL OR r.sku_key IS NULL
                OR (r.observed AND (r.transaction_type IS NULL OR r.transaction_date IS NULL))
                OR (r.need_quantity AND (r.quantity IS NULL OR r.uom_key IS NULL))
                OR (r.need_amount AND r.amount IS NULL)
                OR r.quantity::pg_catalog.text IN ('NaN', 'Infinity', '-Infinity')
                OR r.amount::pg_catalog.text IN ('NaN', 'Infinity', '-Infinity')
                OR r.uom_key <> ANY (r.targets))
        ,
        -- the rows the offers read that the optional columns concern, with
        -- their matching date: a matched return's is its original's
        dated AS MATERIALIZED (
            SELECT r.*,
                   COALESCE(r.quantity < 0 OR (r.quantity = 0 AND r.amount < 0), false) AS is_return,
                   m.original_date,
                   COALESCE(m.original_date, r.transaction_date) AS matching_date
              FROM read AS r
             CROSS JOIN LATERAL (
                  SELECT CASE WHEN r.original_transaction_id IS NOT NULL
                               AND (r.quantity < 0 OR (r.quantity = 0 AND r.amount < 0))
                              THEN (SELECT min(o.transaction_date) FROM rows AS o
                                     WHERE o.transaction_id = r.original_transaction_id
                                       AND o.participant_key = r.participant_key
                                       AND o.sku_key = r.sku_key
                                       AND o.transaction_date <= r.transaction_date) END
                         AS original_date) AS m
             WHERE r.sku_key IS NOT NULL
               AND (r.grower_key IS NULL OR r.currency IS NOT NULL OR r.original_transaction_id IS NOT NULL
                    OR r.quantity < 0 OR (r.quantity = 0 AND r.amount < 0))),
        -- per offer, what it reads (SKUs in their roles, with the type and
        -- period, and its periods), its currency and grower rules
        offer_reads AS MATERIALIZED (
            SELECT f.offer_key, f.kind, f.role, f.sku_key, f.transaction_type, f.start_date,
                   f.end_date, o.document ->> 'currency' AS currency,
                   COALESCE(o.document -> 'incentive' ->> 'match' = 'grower', false) AS by_grower,
                   (SELECT q ->> 'key' FROM jsonb_array_elements(
                                               CASE WHEN jsonb_typeof(o.document -> 'requirements') = 'array'
                                                    THEN o.document -> 'requirements' END)
                                            WITH ORDINALITY AS e(q, i)
                     WHERE q ->> 'scope' = 'grower' ORDER BY e.i LIMIT 1) AS grower_requirement
              FROM incentives_internal.offer_references_all() AS f
              JOIN incentives.offers AS o ON o.offer_key = f.offer_key
             WHERE (f.kind = 'sku' AND f.sku_key IS NOT NULL AND f.role <> 'price')
                OR f.kind = 'period'),
        offer_periods AS MATERIALIZED (
            SELECT o.offer_key,
                   string_agg(DISTINCT to_char(o.start_date, 'YYYY-MM-DD') || ' to '
                              || to_char(o.end_date, 'YYYY-MM-DD'), ', ') AS periods
              FROM offer_reads AS o
             WHERE o.kind = 'period'
             GROUP BY o.offer_key)
        SELECT w.participant_key, w.transaction_id, w.code, w.message FROM (
        SELECT r.participant_key, r.transaction_id, 'null_column'::text AS code,
               'column ' || to_json(c.name)::text || r.whose || ' is NULL'
               || CASE WHEN c.name IN ('transaction_id', 'participant_key', 'sku_key')
                       THEN ': the calculation cannot place it' ELSE '' END AS message
          FROM named AS r
         CROSS JOIN LATERAL (VALUES
                (1, 'transaction_id', r.transaction_id IS NULL),
                (2, 'participant_key', r.participant_key IS NULL),
                (3, 'sku_key', r.sku_key IS NULL),
                (4, 'transaction_type', r.observed AND r.transaction_type IS NULL),
                (5, 'transaction_date', r.observed AND r.transaction_date IS NULL),
                (6, 'quantity', r.need_quantity AND r.quantity IS NULL),
                (7, 'uom_key', r.need_quantity AND r.uom_key IS NULL),
                (8, 'amount', r.need_amount AND r.amount IS NULL)) AS c(i, name, bad)
         WHERE c.bad
        UNION ALL
        SELECT r.participant_key, r.transaction_id, 'invalid_number',
               c.name || ' ' || c.value::text || r.whose || ' is not a finite number'
          FROM named AS r
         CROSS JOIN LATERAL (VALUES ('quantity', r.quantity), ('amount', r.amount)) AS c(name, value)
         WHERE r.sku_key IS NOT NULL AND c.value::text IN ('NaN', 'Infinity', '-Infinity')
        UNION ALL
        SELECT r.participant_key, r.transaction_id, 'no_unit_conversion',
               'no unit conversion from ' || to_json(r.uom_key)::text || ' to ' || to_json(u.target)::text
               || ' for transaction ' || COALESCE(to_json(r.transaction_id)::text, '(NULL)')
               || ' (sku ' || to_json(r.sku_key)::text || ')'
          FROM named AS r
         CROSS JOIN LATERAL unnest(r.targets) AS u(target)
         WHERE r.uom_key IS NOT NULL AND r.quantity IS NOT NULL AND r.uom_key <> u.target
           AND NOT EXISTS (SELECT FROM incentives.uom_conversions AS c
                            WHERE (c.from_uom_key = r.uom_key AND c.to_uom_key = u.target)
                               OR (c.from_uom_key = u.target AND c.to_uom_key = r.uom_key))
        UNION ALL
        SELECT r.participant_key, r.transaction_id, 'duplicate_transaction',
               'transaction_id ' || to_json(d.transaction_id)::text || ' appears '
               || d.n || ' times among the transactions the offers read (participants '
               || d.participants || '): a calculation refuses a repeated transaction_id'
          FROM read AS r
          JOIN (SELECT r.transaction_id, count(*) AS n,
                       string_agg(COALESCE(to_json(r.participant_key)::text, '(NULL)'), ', '
                                  ORDER BY r.participant_key COLLATE "C") AS participants
                  FROM read AS r
                 WHERE NOT %2$L AND r.transaction_id IS NOT NULL AND r.sku_key IS NOT NULL
                 GROUP BY r.transaction_id
                HAVING count(*) > 1) AS d
            ON d.transaction_id = r.transaction_id AND r.sku_key IS NOT NULL
         WHERE NOT %2$L
        UNION ALL
        -- no_grower: a transaction of a grower-matched stacked offer's sets,
        -- or read by an offer with a grower-scoped requirement, without a
        -- grower_key: it earns nothing there
        SELECT r.participant_key, r.transaction_id, 'no_grower',
               'transaction ' || to_json(r.transaction_id)::text || ' of participant '
               || to_json(r.participant_key)::text || ' (sku ' || to_json(r.sku_key)::text
               || ') has no grower_key: offer ' || to_json(o.offer_key)::text
               || CASE WHEN o.by_grower
                       THEN ' matches its sets by grower ("match": "grower"), so it takes part in no overlap and earns nothing there'
                       ELSE ' has requirement ' || to_json(o.grower_requirement)::text
                            || ' of scope grower, so its rows there are removed' END
          FROM dated AS r
          JOIN offer_reads AS o
            ON o.sku_key = r.sku_key
           AND (o.transaction_type IS NULL OR o.transaction_type = r.transaction_type)
           AND (o.start_date IS NULL OR r.matching_date >= o.start_date)
           AND (o.end_date IS NULL OR r.matching_date <= o.end_date)
         WHERE r.grower_key IS NULL AND r.transaction_id IS NOT NULL
           AND ((o.by_grower AND o.role LIKE 'set:%%') OR o.grower_requirement IS NOT NULL)
         GROUP BY r.participant_key, r.transaction_id, r.sku_key, o.offer_key, o.by_grower,
                  o.grower_requirement
        UNION ALL
        -- no_exchange_rate: a transaction in another currency than an
        -- offer's that reads it, with no rate of either pair on or before
        -- its matching date
        SELECT r.participant_key, r.transaction_id, 'no_exchange_rate',
               'no exchange rate from ' || to_json(r.currency)::text || ' to '
               || to_json(o.currency)::text || ' on or before '
               || to_char(r.matching_date, 'YYYY-MM-DD')
               || CASE WHEN r.original_date IS NOT NULL THEN ' (the date of its original sale '
                            || to_json(r.original_transaction_id)::text || ')' ELSE '' END
               || ' for transaction ' || to_json(r.transaction_id)::text || ' of participant '
               || to_json(r.participant_key)::text || ' in offer ' || to_json(o.offer_key)::text
               || ': incentives.exchange_rates has no row of either pair by then, and the calculation refuses it'
          FROM dated AS r
          JOIN offer_reads AS o
            ON o.sku_key = r.sku_key
           AND (o.transaction_type IS NULL OR o.transaction_type = r.transaction_type)
           AND (o.start_date IS NULL OR r.matching_date >= o.start_date)
           AND (o.end_date IS NULL OR r.matching_date <= o.end_date)
         WHERE r.currency IS NOT NULL AND o.currency IS NOT NULL AND r.currency <> o.currency
           AND r.matching_date IS NOT NULL
           AND NOT EXISTS (SELECT FROM incentives.exchange_rates AS x
                            WHERE ((x.from_currency = r.currency AND x.to_currency = o.currency)
                                   OR (x.from_currency = o.currency AND x.to_currency = r.currency))
                              AND x.rate_date <= r.matching_date)
         GROUP BY r.participant_key, r.transaction_id, r.currency, r.matching_date, r.original_date,
                  r.original_transaction_id, o.offer_key, o.currency
        UNION ALL
        -- return_outside_period: a return matched to no original sale, of a
        -- SKU an offer earns on, dated outside every period of that offer
        SELECT r.participant_key, r.transaction_id, 'return_outside_period',
               'return ' || to_json(r.transaction_id)::text || ' of participant '
               || to_json(r.participant_key)::text || ' (sku ' || to_json(r.sku_key)::text
               || ', dated ' || to_char(r.transaction_date, 'YYYY-MM-DD')
               || ') lies outside every period of offer ' || to_json(p.offer_key)::text
               || ' (' || p.periods || ') and names no original sale'
               || CASE WHEN r.original_transaction_id IS NOT NULL THEN ' it can be matched to' ELSE '' END
               || ': it claws nothing back there; set original_transaction_id to the sale it returns'
          FROM dated AS r
          JOIN offer_periods AS p ON true
         WHERE r.is_return AND r.original_date IS NULL AND r.transaction_date IS NOT NULL
           AND EXISTS (SELECT FROM offer_reads AS o
                        WHERE o.offer_key = p.offer_key AND o.sku_key = r.sku_key
                          AND (o.role = 'earning' OR o.role LIKE 'set:%%'))
           AND NOT EXISTS (SELECT FROM offer_reads AS o
                            WHERE o.offer_key = p.offer_key AND o.kind = 'period'
                              AND r.transaction_date BETWEEN o.start_date AND o.end_date)
        UNION ALL
        -- unknown_original: an original_transaction_id that names nothing
        -- usable (no transaction of the same participant and SKU dated on or
        -- before it), or set on a row that is not a return
        SELECT r.participant_key, r.transaction_id, 'unknown_original',
               'original_transaction_id ' || to_json(r.original_transaction_id)::text
               || ' of transaction ' || to_json(r.transaction_id)::text || ' of participant '
               || to_json(r.participant_key)::text
               || CASE WHEN NOT r.is_return
                       THEN ' is ignored: the transaction is not a return (quantity '
                            || r.quantity::text || ', amount ' || r.amount::text
                            || '); only a negative quantity, or a zero quantity and a negative amount, is matched to its sale'
                       ELSE ' names no transaction of the same participant and sku '
                            || to_json(r.sku_key)::text || ' dated on or before '
                            || COALESCE(to_char(r.transaction_date, 'YYYY-MM-DD'), '(NULL)')
                            || COALESCE(' (it names ' || (
                                   SELECT string_agg('a transaction of participant '
                                                     || COALESCE(to_json(o.participant_key)::text, '(NULL)')
                                                     || ', sku ' || COALESCE(to_json(o.sku_key)::text, '(NULL)')
                                                     || ', dated '
                                                     || COALESCE(to_char(o.transaction_date, 'YYYY-MM-DD'), '(NULL)'),
                                                     '; ' ORDER BY o.participant_key COLLATE "C",
                                                     o.sku_key COLLATE "C", o.transaction_date)
                                     FROM rows AS o
                                    WHERE o.transaction_id = r.original_transaction_id) || ')', '')
                            || ': the return counts at its own date' END
          FROM dated AS r
         WHERE r.original_transaction_id IS NOT NULL AND r.original_date IS NULL
           AND r.quantity IS NOT NULL AND r.amount IS NOT NULL
        ) AS w
        ORDER BY w.participant_key COLLATE "C", w.transaction_id COLLATE "C", w.code COLLATE "C",
                 w.message COLLATE "C"
        $query$, v_relation, v_unique, v_column[1], v_column[2], v_column[3]);
END
$function$;
COMMENT ON FUNCTION incentives.transaction_warnings(regclass) IS
  'Every transaction of the relation (row-level security applies) that a calculation of every stored offer refuses, all of them, one row per problem: null_column (a NULL transaction_id, participant_key or sku_key; a NULL transaction_type or transaction_date on a SKU an offer matches; a NULL quantity, uom_key or amount where a matching transaction''s figure needs it: an earning row needs all three, a stacked set''s coverage the quantity and unit and a paying SKU''s row all three, a threshold or requirement the amount or the quantity it sums, over its period and a growth baseline''s dates), no_unit_conversion (a matching transaction whose quantity is needed and whose unit has no conversion, either way, to its SKU''s unit in incentives.skus or to a stacked conversion''s unit), invalid_number (a quantity or amount that is NaN or infinite), duplicate_transaction (a transaction_id repeated, unless a unique index on transaction_id alone rules it out), no_exchange_rate (a transaction whose currency is set and differs from the currency of an offer that reads it, with no row of either pair in incentives.exchange_rates on or before its matching date), and what keeps a line from earning as meant: no_grower (a transaction of a grower-matched stacked offer''s sets, or read by an offer with a grower-scoped requirement, without a grower_key), return_outside_period (a return matched to no original sale, of a SKU an offer earns on, dated outside every period of that offer) and unknown_original (an original_transaction_id naming no transaction of the same participant and SKU dated on or before the row, or set on a row that is not a return).  The optional columns grower_key, currency and original_transaction_id read NULL in a relation without them; a matched return''s matching date is its original''s.  Only rows of SKUs some offer reads are checked (the calculation reads no other), but for a NULL sku_key.  A line is listed as soon as an offer''s terms reach it, also while the data keep the calculation from computing its figure (a participant that meets no tier or requirement, a line outside its enrollment windows, a stack whose overlap is 0): the calculation refuses it once that changes';

CREATE OR REPLACE VIEW incentives.transaction_warnings WITH (security_invoker = true) AS
SELECT w.participant_key, w.transaction_id, w.code, w.message
  FROM incentives.transaction_warnings() AS w;
COMMENT ON VIEW incentives.transaction_warnings IS
  'incentives.transaction_warnings() over incentives.transactions: every stored transaction a calculation would refuse, all of them, computed on read';
COMMENT ON COLUMN incentives.transaction_warnings.participant_key IS 'The transaction''s participant (NULL when that is what is missing)';
COMMENT ON COLUMN incentives.transaction_warnings.transaction_id IS 'The transaction (NULL when that is what is missing)';
COMMENT ON COLUMN incentives.transaction_warnings.code IS 'null_column, no_unit_conversion, invalid_number, duplicate_transaction, no_grower, no_exchange_rate, return_outside_period or unknown_original';
COMMENT ON COLUMN incentives.transaction_warnings.message IS 'A sentence naming the transaction, the column or the units';
