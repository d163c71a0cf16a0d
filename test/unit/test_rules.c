/*
 * test_rules.c
 *    Unit tests of the program rules in the engine core (docs/reference.md,
 *    Program rules): incremental tiers (strategy_stepped.c) and enrollment,
 *    requirements and limits (rules.c), each on small offers written here,
 *    with the rows, their sums and the diagnostics checked exactly.
 *
 * Offers are written with single quotes for readability and turned into
 * JSON by swapping ' for ".
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"
#include "../../src/core/numbers/rational.h"
#include "../../src/core/products/products.h"

#define HEAD(strategy, calc) \
	"{'offer_key':'o','strategy_key':'" strategy "','calculator_key':'" calc "'," \
	"'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-12-31'}],"
#define FILTER(sku) "{'period_key':'p','sku_keys':['" sku "'],'transaction_type':'buy'}"
#define STEPPED(calc, type, tiers, rest) \
	HEAD("stepped", calc) "'incentive':{'tier_mode':'incremental','filters':[" FILTER("a") "]," \
	"'threshold_definition':{'type':'" type "','filters':[" FILTER("a") "]},'rates':[" tiers "]}" rest "}"
#define PCT(t, v) "{'threshold':" t ",'value':" v ",'measure':'percent'}"
#define USD(t, v) "{'threshold':" t ",'value':" v ",'measure':'dollars'}"
#define STANDARD(calc, measure, rate, rest) \
	HEAD("standard", calc) "'incentives':[{'key':'k','period_key':'p','transaction_type':'buy'," \
	"'rates':[{'sku_key':'a','rate':" rate ",'measure':'" measure "'}]}]" rest "}"

/* The rows of one calculation: "id|key|value|pay|amount|effective" and their sum. */
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
		snprintf(r->rows[r->n], sizeof(r->rows[0]), "%s|%s|%s|%s|%s|%s",
				 row->txn->transaction_id, row->rate_key, unit_dec_text(&row->rate_value),
				 unit_dec_text(&row->pay_rate), unit_dec_text(&row->incentive_amount),
				 row->effective_rate_null ? "NULL" : unit_dec_text(&row->effective_rate));
	r->n++;
	inc_rat_from_dec(&a, &row->incentive_amount);
	inc_rat_add(&r->sum, &r->sum, &a);
}

/* Diagnostics: the last JSON reported. */
static char diagnosed[4096];

