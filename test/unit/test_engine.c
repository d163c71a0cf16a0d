/*
 * test_engine.c
 *    The engine core end to end without PostgreSQL: offers parsed from the
 *    fixtures' JSON, transactions built in C, rows captured and checked.
 *
 * The SQL regression tests prove the same cases through the server; these
 * keep the core honest on its own (and under sanitizers and valgrind).
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"

typedef struct Captured
{
	int			n;
	char		rows[64][512];
} Captured;

static void
Capture(void *ctx, const IncRow *row)
{
	Captured   *c = ctx;

	if (c->n < 64)
		snprintf(c->rows[c->n], sizeof(c->rows[0]), "%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s",
				 row->txn->transaction_id, row->offer->offer_key, row->rate_key,
				 row->rate_measure, unit_dec_text(&row->rate_value),
				 unit_dec_text(&row->pay_rate), unit_dec_text(&row->incentivized_quantity),
				 unit_dec_text(&row->incentivized_amount),
				 unit_dec_text(&row->incentive_amount), unit_dec_text(&row->contribution),
				 row->effective_rate_null ? "NULL" : unit_dec_text(&row->effective_rate));
	c->n++;
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

static IncTxn
Txn(const char *id, const char *type, const char *date, const char *sku,
	const char *quantity, const char *uom, const char *amount)
{
	IncTxn		t;

	memset(&t, 0, sizeof(t));
	t.transaction_id = id;
	t.transaction_type = type;
	if (!inc_date_parse(date, &t.transaction_date))
	{
		printf("FAIL bad date in test: %s\n", date);
		exit(1);
	}
	t.sku_key = sku;
	t.quantity = Dec(quantity);
	t.uom_key = uom;
	t.amount = Dec(amount);
	return t;
}

static IncEngine *
EngineFor(const char *offer_json)
{
	IncOfferError err;
	IncOffer   *offer = inc_offer_parse(offer_json, strlen(offer_json), &err);
	IncEngine  *e = inc_engine_create();
	IncDec		f = Dec("128");

	if (offer == NULL)
	{
		printf("FAIL offer did not parse: %s\n", err.message);
		exit(1);
	}
	inc_engine_add_offer(e, offer);
	inc_engine_add_conversion(e, "gal", "fl_oz", &f);
	inc_engine_prepare(e);
	return e;
}

/*
 * ExpectRows: calculate participant over txns[0..n) and check the rows
 * captured are want, in order (NULL-terminated).
 */
static void
ExpectRows(IncEngine *e, const char *participant, IncTxn *txns, int n,
		   const char *const *want)
{
	Captured	c = {0};
	int			k = 0;

	inc_engine_calculate(e, participant, txns, n, NULL, NULL, Capture, &c);
	while (want[k] != NULL)
		k++;
	CHECK(c.n == k);
	for (k = 0; k < c.n && k < 64 && want[k] != NULL; k++)
		CHECK_STR(c.rows[k], want[k]);
}

#define SALE "retailer_sales_to_growers"
#define BUY "retailer_purchases_from_distribution"

static const char *pair_up =
"{\"offer_key\":\"ilevo\",\"strategy_key\":\"stacked\",\"calculator_key\":\"dollars_per_coverage_unit\","
"\"periods\":[{\"key\":\"p\",\"start_date\":\"2025-10-01\",\"end_date\":\"2026-09-30\"}],"
"\"incentive\":{\"sku_sets\":["
"{\"key\":\"seed\",\"period_key\":\"p\",\"transaction_type\":\"" SALE "\","
"\"conversion\":{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"seed\",\"rate\":1.0,\"from\":\"unit\"}]},"
"\"rates\":[{\"sku_key\":\"seed\",\"rate\":0.0,\"measure\":\"dollars\"}]},"
"{\"key\":\"seed_treatment\",\"period_key\":\"p\",\"transaction_type\":\"" SALE "\","
"\"conversion\":{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"ilevo\",\"rate\":0.00921875,\"from\":\"gal\"}]},"
"\"rates\":[{\"sku_key\":\"ilevo\",\"rate\":0.75,\"measure\":\"dollars\"}]}],"
"\"stacks\":[{\"sku_set_keys\":[\"seed\",\"seed_treatment\"]}]}}";

