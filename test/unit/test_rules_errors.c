/*
 * test_rules_errors.c
 *    Unit tests of the order of data errors under program rules
 *    (docs/reference.md, Program rules, and Errors; rules.c): a missing
 *    unit conversion, a property that is not a number or a NULL column is
 *    raised only for a figure that would reach a result.  For each
 *    strategy, an offer with a requirement the participant fails and a
 *    transaction that cannot be calculated makes no rows and no error (with
 *    and without diagnostics); with the requirement met, the error names
 *    the transaction and the engine's position names the participant.
 *    Then the requirements among themselves, NULL columns, and enrollment.
 *
 * Offers are written with single quotes and turned into JSON by swapping '
 * for ".  SKU "a" and "z" are measured in gal; the only conversion is gal
 * -> fl_oz, so a quantity in l converts to neither.
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"

#define HEAD(strategy, calc) \
	"{'offer_key':'o','strategy_key':'" strategy "','calculator_key':'" calc "'," \
	"'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-12-31'}],"
#define FILTER(sku) "{'period_key':'p','sku_keys':['" sku "'],'transaction_type':'buy'}"
/* the requirement bp >= minimum (bp is 95) */
#define PLAN(minimum) "{'key':'plan','type':'property','property':{'key':'bp'},'minimum':" minimum "}"
#define REQUIRE(list) ",'requirements':[" list "]"
#define STANDARD(rest) \
	HEAD("standard", "percent_of_amount") "'incentives':[{'key':'k','period_key':'p','transaction_type':'buy'," \
	"'rates':[{'sku_key':'a','rate':1,'measure':'percent'}]}]" rest "}"
#define STEPPED(rest) \
	HEAD("stepped", "percent_of_amount") "'incentive':{'filters':[" FILTER("a") "]," \
	"'threshold_definition':{'type':'aggregated_quantity','filters':[" FILTER("a") "]}," \
	"'rates':[{'threshold':0,'value':2,'measure':'percent'}]}" rest "}"
#define STACKED(rest) \
	HEAD("stacked", "dollars_per_coverage_unit") "'incentive':{'sku_sets':[{'key':'s','period_key':'p'," \
	"'transaction_type':'buy','conversion':{'coverage_unit':'acre','rates':[{'sku_key':'a','rate':32,'from':'fl_oz'}]}," \
	"'rates':[{'sku_key':'a','rate':2,'measure':'dollars'}]}],'stacks':[{'key':'k','sku_set_keys':['s']}]}" rest "}"

/* What one calculation did. */
typedef struct Outcome
{
	int			rows;
	char		diagnostics[4096];	/* the last offer's JSON */
} Outcome;

static void
Count(void *ctx, const IncRow *row)
{
	(void) row;
	((Outcome *) ctx)->rows++;
}

static void
Diagnose(void *ctx, const IncOffer *offer, const char *participant_key,
		 const char *group_key, const char *json)
{
	(void) participant_key;
	(void) group_key;
	(void) offer;
	snprintf(((Outcome *) ctx)->diagnostics, sizeof(((Outcome *) ctx)->diagnostics), "%s", json);
}

static IncDec
Dec(const char *s)
{
	IncDec		d = {0, 0};

	inc_dec_parse(s, strlen(s), &d);
	return d;
}

