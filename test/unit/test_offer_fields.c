/*
 * test_offer_fields.c
 *    Unit tests of the contract's fields (src/core/offer/offer_fields.c)
 *    and of the parser's checks of a document being written: the advice
 *    for a field no object defines, unknown fields refused, reported or
 *    ignored, a field the stored document has let through, a percent above
 *    100 refused when writing, the implausible rates reported, and the
 *    settlement's holdback_percent checked when writing (docs/reference.md,
 *    Strict offers, Offer warnings and Offer documents).
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../src/core/offer/offer_fields.h"
#include "../../src/core/offer/offer.h"

#define STD_DOC(extra, rate) \
	"{\"offer_key\":\"x\",\"strategy_key\":\"standard\",\"calculator_key\":\"percent_of_amount\"," \
	"\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}]," \
	"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"t\"," \
	"\"rates\":[{\"sku_key\":\"a\",\"rate\":" rate ",\"measure\":\"percent\"}]}]" extra "}"

/* Findings collected: "code path|" each. */
typedef struct Collected
{
	char		text[1024];
	const char *stored_path;	/* the one field the stored document has */
	const char *stored_value;
} Collected;

static void
Collect(void *ctx, const char *path, const char *code, const char *message,
		const char *value)
{
	Collected  *c = ctx;
	size_t		len = strlen(c->text);

	(void) message;
	(void) value;
	snprintf(c->text + len, sizeof(c->text) - len, "%s %s|", code, path);
}

static bool
Stored(void *ctx, const char *path, const char *value)
{
	Collected  *c = ctx;

	return c->stored_path != NULL && strcmp(path, c->stored_path) == 0 &&
		strcmp(value, c->stored_value) == 0;
}

/* Parse json under mode; returns the error message ("" when valid). */
static const char *
Parse(const char *json, IncUnknownFields mode, bool writing, Collected *c)
{
	static IncOfferError err;
	IncOfferParser parser;
	IncOfferChecks checks = {mode, writing, Stored, Collect, c};

	c->text[0] = '\0';
	inc_offer_parser_init(&parser);
	if (inc_offer_parser_check(&parser, json, strlen(json), &checks, &err) != NULL)
		return "";
	return err.message;
}

static void
Advice(IncObjectKind kind, IncObjectFamily family, const char *name, const char *want)
{
	char		buf[256];

	inc_object_field_advice(kind, family, name, buf, sizeof(buf));
	CHECK_STR(buf, want);
}

