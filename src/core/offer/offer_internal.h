/*
 * offer_internal.h
 *    Private interface between the offer parser's files.
 *
 * offer_json.c owns the parse state (IncOfferParse): the JSON path of the
 * field being read, the offer key once known, and the jump back to
 * inc_offer_from_json when a fault is found.  Its typed accessors
 * (inc_oj_*) read one field of a json-c object, check its type and the
 * simple rules every field shares (required, non-empty, sign, range), copy
 * strings into inc_alloc memory and, on the first fault, format the whole
 * message and jump out; they never return an invalid value.  offer_parse.c
 * uses them to walk the strategy structures.
 *
 * Path handling: inc_oj_push_field / inc_oj_push_index append ".name" or
 * "[i]" to the path and return the previous length, which the caller hands
 * back to inc_oj_pop.  inc_oj_fail reports the current path.
 */
#ifndef INC_OFFER_INTERNAL_H
#define INC_OFFER_INTERNAL_H

#include <setjmp.h>

#include "offer.h"
#include "offer_fields.h"

struct json_object;

/* Longest JSON path we build; paths only hold documented field names and indexes. */
#define INC_OJ_PATH_LEN 256

typedef struct IncOfferParse
{
	IncOfferError *err;			/* where the message goes */
	const IncOfferChecks *checks;	/* NULL: a lenient read, no findings */
	IncObjectFamily family;		/* the offer's strategy, once read */
	const char *offer_key;		/* NULL until offer_key has been read */
	jmp_buf		jump;			/* back to inc_offer_from_json */
	size_t		pathlen;
	char		path[INC_OJ_PATH_LEN];
} IncOfferParse;

/* Field flags for strings and arrays. */
#define INC_OJ_REQUIRED		0x01	/* absent: "is required" */
#define INC_OJ_NONEMPTY		0x02	/* "" or []: "must not be empty" */

/* Sign rule for numbers. */
typedef enum IncOjSign
{
	INC_OJ_ANY = 0,
	INC_OJ_NONNEG,				/* "must be >= 0" */
	INC_OJ_POSITIVE				/* "must be > 0" */
} IncOjSign;

/* Path building. */
extern size_t inc_oj_push_field(IncOfferParse *p, const char *name);
extern size_t inc_oj_push_index(IncOfferParse *p, int index);
extern void inc_oj_pop(IncOfferParse *p, size_t len);

/* Report "PATH problem" for the current path and jump out. */
extern void inc_oj_fail(IncOfferParse *p, const char *fmt,...)
			INC_NORETURN INC_PRINTF(2, 3);

/* The same for field name of the current path (NULL: the current path). */
extern void inc_oj_fail_at(IncOfferParse *p, const char *name,
						   const char *fmt,...) INC_NORETURN INC_PRINTF(3, 4);

/*
 * Field lookup: true when obj has the field (*val is then NULL for a JSON
 * null); false when it is absent.
 */
extern bool inc_oj_lookup(struct json_object *obj, const char *name,
						  struct json_object **val);

/*
 * Values whose path is already pushed; val may be NULL (JSON null), which
 * is a value of the wrong type.
 */
extern char *inc_oj_string_value(IncOfferParse *p, struct json_object *val,
								 int flags);
extern IncDec inc_oj_number_value(IncOfferParse *p, struct json_object *val,
								  IncOjSign sign);
extern struct json_object *inc_oj_object_value(IncOfferParse *p,
											   struct json_object *val);

/*
 * Fields of obj.  An optional field (no INC_OJ_REQUIRED) that is absent or
 * null reads as NULL / an empty array.  Numbers and objects passed to
 * these are always required.
 */
extern char *inc_oj_string(IncOfferParse *p, struct json_object *obj,
						   const char *name, int flags);
extern IncDec inc_oj_number(IncOfferParse *p, struct json_object *obj,
							const char *name, IncOjSign sign);
extern struct json_object *inc_oj_object(IncOfferParse *p,
										 struct json_object *obj,
										 const char *name);

/*
 * inc_oj_date: the required date field name of obj as days since
 * 2000-01-01; "must be a date (YYYY-MM-DD)", or "\"2026-02-30\" is not a
 * valid calendar date (...)" for that form naming no day.
 */
extern int32_t inc_oj_date(IncOfferParse *p, struct json_object *obj, const char *name);

/*
 * inc_oj_array: the array field name of obj and its length through *len
 * (*arr NULL and *len 0 for an optional array that is absent or null).
 */
extern void inc_oj_array(IncOfferParse *p, struct json_object *obj,
						 const char *name, int flags,
						 struct json_object **arr, int *len);

/*
 * inc_oj_fields: check every field of obj (an object of kind, its path
 * pushed) against the contract's (offer_fields.h) as p->checks says: an
 * unknown field is ignored, a finding or the error; under writing, an
 * annotation field that is not a string is the error.  Nothing when obj
 * is not an object (its reader reports that).
 */
