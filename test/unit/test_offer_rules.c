/*
 * test_offer_rules.c
 *    Unit tests of the offer parser's program rules (src/core/offer/offer_rules.c;
 *    docs/reference.md, Program rules): the rules fixtures compile to the
 *    expected model, documents at the edges of the rules compile, and
 *    every invalid rule is rejected with its exact message.
 *
 * The invalid documents are written with single quotes for readability
 * and turned into JSON by swapping ' for ".  The same table is the source
 * of the program-rule offers in sql/offers_invalid.sql; keep the two in step.
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../src/core/offer/offer.h"

#define PERIODS "'periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-12-31'}]"
#define HEAD(strategy, calc) \
	"{'offer_key':'x','strategy_key':'" strategy "','calculator_key':'" calc "'," PERIODS ","
#define STD(rules) HEAD("standard", "percent_of_amount") \
	"'incentives':[{'period_key':'p','transaction_type':'t','rates':[{'sku_key':'a','rate':1,'measure':'percent'}]}]" rules "}"
#define FILTER "{'period_key':'p','sku_keys':['a'],'transaction_type':'t'}"
#define TD_AMOUNT "'threshold_definition':{'type':'aggregated_amount','filters':[" FILTER "]}"
#define TD_PROPERTY "'threshold_definition':{'type':'property','property':{'key':'bp'}}"
#define TIER(th, val, measure) "{'threshold':" th ",'value':" val ",'measure':'" measure "'}"
#define STEP(calc, mode, td, tiers) HEAD("stepped", calc) \
	"'incentive':{'tier_mode':" mode ",'filters':[" FILTER "]," td ",'rates':[" tiers "]}}"
#define STK(mode) HEAD("stacked", "dollars_per_coverage_unit") \
	"'incentive':{'tier_mode':" mode ",'sku_sets':[{'key':'s','period_key':'p','transaction_type':'t'," \
	"'conversion':{'coverage_unit':'acre','rates':[{'sku_key':'a','rate':1,'from':'gal'}]},'rates':[]}]," \
	"'stacks':[{'sku_set_keys':['s']}]}}"
#define STKM(match) HEAD("stacked", "dollars_per_coverage_unit") \
	"'incentive':{'match':" match ",'sku_sets':[{'key':'s','period_key':'p','transaction_type':'t'," \
	"'conversion':{'coverage_unit':'acre','rates':[{'sku_key':'a','rate':1,'from':'gal'}]},'rates':[]}]," \
	"'stacks':[{'sku_set_keys':['s']}]}}"
#define REQ_DISTINCT(products, min) "{'key':'d','type':'distinct_products','product_keys':" products \
	",'minimum':" min ",'filters':[{'period_key':'p','product_keys':['s','t'],'transaction_type':'t'}]}"
#define REQ_PROP(key, min) "{'key':'" key "','type':'property','property':{'key':'bp'},'minimum':" min "}"
#define REQ_AMOUNT(key, min) "{'key':'" key "','type':'aggregated_amount','minimum':" min ",'filters':[" FILTER "]}"

#define E(msg) "invalid offer \"x\": " msg

typedef struct RuleCase
{
	const char *doc;			/* ' stands for " */
	const char *message;
} RuleCase;

