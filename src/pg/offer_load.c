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

#include "offer_checks.h"
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

PG_FUNCTION_INFO_V1(incentives_offer_error);

/*
 * incentives_offer_error: offer_error(document jsonb) -> text.  NULL when
 * the document may be stored, else the message storing it would raise
 * (over the offer's stored version, if any: offer_checks.c).
 */
Datum
incentives_offer_error(PG_FUNCTION_ARGS)
{
	char	   *message = pg_offer_write_error(PG_GETARG_JSONB_P(0), NULL, false);

	if (message == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(message));
}

PG_FUNCTION_INFO_V1(incentives_offers_validate);

/*
 * incentives_offers_validate: BEFORE INSERT OR UPDATE row trigger on
 * incentives.offers; raises 22023 with the offer and JSON path of the
 * first fault, so an invalid offer never enters the table, and the
 * document's findings as WARNINGs (offer_checks.c: an UPDATE is checked
 * over the row's old document).
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
		Jsonb	   *stored = NULL;

		if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		{
			bool		old_null;
			Datum		old = heap_getattr(trigdata->tg_trigtuple, attnum, tupdesc, &old_null);

			if (!old_null)
				stored = DatumGetJsonbP(old);
		}
		message = pg_offer_write_error(DatumGetJsonbP(document), stored, true);
		if (message)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg_internal("%s", message)));
	}
	return PointerGetDatum(tuple);
}
