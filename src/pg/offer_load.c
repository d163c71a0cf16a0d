/*
 * offer_load.c
 *    Offer documents in and out of the engine core: the validation
 *    trigger on incentives.offers, incentives.offer_error(), and the
 *    jsonb -> IncOffer step the calculation uses.
 *
 * Every path goes through pg_offer_from_jsonb: the document as JSON text,
 * compiled by the core's one parser (inc_offer_parser_run, the same rules
 * and limits the unit tests and fuzzers use) into palloc'd structs.  The
 * parser holds json-c memory (malloc'd) while it runs; PG_FINALLY releases
 * it even when an error (out of memory in palloc) unwinds through the
 * parse.  No json-c header is included here: offer.h only names its types,
 * so nothing clashes with fmgrprotos.h's json_object().
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "pg_glue.h"

/*
 * pg_offer_from_jsonb_checked: compile an offer document under checks
 * (NULL: a stored document read leniently).  Returns the offer (palloc'd
 * in the current memory context) or NULL with err filled.
 */
IncOffer *
pg_offer_from_jsonb_checked(Jsonb *document, const IncOfferChecks *checks,
							IncOfferError *err)
{
	char	   *text = JsonbToCString(NULL, &document->root, VARSIZE(document));
	IncOfferParser parser;
	IncOffer   *volatile offer = NULL;

	inc_offer_parser_init(&parser);
	PG_TRY();
	{
		offer = inc_offer_parser_check(&parser, text, strlen(text), checks, err);
	}
	PG_FINALLY();
	{
		inc_offer_parser_release(&parser);
	}
	PG_END_TRY();
	pfree(text);
	return offer;
}

/* pg_offer_from_jsonb: a stored document, read leniently. */
IncOffer *
pg_offer_from_jsonb(Jsonb *document, IncOfferError *err)
{
	return pg_offer_from_jsonb_checked(document, NULL, err);
}
