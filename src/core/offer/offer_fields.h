/*
 * offer_fields.h
 *    The fields of every object of an offer document, and of the request
 *    document of incentives.calculate(jsonb): the one table the parser
 *    checks documents against, the suggestions for a misspelled field come
 *    from, and the reference's list of fields is tested against
 *    (docs/reference.md, Fields of every object).
 *
 * Besides its fields, every object of an offer accepts the annotation
 * fields label, description and name (strings); the offer itself also
 * metadata (any JSON value).  They never change a figure.
 */
#ifndef INC_OFFER_FIELDS_H
#define INC_OFFER_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum IncObjectKind
{
	INC_OBJ_OFFER = 0,
	INC_OBJ_PERIOD,
	INC_OBJ_PRICE,
	INC_OBJ_STANDARD_ENTRY,
	INC_OBJ_STANDARD_RATE,
	INC_OBJ_STEPPED_INCENTIVE,
	INC_OBJ_FILTER,
	INC_OBJ_THRESHOLD_DEFINITION,
	INC_OBJ_THRESHOLD_PROPERTY,
	INC_OBJ_BASELINE,
	INC_OBJ_BASELINE_PROPERTY,
	INC_OBJ_TIER,
	INC_OBJ_STACKED_INCENTIVE,
	INC_OBJ_SKU_SET,
	INC_OBJ_CONVERSION,
	INC_OBJ_CONVERSION_RATE,
	INC_OBJ_SET_RATE,
	INC_OBJ_STACK,
	INC_OBJ_REQUIREMENT,
	INC_OBJ_REQUIREMENT_PROPERTY,
	INC_OBJ_LIMITS,
	INC_OBJ_SETTLEMENT,
	INC_OBJ_REQUEST,
	INC_OBJ_REQUEST_ENROLLMENT
} IncObjectKind;

#define INC_NOBJECT_KINDS 24

/* Which documents have an object: every offer, one strategy's, the request. */
typedef enum IncObjectFamily
{
	INC_FAMILY_OFFER = 0,
	INC_FAMILY_STANDARD,
	INC_FAMILY_STEPPED,
	INC_FAMILY_STACKED,
	INC_FAMILY_REQUEST
} IncObjectFamily;

typedef struct IncObjectFields
{
	const char *name;			/* the object as messages and the reference name it */
	const char *path;			/* where it is written, as "belongs in" says */
	IncObjectFamily family;
	const char *const *fields;	/* its own fields, NULL-terminated */
	bool		annotations;	/* accepts label, description and name */
} IncObjectFields;

/* Indexed by IncObjectKind. */
extern const IncObjectFields inc_object_fields[INC_NOBJECT_KINDS];

/* The annotation fields (NULL-terminated) and the offer's metadata. */
extern const char *const inc_annotation_fields[];

#define INC_METADATA_FIELD "metadata"

/*
 * inc_object_field_known: is name a field of an object of kind (its own,
 * or an annotation where the kind accepts them)?
 */
extern bool inc_object_field_known(IncObjectKind kind, const char *name);

/* inc_object_field_annotation: is name an annotation field of kind? */
extern bool inc_object_field_annotation(IncObjectKind kind, const char *name);

/*
 * inc_object_field_advice: for a field name that is not one of kind's,
 * what it was probably meant to be, into buf (cap bytes):
 *   did you mean "maximum"?            the field of kind that name is
 *                                      the same as, abbreviates or is near
 *                                      by the rule of every suggestion
 *                                      (util/names.h)
 *   tier_mode belongs in incentive     a field of another object (before a
 *                                      field that is only near)
 * or "" when none fits.  family is the document's: the strategy of the
 * offer (INC_FAMILY_OFFER when it is not known), whose objects the other
 * places are looked for among, or INC_FAMILY_REQUEST.
 */
extern void inc_object_field_advice(IncObjectKind kind, IncObjectFamily family,
									const char *name, char *buf, size_t cap);

#endif							/* INC_OFFER_FIELDS_H */
