/*
 * test_offer_parse.c
 *    Unit tests of the offer parser (src/core/offer): every fixture
 *    offer compiles to the expected model, and every rule of
 *    docs/reference.md, Invalid offers, rejects its bad document with the
 *    exact message.
 *
 * Fixtures are read from test/fixtures/<case>/offers.json (the binary runs
 * from the repository root); each offer is compiled twice, from the json-c
 * tree and from its text.  The invalid documents are written with single
 * quotes for readability and turned into JSON by swapping ' for ".  The
 * same table is the source of sql/offers_invalid.sql (the cases marked
 * SQL), so keep the two in step when adding a case.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "unit.h"
#include "../../src/core/offer/offer_internal.h"

/* ---- building blocks of the test documents ---- */

#define PERIODS "'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-12-31'}]"
#define HEAD(strategy, calc) \
	"{'offer_key':'x','strategy_key':'" strategy "','calculator_key':'" calc "',"

/* standard */
#define STD_HEAD HEAD("standard", "percent_of_amount") PERIODS ","
#define PCT(sku, rate) "{'sku_key':'" sku "','rate':" rate ",'measure':'percent'}"
#define ENTRY(rates) "{'period_key':'p','transaction_type':'t','rates':[" rates "]}"
#define STD(entries) STD_HEAD "'incentives':[" entries "]}"
#define STD_OK STD(ENTRY(PCT("a", "3.0")))

/* stepped */
#define FILTER "{'period_key':'p','sku_keys':['a'],'transaction_type':'t'}"
#define TD_AMOUNT "'threshold_definition':{'type':'aggregated_amount','filters':[" FILTER "]}"
#define TIER(th, val) "{'threshold':" th ",'value':" val ",'measure':'percent'}"
#define STEP_CALC(calc, filters, td, tiers) \
	HEAD("stepped", calc) PERIODS ",'incentive':{'filters':[" filters "]," td ",'rates':[" tiers "]}}"
#define STEP(filters, td, tiers) STEP_CALC("percent_of_amount", filters, td, tiers)
#define STEP_OK STEP(FILTER, TD_AMOUNT, TIER("1000", "10") "," TIER("2000.0", "15"))

/* stacked */
#define CONV(sku, rate) "{'sku_key':'" sku "','rate':" rate ",'from':'gal'}"
#define PAY(sku, rate) "{'sku_key':'" sku "','rate':" rate ",'measure':'dollars'}"
#define SET_TP(key, period, type, unit, convs, pays) \
	"{'key':'" key "','period_key':'" period "','transaction_type':'" type "'," \
	"'conversion':{'coverage_unit':'" unit "','rates':[" convs "]},'rates':[" pays "]}"
#define SET(key, unit, convs, pays) SET_TP(key, "p", "t", unit, convs, pays)
#define SET_S SET("s", "acre", CONV("a", "1.0"), PAY("a", "0"))
#define SET_U SET("u", "acre", CONV("b", "0.5"), PAY("b", "0.75"))
#define STACK_SU "{'sku_set_keys':['s','u']}"
#define STK_HEAD HEAD("stacked", "dollars_per_coverage_unit") PERIODS ","
#define STK(sets, stacks) STK_HEAD "'incentive':{'sku_sets':[" sets "],'stacks':[" stacks "]}}"
#define STK_OK STK(SET_S "," SET_U, STACK_SU)

#define E(msg) "invalid offer \"x\": " msg
#define N(msg) "invalid offer (no offer_key): " msg

typedef struct InvalidCase
{
	bool		sql;			/* also in sql/offers_invalid.sql */
	const char *doc;			/* ' stands for " */
	const char *message;
} InvalidCase;

#define HUGE_INT "100000000000000000000000000000000"
#define TEN_DIGITS "1234567890"
#define LONG_INT TEN_DIGITS TEN_DIGITS TEN_DIGITS TEN_DIGITS TEN_DIGITS \
	TEN_DIGITS TEN_DIGITS TEN_DIGITS TEN_DIGITS TEN_DIGITS	/* 100 digits */

