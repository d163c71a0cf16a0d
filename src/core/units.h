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
 */
#ifndef INC_UNITS_H
#define INC_UNITS_H

#include "rational.h"

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
 * inc_units_convert: quantity (in from_uom) expressed in to_uom into *out;
 * false when the units differ and no conversion joins them.
 */
extern bool inc_units_convert(const IncUnits *u, const IncDec *quantity,
							  const char *from_uom, const char *to_uom, IncRat *out);

#endif							/* INC_UNITS_H */
