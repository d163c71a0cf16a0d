------------------------------------------------------------------------
-- Offer validation
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.offer_error(document jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_offer_error'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.offer_error(jsonb) IS
  'Checks an offer document against every rule a write does (unknown fields under incentives.unknown_offer_fields, a percent above 100), over the offer''s stored version if any; NULL when it may be stored, else the message the offers table would raise';

CREATE OR REPLACE FUNCTION incentives_internal.offers_validate()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_offers_validate'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.offers_validate() IS
  'Trigger: rejects an invalid offer document with SQLSTATE 22023, naming the offer and the JSON path; raises as WARNINGs what a valid one says that is likely wrong, alone (implausible_rate, unknown_field) or against the other stored offers and incentives.transactions (period_outside_book)';

DROP TRIGGER IF EXISTS offers_validate ON incentives.offers;
CREATE TRIGGER offers_validate
    BEFORE INSERT OR UPDATE OF document ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_validate();
COMMENT ON TRIGGER offers_validate ON incentives.offers IS 'Validates every offer document on insert and update';


------------------------------------------------------------------------
-- What the engine reads of an offer, for the checks of a program book
-- (docs/reference.md, Strict offers, Offer warnings, Checking a program
-- book)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.offer_fields()
RETURNS TABLE (object text, field text)
AS 'MODULE_PATHNAME', 'incentives_offer_fields'
LANGUAGE C IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.offer_fields() IS
  'Every object of an offer document (and of the request of incentives.calculate(jsonb)) with the fields it defines, besides the annotation fields label, description and name (and the offer''s metadata): any other field is refused when a document is written (docs/reference.md, Fields of every object)';

CREATE OR REPLACE FUNCTION incentives_internal.offer_findings(document jsonb)
RETURNS TABLE (path text, code text, message text)
AS 'MODULE_PATHNAME', 'incentives_offer_findings'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.offer_findings(jsonb) IS
  'offer_warnings helper: what an offer document says alone that is legal but likely wrong (unknown_field: a field no object defines, with the field meant; implausible_rate: a percent rate above 25 or below 0.1, or a percent tier more than 4 times the next lower one), each at its JSON path; an invalid document is an error (22023)';

CREATE OR REPLACE FUNCTION incentives_internal.offer_references(document jsonb)
RETURNS TABLE (path text, kind text, role text, sku_key text, transaction_type text,
               period_key text, start_date date, end_date date, from_uom text,
               per_unit boolean, product_key text)
AS 'MODULE_PATHNAME', 'incentives_offer_references'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.offer_references(jsonb) IS
  'program_skus and offer_warnings helper: what an offer reads, read from the compiled offer: each SKU key (kind sku) with its role (earning, threshold, requirement, set:KEY, price, conversion), the transaction type and period of the item holding it, a stacked conversion''s from unit and whether it is paid per unit; each product key (kind product: product_keys, a product_key rate) and each exclusion (kind excluded_sku, excluded_product) with the role of the filter or entry holding it; each transaction_type (kind transaction_type) and each period (kind period), at its JSON path';

CREATE OR REPLACE FUNCTION incentives_internal.offer_product_ties(document jsonb)
RETURNS TABLE (path text, sku_key text, taken text, other text, distance integer,
               start_date date, end_date date)
AS 'MODULE_PATHNAME', 'incentives_offer_product_ties'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.offer_product_ties(jsonb) IS
  'offer_warnings helper (ambiguous_product_rate): where a SKU is in two products listed in one standard entry''s rates at the same nearest distance, on days of the entry''s period: the SKU, the product whose rate applies (listed first), the other, their distance and the days (docs/reference.md, Products)';

-- The one rule of every "did you mean" (docs/reference.md, Suggestions),
-- written in the engine (src/core/util/names.c) beside the fields' advice:
-- unknown_sku, unknown_transaction_type and enrollment_without_offer of
-- offer_warnings, and the enrollments' check of their offer, ask it.
CREATE OR REPLACE FUNCTION incentives_internal.suggested_key(key text, candidates text[])
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_suggested_key'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.suggested_key(text, text[]) IS
  'The candidate a key that matches none was probably meant to be, by the rule of every suggestion: equal but for letter case, - or a space for _, a look-alike digit (0 for O, 1 for I or l) or a plural s; else one the key abbreviates (3 characters or more, or its plural: products for product_keys); else the nearest within 1 edit (keys of up to 4 characters) or 2; of two as good, the nearer with letter case set aside, then as written, then the first; NULL when none fits (docs/reference.md, Suggestions)';

-- A date as the offer parser reads one, for the request of calculate(jsonb).
CREATE OR REPLACE FUNCTION incentives_internal.date_problem(value text)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_date_problem'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.date_problem(text) IS
  'NULL when the text is a date as offer documents write one (YYYY-MM-DD naming a real calendar day, years 0001 to 9999), else the problem as the offer parser words it: must be a date (YYYY-MM-DD), or (for 2026-02-30) "2026-02-30" is not a valid calendar date (February 2026 has 28 days)';

CREATE OR REPLACE FUNCTION incentives_internal.unknown_fields(object jsonb, kind text)
RETURNS TABLE (field text, problem text)
AS 'MODULE_PATHNAME', 'incentives_unknown_fields'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.unknown_fields(jsonb, text) IS
  'calculate(jsonb) helper: each field of a JSON object that an object of kind (an object of incentives.offer_fields()) does not define, with the problem ("is not a field of ...; did you mean ...?")';
