/*
 * test_schedule.c
 *    Rate schedules (docs/lifecycle.md, Prospective rate changes): an
 *    offer whose versions differ only in rate values, each transaction
 *    paid at the rates of the version on its date, for every strategy, a
 *    cap over rows of several versions, and a forecast whose projected
 *    part is valued at the schedule's rates over the days left.
 *
 * Every case runs on the fast path and on the exact one (inc_set_exact_only):
 * both must give the rows written out, computed by hand in the comments.
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"
#include "../../src/core/engine/forecast.h"

#define MAXROWS 32

typedef struct Captured
{
	int			n;
	char		rows[MAXROWS][256];
} Captured;

/* Capture: id|rate_key|measure|rate_value|pay_rate|quantity|amount|incentive|contribution. */
static void
Capture(void *ctx, const IncRow *row)
{
	Captured   *c = ctx;

	if (c->n < MAXROWS)
		snprintf(c->rows[c->n], sizeof(c->rows[0]), "%s|%s|%s|%s|%s|%s|%s|%s|%s",
				 row->txn->transaction_id, row->rate_key, row->rate_measure,
				 unit_dec_text(&row->rate_value), unit_dec_text(&row->pay_rate),
				 unit_dec_text(&row->incentivized_quantity),
				 unit_dec_text(&row->incentivized_amount),
				 unit_dec_text(&row->incentive_amount), unit_dec_text(&row->contribution));
	c->n++;
}

static int
CompareRows(const void *a, const void *b)
{
	return strcmp(a, b);
}

static IncDec
Dec(const char *s)
{
	IncDec		d;

	if (inc_dec_parse(s, strlen(s), &d) != INC_DEC_OK)
	{
		printf("FAIL bad decimal in test: %s\n", s);
		exit(1);
	}
	return d;
}

static int32_t
Date(const char *s)
{
	int32_t		d;

	if (!inc_date_parse(s, &d))
	{
		printf("FAIL bad date in test: %s\n", s);
		exit(1);
	}
	return d;
}

static IncTxn
Txn(const char *id, const char *type, const char *date, const char *sku,
	const char *quantity, const char *uom, const char *amount)
{
	IncTxn		t;

	memset(&t, 0, sizeof(t));
	t.transaction_id = id;
	t.transaction_type = type;
	t.transaction_date = Date(date);
	t.sku_key = sku;
	t.quantity = Dec(quantity);
	t.uom_key = uom;
	t.amount = Dec(amount);
	return t;
}

static IncOffer *
Parse(const char *json)
{
	IncOfferError err;
	IncOffer   *offer = inc_offer_parse(json, strlen(json), &err);

	if (offer == NULL)
	{
		printf("FAIL offer did not parse: %s\n", err.message);
		exit(1);
	}
	return offer;
}

/*
 * ScheduleEngine: an engine with one offer of n versions docs[i], each
 * effective from dates[i] (dates[0] is not read); the offer is the last
 * document compiled once more, as a host's cache holds it apart from its
 * versions.
 */
static IncEngine *
ScheduleEngine(const char *const *docs, const char *const *dates, int n)
{
	IncEngine  *e = inc_engine_create();
	const IncOffer *versions[8];
	int32_t		from[8];
	int			i;

	for (i = 0; i < n; i++)
	{
		versions[i] = Parse(docs[i]);
		from[i] = i == 0 ? 0 : Date(dates[i]);
	}
	inc_engine_add_offer_schedule(e, Parse(docs[n - 1]), n, from, versions);
	inc_engine_prepare(e);
	return e;
}

/* CheckRows: the captured rows, sorted, are want (NULL-terminated). */
static void
CheckRows(Captured *c, const char *const *want)
{
	int			k = 0;

	while (want[k] != NULL)
		k++;
	CHECK(c->n == k);
	qsort(c->rows, (size_t) (c->n < MAXROWS ? c->n : MAXROWS), sizeof(c->rows[0]), CompareRows);
	for (k = 0; k < c->n && k < MAXROWS && want[k] != NULL; k++)
		CHECK_STR(c->rows[k], want[k]);
}

