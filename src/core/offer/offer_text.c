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
 *
 * The text is checked here, beside json-c, so that a document means the
 * same whichever json-c the system has: one pass over the text finds
 * every number token and every string, and the text is fed to the
 * tokener in pieces around the places that need it (json-c parses
 * incrementally, so the pieces build the same tree as the whole text).
 *   - A number must follow RFC 8259's grammar ("-01", "1." and "1e" are
 *     not JSON), and a string must not hold a raw control character
 *     (U+0000..U+001F); either is "document is not valid JSON".
 *   - A character beyond ASCII in a string (well-formed UTF-8) is fed as
 *     its \uXXXX escape, which json-c decodes to the same bytes: json-c
 *     0.17 and later refuse every byte above 0x7F in strict mode.  Bytes
 *     that are not well-formed UTF-8 (a database in another encoding) are
 *     fed as they are: json-c 0.16 takes them, later ones refuse them.
 *   - An integer that json-c cannot hold (below INT64_MIN, above
 *     UINT64_MAX) is fed as INT64_MIN or UINT64_MAX, the values some
 *     json-c versions clamp it to while others refuse the document in
 *     strict mode; inc_oj_number_value reports those texts as out of
 *     range, with the offer key and the field's path.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

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

/* DocumentFault: fill err for a document that cannot become a json-c object; false. */
static bool
DocumentFault(IncOfferError *err, const char *problem)
{
	snprintf(err->message, sizeof(err->message),
			 "invalid offer (no offer_key): %s", problem);
	return false;
}

/*
 * Texts fed to the tokener in place of an integer beyond json-c's range:
 * UINT64_MAX for one above it, INT64_MIN for one below.
 */
static const char IntegerAboveRange[] = "18446744073709551615";
static const char IntegerBelowRange[] = "-9223372036854775808";

/* What NextStop found. */
typedef enum TextStop
{
	STOP_END,					/* the end of the text */
	STOP_ABOVE_RANGE,			/* an integer above UINT64_MAX */
	STOP_BELOW_RANGE,			/* an integer below INT64_MIN */
	STOP_NOT_JSON,				/* a malformed number, a control character */
	STOP_UTF8					/* a character beyond ASCII in a string */
} TextStop;

static bool
IsDigit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * DigitsAbove: is the integer written digits[0..n) (no leading zeros)
 * greater than limit, written the same way?
 */
static bool
DigitsAbove(const char *digits, size_t n, const char *limit)
{
	size_t		limit_len = strlen(limit);

	if (n != limit_len)
		return n > limit_len;
	return memcmp(digits, limit, n) > 0;
}

/*
 * ScanNumber: the number token at s[i] (a '-' or a digit) of s[0..len):
 * its end in *end, and STOP_END when it can be fed as written,
 * STOP_ABOVE_RANGE or STOP_BELOW_RANGE for an integer beyond json-c's
 * range, STOP_NOT_JSON when it is not an RFC 8259 number (one that goes on
 * with a character that can only continue a number, as "01" or "1.5.",
 * is not).  A '-' without a digit after it is fed as written: json-c
 * refuses it, or reads "-Infinity" (as it reads "NaN" and "Infinity"), a
 * value inc_oj_number_value refuses.
 */