/* Txn: a "buy" of sku; nulls flags the columns read as NULL ("" or 0 there). */
static IncTxn
Txn(const char *id, const char *date, const char *sku, const char *quantity, const char *uom,
	const char *amount, uint8_t nulls)
{
	IncTxn		t;

	memset(&t, 0, sizeof(t));
	t.transaction_id = id;
	t.transaction_type = nulls & INC_TXN_NULL_TYPE ? "" : "buy";
	if (!(nulls & INC_TXN_NULL_DATE))
		inc_date_parse(date, &t.transaction_date);
	t.sku_key = sku;
	t.quantity = nulls & INC_TXN_NULL_QUANTITY ? Dec("0") : Dec(quantity);
	t.uom_key = nulls & INC_TXN_NULL_UOM ? "" : uom;
	t.amount = nulls & INC_TXN_NULL_AMOUNT ? Dec("0") : Dec(amount);
	t.nulls = nulls;
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

/* Windows: participant "w" has one in every offer, from 2026-01-01; others none. */
static int
Windows(void *ctx, const char *participant, const char *offer, const IncWindow **out)
{
	static IncWindow window;

	(void) ctx;
	(void) offer;
	inc_date_parse("2026-01-01", &window.start_date);
	window.open_ended = true;
	*out = &window;
	return strcmp(participant, "w") == 0 ? 1 : 0;
}

/* A calculation to run, maybe one that fails (unit_expect_failure). */
typedef struct Case
{
	const char *offer;			/* single-quoted */
	const char *participant;
	const IncTxn *txns;
	int			ntxns;
	bool		diagnostics;
	Outcome		out;
	IncEngine  *engine;
} Case;

static void
Calculate(void *arg)
{
	Case	   *k = arg;
	char	   *json = strdup(k->offer);
	char	   *q;
	IncOfferError err;
	IncOffer   *offer;
	IncDec		f = Dec("128");

	for (q = json; *q; q++)
		if (*q == '\'')
			*q = '"';
	offer = inc_offer_parse(json, strlen(json), &err);
	free(json);
	memset(&k->out, 0, sizeof(k->out));
	if (offer == NULL)
	{
		unit_failed++;
		printf("FAIL offer did not parse: %s\n", err.message);
		return;
	}
	k->engine = inc_engine_create();
	inc_engine_add_offer(k->engine, offer);
	inc_engine_add_conversion(k->engine, "gal", "fl_oz", &f);
	inc_engine_set_sku_uom(k->engine, "a", "gal");
	inc_engine_set_sku_uom(k->engine, "z", "gal");
	inc_engine_set_enrollments(k->engine, Windows, NULL);
	if (k->diagnostics)
		inc_engine_set_diagnostics(k->engine, Diagnose, &k->out);
	inc_engine_prepare(k->engine);
	inc_engine_calculate(k->engine, k->participant, k->txns, k->ntxns, Props, NULL,
						 Count, &k->out);
}

/* Quiet: the case, with and without diagnostics, completes; its rows. */
static int
Quiet(Case *k)
{
	int			rows;

	k->diagnostics = false;
	Calculate(k);
	rows = k->out.rows;
	k->diagnostics = true;
	Calculate(k);
	CHECK(k->out.rows == rows);
	return rows;
}

/*
 * Fails: the case fails, with and without diagnostics, with kind and
 * message, and leaves the engine's position at the participant and
 * want_txn ("-": between transactions).
 */
static void
Fails(Case *k, IncErrKind want_kind, const char *want_message, const char *want_txn)
{
	int			d;

	for (d = 0; d < 2; d++)
	{
		IncErrKind	kind = 0;
		char		message[512];
		const char *participant = NULL;
		const char *transaction_id = NULL;

		k->diagnostics = d;
		k->engine = NULL;
		if (!unit_expect_failure(Calculate, k, &kind, message, sizeof(message)))
			continue;
		CHECK(kind == want_kind);
		CHECK_STR(message, want_message);
		/* a failed calculation leaves its position behind */
		CHECK(k->engine && inc_engine_position(k->engine, &participant, &transaction_id));
		CHECK_STR(participant, k->participant);
		CHECK_STR(transaction_id ? transaction_id : "-", want_txn);
		if (k->engine)
			inc_engine_clear_position(k->engine);
	}
}

static bool
Has(const Case *k, const char *part)
{
	if (strstr(k->out.diagnostics, part) != NULL)
		return true;
	printf("     diagnostics %s\n     lack %s\n", k->out.diagnostics, part);
	return false;
}

#define NO_LITRES "no unit conversion from \"l\" to \"gal\" for transaction \"L\" (sku \"a\")"

/* Each strategy: a failed requirement hides an unconvertible transaction; a met one raises it. */
static void
TestEachStrategy(void)
{
	IncTxn		txns[2] = {
		Txn("G", "2026-03-01", "a", "10", "gal", "100", 0),
		Txn("L", "2026-03-02", "a", "10", "l", "100", 0),
	};
	const char *unmet[3] = {
		STANDARD(REQUIRE(PLAN("100"))), STEPPED(REQUIRE(PLAN("100"))), STACKED(REQUIRE(PLAN("100")))
	};
	const char *met[3] = {
		STANDARD(REQUIRE(PLAN("90"))), STEPPED(REQUIRE(PLAN("90"))), STACKED(REQUIRE(PLAN("90")))
	};
	const char *plain[3] = {STANDARD(""), STEPPED(""), STACKED("")};
	int			s;

	for (s = 0; s < 3; s++)
	{
		Case		k = {.offer = unmet[s], .participant = "r", .txns = txns, .ntxns = 2};

		/* not qualified: no rows, no error; the strategy's figures left out */
		CHECK(Quiet(&k) == 0);
		CHECK(Has(&k, "{\"rules\":{\"enrollment\":\"open\","));
		CHECK(Has(&k, "\"qualified\":false,\"strategy_error\":\"no unit conversion from \\\"l\\\" to \\\""));
		CHECK(Has(&k, "\"incentive_amount\":0}}"));

		/* qualified: the strategy's error, at its transaction */
		k.offer = met[s];
		Fails(&k, INC_ERR_NO_CONVERSION,
			  s == 2 ? "no unit conversion from \"l\" to \"fl_oz\" for transaction \"L\" (sku \"a\")"
			  : NO_LITRES, "L");

		/* without rules: the same error, as the transactions come */
		k.offer = plain[s];
		Fails(&k, INC_ERR_NO_CONVERSION,
			  s == 2 ? "no unit conversion from \"l\" to \"fl_oz\" for transaction \"L\" (sku \"a\")"
			  : NO_LITRES, "L");

		/* without the bad transaction the unqualified offer shows its figures */
		k.offer = unmet[s];
		k.ntxns = 1;
		CHECK(Quiet(&k) == 0);
		CHECK(strstr(k.out.diagnostics, "strategy_error") == NULL);
		CHECK(strncmp(k.out.diagnostics, "{\"rules\"", 8) != 0);
		k.offer = met[s];
		CHECK(Quiet(&k) == 1);
	}
}

/* The requirements among themselves: an unmet one decides, else the first unknown raises. */
static void
TestRequirementErrors(void)
{
	IncTxn		txns[3] = {
		Txn("G", "2026-03-01", "a", "10", "gal", "100", 0),
		Txn("Z", "2026-03-02", "z", "10", "l", "100", 0),	/* only a requirement names z */
		Txn("Y", "2026-03-03", "z", "2", "gal", "20", 0),
	};
	Case		k = {.participant = "r", .txns = txns, .ntxns = 3};

#define Z_VOLUME "{'key':'z_volume','type':'aggregated_quantity','minimum':1,'filters':[" FILTER("z") "]}"
#define Z_SPEND(minimum) "{'key':'z_spend','type':'aggregated_amount','minimum':" minimum ",'filters':[" FILTER("z") "]}"
#define NOT_A_NUMBER "{'key':'np','type':'property','property':{'key':'np'},'minimum':1}"

	/* z's volume cannot be computed, the plan is unmet: quiet */
	k.offer = STANDARD(REQUIRE(Z_VOLUME "," PLAN("100")));
	CHECK(Quiet(&k) == 0);
	CHECK(Has(&k, "{\"key\":\"z_volume\",\"type\":\"aggregated_quantity\",\"property_key\":null,"
			  "\"minimum\":1,\"value\":null,\"met\":null,\"gap\":null,"
			  "\"error\":\"no unit conversion from \\\"l\\\" to \\\"gal\\\" for transaction \\\"Z\\\" (sku \\\"z\\\")\"}"));
	CHECK(Has(&k, "\"value\":95,\"met\":false,\"gap\":5}],\"qualified\":false,"));
	/* the strategy's figures need nothing bad: they are shown */
	CHECK(Has(&k, "{\"entries\":[{\"rate_key\":\"k\""));

	/* the plan met: z's volume decides, and raises, at Z */
	k.offer = STANDARD(REQUIRE(Z_VOLUME "," PLAN("90")));
	Fails(&k, INC_ERR_NO_CONVERSION,
		  "no unit conversion from \"l\" to \"gal\" for transaction \"Z\" (sku \"z\")", "Z");

	/* a property that is not a number, after an unmet spend: quiet */
	k.offer = STANDARD(REQUIRE(Z_SPEND("1000") "," NOT_A_NUMBER));
	CHECK(Quiet(&k) == 0);
	CHECK(Has(&k, "\"value\":120,\"met\":false,\"gap\":880}"));
	CHECK(Has(&k, "\"error\":\"property \\\"np\\\" of participant \\\"r\\\" is not a number\"}"));
	/* the spend met: the property's error, between transactions */
	k.offer = STANDARD(REQUIRE(Z_SPEND("100") "," NOT_A_NUMBER));
	Fails(&k, INC_ERR_PROPERTY_NOT_NUMBER, "property \"np\" of participant \"r\" is not a number", "-");

	/* two unknown and nothing unmet: the first in the offer's order */
	k.offer = STANDARD(REQUIRE(NOT_A_NUMBER "," Z_VOLUME));
	Fails(&k, INC_ERR_PROPERTY_NOT_NUMBER, "property \"np\" of participant \"r\" is not a number", "-");
	k.offer = STANDARD(REQUIRE(Z_VOLUME "," NOT_A_NUMBER));
	Fails(&k, INC_ERR_NO_CONVERSION,
		  "no unit conversion from \"l\" to \"gal\" for transaction \"Z\" (sku \"z\")", "Z");
}

/* A noted error does not depend on the order of the transactions: the lowest transaction_id's. */
static void
TestNotedOrder(void)
{
	IncTxn		forward[3] = {
		Txn("B", "2026-03-01", "a", "10", "tote", "100", 0),
		Txn("A", "2026-03-02", "a", "10", "l", "100", 0),
		Txn("C", "2026-03-03", "a", "10", "gal", "100", INC_TXN_NULL_AMOUNT),
	};
	IncTxn		backward[3] = {forward[2], forward[1], forward[0]};
	Case		k = {.offer = STANDARD(REQUIRE(PLAN("100"))), .participant = "r", .txns = forward,
	.ntxns = 3};
	const char *want = "\"strategy_error\":\"no unit conversion from \\\"l\\\" to \\\"gal\\\" "
		"for transaction \\\"A\\\" (sku \\\"a\\\")\"";

	CHECK(Quiet(&k) == 0);
	CHECK(Has(&k, want));
	k.txns = backward;
	CHECK(Quiet(&k) == 0);
	CHECK(Has(&k, want));
	/* raised, a requirement's too: A, whichever comes first */
	k.offer = STANDARD(REQUIRE("{'key':'a_volume','type':'aggregated_quantity','minimum':1,'filters':[" FILTER("a") "]}"));
	Fails(&k, INC_ERR_NO_CONVERSION, "no unit conversion from \"l\" to \"gal\" for transaction \"A\" (sku \"a\")",
		  "A");
	k.txns = forward;
	Fails(&k, INC_ERR_NO_CONVERSION, "no unit conversion from \"l\" to \"gal\" for transaction \"A\" (sku \"a\")",
		  "A");
}

/* NULL columns: an error only where a figure that reaches a result needs them. */
static void
TestNulls(void)
{
	IncTxn		txns[2] = {
		Txn("G", "2026-03-01", "a", "10", "gal", "100", 0),
		Txn("N", "2026-03-02", "a", "10", "gal", "100", INC_TXN_NULL_AMOUNT),
	};
	Case		k = {.participant = "r", .txns = txns, .ntxns = 2};
	static const struct
	{
		uint8_t		flag;
		const char *column;
	}			columns[] = {
		{INC_TXN_NULL_TYPE, "transaction_type"}, {INC_TXN_NULL_DATE, "transaction_date"},
		{INC_TXN_NULL_QUANTITY, "quantity"}, {INC_TXN_NULL_UOM, "uom_key"},
		{INC_TXN_NULL_AMOUNT, "amount"},
	};
	const char *unmet[3] = {
		STANDARD(REQUIRE(PLAN("100"))), STEPPED(REQUIRE(PLAN("100"))), STACKED(REQUIRE(PLAN("100")))
	};
	const char *met[3] = {
		STANDARD(REQUIRE(PLAN("90"))), STEPPED(REQUIRE(PLAN("90"))), STACKED(REQUIRE(PLAN("90")))
	};
	char		want[256];
	int			s;
	size_t		i;

	for (s = 0; s < 3; s++)
		for (i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
		{
			txns[1] = Txn("N", "2026-03-02", "a", "10", "gal", "100", columns[i].flag);
			snprintf(want, sizeof(want), "column \"%s\" of transaction \"N\" of participant \"r\" is NULL",
					 columns[i].column);
			k.offer = unmet[s];
			CHECK(Quiet(&k) == 0);
			CHECK(Has(&k, "\"strategy_error\":\"column \\\""));
			k.offer = met[s];
			Fails(&k, INC_ERR_NULL, want, "N");
		}

	/* a priced SKU needs no amount for its figures, but its row shows it */
	txns[1] = Txn("N", "2026-03-02", "a", "10", "gal", "100", INC_TXN_NULL_AMOUNT);
	k.offer = HEAD("standard", "dollars_per_unit") "'prices':[{'sku_key':'a','price':5}],"
		"'incentives':[{'key':'k','period_key':'p','transaction_type':'buy',"
		"'rates':[{'sku_key':'a','rate':1,'measure':'dollars'}]}]}";
	Fails(&k, INC_ERR_NULL, "column \"amount\" of transaction \"N\" of participant \"r\" is NULL", "N");

	/* a NULL no figure needs: a stacked rate-0 SKU anchors coverage only */
	txns[1] = Txn("N", "2026-03-02", "z", "10", "gal", "100", INC_TXN_NULL_AMOUNT);
	k.offer = HEAD("stacked", "dollars_per_coverage_unit") "'incentive':{'sku_sets':[{'key':'s','period_key':'p',"
		"'transaction_type':'buy','conversion':{'coverage_unit':'acre','rates':[{'sku_key':'z','rate':1,'from':'gal'}]},"
		"'rates':[{'sku_key':'z','rate':0,'measure':'dollars'}]}],'stacks':[{'key':'k','sku_set_keys':['s']}]}}";
	CHECK(Quiet(&k) == 0);
	CHECK(Has(&k, "\"coverage\":10,\"transactions\":1}"));
}

/* Enrollment: a NULL date matters only where there are windows to test it. */
static void
TestEnrollmentNulls(void)
{
	IncTxn		txns[2] = {
		Txn("G", "2026-03-01", "a", "10", "gal", "100", 0),
		Txn("N", "2026-03-02", "a", "10", "gal", "100", INC_TXN_NULL_DATE),
	};
	Case		k = {.offer = STANDARD(",'enrollment':'required'"), .participant = "nobody", .txns = txns, .ntxns = 2};

	/* no window: nothing exists for the offer, the date is never needed */
	CHECK(Quiet(&k) == 0);
	CHECK(Has(&k, "\"transactions_outside_windows\":2,"));
	/* a window, no requirement: the date decides, so it fails */
	k.participant = "w";
	Fails(&k, INC_ERR_NULL, "column \"transaction_date\" of transaction \"N\" of participant \"w\" is NULL",
		  "N");
	/* a window and an unmet requirement: quiet */
	k.offer = STANDARD(",'enrollment':'required'" REQUIRE(PLAN("100")));
	CHECK(Quiet(&k) == 0);
	/* a requirement that counts the transaction cannot be computed */
	k.offer = STANDARD(",'enrollment':'required'" REQUIRE(PLAN("100") ","
														   "{'key':'a_spend','type':'aggregated_amount','minimum':1,'filters':[" FILTER("a") "]}"));
	CHECK(Quiet(&k) == 0);
	CHECK(Has(&k, "\"value\":null,\"met\":null,\"gap\":null,\"error\":\"column \\\"transaction_date\\\""));
	/* met: the date's error, at N */
	k.offer = STANDARD(",'enrollment':'required'" REQUIRE(PLAN("90")));
	Fails(&k, INC_ERR_NULL, "column \"transaction_date\" of transaction \"N\" of participant \"w\" is NULL",
		  "N");
}

/* test_rules_errors: data errors in the order of the program rules. */
void
test_rules_errors(void)
{
	TestEachStrategy();
	TestRequirementErrors();
	TestNotedOrder();
	TestNulls();
	TestEnrollmentNulls();
}
