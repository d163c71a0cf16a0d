/*
 * units.c
 *    The SKU catalog and unit conversions (see units.h): two hash maps,
 *    SKU -> unit and "from<US>to" -> factor.
 */
#include <string.h>

#include "strmap.h"
#include "units.h"

struct IncUnits
{
	IncStrMap  *sku_uom;		/* sku_key -> char * uom_key */
	IncStrMap  *conversions;	/* "from\037to" -> IncDec * factor */
};

/* inc_units_create: empty tables (in the current allocator). */
IncUnits *
inc_units_create(void)
{
	IncUnits   *u = inc_alloc(sizeof(IncUnits));

	u->sku_uom = inc_strmap_create();
	u->conversions = inc_strmap_create();
	return u;
}

/* inc_units_set_sku_uom: sku_key is measured in uom_key (both copied). */
void
inc_units_set_sku_uom(IncUnits *u, const char *sku_key, const char *uom_key)
{
	*inc_strmap_slot(u->sku_uom, inc_strdup(sku_key)) = inc_strdup(uom_key);
}

/*
 * PairKey: the conversions map key "from<US>to", in buf when it fits (a
 * lookup), else newly allocated.
 */
static char *
PairKey(const char *from, const char *to, char *buf, size_t cap)
{
	size_t		lf = strlen(from),
				lt = strlen(to);
	char	   *key = (buf && lf + lt + 2 <= cap) ? buf : inc_alloc(lf + lt + 2);

	memcpy(key, from, lf);
	key[lf] = '\037';
	memcpy(key + lf + 1, to, lt);
	key[lf + lt + 1] = '\0';
	return key;
}

/* inc_units_add_conversion: quantity_in_to = quantity_in_from * factor. */
void
inc_units_add_conversion(IncUnits *u, const char *from_uom, const char *to_uom,
						 const IncDec *factor)
{
	IncDec	   *f = inc_alloc(sizeof(IncDec));

	if (inc_dec_sign(factor) <= 0)
		inc_fail(INC_ERR_INVALID,
				 "unit conversion from \"%s\" to \"%s\" has a factor that is not > 0",
				 from_uom, to_uom);
	*f = *factor;
	*inc_strmap_slot(u->conversions, PairKey(from_uom, to_uom, NULL, 0)) = f;
}

/* inc_units_sku_uom: sku_key's unit of measure, or NULL. */
const char *
inc_units_sku_uom(const IncUnits *u, const char *sku_key)
{
	return inc_strmap_get(u->sku_uom, sku_key);
}

/* inc_units_convert: quantity from from_uom to to_uom; false when impossible. */
bool
inc_units_convert(const IncUnits *u, const IncDec *quantity, const char *from_uom,
				  const char *to_uom, IncRat *out)
{
	IncRat		factor;
	const IncDec *f;
	char		buf[128];

	inc_rat_from_dec(out, quantity);
	if (strcmp(from_uom, to_uom) == 0)
		return true;

	f = inc_strmap_get(u->conversions, PairKey(from_uom, to_uom, buf, sizeof(buf)));
	if (f)
	{
		inc_rat_from_dec(&factor, f);
		inc_rat_mul(out, out, &factor);
		return true;
	}
	f = inc_strmap_get(u->conversions, PairKey(to_uom, from_uom, buf, sizeof(buf)));
	if (f)
	{
		inc_rat_from_dec(&factor, f);
		inc_rat_div(out, out, &factor);
		return true;
	}
	return false;
}