static const InvalidCase InvalidCases[] = {
	/* the document and offer_key */
	{true, "[1]", N("document must be a JSON object")},
	{true, "42", N("document must be a JSON object")},
	{false, "null", N("document must be a JSON object")},
	{false, "{'offer_key':'x',", N("document is not valid JSON")},
	{false, "{'offer_key':'x'} x", N("document is not valid JSON")},
	{false, "{'offer_key':'x',}", N("document is not valid JSON")},
	{false, "", N("document is not valid JSON")},
	{true, "{'strategy_key':'standard'}", N("offer_key is required")},
	{true, "{'offer_key':7}", N("offer_key must be a string")},
	{true, "{'offer_key':null}", N("offer_key must be a string")},
	{true, "{'offer_key':''}", N("offer_key must not be empty")},
	{true, "{'offer_key':'x','label':5}", E("label must be a string")},

	/* strategy and calculator */
	{true, "{'offer_key':'x'}", E("strategy_key is required")},
	{true, HEAD("tiered", "percent_of_amount") PERIODS "}",
	E("strategy_key must be one of standard, stepped, stacked")},
	{true, HEAD("standard", "percent") PERIODS "}",
	E("calculator_key must be one of percent_of_amount, dollars_per_unit, fixed_amount, dollars_per_coverage_unit")},
	{true, "{'offer_key':'x','strategy_key':'standard','calculator_key':1}",
	E("calculator_key must be a string")},
	{true, HEAD("stacked", "fixed_amount") PERIODS "}",
	E("calculator_key \"fixed_amount\" is not allowed for strategy \"stacked\"")},
	{true, HEAD("standard", "dollars_per_coverage_unit") PERIODS "}",
	E("calculator_key \"dollars_per_coverage_unit\" is not allowed for strategy \"standard\"")},

	/* periods */
	{true, HEAD("standard", "percent_of_amount") "'incentives':[]}", E("periods is required")},
	{true, HEAD("standard", "percent_of_amount") "'periods':null}", E("periods must be an array")},
	{true, HEAD("standard", "percent_of_amount") "'periods':{}}", E("periods must be an array")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[]}", E("periods must not be empty")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[5]}", E("periods[0] must be an object")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'start_date':'2026-01-01','end_date':'2026-12-31'}]}",
	E("periods[0].key is required")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-02-30','end_date':'2026-12-31'}]}",
	E("periods[0].start_date \"2026-02-30\" is not a valid calendar date (February 2026 has 28 days)")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026/12/31'}]}",
	E("periods[0].end_date must be a date (YYYY-MM-DD)")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2025-10-01','end_date':'2026-02-29'}]}",
	E("periods[0].end_date \"2026-02-29\" is not a valid calendar date (February 2026 has 28 days)")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-06-31'}]}",
	E("periods[0].end_date \"2026-06-31\" is not a valid calendar date (June 2026 has 30 days)")},
	{false, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-01-00','end_date':'2026-12-31'}]}",
	E("periods[0].start_date \"2026-01-00\" is not a valid calendar date (January 2026 has 31 days)")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-13-01'}]}",
	E("periods[0].end_date \"2026-13-01\" is not a valid calendar date (months run from 01 to 12)")},
	{false, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-00-10','end_date':'2026-12-31'}]}",
	E("periods[0].start_date \"2026-00-10\" is not a valid calendar date (months run from 01 to 12)")},
	{false, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'0000-01-01','end_date':'2026-12-31'}]}",
	E("periods[0].start_date \"0000-01-01\" is not a valid calendar date (years run from 0001 to 9999)")},
	{false, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-1-01','end_date':'2026-12-31'}]}",
	E("periods[0].start_date must be a date (YYYY-MM-DD)")},
	{false, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-12-3l'}]}",
	E("periods[0].end_date must be a date (YYYY-MM-DD)")},
	{false, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-01-01T00:00','end_date':'2026-12-31'}]}",
	E("periods[0].start_date must be a date (YYYY-MM-DD)")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':20260101,'end_date':'2026-12-31'}]}",
	E("periods[0].start_date must be a string")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-12-31','end_date':'2026-01-01'}]}",
	E("periods[0].end_date must not be before start_date")},
	{true, HEAD("standard", "percent_of_amount") "'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-06-30'},"
		"{'key':'p','start_date':'2026-07-01','end_date':'2026-12-31'}]}",
	E("periods[1].key duplicates period key \"p\"")},

	/* prices */
	{true, STD_HEAD "'prices':'a'}", E("prices must be an array")},
	{true, STD_HEAD "'prices':[{'sku_key':'a','price':-1}]}", E("prices[0].price must be >= 0")},
	{true, STD_HEAD "'prices':[{'sku_key':'a','price':'50'}]}", E("prices[0].price must be a number")},
	{true, STD_HEAD "'prices':[{'sku_key':'a'}]}", E("prices[0].price is required")},
	{true, STD_HEAD "'prices':[{'sku_key':'a','price':1},{'sku_key':'a','price':2}]}",
	E("prices[1].sku_key duplicates sku \"a\"")},

	/* standard */
	{true, STD_HEAD "'incentive':{}}", E("incentives is required")},
	{true, STD("") , E("incentives must not be empty")},
	{true, STD("'e'"), E("incentives[0] must be an object")},
	{true, STD("{'key':5,'period_key':'p','transaction_type':'t','rates':[" PCT("a", "1") "]}"),
	E("incentives[0].key must be a string")},
	{true, STD("{'period_key':'q','transaction_type':'t','rates':[" PCT("a", "1") "]}"),
	E("incentives[0].period_key names an undefined period \"q\"")},
	{true, STD("{'period_key':'p','transaction_type':'','rates':[" PCT("a", "1") "]}"),
	E("incentives[0].transaction_type must not be empty")},
	{true, STD("{'period_key':'p','transaction_type':'t'}"), E("incentives[0].rates is required")},
	{true, STD(ENTRY("")), E("incentives[0].rates must not be empty")},
	{true, STD(ENTRY("{'rate':1,'measure':'percent'}")), E("incentives[0].rates[0] needs sku_key or product_key")},
	{true, STD(ENTRY(PCT("a", "-0.5"))), E("incentives[0].rates[0].rate must be >= 0")},
	{true, STD(ENTRY(PCT("a", "'3.0'"))), E("incentives[0].rates[0].rate must be a number")},
	{true, STD(ENTRY(PCT("a", "true"))), E("incentives[0].rates[0].rate must be a number")},
	{false, STD(ENTRY(PCT("a", "NaN"))), E("incentives[0].rates[0].rate must be a number")},
	{false, STD(ENTRY(PCT("a", "Infinity"))), E("incentives[0].rates[0].rate must be a number")},
	{false, STD(ENTRY(PCT("a", "-Infinity"))), E("incentives[0].rates[0].rate must be a number")},
	{true, STD(ENTRY(PCT("a", HUGE_INT))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "-" HUGE_INT))), E("incentives[0].rates[0].rate is out of range")},
	/* integers just past json-c's range (int64 below, uint64 above) and its ends */
	{true, STD(ENTRY(PCT("a", "18446744073709551616"))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "-9223372036854775809"))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "18446744073709551615"))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "-9223372036854775808"))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", LONG_INT))), E("incentives[0].rates[0].rate is out of range")},
	/* the huge integer last in its object, and between blanks */
	{true, STD(ENTRY("{'sku_key':'a','measure':'percent','rate':" HUGE_INT "}")),
	E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY("{'sku_key':'a','rate':  " HUGE_INT " ,'measure':'percent'}")),
	E("incentives[0].rates[0].rate is out of range")},
	/* huge exponents and many-digit decimals */
	{true, STD(ENTRY(PCT("a", "1e400"))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "-1E+400"))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "1e-400"))), E("incentives[0].rates[0].rate is out of range")},
	{false, STD(ENTRY(PCT("a", "1e99999999999999999999"))), E("incentives[0].rates[0].rate is out of range")},
	{false, STD(ENTRY(PCT("a", "1e-99999999999999999999"))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "0.0000000000000000000000000000000000000000000001"))),
	E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "1.0000000000000000000000000000000000000000000001"))),
	E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "123456789012345678901234567890123456789.5"))),
	E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY(PCT("a", "1e-39"))), E("incentives[0].rates[0].rate is out of range")},
	/* a percent rate is reported as rate / 100: at most 36 decimal places */
	{true, STD(ENTRY(PCT("a", "1e-37"))), E("incentives[0].rates[0].rate is out of range")},
	{true, STD(ENTRY("{'sku_key':'a','rate':1}")), E("incentives[0].rates[0].measure is required")},
	{true, STD(ENTRY("{'sku_key':'a','rate':1,'measure':'dollars'}")),
	E("incentives[0].rates[0].measure must be \"percent\" for calculator \"percent_of_amount\"")},
	{true, HEAD("standard", "dollars_per_unit") PERIODS ",'incentives':[" ENTRY(PCT("a", "1")) "]}",
	E("incentives[0].rates[0].measure must be \"dollars\" for calculator \"dollars_per_unit\"")},
	{true, STD(ENTRY(PCT("a", "1") "," PCT("b", "1") "," PCT("a", "2"))),
	E("incentives[0].rates[2].sku_key duplicates sku \"a\"")},
	{true, STD(ENTRY(PCT("a", "1")) "," ENTRY(PCT("b", "1"))),
	E("incentives[1] duplicates rate key \"p_t\"")},
	{true, STD("{'key':'p_t','period_key':'p','transaction_type':'u','rates':[" PCT("a", "1") "]}," ENTRY(PCT("b", "1"))),
	E("incentives[1] duplicates rate key \"p_t\"")},
	{true, STD("{'key':'k','period_key':'p','transaction_type':'t','rates':[" PCT("a", "1") "]},"
			   "{'key':'k','period_key':'p','transaction_type':'u','rates':[" PCT("a", "1") "]}"),
	E("incentives[1].key duplicates rate key \"k\"")},
	{true, STD_HEAD "'incentives':[" ENTRY(PCT("a", "1")) "],'incentive':{}}",
	E("incentive is not used by strategy \"standard\"")},
	{false, STD("{'period_key':'p','transaction_type':'t\\u0000x','rates':[" PCT("a", "1") "]}"),
	E("incentives[0].transaction_type must not contain \\u0000")},
	{false, STD(ENTRY(PCT("a", "NaN"))), E("incentives[0].rates[0].rate must be a number")},

	/* stepped */
	{true, HEAD("stepped", "percent_of_amount") PERIODS ",'incentives':[]}",
	E("incentives is only for strategy \"standard\"")},
	{true, HEAD("stepped", "percent_of_amount") PERIODS "}", E("incentive is required")},
	{true, HEAD("stepped", "percent_of_amount") PERIODS ",'incentive':[]}", E("incentive must be an object")},
	{true, STEP("", TD_AMOUNT, TIER("1", "1")), E("incentive.filters must not be empty")},
	{true, STEP("{'period_key':'q','sku_keys':['a'],'transaction_type':'t'}", TD_AMOUNT, TIER("1", "1")),
	E("incentive.filters[0].period_key names an undefined period \"q\"")},
	{true, STEP("{'period_key':'p','sku_keys':[],'transaction_type':'t'}", TD_AMOUNT, TIER("1", "1")),
	E("incentive.filters[0].sku_keys must not be empty")},
	{true, STEP("{'period_key':'p','sku_keys':['a',3],'transaction_type':'t'}", TD_AMOUNT, TIER("1", "1")),
	E("incentive.filters[0].sku_keys[1] must be a string")},
	{true, STEP(FILTER ",{'period_key':'p','sku_keys':[''],'transaction_type':'t'}", TD_AMOUNT, TIER("1", "1")),
	E("incentive.filters[1].sku_keys[0] must not be empty")},
	{true, STEP(FILTER ",{'period_key':'p','sku_keys':['a']}", TD_AMOUNT, TIER("1", "1")),
	E("incentive.filters[1].transaction_type is required")},
	{true, HEAD("stepped", "percent_of_amount") PERIODS ",'incentive':{'filters':[" FILTER "],'rates':[]}}",
	E("incentive.threshold_definition is required")},
	{true, STEP(FILTER, "'threshold_definition':{'type':'sum'}", TIER("1", "1")),
	E("incentive.threshold_definition.type must be one of aggregated_amount, aggregated_quantity, property, growth_amount, growth_quantity")},
	{true, STEP(FILTER, "'threshold_definition':{'type':'aggregated_quantity'}", TIER("1", "1")),
	E("incentive.threshold_definition.filters is required")},
	{true, STEP(FILTER, "'threshold_definition':{'type':'aggregated_amount','filters':[{'period_key':'q','sku_keys':['a'],'transaction_type':'t'}]}", TIER("1", "1")),
	E("incentive.threshold_definition.filters[0].period_key names an undefined period \"q\"")},
	{true, STEP(FILTER, "'threshold_definition':{'type':'property'}", TIER("1", "1")),
	E("incentive.threshold_definition.property is required")},
	{true, STEP(FILTER, "'threshold_definition':{'type':'property','property':{'key':''}}", TIER("1", "1")),
	E("incentive.threshold_definition.property.key must not be empty")},
	{true, STEP(FILTER, "'threshold_definition':{'type':'property','property':{'key':'bp','level':1}}", TIER("1", "1")),
	E("incentive.threshold_definition.property.level must be a string")},
	{true, STEP(FILTER, TD_AMOUNT, ""), E("incentive.rates must not be empty")},
	{true, STEP(FILTER, TD_AMOUNT, TIER("1", "1") "," TIER("'2'", "2")),
	E("incentive.rates[1].threshold must be a number")},
	{true, STEP(FILTER, TD_AMOUNT, TIER("1", "-1")), E("incentive.rates[0].value must be >= 0")},
	{true, STEP(FILTER, TD_AMOUNT, "{'threshold':1,'value':1}"), E("incentive.rates[0].measure is required")},
	{true, STEP_CALC("fixed_amount", FILTER, TD_AMOUNT, TIER("1", "1")),
	E("incentive.rates[0].measure must be \"dollars\" for calculator \"fixed_amount\"")},
	{true, STEP(FILTER, TD_AMOUNT, TIER("1000", "10") "," TIER("2000", "15") "," TIER("1000.0", "12")),
	E("incentive.rates[2].threshold duplicates threshold 1000")},
	{true, STEP(FILTER, TD_AMOUNT, "{'key':'k','threshold':1,'value':1,'measure':'percent'},"
				"{'key':'k','threshold':2,'value':2,'measure':'percent'}"),
	E("incentive.rates[1].key duplicates rate key \"k\"")},
	{true, STEP(FILTER, TD_AMOUNT, "{'key':'2_percent_greater_than_or_equal_to_100','threshold':50,'value':1,'measure':'percent'},"
				TIER("100.00", "2.0")),
	E("incentive.rates[1] duplicates rate key \"2_percent_greater_than_or_equal_to_100\"")},

	/* stacked */
	{true, STK_HEAD "'incentives':null,'incentive':{'sku_sets':[],'stacks':[]}}",
	E("incentive.sku_sets must not be empty")},
	{true, STK("{'period_key':'p'}", STACK_SU), E("incentive.sku_sets[0].key is required")},
	{true, STK(SET_S ",{'key':'u','period_key':'p','transaction_type':'t','rates':[]}", STACK_SU),
	E("incentive.sku_sets[1].conversion is required")},
	{true, STK(SET_S ",{'key':'u','period_key':'p','transaction_type':'t','conversion':{'rates':[]}}", STACK_SU),
	E("incentive.sku_sets[1].conversion.coverage_unit is required")},
	{true, STK(SET("s", "acre", "", ""), STACK_SU), E("incentive.sku_sets[0].conversion.rates must not be empty")},
	{true, STK(SET("s", "acre", CONV("a", "0"), ""), STACK_SU),
	E("incentive.sku_sets[0].conversion.rates[0].rate must be > 0")},
	{true, STK(SET("s", "acre", CONV("a", "-1.5"), ""), STACK_SU),
	E("incentive.sku_sets[0].conversion.rates[0].rate must be > 0")},
	/* minus zero is zero */
	{true, STK(SET("s", "acre", CONV("a", "-0"), ""), STACK_SU),
	E("incentive.sku_sets[0].conversion.rates[0].rate must be > 0")},
	{true, STK(SET("s", "acre", CONV("a", "-0.0e5"), ""), STACK_SU),
	E("incentive.sku_sets[0].conversion.rates[0].rate must be > 0")},
	{true, STK(SET("s", "acre", CONV("a", "-" HUGE_INT), ""), STACK_SU),
	E("incentive.sku_sets[0].conversion.rates[0].rate is out of range")},
	{true, STK(SET_S "," SET("u", "acre", CONV("b", "{}"), ""), STACK_SU),
	E("incentive.sku_sets[1].conversion.rates[0].rate must be a number")},
	{true, STK(SET("s", "acre", "{'sku_key':'a','rate':1,'from':''}", ""), STACK_SU),
	E("incentive.sku_sets[0].conversion.rates[0].from must not be empty")},
	{true, STK(SET("s", "acre", CONV("a", "1") "," CONV("a", "2"), ""), STACK_SU),
	E("incentive.sku_sets[0].conversion.rates[1].sku_key duplicates sku \"a\"")},
	{true, STK("{'key':'s','period_key':'p','transaction_type':'t','conversion':{'coverage_unit':'acre','rates':[" CONV("a", "1") "]}}", STACK_SU),
	E("incentive.sku_sets[0].rates is required")},
	{true, STK(SET("s", "acre", CONV("a", "1"), PAY("b", "1")), STACK_SU),
	E("incentive.sku_sets[0].rates[0].sku_key is not in conversion.rates")},
	{true, STK(SET("s", "acre", CONV("a", "1"), PAY("a", "-1")), STACK_SU),
	E("incentive.sku_sets[0].rates[0].rate must be >= 0")},
	{true, STK(SET("s", "acre", CONV("a", "1"), "{'sku_key':'a','rate':1,'measure':'percent'}"), STACK_SU),
	E("incentive.sku_sets[0].rates[0].measure must be \"dollars\" for calculator \"dollars_per_coverage_unit\"")},
	{true, STK(SET("s", "acre", CONV("a", "1") "," CONV("b", "1"), PAY("a", "1") "," PAY("a", "2")), STACK_SU),
	E("incentive.sku_sets[0].rates[1].sku_key duplicates sku \"a\"")},
	{true, STK(SET_S "," SET("s", "acre", CONV("b", "1"), ""), STACK_SU),
	E("incentive.sku_sets[1].key duplicates sku set key \"s\"")},
	{true, STK_HEAD "'incentive':{'sku_sets':[" SET_S "]}}", E("incentive.stacks is required")},
	{true, STK(SET_S "," SET_U, "{'sku_set_keys':[]}"), E("incentive.stacks[0].sku_set_keys must not be empty")},
	{true, STK(SET_S "," SET_U, "{'key':'k'}"), E("incentive.stacks[0].sku_set_keys is required")},
	{true, STK(SET_S "," SET_U, "{'sku_set_keys':['s','z']}"),
	E("incentive.stacks[0].sku_set_keys[1] names an undefined sku set \"z\"")},
	{true, STK(SET_S "," SET_U, "{'sku_set_keys':['s','s']}"),
	E("incentive.stacks[0].sku_set_keys[1] duplicates sku set key \"s\"")},
	{true, STK(SET_S "," SET("u", "bag", CONV("b", "1"), ""), STACK_SU),
	E("incentive.stacks[0].sku_set_keys[1] has coverage_unit \"bag\" but sku set \"s\" has \"acre\"")},
	{true, STK(SET_S "," SET("u", "acre", CONV("b", "1") "," CONV("a", "2"), PAY("b", "1")), STACK_SU),
	E("incentive.stacks[0] puts sku \"a\" in sku sets \"s\" and \"u\" of one stack")},
	{true, STK(SET_S "," SET_U, STACK_SU "," STACK_SU),
	E("incentive.stacks[1] duplicates rate key \"s_and_u\"")},
	{true, STK(SET_S "," SET_U, "{'key':'k','sku_set_keys':['s']},{'key':'k','sku_set_keys':['u']}"),
	E("incentive.stacks[1].key duplicates rate key \"k\"")},
	{true, STK(SET_S "," SET_U, "{'key':'s_and_u','sku_set_keys':['s']},{'sku_set_keys':['s','u']}"),
	E("incentive.stacks[1] duplicates rate key \"s_and_u\"")},
};

