------------------------------------------------------------------------
-- How a new document of an offer differs from the one before it
-- (docs/lifecycle.md, Prospective rate changes): asked of the engine core,
-- which knows where an offer's rate values and annotations are (the
-- offer's settlement counts as an annotation: it changes no figure of the
-- calculation).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_difference(old_document jsonb, new_document jsonb,
                                                                OUT kind text, OUT path text)
RETURNS record
AS 'MODULE_PATHNAME', 'incentives_offer_difference'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.offer_difference(jsonb, jsonb) IS
  'How new_document differs from old_document: kind same, annotations (label, description, name, metadata, settlement only), rates (rate values: standard and stacked rates[].rate, stepped tiers'' value), pool (a fixed_amount pool) or structure (anything else); path: the first field of the strongest kind found (NULL: none)';
