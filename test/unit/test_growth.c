/*
 * test_growth.c
 *    Unit tests of growth over a baseline and of the forecast's
 *    projection in the engine core (docs/reference.md, Growth over a
 *    baseline; Forecast): the parser's rules for the new fields, each with
 *    its exact message, and small offers whose rows, sums and diagnostics
 *    are checked exactly -- a baseline by dates outside the enrollment
 *    windows, pays_on "growth" under a maximum, growth requirements, zero
 *    and negative baselines, incremental bands over a baseline, and the
 *    projection by a k that is not a whole number, on the fast path and
 *    on the exact one.
 *
 * Offers are written with single quotes for readability and turned into
 * JSON by swapping ' for ".  The invalid documents are also in
 * sql/offers_invalid.sql; keep the two in step.
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"
#include "../../src/core/engine/forecast.h"
#include "../../src/core/numbers/rational.h"

#define HEAD(strategy, calc) \
	"{'offer_key':'o','strategy_key':'" strategy "','calculator_key':'" calc "'," \
	"'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-12-31'}],"
#define FILTER(sku) "{'period_key':'p','sku_keys':['" sku "'],'transaction_type':'buy'}"
#define LAST_YEAR "'baseline':{'start_date':'2025-01-01','end_date':'2025-12-31'}"
#define PLAN "'baseline':{'property':{'key':'plan'}}"
#define TD(type, baseline) \
	"'threshold_definition':{'type':'" type "','filters':[" FILTER("a") "]," baseline "}"
#define STEP(calc, extra, td, tiers, rest) HEAD("stepped", calc) \
	"'incentive':{" extra "'filters':[" FILTER("a") "]," td ",'rates':[" tiers "]}" rest "}"
#define PCT(t, v) "{'threshold':" t ",'value':" v ",'measure':'percent'}"
#define USD(t, v) "{'threshold':" t ",'value':" v ",'measure':'dollars'}"
/* the peer's tiers: +10% -> 2%, +15% -> 3%, +20% -> 4% */
#define TIERS_10_15_20 PCT("10", "2") "," PCT("15", "3") "," PCT("20", "4")
#define STANDARD(rest) \
	HEAD("standard", "percent_of_amount") "'incentives':[{'key':'k','period_key':'p','transaction_type':'buy'," \
	"'rates':[{'sku_key':'a','rate':1,'measure':'percent'}]}]" rest "}"
#define STACKED(extra) HEAD("stacked", "dollars_per_coverage_unit") \
	"'incentive':{" extra "'sku_sets':[{'key':'s','period_key':'p','transaction_type':'t'," \
	"'conversion':{'coverage_unit':'acre','rates':[{'sku_key':'a','rate':1,'from':'gal'}]},'rates':[]}]," \
	"'stacks':[{'sku_set_keys':['s']}]}}"

#define E(msg) "invalid offer \"o\": " msg

typedef struct GrowthCase
{
	const char *doc;			/* ' stands for " */
	const char *message;
} GrowthCase;

