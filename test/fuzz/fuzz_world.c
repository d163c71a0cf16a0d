/*
 * fuzz_world.c
 *    The generator behind fuzz_calc: what the PostgreSQL glue would hand
 *    the engine, built from the fuzzer's bytes and the accepted offers'
 *    vocabulary (see fuzz_world.h).
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_world.h"

/* ---- the driver: input bytes, then a seeded generator -------------------- */

/* NextByte: the next input byte, or a xorshift64 byte once they run out. */
static uint32_t
NextByte(FuzzDriver *d)
{
	if (d->pos < d->n)
		return d->p[d->pos++];
	d->state ^= d->state << 13;
	d->state ^= d->state >> 7;
	d->state ^= d->state << 17;
	return (uint32_t) (d->state >> 24) & 0xff;
}

/* fuzz_take: a value in [0, bound), bound >= 1. */
uint32_t
fuzz_take(FuzzDriver *d, uint32_t bound)
{
	uint32_t	v = NextByte(d);

	if (bound > 256)
		v = (v << 8) | NextByte(d);
	return bound ? v % bound : 0;
}

/* ---- vocabulary of the offers ------------------------------------------- */

/* Add s to list unless there; its index, or -1 when the list is full. */
static int
AddWord(const char **list, int *n, const char *s)
{
	int			i;

	for (i = 0; i < *n; i++)
		if (strcmp(list[i], s) == 0)
			return i;
	if (*n == FUZZ_MAX_VOCAB)
		return -1;
	list[*n] = s;
	return (*n)++;
}

/* VocabFilters: the types and SKUs of stepped filters. */
static void
VocabFilters(FuzzVocab *v, const IncFilter *f, int n)
{
	int			i,
				j;

	for (i = 0; i < n; i++)
	{
		AddWord(v->types, &v->ntypes, f[i].transaction_type);
		for (j = 0; j < f[i].nskus; j++)
			AddWord(v->skus, &v->nskus, f[i].sku_keys[j]);
	}
}

/* fuzz_vocab_offer: add offer o's periods, SKUs, types and units to v. */
void
fuzz_vocab_offer(FuzzVocab *v, const IncOffer *o)
{
	int			i,
				j;

	for (i = 0; i < o->nperiods && v->nperiods < FUZZ_MAX_VOCAB; i++)
	{
		v->starts[v->nperiods] = o->periods[i].start_date;
		v->ends[v->nperiods++] = o->periods[i].end_date;
	}
	for (i = 0; i < o->nprices; i++)
		AddWord(v->skus, &v->nskus, o->prices[i].sku_key);
	for (i = 0; i < o->rules.nrequirements; i++)
		VocabFilters(v, o->rules.requirements[i].filters, o->rules.requirements[i].nfilters);
	switch (o->strategy)
	{
		case INC_STANDARD:
			for (i = 0; i < o->nentries; i++)
			{
				AddWord(v->types, &v->ntypes, o->entries[i].transaction_type);
				for (j = 0; j < o->entries[i].nrates; j++)
					if (o->entries[i].rates[j].sku_key)	/* not a product's rate */
						AddWord(v->skus, &v->nskus, o->entries[i].rates[j].sku_key);
			}
			break;
		case INC_STEPPED:
			VocabFilters(v, o->stepped.filters, o->stepped.nfilters);
			VocabFilters(v, o->stepped.threshold_filters,
						 o->stepped.nthreshold_filters);
			break;
		case INC_STACKED:
			for (i = 0; i < o->stacked.nsets; i++)
			{
				const IncSkuSet *s = &o->stacked.sets[i];

				AddWord(v->types, &v->ntypes, s->transaction_type);
				for (j = 0; j < s->nconversions; j++)
				{
					int			k = AddWord(v->skus, &v->nskus,
											s->conversions[j].sku_key);

					if (k >= 0 && v->sku_from[k] == NULL)
						v->sku_from[k] = s->conversions[j].from_uom;
					AddWord(v->uoms, &v->nuoms, s->conversions[j].from_uom);
				}
			}
			break;
	}
	/*
	 * The fuzzed world has no product catalog (docs/reference.md,
	 * Products): an offer written on products alone reads no SKU, and its
	 * transactions are of a SKU no product holds.
	 */
	if (v->nskus == 0)
		AddWord(v->skus, &v->nskus, "sku_in_no_product");
}

