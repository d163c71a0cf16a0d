/*
 * offer_text.c
 *    The entry point of the offer parser: JSON text to a json-c tree (the
 *    one place a json_tokener is made, with the limits every host shares),
 *    then the structure walk of offer_parse.c.
 *
 * The parser object (IncOfferParser, offer.h) holds the json-c memory
 * while the document is compiled, so a host whose allocator can unwind
 * (PostgreSQL) can free it on its cleanup path; a normal return has freed
 * it already.
 */
#include <limits.h>
#include <stdio.h>

#include <json-c/json.h>

#include "offer_internal.h"

/* inc_offer_parser_init: a parser holding nothing. */
void
inc_offer_parser_init(IncOfferParser *parser)
{
	parser->tokener = NULL;
	parser->root = NULL;
}

/* inc_offer_parser_release: free the tokener and the tree, if held. */
void
inc_offer_parser_release(IncOfferParser *parser)
{
	struct json_object *root = parser->root;
	struct json_tokener *tokener = parser->tokener;

	/* forget first: a second release (PG_FINALLY after a return) is a no-op */
	parser->root = NULL;
	parser->tokener = NULL;
	if (root)
		json_object_put(root);
	if (tokener)
		json_tokener_free(tokener);
}

/* OnlyWhitespace: is s[0..len) nothing but JSON whitespace? */
static bool
OnlyWhitespace(const char *s, size_t len)
{
	size_t		i;

	for (i = 0; i < len; i++)
	{
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return false;
	}
	return true;
}

/* DocumentFault: fill err for a document that cannot become a json-c object. */
static IncOffer *
DocumentFault(IncOfferError *err, const char *problem)
{
	snprintf(err->message, sizeof(err->message),
			 "invalid offer (no offer_key): %s", problem);
	return NULL;
}

/*
 * inc_offer_parser_run: parse len bytes of JSON text strictly (RFC 8259),
 * allowing only whitespace after the document and INC_OFFER_MAX_DEPTH
 * levels of nesting, then compile it with inc_offer_from_json.  The offer
 * is inc_alloc memory; NULL with err filled when the document is not a
 * valid offer.  json-c memory is released before returning.
 */
IncOffer *
inc_offer_parser_run(IncOfferParser *parser, const char *json, size_t len,
					 IncOfferError *err)
{
	enum json_tokener_error jerr;
	size_t		end;
	IncOffer   *offer;

	err->message[0] = '\0';
	inc_offer_parser_release(parser);
	if (len >= (size_t) INT_MAX)
		return DocumentFault(err, "document is too large");

	/* json-c's depth counts the document itself as level 1, as we do */
	parser->tokener = json_tokener_new_ex(INC_OFFER_MAX_DEPTH);
	if (parser->tokener == NULL)
		inc_fail(INC_ERR_INTERNAL, "out of memory creating a JSON tokener");
	json_tokener_set_flags(parser->tokener, JSON_TOKENER_STRICT);
	parser->root = json_tokener_parse_ex(parser->tokener, json, (int) len);
	jerr = json_tokener_get_error(parser->tokener);
	end = json_tokener_get_parse_end(parser->tokener);
	if (jerr == json_tokener_continue)
	{
		/*
		 * A top-level scalar ("123", "null") is only complete once a
		 * delimiter follows; whitespace after the document is allowed, so
		 * feed one blank.
		 */
		parser->root = json_tokener_parse_ex(parser->tokener, " ", 1);
		jerr = json_tokener_get_error(parser->tokener);
		end = len;
	}

	if (jerr == json_tokener_error_depth)
	{
		char		problem[128];

		inc_offer_parser_release(parser);
		snprintf(problem, sizeof(problem),
				 "document nests more than %d levels deep", INC_OFFER_MAX_DEPTH);
		return DocumentFault(err, problem);
	}
	if (jerr != json_tokener_success || end > len ||
		!OnlyWhitespace(json + end, len - end))
	{
		inc_offer_parser_release(parser);
		return DocumentFault(err, "document is not valid JSON");
	}
	offer = inc_offer_from_json(parser->root, err);
	inc_offer_parser_release(parser);
	return offer;
}

/*
 * inc_offer_parse: inc_offer_parser_run with a parser of its own (for
 * hosts whose hooks never unwind through it).
 */
IncOffer *
inc_offer_parse(const char *json, size_t len, IncOfferError *err)
{
	IncOfferParser parser;

	inc_offer_parser_init(&parser);
	return inc_offer_parser_run(&parser, json, len, err);
}