/* Documents that must compile (edge cases of the rules above). */
static const char *const ValidDocs[] = {
	STD_OK,
	STEP_OK,
	STK_OK,
	/* optional fields null, unknown fields ignored, whitespace around */
	"  {'offer_key':'x','label':null,'strategy_key':'standard','calculator_key':'fixed_amount','extra':{'a':[1]},"
	PERIODS ",'prices':null,'incentive':null,'incentives':[{'key':null,'label':null,'period_key':'p',"
	"'transaction_type':'t','rates':[{'sku_key':'a','rate':0,'measure':'dollars','note':1}]}]}\n",
	/* a negative threshold and a property threshold with null type/level */
	STEP(FILTER, "'threshold_definition':{'type':'property','property':{'key':'bp','type':null}}",
		 TIER("-5", "1") "," TIER("0", "2")),
	/* a SKU in two sets of one stack, but for different transaction types */
	STK(SET_S "," SET_TP("u", "p", "other", "acre", CONV("a", "1"), PAY("a", "1")), STACK_SU),
	/* ... or in periods that do not overlap */
	HEAD("stacked", "dollars_per_coverage_unit")
	"'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-06-30'},"
	"{'key':'q','start_date':'2026-07-01','end_date':'2026-12-31'}],"
	"'incentive':{'sku_sets':[" SET_S "," SET_TP("u", "q", "t", "acre", CONV("a", "1"), PAY("a", "1"))
	"],'stacks':[" STACK_SU "]}}",
	/* the same SKU in two sets of different stacks */
	STK(SET_S "," SET("u", "acre", CONV("a", "1"), PAY("a", "1")), "{'sku_set_keys':['s']},{'sku_set_keys':['u']}"),
	/* a big integer that json-c keeps exactly */
	STD(ENTRY(PCT("a", "10000000000000000000"))),
	/* numbers beyond json-c's integers in an unknown field; minus zero */
	STD_HEAD "'x':[" HUGE_INT ",-" HUGE_INT "," LONG_INT ",1e400,-0],"
	"'incentives':[" ENTRY(PCT("a", "-0")) "]}",
	/* DEL and escaped control characters in strings */
	"{'offer_key':'x\x7f','label':'a\\tb\\u0001','strategy_key':'standard','calculator_key':'percent_of_amount',"
	PERIODS ",'incentives':[" ENTRY(PCT("a", "1")) "]}",
};