/* ---- fuzzed decimals ----------------------------------------------------- */

/*
 * fuzz_gen_dec: a decimal as PostgreSQL numeric could hold it within the
 * engine's IncDec limits: small and cent amounts mostly, then the
 * extremes (positive: > 0 only).
 */
IncDec
fuzz_gen_dec(FuzzDriver *d, bool positive)
{
	static const char *const extremes[] = {
		"0", "1", "-1", "1e30", "-1e30", "1e37", "-1e37",
		"99999999999999999999999999999999999999",
		"-99999999999999999999999999999999999999",
		"0.00000000000000000000000000000000000001",
		"-0.00000000000000000000000000000000000001",
		"3.785411784", "0.45359237", "0.00921875", "100.000", "-0.005",
		"0.005", "12345678901234567890.123456789012345678", "1.5e3", "2.50e1"
	};
	char		buf[96];
	size_t		len = 0;
	IncDec		v;
	uint32_t	kind = fuzz_take(d, d->tame ? 5 : 8);
	const char *sign = !d->tame && fuzz_take(d, 4) == 0 ? "-" : "";

	if (kind < 3)
		len = (size_t) snprintf(buf, sizeof(buf), "%s%u", sign, fuzz_take(d, 1000));
	else if (kind < 5)
	{
		uint32_t	cents = fuzz_take(d, 65536);

		len = (size_t) snprintf(buf, sizeof(buf), "%s%u.%02u",
								sign, cents / 100, cents % 100);
	}
	else if (kind < 7)
	{
		const char *e = extremes[fuzz_take(d, sizeof(extremes) / sizeof(extremes[0]))];

		len = strlen(e);
		memcpy(buf, e, len + 1);
	}
	else
	{
		/* up to 38 random digits, a random point, maybe an exponent */
		uint32_t	ndigits = 1 + fuzz_take(d, 38);
		uint32_t	point = fuzz_take(d, ndigits + 1);
		uint32_t	i;

		if (fuzz_take(d, 3) == 0)
			buf[len++] = '-';
		for (i = 0; i < ndigits; i++)
		{
			if (i == point && i > 0)
				buf[len++] = '.';
			buf[len++] = (char) ('0' + fuzz_take(d, 10));
		}
		if (fuzz_take(d, 4) == 0)
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, "e%d",
									 (int) fuzz_take(d, 81) - 40);
		buf[len] = '\0';
	}
	if (inc_dec_parse(buf, len, &v) != INC_DEC_OK)
		inc_dec_parse("7", 1, &v);
	if (positive && inc_dec_sign(&v) <= 0)
		inc_dec_parse("2.5", 3, &v);
	return v;
}

/* ---- the small world ----------------------------------------------------- */

/*
 * fuzz_small_dec: is d small?  An input is "small" when every number the calculation multiplies by has
 * magnitude below 10^6 and at most 30 fraction digits, every one it
 * divides by is at least 0.001, and no transaction quantity or amount is
 * negative (so no sum of bases cancels).  Then every figure has at most
 * about 22 integer digits, far inside the 38 digits a reported IncDec
 * holds, and an INC_ERR_RANGE is a bug.  (The fraction digit bound leaves
 * out a known limit: a percent rate with more than 36 fraction digits has
 * an exact pay rate, rate / 100, beyond the 38-digit scale of an IncDec.)
 */
bool
fuzz_small_dec(const IncDec *d, bool divisor, bool nonneg)
{
	static bool init = false;
	static IncDec million,
				minus_million,
				thousandth;

	if (!init)
	{
		inc_dec_parse("1000000", 7, &million);
		inc_dec_parse("-1000000", 8, &minus_million);
		inc_dec_parse("0.001", 5, &thousandth);
		init = true;
	}
	if (d->scale > 30)
		return false;
	if (inc_dec_cmp(d, &million) >= 0 || inc_dec_cmp(d, &minus_million) <= 0)
		return false;
	if (nonneg && inc_dec_sign(d) < 0)
		return false;
	return !divisor || inc_dec_cmp(d, &thousandth) >= 0;
}