static const RuleCase InvalidRules[] = {
	/* enrollment */
	{STD(",'enrollment':'sometimes'"), E("enrollment must be one of open, required")},
	{STD(",'enrollment':true"), E("enrollment must be a string")},

	/* incremental tiers */
	{STEP("percent_of_amount", "'marginal'", TD_AMOUNT, TIER("0", "1", "percent")),
	E("incentive.tier_mode must be one of all_volume, incremental")},
	{STEP("percent_of_amount", "1", TD_AMOUNT, TIER("0", "1", "percent")),
	E("incentive.tier_mode must be a string")},
	{STEP("fixed_amount", "'incremental'", TD_AMOUNT, TIER("0", "100", "dollars")),
	E("incentive.tier_mode \"incremental\" is not allowed for calculator \"fixed_amount\"")},
	{STEP("percent_of_amount", "'incremental'", TD_PROPERTY, TIER("80", "1", "percent")),
	E("incentive.tier_mode \"incremental\" is not allowed for threshold type \"property\"")},
	{STEP("dollars_per_unit", "'incremental'", TD_AMOUNT, TIER("10", "1", "dollars") "," TIER("-5", "0.5", "dollars")),
	E("incentive.tier_mode \"incremental\" requires every threshold to be >= 0 (-5 is not)")},
	{STK("'incremental'"), E("incentive.tier_mode is only for strategy \"stepped\"")},
	{STK("'all_volume'"), E("incentive.tier_mode is only for strategy \"stepped\"")},

	/* requirements */
	{STD(",'requirements':{}"), E("requirements must be an array")},
	{STD(",'requirements':[5]"), E("requirements[0] must be an object")},
	{STD(",'requirements':[{'type':'property','property':{'key':'bp'},'minimum':1}]"),
	E("requirements[0].key is required")},
	{STD(",'requirements':[{'key':'','type':'property','property':{'key':'bp'},'minimum':1}]"),
	E("requirements[0].key must not be empty")},
	{STD(",'requirements':[{'key':'q','property':{'key':'bp'},'minimum':1}]"),
	E("requirements[0].type is required")},
	{STD(",'requirements':[{'key':'q','type':'count','minimum':1}]"),
	E("requirements[0].type must be one of aggregated_amount, aggregated_quantity, property, growth_amount, growth_quantity, distinct_products")},
	{STD(",'requirements':[{'key':'q','type':'property','property':{'key':'bp'}}]"),
	E("requirements[0].minimum is required")},
	{STD(",'requirements':[{'key':'q','type':'property','property':{'key':'bp'},'minimum':'90'}]"),
	E("requirements[0].minimum must be a number")},
	{STD(",'requirements':[{'key':'q','type':'aggregated_amount','minimum':1}]"),
	E("requirements[0].filters is required")},
	{STD(",'requirements':[{'key':'q','type':'aggregated_quantity','minimum':1,'filters':[]}]"),
	E("requirements[0].filters must not be empty")},
	{STD(",'requirements':[" REQ_PROP("q", "1") ",{'key':'r','type':'aggregated_amount','minimum':1,"
		 "'filters':[{'period_key':'z','sku_keys':['a'],'transaction_type':'t'}]}]"),
	E("requirements[1].filters[0].period_key names an undefined period \"z\"")},
	{STD(",'requirements':[{'key':'q','type':'property','minimum':1}]"),
	E("requirements[0].property is required")},
	{STD(",'requirements':[{'key':'q','type':'property','property':{'key':''},'minimum':1}]"),
	E("requirements[0].property.key must not be empty")},
	{STD(",'requirements':[" REQ_AMOUNT("q", "1") "," REQ_PROP("q", "2") "]"),
	E("requirements[1].key duplicates requirement key \"q\"")},

	/* participant groups: aggregation, a requirement's scope */
	{STD(",'aggregation':'chain'"), E("aggregation must be one of participant, group")},
	{STD(",'aggregation':1"), E("aggregation must be a string")},
	{STD(",'requirements':[{'key':'q','type':'property','property':{'key':'bp'},'minimum':1,'scope':'member'}]"),
	E("requirements[0].scope \"member\" is only for an offer with \"aggregation\": \"group\"")},
	{STD(",'aggregation':'participant','requirements':[" REQ_PROP("q", "1") ",{'key':'r','type':'property','property':{'key':'bp'},'minimum':1,'scope':'member'}]"),
	E("requirements[1].scope \"member\" is only for an offer with \"aggregation\": \"group\"")},
	/* participant hierarchies: group_type, only with aggregation group */
	{STD(",'group_type':'region'"), E("group_type is only for an offer with \"aggregation\": \"group\"")},
	{STD(",'aggregation':'participant','group_type':'region'"),
	E("group_type is only for an offer with \"aggregation\": \"group\"")},
	{STD(",'aggregation':'group','group_type':''"), E("group_type must not be empty")},
	{STD(",'aggregation':'group','group_type':3"), E("group_type must be a string")},
	{STD(",'aggregation':'group','requirements':[{'key':'q','type':'property','property':{'key':'bp'},'minimum':1,'scope':'location'}]"),
	E("requirements[0].scope must be one of group, member, grower")},
	{STD(",'aggregation':'group','requirements':[{'key':'q','type':'property','property':{'key':'bp'},'minimum':1,'scope':true}]"),
	E("requirements[0].scope must be a string")},

	/* growers: match, scope grower, distinct_products */
	{STKM("'farm'"), E("incentive.match must be one of participant, grower")},
	{STKM("true"), E("incentive.match must be a string")},
	{STEP("percent_of_amount", "null,'match':'grower'", TD_AMOUNT, TIER("0", "1", "percent")),
	E("incentive.match is only for strategy \"stacked\"")},
	{STD(",'requirements':[{'key':'q','type':'property','property':{'key':'bp'},'minimum':1,'scope':'grower'}]"),
	E("requirements[0].scope \"grower\" is only for types aggregated_amount, aggregated_quantity and distinct_products")},
	{STD(",'requirements':[{'key':'q','type':'growth_amount','minimum':1,'scope':'grower','filters':[" FILTER "],"
		 "'baseline':{'start_date':'2025-01-01','end_date':'2025-12-31'}}]"),
	E("requirements[0].scope \"grower\" is only for types aggregated_amount, aggregated_quantity and distinct_products")},
	{STD(",'requirements':[{'key':'d','type':'distinct_products','minimum':1,'filters':[" FILTER "]}]"),
	E("requirements[0].product_keys is required for type \"distinct_products\"")},
	{STD(",'requirements':[" REQ_DISTINCT("[]", "1") "]"), E("requirements[0].product_keys must not be empty")},
	{STD(",'requirements':[" REQ_DISTINCT("'s'", "1") "]"), E("requirements[0].product_keys must be an array")},
	{STD(",'requirements':[" REQ_DISTINCT("['s','']", "1") "]"), E("requirements[0].product_keys[1] must not be empty")},
	{STD(",'requirements':[" REQ_DISTINCT("['s','t','s']", "1") "]"),
	E("requirements[0].product_keys[2] duplicates product \"s\"")},
	{STD(",'requirements':[" REQ_DISTINCT("['s','t']", "0") "]"),
	E("requirements[0].minimum must be a whole number from 1 to 2 (the number of product_keys) for type \"distinct_products\"")},
	{STD(",'requirements':[" REQ_DISTINCT("['s','t']", "3") "]"),
	E("requirements[0].minimum must be a whole number from 1 to 2 (the number of product_keys) for type \"distinct_products\"")},
	{STD(",'requirements':[" REQ_DISTINCT("['s','t']", "1.5") "]"),
	E("requirements[0].minimum must be a whole number from 1 to 2 (the number of product_keys) for type \"distinct_products\"")},
	{STD(",'requirements':[" REQ_DISTINCT("['s','t']", "-1") "]"),
	E("requirements[0].minimum must be a whole number from 1 to 2 (the number of product_keys) for type \"distinct_products\"")},
	{STD(",'requirements':[{'key':'d','type':'distinct_products','product_keys':['s'],'minimum':1}]"),
	E("requirements[0].filters is required")},
	{STD(",'requirements':[{'key':'q','type':'aggregated_amount','minimum':1,'product_keys':['s'],'filters':[" FILTER "]}]"),
	E("requirements[0].product_keys is only for type \"distinct_products\"")},

	/* limits */
	{STD(",'limits':[]"), E("limits must be an object")},
	{STD(",'limits':{'minimum':-1}"), E("limits.minimum must be >= 0")},
	{STD(",'limits':{'maximum':0}"), E("limits.maximum must be > 0")},
	{STD(",'limits':{'maximum':'100'}"), E("limits.maximum must be a number")},
	{STD(",'limits':{'minimum':100,'maximum':50}"), E("limits.maximum must be >= limits.minimum")},
};