static const GrowthCase Invalid[] = {
	{STEP("percent_of_amount", "", TD("growth_amount", "'x':1"), TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline is required")},
	{STEP("percent_of_amount", "", TD("growth_quantity", "'baseline':'2025'"), TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline must be an object")},
	{STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'end_date':'2025-12-31'}"), TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline.start_date is required")},
	{STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'start_date':'2025-01-01'}"), TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline.end_date is required")},
	{STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'start_date':'2025-02-30','end_date':'2025-12-31'}"),
		  TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline.start_date \"2025-02-30\" is not a valid calendar date (February 2025 has 28 days)")},
	{STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'start_date':'2025-02-01','end_date':'2025-04-31'}"),
		  TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline.end_date \"2025-04-31\" is not a valid calendar date (April 2025 has 30 days)")},
	{STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'start_date':'2025/02/01','end_date':'2025-12-31'}"),
		  TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline.start_date must be a date (YYYY-MM-DD)")},
	{STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'start_date':'2025-06-01','end_date':'2025-05-31'}"),
		  TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline.end_date must not be before start_date")},
	{STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'property':{'key':''}}"), TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline.property.key must not be empty")},
	{STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'property':{'key':'plan'},'start_date':'2025-01-01'}"),
		  TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline must have either start_date and end_date or property, not both")},
	{STEP("percent_of_amount", "", TD("aggregated_amount", LAST_YEAR), TIERS_10_15_20, ""),
	E("incentive.threshold_definition.baseline is only for threshold types \"growth_amount\" and \"growth_quantity\"")},
	{STEP("percent_of_amount", "", TD("growth_amount", LAST_YEAR), PCT("10", "2") "," PCT("-100.5", "1"), ""),
	E("incentive.rates[1].threshold must be >= -100 for threshold type \"growth_amount\"")},
	{STEP("percent_of_amount", "'pays_on':'excess',", TD("growth_amount", LAST_YEAR), TIERS_10_15_20, ""),
	E("incentive.pays_on must be one of all_volume, growth")},
	{STEP("percent_of_amount", "'pays_on':'growth',", TD("aggregated_amount", "'baseline':null"), TIERS_10_15_20, ""),
	E("incentive.pays_on \"growth\" is not allowed for threshold type \"aggregated_amount\"")},
	{STEP("fixed_amount", "'pays_on':'growth',", TD("growth_amount", LAST_YEAR), USD("10", "500"), ""),
	E("incentive.pays_on \"growth\" is not allowed for calculator \"fixed_amount\"")},
	{STEP("percent_of_amount", "'pays_on':'growth','tier_mode':'incremental',", TD("growth_amount", LAST_YEAR),
		  TIERS_10_15_20, ""),
	E("incentive.pays_on \"growth\" is not allowed with tier_mode \"incremental\"")},
	{STEP("fixed_amount", "'tier_mode':'incremental',", TD("growth_amount", LAST_YEAR), USD("10", "500"), ""),
	E("incentive.tier_mode \"incremental\" is not allowed for calculator \"fixed_amount\"")},
	{STACKED("'pays_on':'growth',"), E("incentive.pays_on is only for strategy \"stepped\"")},
	{STANDARD(",'requirements':[{'key':'g','type':'growth_amount','minimum':5,'filters':[" FILTER("a") "]}]"),
	E("requirements[0].baseline is required")},
	{STANDARD(",'requirements':[{'key':'g','type':'aggregated_amount','minimum':5,'filters':[" FILTER("a") "]," LAST_YEAR "}]"),
	E("requirements[0].baseline is only for threshold types \"growth_amount\" and \"growth_quantity\"")},
	{STANDARD(",'requirements':[{'key':'g','type':'growth_quantity','minimum':5,'filters':[" FILTER("a") "],"
			  "'baseline':{'start_date':'2025-01-01','end_date':'2024-12-31'}}]"),
	E("requirements[0].baseline.end_date must not be before start_date")},
};

/* Documents that must compile. */
static const char *const Valid[] = {
	STEP("percent_of_amount", "", TD("growth_amount", LAST_YEAR), TIERS_10_15_20, ""),
	STEP("percent_of_amount", "'pays_on':'growth',", TD("growth_quantity", PLAN), TIERS_10_15_20, ""),
	STEP("dollars_per_unit", "'tier_mode':'incremental',", TD("growth_quantity", LAST_YEAR),
		 USD("-100", "0.5") "," USD("-20", "1"), ""),
	STEP("percent_of_amount", "'pays_on':'all_volume',", TD("aggregated_amount", "'baseline':null"), TIERS_10_15_20, ""),
	STEP("fixed_amount", "'pays_on':null,", TD("growth_amount", LAST_YEAR), USD("10", "500"), ""),
	STANDARD(",'requirements':[{'key':'g','type':'growth_quantity','minimum':-50,'filters':[" FILTER("a") "]," PLAN "}]"),
};

static IncOffer *
ParseQuoted(const char *doc, IncOfferError *err)
{
	char	   *json = strdup(doc);
	char	   *q;
	IncOffer   *offer;

	for (q = json; *q; q++)
		if (*q == '\'')
			*q = '"';
	offer = inc_offer_parse(json, strlen(json), err);
	free(json);
	return offer;
}

