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

#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pg_glue.h"

/*
 * pg_offer_from_jsonb: compile an offer document.  Returns the offer
 * (palloc'd in the current memory context) or NULL with err filled.
 */
IncOffer *
pg_offer_from_jsonb(Jsonb *document, IncOfferError *err)
{
	char	   *text = JsonbToCString(NULL, &document->root, VARSIZE(document));
	IncOfferParser parser;
	IncOffer   *volatile offer = NULL;

	inc_offer_parser_init(&parser);
	PG_TRY();
	{
		offer = inc_offer_parser_run(&parser, text, strlen(text), err);
	}
	PG_FINALLY();
	{
		inc_offer_parser_release(&parser);
	}
	PG_END_TRY();
	pfree(text);
	return offer;
}

/*
 * CheckOffer: the error message for document, or NULL when it is a valid
 * offer.  The compiled offer is thrown away with a scratch context.
 */
static char *
CheckOffer(Jsonb *document)
{
	MemoryContext scratch = AllocSetContextCreate(CurrentMemoryContext,
												  "incentives offer check",
												  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(scratch);
	IncOfferError err;
	IncOffer   *offer = pg_offer_from_jsonb(document, &err);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(scratch);
	return offer ? NULL : pstrdup(err.message);
}

PG_FUNCTION_INFO_V1(incentives_offer_error);

/*
 * incentives_offer_error: offer_error(document jsonb) -> text.  NULL when
 * the document is a valid offer, else the message inserting it would raise.
 */
Datum
incentives_offer_error(PG_FUNCTION_ARGS)
{
	char	   *message = CheckOffer(PG_GETARG_JSONB_P(0));

	if (message == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(message));
}

PG_FUNCTION_INFO_V1(incentives_offers_validate);

/*
 * incentives_offers_validate: BEFORE INSERT OR UPDATE row trigger on
 * incentives.offers; raises 22023 with the offer and JSON path of the
 * first fault, so an invalid offer never enters the table.
 */
Datum
incentives_offers_validate(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuple;
	TupleDesc	tupdesc;
	int			attnum;
	bool		isnull;
	Datum		document;
	char	   *message;

	tuple = pg_row_trigger_tuple(fcinfo, false, "incentives.offers_validate");
	tupdesc = RelationGetDescr(trigdata->tg_relation);
	attnum = SPI_fnumber(tupdesc, "document");
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("relation \"%s\" has no column \"document\"",
						RelationGetRelationName(trigdata->tg_relation))));

	document = heap_getattr(tuple, attnum, tupdesc, &isnull);
	if (!isnull)
	{
		message = CheckOffer(DatumGetJsonbP(document));
		if (message)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg_internal("%s", message)));
	}
	return PointerGetDatum(tuple);
}
