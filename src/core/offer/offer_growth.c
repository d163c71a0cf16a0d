/*
 * offer_growth.c
 *    The offer parser's walk of growth over a baseline (docs/reference.md,
 *    Growth over a baseline): the baseline of a growth threshold or
 *    requirement, incentive.pays_on, and the rules that tie them to the
 *    calculator, the tier mode and the thresholds.
 *
 * Called by offer_parse.c (the stepped threshold_definition, its tiers,
 * incentive.pays_on) and offer_rules.c (each requirement), with the path
 * at the object that holds the field.  Faults are reported in the
 * `invalid offer "KEY": PATH problem` form, like every other rule of the
 * parser.  An offer without growth types compiles with no baseline:
 * its baselines are INC_BASELINE_NONE and pays_on is all_volume.
 */
#include <string.h>

#include <json-c/json.h>

#include "offer_internal.h"

/* The lowest growth threshold: -100 % (a band edge of 0 x the baseline). */
static const IncDec MinusHundred = {-100, 0};

/*
 * BaselineDates: {"start_date", "end_date"}, both required valid dates,
 * end_date not before start_date (path at baseline).
 */
static void
BaselineDates(IncOfferParse *p, struct json_object *obj, IncBaseline *out)
{
	out->start_date = inc_oj_date(p, obj, "start_date");
	out->end_date = inc_oj_date(p, obj, "end_date");
	if (out->end_date < out->start_date)
		inc_oj_fail_at(p, "end_date", "must not be before start_date");
	out->kind = INC_BASELINE_DATES;
}

/*
 * inc_ob_baseline: the "baseline" field of obj (a threshold_definition or
 * a requirement, its path pushed) for threshold type `type`.  A growth
 * type needs one: {"start_date", "end_date"} or {"property": {"key"}},
 * not both; any other type must not have one.
 */
void
inc_ob_baseline(IncOfferBuild *b, struct json_object *obj, IncThresholdType type,
				IncBaseline *out)
{
	IncOfferParse *p = b->p;
	struct json_object *baseline;
	struct json_object *val;
	size_t		top;

	memset(out, 0, sizeof(*out));
	if (!inc_threshold_growth(type))
	{
		if (inc_oj_lookup(obj, "baseline", &val) && val != NULL)
			inc_oj_fail_at(p, "baseline", "is only for threshold types \"%s\" and \"%s\"",
						   inc_threshold_type_name(INC_THRESHOLD_GROWTH_AMOUNT),
						   inc_threshold_type_name(INC_THRESHOLD_GROWTH_QUANTITY));
		return;
	}
	baseline = inc_oj_object(p, obj, "baseline");
	top = inc_oj_push_field(p, "baseline");
	inc_oj_fields(p, baseline, INC_OBJ_BASELINE);
	if (inc_oj_lookup(baseline, "property", &val) && val != NULL)
	{
		struct json_object *prop = inc_oj_object(p, baseline, "property");
		size_t		prop_top;

		if ((inc_oj_lookup(baseline, "start_date", &val) && val != NULL) ||
			(inc_oj_lookup(baseline, "end_date", &val) && val != NULL))
			inc_oj_fail(p, "must have either start_date and end_date or property, not both");
		prop_top = inc_oj_push_field(p, "property");
		inc_oj_fields(p, prop, INC_OBJ_BASELINE_PROPERTY);
		out->property_key = inc_oj_string(p, prop, "key", INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
		inc_oj_pop(p, prop_top);
		out->kind = INC_BASELINE_PROPERTY;
	}
	else
		BaselineDates(p, baseline, out);
	inc_oj_pop(p, top);
}

/*
 * inc_ob_pays_on: incentive.pays_on, "all_volume" (the default) or
 * "growth"; only a stepped offer may have one.
 */
void
inc_ob_pays_on(IncOfferBuild *b, struct json_object *incentive)
{
	IncOffer   *offer = b->offer;
	struct json_object *val;

	if (offer->strategy != INC_STEPPED)
	{
		if (inc_oj_lookup(incentive, "pays_on", &val) && val != NULL)
			inc_oj_fail_at(b->p, "pays_on", "is only for strategy \"%s\"",
						   inc_strategy_name(INC_STEPPED));
		return;
	}
	offer->stepped.pays_on = (IncPaysOn)
		inc_ob_choice(b, incentive, "pays_on", inc_pays_on_names, INC_NPAYS_ON,
					  INC_PAYS_ON_ALL_VOLUME);
}

/*
 * inc_ob_growth_threshold: a tier's threshold (path at the tier) under a
 * growth type is a growth percentage of -100 or more.
 */
void
inc_ob_growth_threshold(IncOfferBuild *b, const IncDec *threshold)
{
	IncThresholdType type = b->offer->stepped.threshold_type;

	if (inc_threshold_growth(type) && inc_dec_cmp(threshold, &MinusHundred) < 0)
		inc_oj_fail_at(b->p, "threshold", "must be >= -100 for threshold type \"%s\"",
					   inc_threshold_type_name(type));
}

/*
 * inc_ob_check_pays_on: pays_on "growth" needs a growth type, and is
 * refused with the fixed_amount calculator and with incremental tiers;
 * each fault reported at incentive.pays_on (path at incentive).
 */
void
inc_ob_check_pays_on(IncOfferBuild *b)
{
	const IncOffer *offer = b->offer;
	const IncStepped *st = &offer->stepped;
	const char *growth = inc_pays_on_name(INC_PAYS_ON_GROWTH);

	if (st->pays_on != INC_PAYS_ON_GROWTH)
		return;
	if (!inc_threshold_growth(st->threshold_type))
		inc_oj_fail_at(b->p, "pays_on", "\"%s\" is not allowed for threshold type \"%s\"",
					   growth, inc_threshold_type_name(st->threshold_type));
	if (offer->calculator == INC_FIXED_AMOUNT)
		inc_oj_fail_at(b->p, "pays_on", "\"%s\" is not allowed for calculator \"%s\"",
					   growth, inc_calculator_name(offer->calculator));
	if (st->tier_mode == INC_TIERS_INCREMENTAL)
		inc_oj_fail_at(b->p, "pays_on", "\"%s\" is not allowed with tier_mode \"%s\"",
					   growth, inc_tier_mode_name(st->tier_mode));
}