static void
TestParse(void)
{
	IncOfferError err;
	IncOffer   *o;
	size_t		i;

	for (i = 0; i < sizeof(Valid) / sizeof(Valid[0]); i++)
	{
		o = ParseQuoted(Valid[i], &err);
		CHECK(o != NULL);
		if (o == NULL)
			printf("  valid growth case %zu: %s\n", i, err.message);
	}
	for (i = 0; i < sizeof(Invalid) / sizeof(Invalid[0]); i++)
	{
		o = ParseQuoted(Invalid[i].doc, &err);
		CHECK(o == NULL);
		if (o != NULL)
			printf("  invalid growth case %zu compiled: %s\n", i, Invalid[i].doc);
		else
			CHECK_STR(err.message, Invalid[i].message);
	}

	/* the model of the first two */
	o = ParseQuoted(Valid[0], &err);
	if (o)
	{
		char		date[16];

		CHECK(o->stepped.threshold_type == INC_THRESHOLD_GROWTH_AMOUNT);
		CHECK(o->stepped.pays_on == INC_PAYS_ON_ALL_VOLUME);
		CHECK(o->stepped.baseline.kind == INC_BASELINE_DATES);
		inc_date_format(o->stepped.baseline.end_date, date, sizeof(date));
		CHECK_STR(date, "2025-12-31");
		CHECK(!o->rules.any);
	}
	o = ParseQuoted(Valid[1], &err);
	if (o)
	{
		CHECK(o->stepped.pays_on == INC_PAYS_ON_GROWTH);
		CHECK(o->stepped.baseline.kind == INC_BASELINE_PROPERTY);
		CHECK_STR(o->stepped.baseline.property_key, "plan");
		CHECK_STR(inc_pays_on_name(o->stepped.pays_on), "growth");
	}
	unit_arena_reset();
}

/* The rows of one calculation: "id|key|pay|amount|effective" and their sum. */
typedef struct Rows
{
	int			n;
	char		rows[32][256];
	IncRat		sum;
} Rows;

static void
Collect(void *ctx, const IncRow *row)
{
	Rows	   *r = ctx;
	IncRat		a;

	if (r->n < 32)
		snprintf(r->rows[r->n], sizeof(r->rows[0]), "%s|%s|%s|%s|%s",
				 row->txn->transaction_id, row->rate_key, unit_dec_text(&row->pay_rate),
				 unit_dec_text(&row->incentive_amount),
				 row->effective_rate_null ? "NULL" : unit_dec_text(&row->effective_rate));
	r->n++;
	inc_rat_from_dec(&a, &row->incentive_amount);
	inc_rat_add(&r->sum, &r->sum, &a);
}

static char diagnosed[8192];

static void
Diagnose(void *ctx, const IncOffer *offer, const char *participant_key, const char *group_key,
		 const char *json)
{
	(void) ctx;
	(void) offer;
	(void) participant_key;
	(void) group_key;
	snprintf(diagnosed, sizeof(diagnosed), "%s", json);
}

static IncDec
Dec(const char *s)
{
	IncDec		d = {0, 0};

	inc_dec_parse(s, strlen(s), &d);
	return d;
}

static IncTxn
Txn(const char *id, const char *date, const char *quantity, const char *amount)
{
	IncTxn		t;

	memset(&t, 0, sizeof(t));
	t.transaction_id = id;
	t.transaction_type = "buy";
	inc_date_parse(date, &t.transaction_date);
	t.sku_key = "a";
	t.quantity = Dec(quantity);
	t.uom_key = "gal";
	t.amount = Dec(amount);
	return t;
}

/* Properties: plan = 1000, zero = 0, bad is not a number, the rest missing. */
static IncPropStatus
Props(void *ctx, const char *participant, const char *key, IncDec *value)
{
	(void) ctx;
	(void) participant;
	if (strcmp(key, "plan") == 0 || strcmp(key, "zero") == 0)
	{
		*value = Dec(key[0] == 'p' ? "1000" : "0");
		return INC_PROP_FOUND;
	}
	return strcmp(key, "bad") == 0 ? INC_PROP_NOT_NUMBER : INC_PROP_MISSING;
}

/* Windows of participant "r1": 2026-02-01..2026-02-28 and from 2026-06-01. */
static IncWindow windows[2];

static int
Windows(void *ctx, const char *participant, const char *offer, const IncWindow **out)
{
	(void) ctx;
	(void) offer;
	inc_date_parse("2026-02-01", &windows[0].start_date);
	inc_date_parse("2026-02-28", &windows[0].end_date);
	windows[0].open_ended = false;
	inc_date_parse("2026-06-01", &windows[1].start_date);
	windows[1].open_ended = true;
	*out = windows;
	return strcmp(participant, "r1") == 0 ? 2 : 0;
}

