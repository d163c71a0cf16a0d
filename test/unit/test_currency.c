/*
 * test_currency.c
 *    Unit tests of currencies in the engine core (docs/reference.md,
 *    Currencies): the offer's currency field and its refusals, what a
 *    strict document and the offer diff make of it, and small offers
 *    whose rows show the exchange rate used -- the direct pair before the
 *    inverse on the same date, the later of the two otherwise, an inverse
 *    rate of 1 / 0.7 reported to 12 places but exact in the amount, a
 *    missing rate raised only where a figure needs it, a priced row, a
 *    growth baseline converted at its own dates' rates, a fixed pool, a
 *    return at its sale's date's rate and a forecast's projected part at
 *    its transaction's rate -- each on the fast path and on the exact one.
 *
 * Offers are written with single quotes for readability and turned into
 * JSON by swapping ' for ".
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"
#include "../../src/core/engine/forecast.h"
#include "../../src/core/offer/offer_diff.h"
#include "../../src/core/offer/offer_fields.h"

#define HEAD(strategy, calc, currency) \
	"{'offer_key':'o','strategy_key':'" strategy "','calculator_key':'" calc "'," \
	"'periods':[{'key':'p','start_date':'2025-01-01','end_date':'2026-12-31'}]" currency ","
#define STANDARD(currency, rest) HEAD("standard", "percent_of_amount", currency) \
	"'incentives':[{'key':'k','period_key':'p','transaction_type':'buy'," \
	"'rates':[{'sku_key':'a','rate':1,'measure':'percent'}]}]" rest "}"
#define FILTER "{'period_key':'p','sku_keys':['a'],'transaction_type':'buy'}"

#define E(msg) "invalid offer \"o\": " msg

/* Quoted: doc with ' for " (in one of 4 rotating buffers). */
static const char *
Quoted(const char *doc)
{
	static char bufs[4][4096];
	static int	next;
	char	   *buf = bufs[next++ % 4];
	char	   *q;

	snprintf(buf, sizeof(bufs[0]), "%s", doc);
	for (q = buf; *q; q++)
		if (*q == '\'')
			*q = '"';
	return buf;
}

/* Parse: the offer of doc (' for "), strict when strict; NULL with err filled. */
static IncOffer *
Parse(const char *doc, bool strict, IncOfferError *err)
{
	IncOfferChecks checks = {INC_UNKNOWN_REFUSE, true, NULL, NULL, NULL};
	IncOfferParser parser;
	const char *json = Quoted(doc);

	inc_offer_parser_init(&parser);
	return inc_offer_parser_check(&parser, json, strlen(json), strict ? &checks : NULL, err);
}

typedef struct CurrencyCase
{
	const char *currency;		/* the field as written */
	const char *message;
} CurrencyCase;

static const CurrencyCase Invalid[] = {
	{"'cad'", E("currency \"cad\" must be a three-letter upper-case currency code (ISO 4217); did you mean \"CAD\"?")},
	{"'Usd'", E("currency \"Usd\" must be a three-letter upper-case currency code (ISO 4217); did you mean \"USD\"?")},
	{"' EUR '", E("currency \" EUR \" must be a three-letter upper-case currency code (ISO 4217); did you mean \"EUR\"?")},
	{"'CADX'", E("currency \"CADX\" must be a three-letter upper-case currency code (ISO 4217)")},
	{"'C$'", E("currency \"C$\" must be a three-letter upper-case currency code (ISO 4217)")},
	{"'U5D'", E("currency \"U5D\" must be a three-letter upper-case currency code (ISO 4217)")},
	{"''", E("currency \"\" must be a three-letter upper-case currency code (ISO 4217)")},
	{"840", E("currency must be a string")},
	{"['CAD']", E("currency must be a string")},
};

