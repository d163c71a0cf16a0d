/*
 * offer_parse.c
 *    Compile an offer document (a json-c tree) into an IncOffer, checking
 *    every rule of docs/reference.md (Offers, the strategies, Bad input).
 *
 * The first fault found wins.  Fields are read in the order the reference
 * lists them (offer_key, label, strategy_key, calculator_key, periods, prices,
 * currency, then incentives / incentive, and inside each structure the order of its
 * documented shape; then the program rules: enrollment, requirements,
 * limits, walked by offer_rules.c; the growth fields are walked by
 * offer_growth.c; then settlement), whatever their order in the document.
 * Shared building blocks (filters, period references, choices) are in
 * offer_build.c.  Within an array
 * item, the item's own fields are checked first (a reference to a period
 * or sku set, or a SKU's presence in conversion.rates, as the field is
 * read), then the item is compared with its earlier siblings (duplicate
 * keys, SKUs and thresholds), reported at the later item.  A generated
 * rate key that collides is reported at the item's "key" field when it
 * was written, else at the item itself.
 *
 * JSON null in an optional field (key, label, prices, currency, a stepped
 * property's type and level, the incentives / incentive field of the
 * other strategies, and every program rule) means absent; in a required field it is a value of
 * the wrong type.  Each object's fields are checked against the contract's
 * (offer_fields.h) as it is entered, under the caller's checks: a stored
 * document read for a calculation ignores unknown fields, one being
 * written refuses them.
 *
 * Lookups and duplicate checks go through hash maps (strmap.h), so a large
 * document costs linear time; the maps are inc_alloc garbage afterwards.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "offer_internal.h"
#include "../util/strmap.h"

/* a, sep and b concatenated into inc_alloc memory. */
static char *
Concat(const char *a, const char *sep, const char *b)
{
	size_t		la = strlen(a);
	size_t		ls = strlen(sep);
	size_t		lb = strlen(b);
	char	   *s = inc_alloc(la + ls + lb + 1);

	memcpy(s, a, la);
	memcpy(s + la, sep, ls);
	memcpy(s + la + ls, b, lb + 1);
	return s;
}

/* The measure a calculator's rates must carry (docs/reference.md, Standard). */
static const char *
ExpectedMeasure(IncCalculator c)
{
	return c == INC_PERCENT_OF_AMOUNT ? "percent" : "dollars";
}

/*
 * Register the incentive_rate_key of an entry, tier or stack; a duplicate
 * is reported at the item's "key" when written, else at the item.
 */
static void
CheckRateKey(IncOfferBuild *b, const char *key, bool written)
{
	if (inc_ob_seen(b->rate_keys, key))
		inc_oj_fail_at(b->p, written ? "key" : NULL,
					   "duplicates rate key \"%s\"", key);
}

/* Read the measure field of obj, which must fit the offer's calculator. */
static char *
ReadMeasure(IncOfferBuild *b, struct json_object *obj)
{
	const char *want = ExpectedMeasure(b->offer->calculator);
	char	   *measure = inc_oj_string(b->p, obj, "measure", INC_OJ_REQUIRED);

	if (strcmp(measure, want) != 0)
		inc_oj_fail_at(b->p, "measure", "must be \"%s\" for calculator \"%s\"",
					   want, inc_calculator_name(b->offer->calculator));
	return measure;
}