/* Engine: the offer (single-quoted) in an engine with diagnostics, or NULL. */
static IncEngine *
Engine(const char *quoted)
{
	IncOfferError err;
	IncOffer   *offer = ParseQuoted(quoted, &err);
	IncEngine  *e;

	if (offer == NULL)
	{
		unit_failed++;
		printf("FAIL offer did not parse: %s\n", err.message);
		return NULL;
	}
	e = inc_engine_create();
	inc_engine_add_offer(e, offer);
	inc_engine_set_enrollments(e, Windows, NULL);
	inc_engine_set_diagnostics(e, Diagnose, NULL);
	inc_engine_prepare(e);
	return e;
}

/* Run: the offer over txns for participant "r1". */
static void
Run(const char *quoted, const IncTxn *txns, int n, Rows *rows)
{
	IncEngine  *e = Engine(quoted);

	memset(rows, 0, sizeof(*rows));
	inc_rat_from_int(&rows->sum, 0);
	diagnosed[0] = '\0';
	if (e)
		inc_engine_calculate(e, "r1", txns, n, Props, NULL, Collect, rows);
}

/* SumIs: the reported amounts add up to want. */
static bool
SumIs(const Rows *rows, const char *want)
{
	char		text[INC_NUM_BUF];

	inc_rat_format(&rows->sum, 2, text, sizeof(text));
	if (strcmp(text, want) == 0)
		return true;
	printf("     sum %s, want %s\n", text, want);
	return false;
}

/* Has: the last diagnostics contain part. */
static bool
Has(const char *part)
{
	if (strstr(diagnosed, part) != NULL)
		return true;
	printf("     diagnostics lack %s\n     in %s\n", part, diagnosed);
	return false;
}

/*
 * A baseline by dates is not filtered by enrollment; the current value
 * is: 2025's 1,000 against the enrolled 2026 volume.
 */
static void
TestBaselineEnrollment(void)
{
	Rows		r;
	IncTxn		txns[5] = {
		Txn("L1", "2025-03-01", "1", "600"),	/* last year, outside every window */
		Txn("L2", "2025-12-31", "1", "400"),	/* the baseline's last day */
		Txn("N1", "2026-02-10", "1", "700"),	/* enrolled */
		Txn("N2", "2026-03-10", "1", "900"),	/* between the windows: not there */
		Txn("N3", "2026-07-01", "1", "450"),	/* enrolled */
	};

	/* C = 1,150 over B = 1,000: +15% -> 3% */
	Run(STEP("percent_of_amount", "", TD("growth_amount", LAST_YEAR), TIERS_10_15_20, ",'enrollment':'required'"),
		txns, 5, &r);
	CHECK(r.n == 2);
	CHECK_STR(r.rows[0], "N1|3_percent_greater_than_or_equal_to_15|0.03|21.00|0.0300");
	CHECK(SumIs(&r, "34.50"));
	CHECK(Has("\"threshold_type\":\"growth_amount\",\"property_key\":null,\"threshold_value\":15,"
			  "\"pays_on\":\"all_volume\",\"baseline\":{\"start_date\":\"2025-01-01\",\"end_date\":\"2025-12-31\"},"
			  "\"baseline_value\":1000,\"current_value\":1150,\"no_growth_value\":null,"));
	CHECK(Has("\"next_rate_key\":\"4_percent_greater_than_or_equal_to_20\",\"next_threshold\":20,\"gap_to_next\":5,"
			  "\"next_volume\":1200,\"volume_to_next\":50"));
	CHECK(Has("\"transactions_outside_windows\":3"));

	/* the same by quantity: 2 units over 2, +0%: no tier */
	Run(STEP("percent_of_amount", "", TD("growth_quantity", LAST_YEAR), TIERS_10_15_20, ",'enrollment':'required'"),
		txns, 5, &r);
	CHECK(r.n == 0);
	CHECK(Has("\"threshold_value\":0,"));
	CHECK(Has("\"baseline_value\":2,\"current_value\":2,"));
}

/*
 * No growth value: a baseline of 0, a negative one, a missing property;
 * and growth below a negative threshold.
 */