static void
TestStackedPairUp(void)
{
	IncEngine  *e = EngineFor(pair_up);
	IncTxn		full[2] = {
		Txn("G", SALE, "2026-04-01", "ilevo", "10.0", "gal", "4700.0"),
		Txn("H", SALE, "2026-03-20", "seed", "1200", "unit", "66000.00"),
	};
	IncTxn		scaled[3] = {
		Txn("M", SALE, "2026-03-20", "seed", "800", "unit", "44000.00"),
		Txn("N", SALE, "2026-04-20", "ilevo", "5", "gal", "2350.00"),
		Txn("P", SALE, "2026-04-21", "ilevo", "4.21875", "gal", "1982.81"),
	};
	IncTxn		no_seed[1] = {
		Txn("Q", SALE, "2026-04-21", "ilevo", "4", "gal", "1880.00"),
	};

	ExpectRows(e, "r1", full, 2, (const char *const []) {
		"G|ilevo|seed_and_seed_treatment|dollars|0.75|0.75|10.000000|4700.00|813.56|1.000000|0.1731",
		NULL});

	ExpectRows(e, "r3", scaled, 3, (const char *const []) {
		"N|ilevo|seed_and_seed_treatment|dollars|0.75|0.75|4.000000|1880.00|325.42|0.800000|0.1731",
		"P|ilevo|seed_and_seed_treatment|dollars|0.75|0.75|3.375000|1586.25|274.58|0.800000|0.1731",
		NULL});

	ExpectRows(e, "r4", no_seed, 1, (const char *const []) {NULL});
}

static const char *pool =
"{\"offer_key\":\"pool\",\"strategy_key\":\"standard\",\"calculator_key\":\"fixed_amount\","
"\"periods\":[{\"key\":\"p\",\"start_date\":\"2025-10-01\",\"end_date\":\"2026-09-30\"}],"
"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"" BUY "\","
"\"rates\":[{\"sku_key\":\"a\",\"rate\":100,\"measure\":\"dollars\"}]}]}";

static void
TestPennyExactPool(void)
{
	IncEngine  *e = EngineFor(pool);
	IncTxn		three[3] = {
		Txn("F-01", BUY, "2026-01-01", "a", "10", "gal", "500.00"),
		Txn("F-02", BUY, "2026-01-02", "a", "10", "gal", "500.00"),
		Txn("F-03", BUY, "2026-01-03", "a", "10", "gal", "500.00"),
	};
	IncTxn		netting[2] = {
		Txn("F-06", BUY, "2026-01-01", "a", "10", "gal", "500.00"),
		Txn("F-07", BUY, "2026-01-02", "a", "-10", "gal", "-500.00"),
	};

	ExpectRows(e, "r1", three, 3, (const char *const []) {
		"F-01|pool|p_" BUY "|dollars|100|0.066667|10.000000|500.00|33.33|1.000000|0.0667",
		"F-02|pool|p_" BUY "|dollars|100|0.066667|10.000000|500.00|33.34|1.000000|0.0667",
		"F-03|pool|p_" BUY "|dollars|100|0.066667|10.000000|500.00|33.33|1.000000|0.0667",
		NULL});

	ExpectRows(e, "r2", netting, 2, (const char *const []) {NULL});
}

static const char *percent =
"{\"offer_key\":\"base\",\"strategy_key\":\"standard\",\"calculator_key\":\"percent_of_amount\","
"\"periods\":[{\"key\":\"p\",\"start_date\":\"2025-10-01\",\"end_date\":\"2026-09-30\"}],"
"\"incentives\":[{\"key\":\"k\",\"period_key\":\"p\",\"transaction_type\":\"" BUY "\","
"\"rates\":[{\"sku_key\":\"a\",\"rate\":3.0,\"measure\":\"percent\"}]}]}";

static IncTxn missing_conversion[1];
static IncEngine *missing_engine;

static void
RunMissingConversion(void *arg)
{
	Captured	c = {0};

	(void) arg;
	inc_engine_calculate(missing_engine, "r1", missing_conversion, 1, NULL, NULL, Capture, &c);
}

static void
TestPercentTiesAndErrors(void)
{
	IncEngine  *e = EngineFor(percent);
	IncTxn		ties[4] = {
		Txn("A", BUY, "2025-10-01", "a", "2.5", "gal", "0.50"),
		Txn("B", BUY, "2025-10-02", "a", "-2.5", "gal", "-0.50"),
		Txn("C", BUY, "2026-10-01", "a", "1", "gal", "100"),	/* after the period */
		Txn("D", SALE, "2026-01-01", "a", "1", "gal", "100"),	/* wrong type */
	};
	IncErrKind	kind;
	char		message[512];

	ExpectRows(e, "r2", ties, 4, (const char *const []) {
		"A|base|k|percent|3|0.03|2.500000|0.50|0.02|1.000000|0.0400",
		"B|base|k|percent|3|0.03|-2.500000|-0.50|-0.02|1.000000|0.0400",
		NULL});

	inc_engine_set_sku_uom(e, "a", "gal");
	missing_engine = e;
	missing_conversion[0] = Txn("X-1", BUY, "2026-01-01", "a", "3", "drum", "10");
	if (unit_expect_failure(RunMissingConversion, NULL, &kind, message, sizeof(message)))
	{
		CHECK(kind == INC_ERR_NO_CONVERSION);
		CHECK_STR(message, "no unit conversion from \"drum\" to \"gal\" for transaction \"X-1\" (sku \"a\")");
	}
}

/* test_engine: the engine core on fixture cases. */
void
test_engine(void)
{
	TestStackedPairUp();
	TestPennyExactPool();
	TestPercentTiesAndErrors();
}
