/*
 * offer_rules.c
 *    The offer parser's walk of the program rules (docs/reference.md,
 *    Program rules, Participant groups, Growers): incentive.tier_mode of a
 *    stepped offer, incentive.match of a stacked one, and the aggregation,
 *    enrollment, requirements (with their scope) and limits fields every
 *    strategy may carry.
 *
 * Called by offer_parse.c: the tier mode's value when the incentive object
 * is entered, its compatibility with the calculator, the threshold type
 * and the thresholds once the stepped structure is read, and the other
 * rules after the strategy's structure, in the order the reference lists
 * them.  Faults are reported in the `invalid offer "KEY": PATH problem`
 * form, like every other rule of the parser.  An offer whose rules are
 * all defaults (open enrollment, no requirements, no limits) compiles to
 * rules.any == false, and the engine then never looks at them.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "offer_internal.h"
#include "../util/strmap.h"

/*
 * inc_ob_tier_mode: incentive.tier_mode, "all_volume" (the default) or
 * "incremental"; only a stepped offer may have one.
 */
void
inc_ob_tier_mode(IncOfferBuild *b, struct json_object *incentive)
{
	IncOffer   *offer = b->offer;
	struct json_object *val;

	if (offer->strategy != INC_STEPPED)
	{
		if (inc_oj_lookup(incentive, "tier_mode", &val) && val != NULL)
			inc_oj_fail_at(b->p, "tier_mode", "is only for strategy \"%s\"",
						   inc_strategy_name(INC_STEPPED));
		return;
	}
	offer->stepped.tier_mode = (IncTierMode)
		inc_ob_choice(b, incentive, "tier_mode", inc_tier_mode_names,
					  INC_NTIER_MODES, INC_TIERS_ALL_VOLUME);
}

/*
 * inc_ob_match: incentive.match, "participant" (the default) or "grower";
 * only a stacked offer may have one.
 */
void
inc_ob_match(IncOfferBuild *b, struct json_object *incentive)
{
	IncOffer   *offer = b->offer;
	struct json_object *val;

	if (offer->strategy != INC_STACKED)
	{
		if (inc_oj_lookup(incentive, "match", &val) && val != NULL)
			inc_oj_fail_at(b->p, "match", "is only for strategy \"%s\"",
						   inc_strategy_name(INC_STACKED));
		return;
	}
	offer->stacked.match = (IncMatch)
		inc_ob_choice(b, incentive, "match", inc_match_names, INC_NMATCHES,
					  INC_MATCH_PARTICIPANT);
}

/*
 * inc_ob_check_tier_mode: an incremental stepped offer needs a rate
 * calculator (percent_of_amount or dollars_per_unit), an aggregated or
 * growth threshold and thresholds >= 0 (growth: >= -100, the band edges
 * B x (1 + t / 100) >= 0, checked per tier); each fault is reported at
 * incentive.tier_mode.  Tiers are sorted by then, so the first is the
 * lowest.
 */
void
inc_ob_check_tier_mode(IncOfferBuild *b)
{
	const IncOffer *offer = b->offer;
	const IncStepped *st = &offer->stepped;
	const char *mode = inc_tier_mode_name(INC_TIERS_INCREMENTAL);
	char		threshold[INC_NUM_BUF];

	if (st->tier_mode != INC_TIERS_INCREMENTAL)
		return;
	if (offer->calculator != INC_PERCENT_OF_AMOUNT &&
		offer->calculator != INC_DOLLARS_PER_UNIT)
		inc_oj_fail_at(b->p, "tier_mode", "\"%s\" is not allowed for calculator \"%s\"",
					   mode, inc_calculator_name(offer->calculator));
	if (st->threshold_type == INC_THRESHOLD_PROPERTY)
		inc_oj_fail_at(b->p, "tier_mode", "\"%s\" is not allowed for threshold type \"%s\"",
					   mode, inc_threshold_type_name(st->threshold_type));
	/* growth thresholds are >= -100 already: band edges >= 0 (offer_growth.c) */
	if (st->ntiers > 0 && !inc_threshold_growth(st->threshold_type) &&
		inc_dec_sign(&st->tiers[0].threshold) < 0)
	{
		inc_dec_format_short(&st->tiers[0].threshold, threshold, sizeof(threshold));
		inc_oj_fail_at(b->p, "tier_mode",
					   "\"%s\" requires every threshold to be >= 0 (%s is not)",
					   mode, threshold);
	}
}