static void
TestNoGrowthValue(void)
{
	Rows		r;
	IncTxn		none[1] = {Txn("N1", "2026-02-10", "1", "700")};
	IncTxn		returned[2] = {
		Txn("L1", "2025-03-01", "-1", "-600"),
		Txn("N1", "2026-02-10", "1", "700"),
	};
	IncTxn		shrank[2] = {
		Txn("L1", "2025-03-01", "1", "1000"),
		Txn("N1", "2026-02-10", "1", "850"),
	};

	Run(STEP("percent_of_amount", "", TD("growth_amount", LAST_YEAR), TIERS_10_15_20, ""), none, 1, &r);
	CHECK(r.n == 0);
	CHECK(Has("\"threshold_value\":null,"));
	CHECK(Has("\"baseline_value\":0,\"current_value\":700,\"no_growth_value\":\"baseline is not positive\""));
	CHECK(Has("\"next_rate_key\":\"2_percent_greater_than_or_equal_to_10\",\"next_threshold\":10,\"gap_to_next\":null,"
			  "\"next_volume\":null,\"volume_to_next\":null"));

	Run(STEP("percent_of_amount", "", TD("growth_amount", LAST_YEAR), TIERS_10_15_20, ""), returned, 2, &r);
	CHECK(r.n == 0);
	CHECK(Has("\"baseline_value\":-600,"));

	Run(STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'property':{'key':'missing'}}"),
			 TIERS_10_15_20, ""), returned, 2, &r);
	CHECK(r.n == 0);
	CHECK(Has("\"baseline\":{\"property_key\":\"missing\"},\"baseline_value\":null,\"current_value\":700,"
			  "\"no_growth_value\":\"baseline is missing\""));

	Run(STEP("percent_of_amount", "", TD("growth_amount", "'baseline':{'property':{'key':'zero'}}"),
			 TIERS_10_15_20, ""), returned, 2, &r);
	CHECK(r.n == 0);
	CHECK(Has("\"no_growth_value\":\"baseline is not positive\""));

	/* -15%: a tier at -20% pays all the volume, and nothing of a growth */
	Run(STEP("percent_of_amount", "", TD("growth_amount", LAST_YEAR), PCT("-20", "1") "," PCT("0", "2"), ""),
		shrank, 2, &r);
	CHECK(r.n == 1);
	CHECK_STR(r.rows[0], "N1|1_percent_greater_than_or_equal_to_-20|0.01|8.50|0.0100");
	Run(STEP("percent_of_amount", "'pays_on':'growth',", TD("growth_amount", LAST_YEAR),
			 PCT("-20", "1") "," PCT("0", "2"), ""), shrank, 2, &r);
	CHECK(r.n == 0);
	CHECK(Has("\"selected_rate_key\":\"1_percent_greater_than_or_equal_to_-20\""));
}

/*
 * pays_on "growth": rows scaled by (C - B) / C and re-rounded by running
 * sums; the limits see the scaled exact amounts.
 */
static void
TestPaysOnGrowth(void)
{
	Rows		r;
	IncTxn		txns[4] = {
		Txn("L1", "2025-05-01", "1", "900"),
		Txn("N1", "2026-02-10", "1", "333.33"),
		Txn("N2", "2026-03-10", "1", "333.33"),
		Txn("N3", "2026-04-10", "1", "333.34"),
	};

	/* C = 1,000, B = 900: +11.1% -> 2% of the growth's 100 = 2.00 */
	Run(STEP("percent_of_amount", "'pays_on':'growth',", TD("growth_amount", LAST_YEAR), TIERS_10_15_20, ""),
		txns, 4, &r);
	CHECK(r.n == 3);
	/* 6.6666 x 0.1 = 0.66666, running sums 0.67, 1.33, 2.00 */
	CHECK_STR(r.rows[0], "N1|2_percent_greater_than_or_equal_to_10|0.02|0.67|0.0020");
	CHECK_STR(r.rows[1], "N2|2_percent_greater_than_or_equal_to_10|0.02|0.66|0.0020");
	CHECK_STR(r.rows[2], "N3|2_percent_greater_than_or_equal_to_10|0.02|0.67|0.0020");
	CHECK(SumIs(&r, "2.00"));
	CHECK(Has("\"incentive_amount\":2}"));

	/* a maximum of 1.50 against U = 2 exactly (the scaled amounts), not 20 */
	Run(STEP("percent_of_amount", "'pays_on':'growth',", TD("growth_amount", LAST_YEAR), TIERS_10_15_20,
			 ",'limits':{'maximum':1.5}"), txns, 4, &r);
	CHECK(r.n == 3);
	CHECK(SumIs(&r, "1.50"));
	CHECK(Has("\"amount_before_limits\":2,\"applied\":\"maximum\"}"));
	/* and a minimum of 2.01 is not reached */
	Run(STEP("percent_of_amount", "'pays_on':'growth',", TD("growth_amount", LAST_YEAR), TIERS_10_15_20,
			 ",'limits':{'minimum':2.01}"), txns, 4, &r);
	CHECK(r.n == 0);
}

