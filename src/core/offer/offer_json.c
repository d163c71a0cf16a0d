/*
 * offer_json.c
 *    The typed field accessors of the offer parser (see offer_internal.h):
 *    json-c field readers, the JSON path of the field being read, and the
 *    formatting of a fault.
 *
 * Every accessor checks one field and, on a fault, formats the complete
 * message ("invalid offer \"KEY\": PATH problem") into the caller's
 * IncOfferError and longjmps back to inc_offer_from_json, whose jmp_buf
 * lives in the parse state on its stack (no global state).  Only
 * inc_alloc memory and json-c objects owned by the caller are live while
 * parsing, so the jump leaks nothing.
 *
 * Numbers are never converted through binary floating point: json-c keeps
 * the text of every non-integer number as written, and prints integers
 * exactly, so the accessor reads json_object_to_json_string_ext() and
 * parses it with inc_dec_parse().  An integer beyond json-c's 64 bits
 * arrives as INT64_MIN, INT64_MAX or UINT64_MAX: the text parser
 * (offer_text.c) feeds it to json-c as INT64_MIN or UINT64_MAX, and json-c
 * clamps it to one of the three in a tree a host parsed itself without
 * JSON_TOKENER_STRICT.  Those three texts are therefore reported as out of
 * range (they are far beyond any real rate or price).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "offer_internal.h"

/* Texts json-c prints for integers it clamped (see the header comment). */
static const char *const ClampedIntegers[] = {
	"9223372036854775807",
	"-9223372036854775808",
	"18446744073709551615"
};

/* Account for n bytes snprintf wanted to append to the path. */
static void
PathGrew(IncOfferParse *p, int n)
{
	size_t		room = sizeof(p->path) - p->pathlen;

	if (n < 0)
		n = 0;
	if ((size_t) n >= room)
		n = (int) room - 1;
	p->pathlen += (size_t) n;
}

/*
 * inc_oj_push_field: append ".name" ("name" at the top level) to the path;
 * returns the previous length for inc_oj_pop.
 */
size_t
inc_oj_push_field(IncOfferParse *p, const char *name)
{
	size_t		old = p->pathlen;

	PathGrew(p, snprintf(p->path + old, sizeof(p->path) - old, "%s%s",
						 old > 0 ? "." : "", name));
	return old;
}

/* inc_oj_push_index: append "[index]" to the path; returns the previous length. */
size_t
inc_oj_push_index(IncOfferParse *p, int index)
{
	size_t		old = p->pathlen;

	PathGrew(p, snprintf(p->path + old, sizeof(p->path) - old, "[%d]", index));
	return old;
}

/* inc_oj_pop: restore the path to a length a push returned. */
void
inc_oj_pop(IncOfferParse *p, size_t len)
{
	p->pathlen = len;
	p->path[len] = '\0';
}

static void FailV(IncOfferParse *p, const char *fmt, va_list ap)
			INC_NORETURN INC_PRINTF(2, 0);

static void MessageAppendV(IncOfferError *err, size_t *len, const char *fmt,
						   va_list ap) INC_PRINTF(3, 0);

/* Append formatted text to the message, truncating at its capacity. */
static void
MessageAppendV(IncOfferError *err, size_t *len, const char *fmt, va_list ap)
{
	size_t		cap = sizeof(err->message);
	int			n;

	if (*len >= cap - 1)
		return;
	n = vsnprintf(err->message + *len, cap - *len, fmt, ap);
	if (n > 0)
		*len += (size_t) n < cap - *len ? (size_t) n : cap - 1 - *len;
}

static void
MessageAppend(IncOfferError *err, size_t *len, const char *fmt,...)
			INC_PRINTF(3, 4);

static void
MessageAppend(IncOfferError *err, size_t *len, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	MessageAppendV(err, len, fmt, ap);
	va_end(ap);
}

/* Format the message for the current path and jump out. */
static void
FailV(IncOfferParse *p, const char *fmt, va_list ap)
{
	size_t		len = 0;

	p->err->message[0] = '\0';
	if (p->offer_key)
		MessageAppend(p->err, &len, "invalid offer \"%s\": ", p->offer_key);
	else
		MessageAppend(p->err, &len, "invalid offer (no offer_key): ");
	if (p->pathlen > 0)
		MessageAppend(p->err, &len, "%s ", p->path);
	MessageAppendV(p->err, &len, fmt, ap);
	longjmp(p->jump, 1);
}

/*
 * inc_oj_fail: "invalid offer "KEY": PATH problem" (or "invalid offer (no
 * offer_key): ..." before the key is known) into p->err, then jump back to
 * inc_offer_from_json.  With an empty path the problem stands alone.
 */
void
inc_oj_fail(IncOfferParse *p, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	FailV(p, fmt, ap);
	va_end(ap);
}

/* inc_oj_fail_at: inc_oj_fail for field name of the current path. */
void
inc_oj_fail_at(IncOfferParse *p, const char *name, const char *fmt,...)
{
	va_list		ap;

	if (name)
		inc_oj_push_field(p, name);
	va_start(ap, fmt);
	FailV(p, fmt, ap);
	va_end(ap);
}