/* The document with ' turned into " (malloc'd). */
static char *
Unquote(const char *doc)
{
	size_t		len = strlen(doc);
	char	   *s = malloc(len + 1);
	size_t		i;

	for (i = 0; i <= len; i++)
		s[i] = doc[i] == '\'' ? '"' : doc[i];
	return s;
}

/* Parse a test document (single-quoted form). */
static IncOffer *
ParseDoc(const char *doc, IncOfferError *err)
{
	char	   *json = Unquote(doc);
	IncOffer   *offer = inc_offer_parse(json, strlen(json), err);

	free(json);
	return offer;
}

/*
 * Offer number index of fixture case_name, compiled both from the json-c
 * tree and from its text; the offer from the tree is returned (NULL, with
 * a recorded failure, when anything goes wrong).
 */
static IncOffer *
LoadFixture(const char *case_name, int index)
{
	char		path[512];
	char	   *text;
	struct json_object *arr;
	struct json_object *elem;
	IncOffer   *offer = NULL;
	IncOfferError err;

	snprintf(path, sizeof(path), "test/fixtures/%s/offers.json", case_name);
	text = unit_read_file(path);
	CHECK(text != NULL);
	if (text == NULL)
	{
		printf("  cannot read %s (run from the repository root)\n", path);
		return NULL;
	}
	arr = json_tokener_parse(text);
	free(text);
	CHECK(json_object_is_type(arr, json_type_array));
	elem = json_object_array_get_idx(arr, (size_t) index);
	CHECK(elem != NULL);
	if (elem != NULL)
	{
		const char *elem_text = json_object_to_json_string_ext(elem, JSON_C_TO_STRING_PLAIN);
		IncOffer   *again = inc_offer_parse(elem_text, strlen(elem_text), &err);

		CHECK_STR(err.message, "");
		CHECK(again != NULL);
		offer = inc_offer_from_json(elem, NULL, &err);
		CHECK_STR(err.message, "");
		CHECK(offer != NULL);
		if (offer && again)
			CHECK_STR(again->offer_key, offer->offer_key);
	}
	json_object_put(arr);
	return offer;
}

