/*
 * test_strategy.c
 *    The strategy interface and what the engine reports about itself:
 *    dispatch through the operations table, diagnostics of every offer
 *    (touched by the participant's transactions or not) for all three
 *    strategies, and the engine's position while a calculation fails.
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"
#include "../../src/core/strategy/strategy.h"

#define PERIOD "\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}],"
#define HEAD(key, strategy, calc) \
	"{\"offer_key\":\"" key "\",\"strategy_key\":\"" strategy "\",\"calculator_key\":\"" calc "\"," PERIOD
#define FILTER(skus) "{\"period_key\":\"p\",\"sku_keys\":[" skus "],\"transaction_type\":\"buy\"}"

static const char *const Offers[] = {
	HEAD("std", "standard", "percent_of_amount")
	"\"incentives\":[{\"label\":\"Base\",\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":["
	"{\"sku_key\":\"a\",\"rate\":3.0,\"measure\":\"percent\"},"
	"{\"sku_key\":\"b\",\"rate\":1.50,\"measure\":\"percent\"}]}]}",

	HEAD("amount", "stepped", "percent_of_amount")
	"\"incentive\":{\"filters\":[" FILTER("\"c\"") "],"
	"\"threshold_definition\":{\"type\":\"aggregated_amount\",\"filters\":[" FILTER("\"c\"") "]},"
	"\"rates\":[{\"threshold\":1000,\"value\":2,\"measure\":\"percent\"},"
	"{\"threshold\":0,\"value\":1,\"measure\":\"percent\"}]}}",

	HEAD("prop", "stepped", "fixed_amount")
	"\"incentive\":{\"filters\":[" FILTER("\"d\"") "],"
	"\"threshold_definition\":{\"type\":\"property\",\"property\":{\"key\":\"bp\"}},"
	"\"rates\":[{\"threshold\":80,\"value\":500,\"measure\":\"dollars\"},"
	"{\"threshold\":100,\"value\":1000,\"measure\":\"dollars\"}]}}",

	HEAD("stk", "stacked", "dollars_per_coverage_unit")
	"\"incentive\":{\"sku_sets\":["
	"{\"key\":\"seed\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":"
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"e\",\"rate\":1.0,\"from\":\"unit\"}]},\"rates\":[]},"
	"{\"key\":\"treat\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":"
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"f\",\"rate\":0.5,\"from\":\"gal\"}]},"
	"\"rates\":[{\"sku_key\":\"f\",\"rate\":0.75,\"measure\":\"dollars\"}]}],"
	"\"stacks\":[{\"sku_set_keys\":[\"seed\",\"treat\"]}]}}"
};

#define NOFFERS ((int) (sizeof(Offers) / sizeof(Offers[0])))

/* Untouched: each offer's diagnostics from an empty state (bp = 90). */
static const char *const Untouched[] = {
	"{\"entries\":[{\"rate_key\":\"p_buy\",\"label\":\"Base\",\"period_key\":\"p\","
	"\"period_start_date\":\"2026-01-01\",\"period_end_date\":\"2026-12-31\",\"transaction_type\":\"buy\","
	"\"rates\":[{\"sku_key\":\"a\",\"rate\":3,\"measure\":\"percent\"},"
	"{\"sku_key\":\"b\",\"rate\":1.5,\"measure\":\"percent\"}],\"transactions\":0,\"incentive_amount\":0}]}",

	"{\"tier_mode\":\"all_volume\",\"threshold_type\":\"aggregated_amount\",\"property_key\":null,\"threshold_value\":0,"
	"\"earning_transactions\":0,\"tiers\":["
	"{\"rate_key\":\"1_percent_greater_than_or_equal_to_0\",\"threshold\":0,\"value\":1,"
	"\"measure\":\"percent\",\"met\":true,\"incentive_amount\":0},"
	"{\"rate_key\":\"2_percent_greater_than_or_equal_to_1000\",\"threshold\":1000,\"value\":2,"
	"\"measure\":\"percent\",\"met\":false,\"incentive_amount\":0}],"
	"\"selected_rate_key\":\"1_percent_greater_than_or_equal_to_0\","
	"\"next_rate_key\":\"2_percent_greater_than_or_equal_to_1000\",\"next_threshold\":1000,"
	"\"gap_to_next\":1000}",

	"{\"tier_mode\":\"all_volume\",\"threshold_type\":\"property\",\"property_key\":\"bp\",\"threshold_value\":90,"
	"\"earning_transactions\":0,\"tiers\":["
	"{\"rate_key\":\"500_dollars_greater_than_or_equal_to_80\",\"threshold\":80,\"value\":500,"
	"\"measure\":\"dollars\",\"met\":true,\"incentive_amount\":0},"
	"{\"rate_key\":\"1000_dollars_greater_than_or_equal_to_100\",\"threshold\":100,\"value\":1000,"
	"\"measure\":\"dollars\",\"met\":false,\"incentive_amount\":0}],"
	"\"selected_rate_key\":\"500_dollars_greater_than_or_equal_to_80\","
	"\"next_rate_key\":\"1000_dollars_greater_than_or_equal_to_100\",\"next_threshold\":100,"
	"\"gap_to_next\":10}",

	"{\"sets\":[{\"key\":\"seed\",\"coverage_unit\":\"acre\",\"coverage\":0,\"transactions\":0},"
	"{\"key\":\"treat\",\"coverage_unit\":\"acre\",\"coverage\":0,\"transactions\":0}],"
	"\"stacks\":[{\"rate_key\":\"seed_and_treat\",\"sku_set_keys\":[\"seed\",\"treat\"],"
	"\"overlap\":0,\"earns\":false,\"factors\":{}}]}"
};