/* ExpectRows: the rows of participant over txns[0..n), fast and exact, are want (sorted). */
static void
ExpectRows(IncEngine *e, IncTxn *txns, int n, const char *const *want)
{
	int			exact;

	for (exact = 0; exact < 2; exact++)
	{
		Captured	c = {0};

		inc_set_exact_only(exact == 1);
		inc_engine_calculate(e, "r1", txns, n, NULL, NULL, Capture, &c);
		CheckRows(&c, want);
	}
	inc_set_exact_only(false);
}

#define PERIOD "\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}],"
#define HEAD(calc) "{\"offer_key\":\"o\",\"strategy_key\":\"standard\",\"calculator_key\":\"" calc "\"," PERIOD

#define STD_PERCENT(a) HEAD("percent_of_amount") \
	"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":[" \
	"{\"sku_key\":\"a\",\"rate\":" a ",\"measure\":\"percent\"}]}]}"

/*
 * Standard, percent: 2 % until 2026-03-31, 3 % from 2026-04-01, 5 % from
 * 2026-07-01.  A1 (03-31, 1000) earns 1000 x 2 % = 20.00; A2 (04-01, 1000)
 * 30.00; A3 (06-30, 200.50) 200.50 x 3 % = 6.015 -> 6.02; A4 (07-01, 100)
 * 5.00; each row reports its version's rate and pay rate.
 */
static void
TestStandardPercent(void)
{
	static const char *const docs[] = {STD_PERCENT("2"), STD_PERCENT("3"), STD_PERCENT("5.0")};
	static const char *const dates[] = {NULL, "2026-04-01", "2026-07-01"};
	IncEngine  *e = ScheduleEngine(docs, dates, 3);
	IncTxn		txns[] = {
		Txn("A1", "buy", "2026-03-31", "a", "1", "unit", "1000"),
		Txn("A2", "buy", "2026-04-01", "a", "1", "unit", "1000"),
		Txn("A3", "buy", "2026-06-30", "a", "1", "unit", "200.50"),
		Txn("A4", "buy", "2026-07-01", "a", "1", "unit", "100"),
	};

	ExpectRows(e, txns, 4, (const char *const []) {
		"A1|p_buy|percent|2|0.02|1.000000|1000.00|20.00|1.000000",
		"A2|p_buy|percent|3|0.03|1.000000|1000.00|30.00|1.000000",
		"A3|p_buy|percent|3|0.03|1.000000|200.50|6.02|1.000000",
		"A4|p_buy|percent|5|0.05|1.000000|100.00|5.00|1.000000",
		NULL});
	CHECK(inc_offer_at(inc_engine_offer(e, 0), Date("2026-03-31")) ==
		  inc_engine_offer(e, 0)->schedule[0].offer);
	CHECK(inc_offer_at(inc_engine_offer(e, 0), Date("2026-07-01")) ==
		  inc_engine_offer(e, 0)->schedule[2].offer);
}

#define STD_DOLLARS(b) HEAD("dollars_per_unit") \
	"\"incentives\":[{\"key\":\"k\",\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":[" \
	"{\"sku_key\":\"b\",\"rate\":" b ",\"measure\":\"dollars\"}]}]}"

/*
 * Standard, dollars: 1.50 per unit until 05-31, 1.75 from 06-01.  B1 (3
 * units, 05-31) 4.50; B2 (3 units, 06-01) 5.25; B3 outside the period
 * (2027-01-01) earns nothing.
 */
static void
TestStandardDollars(void)
{
	static const char *const docs[] = {STD_DOLLARS("1.50"), STD_DOLLARS("1.75")};
	static const char *const dates[] = {NULL, "2026-06-01"};
	IncEngine  *e = ScheduleEngine(docs, dates, 2);
	IncTxn		txns[] = {
		Txn("B1", "buy", "2026-05-31", "b", "3", "unit", "90"),
		Txn("B2", "buy", "2026-06-01", "b", "3", "unit", "90"),
		Txn("B3", "buy", "2027-01-01", "b", "3", "unit", "90"),
	};

	ExpectRows(e, txns, 3, (const char *const []) {
		"B1|k|dollars|1.5|1.5|3.000000|90.00|4.50|1.000000",
		"B2|k|dollars|1.75|1.75|3.000000|90.00|5.25|1.000000",
		NULL});
}

#define STEPPED(mode, r0, r1, r2) \
	"{\"offer_key\":\"o\",\"strategy_key\":\"stepped\",\"calculator_key\":\"percent_of_amount\"," PERIOD \
	"\"incentive\":{\"tier_mode\":\"" mode "\",\"filters\":[{\"period_key\":\"p\",\"sku_keys\":[\"c\"],\"transaction_type\":\"buy\"}]," \
	"\"threshold_definition\":{\"type\":\"aggregated_amount\",\"filters\":" \
	"[{\"period_key\":\"p\",\"sku_keys\":[\"c\"],\"transaction_type\":\"buy\"}]}," \
	"\"rates\":[{\"threshold\":0,\"value\":" r0 ",\"measure\":\"percent\"}," \
	"{\"threshold\":10000,\"value\":" r1 ",\"measure\":\"percent\"}," \
	"{\"threshold\":25000,\"value\":" r2 ",\"measure\":\"percent\"}]}}"

/* Diagnosed: the last diagnostics reported. */
typedef struct Diagnosed
{
	char		json[4096];
} Diagnosed;

static void
Diagnose(void *ctx, const IncOffer *offer, const char *participant_key,
		 const char *group_key, const char *json)
{
	(void) offer;
	(void) participant_key;
	(void) group_key;
	snprintf(((Diagnosed *) ctx)->json, sizeof(((Diagnosed *) ctx)->json), "%s", json);
}

/*
 * Stepped, all volume: tiers 0 / 10000 / 25000 at 1 / 2 / 3 % until
 * 06-30, 1.5 / 3 / 4.5 % from 07-01.  V = 8000 + 4000 = 12000 meets
 * 10000 (the current version's choice, the thresholds are the same):
 * S1 (03-01, 8000) at 2 % = 160.00 under 2_percent_..., S2 (08-01, 4000)
 * at 3 % = 120.00 under 3_percent_...  The diagnostics' tier totals follow
 * the schedule: tier 0: 8000 x 1 % + 4000 x 1.5 % = 80 + 60 = 140; tier
 * 10000: 280; tier 25000: 8000 x 3 % + 4000 x 4.5 % = 240 + 180 = 420.
 */
static void
TestSteppedAllVolume(void)
{
	static const char *const docs[] = {
		STEPPED("all_volume", "1", "2", "3"), STEPPED("all_volume", "1.5", "3", "4.5")};
	static const char *const dates[] = {NULL, "2026-07-01"};
	IncEngine  *e = ScheduleEngine(docs, dates, 2);
	IncTxn		txns[] = {
		Txn("S1", "buy", "2026-03-01", "c", "1", "unit", "8000"),
		Txn("S2", "buy", "2026-08-01", "c", "1", "unit", "4000"),
	};
	Diagnosed	d = {{0}};
	Captured	c = {0};

	ExpectRows(e, txns, 2, (const char *const []) {
		"S1|2_percent_greater_than_or_equal_to_10000|percent|2|0.02|1.000000|8000.00|160.00|1.000000",
		"S2|3_percent_greater_than_or_equal_to_10000|percent|3|0.03|1.000000|4000.00|120.00|1.000000",
		NULL});
	inc_engine_set_diagnostics(e, Diagnose, &d);
	inc_engine_calculate(e, "r1", txns, 2, NULL, NULL, Capture, &c);
	CHECK(strstr(d.json, "\"value\":1.5,\"measure\":\"percent\",\"met\":true,\"incentive_amount\":140}") != NULL);
	CHECK(strstr(d.json, "\"met\":true,\"incentive_amount\":280}") != NULL);
	CHECK(strstr(d.json, "\"met\":false,\"incentive_amount\":420}") != NULL);
	CHECK(c.n == 2);
}

/*
 * Stepped, incremental (the bands of docs/reference.md's example): tiers
 * 0 / 10000 / 25000 at 2 / 4 / 6 % until 06-30, 3 / 5 / 8 % from 07-01;
 * V = 20000 + 10000 = 30000, bands 10000, 15000, 5000.  Blended rate of
 * the first version (2 x 10000 + 4 x 15000 + 6 x 5000) / 30000 = 3.6666..%,
 * of the second (3 x 10000 + 5 x 15000 + 8 x 5000) / 30000 = 4.8333..%.
 * I1 (02-01, 20000): 733.333.. -> 733.33, pay rate 0.036667, under the
 * first version's highest tier met (6 %); I2 (09-01, 10000): 483.333.. ->
 * 483.33, pay rate 0.048333, under 8_percent_...
 */
static void
TestSteppedIncremental(void)
{
	static const char *const docs[] = {
		STEPPED("incremental", "2", "4", "6"), STEPPED("incremental", "3", "5", "8")};
	static const char *const dates[] = {NULL, "2026-07-01"};
	IncEngine  *e = ScheduleEngine(docs, dates, 2);
	IncTxn		txns[] = {
		Txn("I1", "buy", "2026-02-01", "c", "1", "unit", "20000"),
		Txn("I2", "buy", "2026-09-01", "c", "1", "unit", "10000"),
	};

	ExpectRows(e, txns, 2, (const char *const []) {
		"I1|6_percent_greater_than_or_equal_to_25000|percent|6|0.036667|1.000000|20000.00|733.33|1.000000",
		"I2|8_percent_greater_than_or_equal_to_25000|percent|8|0.048333|1.000000|10000.00|483.33|1.000000",
		NULL});
}

#define STACKED(key, rate) STACKED_IN(PERIOD, key, rate)
#define STACKED_IN(period, key, rate) \
	"{\"offer_key\":\"o\",\"strategy_key\":\"stacked\",\"calculator_key\":\"dollars_per_coverage_unit\"," period \
	"\"incentive\":{\"sku_sets\":[" \
	"{\"key\":\"seed\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":" \
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"e\",\"rate\":1.0,\"from\":\"unit\"}]},\"rates\":[]}," \
	"{\"key\":\"treat\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":" \
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"f\",\"rate\":0.5,\"from\":\"gal\"}]}," \
	"\"rates\":[{\"sku_key\":\"f\",\"rate\":" rate ",\"measure\":\"dollars\"}]}]," \
	"\"stacks\":[{\"key\":\"" key "\",\"sku_set_keys\":[\"seed\",\"treat\"]}]}}"

/*
 * Stacked: the treatment pays 0.75 per acre until 06-30, 1.00 from 07-01
 * (and the stack is renamed).  C(seed) = 100 (H), C(treat) = 20 / 0.5 +
 * 40 / 0.5 = 120, O = 100, f = 5/6.  G1 (03-01, 20 gal, 600): quantity
 * 16.666667, amount 500.00, 40 x 5/6 x 0.75 = 25.00; G2 (08-01, 40 gal,
 * 1200): 33.333333, 1000.00, 80 x 5/6 x 1.00 = 66.666.. -> 66.67.  The
 * seed SKU has no pay rate in any version: no row.
 */
static void
TestStacked(void)
{
	static const char *const docs[] = {STACKED("stack_a", "0.75"), STACKED("stack_b", "1.00")};
	static const char *const dates[] = {NULL, "2026-07-01"};
	IncEngine  *e = ScheduleEngine(docs, dates, 2);
	IncTxn		txns[] = {
		Txn("G1", "sell", "2026-03-01", "f", "20", "gal", "600"),
		Txn("G2", "sell", "2026-08-01", "f", "40", "gal", "1200"),
		Txn("H", "sell", "2026-02-01", "e", "100", "unit", "5000"),
	};

	ExpectRows(e, txns, 3, (const char *const []) {
		"G1|stack_a|dollars|0.75|0.75|16.666667|500.00|25.00|0.833333",
		"G2|stack_b|dollars|1|1|33.333333|1000.00|66.67|0.833333",
		NULL});
}

#define STD_CAPPED(a) HEAD("percent_of_amount") "\"limits\":{\"maximum\":40}," \
	"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":[" \
	"{\"sku_key\":\"a\",\"rate\":" a ",\"measure\":\"percent\"}]}]}"

/*
 * A cap over rows of two versions: 2 % until 03-31, 3 % from 04-01, at
 * most 40 dollars.  Exact rows 20 (A1, 2 %), 30 (A2) and 6.015 (A3, 3 %):
 * U = 56.015 > 40, so each is scaled by 40 / 56.015 and re-rounded by
 * running sums: S1 = 800 / 56.015 = 14.2818.. -> 14.28; S2 = 2000 /
 * 56.015 = 35.7047.. -> 35.70, A2 gets 21.42; S3 = 40, A3 gets 4.30.  Pay
 * rates stay the nominal ones of each row's version.
 */
static void
TestCap(void)
{
	static const char *const docs[] = {STD_CAPPED("2"), STD_CAPPED("3")};
	static const char *const dates[] = {NULL, "2026-04-01"};
	IncEngine  *e = ScheduleEngine(docs, dates, 2);
	IncTxn		txns[] = {
		Txn("A1", "buy", "2026-03-31", "a", "1", "unit", "1000"),
		Txn("A2", "buy", "2026-04-01", "a", "1", "unit", "1000"),
		Txn("A3", "buy", "2026-06-30", "a", "1", "unit", "200.50"),
	};

	ExpectRows(e, txns, 3, (const char *const []) {
		"A1|p_buy|percent|2|0.02|1.000000|1000.00|14.28|1.000000",
		"A2|p_buy|percent|3|0.03|1.000000|1000.00|21.42|1.000000",
		"A3|p_buy|percent|3|0.03|1.000000|200.50|4.30|1.000000",
		NULL});
}

#define SHORT "\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-01-10\"}],"

#define FC_DOLLARS(b) \
	"{\"offer_key\":\"o\",\"strategy_key\":\"standard\",\"calculator_key\":\"dollars_per_unit\"," SHORT \
	"\"incentives\":[{\"key\":\"k\",\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":[" \
	"{\"sku_key\":\"b\",\"rate\":" b ",\"measure\":\"dollars\"}]}]}"

#define FC_STEPPED(r0, r1, r2) FC_STEPPED_MODE("incremental", r0, r1, r2)
#define FC_STEPPED_MODE(mode, r0, r1, r2) \
	"{\"offer_key\":\"o\",\"strategy_key\":\"stepped\",\"calculator_key\":\"percent_of_amount\"," SHORT \
	"\"incentive\":{\"tier_mode\":\"" mode "\",\"filters\":[{\"period_key\":\"p\",\"sku_keys\":[\"c\"],\"transaction_type\":\"buy\"}]," \
	"\"threshold_definition\":{\"type\":\"aggregated_amount\",\"filters\":" \
	"[{\"period_key\":\"p\",\"sku_keys\":[\"c\"],\"transaction_type\":\"buy\"}]}," \
	"\"rates\":[{\"threshold\":0,\"value\":" r0 ",\"measure\":\"percent\"}," \
	"{\"threshold\":10000,\"value\":" r1 ",\"measure\":\"percent\"}," \
	"{\"threshold\":25000,\"value\":" r2 ",\"measure\":\"percent\"}]}}"

typedef struct Forecast
{
	int			n;
	char		row[256];
} Forecast;

/* KeepForecast: earned_to_date|projected_earnings|accrual_to_date of the last row. */
static void
KeepForecast(void *ctx, const IncForecastRow *row)
{
	Forecast   *f = ctx;

	snprintf(f->row, sizeof(f->row), "%s|%s|%s", unit_dec_text(&row->earned_to_date),
			 unit_dec_text(&row->projected_earnings), unit_dec_text(&row->accrual_to_date));
	f->n++;
}

/*
 * ExpectForecast: the projected rows as of as_of (inc_engine_set_projection)
 * are want, and the forecast row is forecast; fast and exact.
 */
static void
ExpectForecast(IncEngine *e, const char *as_of, IncTxn *txns, int n,
			   const char *const *want, const char *forecast)
{
	int32_t		date = Date(as_of);
	int			exact;

	for (exact = 0; exact < 2; exact++)
	{
		Captured	c = {0};
		Forecast	f = {0};

		inc_set_exact_only(exact == 1);
		inc_engine_set_projection(e, &date);
		inc_engine_calculate(e, "r1", txns, n, NULL, NULL, Capture, &c);
		inc_engine_set_projection(e, NULL);
		CheckRows(&c, want);
		inc_engine_forecast(e, date, "r1", txns, n, NULL, NULL, KeepForecast, &f);
		CHECK(f.n == 1);
		CHECK_STR(f.row, forecast);
	}
	inc_set_exact_only(false);
}

/*
 * A forecast across a change after the as-of date.  Span 01-01 .. 01-10,
 * as of 01-04: elapsed 4, span 10, k = 2.5; the days left 01-05 .. 01-10
 * (R = 6).  Dollars: 1 per unit, 2 from 01-03, 4 from 01-08: the days
 * left are 3 at 2 and 3 at 4, so the projected part's rate is (2 x 3 +
 * 4 x 3) / 6 = 3.  F1 (01-02, 10 units, 100) projects to 25 units, 250.00
 * and earns 10 x 1 + 1.5 x 10 x 3 = 55.00; F2 (01-04, 4 units, 40) 10
 * units, 100.00, 4 x 2 + 1.5 x 4 x 3 = 26.00.  Earned to date 10 + 8 =
 * 18.00, projected 81.00, accrual 81 x 4 / 10 = 32.40.
 */
static void
TestForecastStandard(void)
{
	static const char *const docs[] = {FC_DOLLARS("1"), FC_DOLLARS("2"), FC_DOLLARS("4")};
	static const char *const dates[] = {NULL, "2026-01-03", "2026-01-08"};
	IncEngine  *e = ScheduleEngine(docs, dates, 3);
	IncTxn		txns[] = {
		Txn("F1", "buy", "2026-01-02", "b", "10", "unit", "100"),
		Txn("F2", "buy", "2026-01-04", "b", "4", "unit", "40"),
	};

	ExpectForecast(e, "2026-01-04", txns, 2, (const char *const []) {
		"F1|k|dollars|1|1|25.000000|250.00|55.00|1.000000",
		"F2|k|dollars|2|2|10.000000|100.00|26.00|1.000000",
		NULL}, "18.00|81.00|32.40");
}

/*
 * A forecast of incremental tiers across a change: 2 / 4 / 6 % until
 * 01-07, 3 / 5 / 8 % from 01-08; as of 01-04 (k = 2.5, days left 3 of
 * each version).  Projected V = (4000 + 8000) x 2.5 = 30000: the first
 * version blends to 3.6666..% (110000 / 30000), the second to 4.8333..%
 * (145000 / 30000), the projected part at their day-weighted mean
 * 4.25 %.  I1 (01-02, 4000): 4000 x 3.6666..% + 1.5 x 4000 x 4.25 % =
 * 146.666.. + 255 = 401.67; I2 (01-04, 8000): 293.333.. + 510 = 803.33.
 * Actual: V = 12000, blend (2 x 10000 + 4 x 2000) / 12000 = 2.3333..%:
 * 93.33 + 186.67 = 280.00.  Accrual 1205 x 4 / 10 = 482.00.
 */
static void
TestForecastIncremental(void)
{
	static const char *const docs[] = {FC_STEPPED("2", "4", "6"), FC_STEPPED("3", "5", "8")};
	static const char *const dates[] = {NULL, "2026-01-08"};
	IncEngine  *e = ScheduleEngine(docs, dates, 2);
	IncTxn		txns[] = {
		Txn("I1", "buy", "2026-01-02", "c", "1", "unit", "4000"),
		Txn("I2", "buy", "2026-01-04", "c", "1", "unit", "8000"),
	};

	ExpectForecast(e, "2026-01-04", txns, 2, (const char *const []) {
		"I1|6_percent_greater_than_or_equal_to_25000|percent|6|0.036667|2.500000|10000.00|401.67|1.000000",
		"I2|6_percent_greater_than_or_equal_to_25000|percent|6|0.036667|2.500000|20000.00|803.33|1.000000",
		NULL}, "280.00|1205.00|482.00");
}

/*
 * A stacked forecast: 0.75 per acre until 01-07, 1.00 from 01-08; as of
 * 01-04 (k = 2.5, the days left 3 at 0.75 and 3 at 1.00: 0.875).
 * Projected: C(seed) = 100 x 2.5 = 250, C(treat) = 40 x 2.5 = 100, f = 1;
 * G1 (01-02, 20 gal, 600) earns 40 x 0.75 + 1.5 x 40 x 0.875 = 30 + 52.5
 * = 82.50 on 50 gal and 1500.00.  Actual: O = 40, f = 1, 30.00.  Accrual
 * 82.50 x 4 / 10 = 33.00.
 */
static void
TestForecastStacked(void)
{
	static const char *const docs[] = {
		STACKED_IN(SHORT, "stack_a", "0.75"), STACKED_IN(SHORT, "stack_b", "1.00")};
	static const char *const dates[] = {NULL, "2026-01-08"};
	IncEngine  *e = ScheduleEngine(docs, dates, 2);
	IncTxn		txns[] = {
		Txn("G1", "sell", "2026-01-02", "f", "20", "gal", "600"),
		Txn("H", "sell", "2026-01-01", "e", "100", "unit", "5000"),
	};

	ExpectForecast(e, "2026-01-04", txns, 2, (const char *const []) {
		"G1|stack_a|dollars|0.75|0.75|50.000000|1500.00|82.50|1.000000",
		NULL}, "30.00|82.50|33.00");
}

/*
 * A forecast of all-volume tiers: 2 / 4 / 6 % until 01-07, 3 / 5 / 8 %
 * from 01-08, as of 01-04.  Projected V = 30000 meets 25000: 6 % on the
 * transactions' own part, the mean (6 x 3 + 8 x 3) / 6 = 7 % on the
 * projected part: I1 4000 x 6 % + 1.5 x 4000 x 7 % = 240 + 420 = 660.00,
 * I2 480 + 840 = 1320.00.  Actual V = 12000 meets 10000 at 4 %: 160 +
 * 320 = 480.00.  Accrual 1980 x 4 / 10 = 792.00.
 */
static void
TestForecastAllVolume(void)
{
	static const char *const docs[] = {
		FC_STEPPED_MODE("all_volume", "2", "4", "6"), FC_STEPPED_MODE("all_volume", "3", "5", "8")};
	static const char *const dates[] = {NULL, "2026-01-08"};
	IncEngine  *e = ScheduleEngine(docs, dates, 2);
	IncTxn		txns[] = {
		Txn("I1", "buy", "2026-01-02", "c", "1", "unit", "4000"),
		Txn("I2", "buy", "2026-01-04", "c", "1", "unit", "8000"),
	};

	ExpectForecast(e, "2026-01-04", txns, 2, (const char *const []) {
		"I1|6_percent_greater_than_or_equal_to_25000|percent|6|0.06|2.500000|10000.00|660.00|1.000000",
		"I2|6_percent_greater_than_or_equal_to_25000|percent|6|0.06|2.500000|20000.00|1320.00|1.000000",
		NULL}, "480.00|1980.00|792.00");
}

void
test_schedule(void)
{
	TestStandardPercent();
	TestStandardDollars();
	TestSteppedAllVolume();
	TestSteppedIncremental();
	TestStacked();
	TestCap();
	TestForecastStandard();
	TestForecastIncremental();
	TestForecastStacked();
	TestForecastAllVolume();
}