/* Does d print (as written) as want? */
static bool
DecIs(const IncDec *d, const char *want)
{
	char		buf[INC_NUM_BUF];

	inc_dec_format(d, buf, sizeof(buf));
	return strcmp(buf, want) == 0;
}

/* inc_date_parse: day numbers and impossible dates. */
static void
TestDates(void)
{
	int32_t		d = 12345;

	CHECK(inc_date_parse("2000-01-01", &d) && d == 0);
	CHECK(inc_date_parse("2026-03-14", &d) && d == 9569);
	CHECK(inc_date_parse("1999-12-31", &d) && d == -1);
	CHECK(inc_date_parse("2024-02-29", &d) && d == 8825);
	CHECK(inc_date_parse("2000-02-29", &d));
	CHECK(inc_date_parse("0001-01-01", &d) && d == -730119);
	CHECK(inc_date_parse("9999-12-31", &d) && d == 2921939);
	CHECK(!inc_date_parse("2026-02-29", &d));
	CHECK(!inc_date_parse("1900-02-29", &d));
	CHECK(!inc_date_parse("2026-02-30", &d));
	CHECK(!inc_date_parse("2026-04-31", &d));
	CHECK(!inc_date_parse("2026-13-01", &d));
	CHECK(!inc_date_parse("2026-00-10", &d));
	CHECK(!inc_date_parse("2026-01-00", &d));
	CHECK(!inc_date_parse("0000-01-01", &d));
	CHECK(!inc_date_parse("2026-3-14", &d));
	CHECK(!inc_date_parse("2026-03-14 ", &d));
	CHECK(!inc_date_parse("2026-03-14T00:00", &d));
	CHECK(!inc_date_parse("2026/03/14", &d));
	CHECK(!inc_date_parse("+026-03-14", &d));
	CHECK(!inc_date_parse("", &d));
	CHECK(!inc_date_parse(NULL, &d));
}

/* inc_date_problem: the form, then the calendar, each with its message. */
static void
TestDateProblems(void)
{
	int32_t		d = 12345;
	char		buf[96];

	CHECK(inc_date_problem("2024-02-29", &d, buf, sizeof(buf)) == NULL && d == 8825);
	CHECK_STR(inc_date_problem("2024-02-30", &d, buf, sizeof(buf)),
			  "\"2024-02-30\" is not a valid calendar date (February 2024 has 29 days)");
	CHECK_STR(inc_date_problem("1900-02-29", &d, buf, sizeof(buf)),
			  "\"1900-02-29\" is not a valid calendar date (February 1900 has 28 days)");
	CHECK_STR(inc_date_problem("2026-09-31", &d, buf, sizeof(buf)),
			  "\"2026-09-31\" is not a valid calendar date (September 2026 has 30 days)");
	CHECK_STR(inc_date_problem("2026-12-32", &d, buf, sizeof(buf)),
			  "\"2026-12-32\" is not a valid calendar date (December 2026 has 31 days)");
	CHECK_STR(inc_date_problem("2026-99-99", &d, buf, sizeof(buf)),
			  "\"2026-99-99\" is not a valid calendar date (months run from 01 to 12)");
	CHECK_STR(inc_date_problem("0000-00-00", &d, buf, sizeof(buf)),
			  "\"0000-00-00\" is not a valid calendar date (years run from 0001 to 9999)");
	CHECK_STR(inc_date_problem("2026-O1-01", &d, buf, sizeof(buf)), "must be a date (YYYY-MM-DD)");
	CHECK_STR(inc_date_problem("26-01-01", &d, buf, sizeof(buf)), "must be a date (YYYY-MM-DD)");
	CHECK_STR(inc_date_problem("-2026-01-1", &d, buf, sizeof(buf)), "must be a date (YYYY-MM-DD)");
	CHECK(d == 8825);			/* untouched by a problem */
}

/* Strategy and calculator names. */
static void
TestNames(void)
{
	CHECK_STR(inc_strategy_name(INC_STANDARD), "standard");
	CHECK_STR(inc_strategy_name(INC_STEPPED), "stepped");
	CHECK_STR(inc_strategy_name(INC_STACKED), "stacked");
	CHECK_STR(inc_calculator_name(INC_PERCENT_OF_AMOUNT), "percent_of_amount");
	CHECK_STR(inc_calculator_name(INC_DOLLARS_PER_UNIT), "dollars_per_unit");
	CHECK_STR(inc_calculator_name(INC_FIXED_AMOUNT), "fixed_amount");
	CHECK_STR(inc_calculator_name(INC_DOLLARS_PER_COVERAGE_UNIT), "dollars_per_coverage_unit");
}

/* Standard offers of the fixtures, and the fixed_amount one. */
static void
TestStandardFixtures(void)
{
	IncOffer   *o;

	o = LoadFixture("standard_percent", 0);
	if (o)
	{
		CHECK_STR(o->offer_key, "corteva.2026.retailer.local.crop_protection.base");
		CHECK(o->label == NULL);
		CHECK(o->strategy == INC_STANDARD && o->calculator == INC_PERCENT_OF_AMOUNT);
		CHECK(o->nperiods == 1);
		CHECK_STR(o->periods[0].key, "incentive_period");
		CHECK(o->periods[0].start_date == 9405 && o->periods[0].end_date == 9769);
		CHECK(o->nprices == 0);
		CHECK(inc_offer_price(o, "agri_shield_insecticide_2.5_gal_53551") == NULL);
		CHECK(o->nentries == 1);
		CHECK_STR(o->entries[0].key, "incentive_period_retailer_purchases_from_distribution");
		CHECK_STR(o->entries[0].label, "Full Season Incentive");
		CHECK(o->entries[0].period == 0);
		CHECK_STR(o->entries[0].transaction_type, "retailer_purchases_from_distribution");
		CHECK(o->entries[0].nrates == 2);
		CHECK_STR(o->entries[0].rates[1].sku_key, "crop_guard_30_l_herbicide_2.5_gal_22654");
		CHECK(o->entries[0].rates[0].rate.coef == 30 && o->entries[0].rates[0].rate.scale == 1);
		CHECK_STR(o->entries[0].rates[0].measure, "percent");
	}

	o = LoadFixture("standard_multi_entry", 0);
	if (o)
	{
		CHECK(o->nperiods == 2 && o->nentries == 2);
		CHECK(o->periods[0].start_date == 9375 && o->periods[0].end_date == 9480);
		CHECK(o->periods[1].end_date == 9739);
		CHECK_STR(o->entries[0].key, "early_order_retailer_purchases_from_distribution");
		CHECK_STR(o->entries[1].key, "incentive_period_retailer_sales_to_growers");
		CHECK(o->entries[0].period == 0 && o->entries[1].period == 1);
		CHECK(o->entries[0].label == NULL);
		CHECK(DecIs(&o->entries[1].rates[0].rate, "1.25"));
	}

	o = LoadFixture("standard_dollars_per_unit_uom", 0);
	if (o)
	{
		CHECK(o->calculator == INC_DOLLARS_PER_UNIT);
		CHECK_STR(o->entries[0].key, "incentive_period_retailer_purchases_from_distribution");
		CHECK(DecIs(&o->entries[0].rates[1].rate, "0.8"));
		CHECK_STR(o->entries[0].rates[1].measure, "dollars");
	}

	o = LoadFixture("fixed_amount_pools", 0);
	if (o)
	{
		CHECK_STR(o->offer_key, "bayer.2026.retailer.fixed_bonus");
		CHECK(o->strategy == INC_STANDARD && o->calculator == INC_FIXED_AMOUNT);
		CHECK_STR(o->entries[0].key, "incentive_period_retailer_purchases_from_distribution");
		CHECK(DecIs(&o->entries[0].rates[1].rate, "250.0"));
	}
}