/* Documents that must compile, and whether their rules are "any". */
typedef struct ValidRules
{
	const char *doc;
	bool		any;
} ValidRules;

static const ValidRules ValidDocs[] = {
	{STD(""), false},
	{STD(",'enrollment':null,'requirements':null,'limits':null"), false},
	{STD(",'enrollment':'open','requirements':[],'limits':{}"), false},
	{STD(",'enrollment':'required'"), true},
	{STD(",'limits':{'minimum':0}"), true},
	{STD(",'limits':{'minimum':50,'maximum':50}"), true},
	{STD(",'requirements':[" REQ_PROP("q", "-1.5") "]"), true},
	{STEP("percent_of_amount", "'all_volume'", TD_PROPERTY, TIER("80", "1", "percent")), false},
	{STEP("percent_of_amount", "null", TD_AMOUNT, TIER("-80", "1", "percent")), false},
	{STEP("dollars_per_unit", "'incremental'", TD_AMOUNT, TIER("0", "1", "dollars")), false},
	{STK("null"), false},
	{STD(",'aggregation':'group'"), false},
	{STD(",'aggregation':null"), false},
	{STD(",'aggregation':'participant','requirements':[{'key':'q','type':'property','property':{'key':'bp'},'minimum':1,'scope':'group'}]"), true},
	{STD(",'aggregation':'group','requirements':[{'key':'q','type':'property','property':{'key':'bp'},'minimum':1,'scope':'member'}]"), true},
	{STKM("'grower'"), false},
	{STKM("'participant'"), false},
	{STKM("null"), false},
	{STD(",'requirements':[" REQ_DISTINCT("['s','t']", "2.0") "]"), true},
	{STD(",'requirements':[" REQ_DISTINCT("['s','t']", "1") "]"), true},
	{STD(",'requirements':[{'key':'q','type':'aggregated_amount','minimum':1,'scope':'grower','filters':[" FILTER "]}]"), true},
	{STD(",'aggregation':'group','requirements':[{'key':'q','type':'aggregated_quantity','minimum':1,'scope':'grower','filters':[" FILTER "]}]"), true},
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

/* The rules fixtures compile to the model they describe. */
static void
TestFixtures(void)
{
	IncOffer   *o[2];
	char		buf[INC_NUM_BUF];

	if (unit_load_offers("test/fixtures/rules_enrollment/offers.json", o, 2) == 2)
	{
		CHECK(o[0]->rules.any && o[0]->rules.enrollment == INC_ENROLLMENT_REQUIRED);
		CHECK(o[1]->rules.enrollment == INC_ENROLLMENT_REQUIRED);
		CHECK(o[0]->rules.nrequirements == 0 && !o[0]->rules.limits.has_maximum);
	}
	if (unit_load_offers("test/fixtures/rules_incremental_tiers/offers.json", o, 2) == 2)
	{
		CHECK(o[0]->stepped.tier_mode == INC_TIERS_INCREMENTAL);
		CHECK(!o[0]->rules.any);
		CHECK_STR(inc_tier_mode_name(o[1]->stepped.tier_mode), "incremental");
		inc_dec_format(&o[0]->stepped.tiers[0].threshold, buf, sizeof(buf));
		CHECK_STR(buf, "0");
	}
	if (unit_load_offers("test/fixtures/rules_limits/offers.json", o, 2) == 2)
	{
		CHECK(o[0]->rules.any && !o[0]->rules.limits.has_minimum && o[0]->rules.limits.has_maximum);
		inc_dec_format(&o[0]->rules.limits.maximum, buf, sizeof(buf));
		CHECK_STR(buf, "1000");
		CHECK(o[1]->rules.limits.has_minimum && o[1]->rules.limits.has_maximum);
		inc_dec_format(&o[1]->rules.limits.minimum, buf, sizeof(buf));
		CHECK_STR(buf, "50");
		CHECK(o[1]->rules.enrollment == INC_ENROLLMENT_OPEN);
	}
	if (unit_load_offers("test/fixtures/rules_requirements/offers.json", o, 1) == 1)
	{
		const IncRules *r = &o[0]->rules;

		CHECK(r->any && r->nrequirements == 2);
		CHECK_STR(r->requirements[0].key, "minimum_seed_spend");
		CHECK(r->requirements[0].type == INC_THRESHOLD_AMOUNT);
		CHECK(r->requirements[0].nfilters == 1 && r->requirements[0].property_key == NULL);
		CHECK_STR(r->requirements[0].filters[0].sku_keys[0], "agri_shield_insecticide_bulk_63374");
		CHECK(r->requirements[1].type == INC_THRESHOLD_PROPERTY);
		CHECK_STR(r->requirements[1].property_key, "business_plan_achieved");
		inc_dec_format(&r->requirements[1].minimum, buf, sizeof(buf));
		CHECK_STR(buf, "90");
	}
}

/* The groups fixtures: aggregation and scope compile as written. */
static void
TestGroupFixtures(void)
{
	IncOffer   *o[4];

	if (unit_load_offers("test/fixtures/groups_accumulate/offers.json", o, 4) == 4)
	{
		CHECK(o[0]->aggregation == INC_AGGREGATE_GROUP && !o[0]->rules.any);
		CHECK(o[1]->aggregation == INC_AGGREGATE_PARTICIPANT);
		CHECK(o[2]->aggregation == INC_AGGREGATE_GROUP);
		CHECK_STR(inc_aggregation_name(o[3]->aggregation), "group");
	}
	if (unit_load_offers("test/fixtures/hierarchy_region_chain/offers.json", o, 3) == 3)
	{
		CHECK(o[0]->aggregation == INC_AGGREGATE_GROUP && o[0]->group_type == NULL);
		CHECK_STR(o[1]->group_type, "region");
		CHECK_STR(o[2]->group_type, "region");
	}
	if (unit_load_offers("test/fixtures/groups_pool_limits/offers.json", o, 3) == 3)
	{
		const IncRules *r = &o[2]->rules;

		CHECK(o[1]->rules.any && o[1]->rules.limits.has_maximum);
		CHECK(r->any && r->nrequirements == 1 && r->nmember_requirements == 1);
		CHECK(r->requirements[0].scope == INC_SCOPE_MEMBER);
		CHECK_STR(inc_scope_name(r->requirements[0].scope), "member");
	}
}

/* CollectProducts: the paths of an offer's product references, "|" after each. */
static void
CollectProducts(void *ctx, const IncOfferRef *ref)
{
	char	   *text = ctx;
	size_t		len = strlen(text);

	if (ref->kind == INC_REF_PRODUCT)
		snprintf(text + len, 512 - len, "%s=%s|", ref->path, ref->product_key);
}

/* The growers fixture: match, scope grower and distinct_products as written. */
static void
TestGrowerFixtures(void)
{
	IncOffer   *o[4];
	char		buf[INC_NUM_BUF];

	if (unit_load_offers("test/fixtures/growers_matched_acres/offers.json", o, 4) == 4)
	{
		const IncRules *r = &o[2]->rules;

		CHECK(o[0]->stacked.match == INC_MATCH_PARTICIPANT && !o[0]->rules.any);
		CHECK(o[1]->stacked.match == INC_MATCH_GROWER);
		CHECK_STR(inc_match_name(o[1]->stacked.match), "grower");
		CHECK(r->any && r->nrequirements == 1 && r->ngrower_requirements == 1);
		CHECK(r->requirements[0].type == INC_THRESHOLD_DISTINCT_PRODUCTS);
		CHECK(r->requirements[0].scope == INC_SCOPE_GROWER);
		CHECK(r->requirements[0].nproducts == 2);
		CHECK_STR(r->requirements[0].product_keys[1], "seed_treatment");
		CHECK_STR(inc_threshold_type_name(r->requirements[0].type), "distinct_products");
		inc_dec_format(&r->requirements[0].minimum, buf, sizeof(buf));
		CHECK_STR(buf, "2");
		CHECK(o[3]->rules.limits.has_maximum && o[3]->rules.ngrower_requirements == 1);
		/* the products a distinct_products requirement counts are references */
		{
			char		text[512] = "";

			inc_offer_references(o[2], CollectProducts, text);
			CHECK(strstr(text, "requirements[0].product_keys[0]=seed|"
						 "requirements[0].product_keys[1]=seed_treatment|") != NULL);
		}
	}
}

/* test_offer_rules: the parser's program rules (see the file header). */
void
test_offer_rules(void)
{
	IncOfferError err;
	size_t		i;

	TestFixtures();
	TestGroupFixtures();
	TestGrowerFixtures();
	CHECK_STR(inc_aggregation_name(INC_AGGREGATE_PARTICIPANT), "participant");
	CHECK_STR(inc_scope_name(INC_SCOPE_GROUP), "group");
	CHECK_STR(inc_enrollment_name(INC_ENROLLMENT_OPEN), "open");
	CHECK_STR(inc_enrollment_name(INC_ENROLLMENT_REQUIRED), "required");
	CHECK_STR(inc_tier_mode_name(INC_TIERS_ALL_VOLUME), "all_volume");
	for (i = 0; i < sizeof(ValidDocs) / sizeof(ValidDocs[0]); i++)
	{
		IncOffer   *o = ParseQuoted(ValidDocs[i].doc, &err);

		CHECK(o != NULL);
		if (o == NULL)
			printf("  valid case %zu: %s\n", i, err.message);
		else
			CHECK(o->rules.any == ValidDocs[i].any);
	}
	for (i = 0; i < sizeof(InvalidRules) / sizeof(InvalidRules[0]); i++)
	{
		IncOffer   *o = ParseQuoted(InvalidRules[i].doc, &err);

		CHECK(o == NULL);
		if (o != NULL)
			printf("  invalid case %zu compiled: %s\n", i, InvalidRules[i].doc);
		else
			CHECK_STR(err.message, InvalidRules[i].message);
	}
}