/* Diagnostics as reported, in order. */
typedef struct Reported
{
	int			n;
	const char *offer[8];
	char		json[8][1024];
	int			rows;
} Reported;

static void
CountRow(void *ctx, const IncRow *row)
{
	(void) row;
	((Reported *) ctx)->rows++;
}

static void
Report(void *ctx, const IncOffer *offer, const char *participant_key,
		 const char *group_key, const char *json)
{
	Reported   *r = ctx;

	(void) participant_key;
	(void) group_key;
	if (r->n < 8)
	{
		r->offer[r->n] = offer->offer_key;
		snprintf(r->json[r->n], sizeof(r->json[0]), "%s", json);
	}
	r->n++;
}

/* Property: bp is 90, or (participant "nan") not a number; nothing else. */
static IncPropStatus
Property(void *ctx, const char *participant_key, const char *property_key, IncDec *value)
{
	(void) ctx;
	if (strcmp(property_key, "bp") != 0 || strcmp(participant_key, "none") == 0)
		return INC_PROP_MISSING;
	if (strcmp(participant_key, "nan") == 0)
		return INC_PROP_NOT_NUMBER;
	inc_dec_parse("90", 2, value);
	return INC_PROP_FOUND;
}

static IncTxn
Txn(const char *id, const char *type, const char *sku, const char *quantity,
	const char *uom, const char *amount)
{
	IncTxn		t;

	memset(&t, 0, sizeof(t));
	t.transaction_id = id;
	t.transaction_type = type;
	inc_date_parse("2026-03-01", &t.transaction_date);
	t.sku_key = sku;
	inc_dec_parse(quantity, strlen(quantity), &t.quantity);
	t.uom_key = uom;
	inc_dec_parse(amount, strlen(amount), &t.amount);
	return t;
}

static IncEngine *
Engine(Reported *diagnostics)
{
	IncEngine  *e = inc_engine_create();
	IncDec		f;
	int			i;

	for (i = 0; i < NOFFERS; i++)
	{
		IncOfferError err;
		IncOffer   *o = inc_offer_parse(Offers[i], strlen(Offers[i]), &err);

		if (o == NULL)
		{
			printf("FAIL test offer %d: %s\n", i, err.message);
			exit(1);
		}
		inc_engine_add_offer(e, o);
	}
	inc_engine_set_sku_uom(e, "a", "gal");
	inc_engine_set_sku_uom(e, "d", "gal");
	inc_dec_parse("4", 1, &f);
	inc_engine_add_conversion(e, "gal", "qt", &f);
	if (diagnostics)
		inc_engine_set_diagnostics(e, Report, diagnostics);
	inc_engine_prepare(e);
	return e;
}

