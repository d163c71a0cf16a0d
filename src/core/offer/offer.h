/*
 * offer.h
 *    The offer model: an offer document compiled into plain C structs.
 *
 * offer_parse.c builds an IncOffer from an offer document (docs/reference.md:
 * Offers, Standard, Stepped, Stacked), checking every rule of Bad input on
 * the way; the strategies read it.
 * All strings are NUL-terminated copies owned by the allocator that was
 * current when the offer was parsed (inc_alloc), never json-c memory.
 * Indexes into sibling arrays (period, set) are resolved at parse time, so
 * the calculation never looks a key up by name.
 */
#ifndef INC_OFFER_H
#define INC_OFFER_H

#include "../numbers/core.h"

typedef enum IncStrategy
{
	INC_STANDARD = 0,
	INC_STEPPED,
	INC_STACKED
} IncStrategy;

#define INC_NSTRATEGIES 3

typedef enum IncCalculator
{
	INC_PERCENT_OF_AMOUNT = 0,
	INC_DOLLARS_PER_UNIT,
	INC_FIXED_AMOUNT,
	INC_DOLLARS_PER_COVERAGE_UNIT
} IncCalculator;

#define INC_NCALCULATORS 4

/*
 * The names of strategies, calculators and threshold types as written in
 * documents and reported in results, indexed by their enum (offer.c): the
 * parser reads them from these tables and every report writes them from
 * these functions.
 */
extern const char *const inc_strategy_names[INC_NSTRATEGIES];
extern const char *const inc_calculator_names[INC_NCALCULATORS];
extern const char *inc_strategy_name(IncStrategy s);
extern const char *inc_calculator_name(IncCalculator c);

/* periods[]: both ends inclusive, as days since 2000-01-01 (PostgreSQL's DateADT). */
typedef struct IncPeriod
{
	char	   *key;
	int32_t		start_date;
	int32_t		end_date;
} IncPeriod;

/* prices[]: program price per unit of the SKU's unit of measure. */
typedef struct IncPrice
{
	char	   *sku_key;
	IncDec		price;
	int			index;			/* its place in the document's prices */
} IncPrice;

/*
 * A {sku_key, rate, measure} rate: standard entries and stacked sets.  A
 * standard entry's rate may name a product instead (docs/reference.md,
 * Products): product_key set and sku_key NULL.
 */
typedef struct IncSkuRate
{
	char	   *sku_key;
	char	   *product_key;	/* standard entries only; NULL otherwise */
	IncDec		rate;
	char	   *measure;		/* "percent" or "dollars" */
	IncDec		pay_rate;		/* as rows report it (inc_offer_pay_rate) */
} IncSkuRate;

/* standard: one incentives[] entry. */
typedef struct IncStandardEntry
{
	char	   *key;			/* as written, or {period_key}_{transaction_type} */
	char	   *label;			/* NULL when absent */
	int			period;			/* index into IncOffer.periods */
	char	   *transaction_type;
	int			nrates;
	IncSkuRate *rates;
	int			nexclude_skus;	/* SKUs that take no rate of the entry */
	char	  **exclude_sku_keys;
	int			nexclude_products;	/* products whose SKUs take none */
	char	  **exclude_product_keys;
} IncStandardEntry;

/*
 * An earning, threshold, requirement or growth filter.  A SKU matches when
 * it is listed in sku_keys or is in a listed product on the transaction's
 * date, and is neither listed in exclude_sku_keys nor in an excluded
 * product on that date (docs/reference.md, Products).
 */
typedef struct IncFilter
{
	int			period;			/* index into IncOffer.periods */
	char	   *transaction_type;
	int			nskus;
	char	  **sku_keys;
	int			nproducts;
	char	  **product_keys;
	int			nexclude_skus;
	char	  **exclude_sku_keys;
	int			nexclude_products;
	char	  **exclude_product_keys;
} IncFilter;

