/*
 * fuzz_common.c
 *    The harnesses' shared services (see fuzz_common.h): arenas, bug
 *    reports, number and JSON checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz_common.h"

struct FuzzArenaBlock
{
	FuzzArenaBlock *next;
};

/* 16-byte aligned payload after the block header */
#define ARENA_HEADER 16

FuzzArena  *fuzz_arena;
const char *fuzz_name = "fuzz";

/* fuzz_alloc: size zeroed bytes in the current arena (NULL: inc_alloc reports it). */
void *
fuzz_alloc(size_t size)
{
	FuzzArenaBlock *b = calloc(1, ARENA_HEADER + size);

	if (b == NULL)
		return NULL;
	b->next = fuzz_arena->blocks;
	fuzz_arena->blocks = b;
	return (char *) b + ARENA_HEADER;
}

/* fuzz_arena_reset: free every block of a. */
void
fuzz_arena_reset(FuzzArena *a)
{
	while (a->blocks)
	{
		FuzzArenaBlock *next = a->blocks->next;

		free(a->blocks);
		a->blocks = next;
	}
}

/* fuzz_bug: print and abort, so libFuzzer keeps the input. */
void
fuzz_bug(const char *what, const char *detail)
{
	fprintf(stderr, "%s: %s%s%s\n", fuzz_name, what, detail ? ": " : "",
			detail ? detail : "");
	abort();
}

/* fuzz_hash: FNV-1a. */
uint64_t
fuzz_hash(const uint8_t *p, size_t n)
{
	uint64_t	h = 1469598103934665603ULL;

	while (n-- > 0)
	{
		h ^= *p++;
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* fuzz_dec_form: see fuzz_common.h. */
bool
fuzz_dec_form(const IncDec *d, int scale)
{
	char		buf[INC_NUM_BUF];
	IncDec		back;
	int			len;
	__int128	limit = 1;
	int			i;

	if (d->scale < 0 || d->scale > INC_DEC_MAX_SCALE)
		return false;
	if (scale >= 0 ? d->scale != scale : (d->scale > 0 && d->coef % 10 == 0))
		return false;
	for (i = 0; i < INC_DEC_MAX_DIGITS; i++)
		limit *= 10;
	if (d->coef >= limit || d->coef <= -limit)
		return false;
	len = inc_dec_format(d, buf, sizeof(buf));
	if (inc_dec_parse(buf, (size_t) len, &back) != INC_DEC_OK)
		return false;
	return back.coef == d->coef && back.scale == d->scale;
}

/* fuzz_dec_text: d as text, or a marker for a broken scale. */
const char *
fuzz_dec_text(const IncDec *d, char *buf)
{
	if (d->scale < 0 || d->scale > INC_DEC_MAX_SCALE)
		return "(bad scale)";
	inc_dec_format(d, buf, INC_NUM_BUF);
	return buf;
}

/* fuzz_json_object: strict parse; the object, or NULL. */
struct json_object *
fuzz_json_object(const char *json)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	struct json_object *obj;

	if (tok == NULL)
		fuzz_bug("out of memory", "json_tokener_new_ex");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, json, (int) strlen(json));
	if (json_tokener_get_error(tok) != json_tokener_success ||
		json_tokener_get_parse_end(tok) != strlen(json) ||
		!json_object_is_type(obj, json_type_object))
	{
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

/* fuzz_json_free: release what fuzz_json_object returned. */
void
fuzz_json_free(struct json_object *obj)
{
	json_object_put(obj);
}