/* Incremental tiers over a baseline: band edges B x (1 + t / 100) on C. */
static void
TestIncrementalGrowth(void)
{
	Rows		r;
	IncTxn		txns[2] = {
		Txn("L1", "2025-05-01", "100", "0"),
		Txn("N1", "2026-02-10", "130", "0"),
	};

	/* edges 100 (+0%), 120 (+20%): 1 x 20 + 2 x 10 = 40 over 130 gal */
	Run(STEP("dollars_per_unit", "'tier_mode':'incremental',", TD("growth_quantity", LAST_YEAR),
			 USD("0", "1") "," USD("20", "2"), ""), txns, 2, &r);
	CHECK(r.n == 1);
	CHECK_STR(r.rows[0], "N1|2_dollars_greater_than_or_equal_to_20|0.307692|40.00|NULL");
	CHECK(Has("\"bands\":[{\"rate_key\":\"1_dollars_greater_than_or_equal_to_0\",\"from\":0,\"to\":20,"
			  "\"value\":1,\"volume\":20,\"start_volume\":100,\"end_volume\":120},"
			  "{\"rate_key\":\"2_dollars_greater_than_or_equal_to_20\",\"from\":20,\"to\":null,"
			  "\"value\":2,\"volume\":10,\"start_volume\":120,\"end_volume\":null}]"));

	/* -100% is an edge at 0: every unit earns */
	Run(STEP("dollars_per_unit", "'tier_mode':'incremental',", TD("growth_quantity", LAST_YEAR),
			 USD("-100", "1"), ""), txns, 2, &r);
	CHECK(r.n == 1);
	CHECK_STR(r.rows[0], "N1|1_dollars_greater_than_or_equal_to_-100|1.000000|130.00|NULL");
}

/* Growth requirements: the minimum is a growth percentage. */
static void
TestGrowthRequirement(void)
{
	Rows		r;
	IncTxn		txns[2] = {
		Txn("L1", "2025-05-01", "1", "1000"),
		Txn("N1", "2026-02-10", "1", "1080"),
	};

	Run(STANDARD(",'requirements':[{'key':'grow','type':'growth_amount','minimum':8,"
				 "'filters':[" FILTER("a") "]," LAST_YEAR "}]"), txns, 2, &r);
	CHECK(r.n == 1);
	CHECK(Has("{\"key\":\"grow\",\"type\":\"growth_amount\",\"property_key\":null,\"minimum\":8,"
			  "\"baseline\":{\"start_date\":\"2025-01-01\",\"end_date\":\"2025-12-31\"},"
			  "\"baseline_value\":1000,\"current_value\":1080,\"no_growth_value\":null,"
			  "\"value\":8,\"met\":true,\"gap\":0}"));
	Run(STANDARD(",'requirements':[{'key':'grow','type':'growth_amount','minimum':8.5,"
				 "'filters':[" FILTER("a") "]," LAST_YEAR "}]"), txns, 2, &r);
	CHECK(r.n == 0);
	CHECK(Has("\"value\":8,\"met\":false,\"gap\":0.5}"));
	/* against the plan (1,000) too; against zero: no growth value, not met */
	Run(STANDARD(",'requirements':[{'key':'grow','type':'growth_amount','minimum':8,"
				 "'filters':[" FILTER("a") "]," PLAN "}]"), txns, 2, &r);
	CHECK(r.n == 1);
	Run(STANDARD(",'requirements':[{'key':'grow','type':'growth_amount','minimum':-100,"
				 "'filters':[" FILTER("a") "],'baseline':{'property':{'key':'zero'}}}]"), txns, 2, &r);
	CHECK(r.n == 0);
	CHECK(Has("\"no_growth_value\":\"baseline is not positive\",\"value\":null,\"met\":false,\"gap\":null}"));
}