/* One periods[] item: key, valid ordered dates, a key not seen before. */
static void
ReadPeriod(IncOfferBuild *b, struct json_object *obj, void *elem, void *ctx)
{
	IncOfferParse *p = b->p;
	IncPeriod  *period = elem;
	void	  **slot;

	(void) ctx;
	inc_oj_fields(p, obj, INC_OBJ_PERIOD);
	period->key = inc_oj_string(p, obj, "key", INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	period->start_date = inc_oj_date(p, obj, "start_date");
	period->end_date = inc_oj_date(p, obj, "end_date");
	if (period->end_date < period->start_date)
		inc_oj_fail_at(p, "end_date", "must not be before start_date");
	slot = inc_strmap_slot(b->periods, period->key);
	if (*slot != NULL)
		inc_oj_fail_at(p, "key", "duplicates period key \"%s\"", period->key);
	*slot = period;
}

/* periods: required, non-empty, distinct keys, valid ordered dates. */
static void
ParsePeriods(IncOfferBuild *b, struct json_object *root)
{
	IncOffer   *offer = b->offer;

	b->periods = inc_strmap_create();
	offer->periods = inc_ob_objects(b, root, "periods", INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
									&offer->nperiods, sizeof(IncPeriod), ReadPeriod, NULL);
}

/*
 * CheckPercentScale: a percent rate is reported as rate / 100 exactly, so
 * it may have at most 36 decimal places (an IncDec holds 38).
 */
static void
CheckPercentScale(IncOfferBuild *b, const IncDec *rate, const char *field)
{
	IncDec		trimmed = inc_dec_trim(rate);

	if (b->offer->calculator == INC_PERCENT_OF_AMOUNT &&
		trimmed.scale > INC_DEC_MAX_SCALE - 2)
		inc_oj_fail_at(b->p, field, "is out of range");
}

/* Percent values the checks compare with (docs/reference.md, Offer warnings). */
static const IncDec Percent100 = {100, 0};
static const IncDec Percent25 = {25, 0};
static const IncDec PercentTenth = {1, 1};

/*
 * CheckPercentRate: a percent rate or tier value (field of obj, not yet
 * pushed) above 100 is refused in a document being written (unless the
 * stored document has it); one above 25 or below 0.1 (but not 0) is a
 * finding.
 */
static void
CheckPercentRate(IncOfferBuild *b, struct json_object *obj, const char *field,
				 const IncDec *value)
{
	IncOfferParse *p = b->p;
	struct json_object *val;
	char		text[INC_NUM_BUF];
	size_t		top;

	if (b->offer->calculator != INC_PERCENT_OF_AMOUNT || inc_dec_sign(value) == 0)
		return;
	(void) inc_oj_lookup(obj, field, &val);
	top = inc_oj_push_field(p, field);
	inc_dec_format_short(value, text, sizeof(text));
	if (p->checks != NULL && p->checks->writing &&
		inc_dec_cmp(value, &Percent100) > 0 && !inc_oj_stored(p, val))
		inc_oj_fail(p, "is %s percent: a percent of the amount may not be above 100", text);
	if (inc_dec_cmp(value, &Percent25) > 0)
		inc_oj_finding(p, "implausible_rate", val,
					   "is %s percent: a percent rate above 25 is unusual; check the decimal point",
					   text);
	else if (inc_dec_cmp(value, &PercentTenth) < 0)
		inc_oj_finding(p, "implausible_rate", val,
					   "is %s percent: a percent rate below 0.1 is unusual; 5 percent is written 5, not 0.05",
					   text);
	inc_oj_pop(p, top);
}

/*
 * CheckTierSteps: a percent tier (within 0.1 .. 25) more than 4 times the
 * next lower tier's non-zero value is a finding, at its value.  The tiers
 * are sorted by threshold; arr is the document's incentive.rates, the
 * path at incentive.
 */
static void
CheckTierSteps(IncOfferBuild *b, struct json_object *arr)
{
	IncOfferParse *p = b->p;
	const IncStepped *st = &b->offer->stepped;
	int			k;

	if (b->offer->calculator != INC_PERCENT_OF_AMOUNT)
		return;
	for (k = 1; k < st->ntiers; k++)
	{
		const IncTier *t = &st->tiers[k];
		const IncTier *lower = NULL;
		IncDec		four;
		int			j;

		for (j = k - 1; j >= 0 && lower == NULL; j--)
			if (inc_dec_sign(&st->tiers[j].value) != 0)
				lower = &st->tiers[j];
		if (lower == NULL || inc_dec_sign(&lower->value) < 0 ||
			lower->value.coef > ((inc_int128) 1 << 120) ||
			inc_dec_cmp(&t->value, &Percent25) > 0 || inc_dec_cmp(&t->value, &PercentTenth) < 0)
			continue;
		four = lower->value;
		four.coef *= 4;
		if (inc_dec_cmp(&t->value, &four) > 0)
		{
			char		value[INC_NUM_BUF];
			char		lower_value[INC_NUM_BUF];
			struct json_object *val = NULL;
			size_t		top = inc_oj_push_field(p, "rates");

			inc_oj_push_index(p, t->index);
			inc_oj_push_field(p, "value");
			(void) inc_oj_lookup(inc_oj_element(arr, t->index), "value", &val);
			inc_dec_format_short(&t->value, value, sizeof(value));
			inc_dec_format_short(&lower->value, lower_value, sizeof(lower_value));
			inc_oj_finding(p, "implausible_rate", val,
						   "is %s percent, more than 4 times the next lower tier's %s (incentive.rates[%d]); check the decimal point",
						   value, lower_value, lower->index);
			inc_oj_pop(p, top);
		}
	}
}

/*
 * ParseCurrency: the optional currency, a three-letter upper-case code in
 * the form of ISO 4217 (docs/reference.md, Currencies).  A value that
 * upper-cases (around white space) to such a code suggests it.
 */
static void
ParseCurrency(IncOfferBuild *b, struct json_object *root)
{
	char	   *code = inc_oj_string(b->p, root, "currency", 0);
	char		meant[4];
	const char *s;
	size_t		len;
	int			i;

	if (code == NULL || inc_currency_code(code))
	{
		b->offer->currency = code;
		return;
	}
	for (s = code; *s == ' '; s++)
		;
	len = strlen(s);
	while (len > 0 && s[len - 1] == ' ')
		len--;
	for (i = 0; len == 3 && i < 3; i++)
		meant[i] = (char) (s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i]);
	meant[3] = '\0';
	if (len == 3 && inc_currency_code(meant))
		inc_oj_fail_at(b->p, "currency",
					   "\"%.40s\" must be a three-letter upper-case currency code (ISO 4217); did you mean \"%s\"?",
					   code, meant);
	inc_oj_fail_at(b->p, "currency",
				   "\"%.40s\" must be a three-letter upper-case currency code (ISO 4217)", code);
}