static TextStop
ScanNumber(const char *s, size_t len, size_t i, size_t *end)
{
	bool		negative = false;
	bool		integer = true;
	size_t		digits;

	if (s[i] == '-')
	{
		negative = true;
		i++;
		if (i >= len || !IsDigit(s[i]))
		{
			/* not a number: json-c's to judge ("-Infinity", as "NaN") */
			*end = i;
			return STOP_END;
		}
	}
	digits = i;
	if (s[i] == '0')
		i++;
	else
	{
		while (i < len && IsDigit(s[i]))
			i++;
	}
	if (i < len && s[i] == '.')
	{
		integer = false;
		if (++i >= len || !IsDigit(s[i]))
			return STOP_NOT_JSON;
		while (i < len && IsDigit(s[i]))
			i++;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E'))
	{
		integer = false;
		if (++i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= len || !IsDigit(s[i]))
			return STOP_NOT_JSON;
		while (i < len && IsDigit(s[i]))
			i++;
	}
	if (i < len && (IsDigit(s[i]) || s[i] == '.' || s[i] == 'e' ||
					s[i] == 'E' || s[i] == '+' || s[i] == '-'))
		return STOP_NOT_JSON;
	*end = i;
	if (integer && negative && DigitsAbove(s + digits, i - digits, IntegerBelowRange + 1))
		return STOP_BELOW_RANGE;
	if (integer && !negative && DigitsAbove(s + digits, i - digits, IntegerAboveRange))
		return STOP_ABOVE_RANGE;
	return STOP_END;
}

/*
 * Utf8Sequence: the length (2 to 4) of the well-formed UTF-8 sequence at
 * s[i] (a byte of 0x80 or more), with its code point in *cp; 0 when the
 * bytes there are not one (overlong, a surrogate, beyond U+10FFFF, cut).
 */
static size_t
Utf8Sequence(const char *s, size_t len, size_t i, unsigned long *cp)
{
	unsigned char b = (unsigned char) s[i];
	size_t		n;
	size_t		k;
	unsigned long c;

	if (b >= 0xC2 && b <= 0xDF)
		n = 2, c = b & 0x1F;
	else if (b >= 0xE0 && b <= 0xEF)
		n = 3, c = b & 0x0F;
	else if (b >= 0xF0 && b <= 0xF4)
		n = 4, c = b & 0x07;
	else
		return 0;
	if (len - i < n)
		return 0;
	for (k = 1; k < n; k++)
	{
		unsigned char cb = (unsigned char) s[i + k];

		if ((cb & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (cb & 0x3F);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
		(c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
		return 0;
	*cp = c;
	return n;
}

/*
 * NextStop: from s[*pos] on, the first place json-c must not be given as
 * written (see the file header): an integer beyond json-c's range, or a
 * character beyond ASCII in a string, whose text is s[*start..*pos), or
 * something that is not JSON at s[*start]; else STOP_END with *start =
 * len.  *in_string says whether s[*pos] is inside a string (a stop inside
 * one resumes there).  Strings are skipped, escapes included; an
 * unterminated string runs to the end of the text.
 */
static TextStop
NextStop(const char *s, size_t len, size_t *pos, size_t *start, bool *in_string)
{
	size_t		i = *pos;

	while (i < len)
	{
		char		c = s[i];

		if (c == '"' || *in_string)
		{
			if (!*in_string)
				i++;
			*in_string = true;
			for (; i < len && s[i] != '"'; i++)
			{
				unsigned long cp;
				size_t		n;

				if ((unsigned char) s[i] < 0x20)
				{
					*start = i;
					return STOP_NOT_JSON;
				}
				if ((unsigned char) s[i] >= 0x80 &&
					(n = Utf8Sequence(s, len, i, &cp)) > 0)
				{
					*start = i;
					*pos = i + n;
					return STOP_UTF8;
				}
				if (s[i] == '\\')
					i++;
			}
			*in_string = false;
			i++;
		}
		else if (c == '-' || IsDigit(c))
		{
			size_t		end;
			TextStop	stop = ScanNumber(s, len, i, &end);

			if (stop != STOP_END)
			{
				*start = i;
				*pos = end;
				return stop;
			}
			i = end;
		}
		else
			i++;
	}
	*start = len;
	*pos = len;
	return STOP_END;
}

/*
 * Utf8Escape: the well-formed UTF-8 sequence s[0..n) as the JSON escape of
 * its code point (a surrogate pair beyond U+FFFF), which json-c turns back
 * into the same bytes, into buf.
 */
static const char *
Utf8Escape(const char *s, size_t n, char *buf, size_t cap)
{
	unsigned long cp = 0;

	(void) Utf8Sequence(s, n, 0, &cp);
	if (cp < 0x10000)
		snprintf(buf, cap, "\\u%04lx", cp);
	else
		snprintf(buf, cap, "\\u%04lx\\u%04lx", 0xD800 + ((cp - 0x10000) >> 10),
				 0xDC00 + ((cp - 0x10000) & 0x3FF));
	return buf;
}

/* How much text the tokener gets between two checks for a request to stop. */
#define FEED_CHUNK ((size_t) 256 * 1024)

/*
 * Feed: give the tokener text[0..len) (len may be 0), FEED_CHUNK bytes at
 * a time with the host's check for a request to stop before each; true
 * while it wants more text (the document neither done nor failed).  *end
 * is set to where in text it stopped.
 */
static bool
Feed(IncOfferParser *parser, const char *text, size_t len, size_t *end)
{
	size_t		done = 0;

	do
	{
		size_t		n = len - done < FEED_CHUNK ? len - done : FEED_CHUNK;

		inc_check_interrupts();
		parser->root = json_tokener_parse_ex(parser->tokener, text + done, (int) n);
		*end = done + json_tokener_get_parse_end(parser->tokener);
		if (json_tokener_get_error(parser->tokener) != json_tokener_continue)
			return false;
		done += n;
	} while (done < len);
	return true;
}

/*
 * inc_offer_parser_tree: parse len bytes of JSON text strictly (RFC
 * 8259), allowing only whitespace after the document and
 * INC_OFFER_MAX_DEPTH levels of nesting, into parser->root; false with
 * err filled (and nothing held) when it is not JSON.
 */
bool
inc_offer_parser_tree(IncOfferParser *parser, const char *json, size_t len,
					  IncOfferError *err)
{
	enum json_tokener_error jerr;
	size_t		fed = 0;		/* json[0..fed) went to the tokener */
	size_t		pos = 0;		/* json[0..pos) was scanned */
	size_t		start;
	size_t		end;
	bool		not_json = false;
	bool		in_string = false;

	err->message[0] = '\0';
	inc_offer_parser_release(parser);
	if (len >= (size_t) INT_MAX)
		return DocumentFault(err, "document is too large");

	/* json-c's depth counts the document itself as level 1, as we do */
	parser->tokener = json_tokener_new_ex(INC_OFFER_MAX_DEPTH);
	if (parser->tokener == NULL)
		inc_fail(INC_ERR_INTERNAL, "out of memory creating a JSON tokener");
	json_tokener_set_flags(parser->tokener, JSON_TOKENER_STRICT);

	/*
	 * The text up to each stop, then the stop's replacement; a fault before
	 * the stop (too deep, not JSON) is the tokener's to report.
	 */
	for (;;)
	{
		TextStop	stop = NextStop(json, len, &pos, &start, &in_string);
		const char *text;
		char		escape[16];

		if (!Feed(parser, json + fed, start - fed, &end))
		{
			end += fed;
			break;
		}
		fed = start;
		if (stop == STOP_END)
		{
			end = len;
			break;
		}
		if (stop == STOP_NOT_JSON)
		{
			not_json = true;
			break;
		}
		if (stop == STOP_UTF8)
			text = Utf8Escape(json + start, pos - start, escape, sizeof(escape));
		else
			text = stop == STOP_ABOVE_RANGE ? IntegerAboveRange : IntegerBelowRange;
		if (!Feed(parser, text, strlen(text), &end))
		{
			end = pos;
			break;
		}
		fed = pos;
	}
	jerr = json_tokener_get_error(parser->tokener);
	if (jerr == json_tokener_continue && !not_json)
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
	if (not_json || jerr != json_tokener_success || end > len ||
		!OnlyWhitespace(json + end, len - end))
	{
		inc_offer_parser_release(parser);
		return DocumentFault(err, "document is not valid JSON");
	}
	return true;
}

/*
 * inc_offer_parser_check: inc_offer_parser_tree, then compile the tree
 * with inc_offer_from_json under checks.  The offer is inc_alloc memory;
 * NULL with err filled when the document is not a valid offer.  json-c
 * memory is released before returning.
 */
IncOffer *
inc_offer_parser_check(IncOfferParser *parser, const char *json, size_t len,
					   const IncOfferChecks *checks, IncOfferError *err)
{
	IncOffer   *offer;

	if (!inc_offer_parser_tree(parser, json, len, err))
		return NULL;
	offer = inc_offer_from_json(parser->root, checks, err);
	inc_offer_parser_release(parser);
	return offer;
}

/* inc_offer_parser_run: inc_offer_parser_check without checks. */
IncOffer *
inc_offer_parser_run(IncOfferParser *parser, const char *json, size_t len,
					 IncOfferError *err)
{
	return inc_offer_parser_check(parser, json, len, NULL, err);
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