static void
TestAdvice(void)
{
	Advice(INC_OBJ_OFFER, INC_FAMILY_STANDARD, "enrolment", "did you mean \"enrollment\"?");
	Advice(INC_OBJ_OFFER, INC_FAMILY_STANDARD, "ENROLLMENT", "did you mean \"enrollment\"?");
	Advice(INC_OBJ_OFFER, INC_FAMILY_STANDARD, "requirement", "did you mean \"requirements\"?");
	Advice(INC_OBJ_OFFER, INC_FAMILY_STANDARD, "offer-key", "did you mean \"offer_key\"?");
	Advice(INC_OBJ_LIMITS, INC_FAMILY_OFFER, "max", "did you mean \"maximum\"?");
	Advice(INC_OBJ_LIMITS, INC_FAMILY_OFFER, "min", "did you mean \"minimum\"?");
	Advice(INC_OBJ_OFFER, INC_FAMILY_STEPPED, "tier_mode", "tier_mode belongs in incentive");
	Advice(INC_OBJ_OFFER, INC_FAMILY_STACKED, "sku_sets", "sku_sets belongs in incentive");
	/* a standard offer has no sku_sets: no place of another strategy is named */
	Advice(INC_OBJ_OFFER, INC_FAMILY_STANDARD, "sku_sets", "");
	Advice(INC_OBJ_PERIOD, INC_FAMILY_OFFER, "metadata", "metadata belongs in the offer");
	Advice(INC_OBJ_REQUEST, INC_FAMILY_REQUEST, "include_store", "did you mean \"include_stored\"?");
	/* the request's fields are not an offer's */
	Advice(INC_OBJ_OFFER, INC_FAMILY_STANDARD, "participant_key", "");
	Advice(INC_OBJ_TIER, INC_FAMILY_STEPPED, "colour", "");
	Advice(INC_OBJ_TIER, INC_FAMILY_STEPPED, "treshold", "did you mean \"threshold\"?");
	/* growers: match of a stacked incentive, product_keys of a requirement */
	Advice(INC_OBJ_STACKED_INCENTIVE, INC_FAMILY_STACKED, "matches", "did you mean \"match\"?");
	Advice(INC_OBJ_OFFER, INC_FAMILY_STACKED, "match", "match belongs in incentive");
	Advice(INC_OBJ_REQUIREMENT, INC_FAMILY_STANDARD, "product_key", "did you mean \"product_keys\"?");
	/* settlement: its one field, and where it belongs */
	Advice(INC_OBJ_SETTLEMENT, INC_FAMILY_OFFER, "holdback", "did you mean \"holdback_percent\"?");
	Advice(INC_OBJ_SETTLEMENT, INC_FAMILY_OFFER, "Holdback-Percent", "did you mean \"holdback_percent\"?");
	Advice(INC_OBJ_SETTLEMENT, INC_FAMILY_OFFER, "holdback_percnt", "did you mean \"holdback_percent\"?");
	/* pct abbreviates percent, but not by the rule: no start of it, 4 edits away */
	Advice(INC_OBJ_SETTLEMENT, INC_FAMILY_OFFER, "holdback_pct", "");
	Advice(INC_OBJ_OFFER, INC_FAMILY_STANDARD, "holdback_percent", "holdback_percent belongs in settlement");
	Advice(INC_OBJ_OFFER, INC_FAMILY_STEPPED, "settlements", "did you mean \"settlement\"?");
	CHECK(inc_object_field_known(INC_OBJ_OFFER, "settlement"));
	CHECK(inc_object_field_known(INC_OBJ_SETTLEMENT, "label"));
	CHECK(inc_object_field_known(INC_OBJ_STACKED_INCENTIVE, "match"));
	CHECK(inc_object_field_known(INC_OBJ_REQUIREMENT, "product_keys"));
	CHECK(inc_object_field_known(INC_OBJ_TIER, "label"));
	CHECK(inc_object_field_known(INC_OBJ_OFFER, "metadata"));
	CHECK(!inc_object_field_known(INC_OBJ_PERIOD, "metadata"));
	CHECK(!inc_object_field_known(INC_OBJ_REQUEST, "label"));
}