typedef enum IncThresholdType
{
	INC_THRESHOLD_AMOUNT = 0,	/* aggregated_amount */
	INC_THRESHOLD_QUANTITY,		/* aggregated_quantity */
	INC_THRESHOLD_PROPERTY,		/* property */
	INC_THRESHOLD_GROWTH_AMOUNT,	/* growth_amount: aggregated_amount over a baseline */
	INC_THRESHOLD_GROWTH_QUANTITY,	/* growth_quantity: aggregated_quantity over a baseline */
	INC_THRESHOLD_DISTINCT_PRODUCTS /* distinct_products: requirements only */
} IncThresholdType;

#define INC_NTHRESHOLD_TYPES 6

/* The types a stepped threshold_definition may have: the first ones. */
#define INC_NSTEPPED_THRESHOLD_TYPES 5

/* threshold_definition.type names, as the strategy names above. */
extern const char *const inc_threshold_type_names[INC_NTHRESHOLD_TYPES];
extern const char *inc_threshold_type_name(IncThresholdType t);

/* inc_threshold_growth: a growth type (docs/reference.md, Growth over a baseline)? */
static inline bool
inc_threshold_growth(IncThresholdType t)
{
	return t == INC_THRESHOLD_GROWTH_AMOUNT || t == INC_THRESHOLD_GROWTH_QUANTITY;
}

/* inc_threshold_quantity: does the type sum quantities (else amounts, or a property)? */
static inline bool
inc_threshold_quantity(IncThresholdType t)
{
	return t == INC_THRESHOLD_QUANTITY || t == INC_THRESHOLD_GROWTH_QUANTITY;
}

/*
 * The baseline of a growth type (docs/reference.md, Growth over a
 * baseline): the same sum over the transactions dated start_date..end_date
 * (both inclusive, days since 2000-01-01) instead of the filters' periods,
 * or the value of a property.  INC_BASELINE_NONE for the other types.
 */
typedef enum IncBaselineKind
{
	INC_BASELINE_NONE = 0,
	INC_BASELINE_DATES,
	INC_BASELINE_PROPERTY
} IncBaselineKind;

typedef struct IncBaseline
{
	IncBaselineKind kind;
	int32_t		start_date;		/* dates */
	int32_t		end_date;		/* dates */
	char	   *property_key;	/* property */
} IncBaseline;

/* incentive.pays_on: what the tier met pays on (growth types). */
typedef enum IncPaysOn
{
	INC_PAYS_ON_ALL_VOLUME = 0, /* every earning transaction (the default) */
	INC_PAYS_ON_GROWTH			/* only the growth: rows scaled by (C - B) / C */
} IncPaysOn;

#define INC_NPAYS_ON 2

extern const char *const inc_pays_on_names[INC_NPAYS_ON];
extern const char *inc_pays_on_name(IncPaysOn p);

typedef struct IncTier
{
	char	   *key;			/* as written, or {value}_{measure}_greater_than_or_equal_to_{threshold} */
	IncDec		threshold;
	IncDec		value;
	char	   *measure;
	IncDec		pay_rate;		/* value as rows report it (inc_offer_pay_rate) */
	int			index;			/* its place in the document's incentive.rates */
} IncTier;

/* incentive.tier_mode (docs/reference.md, Incremental tiers). */
typedef enum IncTierMode
{
	INC_TIERS_ALL_VOLUME = 0,	/* the tier met applies to every earning transaction */
	INC_TIERS_INCREMENTAL		/* each tier earns on its band: a blended rate */
} IncTierMode;

#define INC_NTIER_MODES 2

extern const char *const inc_tier_mode_names[INC_NTIER_MODES];
extern const char *inc_tier_mode_name(IncTierMode m);

typedef struct IncStepped
{
	IncTierMode tier_mode;
	IncPaysOn	pays_on;
	int			nfilters;
	IncFilter  *filters;
	IncThresholdType threshold_type;
	int			nthreshold_filters;	/* 0 for property */
	IncFilter  *threshold_filters;
	char	   *property_key;	/* property only */
	IncBaseline baseline;		/* growth types only */
	int			ntiers;
	IncTier    *tiers;			/* sorted by threshold, ascending */
} IncStepped;

/* stacked: conversion.rates[] entry: `rate` from-units per coverage unit. */
typedef struct IncConversionRate
{
	char	   *sku_key;
	IncDec		rate;			/* > 0 */
	char	   *from_uom;
	int			pay_rate;		/* index into the set's rates, or -1: pays 0 */
} IncConversionRate;

