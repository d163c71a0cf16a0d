/*
 * offer_fields.c
 *    The fields of every object of an offer document and of a calculation
 *    request (offer_fields.h), and the advice for a field that is none of
 *    them.
 */
#include <string.h>

#include "offer_fields.h"
#include "../util/names.h"

/*
 * Each object's fields, in the order docs/reference.md describes them.
 * A field the engine refuses for some strategy with a message of its own
 * (incentive of a standard offer, incentives of the others, tier_mode and
 * pays_on of a stacked offer, match of a stepped one) is listed where the
 * contract defines it.
 */
static const char *const OfferFields[] = {
	"offer_key", "strategy_key", "calculator_key", "periods", "prices",
	"currency", "incentives", "incentive", "aggregation", "group_type", "enrollment",
	"requirements", "limits", "settlement", INC_METADATA_FIELD, NULL
};
static const char *const PeriodFields[] = {"key", "start_date", "end_date", NULL};
static const char *const PriceFields[] = {"sku_key", "price", NULL};
static const char *const StandardEntryFields[] = {
	"key", "period_key", "transaction_type", "rates", "exclude_sku_keys",
	"exclude_product_keys", NULL
};
static const char *const StandardRateFields[] = {
	"sku_key", "product_key", "rate", "measure", NULL
};
static const char *const SteppedIncentiveFields[] = {
	"tier_mode", "pays_on", "match", "filters", "threshold_definition", "rates", NULL
};
static const char *const FilterFields[] = {
	"period_key", "sku_keys", "product_keys", "exclude_sku_keys",
	"exclude_product_keys", "transaction_type", NULL
};
static const char *const ThresholdDefinitionFields[] = {
	"type", "filters", "property", "baseline", NULL
};
static const char *const ThresholdPropertyFields[] = {"key", "type", "level", NULL};
static const char *const BaselineFields[] = {"start_date", "end_date", "property", NULL};
static const char *const PropertyKeyFields[] = {"key", NULL};
static const char *const TierFields[] = {"key", "threshold", "value", "measure", NULL};
static const char *const StackedIncentiveFields[] = {
	"tier_mode", "pays_on", "match", "sku_sets", "stacks", NULL
};
static const char *const SkuSetFields[] = {
	"key", "period_key", "transaction_type", "conversion", "rates", NULL
};
static const char *const ConversionFields[] = {"coverage_unit", "rates", NULL};
static const char *const ConversionRateFields[] = {"sku_key", "rate", "from", NULL};
static const char *const SetRateFields[] = {"sku_key", "rate", "measure", NULL};
static const char *const StackFields[] = {"key", "sku_set_keys", NULL};
static const char *const RequirementFields[] = {
	"key", "type", "minimum", "filters", "property", "scope", "baseline",
	"product_keys", NULL
};
static const char *const LimitsFields[] = {"minimum", "maximum", NULL};
static const char *const SettlementFields[] = {"holdback_percent", NULL};
static const char *const RequestFields[] = {
	"participant_key", "properties", "as_of", "through_date", "offer_keys",
	"include_stored", "transactions", "enrollments", NULL
};
static const char *const RequestEnrollmentFields[] = {
	"participant_key", "offer_key", "start_date", "end_date", NULL
};

const char *const inc_annotation_fields[] = {"label", "description", "name", NULL};