/*
 * DistinctProducts: a distinct_products requirement's product_keys
 * (required, non-empty, distinct) and its minimum, a whole number from 1
 * to the number of listed products (2 and 2.0 alike); product_keys of
 * another type is refused.
 */
static void
DistinctProducts(IncOfferBuild *b, struct json_object *obj, IncRequirement *r)
{
	IncOfferParse *p = b->p;
	struct json_object *val;
	IncStrMap  *seen;
	IncDec		whole;
	int			j;

	if (r->type != INC_THRESHOLD_DISTINCT_PRODUCTS)
	{
		if (inc_oj_lookup(obj, "product_keys", &val) && val != NULL)
			inc_oj_fail_at(p, "product_keys", "is only for type \"%s\"",
						   inc_threshold_type_name(INC_THRESHOLD_DISTINCT_PRODUCTS));
		return;
	}
	if (!inc_oj_lookup(obj, "product_keys", &val) || val == NULL)
		inc_oj_fail_at(p, "product_keys", "is required for type \"%s\"",
					   inc_threshold_type_name(INC_THRESHOLD_DISTINCT_PRODUCTS));
	inc_ob_key_list(b, obj, "product_keys", &r->nproducts, &r->product_keys);
	seen = inc_strmap_create();
	for (j = 0; j < r->nproducts; j++)
		if (inc_ob_seen(seen, r->product_keys[j]))
		{
			inc_oj_push_field(p, "product_keys");
			inc_oj_push_index(p, j);
			inc_oj_fail(p, "duplicates product \"%s\"", r->product_keys[j]);
		}
	whole = inc_dec_trim(&r->minimum);
	if (whole.scale > 0 || whole.coef < 1 || whole.coef > r->nproducts)
		inc_oj_fail_at(p, "minimum",
					   "must be a whole number from 1 to %d (the number of product_keys) for type \"%s\"",
					   r->nproducts,
					   inc_threshold_type_name(INC_THRESHOLD_DISTINCT_PRODUCTS));
}

/*
 * One requirements[] item (path pushed): key, type, minimum, then filters
 * or property by type, the products of distinct_products, the scope, the
 * baseline of a growth type; then its key against the earlier ones
 * (keys).
 */