typedef struct IncSkuSet
{
	char	   *key;
	int			period;			/* index into IncOffer.periods */
	char	   *transaction_type;
	char	   *coverage_unit;
	int			nconversions;
	IncConversionRate *conversions;
	int			nrates;
	IncSkuRate *rates;			/* pay rates; a SKU absent here pays 0 */
} IncSkuSet;

typedef struct IncStack
{
	char	   *key;			/* as written, or set keys joined with _and_ */
	int			nsets;
	int		   *sets;			/* indexes into IncStacked.sets */
} IncStack;

/*
 * incentive.match of a stacked offer (docs/reference.md, Growers): whose
 * coverage overlaps, the aggregation key's (the default) or each of its
 * growers' (a transaction without a grower_key then takes part in none).
 */
typedef enum IncMatch
{
	INC_MATCH_PARTICIPANT = 0,
	INC_MATCH_GROWER
} IncMatch;

#define INC_NMATCHES 2

extern const char *const inc_match_names[INC_NMATCHES];
extern const char *inc_match_name(IncMatch m);

typedef struct IncStacked
{
	IncMatch	match;
	int			nsets;
	IncSkuSet  *sets;
	int			nstacks;
	IncStack   *stacks;
} IncStacked;

/*
 * Program rules (docs/reference.md, Program rules): optional fields of
 * every strategy, applied per participant and offer in the order
 * enrollment -> requirements -> the strategy -> limits (rules.c).
 */
typedef enum IncEnrollment
{
	INC_ENROLLMENT_OPEN = 0,	/* everyone may earn (the default) */
	INC_ENROLLMENT_REQUIRED		/* only transactions inside an enrollment window */
} IncEnrollment;

#define INC_NENROLLMENTS 2

extern const char *const inc_enrollment_names[INC_NENROLLMENTS];
extern const char *inc_enrollment_name(IncEnrollment e);

/*
 * aggregation: whose transactions an offer's figures are computed over
 * (docs/reference.md, Participant groups): each participant's own, or
 * every transaction of the aggregation key (the participant's group on the
 * transaction's date, else the participant).
 */
typedef enum IncAggregation
{
	INC_AGGREGATE_PARTICIPANT = 0,	/* the default */
	INC_AGGREGATE_GROUP
} IncAggregation;

#define INC_NAGGREGATIONS 2

extern const char *const inc_aggregation_names[INC_NAGGREGATIONS];
extern const char *inc_aggregation_name(IncAggregation a);

/*
 * A requirement's scope: the aggregation key's transactions (the default;
 * "group"), each member's own transactions of it in a group offer, or
 * each grower's transactions of it in any offer (docs/reference.md,
 * Growers); a member or grower that fails loses its rows, its volume
 * still counted.
 */
typedef enum IncScope
{
	INC_SCOPE_GROUP = 0,
	INC_SCOPE_MEMBER,
	INC_SCOPE_GROWER
} IncScope;

#define INC_NSCOPES 3

extern const char *const inc_scope_names[INC_NSCOPES];
extern const char *inc_scope_name(IncScope s);

/*
 * requirements[]: a qualification gate, met when its value >= minimum.
 * type is an IncThresholdType: aggregated_amount / aggregated_quantity sum
 * over filters exactly as a stepped threshold does; property reads
 * property_key (a missing property fails the requirement); the growth
 * types compare the growth percentage over baseline (none: not met);
 * distinct_products counts the listed products in which the transactions
 * matching filters have a net provided amount > 0 (minimum: a whole
 * number from 1 to nproducts).
 */
typedef struct IncRequirement
{
	char	   *key;
	IncThresholdType type;
	IncDec		minimum;
	int			nfilters;		/* 0 for property */
	IncFilter  *filters;
	char	   *property_key;	/* property only */
	IncScope	scope;			/* member: only in a group offer */
	IncBaseline baseline;		/* growth types only */
	int			nproducts;		/* distinct_products: the listed products */
	char	  **product_keys;
} IncRequirement;

