/*
 * offer_diff.c
 *    How a new document of an offer differs from the one before it (see
 *    offer_diff.h): both documents parsed into json-c trees, walked side by
 *    side.
 *
 * The walk knows where it is in the document (Place) only as far as the
 * rate values need: the standard entries and their rates, the stepped
 * tiers, the stacked sets and their rates.  Every other field is compared
 * as it is: numbers by decimal value (3.5 and 3.50 are equal), strings,
 * booleans and null exactly, objects field by field, arrays element by
 * element (a different length is a difference of the array itself).
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "offer_diff.h"
#include "offer_fields.h"

const char *const inc_offer_difference_names[INC_NDIFFERENCES] = {
	[INC_DIFF_SAME] = "same",
	[INC_DIFF_ANNOTATIONS] = "annotations",
	[INC_DIFF_RATES] = "rates",
	[INC_DIFF_POOL] = "pool",
	[INC_DIFF_STRUCTURE] = "structure",
};

/* Where in the document a value is, as far as the rate values need. */
typedef enum Place
{
	PLACE_OTHER = 0,
	PLACE_ROOT,
	PLACE_ENTRIES,				/* standard: incentives */
	PLACE_ENTRY,				/* standard: incentives[] */
	PLACE_ENTRY_RATES,			/* standard: incentives[].rates */
	PLACE_INCENTIVE,			/* stepped, stacked: incentive */
	PLACE_TIERS,				/* stepped: incentive.rates */
	PLACE_TIER,					/* stepped: incentive.rates[] */
	PLACE_SETS,					/* stacked: incentive.sku_sets */
	PLACE_SET,					/* stacked: incentive.sku_sets[] */
	PLACE_SET_RATES,			/* stacked: incentive.sku_sets[].rates */
	PLACE_RATE					/* a standard entry's or a set's rates[] */
} Place;

#define DIFF_PATH_MAX 1024

typedef struct DiffWalk
{
	const char *strategy;		/* the new document's strategy_key, or "" */
	bool		pools;			/* the fixed_amount calculator */
	IncOfferDifference found;	/* the strongest difference so far */
	char		path[DIFF_PATH_MAX];	/* where the walk is */
	size_t		len;
	char		structure_path[DIFF_PATH_MAX];	/* the first structure difference */
	char		rate_path[DIFF_PATH_MAX];	/* the first rate or pool difference */
	bool		have_rate_path;
} DiffWalk;

/* PushField: path gets ".name" (or "name" at the top); the old length. */
static size_t
PushField(DiffWalk *w, const char *name)
{
	size_t		old = w->len;
	int			n = snprintf(w->path + w->len, sizeof(w->path) - w->len,
							 w->len ? ".%s" : "%s", name);

	if (n > 0)
		w->len += (size_t) n < sizeof(w->path) - w->len ? (size_t) n : sizeof(w->path) - w->len - 1;
	return old;
}

/* PushIndex: path gets "[i]"; the old length. */
static size_t
PushIndex(DiffWalk *w, int i)
{
	size_t		old = w->len;
	int			n = snprintf(w->path + w->len, sizeof(w->path) - w->len, "[%d]", i);

	if (n > 0)
		w->len += (size_t) n < sizeof(w->path) - w->len ? (size_t) n : sizeof(w->path) - w->len - 1;
	return old;
}

static void
Pop(DiffWalk *w, size_t len)
{
	w->len = len;
	w->path[len] = '\0';
}

/* Found: a difference of kind at the walk's path. */
static void
Found(DiffWalk *w, IncOfferDifference kind)
{
	if (kind == INC_DIFF_STRUCTURE && w->found != INC_DIFF_STRUCTURE)
		snprintf(w->structure_path, sizeof(w->structure_path), "%s", w->path);
	if ((kind == INC_DIFF_RATES || kind == INC_DIFF_POOL) && !w->have_rate_path)
	{
		snprintf(w->rate_path, sizeof(w->rate_path), "%s", w->path);
		w->have_rate_path = true;
	}
	if (kind > w->found)
		w->found = kind;
}