/* fuzz_small_offer: are the numbers of offer o small (see above)? */
bool
fuzz_small_offer(const IncOffer *o)
{
	int			i,
				j;

	for (i = 0; i < o->nprices; i++)
		if (!fuzz_small_dec(&o->prices[i].price, false, false))
			return false;
	/* a maximum scales every row (times maximum, divided by the total) */
	if ((o->rules.limits.has_minimum && !fuzz_small_dec(&o->rules.limits.minimum, false, false)) ||
		(o->rules.limits.has_maximum && !fuzz_small_dec(&o->rules.limits.maximum, true, false)))
		return false;
	for (i = 0; i < o->rules.nrequirements; i++)
		if (!fuzz_small_dec(&o->rules.requirements[i].minimum, false, false))
			return false;
	switch (o->strategy)
	{
		case INC_STANDARD:
			for (i = 0; i < o->nentries; i++)
				for (j = 0; j < o->entries[i].nrates; j++)
					if (!fuzz_small_dec(&o->entries[i].rates[j].rate, false, false))
						return false;
			break;
		case INC_STEPPED:
			for (i = 0; i < o->stepped.ntiers; i++)
				if (!fuzz_small_dec(&o->stepped.tiers[i].value, false, false) ||
					(o->stepped.tier_mode == INC_TIERS_INCREMENTAL &&
					 !fuzz_small_dec(&o->stepped.tiers[i].threshold, false, true)))
					return false;
			break;
		case INC_STACKED:
			for (i = 0; i < o->stacked.nsets; i++)
			{
				const IncSkuSet *s = &o->stacked.sets[i];

				for (j = 0; j < s->nconversions; j++)
					if (!fuzz_small_dec(&s->conversions[j].rate, true, false))
						return false;
				for (j = 0; j < s->nrates; j++)
					if (!fuzz_small_dec(&s->rates[j].rate, false, false))
						return false;
			}
			break;
	}
	/* a rate schedule's versions pay their own rates */
	for (i = 0; i < o->nschedule; i++)
		if (!fuzz_small_offer(o->schedule[i].offer))
			return false;
	return true;
}

/* ---- rate schedules ------------------------------------------------------ */

/* NewRate: the current rate, or one of a few small decimals. */
static IncDec
NewRate(FuzzDriver *d, const IncDec *current)
{
	static const char *const small[] = {
		"0", "0.5", "1", "1.25", "2", "3.5", "7", "12.125", "0.01", "0.333"
	};
	const char *text;
	IncDec		v;

	if (fuzz_take(d, 3) == 0)
		return *current;
	text = small[fuzz_take(d, sizeof(small) / sizeof(small[0]))];
	inc_dec_parse(text, strlen(text), &v);
	return v;
}

