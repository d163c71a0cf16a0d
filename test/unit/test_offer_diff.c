/*
 * test_offer_diff.c
 *    How a new document of an offer differs from the one before it
 *    (offer_diff.h): rate values, pools, annotations and structure, with
 *    the path each verdict names.
 */
#include "unit.h"
#include "../../src/core/offer/offer_diff.h"

static const char Standard[] =
	"{\"offer_key\": \"s\", \"strategy_key\": \"standard\", \"calculator_key\": \"percent_of_amount\","
	" \"label\": \"Season\", \"metadata\": {\"owner\": \"ann\"},"
	" \"periods\": [{\"key\": \"p\", \"start_date\": \"2025-10-01\", \"end_date\": \"2026-09-30\"}],"
	" \"incentives\": [{\"key\": \"e\", \"period_key\": \"p\", \"transaction_type\": \"t\","
	" \"rates\": [{\"sku_key\": \"a\", \"rate\": 3.0, \"measure\": \"percent\"},"
	" {\"sku_key\": \"b\", \"rate\": 2, \"measure\": \"percent\"}]}]}";

static const char Stepped[] =
	"{\"offer_key\": \"t\", \"strategy_key\": \"stepped\", \"calculator_key\": \"percent_of_amount\","
	" \"periods\": [{\"key\": \"p\", \"start_date\": \"2025-10-01\", \"end_date\": \"2026-09-30\"}],"
	" \"incentive\": {\"filters\": [{\"period_key\": \"p\", \"sku_keys\": [\"a\"], \"transaction_type\": \"t\"}],"
	" \"threshold_definition\": {\"type\": \"aggregated_amount\"},"
	" \"rates\": [{\"threshold\": 0, \"value\": 1, \"measure\": \"percent\"},"
	" {\"threshold\": 1000, \"value\": 3, \"measure\": \"percent\"}]}}";

static const char Stacked[] =
	"{\"offer_key\": \"k\", \"strategy_key\": \"stacked\", \"calculator_key\": \"dollars_per_coverage_unit\","
	" \"periods\": [{\"key\": \"p\", \"start_date\": \"2025-10-01\", \"end_date\": \"2026-09-30\"}],"
	" \"incentive\": {\"sku_sets\": [{\"key\": \"seed\", \"period_key\": \"p\", \"transaction_type\": \"t\","
	" \"conversion\": {\"coverage_unit\": \"acre\", \"rates\": [{\"sku_key\": \"a\", \"rate\": 1, \"from\": \"unit\"}]},"
	" \"rates\": [{\"sku_key\": \"a\", \"rate\": 0, \"measure\": \"dollars\"}]}]}}";

/* Verdict: the difference from old_json to new_json, its path into path. */
static IncOfferDifference
Verdict(const char *old_json, const char *new_json, char *path, size_t cap)
{
	IncOfferParser a;
	IncOfferParser b;
	IncOfferError err;
	IncOfferDifference kind;

	inc_offer_parser_init(&a);
	inc_offer_parser_init(&b);
	kind = inc_offer_difference(&a, &b, old_json, strlen(old_json), new_json, strlen(new_json),
								path, cap, &err);
	CHECK(a.root == NULL && a.tokener == NULL && b.root == NULL && b.tokener == NULL);
	return kind;
}

/* Edited: doc with the first occurrence of from replaced by to (in one of 4 rotating buffers). */
static const char *
Edited(const char *doc, const char *from, const char *to)
{
	static char bufs[4][8192];
	static int	next;
	char	   *buf = bufs[next++ % 4];
	const char *at = strstr(doc, from);
	size_t		head;

	if (at == NULL)
	{
		printf("FAIL test_offer_diff: \"%s\" is not in the document\n", from);
		unit_failed++;
		return doc;
	}
	head = (size_t) (at - doc);
	snprintf(buf, sizeof(bufs[0]), "%.*s%s%s", (int) head, doc, to, at + strlen(from));
	return buf;
}

static void
Expect(const char *old_json, const char *new_json, IncOfferDifference want,
	   const char *want_path)
{
	char		path[256];
	IncOfferDifference got = Verdict(old_json, new_json, path, sizeof(path));

	CHECK_STR(inc_offer_difference_names[got], inc_offer_difference_names[want]);
	CHECK_STR(path, want_path);
}