/* FieldPlace: the place of field name of an object at place. */
static Place
FieldPlace(const DiffWalk *w, Place place, const char *name)
{
	bool		standard = strcmp(w->strategy, "standard") == 0;
	bool		stepped = strcmp(w->strategy, "stepped") == 0;
	bool		stacked = strcmp(w->strategy, "stacked") == 0;

	if (place == PLACE_ROOT && standard && strcmp(name, "incentives") == 0)
		return PLACE_ENTRIES;
	if (place == PLACE_ROOT && (stepped || stacked) && strcmp(name, "incentive") == 0)
		return PLACE_INCENTIVE;
	if (place == PLACE_ENTRY && strcmp(name, "rates") == 0)
		return PLACE_ENTRY_RATES;
	if (place == PLACE_INCENTIVE && stepped && strcmp(name, "rates") == 0)
		return PLACE_TIERS;
	if (place == PLACE_INCENTIVE && stacked && strcmp(name, "sku_sets") == 0)
		return PLACE_SETS;
	if (place == PLACE_SET && strcmp(name, "rates") == 0)
		return PLACE_SET_RATES;
	return PLACE_OTHER;
}

/* ElementPlace: the place of an element of an array at place. */
static Place
ElementPlace(Place place)
{
	switch (place)
	{
		case PLACE_ENTRIES:
			return PLACE_ENTRY;
		case PLACE_ENTRY_RATES:
		case PLACE_SET_RATES:
			return PLACE_RATE;
		case PLACE_TIERS:
			return PLACE_TIER;
		case PLACE_SETS:
			return PLACE_SET;
		default:
			return PLACE_OTHER;
	}
}

/* RateValue: is field name of an object at place a rate value? */
static bool
RateValue(Place place, const char *name)
{
	return (place == PLACE_RATE && strcmp(name, "rate") == 0) ||
		(place == PLACE_TIER && strcmp(name, "value") == 0);
}

/*
 * Annotation: is field name of an object at place an annotation?  The
 * offer's settlement counts as one: it changes no figure the calculation
 * makes, only what settle holds back (docs/lifecycle.md, Holdback and
 * minimum payment), so an edit of it keeps a rate schedule.
 */
static bool
Annotation(Place place, const char *name)
{
	int			i;

	if (place == PLACE_ROOT &&
		(strcmp(name, INC_METADATA_FIELD) == 0 || strcmp(name, "settlement") == 0))
		return true;
	for (i = 0; inc_annotation_fields[i]; i++)
		if (strcmp(name, inc_annotation_fields[i]) == 0)
			return true;
	return false;
}