/* The tiers of st are keyed keys (NULL-terminated), in that order. */
static void
CheckTierKeys(const IncStepped *st, const char *const *keys)
{
	int			n = 0;

	while (keys[n] != NULL)
		n++;
	CHECK(st->ntiers == n);
	for (n = 0; n < st->ntiers && keys[n] != NULL; n++)
		CHECK_STR(st->tiers[n].key, keys[n]);
}

/* Stepped offers of the fixtures: generated keys, tier order, prices. */
static void
TestSteppedFixtures(void)
{
	IncOffer   *o;
	const IncDec *price;

	o = LoadFixture("fixed_amount_pools", 1);
	if (o)
	{
		IncStepped *st = &o->stepped;

		CHECK(o->strategy == INC_STEPPED && o->calculator == INC_FIXED_AMOUNT);
		CHECK(st->threshold_type == INC_THRESHOLD_QUANTITY);
		CHECK(st->nfilters == 1 && st->nthreshold_filters == 1);
		CHECK(st->filters[0].nskus == 2);
		CHECK_STR(st->filters[0].sku_keys[1], "crop_guard_30_l_herbicide_2.5_gal_22654");
		CheckTierKeys(st, (const char *const []) {
			"300_dollars_greater_than_or_equal_to_10",
			"1000_dollars_greater_than_or_equal_to_50", NULL});
		CHECK(DecIs(&st->tiers[0].threshold, "10") && DecIs(&st->tiers[1].value, "1000"));
	}

	o = LoadFixture("stepped_amount", 0);
	if (o)
	{
		IncStepped *st = &o->stepped;

		CHECK_STR(o->offer_key, "offer_a");
		CHECK(o->nprices == 1);
		price = inc_offer_price(o, "agri_shield_insecticide_2.5_gal_53551");
		CHECK(price != NULL && DecIs(price, "50.0"));
		CHECK(inc_offer_price(o, "agri_shield_insecticide_bulk_63374") == NULL);
		CHECK(st->threshold_type == INC_THRESHOLD_AMOUNT);
		CHECK(st->property_key == NULL);
		CHECK(st->filters[0].period == 0);
		CHECK_STR(st->filters[0].transaction_type, "retailer_purchases_from_distribution");
		CHECK_STR(st->threshold_filters[0].sku_keys[0], "crop_guard_30_l_herbicide_2.5_gal_22654");
		CheckTierKeys(st, (const char *const []) {
			"10_percent_greater_than_or_equal_to_1000",
			"15_percent_greater_than_or_equal_to_2000", NULL});
		CHECK(DecIs(&st->tiers[1].threshold, "2000.0") && DecIs(&st->tiers[1].value, "15.0"));
	}

	o = LoadFixture("stepped_property", 0);
	if (o)
	{
		IncStepped *st = &o->stepped;

		CHECK(st->threshold_type == INC_THRESHOLD_PROPERTY);
		CHECK_STR(st->property_key, "business_plan_achieved");
		CHECK(st->nthreshold_filters == 0);
		CheckTierKeys(st, (const char *const []) {
			"1.88_percent_greater_than_or_equal_to_75",
			"1.9_percent_greater_than_or_equal_to_85",
			"2_percent_greater_than_or_equal_to_100", NULL});
		CHECK(DecIs(&st->tiers[0].value, "1.88"));
	}
}

/* Stacked offers of the fixtures: sets, conversions, stack keys. */
static void
TestStackedFixtures(void)
{
	IncOffer   *o;

	o = LoadFixture("stacked_pair_up", 0);
	if (o)
	{
		IncStacked *sk = &o->stacked;

		CHECK(o->strategy == INC_STACKED && o->calculator == INC_DOLLARS_PER_COVERAGE_UNIT);
		CHECK(sk->nsets == 2 && sk->nstacks == 1);
		CHECK_STR(sk->sets[1].key, "seed_treatment");
		CHECK(sk->sets[1].period == 0);
		CHECK_STR(sk->sets[1].transaction_type, "retailer_sales_to_growers");
		CHECK_STR(sk->sets[1].coverage_unit, "acre");
		CHECK(sk->sets[1].nconversions == 1);
		CHECK(DecIs(&sk->sets[1].conversions[0].rate, "0.00921875"));
		CHECK_STR(sk->sets[1].conversions[0].from_uom, "gal");
		CHECK(sk->sets[0].nrates == 1 && DecIs(&sk->sets[0].rates[0].rate, "0.0"));
		CHECK(DecIs(&sk->sets[1].rates[0].rate, "0.75"));
		CHECK_STR(sk->stacks[0].key, "seed_and_seed_treatment");
		CHECK(sk->stacks[0].nsets == 2 && sk->stacks[0].sets[0] == 0 && sk->stacks[0].sets[1] == 1);
	}

	o = LoadFixture("stacked_multi_stack", 0);
	if (o)
	{
		IncStacked *sk = &o->stacked;

		CHECK(sk->nsets == 3 && sk->nstacks == 2);
		CHECK_STR(sk->stacks[0].key, "seed_and_treatment");
		CHECK_STR(sk->stacks[1].key, "seed_and_treatment_and_insecticide");
		CHECK(sk->stacks[1].nsets == 3 && sk->stacks[1].sets[2] == 2);
		CHECK_STR(sk->sets[2].conversions[0].from_uom, "fl_oz");
	}
}

/* Documents at the edges of the rules that must compile. */
static void
TestValid(void)
{
	IncOfferError err;
	IncOffer   *o;
	size_t		i;

	for (i = 0; i < sizeof(ValidDocs) / sizeof(ValidDocs[0]); i++)
	{
		o = ParseDoc(ValidDocs[i], &err);
		if (o == NULL)
			printf("FAIL valid document %zu: %s\n", i, err.message);
		CHECK(o != NULL);
	}

	/* details of the edge cases */
	o = ParseDoc(ValidDocs[3], &err);
	if (o)
	{
		CHECK(o->label == NULL && o->nprices == 0);
		CHECK_STR(o->entries[0].key, "p_t");
		CHECK(o->entries[0].label == NULL);
	}
	o = ParseDoc(ValidDocs[4], &err);
	if (o)
	{
		CHECK(DecIs(&o->stepped.tiers[0].threshold, "-5"));
		CHECK_STR(o->stepped.tiers[0].key, "1_percent_greater_than_or_equal_to_-5");
	}
	o = ParseDoc(STEP(FILTER, TD_AMOUNT, TIER("75.50", "0.500") "," TIER("1E3", "2")), &err);
	CHECK(o != NULL);
	if (o)
	{
		CHECK_STR(o->stepped.tiers[0].key, "0.5_percent_greater_than_or_equal_to_75.5");
		CHECK_STR(o->stepped.tiers[1].key, "2_percent_greater_than_or_equal_to_1000");
	}
	o = ParseDoc(ValidDocs[8], &err);
	if (o)
		CHECK(DecIs(&o->entries[0].rates[0].rate, "10000000000000000000"));

	/* the compiled offer keeps no pointer into json-c memory */
	{
		char	   *json = Unquote(STK_OK);
		struct json_object *root = json_tokener_parse(json);

		free(json);
		o = inc_offer_from_json(root, NULL, &err);
		json_object_put(root);
		CHECK(o != NULL);
		if (o)
		{
			CHECK_STR(o->offer_key, "x");
			CHECK_STR(o->stacked.stacks[0].key, "s_and_u");
			CHECK_STR(o->stacked.sets[1].conversions[0].sku_key, "b");
		}
	}
}