/* The fixture's peers as a forecast: what the fast path and the exact one print. */
typedef struct Forecasts
{
	int			n;
	char		rows[8][256];
} Forecasts;

static void
CollectForecast(void *ctx, const IncForecastRow *row)
{
	Forecasts  *f = ctx;

	if (f->n < 8)
		snprintf(f->rows[f->n], sizeof(f->rows[0]), "%d/%d|%s|%s|%s|%s|%s|%s|%s",
				 row->elapsed_days, row->span_days,
				 row->has_basis_to_date ? unit_dec_text(&row->basis_to_date) : "",
				 row->has_projected_basis ? unit_dec_text(&row->projected_basis) : "",
				 row->rate_key_to_date ? row->rate_key_to_date : "",
				 row->projected_rate_key ? row->projected_rate_key : "",
				 unit_dec_text(&row->earned_to_date), unit_dec_text(&row->projected_earnings),
				 unit_dec_text(&row->accrual_to_date));
	f->n++;
}

static void
Forecast(const char *quoted, const char *as_of, const IncTxn *txns, int n, Forecasts *out)
{
	IncEngine  *e = Engine(quoted);
	int32_t		date;

	memset(out, 0, sizeof(*out));
	inc_date_parse(as_of, &date);
	if (e == NULL)
		return;
	inc_engine_set_diagnostics(e, NULL, NULL);
	inc_engine_forecast(e, date, "r1", txns, n, Props, NULL, CollectForecast, out);
}

/*
 * The projection: k = 365 / 41 on 2026-02-10, not a whole number; a
 * baseline before the span is not scaled; requirements and limits see the
 * projected volume.
 */
static void
TestProjection(void)
{
	Forecasts	f,
				exact;
	IncTxn		txns[3] = {
		Txn("L1", "2025-05-01", "10", "1000"),
		Txn("N1", "2026-01-15", "1", "70.01"),
		Txn("N2", "2026-02-10", "1", "50.00"),
	};
	int			pass;

	for (pass = 0; pass < 2; pass++)
	{
		inc_set_exact_only(pass == 1);
		/* C = 120.01 x 365 / 41 = 1068.381707..., +6.84% over 1,000: -> 2% at +5% */
		Forecast(STEP("percent_of_amount", "", TD("growth_amount", LAST_YEAR), PCT("5", "2") "," PCT("10", "4"), ""),
				 "2026-02-10", txns, 3, pass ? &exact : &f);
	}
	inc_set_exact_only(false);
	CHECK(f.n == 1);
	CHECK_STR(f.rows[0], "41/365|-87.999000|6.838171||2_percent_greater_than_or_equal_to_5|0.00|21.37|2.40");
	CHECK(exact.n == 1 && strcmp(exact.rows[0], f.rows[0]) == 0);

	/* a requirement met only at the pace (120.01 now, 1,068.38 projected) */
	Forecast(STANDARD(",'requirements':[{'key':'q','type':'aggregated_amount','minimum':1000,'filters':[" FILTER("a") "]}]"),
			 "2026-02-10", txns, 3, &f);
	CHECK(f.n == 1);
	CHECK_STR(f.rows[0], "41/365|||||0.00|10.68|1.20");
	/*
	 * a maximum on the projected total: 10.68 capped at 10; the straight
	 * line's 10 x 41 / 365 = 1.12 is less than the 1.20 already earned,
	 * which is what accrues
	 */
	Forecast(STANDARD(",'limits':{'maximum':10}"), "2026-02-10", txns, 3, &f);
	CHECK(f.n == 1);
	CHECK_STR(f.rows[0], "41/365|||||1.20|10.00|1.20");
	/* past the span's end k = 1: projected = actual */
	Forecast(STANDARD(""), "2027-03-01", txns, 3, &f);
	CHECK(f.n == 1);
	CHECK_STR(f.rows[0], "365/365|||||1.20|1.20|1.20");
	/* before the span starts: no row */
	Forecast(STANDARD(""), "2025-12-31", txns, 1, &f);
	CHECK(f.n == 0);
}

/* test_growth: growth over a baseline and the forecast's projection. */
void
test_growth(void)
{
	TestParse();
	TestBaselineEnrollment();
	TestNoGrowthValue();
	TestPaysOnGrowth();
	TestIncrementalGrowth();
	TestGrowthRequirement();
	TestProjection();
	unit_arena_reset();
}