/* limits: dollars per participant for the whole offer. */
typedef struct IncLimits
{
	bool		has_minimum;
	IncDec		minimum;		/* >= 0: below it, no rows */
	bool		has_maximum;
	IncDec		maximum;		/* > 0: above it, rows scaled down to it */
} IncLimits;

typedef struct IncRules
{
	bool		any;			/* some rule besides the defaults: the engine
								 * runs the offer through rules.c */
	IncEnrollment enrollment;
	int			nrequirements;
	IncRequirement *requirements;
	int			nmember_requirements;	/* those of scope member */
	int			ngrower_requirements;	/* those of scope grower */
	IncLimits	limits;
} IncRules;

typedef struct IncOffer IncOffer;

/* One version of an offer's rate schedule (docs/lifecycle.md, Prospective rate changes). */
typedef struct IncRateVersion
{
	int32_t		effective_from;	/* the first date its rate values apply (days since 2000-01-01); the first version: INT32_MIN */
	const IncOffer *offer;		/* that version, compiled: the same structure as the current one */
} IncRateVersion;

struct IncOffer
{
	char	   *offer_key;
	char	   *label;			/* NULL when absent */
	IncStrategy strategy;
	IncCalculator calculator;
	int			nperiods;
	IncPeriod  *periods;
	int			nprices;
	IncPrice   *prices;			/* sorted by sku_key (byte order) */
	const char *currency;		/* the currency of its amounts, prices and
								 * limits (docs/reference.md, Currencies):
								 * three upper-case letters; NULL: none */
	/* exactly one of these is filled, by strategy */
	int			nentries;		/* standard */
	IncStandardEntry *entries;
	IncStepped	stepped;		/* stepped */
	IncStacked	stacked;		/* stacked */
	IncRules	rules;			/* program rules, every strategy */
	IncAggregation aggregation;
	const char *group_type;		/* group offers: the type of group that
								 * aggregates (docs/reference.md, Participant
								 * hierarchies); NULL: the immediate group */

	/*
	 * The rate schedule (docs/lifecycle.md, Prospective rate changes):
	 * versions that differ from this one only in rate values, ascending
	 * effective_from, entry 0 the base version (effective_from INT32_MIN);
	 * 0 / NULL: no schedule.  Set only by inc_engine_add_offer_schedule.
	 */
	int			nschedule;
	const IncRateVersion *schedule;
};

/* inc_offer_at: the version of offer whose rate values apply to a transaction dated date (offer itself without a schedule). */
extern const IncOffer *inc_offer_at(const IncOffer *offer, int32_t date);

/*
 * inc_offer_version: the index into offer->schedule of the version whose
 * rate values apply on date (the latest one whose effective_from <= date;
 * 0 for a date before every later one); 0 without a schedule.
 */
extern int	inc_offer_version(const IncOffer *offer, int32_t date);

/* A parse/validation failure: the complete message for the user. */
#define INC_OFFER_ERROR_LEN 1024
typedef struct IncOfferError
{
	/*
	 * "invalid offer \"KEY\": PATH problem", e.g.
	 * invalid offer "x": incentive.rates[1].threshold must be a number
	 * or, when the document has no usable offer_key,
	 * "invalid offer (no offer_key): offer_key is required".
	 */
	char		message[INC_OFFER_ERROR_LEN];
} IncOfferError;

/*
 * Parsing offer text.  Every host (the PostgreSQL glue for stored offers,
 * offer_error() and the calculation, the unit tests, the fuzzers) goes
 * through inc_offer_parser_run, with the same rules: strict JSON (RFC
 * 8259: no comments, single quotes or trailing commas), only whitespace
 * after the document, at most INC_OFFER_MAX_DEPTH levels of nesting
 * (unknown fields included; offers themselves nest about 6 deep).
 *
 * While it runs, the parser holds json-c memory (malloc'd, not inc_alloc
 * memory): the tokener and the document tree.  A normal return has
 * released both.  A host whose inc_alloc or inc_fail hook can unwind
 * (PostgreSQL's palloc and ereport longjmp) calls inc_offer_parser_release
 * on its cleanup path too (PG_FINALLY), which frees whatever is still
 * held; releasing twice is harmless.  json-c types are only named here, so
 * this header does not pull json-c's json_object typedef into files that
 * include PostgreSQL's fmgrprotos.h (which has a json_object function).
 */