/*
 * A list of items keyed by SKU (prices, rates, conversion rates): each
 * item's sku_key is required and non-empty, read first; read fills the
 * item's other fields; then the SKU must not be in skus (those seen so
 * far), the check against earlier siblings coming after the item's own.
 */
typedef struct SkuList
{
	IncObjectKind kind;			/* of the items */
	IncStrMap  *skus;
	size_t		key_offset;		/* of the item's char *sku_key */
	IncObItemFn read;
	void	   *ctx;			/* for read */
} SkuList;

/* ReadSkuItem: one item of a SkuList (the IncObItemFn of the walk). */
static void
ReadSkuItem(IncOfferBuild *b, struct json_object *obj, void *elem, void *ctx)
{
	SkuList    *list = ctx;
	char	  **sku = (char **) ((char *) elem + list->key_offset);

	inc_oj_fields(b->p, obj, list->kind);
	*sku = inc_oj_string(b->p, obj, "sku_key", INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	list->read(b, obj, elem, list->ctx);
	if (inc_ob_seen(list->skus, *sku))
		inc_oj_fail_at(b->p, "sku_key", "duplicates sku \"%s\"", *sku);
}

static int
ComparePrices(const void *a, const void *b)
{
	return strcmp(((const IncPrice *) a)->sku_key, ((const IncPrice *) b)->sku_key);
}

/* One prices[] item after its SKU: price >= 0. */
static void
ReadPrice(IncOfferBuild *b, struct json_object *obj, void *elem, void *ctx)
{
	IncPrice   *price = elem;

	(void) ctx;
	price->price = inc_oj_number(b->p, obj, "price", INC_OJ_NONNEG);
}

/*
 * prices: optional; each {sku_key, price >= 0}, distinct SKUs; kept sorted
 * by sku_key so inc_offer_price can search them.
 */
static void
ParsePrices(IncOfferBuild *b, struct json_object *root)
{
	IncOffer   *offer = b->offer;
	SkuList		list = {
		INC_OBJ_PRICE, inc_strmap_create(), offsetof(IncPrice, sku_key), ReadPrice, NULL
	};
	int			i;

	offer->prices = inc_ob_objects(b, root, "prices", 0, &offer->nprices,
								   sizeof(IncPrice), ReadSkuItem, &list);
	for (i = 0; i < offer->nprices; i++)
		offer->prices[i].index = i;
	if (offer->nprices > 1)
		qsort(offer->prices, offer->nprices, sizeof(IncPrice), ComparePrices);
}

/*
 * One rates[] item after its SKU, which must be among conversions when
 * that is not NULL: rate >= 0, measure.
 */
static void
ReadSkuRate(IncOfferBuild *b, struct json_object *r, void *elem, void *conversions)
{
	IncOfferParse *p = b->p;
	IncSkuRate *rate = elem;

	if (conversions && inc_strmap_get(conversions, rate->sku_key) == NULL)
		inc_oj_fail_at(p, "sku_key", "is not in conversion.rates");
	rate->rate = inc_oj_number(p, r, "rate", INC_OJ_NONNEG);
	CheckPercentScale(b, &rate->rate, "rate");
	CheckPercentRate(b, r, "rate", &rate->rate);
	rate->pay_rate = inc_offer_pay_rate(b->offer->calculator, &rate->rate);
	rate->measure = ReadMeasure(b, r);
}

/*
 * The rates list "rates" of a stacked set: {sku_key, rate >= 0, measure}, a
 * SKU at most once, each among conversions (the set's conversion SKUs).
 */
static void
ParseSkuRates(IncOfferBuild *b, struct json_object *obj, int flags,
			  IncStrMap *conversions, IncSkuRate **rates, int *nrates)
{
	SkuList		list = {
		INC_OBJ_SET_RATE, inc_strmap_create(), offsetof(IncSkuRate, sku_key),
		ReadSkuRate, conversions
	};

	*rates = inc_ob_objects(b, obj, "rates", flags, nrates, sizeof(IncSkuRate),
							ReadSkuItem, &list);
}

/* The keys a standard entry's rates name so far: SKUs and products apart. */
typedef struct EntryKeys
{
	IncStrMap  *skus;
	IncStrMap  *products;
} EntryKeys;

/*
 * One rates[] item of a standard entry: {sku_key or product_key, rate >= 0,
 * measure}, exactly one of the keys, a key at most once in the entry.
 */
static void
ReadStandardRate(IncOfferBuild *b, struct json_object *obj, void *elem, void *ctx)
{
	IncOfferParse *p = b->p;
	EntryKeys  *keys = ctx;
	IncSkuRate *rate = elem;

	inc_oj_fields(p, obj, INC_OBJ_STANDARD_RATE);
	rate->sku_key = inc_oj_string(p, obj, "sku_key", INC_OJ_NONEMPTY);
	rate->product_key = inc_oj_string(p, obj, "product_key", INC_OJ_NONEMPTY);
	if (rate->sku_key == NULL && rate->product_key == NULL)
		inc_oj_fail(p, "needs sku_key or product_key");
	if (rate->sku_key != NULL && rate->product_key != NULL)
		inc_oj_fail_at(p, "product_key", "cannot be given with sku_key: a rate is of a SKU or of a product");
	ReadSkuRate(b, obj, elem, NULL);
	if (rate->sku_key != NULL && inc_ob_seen(keys->skus, rate->sku_key))
		inc_oj_fail_at(p, "sku_key", "duplicates sku \"%s\"", rate->sku_key);
	if (rate->product_key != NULL && inc_ob_seen(keys->products, rate->product_key))
		inc_oj_fail_at(p, "product_key", "duplicates product \"%s\"", rate->product_key);
}

/* standard: one incentives[] entry. */
static void
ReadStandardEntry(IncOfferBuild *b, struct json_object *obj, void *elem, void *ctx)
{
	IncOfferParse *p = b->p;
	IncStandardEntry *e = elem;
	EntryKeys	keys = {inc_strmap_create(), inc_strmap_create()};
	bool		written;

	(void) ctx;
	inc_oj_fields(p, obj, INC_OBJ_STANDARD_ENTRY);
	e->key = inc_oj_string(p, obj, "key", INC_OJ_NONEMPTY);
	e->label = inc_oj_string(p, obj, "label", 0);
	e->period = inc_ob_period_key(b, obj);
	e->transaction_type = inc_oj_string(p, obj, "transaction_type",
										INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	e->rates = inc_ob_objects(b, obj, "rates", INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
							  &e->nrates, sizeof(IncSkuRate), ReadStandardRate, &keys);
	inc_ob_key_list(b, obj, "exclude_sku_keys", &e->nexclude_skus, &e->exclude_sku_keys);
	inc_ob_key_list(b, obj, "exclude_product_keys", &e->nexclude_products,
					&e->exclude_product_keys);
	written = e->key != NULL;
	if (!written)
		e->key = Concat(b->offer->periods[e->period].key, "_", e->transaction_type);
	CheckRateKey(b, e->key, written);
}

/* standard: the incentives array. */
static void
ParseStandard(IncOfferBuild *b, struct json_object *root)
{
	IncOffer   *offer = b->offer;

	offer->entries = inc_ob_objects(b, root, "incentives", INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
									&offer->nentries, sizeof(IncStandardEntry),
									ReadStandardEntry, NULL);
}

/* stepped: threshold_definition. */
static void
ParseThresholdDefinition(IncOfferBuild *b, struct json_object *incentive)
{
	IncOfferParse *p = b->p;
	IncStepped *st = &b->offer->stepped;
	struct json_object *td = inc_oj_object(p, incentive, "threshold_definition");
	size_t		top = inc_oj_push_field(p, "threshold_definition");

	inc_oj_fields(p, td, INC_OBJ_THRESHOLD_DEFINITION);
	st->threshold_type = (IncThresholdType) inc_ob_choice(b, td, "type",
													   inc_threshold_type_names,
													   INC_NSTEPPED_THRESHOLD_TYPES, -1);
	if (st->threshold_type == INC_THRESHOLD_PROPERTY)
	{
		struct json_object *prop = inc_oj_object(p, td, "property");
		size_t		prop_top = inc_oj_push_field(p, "property");

		inc_oj_fields(p, prop, INC_OBJ_THRESHOLD_PROPERTY);
		st->property_key = inc_oj_string(p, prop, "key",
										 INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
		/* informational in the programs response; only their type is checked */
		(void) inc_oj_string(p, prop, "type", 0);
		(void) inc_oj_string(p, prop, "level", 0);
		inc_oj_pop(p, prop_top);
	}
	else
		inc_ob_filters(b, td, "filters", &st->threshold_filters,
					 &st->nthreshold_filters);
	inc_ob_baseline(b, td, st->threshold_type, &st->baseline);
	inc_oj_pop(p, top);
}

/* qsort comparator: tiers by threshold, ascending. */
static int
TierCompare(const void *a, const void *b)
{
	return inc_dec_cmp(&((const IncTier *) a)->threshold,
					   &((const IncTier *) b)->threshold);
}

/* stepped: one rates[] tier, its threshold not in thresholds yet. */
static void
ReadTier(IncOfferBuild *b, struct json_object *obj, void *elem, void *thresholds)
{
	IncOfferParse *p = b->p;
	IncTier    *t = elem;
	char		threshold[INC_NUM_BUF];
	char		value[INC_NUM_BUF];
	bool		written;

	inc_oj_fields(p, obj, INC_OBJ_TIER);
	t->key = inc_oj_string(p, obj, "key", INC_OJ_NONEMPTY);
	t->threshold = inc_oj_number(p, obj, "threshold", INC_OJ_ANY);
	inc_ob_growth_threshold(b, &t->threshold);
	t->value = inc_oj_number(p, obj, "value", INC_OJ_NONNEG);
	CheckPercentScale(b, &t->value, "value");
	CheckPercentRate(b, obj, "value", &t->value);
	t->pay_rate = inc_offer_pay_rate(b->offer->calculator, &t->value);
	t->measure = ReadMeasure(b, obj);

	/* the shortest form is canonical: 1000 and 1000.0 collide */
	inc_dec_format_short(&t->threshold, threshold, sizeof(threshold));
	if (inc_ob_seen(thresholds, inc_strdup(threshold)))
		inc_oj_fail_at(p, "threshold", "duplicates threshold %s", threshold);

	written = t->key != NULL;
	if (!written)
	{
		char		buf[3 * INC_NUM_BUF + 64];

		inc_dec_format_short(&t->value, value, sizeof(value));
		snprintf(buf, sizeof(buf), "%s_%s_greater_than_or_equal_to_%s",
				 value, t->measure, threshold);
		t->key = inc_strdup(buf);
	}
	CheckRateKey(b, t->key, written);
}

/* stepped: rates (the tiers), distinct thresholds and keys, then sorted. */
static void
ParseTiers(IncOfferBuild *b, struct json_object *incentive)
{
	IncStepped *st = &b->offer->stepped;
	struct json_object *arr;
	int			i;

	st->tiers = inc_ob_objects(b, incentive, "rates", INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
							   &st->ntiers, sizeof(IncTier), ReadTier, inc_strmap_create());
	for (i = 0; i < st->ntiers; i++)
		st->tiers[i].index = i;
	qsort(st->tiers, (size_t) st->ntiers, sizeof(IncTier), TierCompare);
	(void) inc_oj_lookup(incentive, "rates", &arr);
	CheckTierSteps(b, arr);
}

/* stepped: the incentive object. */
static void
ParseStepped(IncOfferBuild *b, struct json_object *incentive)
{
	IncStepped *st = &b->offer->stepped;

	inc_ob_filters(b, incentive, "filters", &st->filters, &st->nfilters);
	ParseThresholdDefinition(b, incentive);
	ParseTiers(b, incentive);
	inc_ob_check_tier_mode(b);
	inc_ob_check_pays_on(b);
}

/* stacked: one conversion.rates[] item after its SKU: rate > 0, from. */
static void
ReadConversionRate(IncOfferBuild *b, struct json_object *r, void *elem, void *ctx)
{
	IncConversionRate *cr = elem;

	(void) ctx;
	cr->rate = inc_oj_number(b->p, r, "rate", INC_OJ_POSITIVE);
	cr->from_uom = inc_oj_string(b->p, r, "from", INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
}

/* stacked: one set's conversion object; fills *skus with its SKUs. */
static void
ParseConversion(IncOfferBuild *b, struct json_object *obj, IncSkuSet *set,
				IncStrMap *skus)
{
	IncOfferParse *p = b->p;
	struct json_object *conv = inc_oj_object(p, obj, "conversion");
	size_t		top = inc_oj_push_field(p, "conversion");
	SkuList		list = {
		INC_OBJ_CONVERSION_RATE, skus, offsetof(IncConversionRate, sku_key),
		ReadConversionRate, NULL
	};

	inc_oj_fields(p, conv, INC_OBJ_CONVERSION);
	set->coverage_unit = inc_oj_string(p, conv, "coverage_unit",
									   INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	set->conversions = inc_ob_objects(b, conv, "rates", INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
									  &set->nconversions, sizeof(IncConversionRate),
									  ReadSkuItem, &list);
	inc_oj_pop(p, top);
}

/* LinkPayRates: each conversion's pay rate, found once, by SKU. */
static void
LinkPayRates(IncSkuSet *set)
{
	int			c,
				r;

	for (c = 0; c < set->nconversions; c++)
	{
		set->conversions[c].pay_rate = -1;
		for (r = 0; r < set->nrates; r++)
			if (strcmp(set->rates[r].sku_key, set->conversions[c].sku_key) == 0)
				set->conversions[c].pay_rate = r;
	}
}

/* stacked: one sku_sets[] item; *next is its index. */
static void
ReadSkuSet(IncOfferBuild *b, struct json_object *obj, void *elem, void *next)
{
	IncOfferParse *p = b->p;
	IncSkuSet  *set = elem;
	int			i = (*(int *) next)++;
	void	  **slot;

	/* the walk has counted the sets before this first one */
	if (i == 0)
		b->set_skus = inc_ob_alloc_array(b->offer->stacked.nsets, sizeof(IncStrMap *));
	inc_oj_fields(p, obj, INC_OBJ_SKU_SET);
	set->key = inc_oj_string(p, obj, "key", INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	set->period = inc_ob_period_key(b, obj);
	set->transaction_type = inc_oj_string(p, obj, "transaction_type",
										  INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	b->set_skus[i] = inc_strmap_create();
	ParseConversion(b, obj, set, b->set_skus[i]);
	ParseSkuRates(b, obj, INC_OJ_REQUIRED, b->set_skus[i],
				  &set->rates, &set->nrates);
	LinkPayRates(set);
	slot = inc_strmap_slot(b->sets, set->key);
	if (*slot != NULL)
		inc_oj_fail_at(p, "key", "duplicates sku set key \"%s\"", set->key);
	*slot = set;
}

/* stacked: sku_sets. */
static void
ParseSkuSets(IncOfferBuild *b, struct json_object *incentive)
{
	IncStacked *sk = &b->offer->stacked;
	int			next = 0;

	b->sets = inc_strmap_create();
	sk->sets = inc_ob_objects(b, incentive, "sku_sets", INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
							  &sk->nsets, sizeof(IncSkuSet), ReadSkuSet, &next);
}

/*
 * stacked: no two sets of one stack may both take a transaction (a SKU in
 * both conversion lists, the same transaction type, overlapping periods):
 * it would earn twice under the stack's one rate key.
 */
static void
CheckStackSetsDisjoint(IncOfferBuild *b, const IncStack *stack)
{
	const IncStacked *sk = &b->offer->stacked;
	const IncPeriod *periods = b->offer->periods;
	int			j;
	int			k;
	int			c;

	for (j = 1; j < stack->nsets; j++)
	{
		const IncSkuSet *later = &sk->sets[stack->sets[j]];

		for (k = 0; k < j; k++)
		{
			const IncSkuSet *earlier = &sk->sets[stack->sets[k]];
			const IncPeriod *pe = &periods[earlier->period];
			const IncPeriod *pl = &periods[later->period];

			if (strcmp(earlier->transaction_type, later->transaction_type) != 0 ||
				pe->start_date > pl->end_date || pl->start_date > pe->end_date)
				continue;
			for (c = 0; c < earlier->nconversions; c++)
			{
				const char *sku = earlier->conversions[c].sku_key;

				if (inc_strmap_get(b->set_skus[stack->sets[j]], sku) != NULL)
					inc_oj_fail(b->p, "puts sku \"%s\" in sku sets \"%s\" and \"%s\" of one stack",
								sku, earlier->key, later->key);
			}
		}
	}
}

/* stacked: one stack's sku_set_keys, resolved to set indexes. */
static void
ParseStackSets(IncOfferBuild *b, struct json_object *obj, IncStack *stack)
{
	IncOfferParse *p = b->p;
	IncStacked *sk = &b->offer->stacked;
	struct json_object *arr;
	IncStrMap  *seen = inc_strmap_create();
	size_t		top;
	int			j;

	inc_oj_array(p, obj, "sku_set_keys", INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
				 &arr, &stack->nsets);
	stack->sets = inc_ob_alloc_array(stack->nsets, sizeof(int));
	top = inc_oj_push_field(p, "sku_set_keys");
	for (j = 0; j < stack->nsets; j++)
	{
		size_t		elem = inc_oj_push_index(p, j);
		char	   *key = inc_oj_string_value(p, inc_oj_element(arr, j),
											  INC_OJ_NONEMPTY);
		IncSkuSet  *set = inc_strmap_get(b->sets, key);
		const IncSkuSet *first;

		if (set == NULL)
			inc_oj_fail(p, "names an undefined sku set \"%s\"", key);
		if (inc_ob_seen(seen, key))
			inc_oj_fail(p, "duplicates sku set key \"%s\"", key);
		stack->sets[j] = (int) (set - sk->sets);
		first = &sk->sets[stack->sets[0]];
		if (strcmp(set->coverage_unit, first->coverage_unit) != 0)
			inc_oj_fail(p, "has coverage_unit \"%s\" but sku set \"%s\" has \"%s\"",
						set->coverage_unit, first->key, first->coverage_unit);
		inc_oj_pop(p, elem);
	}
	inc_oj_pop(p, top);
}

/* stacked: one stacks[] item; an unwritten key joins its sets' keys with "_and_". */
static void
ReadStack(IncOfferBuild *b, struct json_object *obj, void *elem, void *ctx)
{
	IncStacked *sk = &b->offer->stacked;
	IncStack   *stack = elem;
	bool		written;
	int			j;

	(void) ctx;
	inc_oj_fields(b->p, obj, INC_OBJ_STACK);
	stack->key = inc_oj_string(b->p, obj, "key", INC_OJ_NONEMPTY);
	ParseStackSets(b, obj, stack);
	CheckStackSetsDisjoint(b, stack);
	written = stack->key != NULL;
	if (!written)
	{
		size_t		len = 0;
		char	   *key;

		for (j = 0; j < stack->nsets; j++)
			len += strlen(sk->sets[stack->sets[j]].key) + 5;
		key = inc_alloc(len + 1);
		len = 0;
		for (j = 0; j < stack->nsets; j++)
		{
			const char *part = sk->sets[stack->sets[j]].key;
			size_t		plen = strlen(part);

			if (j > 0)
			{
				memcpy(key + len, "_and_", 5);
				len += 5;
			}
			memcpy(key + len, part, plen);
			len += plen;
		}
		key[len] = '\0';
		stack->key = key;
	}
	CheckRateKey(b, stack->key, written);
}

/* stacked: stacks, after sku_sets. */
static void
ParseStacks(IncOfferBuild *b, struct json_object *incentive)
{
	IncStacked *sk = &b->offer->stacked;

	sk->stacks = inc_ob_objects(b, incentive, "stacks", INC_OJ_REQUIRED | INC_OJ_NONEMPTY,
								&sk->nstacks, sizeof(IncStack), ReadStack, NULL);
}

/*
 * settlement: optional {holdback_percent}, 0 <= holdback_percent < 100
 * (docs/reference.md, Offer documents).  The calculation does not use it:
 * settle reads it from the stored document (docs/lifecycle.md, Holdback
 * and minimum payment).  So its value is checked, like the other rules of
 * a write alone, only in a document being written: a calculation never
 * fails on a field it does not read, nor on a document stored before the
 * field was defined.  Its unknown fields are checked as every object's.
 */
static void
ParseSettlement(IncOfferBuild *b, struct json_object *root)
{
	IncOfferParse *p = b->p;
	struct json_object *obj;
	IncDec		holdback;
	size_t		top;

	if (!inc_oj_lookup(root, "settlement", &obj) || obj == NULL)
		return;
	top = inc_oj_push_field(p, "settlement");
	inc_oj_fields(p, obj, INC_OBJ_SETTLEMENT);
	if (p->checks != NULL && p->checks->writing)
	{
		inc_oj_object_value(p, obj);
		holdback = inc_oj_number(p, obj, "holdback_percent", INC_OJ_NONNEG);
		if (inc_dec_cmp(&holdback, &Percent100) >= 0)
			inc_oj_fail_at(p, "holdback_percent", "must be < 100");
	}
	inc_oj_pop(p, top);
}

/* The family of the objects of a strategy's offers (offer_fields.h). */
static IncObjectFamily
StrategyFamily(IncStrategy s)
{
	switch (s)
	{
		case INC_STANDARD:
			return INC_FAMILY_STANDARD;
		case INC_STEPPED:
			return INC_FAMILY_STEPPED;
		case INC_STACKED:
			return INC_FAMILY_STACKED;
	}
	return INC_FAMILY_OFFER;
}

/*
 * PeekOffer: before the top level's fields are checked, the offer key a
 * fault names and the family the advice looks among, when the document
 * states them plainly (their own checks come after).
 */
static void
PeekOffer(IncOfferParse *p, struct json_object *root)
{
	struct json_object *val;
	int			i;

	if (inc_oj_lookup(root, "offer_key", &val) && json_object_is_type(val, json_type_string) &&
		json_object_get_string_len(val) > 0 &&
		strlen(json_object_get_string(val)) == (size_t) json_object_get_string_len(val))
		p->offer_key = json_object_get_string(val);
	if (inc_oj_lookup(root, "strategy_key", &val) && json_object_is_type(val, json_type_string))
		for (i = 0; i < INC_NSTRATEGIES; i++)
			if (strcmp(json_object_get_string(val), inc_strategy_names[i]) == 0)
				p->family = StrategyFamily((IncStrategy) i);
}

/* The offer: top-level fields, then the strategy's structure. */
static IncOffer *
ParseOffer(IncOfferParse *p, struct json_object *root)
{
	IncOfferBuild	b;
	IncOffer   *offer;
	struct json_object *other;

	if (!json_object_is_type(root, json_type_object))
		inc_oj_fail(p, "document must be a JSON object");

	memset(&b, 0, sizeof(b));
	b.p = p;
	b.offer = offer = inc_alloc(sizeof(IncOffer));
	b.rate_keys = inc_strmap_create();

	PeekOffer(p, root);
	inc_oj_fields(p, root, INC_OBJ_OFFER);
	offer->offer_key = inc_oj_string(p, root, "offer_key",
									 INC_OJ_REQUIRED | INC_OJ_NONEMPTY);
	p->offer_key = offer->offer_key;
	offer->label = inc_oj_string(p, root, "label", 0);
	offer->strategy = (IncStrategy) inc_ob_choice(&b, root, "strategy_key",
											   inc_strategy_names, INC_NSTRATEGIES, -1);
	offer->calculator = (IncCalculator) inc_ob_choice(&b, root, "calculator_key",
												   inc_calculator_names, INC_NCALCULATORS, -1);
	p->family = StrategyFamily(offer->strategy);
	if ((offer->strategy == INC_STACKED) !=
		(offer->calculator == INC_DOLLARS_PER_COVERAGE_UNIT))
		inc_oj_fail_at(p, "calculator_key", "\"%s\" is not allowed for strategy \"%s\"",
					   inc_calculator_name(offer->calculator),
					   inc_strategy_name(offer->strategy));
	ParsePeriods(&b, root);
	ParsePrices(&b, root);
	ParseCurrency(&b, root);

	if (offer->strategy == INC_STANDARD)
	{
		ParseStandard(&b, root);
		if (inc_oj_lookup(root, "incentive", &other) && other != NULL)
			inc_oj_fail_at(p, "incentive", "is not used by strategy \"standard\"");
	}
	else
	{
		struct json_object *incentive;
		size_t		top;

		if (inc_oj_lookup(root, "incentives", &other) && other != NULL)
			inc_oj_fail_at(p, "incentives", "is only for strategy \"standard\"");
		incentive = inc_oj_object(p, root, "incentive");
		top = inc_oj_push_field(p, "incentive");
		inc_oj_fields(p, incentive, offer->strategy == INC_STEPPED ?
					  INC_OBJ_STEPPED_INCENTIVE : INC_OBJ_STACKED_INCENTIVE);
		inc_ob_tier_mode(&b, incentive);
		inc_ob_pays_on(&b, incentive);
		inc_ob_match(&b, incentive);
		if (offer->strategy == INC_STEPPED)
			ParseStepped(&b, incentive);
		else
		{
			ParseSkuSets(&b, incentive);
			ParseStacks(&b, incentive);
		}
		inc_oj_pop(p, top);
	}
	inc_ob_rules(&b, root);
	ParseSettlement(&b, root);
	return offer;
}

/*
 * inc_offer_from_json: compile root into an IncOffer (inc_alloc memory,
 * no pointer into root), or NULL with err filled on the first fault.
 */
IncOffer *
inc_offer_from_json(struct json_object *root, const IncOfferChecks *checks,
					IncOfferError *err)
{
	IncOfferParse p;

	memset(&p, 0, sizeof(p));
	p.err = err;
	p.checks = checks;
	p.family = INC_FAMILY_OFFER;
	err->message[0] = '\0';
	if (setjmp(p.jump) != 0)
		return NULL;
	return ParseOffer(&p, root);
}