static void
TestOfferField(void)
{
	IncOfferError err;
	IncOffer   *o;
	char		doc[1024];
	char		advice[256];
	size_t		i;

	for (i = 0; i < sizeof(Invalid) / sizeof(Invalid[0]); i++)
	{
		snprintf(doc, sizeof(doc), STANDARD(",'currency':%s", ""), Invalid[i].currency);
		o = Parse(doc, false, &err);
		CHECK(o == NULL);
		if (o == NULL)
			CHECK_STR(err.message, Invalid[i].message);
	}

	/* absent or null: none; a code: the model has it, strict documents too */
	o = Parse(STANDARD("", ""), true, &err);
	CHECK(o != NULL && o->currency == NULL);
	o = Parse(STANDARD(",'currency':null", ""), true, &err);
	CHECK(o != NULL && o->currency == NULL);
	o = Parse(STANDARD(",'currency':'CAD'", ""), true, &err);
	CHECK(o != NULL);
	if (o)
		CHECK_STR(o->currency, "CAD");
	CHECK(inc_object_field_known(INC_OBJ_OFFER, "currency"));
	inc_object_field_advice(INC_OBJ_OFFER, INC_FAMILY_STANDARD, "curency", advice, sizeof(advice));
	CHECK_STR(advice, "did you mean \"currency\"?");
	o = Parse(STANDARD(",'Currency':'CAD'", ""), true, &err);
	CHECK(o == NULL);
	if (o == NULL)
		CHECK_STR(err.message, E("Currency is not a field of the offer; did you mean \"currency\"?"));
	unit_arena_reset();
}

/* Difference: the offer diff from old_doc to new_doc (' for "), its path into path. */
static IncOfferDifference
Difference(const char *old_doc, const char *new_doc, char *path, size_t cap)
{
	IncOfferParser a,
				b;
	IncOfferError err;
	const char *old_json = Quoted(old_doc);
	const char *new_json = Quoted(new_doc);

	inc_offer_parser_init(&a);
	inc_offer_parser_init(&b);
	return inc_offer_difference(&a, &b, old_json, strlen(old_json), new_json, strlen(new_json),
								path, cap, &err);
}

static void
TestOfferDiff(void)
{
	char		path[128];

	CHECK(Difference(STANDARD(",'currency':'CAD'", ""), STANDARD(",'currency':'USD'", ""),
					 path, sizeof(path)) == INC_DIFF_STRUCTURE);
	CHECK_STR(path, "currency");
	CHECK(Difference(STANDARD("", ""), STANDARD(",'currency':'USD'", ""),
					 path, sizeof(path)) == INC_DIFF_STRUCTURE);
	CHECK_STR(path, "currency");
	CHECK(Difference(STANDARD(",'currency':'USD'", ""), STANDARD(",'currency':'USD'", ""),
					 path, sizeof(path)) == INC_DIFF_SAME);
	unit_arena_reset();
}

/* The rows of a calculation: "id|amount|incentivized|incentive|currency|rate". */
typedef struct Rows
{
	int			n;
	char		rows[16][256];
} Rows;

static void
Collect(void *ctx, const IncRow *row)
{
	Rows	   *r = ctx;

	if (r->n < 16)
		snprintf(r->rows[r->n], sizeof(r->rows[0]), "%s|%s|%s|%s|%s|%s",
				 row->txn->transaction_id, unit_dec_text(&row->txn->amount),
				 unit_dec_text(&row->incentivized_amount),
				 unit_dec_text(&row->incentive_amount), row->currency ? row->currency : "NULL",
				 row->has_exchange_rate ? unit_dec_text(&row->exchange_rate) : "NULL");
	r->n++;
}

static IncDec
Dec(const char *s)
{
	IncDec		d = {0, 0};

	if (inc_dec_parse(s, strlen(s), &d) != INC_DEC_OK)
		printf("FAIL bad decimal in test: %s\n", s);
	return d;
}

static int32_t
Day(const char *s)
{
	int32_t		d = 0;

	if (!inc_date_parse(s, &d))
		printf("FAIL bad date in test: %s\n", s);
	return d;
}

static IncTxn
Txn(const char *id, const char *date, const char *sku, const char *amount, const char *currency)
{
	IncTxn		t;

	memset(&t, 0, sizeof(t));
	t.transaction_id = id;
	t.transaction_type = "buy";
	t.transaction_date = Day(date);
	t.sku_key = sku;
	t.quantity = Dec("1");
	t.uom_key = "gal";
	t.amount = Dec(amount);
	t.currency = currency;
	return t;
}

/* A rate row: from, to, date, rate. */
typedef struct RateRow
{
	const char *from;
	const char *to;
	const char *date;
	const char *rate;
} RateRow;