#define INC_OFFER_MAX_DEPTH 1000

struct json_tokener;
struct json_object;

typedef struct IncOfferParser
{
	struct json_tokener *tokener;	/* NULL when released */
	struct json_object *root;	/* NULL when released */
} IncOfferParser;

/* inc_offer_parser_init: a parser holding nothing. */
extern void inc_offer_parser_init(IncOfferParser *parser);

/*
 * inc_offer_parser_run: compile len bytes of JSON text (no NUL needed)
 * into an offer (allocated with inc_alloc), or NULL with err filled
 * ("invalid offer ...": text that is not JSON is an invalid offer too).
 */
extern IncOffer *inc_offer_parser_run(IncOfferParser *parser, const char *json,
									  size_t len, IncOfferError *err);

/*
 * What a parse checks besides the rules every stored document follows
 * (docs/reference.md, Strict offers and Offer warnings).
 *
 * unknown_fields: what a field that no object of the contract defines
 * (offer_fields.h) does: nothing (a stored document read for a
 * calculation or from history), a finding, or the parse's error
 * ("invalid offer \"KEY\": PATH is not a field of OBJECT; ADVICE").
 *
 * writing: the document is being written, so it is also refused when a
 * percent rate or tier value is above 100, an annotation field is not a
 * string, or its settlement is not {"holdback_percent": 0 <= h < 100}
 * (which only a write checks: the calculation does not read it).
 *
 * stored (may be NULL): the document stored before this write has this
 * very field, with this value (JSON text), at this path; such a field,
 * unknown or above 100, is then a finding, never the error (a stored
 * document's fields never make a later edit fail).
 *
 * finding (may be NULL): called for each unknown field not refused (code
 * unknown_field) and each implausible rate (code implausible_rate: a
 * percent value above 25 or below 0.1 but not 0, or a percent tier above
 * 4 times the next lower tier's non-zero value), with the path, a message
 * (the path first) and the value as JSON text.  Called during the parse;
 * the findings of a document that turns out invalid mean nothing.
 */
typedef enum IncUnknownFields
{
	INC_UNKNOWN_IGNORE = 0,
	INC_UNKNOWN_REPORT,
	INC_UNKNOWN_REFUSE
} IncUnknownFields;

typedef struct IncOfferChecks
{
	IncUnknownFields unknown_fields;
	bool		writing;
	bool		(*stored) (void *ctx, const char *path, const char *value);
	void		(*finding) (void *ctx, const char *path, const char *code,
							const char *message, const char *value);
	void	   *ctx;
} IncOfferChecks;

/*
 * inc_offer_parser_check: inc_offer_parser_run with checks (NULL: those
 * of inc_offer_parser_run, which ignores unknown fields and reports
 * nothing).
 */
extern IncOffer *inc_offer_parser_check(IncOfferParser *parser, const char *json,
										size_t len, const IncOfferChecks *checks,
										IncOfferError *err);

/*
 * inc_offer_parser_tree: the first step of a parse alone: len bytes of
 * JSON text into parser->root, under the limits every parse has; false
 * with err filled (and nothing held) when the text is not JSON.  The
 * caller releases the parser.
 */
extern bool inc_offer_parser_tree(IncOfferParser *parser, const char *json, size_t len,
								  IncOfferError *err);

/* inc_offer_parser_release: free the json-c memory the parser holds. */
extern void inc_offer_parser_release(IncOfferParser *parser);

/*
 * inc_offer_parse: inc_offer_parser_run with a parser of its own, for
 * hosts whose hooks do not unwind (tests, fuzzers).
 */
extern IncOffer *inc_offer_parse(const char *json, size_t len, IncOfferError *err);

/*
 * inc_offer_span: the offer's span, its earliest period start to its
 * latest period end (docs/reference.md, Forecast).
 */
extern void inc_offer_span(const IncOffer *offer, int32_t *start, int32_t *end);