/* inc_oj_lookup: is name a field of obj?  *val is NULL for a JSON null. */
bool
inc_oj_lookup(struct json_object *obj, const char *name, struct json_object **val)
{
	*val = NULL;
	return json_object_object_get_ex(obj, name, val) != 0;
}

/*
 * inc_oj_element: element i of arr (NULL for a JSON null), after the
 * host's check for a request to stop: every walk of an array of the
 * document goes through here.
 */
struct json_object *
inc_oj_element(struct json_object *arr, int i)
{
	inc_check_interrupts();
	return json_object_array_get_idx(arr, (size_t) i);
}

/*
 * inc_oj_string_value: the string val (path pushed), copied into inc_alloc
 * memory.  Strings holding \u0000 are refused: the engine compares keys as
 * C strings (and PostgreSQL's jsonb refuses them too).
 */
char *
inc_oj_string_value(IncOfferParse *p, struct json_object *val, int flags)
{
	const char *s;
	int			len;
	char	   *copy;

	if (!json_object_is_type(val, json_type_string))
		inc_oj_fail(p, "must be a string");
	s = json_object_get_string(val);
	len = json_object_get_string_len(val);
	if (len < 0 || memchr(s, '\0', (size_t) len) != NULL)
		inc_oj_fail(p, "must not contain \\u0000");
	if (len == 0 && (flags & INC_OJ_NONEMPTY))
		inc_oj_fail(p, "must not be empty");
	copy = inc_alloc((size_t) len + 1);
	memcpy(copy, s, (size_t) len);
	copy[len] = '\0';
	return copy;
}

/*
 * inc_oj_number_value: the number val (path pushed) as an exact decimal,
 * checked against the sign rule.
 */
IncDec
inc_oj_number_value(IncOfferParse *p, struct json_object *val, IncOjSign sign)
{
	json_type	type = json_object_get_type(val);
	const char *text;
	IncDec		d;
	size_t		i;

	if (type != json_type_int && type != json_type_double)
		inc_oj_fail(p, "must be a number");
	text = json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN);
	if (text == NULL)
		inc_fail(INC_ERR_INTERNAL, "out of memory printing a JSON number");
	if (type == json_type_int)
	{
		for (i = 0; i < sizeof(ClampedIntegers) / sizeof(ClampedIntegers[0]); i++)
		{
			if (strcmp(text, ClampedIntegers[i]) == 0)
				inc_oj_fail(p, "is out of range");
		}
	}
	switch (inc_dec_parse(text, strlen(text), &d))
	{
		case INC_DEC_OK:
			break;
		case INC_DEC_RANGE:
			inc_oj_fail(p, "is out of range");
		default:
			/* NaN, Infinity and the like */
			inc_oj_fail(p, "must be a number");
	}
	if (sign == INC_OJ_NONNEG && inc_dec_sign(&d) < 0)
		inc_oj_fail(p, "must be >= 0");
	if (sign == INC_OJ_POSITIVE && inc_dec_sign(&d) <= 0)
		inc_oj_fail(p, "must be > 0");
	return d;
}

/* inc_oj_object_value: val (path pushed) must be an object. */
struct json_object *
inc_oj_object_value(IncOfferParse *p, struct json_object *val)
{
	if (!json_object_is_type(val, json_type_object))
		inc_oj_fail(p, "must be an object");
	return val;
}

/* inc_oj_string: the string field name of obj (NULL when optional and absent). */
char *
inc_oj_string(IncOfferParse *p, struct json_object *obj, const char *name,
			  int flags)
{
	struct json_object *val;
	size_t		saved = inc_oj_push_field(p, name);
	char	   *result = NULL;

	if (!inc_oj_lookup(obj, name, &val))
	{
		if (flags & INC_OJ_REQUIRED)
			inc_oj_fail(p, "is required");
	}
	else if (val != NULL || (flags & INC_OJ_REQUIRED))
		result = inc_oj_string_value(p, val, flags);
	inc_oj_pop(p, saved);
	return result;
}

/*
 * inc_oj_date: the required date field name of obj ("YYYY-MM-DD", a real
 * calendar day: inc_date_problem says what is wrong otherwise), as days
 * since 2000-01-01.
 */
int32_t
inc_oj_date(IncOfferParse *p, struct json_object *obj, const char *name)
{
	char	   *text = inc_oj_string(p, obj, name, INC_OJ_REQUIRED);
	char		problem[96];
	int32_t		days = 0;

	if (inc_date_problem(text, &days, problem, sizeof(problem)) != NULL)
		inc_oj_fail_at(p, name, "%s", problem);
	return days;
}

/* inc_oj_number: the required number field name of obj. */
IncDec
inc_oj_number(IncOfferParse *p, struct json_object *obj, const char *name,
			  IncOjSign sign)
{
	struct json_object *val;
	size_t		saved = inc_oj_push_field(p, name);
	IncDec		result;

	if (!inc_oj_lookup(obj, name, &val))
		inc_oj_fail(p, "is required");
	result = inc_oj_number_value(p, val, sign);
	inc_oj_pop(p, saved);
	return result;
}