/* Engine: the offer of doc (' for ") with the rate rows (NULL-terminated). */
static IncEngine *
Engine(const char *doc, const RateRow *rates)
{
	IncOfferError err;
	IncOffer   *offer = Parse(doc, false, &err);
	IncEngine  *e = inc_engine_create();

	if (offer == NULL)
	{
		printf("FAIL test_currency: offer did not parse: %s\n", err.message);
		exit(1);
	}
	inc_engine_add_offer(e, offer);
	for (; rates && rates->from; rates++)
		inc_engine_add_exchange_rate(e, rates->from, rates->to, Day(rates->date), Dec(rates->rate));
	inc_engine_prepare(e);
	return e;
}

/* Expect: the rows of txns[0..n) are want (NULL-terminated), in order. */
static void
Expect(IncEngine *e, IncTxn *txns, int n, const char *const *want)
{
	Rows		r = {0};
	int			k = 0;

	inc_engine_calculate(e, "r", txns, n, NULL, NULL, Collect, &r);
	while (want[k] != NULL)
		k++;
	CHECK(r.n == k);
	if (r.n != k)
		printf("     %d rows, expected %d\n", r.n, k);
	for (k = 0; k < r.n && k < 16 && want[k] != NULL; k++)
		CHECK_STR(r.rows[k], want[k]);
}

/* What a calculation that must fail runs. */
typedef struct Failing
{
	IncEngine  *e;
	IncTxn	   *txns;
	int			n;
} Failing;

static void
RunFailing(void *arg)
{
	Failing    *f = arg;
	Rows		r = {0};

	inc_engine_calculate(f->e, "r", f->txns, f->n, NULL, NULL, Collect, &r);
}

/* ExpectError: the calculation of txns[0..n) fails with message, a missing rate. */
static void
ExpectError(IncEngine *e, IncTxn *txns, int n, const char *message)
{
	Failing		f = {e, txns, n};
	IncErrKind	kind;
	char		got[512];

	if (unit_expect_failure(RunFailing, &f, &kind, got, sizeof(got)))
	{
		CHECK(kind == INC_ERR_NO_EXCHANGE_RATE);
		CHECK_STR(got, message);
	}
	inc_engine_clear_position(e);
}

static const RateRow Rates[] = {
	{"USD", "CAD", "2025-10-01", "1.25"},
	{"USD", "CAD", "2026-05-01", "1.40"},
	{"USD", "CAD", "2026-08-01", "1.60"},
	{"CAD", "USD", "2026-07-01", "0.64"},
	{"CAD", "USD", "2026-08-01", "0.50"},
	{NULL, NULL, NULL, NULL}
};

/*
 * TestTieRule: of the direct pair's latest row and the inverse pair's,
 * the later; the direct one on the same date; the inverse alone.
 */
static void
TestTieRule(void)
{
	IncEngine  *cad = Engine(STANDARD(",'currency':'CAD'", ""), Rates);
	IncEngine  *usd = Engine(STANDARD(",'currency':'USD'", ""), Rates);
	IncTxn		in_cad[] = {
		Txn("T1", "2025-11-15", "a", "4000.00", "USD"),	/* direct 1.25 */
		Txn("T2", "2026-07-15", "a", "800.00", "USD"),	/* 1 / 0.64 is later than 1.40 */
		Txn("T3", "2026-08-20", "a", "500.00", "USD"),	/* both 2026-08-01: the direct 1.60 */
		Txn("T4", "2026-08-25", "a", "1000.00", "CAD"),	/* as it is */
		Txn("T5", "2026-08-26", "a", "1000.00", NULL),	/* no currency: as it is */
	};
	IncTxn		in_usd[] = {
		Txn("U1", "2026-02-10", "a", "3000.00", "CAD"),	/* 1 / 1.25: no CAD -> USD row yet */
		Txn("U2", "2026-08-25", "a", "1000.00", "CAD"),	/* both 2026-08-01: the direct 0.50 */
	};

	Expect(cad, in_cad, 5, (const char *const []) {
		"T1|4000.00|5000.00|50.00|CAD|1.25",
		"T2|800.00|1250.00|12.50|CAD|1.5625",
		"T3|500.00|800.00|8.00|CAD|1.6",
		"T4|1000.00|1000.00|10.00|CAD|NULL",
		"T5|1000.00|1000.00|10.00|CAD|NULL",
		NULL});
	Expect(usd, in_usd, 2, (const char *const []) {
		"U1|3000.00|2400.00|24.00|USD|0.8",
		"U2|1000.00|500.00|5.00|USD|0.5",
		NULL});

	/* an offer without a currency takes every amount as it is */
	{
		IncEngine  *none = Engine(STANDARD("", ""), Rates);

		Expect(none, in_usd, 2, (const char *const []) {
			"U1|3000.00|3000.00|30.00|NULL|NULL",
			"U2|1000.00|1000.00|10.00|NULL|NULL",
			NULL});
	}
}

