------------------------------------------------------------------------
-- Offer validation
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.offer_error(document jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_offer_error'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives.offer_error(jsonb) IS
  'Checks an offer document against every rule; NULL when it is valid, else the message the offers table would raise';

CREATE OR REPLACE FUNCTION incentives_internal.offers_validate()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_offers_validate'
LANGUAGE C;
COMMENT ON FUNCTION incentives_internal.offers_validate() IS
  'Trigger: rejects an invalid offer document with SQLSTATE 22023, naming the offer and the JSON path';

DROP TRIGGER IF EXISTS offers_validate ON incentives.offers;
CREATE TRIGGER offers_validate
    BEFORE INSERT OR UPDATE OF document ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives_internal.offers_validate();
COMMENT ON TRIGGER offers_validate ON incentives.offers IS 'Validates every offer document on insert and update';