static void
TestModes(void)
{
	Collected	c = {0};
	const char *extra = STD_DOC(",\"colour\":\"red\"", "3");

	CHECK_STR(Parse(extra, INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": colour is not a field of the offer");
	CHECK_STR(Parse(extra, INC_UNKNOWN_REPORT, true, &c), "");
	CHECK_STR(c.text, "unknown_field colour|");
	CHECK_STR(Parse(extra, INC_UNKNOWN_IGNORE, true, &c), "");
	CHECK_STR(c.text, "");
	/* the stored document's field, with its value, passes; another value does not */
	c.stored_path = "colour";
	c.stored_value = "\"red\"";
	CHECK_STR(Parse(extra, INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(c.text, "unknown_field colour|");
	c.stored_value = "\"blue\"";
	CHECK_STR(Parse(extra, INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": colour is not a field of the offer");
	c.stored_path = NULL;
	/* nested, with the path */
	CHECK_STR(Parse(STD_DOC(",\"limits\":{\"max\":4000}", "3"), INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": limits.max is not a field of limits; did you mean \"maximum\"?");
	/* annotations anywhere, strings when writing */
	CHECK_STR(Parse(STD_DOC(",\"name\":\"n\",\"description\":\"d\",\"metadata\":[1,{\"a\":null}]", "3"),
					INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(Parse(STD_DOC(",\"name\":5", "3"), INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": name must be a string");
	CHECK_STR(Parse(STD_DOC(",\"name\":5", "3"), INC_UNKNOWN_REPORT, false, &c), "");
	/* a grower requirement's fields are known to a strict document */
	CHECK_STR(Parse(STD_DOC(",\"requirements\":[{\"key\":\"q\",\"type\":\"distinct_products\","
							"\"scope\":\"grower\",\"product_keys\":[\"s\",\"t\"],\"minimum\":2,"
							"\"filters\":[{\"period_key\":\"p\",\"product_keys\":[\"s\",\"t\"],"
							"\"transaction_type\":\"t\"}]}]", "3"),
					INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(c.text, "");
}

static void
TestRates(void)
{
	Collected	c = {0};

	CHECK_STR(Parse(STD_DOC("", "100"), INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(c.text, "implausible_rate incentives[0].rates[0].rate|");
	CHECK_STR(Parse(STD_DOC("", "100.01"), INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": incentives[0].rates[0].rate is 100.01 percent: a percent of the amount may not be above 100");
	/* a stored document is read as it is */
	CHECK_STR(Parse(STD_DOC("", "100.01"), INC_UNKNOWN_REPORT, false, &c), "");
	CHECK_STR(c.text, "implausible_rate incentives[0].rates[0].rate|");
	CHECK_STR(Parse(STD_DOC("", "25"), INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(c.text, "");
	CHECK_STR(Parse(STD_DOC("", "0.1"), INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(c.text, "");
	CHECK_STR(Parse(STD_DOC("", "0"), INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(c.text, "");
	CHECK_STR(Parse(STD_DOC("", "0.09"), INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(c.text, "implausible_rate incentives[0].rates[0].rate|");
}

static void
TestTierSteps(void)
{
	Collected	c = {0};
	const char *doc =
		"{\"offer_key\":\"x\",\"strategy_key\":\"stepped\",\"calculator_key\":\"percent_of_amount\","
		"\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}],"
		"\"incentive\":{\"filters\":[{\"period_key\":\"p\",\"sku_keys\":[\"a\"],\"transaction_type\":\"t\"}],"
		"\"threshold_definition\":{\"type\":\"aggregated_amount\",\"filters\":[{\"period_key\":\"p\",\"sku_keys\":[\"a\"],\"transaction_type\":\"t\"}]},"
		"\"rates\":[{\"threshold\":500,\"value\":9,\"measure\":\"percent\"},"
		"{\"threshold\":0,\"value\":0,\"measure\":\"percent\"},"
		"{\"threshold\":100,\"value\":2,\"measure\":\"percent\"},"
		"{\"threshold\":1000,\"value\":10,\"measure\":\"percent\"}]}}";

	/* 9 over 2 (the zero tier skipped) is more than 4 times; 10 over 9 is not */
	CHECK_STR(Parse(doc, INC_UNKNOWN_REFUSE, true, &c), "");
	CHECK_STR(c.text, "implausible_rate incentive.rates[0].value|");
}

/*
 * Characters beyond ASCII (well-formed UTF-8, two to four bytes) come out
 * as the same bytes, whichever json-c reads them (0.17 and later refuse
 * them raw in strict mode: the text scan feeds them as escapes).
 */
static void
TestUtf8(void)
{
	const char *doc =
		"{\"offer_key\":\"ma\xc3\xafs.2026\",\"label\":\"Saison d'\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8c\xbd\","
		"\"strategy_key\":\"standard\",\"calculator_key\":\"percent_of_amount\","
		"\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}],"
		"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"t\","
		"\"rates\":[{\"sku_key\":\"ma\xc3\xafs_\\u00e9\",\"rate\":3,\"measure\":\"percent\"}]}]}";
	IncOfferError err;
	IncOffer   *offer = inc_offer_parse(doc, strlen(doc), &err);

	CHECK(offer != NULL);
	if (offer == NULL)
		return;
	CHECK_STR(offer->offer_key, "ma\xc3\xafs.2026");
	CHECK_STR(offer->label, "Saison d'\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8c\xbd");
	CHECK_STR(offer->entries[0].rates[0].sku_key, "ma\xc3\xafs_\xc3\xa9");
}

/*
 * settlement.holdback_percent: required in a settlement, a number, 0 <= h <
 * 100, checked when a document is written; a stored document is read as it
 * is (the calculation does not use it).
 */
static void
TestSettlement(void)
{
	Collected	c = {0};
	static const char *const valid[] = {"0", "10", "12.5", "99.99", "0.0", "99.999999"};
	size_t		i;

	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
	{
		char		doc[1024];

		snprintf(doc, sizeof(doc), STD_DOC(",\"settlement\":{\"holdback_percent\":%s}", "3"), valid[i]);
		CHECK_STR(Parse(doc, INC_UNKNOWN_REFUSE, true, &c), "");
		CHECK_STR(c.text, "");
	}
	/* null: absent, as every optional field */
	CHECK_STR(Parse(STD_DOC(",\"settlement\":null", "3"), INC_UNKNOWN_REFUSE, true, &c), "");
	/* annotations, as in every object */
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":5,\"description\":\"d\"}", "3"),
					INC_UNKNOWN_REFUSE, true, &c), "");

	CHECK_STR(Parse(STD_DOC(",\"settlement\":{}", "3"), INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent is required");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":null}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent must be a number");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":-1}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent must be >= 0");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":-0.01}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent must be >= 0");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":100}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent must be < 100");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":100.000}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent must be < 100");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":150}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent must be < 100");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":\"10\"}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent must be a number");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":10", "3"), INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement must be an object");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":[{\"holdback_percent\":10}]", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement must be an object");
	/* an unknown field, before the missing one it was meant to be */
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback\":10}", "3"), INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback is not a field of settlement; did you mean \"holdback_percent\"?");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percnt\":10}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_percnt is not a field of settlement; did you mean \"holdback_percent\"?");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_pct\":10}", "3"), INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.holdback_pct is not a field of settlement");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":10,\"maximum\":5}", "3"),
					INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": settlement.maximum is not a field of settlement; maximum belongs in limits");
	CHECK_STR(Parse(STD_DOC(",\"holdback_percent\":10", "3"), INC_UNKNOWN_REFUSE, true, &c),
			  "invalid offer \"x\": holdback_percent is not a field of the offer; holdback_percent belongs in settlement");
	/* under unknown_offer_fields = warning an unknown field is a finding; the required one still is required */
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":10,\"pct\":10}", "3"),
					INC_UNKNOWN_REPORT, true, &c), "");
	CHECK_STR(c.text, "unknown_field settlement.pct|");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_pct\":10}", "3"), INC_UNKNOWN_REPORT, true, &c),
			  "invalid offer \"x\": settlement.holdback_percent is required");
	/* a stored document is read as it is: its settlement is not the calculation's */
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"holdback_percent\":100}", "3"),
					INC_UNKNOWN_REPORT, false, &c), "");
	CHECK_STR(c.text, "");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":\"net 30\"", "3"), INC_UNKNOWN_IGNORE, false, &c), "");
	CHECK_STR(Parse(STD_DOC(",\"settlement\":{\"pct\":1}", "3"), INC_UNKNOWN_REPORT, false, &c), "");
	CHECK_STR(c.text, "unknown_field settlement.pct|");
	{
		const char *doc = STD_DOC(",\"settlement\":{\"holdback_percent\":\"10\"}", "3");
		IncOfferError err;

		CHECK(inc_offer_parse(doc, strlen(doc), &err) != NULL);
	}
}

/* test_offer_fields: the tests of the file header. */
void
test_offer_fields(void)
{
	TestAdvice();
	TestModes();
	TestRates();
	TestTierSteps();
	TestSettlement();
	TestUtf8();
}