/*
 * TestInverseRounded: 1 / 0.7 is reported to 12 places, and the amount
 * uses it exactly: USD 70,000,000,000 is CAD 100,000,000,000.00, where
 * the rounded rate would make it 99,999,999,999.97.
 */
static void
TestInverseRounded(void)
{
	static const RateRow seven[] = {{"CAD", "USD", "2025-01-01", "0.7"}, {NULL, NULL, NULL, NULL}};
	IncEngine  *e = Engine(STANDARD(",'currency':'CAD'", ""), seven);
	IncTxn		txns[] = {
		Txn("V1", "2026-03-01", "a", "70000000000.00", "USD"),
		Txn("V2", "2026-03-02", "a", "100.00", "USD"),
	};

	Expect(e, txns, 2, (const char *const []) {
		"V1|70000000000.00|100000000000.00|1000000000.00|CAD|1.428571428571",
		"V2|100.00|142.86|1.43|CAD|1.428571428571",
		NULL});
}

/*
 * TestMissingRate: no rate on a date is an error only where a figure
 * needs the amount: a SKU the offer does not pay on, a date outside its
 * periods, and an offer whose requirement is not met raise nothing; a
 * priced row needs the rate it reports.
 */
static void
TestMissingRate(void)
{
	IncEngine  *e = Engine(STANDARD(",'currency':'CAD'", ""), Rates);
	IncEngine  *gated = Engine(STANDARD(",'currency':'CAD'",
										",'requirements':[{'key':'q','type':'property','property':{'key':'plan'},'minimum':1}]"),
							   Rates);
	IncEngine  *priced = Engine(HEAD("standard", "percent_of_amount", ",'currency':'CAD'")
								"'prices':[{'sku_key':'a','price':200}],"
								"'incentives':[{'key':'k','period_key':'p','transaction_type':'buy',"
								"'rates':[{'sku_key':'a','rate':1,'measure':'percent'}]}]}", Rates);
	IncTxn		quiet[] = {
		Txn("M1", "2026-03-01", "z", "100.00", "EUR"),	/* a SKU the offer does not pay */
		Txn("M2", "2024-06-01", "a", "100.00", "USD"),	/* before the period (and every rate) */
		Txn("M3", "2026-03-01", "a", "100.00", "USD"),
	};
	IncTxn		early[] = {
		Txn("M4", "2025-09-30", "a", "100.00", "USD"),	/* the day before the first rate */
	};
	IncTxn		euro[] = {
		Txn("M5", "2026-03-01", "a", "100.00", "EUR"),
	};

	Expect(e, quiet, 3, (const char *const []) {
		"M3|100.00|125.00|1.25|CAD|1.25",
		NULL});
	ExpectError(e, early, 1,
				"no exchange rate from \"USD\" to \"CAD\" on 2025-09-30 for transaction \"M4\"");
	ExpectError(e, euro, 1,
				"no exchange rate from \"EUR\" to \"CAD\" on 2026-03-01 for transaction \"M5\"");
	/* the requirement is certainly unmet: nothing is raised, nothing paid */
	Expect(gated, euro, 1, (const char *const []) {NULL});
	/* a priced row's base is quantity x price, its rate still reported and needed */
	Expect(priced, quiet, 3, (const char *const []) {
		"M3|100.00|200.00|2.00|CAD|1.25",
		NULL});
	ExpectError(priced, euro, 1,
				"no exchange rate from \"EUR\" to \"CAD\" on 2026-03-01 for transaction \"M5\"");
}

/*
 * TestGrowthBaseline: a CAD growth offer over last year; USD 1,000 then
 * and now is CAD 1,250 at 1.25 and CAD 1,400 at 1.40: growth of 12 %
 * (the tier of 10: 2 %) from an exchange rate alone.
 */