static void
ParseRequirement(IncOfferBuild *b, struct json_object *obj, void *elem, void *keys)
{
	IncOfferParse *p = b->p;
	IncRequirement *r = elem;

	inc_oj_fields(p, obj, INC_OBJ_REQUIREMENT);
	r->key = inc_oj_string(p, obj, "key", INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	r->type = (IncThresholdType) inc_ob_choice(b, obj, "type", inc_threshold_type_names,
											   INC_NTHRESHOLD_TYPES, -1);
	r->minimum = inc_oj_number(p, obj, "minimum", INC_OJ_ANY);
	if (r->type == INC_THRESHOLD_PROPERTY)
	{
		struct json_object *prop = inc_oj_object(p, obj, "property");
		size_t		top = inc_oj_push_field(p, "property");

		inc_oj_fields(p, prop, INC_OBJ_REQUIREMENT_PROPERTY);
		r->property_key = inc_oj_string(p, prop, "key", INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
		inc_oj_pop(p, top);
	}
	else
		inc_ob_filters(b, obj, "filters", &r->filters, &r->nfilters);
	DistinctProducts(b, obj, r);
	r->scope = (IncScope) inc_ob_choice(b, obj, "scope", inc_scope_names, INC_NSCOPES,
										INC_SCOPE_GROUP);
	if (r->scope == INC_SCOPE_MEMBER && b->offer->aggregation != INC_AGGREGATE_GROUP)
		inc_oj_fail_at(p, "scope", "\"%s\" is only for an offer with \"aggregation\": \"%s\"",
					   inc_scope_name(INC_SCOPE_MEMBER),
					   inc_aggregation_name(INC_AGGREGATE_GROUP));
	if (r->scope == INC_SCOPE_GROWER && r->type != INC_THRESHOLD_AMOUNT &&
		r->type != INC_THRESHOLD_QUANTITY && r->type != INC_THRESHOLD_DISTINCT_PRODUCTS)
		inc_oj_fail_at(p, "scope", "\"%s\" is only for types %s, %s and %s",
					   inc_scope_name(INC_SCOPE_GROWER),
					   inc_threshold_type_name(INC_THRESHOLD_AMOUNT),
					   inc_threshold_type_name(INC_THRESHOLD_QUANTITY),
					   inc_threshold_type_name(INC_THRESHOLD_DISTINCT_PRODUCTS));
	inc_ob_baseline(b, obj, r->type, &r->baseline);
	if (inc_ob_seen(keys, r->key))
		inc_oj_fail_at(p, "key", "duplicates requirement key \"%s\"", r->key);
}

/* requirements: optional; distinct keys; those of scope member and grower counted. */
static void
ParseRequirements(IncOfferBuild *b, struct json_object *root)
{
	IncRules   *rules = &b->offer->rules;
	int			r;

	rules->requirements = inc_ob_objects(b, root, "requirements", 0, &rules->nrequirements,
										 sizeof(IncRequirement), ParseRequirement,
										 inc_strmap_create());
	for (r = 0; r < rules->nrequirements; r++)
	{
		if (rules->requirements[r].scope == INC_SCOPE_MEMBER)
			rules->nmember_requirements++;
		if (rules->requirements[r].scope == INC_SCOPE_GROWER)
			rules->ngrower_requirements++;
	}
}

/*
 * An optional number field of obj (absent or null: false); sign as for
 * inc_oj_number.
 */
static bool
OptionalNumber(IncOfferParse *p, struct json_object *obj, const char *name,
			   IncOjSign sign, IncDec *out)
{
	struct json_object *val;
	size_t		top;

	if (!inc_oj_lookup(obj, name, &val) || val == NULL)
		return false;
	top = inc_oj_push_field(p, name);
	*out = inc_oj_number_value(p, val, sign);
	inc_oj_pop(p, top);
	return true;
}

/* limits: optional {minimum >= 0, maximum > 0}, minimum <= maximum. */
static void
ParseLimits(IncOfferBuild *b, struct json_object *root)
{
	IncOfferParse *p = b->p;
	IncLimits  *limits = &b->offer->rules.limits;
	struct json_object *obj;
	size_t		top;

	if (!inc_oj_lookup(root, "limits", &obj) || obj == NULL)
		return;
	top = inc_oj_push_field(p, "limits");
	inc_oj_object_value(p, obj);
	inc_oj_fields(p, obj, INC_OBJ_LIMITS);
	limits->has_minimum = OptionalNumber(p, obj, "minimum", INC_OJ_NONNEG, &limits->minimum);
	limits->has_maximum = OptionalNumber(p, obj, "maximum", INC_OJ_POSITIVE, &limits->maximum);
	if (limits->has_minimum && limits->has_maximum &&
		inc_dec_cmp(&limits->minimum, &limits->maximum) > 0)
		inc_oj_fail_at(p, "maximum", "must be >= limits.minimum");
	inc_oj_pop(p, top);
}

/*
 * inc_ob_rules: aggregation (first: a requirement's scope depends on it)
 * and group_type (only with it), enrollment, requirements, limits; then rules.any (an offer aggregated by
 * group needs no rules of its own: the engine calculates it per
 * aggregation key).
 */
void
inc_ob_rules(IncOfferBuild *b, struct json_object *root)
{
	IncRules   *rules = &b->offer->rules;

	b->offer->aggregation = (IncAggregation)
		inc_ob_choice(b, root, "aggregation", inc_aggregation_names,
					  INC_NAGGREGATIONS, INC_AGGREGATE_PARTICIPANT);
	b->offer->group_type = inc_oj_string(b->p, root, "group_type", INC_OJ_NONEMPTY);
	if (b->offer->group_type && b->offer->aggregation != INC_AGGREGATE_GROUP)
		inc_oj_fail_at(b->p, "group_type", "is only for an offer with \"aggregation\": \"%s\"",
					   inc_aggregation_name(INC_AGGREGATE_GROUP));
	rules->enrollment = (IncEnrollment)
		inc_ob_choice(b, root, "enrollment", inc_enrollment_names,
					  INC_NENROLLMENTS, INC_ENROLLMENT_OPEN);
	ParseRequirements(b, root);
	ParseLimits(b, root);
	rules->any = rules->enrollment != INC_ENROLLMENT_OPEN ||
		rules->nrequirements > 0 ||
		rules->limits.has_minimum || rules->limits.has_maximum;
}