/*
 * inc_offer_span_days: the days of the offer's span (span_days) and how
 * many of them have gone by on as_of_date, counting it (elapsed_days: at
 * most span_days; 0 or less before the span starts).
 */
extern void inc_offer_span_days(const IncOffer *offer, int32_t as_of_date,
								int32_t *span_days, int32_t *elapsed_days);

/*
 * inc_offer_pay_rate: a rate as rows report it (offer_sku_pay_rate) under
 * calculator calc: exact for percent (rate / 100) and dollars (rate),
 * shortest form.  The parser stores it with each rate and tier.
 */
extern IncDec inc_offer_pay_rate(IncCalculator calc, const IncDec *rate);

/*
 * inc_currency_code: is s a currency code as an offer writes it (three
 * upper-case ASCII letters, the form of ISO 4217)?
 */
extern bool inc_currency_code(const char *s);

/* inc_offer_price: the program price of sku, or NULL when the offer has none. */
extern const IncDec *inc_offer_price(const IncOffer *offer, const char *sku_key);

/*
 * Dates.  inc_date_parse: "YYYY-MM-DD" (exactly that form, a real
 * calendar day, years 1..9999) to days since 2000-01-01; false when not.
 */
extern bool inc_date_parse(const char *s, int32_t *days);

/*
 * inc_date_problem: the same, NULL for a date, else the problem as the
 * parser's messages end (docs/reference.md, Invalid offers), into buf
 * (cap >= 96 bytes):
 *   must be a date (YYYY-MM-DD)                     not of that form
 *   "2026-02-30" is not a valid calendar date (February 2026 has 28 days)
 *                                                   that form, no such day
 */
extern const char *inc_date_problem(const char *s, int32_t *days, char *buf, size_t cap);

/*
 * inc_date_format: days since 2000-01-01 as "YYYY-MM-DD" into buf (cap >=
 * 11 bytes), the inverse of inc_date_parse for years 1..9999.
 */
extern void inc_date_format(int32_t days, char *buf, size_t cap);

/*
 * What an offer reads, as incentives.program_skus and offer_warnings list
 * it (offer_refs.c, docs/reference.md, Checking a program book): each SKU
 * key with its role, each product key and excluded SKU or product, each
 * transaction_type and each period, with the JSON path it is written at.
 */
typedef enum IncRefKind
{
	INC_REF_SKU = 0,
	INC_REF_TRANSACTION_TYPE,
	INC_REF_PERIOD,
	INC_REF_PRODUCT,			/* a listed product (product_keys, a product_key rate) */
	INC_REF_EXCLUDED_SKU,		/* exclude_sku_keys */
	INC_REF_EXCLUDED_PRODUCT	/* exclude_product_keys */
} IncRefKind;

typedef struct IncOfferRef
{
	IncRefKind	kind;
	const char *path;
	const char *role;			/* earning, threshold, requirement, set:KEY,
								 * price, conversion; NULL for a period */
	const char *sku_key;		/* a SKU (sku, excluded_sku) */
	const char *product_key;	/* a product (product, excluded_product); the
								 * listed product a SKU is read through */
	const char *transaction_type;	/* of the item holding it; NULL for prices */
	const IncPeriod *period;	/* the same; a period's own */
	int32_t		from;			/* a SKU read through a product: the days of */
	int32_t		to;				/* the period it is in the product (inclusive) */
	const char *from_uom;		/* a stacked conversion's from */
	bool		per_unit;		/* paid dollars per unit of the SKU's unit */
} IncOfferRef;

typedef void (*IncOfferRefFn) (void *ctx, const IncOfferRef *ref);

/* inc_offer_references: fn for every reference of offer, in document order. */
extern void inc_offer_references(const IncOffer *offer, IncOfferRefFn fn, void *ctx);

/*
 * inc_offer_references_through: the same, and after the keys of each
 * filter and standard entry, every SKU it reads through a listed product
 * in the catalog products (kind sku, with product_key, from and to), at
 * the path of that product (offer_refs.c).
 */
struct IncProducts;
extern void inc_offer_references_through(const IncOffer *offer, struct IncProducts *products,
										 IncOfferRefFn fn, void *ctx);

#endif							/* INC_OFFER_H */