static bool
IsNumber(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* SameScalar: are two values that are not objects or arrays equal? */
static bool
SameScalar(struct json_object *a, struct json_object *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (IsNumber(a) && IsNumber(b))
	{
		const char *sa = json_object_get_string(a);
		const char *sb = json_object_get_string(b);
		IncDec		da,
					db;

		if (inc_dec_parse(sa, strlen(sa), &da) == INC_DEC_OK &&
			inc_dec_parse(sb, strlen(sb), &db) == INC_DEC_OK)
			return inc_dec_cmp(&da, &db) == 0;
		return strcmp(sa, sb) == 0;
	}
	if (json_object_get_type(a) != json_object_get_type(b))
		return false;
	if (json_object_is_type(a, json_type_string))
		return json_object_get_string_len(a) == json_object_get_string_len(b) &&
			memcmp(json_object_get_string(a), json_object_get_string(b),
				   (size_t) json_object_get_string_len(a)) == 0;
	return json_object_equal(a, b) != 0;
}

static void Walk(DiffWalk *w, Place place, struct json_object *a, struct json_object *b,
				 IncOfferDifference kind);

/*
 * WalkField: field name of two objects at place (in_a, in_b: whether each
 * object has it; a JSON null is a value), inside an annotation when
 * parent is INC_DIFF_ANNOTATIONS.
 */
static void
WalkField(DiffWalk *w, Place place, IncOfferDifference parent, const char *name,
		  bool in_a, struct json_object *a, bool in_b, struct json_object *b)
{
	size_t		len = PushField(w, name);
	IncOfferDifference kind = parent == INC_DIFF_ANNOTATIONS ? parent : INC_DIFF_STRUCTURE;

	inc_check_interrupts();
	if (Annotation(place, name))
		kind = INC_DIFF_ANNOTATIONS;
	else if (RateValue(place, name) && in_a && in_b)
		kind = w->pools ? INC_DIFF_POOL : INC_DIFF_RATES;
	if (in_a != in_b)
		Found(w, kind);
	else
		Walk(w, FieldPlace(w, place, name), a, b, kind);
	Pop(w, len);
}

/* Walk: values a and b at place; a difference found in them is of kind. */
static void
Walk(DiffWalk *w, Place place, struct json_object *a, struct json_object *b,
	 IncOfferDifference kind)
{
	if (a && b && json_object_is_type(a, json_type_object) &&
		json_object_is_type(b, json_type_object))
	{
		struct json_object_iterator it = json_object_iter_begin(a);
		struct json_object_iterator end = json_object_iter_end(a);

		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		{
			const char *name = json_object_iter_peek_name(&it);
			struct json_object *vb = NULL;
			bool		in_b = json_object_object_get_ex(b, name, &vb);

			WalkField(w, place, kind, name, true, json_object_iter_peek_value(&it), in_b, vb);
		}
		it = json_object_iter_begin(b);
		end = json_object_iter_end(b);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		{
			const char *name = json_object_iter_peek_name(&it);

			if (!json_object_object_get_ex(a, name, NULL))
				WalkField(w, place, kind, name, false, NULL, true, json_object_iter_peek_value(&it));
		}
		return;
	}
	if (a && b && json_object_is_type(a, json_type_array) &&
		json_object_is_type(b, json_type_array))
	{
		size_t		n = json_object_array_length(a);
		size_t		i;

		if (n != json_object_array_length(b))
		{
			Found(w, kind == INC_DIFF_ANNOTATIONS ? kind : INC_DIFF_STRUCTURE);
			return;
		}
		for (i = 0; i < n; i++)
		{
			size_t		len = PushIndex(w, (int) i);

			inc_check_interrupts();
			Walk(w, ElementPlace(place), json_object_array_get_idx(a, i),
				 json_object_array_get_idx(b, i),
				 kind == INC_DIFF_ANNOTATIONS ? kind : INC_DIFF_STRUCTURE);
			Pop(w, len);
		}
		return;
	}
	if ((a && (json_object_is_type(a, json_type_object) || json_object_is_type(a, json_type_array))) ||
		(b && (json_object_is_type(b, json_type_object) || json_object_is_type(b, json_type_array))) ||
		!SameScalar(a, b))
		Found(w, kind == INC_DIFF_ANNOTATIONS ? kind :
			  (kind == INC_DIFF_RATES || kind == INC_DIFF_POOL) && a && b && IsNumber(a) &&
			  IsNumber(b) ? kind : INC_DIFF_STRUCTURE);
}

/* TopString: field name of the object root as a string, or "". */
static const char *
TopString(struct json_object *root, const char *name)
{
	struct json_object *v;

	if (json_object_is_type(root, json_type_object) &&
		json_object_object_get_ex(root, name, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "";
}

IncOfferDifference
inc_offer_difference(IncOfferParser *old_parser, IncOfferParser *new_parser,
					 const char *old_json, size_t old_len,
					 const char *new_json, size_t new_len,
					 char *path, size_t cap, IncOfferError *err)
{
	DiffWalk	w;

	memset(&w, 0, sizeof(w));
	snprintf(path, cap, "%s", "");
	if (!inc_offer_parser_tree(old_parser, old_json, old_len, err) ||
		!inc_offer_parser_tree(new_parser, new_json, new_len, err))
	{
		inc_offer_parser_release(old_parser);
		inc_offer_parser_release(new_parser);
		return INC_DIFF_STRUCTURE;
	}
	w.strategy = TopString(new_parser->root, "strategy_key");
	w.pools = strcmp(TopString(new_parser->root, "calculator_key"), "fixed_amount") == 0;
	if (json_object_is_type(old_parser->root, json_type_object) &&
		json_object_is_type(new_parser->root, json_type_object))
		Walk(&w, PLACE_ROOT, old_parser->root, new_parser->root, INC_DIFF_STRUCTURE);
	else if (!SameScalar(old_parser->root, new_parser->root) ||
			 json_object_is_type(old_parser->root, json_type_array) ||
			 json_object_is_type(new_parser->root, json_type_array))
		Found(&w, INC_DIFF_STRUCTURE);
	if (w.found == INC_DIFF_STRUCTURE)
		snprintf(path, cap, "%s", w.structure_path);
	else if (w.have_rate_path)
		snprintf(path, cap, "%s", w.rate_path);
	inc_offer_parser_release(old_parser);
	inc_offer_parser_release(new_parser);
	return w.found;
}