/* Every strategy has all its operations, and the table maps each to itself. */
static void
TestOpsTable(void *arg)
{
	IncStrategy s;

	(void) arg;
	for (s = INC_STANDARD; s <= INC_STACKED; s++)
	{
		const IncStrategyOps *ops = inc_strategy_ops(s);

		CHECK(ops->strategy == s);
		CHECK(ops->index && ops->begin && ops->observe && ops->finish &&
			  ops->diagnose && ops->rates);
	}
	CHECK(inc_strategy_ops(INC_STANDARD) == &inc_standard_ops);
	CHECK(inc_strategy_ops(INC_STEPPED) == &inc_stepped_ops);
	CHECK(inc_strategy_ops(INC_STACKED) == &inc_stacked_ops);
}

static void
UnknownStrategy(void *arg)
{
	(void) arg;
	inc_strategy_ops((IncStrategy) 7);
}

static void
TestDispatch(void)
{
	IncErrKind	kind;
	char		message[256];
	IncEngine  *e = Engine(NULL);
	const char *const *keys;
	int			n;

	TestOpsTable(NULL);
	CHECK(unit_expect_failure(UnknownStrategy, NULL, &kind, message, sizeof(message)));
	CHECK(kind == INC_ERR_INTERNAL);

	/* the index operations reported every SKU and the one property */
	keys = inc_engine_sku_keys(e, &n);
	CHECK(n == 6);
	(void) keys;
	keys = inc_engine_property_keys(e, &n);
	CHECK(n == 1 && strcmp(keys[0], "bp") == 0);
	CHECK(inc_engine_needs_properties(e));
}

/* Diagnostics: every offer, in offer order, touched or not. */
static void
TestDiagnostics(void)
{
	Reported	r;
	IncEngine  *e = Engine(&r);
	IncTxn		std_only[3] = {
		Txn("A", "buy", "a", "10", "gal", "500"),
		Txn("B", "buy", "b", "1", "box", "200.00"),
		Txn("C", "sell", "a", "1", "gal", "100"),
	};
	int			i;

	/* no transactions at all */
	memset(&r, 0, sizeof(r));
	inc_engine_calculate(e, "r1", NULL, 0, Property, NULL, CountRow, &r);
	CHECK(r.n == NOFFERS && r.rows == 0);
	for (i = 0; i < NOFFERS && i < r.n; i++)
		CHECK_STR(r.json[i], Untouched[i]);
	CHECK_STR(r.offer[0], "std");
	CHECK_STR(r.offer[3], "stk");

	/* the standard offer touched, the others not */
	memset(&r, 0, sizeof(r));
	inc_engine_calculate(e, "r1", std_only, 3, Property, NULL, CountRow, &r);
	CHECK(r.n == NOFFERS && r.rows == 2);
	CHECK_STR(r.json[0],
			  "{\"entries\":[{\"rate_key\":\"p_buy\",\"label\":\"Base\",\"period_key\":\"p\","
			  "\"period_start_date\":\"2026-01-01\",\"period_end_date\":\"2026-12-31\","
			  "\"transaction_type\":\"buy\",\"rates\":[{\"sku_key\":\"a\",\"rate\":3,\"measure\":\"percent\"},"
			  "{\"sku_key\":\"b\",\"rate\":1.5,\"measure\":\"percent\"}],\"transactions\":2,"
			  "\"incentive_amount\":18}]}");
	for (i = 1; i < NOFFERS && i < r.n; i++)
		CHECK_STR(r.json[i], Untouched[i]);

	/* a missing property: no value, no tier met, no gap */
	memset(&r, 0, sizeof(r));
	inc_engine_calculate(e, "none", NULL, 0, Property, NULL, CountRow, &r);
	CHECK(r.n == NOFFERS);
	if (r.n == NOFFERS)
		CHECK(strstr(r.json[2], "\"threshold_value\":null") != NULL &&
			  strstr(r.json[2], "\"met\":true") == NULL &&
			  strstr(r.json[2], "\"selected_rate_key\":null") != NULL &&
			  strstr(r.json[2], "\"gap_to_next\":null") != NULL);
}

