/*
 * units.c
 *    The SKU catalog and unit conversions (see units.h): SKU -> unit by
 *    name, unit names -> small ids, and the conversions as a hash table
 *    keyed by the pair of unit ids (each direction resolved when the
 *    conversion is added, so a lookup is one probe).
 */
#include <string.h>

#include "../util/strmap.h"
#include "units.h"

/* One ordered pair of units: how from converts to to. */
typedef struct Pair
{
	uint32_t	key;			/* from << 16 | to; 0: empty slot */
	IncConversionKind kind;		/* MUL or DIV */
	bool		direct;			/* given as from -> to (wins over a reverse) */
	IncDec		factor;
} Pair;

struct IncUnits
{
	IncStrMap  *sku_uom;		/* sku_key -> char * uom_key */
	IncStrMap  *ids;			/* uom name -> id, as a pointer-sized int */
	const char **names;			/* id -> name; names[0] unused */
	int			nnames;			/* ids in use: 1 .. nnames */
	int			names_cap;
	Pair	   *pairs;			/* open addressing, linear probing */
	uint32_t	pairs_mask;
	uint32_t	npairs;
};

#define MAX_UNITS 65535

/* inc_units_create: empty tables (in the current allocator). */
IncUnits *
inc_units_create(void)
{
	IncUnits   *u = inc_alloc(sizeof(IncUnits));

	u->sku_uom = inc_strmap_create();
	u->ids = inc_strmap_create();
	u->pairs_mask = 15;
	u->pairs = inc_alloc(sizeof(Pair) * 16);
	return u;
}

/* inc_units_intern: the unit's id, given one when new. */
int
inc_units_intern(IncUnits *u, const char *uom, size_t len)
{
	void	   *found = inc_strmap_get_len(u->ids, uom, len);
	char	   *name;

	if (found)
		return (int) (intptr_t) found;
	if (u->nnames == MAX_UNITS)
		inc_fail(INC_ERR_RANGE, "too many units of measure");
	if (u->nnames + 1 >= u->names_cap)
		u->names = inc_grow(u->names, u->nnames ? u->nnames + 1 : 0, &u->names_cap,
							sizeof(char *), 16);
	name = inc_alloc(len + 1);
	memcpy(name, uom, len);
	u->names[++u->nnames] = name;
	*inc_strmap_slot(u->ids, name) = (void *) (intptr_t) u->nnames;
	return u->nnames;
}

/* inc_units_find: the unit's id, or 0. */
int
inc_units_find(const IncUnits *u, const char *uom)
{
	return (int) (intptr_t) inc_strmap_get(u->ids, uom);
}

/* inc_units_name: the name of unit id. */
const char *
inc_units_name(const IncUnits *u, int id)
{
	return u->names[id];
}

/* inc_units_set_sku_uom: sku_key is measured in uom_key (both copied). */
void
inc_units_set_sku_uom(IncUnits *u, const char *sku_key, const char *uom_key)
{
	int			id = inc_units_intern(u, uom_key, strlen(uom_key));

	*inc_strmap_slot(u->sku_uom, inc_strdup(sku_key)) = (void *) u->names[id];
}

/* FindPair: the slot of (from, to): the pair, or the empty slot for it. */
static Pair *
FindPair(const IncUnits *u, int from, int to)
{
	uint32_t	key = (uint32_t) from << 16 | (uint32_t) to;
	uint32_t	i = (key * 2654435761u) & u->pairs_mask;

	for (;;)
	{
		Pair	   *p = &u->pairs[i];

		if (p->key == key || p->key == 0)
			return p;
		i = (i + 1) & u->pairs_mask;
	}
}

/* SetPair: (from, to) converts by kind and factor, unless a direct one wins. */
static void
SetPair(IncUnits *u, int from, int to, IncConversionKind kind, bool direct,
		const IncDec *factor)
{
	Pair	   *p;

	if ((u->npairs + 1) * 2 > u->pairs_mask + 1)
	{
		Pair	   *old = u->pairs;
		uint32_t	oldcap = u->pairs_mask + 1;
		uint32_t	i;

		u->pairs_mask = oldcap * 2 - 1;
		u->pairs = inc_alloc(sizeof(Pair) * oldcap * 2);
		for (i = 0; i < oldcap; i++)
			if (old[i].key)
				*FindPair(u, (int) (old[i].key >> 16), (int) (old[i].key & 0xFFFF)) = old[i];
	}
	p = FindPair(u, from, to);
	if (p->key != 0 && p->direct && !direct)
		return;					/* a direct conversion beats a reverse one */
	if (p->key == 0)
		u->npairs++;
	p->key = (uint32_t) from << 16 | (uint32_t) to;
	p->kind = kind;
	p->direct = direct;
	p->factor = *factor;
}

/* inc_units_add_conversion: quantity_in_to = quantity_in_from * factor. */
void
inc_units_add_conversion(IncUnits *u, const char *from_uom, const char *to_uom,
						 const IncDec *factor)
{
	int			from,
				to;

	if (inc_dec_sign(factor) <= 0)
		inc_fail(INC_ERR_INVALID,
				 "unit conversion from \"%s\" to \"%s\" has a factor that is not > 0",
				 from_uom, to_uom);
	from = inc_units_intern(u, from_uom, strlen(from_uom));
	to = inc_units_intern(u, to_uom, strlen(to_uom));
	if (from == to)
		return;					/* a unit is always itself */
	SetPair(u, from, to, INC_CONVERT_MUL, true, factor);
	SetPair(u, to, from, INC_CONVERT_DIV, false, factor);
}

/* inc_units_sku_uom: sku_key's unit of measure, or NULL. */
const char *
inc_units_sku_uom(const IncUnits *u, const char *sku_key)
{
	return inc_strmap_get(u->sku_uom, sku_key);
}

/* inc_units_lookup: how unit from converts to unit to. */
IncConversionKind
inc_units_lookup(const IncUnits *u, int from, int to, const IncDec **factor)
{
	const Pair *p;

	if (from == to)
		return INC_CONVERT_SAME;
	p = FindPair(u, from, to);
	if (p->key == 0)
		return INC_CONVERT_NONE;
	*factor = &p->factor;
	return p->kind;
}

/* inc_units_convert_ids: quantity from unit id from to unit id to. */
bool
inc_units_convert_ids(const IncUnits *u, const IncDec *quantity, int from, int to,
					  IncRat *out)
{
	const IncDec *f = NULL;
	IncRat		factor;

	switch (inc_units_lookup(u, from, to, &f))
	{
		case INC_CONVERT_NONE:
			return false;
		case INC_CONVERT_SAME:
			inc_rat_from_dec(out, quantity);
			return true;
		case INC_CONVERT_MUL:
			inc_rat_from_dec(out, quantity);
			inc_rat_from_dec(&factor, f);
			inc_rat_mul(out, out, &factor);
			return true;
		case INC_CONVERT_DIV:
			inc_rat_from_dec(out, quantity);
			inc_rat_from_dec(&factor, f);
			inc_rat_div(out, out, &factor);
			return true;
	}
	return false;
}