/* Every invalid document fails with its exact message. */
static void
TestInvalid(void)
{
	IncOfferError err;
	size_t		i;

	for (i = 0; i < sizeof(InvalidCases) / sizeof(InvalidCases[0]); i++)
	{
		const InvalidCase *c = &InvalidCases[i];
		IncOffer   *o = ParseDoc(c->doc, &err);

		CHECK(o == NULL);
		if (o != NULL || strcmp(err.message, c->message) != 0)
			printf("  invalid case %zu: %s\n", i, c->doc);
		CHECK_STR(err.message, c->message);
	}

	/* the json-c entry point: a JSON null root */
	CHECK(inc_offer_from_json(NULL, NULL, &err) == NULL);
	CHECK_STR(err.message, N("document must be a JSON object"));

	/* length-delimited text: bytes after len are not read */
	{
		const char *text = "{\"offer_key\":\"x\"}garbage";

		CHECK(inc_offer_parse(text, 17, &err) == NULL);
		CHECK_STR(err.message, E("strategy_key is required"));
		CHECK(inc_offer_parse(text, 18, &err) == NULL);
		CHECK_STR(err.message, N("document is not valid JSON"));
		CHECK(inc_offer_parse("{}\0", 3, &err) == NULL);
		CHECK_STR(err.message, N("document is not valid JSON"));
	}
}

/*
 * Documents that are not JSON (RFC 8259) whichever json-c parses them: a
 * malformed number, a raw control character in a string.
 */
static const char *const NotJsonDocs[] = {
	STD(ENTRY(PCT("a", "-01"))),
	STD(ENTRY(PCT("a", "01"))),
	STD(ENTRY(PCT("a", "-0123"))),
	STD(ENTRY(PCT("a", "1."))),
	STD(ENTRY(PCT("a", ".5"))),
	STD(ENTRY(PCT("a", "+1"))),
	STD(ENTRY(PCT("a", "1e"))),
	STD(ENTRY(PCT("a", "1e+"))),
	STD(ENTRY(PCT("a", "1.5."))),
	STD(ENTRY(PCT("a", "1e5e5"))),
	STD(ENTRY(PCT("a", "1-2"))),
	STD(ENTRY(PCT("a", "-"))),
	STD(ENTRY(PCT("a", "--1"))),
	STD(ENTRY(PCT("a", HUGE_INT "x"))),
	STD(ENTRY(PCT("a", HUGE_INT "."))),
	STD(ENTRY(PCT("a", "0" HUGE_INT))),
	STD(ENTRY(PCT("a", "-0" HUGE_INT))),
	STD(ENTRY(PCT("a", HUGE_INT HUGE_INT "-1"))),
	"{'offer_key':'x\ty'}",
	"{'offer_key':'x\ny'}",
	"{'offer_key':'x\001'}",
	"{'offer_key':'x\037'}",
	"{'offer\tkey':'x'}",
	"{'offer_key':'x','label':'a\rb'}",
	HUGE_INT " x",
	"[" HUGE_INT "]]",
	("{'offer_key':'x','a':'\\" HUGE_INT),
};

/*
 * Number texts: whichever json-c parses the text (0.16 clamps integers
 * beyond 64 bits, 0.18 refuses them in strict mode), every document gives
 * the same answer; malformed ones are not JSON.
 */
static void
TestNumberTexts(void)
{
	IncOfferError err;
	size_t		i;

	for (i = 0; i < sizeof(NotJsonDocs) / sizeof(NotJsonDocs[0]); i++)
	{
		IncOffer   *o = ParseDoc(NotJsonDocs[i], &err);

		CHECK(o == NULL);
		if (o != NULL || strcmp(err.message, N("document is not valid JSON")) != 0)
			printf("  not JSON case %zu: %s\n", i, NotJsonDocs[i]);
		CHECK_STR(err.message, N("document is not valid JSON"));
	}

	/* a huge integer as the document, in an array, between blanks */
	CHECK(ParseDoc(HUGE_INT, &err) == NULL);
	CHECK_STR(err.message, N("document must be a JSON object"));
	CHECK(ParseDoc("-" HUGE_INT, &err) == NULL);
	CHECK_STR(err.message, N("document must be a JSON object"));
	CHECK(ParseDoc(" \n" HUGE_INT "\t ", &err) == NULL);
	CHECK_STR(err.message, N("document must be a JSON object"));
	CHECK(ParseDoc("[" HUGE_INT ",-" HUGE_INT "]", &err) == NULL);
	CHECK_STR(err.message, N("document must be a JSON object"));
	CHECK(ParseDoc("{'offer_key':'x','a':" HUGE_INT "}", &err) == NULL);
	CHECK_STR(err.message, E("strategy_key is required"));
	/* digits in strings and keys are not numbers */
	CHECK(ParseDoc("{'offer_key':'" HUGE_INT "','\\'" HUGE_INT "':" HUGE_INT ",'o':1}", &err) == NULL);
	CHECK_STR(err.message, "invalid offer \"" HUGE_INT "\": strategy_key is required");
	CHECK(ParseDoc("{'offer_key':'x','offer_key':" HUGE_INT "}", &err) == NULL);
	CHECK_STR(err.message, N("offer_key must be a string"));

	/* length-delimited text: a number ends at len, bytes after it unread */
	{
		const char *text = "{\"offer_key\":\"x\",\"a\":" HUGE_INT "}" HUGE_INT;
		size_t		doc = strlen(text) - strlen(HUGE_INT);

		CHECK(inc_offer_parse(text, doc, &err) == NULL);
		CHECK_STR(err.message, E("strategy_key is required"));
		CHECK(inc_offer_parse(text, doc - 1, &err) == NULL);
		CHECK_STR(err.message, N("document is not valid JSON"));
		CHECK(inc_offer_parse(text, doc - 2, &err) == NULL);
		CHECK_STR(err.message, N("document is not valid JSON"));
		CHECK(inc_offer_parse(text + doc, 25, &err) == NULL);
		CHECK_STR(err.message, N("document must be a JSON object"));
		CHECK(inc_offer_parse("1.5e", 3, &err) == NULL);
		CHECK_STR(err.message, N("document must be a JSON object"));
		CHECK(inc_offer_parse("-0123", 2, &err) == NULL);
		CHECK_STR(err.message, N("document must be a JSON object"));
		CHECK(inc_offer_parse("-0123", 1, &err) == NULL);
		CHECK_STR(err.message, N("document is not valid JSON"));
		CHECK(inc_offer_parse("{\"offer_key\":\"x\"}\"\t\"", 17, &err) == NULL);
		CHECK_STR(err.message, E("strategy_key is required"));
	}
}