static void
TestGrowthBaseline(void)
{
	IncEngine  *e = Engine("{'offer_key':'o','strategy_key':'stepped','calculator_key':'percent_of_amount',"
						   "'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-12-31'}],"
						   "'currency':'CAD',"
						   "'incentive':{'filters':[" FILTER "],"
						   "'threshold_definition':{'type':'growth_amount','filters':[" FILTER "],"
						   "'baseline':{'start_date':'2025-01-01','end_date':'2025-12-31'}},"
						   "'rates':[{'threshold':10,'value':2,'measure':'percent'},"
						   "{'threshold':15,'value':3,'measure':'percent'}]}}", Rates);
	IncTxn		txns[] = {
		Txn("G1", "2025-11-15", "a", "1000.00", "USD"),	/* baseline: 1.25 */
		Txn("G2", "2026-06-15", "a", "1000.00", "USD"),	/* current: 1.40 */
	};

	Expect(e, txns, 2, (const char *const []) {
		"G2|1000.00|1400.00|28.00|CAD|1.4",
		NULL});
}

/* A forecast's row: "elapsed/span|earned|projected". */
typedef struct Forecast
{
	int			n;
	char		text[256];
} Forecast;

static void
CollectForecast(void *ctx, const IncForecastRow *row)
{
	Forecast   *f = ctx;

	snprintf(f->text, sizeof(f->text), "%d/%d|%s|%s", row->elapsed_days, row->span_days,
			 unit_dec_text(&row->earned_to_date), unit_dec_text(&row->projected_earnings));
	f->n++;
}

/*
 * TestPoolReturnForecast: a fixed pool shared by converted amounts; a
 * return matched to its sale converted at the sale's date's rate; a
 * forecast projecting the amount converted at its own date's rate (not
 * at the rate of the as-of date).
 */
static void
TestPoolReturnForecast(void)
{
	IncEngine  *pool = Engine(HEAD("standard", "fixed_amount", ",'currency':'CAD'")
							  "'incentives':[{'key':'k','period_key':'p','transaction_type':'buy',"
							  "'rates':[{'sku_key':'a','rate':100,'measure':'dollars'}]}]}", Rates);
	IncEngine  *e = Engine(STANDARD(",'currency':'CAD'", ""), Rates);
	IncTxn		shares[] = {
		Txn("P1", "2025-11-15", "a", "1000.00", "USD"),	/* CAD 1,250 */
		Txn("P2", "2025-11-16", "a", "1250.00", "CAD"),
	};
	IncTxn		returned[] = {
		Txn("R1", "2026-08-20", "a", "-100.00", "USD"),
	};
	IncTxn		early[] = {
		Txn("F1", "2026-03-01", "a", "1000.00", "USD"),	/* 1.25; 1.40 from 2026-05-01 */
	};
	Forecast	f = {0};

	Expect(pool, shares, 2, (const char *const []) {
		"P1|1000.00|1250.00|50.00|CAD|1.25",
		"P2|1250.00|1250.00|50.00|CAD|NULL",
		NULL});

	/* its own date would take 1.60; the sale's is 1.25 */
	returned[0].matched = true;
	returned[0].matching_date = Day("2025-11-15");
	Expect(e, returned, 1, (const char *const []) {
		"R1|-100.00|-125.00|-1.25|CAD|1.25",
		NULL});

	/* 546 of 730 days: CAD 1,250 x 730 / 546 at 1 % = 16.71 (at 1.40: 18.72) */
	inc_engine_forecast(e, Day("2026-06-30"), "r", early, 1, NULL, NULL, CollectForecast, &f);
	CHECK(f.n == 1);
	CHECK_STR(f.text, "546/730|12.50|16.71");
}

/* TestAllPaths: every engine test, on the fast path and on the exact one. */
static void
TestAllPaths(void)
{
	int			exact;

	for (exact = 0; exact <= 1; exact++)
	{
		inc_set_exact_only(exact == 1);
		TestTieRule();
		TestInverseRounded();
		TestMissingRate();
		TestGrowthBaseline();
		TestPoolReturnForecast();
		unit_arena_reset();
	}
	inc_set_exact_only(false);
}

/* test_currency: the offer field, then the calculation. */
void
test_currency(void)
{
	TestOfferField();
	TestOfferDiff();
	TestAllPaths();
}
