/*
 * offer_build.c
 *    Building blocks the offer parser's structure walks share
 *    (offer_parse.c for the strategies, offer_rules.c for the program
 *    rules): arrays, duplicate detection, a period reference, a choice
 *    among names, and a filters array.
 *
 * Each reads one field through the accessors of offer_json.c and, on a
 * fault, reports it at the field's path in the `invalid offer "KEY": PATH
 * problem` form (docs/reference.md, Invalid offers).
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "offer_internal.h"
#include "../util/strmap.h"

/* inc_ob_alloc_array: n elements of size bytes (at least one, so never NULL). */
void *
inc_ob_alloc_array(int n, size_t size)
{
	return inc_alloc(size * (size_t) (n > 0 ? n : 1));
}

/* inc_ob_seen: record key in map; true when it was there already. */
bool
inc_ob_seen(IncStrMap *map, const char *key)
{
	void	  **slot = inc_strmap_slot(map, key);

	if (*slot != NULL)
		return true;
	*slot = (void *) key;
	return false;
}

/* inc_ob_period_key: the period_key field of obj, as the index of the period it names. */
int
inc_ob_period_key(IncOfferBuild *b, struct json_object *obj)
{
	char	   *key = inc_oj_string(b->p, obj, "period_key",
									INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	IncPeriod  *period = inc_strmap_get(b->periods, key);

	if (period == NULL)
		inc_oj_fail_at(b->p, "period_key", "names an undefined period \"%s\"", key);
	return (int) (period - b->offer->periods);
}

/*
 * inc_ob_choice: the name field of obj, which must be one of
 * names[0..n) ("must be one of a, b, c" otherwise): its index.  When
 * absent (or null) the field is required if dflt < 0, else dflt.
 */
int
inc_ob_choice(IncOfferBuild *b, struct json_object *obj, const char *field,
			  const char *const *names, int n, int dflt)
{
	char	   *value = inc_oj_string(b->p, obj, field, dflt < 0 ? INC_OJ_REQUIRED : 0);
	char		list[256];
	size_t		len = 0;
	int			i;

	if (value == NULL)
		return dflt;
	for (i = 0; i < n; i++)
	{
		if (strcmp(value, names[i]) == 0)
			return i;
	}
	list[0] = '\0';
	for (i = 0; i < n; i++)
		len += (size_t) snprintf(list + len, sizeof(list) - len, "%s%s",
								 i > 0 ? ", " : "", names[i]);
	inc_oj_fail_at(b->p, field, "must be one of %s", list);
}

/* inc_ob_objects: each object of the array field name of obj, read by fn. */
void *
inc_ob_objects(IncOfferBuild *b, struct json_object *obj, const char *name,
			   int flags, int *n, size_t size, IncObItemFn fn, void *ctx)
{
	IncOfferParse *p = b->p;
	struct json_object *arr;
	char	   *elems;
	size_t		top;
	int			i;

	inc_oj_array(p, obj, name, flags, &arr, n);
	elems = inc_ob_alloc_array(*n, size);
	top = inc_oj_push_field(p, name);
	for (i = 0; i < *n; i++)
	{
		size_t		item = inc_oj_push_index(p, i);

		fn(b, inc_oj_object_value(p, inc_oj_element(arr, i)), elems + size * (size_t) i, ctx);
		inc_oj_pop(p, item);
	}
	inc_oj_pop(p, top);
	return elems;
}

/*
 * inc_ob_key_list: the optional array of keys name of obj: when present,
 * non-empty, each a non-empty string; *n is 0 when absent.
 */
void
inc_ob_key_list(IncOfferBuild *b, struct json_object *obj, const char *name,
				int *n, char ***keys)
{
	IncOfferParse *p = b->p;
	struct json_object *arr;
	size_t		top;
	int			j;

	inc_oj_array(p, obj, name, INC_OJ_NONEMPTY, &arr, n);
	*keys = inc_ob_alloc_array(*n, sizeof(char *));
	top = inc_oj_push_field(p, name);
	for (j = 0; j < *n; j++)
	{
		size_t		item = inc_oj_push_index(p, j);

		inc_check_interrupts();
		(*keys)[j] = inc_oj_string_value(p, inc_oj_element(arr, j), INC_OJ_NONEMPTY);
		inc_oj_pop(p, item);
	}
	inc_oj_pop(p, top);
}

/*
 * One filters[] item: {period_key, sku_keys and/or product_keys,
 * exclude_sku_keys, exclude_product_keys, transaction_type}.
 */
static void
ReadFilter(IncOfferBuild *b, struct json_object *fo, void *elem, void *ctx)
{
	IncOfferParse *p = b->p;
	IncFilter  *f = elem;

	(void) ctx;
	inc_oj_fields(p, fo, INC_OBJ_FILTER);
	f->period = inc_ob_period_key(b, fo);
	inc_ob_key_list(b, fo, "sku_keys", &f->nskus, &f->sku_keys);
	inc_ob_key_list(b, fo, "product_keys", &f->nproducts, &f->product_keys);
	if (f->nskus == 0 && f->nproducts == 0)
		inc_oj_fail(p, "needs sku_keys or product_keys");
	inc_ob_key_list(b, fo, "exclude_sku_keys", &f->nexclude_skus, &f->exclude_sku_keys);
	inc_ob_key_list(b, fo, "exclude_product_keys", &f->nexclude_products,
					&f->exclude_product_keys);
	f->transaction_type = inc_oj_string(p, fo, "transaction_type",
										INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
}

/*
 * inc_ob_filters: the filters array name of obj (stepped earning and
 * threshold filters, requirement filters): required, non-empty, each
 * {period_key, sku_keys: [...], transaction_type}.
 */
void
inc_ob_filters(IncOfferBuild *b, struct json_object *obj, const char *name,
			   IncFilter **filters, int *nfilters)
{
	*filters = inc_ob_objects(b, obj, name, INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
							  nfilters, sizeof(IncFilter), ReadFilter, NULL);
}