const IncObjectFields inc_object_fields[INC_NOBJECT_KINDS] = {
	[INC_OBJ_OFFER] = {"offer", "the offer", INC_FAMILY_OFFER, OfferFields, true},
	[INC_OBJ_PERIOD] = {"periods[]", "periods[]", INC_FAMILY_OFFER, PeriodFields, true},
	[INC_OBJ_PRICE] = {"prices[]", "prices[]", INC_FAMILY_OFFER, PriceFields, true},
	[INC_OBJ_STANDARD_ENTRY] = {"incentives[]", "incentives[]", INC_FAMILY_STANDARD, StandardEntryFields, true},
	[INC_OBJ_STANDARD_RATE] = {"incentives[].rates[]", "incentives[].rates[]", INC_FAMILY_STANDARD, StandardRateFields, true},
	[INC_OBJ_STEPPED_INCENTIVE] = {"incentive (stepped)", "incentive", INC_FAMILY_STEPPED, SteppedIncentiveFields, true},
	[INC_OBJ_FILTER] = {"filters[]", "filters[]", INC_FAMILY_OFFER, FilterFields, true},
	[INC_OBJ_THRESHOLD_DEFINITION] = {"incentive.threshold_definition", "incentive.threshold_definition", INC_FAMILY_STEPPED, ThresholdDefinitionFields, true},
	[INC_OBJ_THRESHOLD_PROPERTY] = {"incentive.threshold_definition.property", "incentive.threshold_definition.property", INC_FAMILY_STEPPED, ThresholdPropertyFields, true},
	[INC_OBJ_BASELINE] = {"baseline", "baseline", INC_FAMILY_OFFER, BaselineFields, true},
	[INC_OBJ_BASELINE_PROPERTY] = {"baseline.property", "baseline.property", INC_FAMILY_OFFER, PropertyKeyFields, true},
	[INC_OBJ_TIER] = {"incentive.rates[] (stepped)", "incentive.rates[]", INC_FAMILY_STEPPED, TierFields, true},
	[INC_OBJ_STACKED_INCENTIVE] = {"incentive (stacked)", "incentive", INC_FAMILY_STACKED, StackedIncentiveFields, true},
	[INC_OBJ_SKU_SET] = {"incentive.sku_sets[]", "incentive.sku_sets[]", INC_FAMILY_STACKED, SkuSetFields, true},
	[INC_OBJ_CONVERSION] = {"incentive.sku_sets[].conversion", "incentive.sku_sets[].conversion", INC_FAMILY_STACKED, ConversionFields, true},
	[INC_OBJ_CONVERSION_RATE] = {"incentive.sku_sets[].conversion.rates[]", "incentive.sku_sets[].conversion.rates[]", INC_FAMILY_STACKED, ConversionRateFields, true},
	[INC_OBJ_SET_RATE] = {"incentive.sku_sets[].rates[]", "incentive.sku_sets[].rates[]", INC_FAMILY_STACKED, SetRateFields, true},
	[INC_OBJ_STACK] = {"incentive.stacks[]", "incentive.stacks[]", INC_FAMILY_STACKED, StackFields, true},
	[INC_OBJ_REQUIREMENT] = {"requirements[]", "requirements[]", INC_FAMILY_OFFER, RequirementFields, true},
	[INC_OBJ_REQUIREMENT_PROPERTY] = {"requirements[].property", "requirements[].property", INC_FAMILY_OFFER, PropertyKeyFields, true},
	[INC_OBJ_LIMITS] = {"limits", "limits", INC_FAMILY_OFFER, LimitsFields, true},
	[INC_OBJ_SETTLEMENT] = {"settlement", "settlement", INC_FAMILY_OFFER, SettlementFields, true},
	[INC_OBJ_REQUEST] = {"request", "the request", INC_FAMILY_REQUEST, RequestFields, false},
	[INC_OBJ_REQUEST_ENROLLMENT] = {"request enrollments[]", "enrollments[]", INC_FAMILY_REQUEST, RequestEnrollmentFields, false}
};

/* Is name among the NULL-terminated fields? */
static bool
Listed(const char *const *fields, const char *name)
{
	int			i;

	for (i = 0; fields[i] != NULL; i++)
		if (strcmp(fields[i], name) == 0)
			return true;
	return false;
}

bool
inc_object_field_annotation(IncObjectKind kind, const char *name)
{
	return inc_object_fields[kind].annotations && Listed(inc_annotation_fields, name);
}

