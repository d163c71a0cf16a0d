/*
 * offer_load.c
 *    Offer documents in and out of the engine core: the validation
 *    trigger on incentives.offers, incentives.offer_error(), the
 *    jsonb -> IncOffer step the calculation uses, and how a document
 *    differs from the one before it (offer_difference()).
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

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "core/offer/offer_diff.h"
#include "pg/load/offer_load.h"

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

PG_FUNCTION_INFO_V1(incentives_offer_difference);

/*
 * incentives_internal.offer_difference(old_document jsonb, new_document
 * jsonb) -> (kind text, path text): how the new document of an offer
 * differs from the old one (offer_diff.h; docs/lifecycle.md, Prospective
 * rate changes); path is NULL when there is nothing to point at.
 */
Datum
incentives_offer_difference(PG_FUNCTION_ARGS)
{
	Jsonb	   *old_doc = PG_GETARG_JSONB_P(0);
	Jsonb	   *new_doc = PG_GETARG_JSONB_P(1);
	char	   *old_text = JsonbToCString(NULL, &old_doc->root, VARSIZE(old_doc));
	char	   *new_text = JsonbToCString(NULL, &new_doc->root, VARSIZE(new_doc));
	IncOfferParser old_parser;
	IncOfferParser new_parser;
	IncOfferError err;
	char		path[1024];
	volatile IncOfferDifference kind = INC_DIFF_STRUCTURE;
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "offer_difference must return a row");
	inc_offer_parser_init(&old_parser);
	inc_offer_parser_init(&new_parser);
	PG_TRY();
	{
		kind = inc_offer_difference(&old_parser, &new_parser, old_text, strlen(old_text),
									new_text, strlen(new_text), path, sizeof(path), &err);
	}
	PG_FINALLY();
	{
		inc_offer_parser_release(&old_parser);
		inc_offer_parser_release(&new_parser);
	}
	PG_END_TRY();
	values[0] = CStringGetTextDatum(inc_offer_difference_names[kind]);
	if (path[0] == '\0')
		nulls[1] = true;
	else
		values[1] = CStringGetTextDatum(path);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