/* The position the fail hook sees, captured by the observer. */
static struct
{
	IncEngine  *engine;
	bool		inside;
	char		participant[64];
	char		transaction[64];
}			seen;

static void
Observe(const IncFailure *failure)
{
	const char *participant;
	const char *transaction_id;

	(void) failure;
	seen.inside = inc_engine_position(seen.engine, &participant, &transaction_id);
	snprintf(seen.participant, sizeof(seen.participant), "%s", participant ? participant : "-");
	snprintf(seen.transaction, sizeof(seen.transaction), "%s",
			 transaction_id ? transaction_id : "-");
}

typedef struct Failing
{
	const char *participant;
	IncTxn		txns[2];
	int			ntxns;
} Failing;

static void
RunFailing(void *arg)
{
	Failing    *f = arg;
	Reported	r;

	memset(&r, 0, sizeof(r));
	inc_engine_calculate(seen.engine, f->participant, f->txns, f->ntxns, Property, NULL,
						 CountRow, &r);
}

/* ExpectPosition: run f, which must fail with kind at the given position. */
static void
ExpectPosition(Failing *f, IncErrKind want_kind, const char *want_txn)
{
	IncErrKind	kind = 0;
	char		message[512];

	memset(&seen.participant, 0, sizeof(seen.participant));
	if (unit_expect_failure(RunFailing, f, &kind, message, sizeof(message)))
	{
		CHECK(kind == want_kind);
		CHECK(seen.inside);
		CHECK_STR(seen.participant, f->participant);
		CHECK_STR(seen.transaction, want_txn);
	}
}

/* inc_engine_position: where a failing calculation was. */
static void
TestPosition(void)
{
	Reported	r;
	const char *participant = "x";
	const char *transaction_id = "x";
	Failing		observe_fails = {"r1", {Txn("X-1", "buy", "a", "3", "drum", "10")}, 1};
	Failing		finish_fails = {"r2", {Txn("Y-1", "buy", "d", "1", "gal", "5"),
	Txn("Y-2", "buy", "d", "3", "drum", "10")}, 2};
	Failing		property_fails = {"nan", {Txn("Z-1", "buy", "d", "1", "gal", "5")}, 1};

	seen.engine = Engine(NULL);
	CHECK(!inc_engine_position(seen.engine, &participant, &transaction_id));
	CHECK(participant == NULL && transaction_id == NULL);

	unit_fail_observer = Observe;
	/* while observing: the standard offer converts a's quantity to gal */
	ExpectPosition(&observe_fails, INC_ERR_NO_CONVERSION, "X-1");
	/* while finishing: the property offer's pool converts each earning one */
	ExpectPosition(&finish_fails, INC_ERR_NO_CONVERSION, "Y-2");
	/* between transactions: the property is read once per participant */
	ExpectPosition(&property_fails, INC_ERR_PROPERTY_NOT_NUMBER, "-");
	CHECK_STR(unit_failure_subject(), "bp");
	unit_fail_observer = NULL;

	/* a calculation that completes leaves no position behind */
	memset(&r, 0, sizeof(r));
	inc_engine_calculate(seen.engine, "r3", NULL, 0, Property, NULL, CountRow, &r);
	CHECK(!inc_engine_position(seen.engine, &participant, &transaction_id));
}

/* test_strategy: the operations table, diagnostics and the position. */
void
test_strategy(void)
{
	TestDispatch();
	TestDiagnostics();
	TestPosition();
}
