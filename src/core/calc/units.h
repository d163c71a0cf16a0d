/*
 * units.h
 *    Units of measure: the SKU catalog (each SKU's unit) and the unit
 *    conversions, and quantities converted between units
 *    (docs/reference.md, Unit conversions).
 *
 * The host fills an IncUnits once per call from its tables (the glue reads
 * incentives.skus and incentives.uom_conversions); the calculation asks
 * for a SKU's unit and converts quantities.  A conversion from -> to with
 * factor f means quantity_in_to = quantity_in_from * f; a pair found only
 * the other way round is used as 1 / f; conversions are never chained.
 * Keys and factors are copied into inc_alloc memory.
 *
 * Every unit named so far has a small id (from 1; 0 means "not known"),
 * so that a transaction whose unit was resolved once (inc_units_intern,
 * e.g. while the host reads it) converts with one probe of an integer
 * table: the calculation itself looks no unit up by name and allocates
 * nothing.
 */
#ifndef INC_UNITS_H
#define INC_UNITS_H

#include "../numbers/rational.h"

typedef struct IncUnits IncUnits;

/* inc_units_create: no SKU units, no conversions. */
extern IncUnits *inc_units_create(void);

/* inc_units_set_sku_uom: sku_key is measured in uom_key. */
extern void inc_units_set_sku_uom(IncUnits *u, const char *sku_key, const char *uom_key);

/* inc_units_add_conversion: from_uom -> to_uom by factor (must be > 0). */
extern void inc_units_add_conversion(IncUnits *u, const char *from_uom, const char *to_uom,
									 const IncDec *factor);

/* inc_units_sku_uom: the unit sku_key is measured in, or NULL. */
extern const char *inc_units_sku_uom(const IncUnits *u, const char *sku_key);

/*
 * inc_units_intern: the id of the unit named by the len bytes at uom (no
 * NUL needed), given one now if it has none (allocates: call it outside a
 * calculation, in the allocator the units live in).
 */
extern int	inc_units_intern(IncUnits *u, const char *uom, size_t len);

/* inc_units_find: the id of unit uom, or 0 when it has none; never allocates. */
extern int	inc_units_find(const IncUnits *u, const char *uom);

/* inc_units_name: the name of unit id (>= 1), owned by u. */
extern const char *inc_units_name(const IncUnits *u, int id);

/*
 * How a quantity in one unit is expressed in another (inc_units_lookup):
 * the same, times factor, divided by factor, or impossible.
 */
typedef enum IncConversionKind
{
	INC_CONVERT_NONE = 0,
	INC_CONVERT_SAME,
	INC_CONVERT_MUL,
	INC_CONVERT_DIV
} IncConversionKind;

/*
 * inc_units_lookup: how a quantity in unit id from is expressed in unit id
 * to (both >= 1); *factor points at the factor for MUL and DIV.
 */
extern IncConversionKind inc_units_lookup(const IncUnits *u, int from, int to,
										  const IncDec **factor);

/*
 * inc_units_convert_ids: quantity (in unit from) expressed in unit to
 * (both ids >= 1) into *out; false when no conversion joins them.
 */
extern bool inc_units_convert_ids(const IncUnits *u, const IncDec *quantity,
								  int from, int to, IncRat *out);

#endif							/* INC_UNITS_H */