static void
Diagnose(void *ctx, const IncOffer *offer, const char *participant_key,
		 const char *group_key, const char *json)
{
	(void) participant_key;
	(void) group_key;
	(void) ctx;
	(void) offer;
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
Txn(const char *id, const char *date, const char *sku, const char *quantity, const char *amount)
{
	IncTxn		t;

	memset(&t, 0, sizeof(t));
	t.transaction_id = id;
	t.transaction_type = "buy";
	inc_date_parse(date, &t.transaction_date);
	t.sku_key = sku;
	t.quantity = Dec(quantity);
	t.uom_key = "gal";
	t.amount = Dec(amount);
	return t;
}

/* Properties: bp = 95, np is not a number, everything else missing. */
static IncPropStatus
Props(void *ctx, const char *participant, const char *key, IncDec *value)
{
	(void) ctx;
	(void) participant;
	if (strcmp(key, "bp") == 0)
	{
		*value = Dec("95");
		return INC_PROP_FOUND;
	}
	return strcmp(key, "np") == 0 ? INC_PROP_NOT_NUMBER : INC_PROP_MISSING;
}

/* Windows of participant "r1" in every offer: 2026-02-01..2026-02-28 and from 2026-06-01. */
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

/* The catalog of Run, when set (TestDistinctProducts). */
static IncProducts *catalog;

/* Run: the offer (single-quoted) over txns for participant; diagnostics on. */
static void
Run(const char *quoted, const char *participant, const IncTxn *txns, int n, Rows *rows)
{
	char	   *json = strdup(quoted);
	char	   *q;
	IncOfferError err;
	IncOffer   *offer;
	IncEngine  *e = inc_engine_create();

	for (q = json; *q; q++)
		if (*q == '\'')
			*q = '"';
	offer = inc_offer_parse(json, strlen(json), &err);
	free(json);
	memset(rows, 0, sizeof(*rows));
	inc_rat_from_int(&rows->sum, 0);
	diagnosed[0] = '\0';
	if (offer == NULL)
	{
		unit_failed++;
		printf("FAIL offer did not parse: %s\n", err.message);
		return;
	}
	inc_engine_add_offer(e, offer);
	if (catalog)
		inc_engine_set_products(e, catalog);
	inc_engine_set_enrollments(e, Windows, NULL);
	inc_engine_set_diagnostics(e, Diagnose, NULL);
	inc_engine_prepare(e);
	inc_engine_calculate(e, participant, txns, n, Props, NULL, Collect, rows);
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

/* The reference's example: 0 -> 2%, 10,000 -> 4%, 25,000 -> 6%. */
#define TIERS_2_4_6 PCT("25000", "6") "," PCT("0", "2") "," PCT("10000", "4")

static void
TestIncremental(void)
{
	Rows		r;
	IncTxn		one[1] = {Txn("A", "2026-03-01", "a", "60", "30000")};
	IncTxn		three[3] = {
		Txn("A", "2026-03-01", "a", "20", "10000"),
		Txn("B", "2026-03-02", "a", "20", "10000"),
		Txn("C", "2026-03-03", "a", "20", "10000"),
	};
	IncTxn		at_tier[1] = {Txn("A", "2026-03-01", "a", "20", "10000")};
	IncTxn		nothing[2] = {
		Txn("A", "2026-03-01", "a", "20", "100"),
		Txn("B", "2026-03-02", "a", "-20", "-100"),
	};
	IncTxn		gallons[1] = {Txn("G", "2026-03-01", "a", "150", "2700")};

	/* R = (2 x 10000 + 4 x 15000 + 6 x 5000) / 30000 = 3.666...% */
	Run(STEPPED("percent_of_amount", "aggregated_amount", TIERS_2_4_6, ""), "r", one, 1, &r);
	CHECK(r.n == 1);
	CHECK_STR(r.rows[0], "A|6_percent_greater_than_or_equal_to_25000|6|0.036667|1100.00|0.0367");
	CHECK(strstr(diagnosed, "\"tier_mode\":\"incremental\"") != NULL);
	CHECK(strstr(diagnosed, "\"blended_rate\":3.666667,\"next_blended_rate\":null,\"bands\":["
				  "{\"rate_key\":\"2_percent_greater_than_or_equal_to_0\",\"from\":0,\"to\":10000,\"value\":2,\"volume\":10000},"
				  "{\"rate_key\":\"4_percent_greater_than_or_equal_to_10000\",\"from\":10000,\"to\":25000,\"value\":4,\"volume\":15000},"
				  "{\"rate_key\":\"6_percent_greater_than_or_equal_to_25000\",\"from\":25000,\"to\":null,\"value\":6,\"volume\":5000}]") != NULL);

	/* each row rounded on its own: 3 x 366.67 */
	Run(STEPPED("percent_of_amount", "aggregated_amount", TIERS_2_4_6, ""), "r", three, 3, &r);
	CHECK(r.n == 3);
	CHECK_STR(r.rows[1], "B|6_percent_greater_than_or_equal_to_25000|6|0.036667|366.67|0.0367");
	CHECK(SumIs(&r, "1100.01"));

	/* exactly at a threshold: that tier is the highest met, its band is empty */
	Run(STEPPED("percent_of_amount", "aggregated_amount", TIERS_2_4_6, ""), "r", at_tier, 1, &r);
	CHECK(r.n == 1);
	CHECK_STR(r.rows[0], "A|4_percent_greater_than_or_equal_to_10000|4|0.020000|200.00|0.0200");
	CHECK(strstr(diagnosed, "\"blended_rate\":2,\"next_blended_rate\":3.2,") != NULL);

	/* V = 0 with a tier at 0: no rows, no tier */
	Run(STEPPED("percent_of_amount", "aggregated_amount", TIERS_2_4_6, ""), "r", nothing, 2, &r);
	CHECK(r.n == 0);
	CHECK(strstr(diagnosed, "\"selected_rate_key\":null") != NULL);
	CHECK(strstr(diagnosed, "\"met\":true") == NULL);

	/* dollars per unit on gallons: only the 50 gal above 100 earn, R = 1/3 */
	Run(STEPPED("dollars_per_unit", "aggregated_quantity",
				"{'key':'base','threshold':100,'value':1.0,'measure':'dollars'},"
				"{'key':'premium','threshold':200,'value':1.5,'measure':'dollars'}", ""),
		"r", gallons, 1, &r);
	CHECK(r.n == 1);
	CHECK_STR(r.rows[0], "G|base|1|0.333333|50.00|0.0185");
	/* at the next threshold (200 gal): (1 x 100) / 200 */
	CHECK(strstr(diagnosed, "\"blended_rate\":0.333333,\"next_blended_rate\":0.5,") != NULL);

	/* below the lowest threshold: nothing */
	Run(STEPPED("dollars_per_unit", "aggregated_quantity", USD("200", "1"), ""), "r", gallons, 1, &r);
	CHECK(r.n == 0);
}

static void
TestLimits(void)
{
	Rows		r;
	IncTxn		three[3] = {
		Txn("A", "2026-03-01", "a", "1", "500.00"),
		Txn("B", "2026-03-02", "a", "1", "500.00"),
		Txn("C", "2026-03-03", "a", "1", "500.00"),
	};
	IncTxn		returned[2] = {
		Txn("A", "2026-03-01", "a", "1", "500.00"),
		Txn("B", "2026-03-02", "a", "-3", "-1500.00"),
	};

	/* a pool of 100 shared 33.33 / 33.34 / 33.33, capped at 50: U = 100 */
	Run(STANDARD("fixed_amount", "dollars", "100", ",'limits':{'maximum':50}"), "r", three, 3, &r);
	CHECK(r.n == 3);
	CHECK_STR(r.rows[0], "A|k|100|0.066667|16.67|0.0333");
	CHECK_STR(r.rows[1], "B|k|100|0.066667|16.67|0.0333");
	CHECK_STR(r.rows[2], "C|k|100|0.066667|16.66|0.0333");
	CHECK(SumIs(&r, "50.00"));
	CHECK(strstr(diagnosed, "\"limits\":{\"minimum\":null,\"maximum\":50,"
				  "\"amount_before_limits\":100,\"applied\":\"maximum\"},\"incentive_amount\":50}") != NULL);

	/* 1% of 1,500 = 15 is below a minimum of 15.01: no rows; at 15 it pays */
	Run(STANDARD("percent_of_amount", "percent", "1", ",'limits':{'minimum':15.01}"), "r", three, 3, &r);
	CHECK(r.n == 0);
	CHECK(strstr(diagnosed, "\"applied\":\"minimum\"},\"incentive_amount\":0}") != NULL);
	Run(STANDARD("percent_of_amount", "percent", "1", ",'limits':{'minimum':15,'maximum':15}"), "r", three, 3, &r);
	CHECK(r.n == 3);
	CHECK(SumIs(&r, "15.00"));
	CHECK(strstr(diagnosed, "\"applied\":null") != NULL);

	/* a negative total is under any maximum: unchanged */
	Run(STANDARD("percent_of_amount", "percent", "1", ",'limits':{'maximum':1}"), "r", returned, 2, &r);
	CHECK(r.n == 2);
	CHECK(SumIs(&r, "-10.00"));

	/* 1/3 of each row: 3 x 1.6666... re-rounded by running sums to 5.00 */
	Run(STANDARD("dollars_per_unit", "dollars", "5", ",'limits':{'maximum':5}"), "r", three, 3, &r);
	CHECK_STR(r.rows[0], "A|k|5|5|1.67|0.0033");
	CHECK_STR(r.rows[1], "B|k|5|5|1.66|0.0033");
	CHECK_STR(r.rows[2], "C|k|5|5|1.67|0.0033");
	CHECK(SumIs(&r, "5.00"));
}

static IncTxn bad_property_txn[1];

static void
RunBadProperty(void *arg)
{
	Rows		r;

	(void) arg;
	Run(STANDARD("percent_of_amount", "percent", "1",
				 ",'requirements':[{'key':'q','type':'property','property':{'key':'np'},'minimum':1}]"),
		"r", bad_property_txn, 1, &r);
}

static void
TestRequirements(void)
{
	Rows		r;
	IncTxn		txns[2] = {
		Txn("A", "2026-03-01", "a", "10", "1000.00"),
		Txn("B", "2026-03-02", "z", "4", "200.00"),	/* a SKU only a requirement names */
	};
	IncErrKind	kind;
	char		message[512];

	/* z's quantity (4) against a minimum of 4, and bp (95) against 90: met */
	Run(STANDARD("percent_of_amount", "percent", "1",
				 ",'requirements':[{'key':'z_volume','type':'aggregated_quantity','minimum':4,'filters':[" FILTER("z") "]},"
				 "{'key':'plan','type':'property','property':{'key':'bp'},'minimum':90}]"),
		"r", txns, 2, &r);
	CHECK(r.n == 1);
	CHECK_STR(r.rows[0], "A|k|1|0.01|10.00|0.0100");
	CHECK(strstr(diagnosed, "\"requirements\":["
				  "{\"key\":\"z_volume\",\"type\":\"aggregated_quantity\",\"property_key\":null,\"minimum\":4,\"value\":4,\"met\":true,\"gap\":0},"
				  "{\"key\":\"plan\",\"type\":\"property\",\"property_key\":\"bp\",\"minimum\":90,\"value\":95,\"met\":true,\"gap\":0}],"
				  "\"qualified\":true") != NULL);

	/* z's amount (200) short of 250, and a missing property: no rows */
	Run(STANDARD("percent_of_amount", "percent", "1",
				 ",'requirements':[{'key':'z_spend','type':'aggregated_amount','minimum':250,'filters':[" FILTER("z") "]},"
				 "{'key':'other','type':'property','property':{'key':'missing'},'minimum':0}]"),
		"r", txns, 2, &r);
	CHECK(r.n == 0);
	CHECK(strstr(diagnosed, "\"value\":200,\"met\":false,\"gap\":50}") != NULL);
	CHECK(strstr(diagnosed, "\"value\":null,\"met\":false,\"gap\":null}") != NULL);
	CHECK(strstr(diagnosed, "\"qualified\":false") != NULL);

	/* a property that is not a number is the stepped property's error */
	bad_property_txn[0] = txns[0];
	if (unit_expect_failure(RunBadProperty, NULL, &kind, message, sizeof(message)))
	{
		CHECK(kind == INC_ERR_PROPERTY_NOT_NUMBER);
		CHECK_STR(message, "property \"np\" of participant \"r\" is not a number");
	}
}

static void
TestEnrollment(void)
{
	Rows		r;
	IncTxn		txns[5] = {
		Txn("A", "2026-01-31", "a", "1", "100"),	/* before the first window */
		Txn("B", "2026-02-01", "a", "1", "100"),	/* its first day */
		Txn("C", "2026-02-28", "a", "1", "100"),	/* its last day */
		Txn("D", "2026-03-01", "a", "1", "100"),	/* between the windows */
		Txn("E", "2026-12-31", "a", "1", "100"),	/* in the open-ended one */
	};

	Run(STANDARD("percent_of_amount", "percent", "10", ",'enrollment':'required'"), "r1", txns, 5, &r);
	CHECK(r.n == 3);
	CHECK(strncmp(r.rows[0], "B|", 2) == 0);
	CHECK(strncmp(r.rows[1], "C|", 2) == 0);
	CHECK(strncmp(r.rows[2], "E|", 2) == 0);
	CHECK(strstr(diagnosed, "\"rules\":{\"enrollment\":\"required\",\"windows\":["
				  "{\"start_date\":\"2026-02-01\",\"end_date\":\"2026-02-28\"},"
				  "{\"start_date\":\"2026-06-01\",\"end_date\":null}],"
				  "\"transactions_outside_windows\":2,\"requirements\":[],\"qualified\":true,\"limits\":null,"
				  "\"incentive_amount\":null}}") != NULL);

	/* not enrolled: nothing */
	Run(STANDARD("percent_of_amount", "percent", "10", ",'enrollment':'required'"), "r2", txns, 5, &r);
	CHECK(r.n == 0);

	/* outside the windows no threshold either: 300 enrolled < 400 */
	Run(HEAD("stepped", "percent_of_amount") "'enrollment':'required','incentive':{'filters':[" FILTER("a") "],"
		"'threshold_definition':{'type':'aggregated_amount','filters':[" FILTER("a") "]},'rates':[" PCT("400", "5") "]}}",
		"r1", txns, 5, &r);
	CHECK(r.n == 0);
	CHECK(strstr(diagnosed, "\"threshold_value\":300,") != NULL);

	/* nor a requirement value */
	Run(STANDARD("percent_of_amount", "percent", "10",
				 ",'enrollment':'required','requirements':[{'key':'q','type':'aggregated_amount','minimum':301,'filters':[" FILTER("a") "]}]"),
		"r1", txns, 5, &r);
	CHECK(r.n == 0);
	CHECK(strstr(diagnosed, "\"value\":300,\"met\":false,\"gap\":1}") != NULL);

	/* an open offer ignores the windows */
	Run(STANDARD("percent_of_amount", "percent", "10", ",'enrollment':'open'"), "r2", txns, 5, &r);
	CHECK(r.n == 5);
	CHECK(strstr(diagnosed, "\"rules\"") == NULL);
}

/*
 * A standard offer paying 1% on SKUs a and b, whose requirement counts the
 * products seed (SKU a) and treat (SKU b from 2026-03-01, c always) in
 * which the participant's transactions matching filters have a net
 * provided amount > 0.
 */
#define DISTINCT(minimum, filters) \
	HEAD("standard", "percent_of_amount") "'incentives':[{'key':'k','period_key':'p','transaction_type':'buy'," \
	"'rates':[{'sku_key':'a','rate':1,'measure':'percent'},{'sku_key':'b','rate':1,'measure':'percent'}]}]," \
	"'requirements':[{'key':'two','type':'distinct_products','product_keys':['seed','treat']," \
	"'minimum':" minimum ",'filters':[" filters "]}]}"
#define BOTH "{'period_key':'p','product_keys':['seed','treat'],'transaction_type':'buy'}"

static void
TestDistinctProducts(void)
{
	Rows		r;
	IncTxn		both[2] = {
		Txn("A", "2026-03-05", "a", "1", "100"),
		Txn("B", "2026-03-05", "b", "1", "50"),
	};
	IncTxn		early[2] = {
		Txn("A", "2026-03-05", "a", "1", "100"),
		Txn("B", "2026-02-10", "b", "1", "50"),	/* b is not in treat yet */
	};
	IncTxn		returned[3] = {
		Txn("A", "2026-03-05", "a", "1", "100"),
		Txn("B", "2026-03-05", "b", "1", "50"),
		Txn("R", "2026-03-09", "a", "-1", "-100"),	/* seed nets to 0 */
	};

	catalog = inc_products_create();
	inc_products_add_node(catalog, "seed", NULL);
	inc_products_add_node(catalog, "treat", NULL);
	inc_products_add_window(catalog, "a", "seed", INT32_MIN, INT32_MAX);
	inc_products_add_window(catalog, "b", "treat", 9556, INT32_MAX);	/* 2026-03-01 */

	/* both products: value 2, met; 2.0 is 2 */
	Run(DISTINCT("2", BOTH), "r", both, 2, &r);
	CHECK(r.n == 2);
	CHECK(SumIs(&r, "1.50"));
	CHECK(strstr(diagnosed, "{\"key\":\"two\",\"type\":\"distinct_products\",\"property_key\":null,"
				  "\"minimum\":2,\"value\":2,\"met\":true,\"gap\":0}") != NULL);
	Run(DISTINCT("2.0", BOTH), "r", both, 2, &r);
	CHECK(r.n == 2);

	/* b before it is in treat: one product, no rows */
	Run(DISTINCT("2", BOTH), "r", early, 2, &r);
	CHECK(r.n == 0);
	CHECK(strstr(diagnosed, "\"value\":1,\"met\":false,\"gap\":1}") != NULL);
	Run(DISTINCT("1", BOTH), "r", early, 2, &r);
	CHECK(r.n == 2);

	/* seed returned in full: its net is 0 */
	Run(DISTINCT("2", BOTH), "r", returned, 3, &r);
	CHECK(r.n == 0);
	CHECK(strstr(diagnosed, "\"value\":1,\"met\":false") != NULL);

	/* a filter that does not take b: treat counts nothing */
	Run(DISTINCT("2", FILTER("a")), "r", both, 2, &r);
	CHECK(r.n == 0);
	Run(DISTINCT("1", FILTER("a")), "r", both, 2, &r);
	CHECK(r.n == 2);
	catalog = NULL;
}

/* test_rules: the four program rules in the core. */
void
test_rules(void)
{
	TestIncremental();
	TestLimits();
	TestRequirements();
	TestEnrollment();
	TestDistinctProducts();
}
