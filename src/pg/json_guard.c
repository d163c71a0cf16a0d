/*
 * json_guard.c
 *    Parses offer text with json-c inside PG_TRY, so a json-c object never
 *    outlives the call even when an error unwinds through it.
 *
 * Kept apart from the other glue files because json-c's json_object type
 * clashes with PostgreSQL's SQL function of the same name in fmgrprotos.h.
 */
#include "postgres.h"

#include <json-c/json.h>

#include "pg_glue.h"

/* json-c nests 32 levels by default; unknown fields may nest deeper. */
#define OFFER_JSON_DEPTH 1000



/*
 * pg_offer_from_text: compile an offer from JSON text (NUL-terminated at
 * text[len]).  Returns the offer
 * (palloc'd in the current memory context) or NULL with err filled.
 */
IncOffer *
pg_offer_from_text(const char *text, size_t len, IncOfferError *err)
{
	struct json_tokener *volatile tok = json_tokener_new_ex(OFFER_JSON_DEPTH);
	struct json_object *volatile root = NULL;
	IncOffer   *volatile offer = NULL;

	if (tok == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	PG_TRY();
	{
		/*
		 * Include the terminating NUL: without it json-c cannot tell that a
		 * top-level number has ended and waits for more input.
		 */
		root = json_tokener_parse_ex(tok, text, (int) len + 1);
		if (root == NULL || json_tokener_get_error(tok) != json_tokener_success)
			snprintf(err->message, sizeof(err->message),
					 "invalid offer (no offer_key): document is not valid JSON");
		else
			offer = inc_offer_from_json(root, err);
	}
	PG_FINALLY();
	{
		if (root)
			json_object_put(root);
		json_tokener_free(tok);
	}
	PG_END_TRY();
	return offer;
}