void
test_offer_diff(void)
{
	/* equal, numbers by value */
	Expect(Standard, Standard, INC_DIFF_SAME, "");
	Expect(Standard, Edited(Standard, "\"rate\": 3.0", "\"rate\": 3.00"), INC_DIFF_SAME, "");
	Expect(Standard, Edited(Standard, "\"rate\": 2,", "\"rate\": 2.0,"), INC_DIFF_SAME, "");

	/* rate values */
	Expect(Standard, Edited(Standard, "\"rate\": 3.0", "\"rate\": 4"), INC_DIFF_RATES,
		   "incentives[0].rates[0].rate");
	Expect(Stepped, Edited(Stepped, "\"value\": 3", "\"value\": 4"), INC_DIFF_RATES,
		   "incentive.rates[1].value");
	Expect(Stacked, Edited(Stacked, "\"rate\": 0, \"measure\"", "\"rate\": 12, \"measure\""),
		   INC_DIFF_RATES, "incentive.sku_sets[0].rates[0].rate");

	/* annotations, alone and beside a rate */
	Expect(Standard, Edited(Standard, "\"Season\"", "\"Full season\""), INC_DIFF_ANNOTATIONS, "");
	Expect(Standard, Edited(Standard, "\"ann\"", "\"bob\""), INC_DIFF_ANNOTATIONS, "");
	Expect(Standard, Edited(Standard, "\"key\": \"e\",", "\"key\": \"e\", \"name\": \"Early\","),
		   INC_DIFF_ANNOTATIONS, "");
	Expect(Edited(Standard, "\"rate\": 3.0", "\"rate\": 5"), Edited(Standard, "\"Season\"", "\"x\""),
		   INC_DIFF_RATES, "incentives[0].rates[0].rate");

	/* the offer's settlement counts as an annotation: added, changed, removed */
	{
		char		settled[4096];

		snprintf(settled, sizeof(settled), "%s",
				 Edited(Standard, "\"label\":", "\"settlement\": {\"holdback_percent\": 10}, \"label\":"));
		Expect(Standard, settled, INC_DIFF_ANNOTATIONS, "");
		Expect(settled, Edited(settled, "\"holdback_percent\": 10", "\"holdback_percent\": 12.5"),
			   INC_DIFF_ANNOTATIONS, "");
		Expect(settled, Standard, INC_DIFF_ANNOTATIONS, "");
		Expect(settled, Edited(Edited(settled, "\"holdback_percent\": 10", "\"holdback_percent\": 0"),
							   "\"rate\": 3.0", "\"rate\": 4"),
			   INC_DIFF_RATES, "incentives[0].rates[0].rate");
		/* only at the top: elsewhere it is no field of the contract */
		Expect(Standard, Edited(Standard, "\"key\": \"e\",", "\"key\": \"e\", \"settlement\": 1,"),
			   INC_DIFF_STRUCTURE, "incentives[0].settlement");
	}

	/* structure: what a rate change may not touch */
	Expect(Stepped, Edited(Stepped, "\"threshold\": 1000", "\"threshold\": 2000"),
		   INC_DIFF_STRUCTURE, "incentive.rates[1].threshold");
	Expect(Stacked, Edited(Stacked, "\"rate\": 1, \"from\"", "\"rate\": 2, \"from\""),
		   INC_DIFF_STRUCTURE, "incentive.sku_sets[0].conversion.rates[0].rate");
	Expect(Standard, Edited(Standard, "\"sku_key\": \"b\"", "\"sku_key\": \"c\""),
		   INC_DIFF_STRUCTURE, "incentives[0].rates[1].sku_key");
	Expect(Standard, Edited(Standard, "\"2026-09-30\"", "\"2026-10-31\""),
		   INC_DIFF_STRUCTURE, "periods[0].end_date");
	Expect(Standard, Edited(Standard, ", {\"sku_key\": \"b\", \"rate\": 2, \"measure\": \"percent\"}", ""),
		   INC_DIFF_STRUCTURE, "incentives[0].rates");
	Expect(Standard, Edited(Standard, "\"rate\": 3.0", "\"rate\": \"3.0\""),
		   INC_DIFF_STRUCTURE, "incentives[0].rates[0].rate");
	Expect(Standard, Edited(Standard, "\"rate\": 3.0,", ""),
		   INC_DIFF_STRUCTURE, "incentives[0].rates[0].rate");
	/* a rate and a structure change: structure wins, and names its field */
	Expect(Standard, Edited(Edited(Standard, "\"2026-09-30\"", "\"2026-10-31\""),
							"\"rate\": 3.0", "\"rate\": 4"),
		   INC_DIFF_STRUCTURE, "periods[0].end_date");

	/* a fixed_amount offer's rates are pools */
	{
		char		fixed[4096];

		snprintf(fixed, sizeof(fixed), "%s", Edited(Standard, "percent_of_amount", "fixed_amount"));
		Expect(fixed, Edited(fixed, "\"rate\": 3.0", "\"rate\": 4"), INC_DIFF_POOL,
			   "incentives[0].rates[0].rate");
	}

	/* not JSON */
	{
		char		path[64];

		CHECK(Verdict(Standard, "{", path, sizeof(path)) == INC_DIFF_STRUCTURE);
	}
	unit_arena_reset();
}