bool
inc_object_field_known(IncObjectKind kind, const char *name)
{
	return Listed(inc_object_fields[kind].fields, name) ||
		inc_object_field_annotation(kind, name);
}

/*
 * Normalize: lower case, '-' and ' ' as '_', into out (INC_NAME_MAX + 1
 * bytes): the name as "belongs in" writes it; false when name is too long
 * to compare.
 */
static bool
Normalize(const char *name, char *out)
{
	size_t		i;

	for (i = 0; name[i] != '\0'; i++)
	{
		char		c = name[i];

		if (i >= INC_NAME_MAX)
			return false;
		if (c >= 'A' && c <= 'Z')
			c = (char) (c - 'A' + 'a');
		else if (c == '-' || c == ' ')
			c = '_';
		out[i] = c;
	}
	out[i] = '\0';
	return true;
}

/* The fields of kind, annotations included, one at a time: NULL after the last. */
static const char *
FieldAt(IncObjectKind kind, int i)
{
	const char *const *fields = inc_object_fields[kind].fields;
	int			n = 0;

	while (fields[n] != NULL)
		n++;
	if (i < n)
		return fields[i];
	if (!inc_object_fields[kind].annotations)
		return NULL;
	return inc_annotation_fields[i - n];
}

/*
 * Another object of a document of family (an offer of one strategy, an
 * offer whose strategy is not known, the request) written elsewhere than
 * kind's objects, whose own field is norm; -1 when none.
 */
static int
OtherPlace(IncObjectKind kind, IncObjectFamily family, const char *norm)
{
	int			k;

	for (k = 0; k < INC_NOBJECT_KINDS; k++)
	{
		IncObjectFamily other = inc_object_fields[k].family;

		if (k == (int) kind || strcmp(inc_object_fields[k].path, inc_object_fields[kind].path) == 0)
			continue;
		if ((family == INC_FAMILY_REQUEST) != (other == INC_FAMILY_REQUEST))
			continue;
		if (family != INC_FAMILY_OFFER && other != INC_FAMILY_OFFER && other != family)
			continue;
		if (Listed(inc_object_fields[k].fields, norm))
			return k;
	}
	return -1;
}

static void
Advise(char *buf, size_t cap, const char *prefix, const char *field, const char *suffix)
{
	size_t		lp = strlen(prefix);
	size_t		lf = strlen(field);
	size_t		ls = strlen(suffix);

	if (lp + lf + ls + 1 > cap)
		return;
	memcpy(buf, prefix, lp);
	memcpy(buf + lp, field, lf);
	memcpy(buf + lp + lf, suffix, ls + 1);
}

void
inc_object_field_advice(IncObjectKind kind, IncObjectFamily family, const char *name,
						char *buf, size_t cap)
{
	char		norm[INC_NAME_MAX + 1];
	IncNameSearch search;
	const char *f;
	int			other;
	int			i;

	if (cap == 0)
		return;
	buf[0] = '\0';
	if (!Normalize(name, norm))
		return;
	/* the fields of kind, by the rule of every suggestion (names.h) */
	inc_name_search_begin(&search, name, strlen(name));
	for (i = 0; (f = FieldAt(kind, i)) != NULL; i++)
		inc_name_search_consider(&search, f, strlen(f));
	/* a field of another place comes before a merely near one */
	if (search.fit > INC_NAME_ABBREVIATED &&
		(other = OtherPlace(kind, family, norm)) >= 0)
	{
		size_t		ln = strlen(norm);

		/* "NAME belongs in PLACE" */
		Advise(buf, cap, "", norm, "");
		if (ln + 12 < cap)
			Advise(buf + ln, cap - ln, " belongs in ", inc_object_fields[other].path, "");
		return;
	}
	if (search.fit != INC_NAME_NONE)
		Advise(buf, cap, "did you mean \"", FieldAt(kind, (int) search.best), "\"?");
}