/*
 * NestedOffer: a valid standard offer whose unknown field "x" holds arrays
 * nested so that the whole document is levels deep (malloc'd).
 */
static char *
NestedOffer(int levels)
{
	const char *head = "{\"offer_key\":\"x\",\"strategy_key\":\"standard\","
		"\"calculator_key\":\"percent_of_amount\","
		"\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}],"
		"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"t\","
		"\"rates\":[{\"sku_key\":\"a\",\"rate\":1,\"measure\":\"percent\"}]}],\"x\":";
	size_t		hlen = strlen(head);
	char	   *s = malloc(hlen + 2 * (size_t) levels + 2);
	size_t		n = hlen;
	int			i;

	memcpy(s, head, hlen);
	for (i = 1; i < levels; i++)
		s[n++] = '[';
	for (i = 1; i < levels; i++)
		s[n++] = ']';
	s[n++] = '}';
	s[n] = '\0';
	return s;
}

/*
 * Nesting: unknown fields may nest as deep as INC_OFFER_MAX_DEPTH levels
 * (the document counted as one), for every host alike; one more is an
 * invalid offer that says so.
 */
static void
TestNesting(void)
{
	IncOfferError err;
	char	   *ok = NestedOffer(INC_OFFER_MAX_DEPTH);
	char	   *deep = NestedOffer(INC_OFFER_MAX_DEPTH + 1);
	char	   *deeper = NestedOffer(5 * INC_OFFER_MAX_DEPTH);
	IncOfferParser parser;

	CHECK(INC_OFFER_MAX_DEPTH == 1000);
	CHECK(inc_offer_parse(ok, strlen(ok), &err) != NULL);
	CHECK_STR(err.message, "");
	CHECK(inc_offer_parse(deep, strlen(deep), &err) == NULL);
	CHECK_STR(err.message, N("document nests more than 1000 levels deep"));
	CHECK(inc_offer_parse(deeper, strlen(deeper), &err) == NULL);
	CHECK_STR(err.message, N("document nests more than 1000 levels deep"));

	/*
	 * The depth limit holds with integers beyond json-c's fed around it:
	 * arrays levels - 1 deep, the innermost number the levels-th level.
	 */
	{
		char	   *huge = malloc(2 * (size_t) INC_OFFER_MAX_DEPTH + 3 * sizeof(HUGE_INT) + 8);
		size_t		n = 0;
		int			levels;
		int			i;

		for (levels = INC_OFFER_MAX_DEPTH; levels <= INC_OFFER_MAX_DEPTH + 1; levels++)
		{
			n = 0;
			huge[n++] = '[';
			memcpy(huge + n, HUGE_INT ",", sizeof(HUGE_INT));
			n += sizeof(HUGE_INT);
			for (i = 2; i < levels; i++)
				huge[n++] = '[';
			memcpy(huge + n, "-" HUGE_INT, sizeof(HUGE_INT));
			n += sizeof(HUGE_INT);
			for (i = 1; i < levels; i++)
				huge[n++] = ']';
			CHECK(inc_offer_parse(huge, n, &err) == NULL);
			CHECK_STR(err.message, levels > INC_OFFER_MAX_DEPTH ?
					  N("document nests more than 1000 levels deep") :
					  N("document must be a JSON object"));
		}
		free(huge);
	}

	/* the parser object: released after a run, releasing again is harmless */
	inc_offer_parser_init(&parser);
	CHECK(inc_offer_parser_run(&parser, ok, strlen(ok), &err) != NULL);
	CHECK(parser.root == NULL && parser.tokener == NULL);
	inc_offer_parser_release(&parser);
	inc_offer_parser_release(&parser);
	free(ok);
	free(deep);
	free(deeper);
}

/* ---- the host's check for a request to stop ---- */

static int	interrupt_calls;
static int	interrupt_stop_at;	/* fail at this call; 0: never */

static void
CountInterrupts(void)
{
	if (++interrupt_calls == interrupt_stop_at)
		inc_fail(INC_ERR_INTERNAL, "canceled");
}

/* A standard offer of n rates, as JSON text (malloc'd). */
static char *
ManyRates(int n)
{
	size_t		cap = 256 + (size_t) n * 64;
	char	   *doc = malloc(cap);
	size_t		len;
	int			i;

	len = (size_t) snprintf(doc, cap, "{\"offer_key\":\"x\",\"strategy_key\":\"standard\","
							"\"calculator_key\":\"percent_of_amount\",\"periods\":[{\"key\":\"p\","
							"\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}],"
							"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"t\",\"rates\":[");
	for (i = 0; i < n; i++)
		len += (size_t) snprintf(doc + len, cap - len, "%s{\"sku_key\":\"s%d\",\"rate\":2,\"measure\":\"percent\"}",
								 i ? "," : "", i);
	snprintf(doc + len, cap - len, "]}]}");
	return doc;
}

typedef struct ParseArg
{
	IncOfferParser parser;
	const char *doc;
} ParseArg;

static void
ParseWithParser(void *arg)
{
	ParseArg   *a = arg;
	IncOfferError err;

	(void) inc_offer_parser_run(&a->parser, a->doc, strlen(a->doc), &err);
}

/*
 * TestInterrupts: the parser asks the host whether to stop while the
 * tokener reads a long text (in chunks) and while the structure walk goes
 * through the document's arrays and objects; a stop unwinds, and the
 * parser's release frees what it held.
 */
static void
TestInterrupts(void)
{
	char	   *doc = ManyRates(100000);
	size_t		len = strlen(doc);
	char	   *blank = malloc(3 * 1024 * 1024 + 2);
	IncOfferError err;
	ParseArg	arg;

	inc_set_interrupt_hook(CountInterrupts);

	interrupt_calls = 0;
	interrupt_stop_at = 0;
	CHECK(inc_offer_parse(doc, len, &err) != NULL);
	CHECK(interrupt_calls >= 100000);	/* the walk: once per rate at least */

	/* 3 MiB of blanks before the garbage: no walk, only the tokener's chunks */
	memset(blank, ' ', 3 * 1024 * 1024);
	blank[3 * 1024 * 1024] = 'x';
	blank[3 * 1024 * 1024 + 1] = '\0';
	interrupt_calls = 0;
	CHECK(inc_offer_parse(blank, strlen(blank), &err) == NULL);
	CHECK(interrupt_calls >= 12);

	/* a stop in the middle of the walk unwinds; release frees the rest */
	inc_offer_parser_init(&arg.parser);
	arg.doc = doc;
	interrupt_calls = 0;
	interrupt_stop_at = 50000;
	CHECK(unit_expect_failure(ParseWithParser, &arg, NULL, NULL, 0));
	CHECK(arg.parser.tokener != NULL || arg.parser.root != NULL);
	inc_offer_parser_release(&arg.parser);
	CHECK(arg.parser.tokener == NULL && arg.parser.root == NULL);

	inc_set_interrupt_hook(NULL);
	interrupt_stop_at = 0;
	free(blank);
	free(doc);
}

/* test_offer_parse: the offer parser's tests (see the file header). */
void
test_offer_parse(void)
{
	TestDates();
	TestDateProblems();
	TestNames();
	TestStandardFixtures();
	TestSteppedFixtures();
	TestStackedFixtures();
	TestValid();
	TestInvalid();
	TestNumberTexts();
	TestNesting();
	TestInterrupts();
}