/* inc_oj_object: the required object field name of obj. */
struct json_object *
inc_oj_object(IncOfferParse *p, struct json_object *obj, const char *name)
{
	struct json_object *val;
	size_t		saved = inc_oj_push_field(p, name);

	if (!inc_oj_lookup(obj, name, &val))
		inc_oj_fail(p, "is required");
	inc_oj_object_value(p, val);
	inc_oj_pop(p, saved);
	return val;
}

/* inc_oj_array: the array field name of obj and its length. */
void
inc_oj_array(IncOfferParse *p, struct json_object *obj, const char *name,
			 int flags, struct json_object **arr, int *len)
{
	struct json_object *val;
	size_t		saved = inc_oj_push_field(p, name);
	size_t		n;

	*arr = NULL;
	*len = 0;
	if (!inc_oj_lookup(obj, name, &val))
	{
		if (flags & INC_OJ_REQUIRED)
			inc_oj_fail(p, "is required");
	}
	else if (val != NULL || (flags & INC_OJ_REQUIRED))
	{
		if (!json_object_is_type(val, json_type_array))
			inc_oj_fail(p, "must be an array");
		n = json_object_array_length(val);
		if (n == 0 && (flags & INC_OJ_NONEMPTY))
			inc_oj_fail(p, "must not be empty");
		/* every element takes at least two bytes of a text below INT_MAX */
		if (n > INT_MAX)
			inc_oj_fail(p, "is out of range");
		*arr = val;
		*len = (int) n;
	}
	inc_oj_pop(p, saved);
}

/* The JSON text of val ("null" for a JSON null), json-c memory of val. */
static const char *
ValueText(struct json_object *val)
{
	if (val == NULL)
		return "null";
	return json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN |
										  JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* inc_oj_stored: the stored document has val at the current path. */
bool
inc_oj_stored(IncOfferParse *p, struct json_object *val)
{
	const IncOfferChecks *checks = p->checks;

	return checks != NULL && checks->stored != NULL &&
		checks->stored(checks->ctx, p->path, ValueText(val));
}

/* inc_oj_finding: "PATH problem" as a finding of code. */
void
inc_oj_finding(IncOfferParse *p, const char *code, struct json_object *val,
			   const char *fmt,...)
{
	const IncOfferChecks *checks = p->checks;
	IncOfferError text;
	size_t		len = 0;
	va_list		ap;

	if (checks == NULL || checks->finding == NULL)
		return;
	text.message[0] = '\0';
	MessageAppend(&text, &len, "%s ", p->path);
	va_start(ap, fmt);
	MessageAppendV(&text, &len, fmt, ap);
	va_end(ap);
	checks->finding(checks->ctx, p->path, code, text.message, ValueText(val));
}

/*
 * The unknown field name of an object of kind, its path pushed: the
 * error, or a finding when unknown fields are reported or the stored
 * document already has it.
 */
static void
UnknownField(IncOfferParse *p, IncObjectKind kind, const char *name,
			 struct json_object *val)
{
	char		advice[256];
	const char *sep;

	inc_object_field_advice(kind, p->family, name, advice, sizeof(advice));
	sep = advice[0] != '\0' ? "; " : "";
	if (p->checks->unknown_fields == INC_UNKNOWN_REFUSE && !inc_oj_stored(p, val))
		inc_oj_fail(p, "is not a field of %s%s%s", inc_object_fields[kind].path,
					sep, advice);
	inc_oj_finding(p, "unknown_field", val, "is not a field of %s%s%s",
				   inc_object_fields[kind].path, sep, advice);
}

/* inc_oj_fields: every field of obj against kind's (see offer_internal.h). */
void
inc_oj_fields(IncOfferParse *p, struct json_object *obj, IncObjectKind kind)
{
	const IncOfferChecks *checks = p->checks;
	struct json_object_iterator it;
	struct json_object_iterator end;

	if (checks == NULL || obj == NULL || !json_object_is_type(obj, json_type_object))
		return;
	end = json_object_iter_end(obj);
	for (it = json_object_iter_begin(obj); !json_object_iter_equal(&it, &end);
		 json_object_iter_next(&it))
	{
		const char *name = json_object_iter_peek_name(&it);
		struct json_object *val = json_object_iter_peek_value(&it);
		size_t		top;

		inc_check_interrupts();

		if (inc_object_field_annotation(kind, name))
		{
			if (checks->writing && val != NULL &&
				!json_object_is_type(val, json_type_string))
			{
				top = inc_oj_push_field(p, name);
				if (!inc_oj_stored(p, val))
					inc_oj_fail(p, "must be a string");
				inc_oj_pop(p, top);
			}
			continue;
		}
		if (checks->unknown_fields == INC_UNKNOWN_IGNORE ||
			inc_object_field_known(kind, name))
			continue;
		/* a field named "" is written so in its path */
		top = inc_oj_push_field(p, name[0] != '\0' ? name : "\"\"");
		UnknownField(p, kind, name, val);
		inc_oj_pop(p, top);
	}
}