/* RateCopy: a copy of n rates, each given a new rate (fresh unless keep). */
static IncSkuRate *
RateCopy(FuzzDriver *d, IncCalculator calc, const IncSkuRate *rates, int n, bool keep)
{
	IncSkuRate *copy = inc_alloc(sizeof(IncSkuRate) * (size_t) (n + 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		copy[i] = rates[i];
		if (!keep)
			copy[i].rate = NewRate(d, &rates[i].rate);
		copy[i].pay_rate = inc_offer_pay_rate(calc, &copy[i].rate);
	}
	return copy;
}

/*
 * TierKey: the key of tier t of value, as the parser generates it
 * ({value}_{measure}_greater_than_or_equal_to_{threshold}).
 */
static char *
TierKey(const IncTier *t, const IncDec *value)
{
	char		v[INC_NUM_BUF],
				threshold[INC_NUM_BUF],
				buf[3 * INC_NUM_BUF + 64];

	inc_dec_format_short(value, v, sizeof(v));
	inc_dec_format_short(&t->threshold, threshold, sizeof(threshold));
	snprintf(buf, sizeof(buf), "%s_%s_greater_than_or_equal_to_%s", v, t->measure, threshold);
	return inc_strdup(buf);
}

/*
 * Version: a copy of o with every rate value new (or, keep, the same: the
 * current version): standard rates, stepped tier values (a generated tier
 * key names the new value) and stacked sets' rates.
 */
static IncOffer *
Version(FuzzDriver *d, const IncOffer *o, bool keep)
{
	IncOffer   *v = inc_alloc(sizeof(IncOffer));
	int			i;

	*v = *o;
	v->nschedule = 0;
	v->schedule = NULL;
	switch (o->strategy)
	{
		case INC_STANDARD:
			v->entries = inc_alloc(sizeof(IncStandardEntry) * (size_t) (o->nentries + 1));
			for (i = 0; i < o->nentries; i++)
			{
				v->entries[i] = o->entries[i];
				v->entries[i].rates = RateCopy(d, o->calculator, o->entries[i].rates,
											   o->entries[i].nrates, keep);
			}
			break;
		case INC_STEPPED:
			v->stepped.tiers = inc_alloc(sizeof(IncTier) * (size_t) (o->stepped.ntiers + 1));
			for (i = 0; i < o->stepped.ntiers; i++)
			{
				const IncTier *t = &o->stepped.tiers[i];
				IncTier    *c = &v->stepped.tiers[i];
				char	   *generated = TierKey(t, &t->value);

				*c = *t;
				if (keep)
					continue;
				c->value = NewRate(d, &t->value);
				c->pay_rate = inc_offer_pay_rate(o->calculator, &c->value);
				if (strcmp(t->key, generated) == 0)
					c->key = TierKey(t, &c->value);
			}
			break;
		case INC_STACKED:
			v->stacked.sets = inc_alloc(sizeof(IncSkuSet) * (size_t) (o->stacked.nsets + 1));
			for (i = 0; i < o->stacked.nsets; i++)
			{
				v->stacked.sets[i] = o->stacked.sets[i];
				v->stacked.sets[i].rates = RateCopy(d, o->calculator, o->stacked.sets[i].rates,
													o->stacked.sets[i].nrates, keep);
			}
			break;
	}
	return v;
}

/* fuzz_gen_schedule: two or three versions, the last one o's rates. */
void
fuzz_gen_schedule(FuzzDriver *d, IncOffer *o)
{
	int			n = 2 + (int) fuzz_take(d, 2);
	IncRateVersion *schedule = inc_alloc(sizeof(IncRateVersion) * (size_t) n);
	int32_t		start,
				end,
				date;
	int			i;

	inc_offer_span(o, &start, &end);
	date = start;
	for (i = 0; i < n; i++)
	{
		schedule[i].offer = Version(d, o, i == n - 1);
		if (i == 0)
			schedule[i].effective_from = INT32_MIN;
		else
		{
			/* after the one before, mostly inside the span */
			date += 1 + (int32_t) fuzz_take(d, (uint32_t) (end - start) / 2 + 2);
			schedule[i].effective_from = date;
		}
	}
	o->nschedule = n;
	o->schedule = schedule;
}

/* ---- built-in offers ----------------------------------------------------- */

/*
 * fuzz_builtin_offers: when no part of the input is an acceptable offer
 * (most mutations of a document break it), the driver bytes calculate
 * against one to three of these instead, so such inputs still explore the
 * transactions.  They share SKUs "a", "b", "c" and cover every strategy
 * and calculator, and every program rule (the last three); three have a
 * currency (docs/reference.md, Currencies).
 */
#define B_PERIODS "\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}," \
	"{\"key\":\"q\",\"start_date\":\"2026-07-01\",\"end_date\":\"2027-06-30\"}],"
#define B_HEAD(key, strategy, calc) \
	"{\"offer_key\":\"" key "\",\"strategy_key\":\"" strategy "\",\"calculator_key\":\"" calc "\"," B_PERIODS
#define B_RATE(sku, rate, measure) \
	"{\"sku_key\":\"" sku "\",\"rate\":" rate ",\"measure\":\"" measure "\"}"
#define B_FILTER(period, skus, type) \
	"{\"period_key\":\"" period "\",\"sku_keys\":[" skus "],\"transaction_type\":\"" type "\"}"
#define B_TIER(threshold, value, measure) \
	"{\"threshold\":" threshold ",\"value\":" value ",\"measure\":\"" measure "\"}"

const char *const fuzz_builtin_offers[] = {
	B_HEAD("b.standard.percent", "standard", "percent_of_amount")
	"\"currency\":\"CAD\",\"prices\":[{\"sku_key\":\"a\",\"price\":50.0}],\"incentives\":["
	"{\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":["
	B_RATE("a", "3.0", "percent") "," B_RATE("b", "1.25", "percent") "]},"
	"{\"key\":\"e2\",\"period_key\":\"q\",\"transaction_type\":\"sell\",\"rates\":["
	B_RATE("a", "2", "percent") "]}]}",

	B_HEAD("b.standard.fixed", "standard", "fixed_amount")
	"\"currency\":\"CAD\",\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":["
	B_RATE("a", "1000", "dollars") "," B_RATE("c", "333.333", "dollars") "]}]}",

	B_HEAD("b.stepped.quantity", "stepped", "dollars_per_unit")
	"\"incentive\":{\"filters\":[" B_FILTER("p", "\"a\",\"b\"", "buy") "],"
	"\"threshold_definition\":{\"type\":\"aggregated_quantity\",\"filters\":["
	B_FILTER("p", "\"a\",\"b\",\"c\"", "buy") "," B_FILTER("q", "\"c\"", "sell") "]},"
	"\"rates\":[" B_TIER("0", "0.5", "dollars") "," B_TIER("100", "1.25", "dollars") ","
	B_TIER("-50", "0.1", "dollars") "]}}",

	B_HEAD("b.stepped.amount", "stepped", "percent_of_amount")
	"\"currency\":\"USD\",\"incentive\":{\"filters\":[" B_FILTER("q", "\"b\",\"c\"", "sell") "],"
	"\"threshold_definition\":{\"type\":\"aggregated_amount\",\"filters\":["
	B_FILTER("q", "\"b\"", "sell") "]},"
	"\"rates\":[" B_TIER("1000", "10", "percent") "," B_TIER("2000.0", "15", "percent") "]}}",

	B_HEAD("b.stepped.property", "stepped", "fixed_amount")
	"\"incentive\":{\"filters\":[" B_FILTER("p", "\"a\",\"c\"", "sell") "],"
	"\"threshold_definition\":{\"type\":\"property\",\"property\":{\"key\":\"bp\"}},"
	"\"rates\":[" B_TIER("80", "500", "dollars") "," B_TIER("100", "1000.005", "dollars") "]}}",

	B_HEAD("b.stacked", "stacked", "dollars_per_coverage_unit")
	"\"prices\":[{\"sku_key\":\"b\",\"price\":12.5}],\"incentive\":{\"sku_sets\":["
	"{\"key\":\"s\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":"
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"a\",\"rate\":1.0,\"from\":\"unit\"}]},"
	"\"rates\":[" B_RATE("a", "0", "dollars") "]},"
	"{\"key\":\"t\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":"
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"b\",\"rate\":0.00921875,\"from\":\"gal\"},"
	"{\"sku_key\":\"c\",\"rate\":2,\"from\":\"l\"}]},"
	"\"rates\":[" B_RATE("b", "0.75", "dollars") "," B_RATE("c", "1", "dollars") "]}],"
	"\"stacks\":[{\"sku_set_keys\":[\"s\",\"t\"]},{\"key\":\"t_only\",\"sku_set_keys\":[\"t\"]}]}}",

	B_HEAD("b.rules.capped", "standard", "dollars_per_unit")
	"\"enrollment\":\"required\",\"limits\":{\"minimum\":5,\"maximum\":40},"
	"\"requirements\":[{\"key\":\"c_spend\",\"type\":\"aggregated_amount\",\"minimum\":10,"
	"\"filters\":[" B_FILTER("p", "\"c\"", "buy") "]}],"
	"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":["
	B_RATE("a", "1.5", "dollars") "," B_RATE("b", "0.25", "dollars") "]}]}",

	B_HEAD("b.rules.incremental", "stepped", "percent_of_amount")
	"\"limits\":{\"maximum\":100.005},"
	"\"requirements\":[{\"key\":\"plan\",\"type\":\"property\",\"property\":{\"key\":\"bp\"},\"minimum\":80}],"
	"\"incentive\":{\"tier_mode\":\"incremental\",\"filters\":[" B_FILTER("p", "\"a\",\"b\"", "buy") "],"
	"\"threshold_definition\":{\"type\":\"aggregated_amount\",\"filters\":["
	B_FILTER("p", "\"a\",\"b\"", "buy") "]},"
	"\"rates\":[" B_TIER("0", "2", "percent") "," B_TIER("500", "4", "percent") ","
	B_TIER("1500", "6", "percent") "]}}",

	B_HEAD("b.rules.stacked", "stacked", "dollars_per_coverage_unit")
	"\"enrollment\":\"required\",\"limits\":{\"minimum\":1},"
	"\"requirements\":[{\"key\":\"volume\",\"type\":\"aggregated_quantity\",\"minimum\":2,"
	"\"filters\":[" B_FILTER("p", "\"a\"", "sell") "]}],"
	"\"incentive\":{\"sku_sets\":["
	"{\"key\":\"s\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":"
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"a\",\"rate\":1.0,\"from\":\"unit\"}]},"
	"\"rates\":[" B_RATE("a", "0", "dollars") "]},"
	"{\"key\":\"t\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":"
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"b\",\"rate\":0.5,\"from\":\"gal\"}]},"
	"\"rates\":[" B_RATE("b", "0.75", "dollars") "]}],"
	"\"stacks\":[{\"sku_set_keys\":[\"s\",\"t\"]}]}}",

	B_HEAD("b.growth.only_growth", "stepped", "percent_of_amount")
	"\"incentive\":{\"pays_on\":\"growth\",\"filters\":[" B_FILTER("q", "\"a\",\"b\"", "buy") "],"
	"\"threshold_definition\":{\"type\":\"growth_amount\",\"filters\":["
	B_FILTER("q", "\"a\",\"b\"", "buy") "],"
	"\"baseline\":{\"start_date\":\"2026-01-01\",\"end_date\":\"2026-06-30\"}},"
	"\"rates\":[" B_TIER("-20", "1", "percent") "," B_TIER("10", "2.5", "percent") "]}}",

	B_HEAD("b.growth.banded", "stepped", "dollars_per_unit")
	"\"limits\":{\"maximum\":75},"
	"\"requirements\":[{\"key\":\"grow\",\"type\":\"growth_quantity\",\"minimum\":-40,"
	"\"filters\":[" B_FILTER("p", "\"c\"", "buy") "],\"baseline\":{\"property\":{\"key\":\"bp\"}}}],"
	"\"incentive\":{\"tier_mode\":\"incremental\",\"filters\":[" B_FILTER("p", "\"a\",\"c\"", "buy") "],"
	"\"threshold_definition\":{\"type\":\"growth_quantity\",\"filters\":["
	B_FILTER("p", "\"a\",\"c\"", "buy") "],\"baseline\":{\"property\":{\"key\":\"base\"}}},"
	"\"rates\":[" B_TIER("-100", "0.25", "dollars") "," B_TIER("0", "1", "dollars") ","
	B_TIER("25", "1.5", "dollars") "]}}"
};

const int	fuzz_nbuiltin = (int) (sizeof(fuzz_builtin_offers) / sizeof(fuzz_builtin_offers[0]));

/* ---- the transactions ---------------------------------------------------- */

static const char *const BaseUoms[] = {"gal", "qt", "l", "ml", "unit", "jug", "lb", "kg"};

/* fuzz_pick_uom: a common unit or one of the offers' conversion units. */
const char *
fuzz_pick_uom(FuzzDriver *d, const FuzzVocab *v)
{
	uint32_t	n = (uint32_t) (sizeof(BaseUoms) / sizeof(BaseUoms[0]));
	uint32_t	i = fuzz_take(d, n + (uint32_t) v->nuoms);

	return i < n ? BaseUoms[i] : v->uoms[i - n];
}

/*
 * fuzz_gen_txns: one participant's transactions, sorted by transaction_id,
 * with types, dates around the period ends, SKUs (some unknown),
 * quantities and amounts as fuzzed decimals and units (mostly ones that
 * convert, sometimes any), and one in 16 with some columns NULL.
 */
IncTxn *
fuzz_gen_txns(FuzzDriver *d, const FuzzVocab *v, IncStrMap *sku_uom, int *ntxns)
{
	int			n = (int) fuzz_take(d, FUZZ_MAX_TXNS + 1);
	IncTxn	   *txns = inc_alloc(sizeof(IncTxn) * (size_t) (n + 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		IncTxn	   *t = &txns[i];
		char		id[16];
		uint32_t	pick;

		snprintf(id, sizeof(id), "T%03d", i);	/* byte order = index order */
		t->transaction_id = inc_strdup(id);

		t->transaction_type = fuzz_take(d, 8) == 0 ? "other_type" :
			v->types[fuzz_take(d, (uint32_t) v->ntypes)];

		pick = fuzz_take(d, (uint32_t) v->nperiods);
		switch (fuzz_take(d, 8))
		{
			case 0:
				t->transaction_date = v->starts[pick] - 1;
				break;
			case 1:
				t->transaction_date = v->starts[pick];
				break;
			case 2:
				t->transaction_date = v->ends[pick];
				break;
			case 3:
				t->transaction_date = v->ends[pick] + 1;
				break;
			default:
				t->transaction_date = v->starts[pick] +
					(int32_t) ((uint32_t) (v->ends[pick] - v->starts[pick]) / 2);
				break;
		}

		pick = fuzz_take(d, 8) == 0 ? (uint32_t) v->nskus : fuzz_take(d, (uint32_t) v->nskus);
		t->sku_key = pick < (uint32_t) v->nskus ? v->skus[pick] : "unknown_sku";
		t->quantity = fuzz_gen_dec(d, false);

		/*
		 * Mostly the SKU's own unit (or, for a SKU with none, its stacked
		 * conversion's unit), so that most inputs calculate; sometimes any
		 * unit, which may have no conversion.
		 */
		if (fuzz_take(d, 16) == 0)
			t->uom_key = fuzz_pick_uom(d, v);
		else if (inc_strmap_get(sku_uom, t->sku_key) != NULL)
			t->uom_key = inc_strmap_get(sku_uom, t->sku_key);
		else if (pick < (uint32_t) v->nskus && v->sku_from[pick] != NULL)
			t->uom_key = v->sku_from[pick];
		else
			t->uom_key = fuzz_pick_uom(d, v);
		t->amount = fuzz_gen_dec(d, false);

		/*
		 * A currency, from the amount (no driver byte, so that the corpus
		 * keeps its meaning): mostly none, else USD or CAD (exchange rates
		 * both ways, fuzz_calc.c), rarely EUR (none).
		 */
		{
			uint32_t	h = (uint32_t) ((uint64_t) t->amount.coef % 64);

			t->currency = h < 12 ? "USD" : h < 20 ? "CAD" : h == 20 ? "EUR" : NULL;
		}

		/*
		 * Sometimes NULLs, as a user's view may yield them: the host flags
		 * them and leaves "" or 0 in the field.
		 */
		if (fuzz_take(d, 16) == 0)
		{
			t->nulls = (uint8_t) (1 + fuzz_take(d, 31));
			if (t->nulls & INC_TXN_NULL_TYPE)
				t->transaction_type = "";
			if (t->nulls & INC_TXN_NULL_DATE)
				t->transaction_date = 0;
			if (t->nulls & INC_TXN_NULL_QUANTITY)
				t->quantity = (IncDec) {0, 0};
			if (t->nulls & INC_TXN_NULL_UOM)
				t->uom_key = "";
			if (t->nulls & INC_TXN_NULL_AMOUNT)
				t->amount = (IncDec) {0, 0};
		}
	}
	*ntxns = n;
	return txns;
}