extern void inc_oj_fields(IncOfferParse *p, struct json_object *obj, IncObjectKind kind);

/*
 * inc_oj_stored: does the stored document have val at the current path
 * (p->checks->stored)?  false when there is no stored document.
 */
extern bool inc_oj_stored(IncOfferParse *p, struct json_object *val);

/* inc_oj_finding: report a finding at the current path (p->checks->finding). */
extern void inc_oj_finding(IncOfferParse *p, const char *code, struct json_object *val,
						   const char *fmt,...) INC_PRINTF(4, 5);

/* Element i of an array (NULL for a JSON null). */
extern struct json_object *inc_oj_element(struct json_object *arr, int i);

/*
 * The state of one compilation besides the JSON path (offer_parse.c
 * creates it; offer_build.c and offer_rules.c read and fill it).
 */
struct IncStrMap;

typedef struct IncOfferBuild
{
	IncOfferParse *p;
	IncOffer   *offer;
	struct IncStrMap *periods;	/* period key -> IncPeriod * */
	struct IncStrMap *rate_keys;	/* incentive_rate_key -> itself */
	struct IncStrMap *sets;		/* stacked: set key -> IncSkuSet * */
	struct IncStrMap **set_skus;	/* stacked, per set: conversion SKU -> itself */
} IncOfferBuild;

/* Building blocks of the structure walks (offer_build.c). */
extern void *inc_ob_alloc_array(int n, size_t size);
extern bool inc_ob_seen(struct IncStrMap *map, const char *key);
extern int	inc_ob_period_key(IncOfferBuild *b, struct json_object *obj);
extern int	inc_ob_choice(IncOfferBuild *b, struct json_object *obj, const char *field,
						  const char *const *names, int n, int dflt);
extern void inc_ob_key_list(IncOfferBuild *b, struct json_object *obj, const char *name,
							int *n, char ***keys);
extern void inc_ob_filters(IncOfferBuild *b, struct json_object *obj, const char *name,
						   IncFilter **filters, int *nfilters);

/*
 * inc_ob_objects: the walk of an array of objects.  Reads the array field
 * name of obj (flags as for inc_oj_array; its length goes to *n, which is
 * set before the first call of fn), allocates *n elements of size bytes
 * and calls fn on each item object, in order, with its element and ctx,
 * the path at name[i].  Returns the elements.
 */
typedef void (*IncObItemFn) (IncOfferBuild *b, struct json_object *obj,
							 void *elem, void *ctx);
extern void *inc_ob_objects(IncOfferBuild *b, struct json_object *obj, const char *name,
							int flags, int *n, size_t size, IncObItemFn fn, void *ctx);

/*
 * The program rules' walk (offer_rules.c), called by offer_parse.c:
 * inc_ob_tier_mode reads incentive.tier_mode of a stepped or stacked
 * offer, before the rest of incentive (inc_ob_match: incentive.match of a
 * stacked offer); inc_ob_check_tier_mode checks an
 * incremental stepped offer once its threshold and tiers are read;
 * inc_ob_rules reads enrollment, requirements and limits after the
 * strategy's structure.
 */
extern void inc_ob_tier_mode(IncOfferBuild *b, struct json_object *incentive);
extern void inc_ob_match(IncOfferBuild *b, struct json_object *incentive);
extern void inc_ob_check_tier_mode(IncOfferBuild *b);
extern void inc_ob_rules(IncOfferBuild *b, struct json_object *root);

/*
 * The growth walk (offer_growth.c), called by offer_parse.c and
 * offer_rules.c: inc_ob_baseline reads the baseline of a growth threshold
 * or requirement (refused for the other types); inc_ob_pays_on reads
 * incentive.pays_on of a stepped offer, with tier_mode;
 * inc_ob_growth_threshold checks a tier's threshold under a growth type;
 * inc_ob_check_pays_on checks pays_on once the stepped structure is read.
 */
extern void inc_ob_baseline(IncOfferBuild *b, struct json_object *obj, IncThresholdType type,
							IncBaseline *out);
extern void inc_ob_pays_on(IncOfferBuild *b, struct json_object *incentive);
extern void inc_ob_growth_threshold(IncOfferBuild *b, const IncDec *threshold);
extern void inc_ob_check_pays_on(IncOfferBuild *b);

/*
 * inc_offer_from_json (offer_parse.c): compile a parsed offer document.
 * Returns the offer (allocated with inc_alloc), or NULL with err filled.
 * checks as for inc_offer_parser_check (NULL: none).  Keeps no pointer
 * into root; the caller still owns root and releases it.
 */
extern IncOffer *inc_offer_from_json(struct json_object *root, const IncOfferChecks *checks,
									 IncOfferError *err);

#endif							/* INC_OFFER_INTERNAL_H */
