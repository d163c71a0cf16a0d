/*
 * test_rates.c
 *    The rates listing (inc_offer_rates, through each strategy's rates
 *    operation) against what incentives.program_rates showed when it was a
 *    SQL view over the raw documents: the same rows, field by field, for
 *    every fixture offer and for the extra offers of
 *    test/unit/rates_offers.json (prices, stepped filters that disagree on
 *    period or type, explicit and generated keys, a SKU that only anchors
 *    coverage).  The expected rows are in test/unit/rates_expected.txt.
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"

#define MAX_LINES 256
#define LINE_LEN 1024

typedef struct Lines
{
	int			n;
	char	   *items[MAX_LINES];
} Lines;

typedef struct Listing
{
	const char *group;
	Lines	   *lines;
} Listing;

/* Field: s, or "-" for NULL (the expected file's form). */
static const char *
Field(const char *s)
{
	return s ? s : "-";
}

/* Number: d in its text form into buf, or "-" for NULL. */
static const char *
Number(const IncDec *d, char *buf)
{
	if (d == NULL)
		return "-";
	inc_dec_format(d, buf, INC_NUM_BUF);
	return buf;
}

/* Collect: one rate row as an expected-file line. */
static void
Collect(void *ctx, const IncRateRow *row)
{
	Listing    *l = ctx;
	char		n[4][INC_NUM_BUF];
	char		start[16] = "-",
				end[16] = "-";
	char	   *line = malloc(LINE_LEN);

	if (row->period)
	{
		inc_date_format(row->period->start_date, start, sizeof(start));
		inc_date_format(row->period->end_date, end, sizeof(end));
	}
	snprintf(line, LINE_LEN,
			 "%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s",
			 l->group, row->offer->offer_key, inc_strategy_name(row->offer->strategy),
			 inc_calculator_name(row->offer->calculator), Field(row->rate_key),
			 Field(row->sku_key), Number(&row->rate_value, n[0]), Field(row->measure),
			 Number(row->threshold, n[1]), Field(row->threshold_type),
			 Field(row->period ? row->period->key : NULL), start, end,
			 Field(row->transaction_type), Field(row->sku_set_key), Field(row->stack_key),
			 Field(row->threshold_property_key), Number(row->price, n[2]),
			 Field(row->coverage_unit), Number(row->coverage_rate, n[3]),
			 Field(row->coverage_uom_key));
	if (l->lines->n < MAX_LINES)
		l->lines->items[l->lines->n++] = line;
	else
		free(line);
}

static int
CompareLines(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Expected: the expected file's lines of group, sorted. */
static void
Expected(const char *text, const char *group, Lines *out)
{
	size_t		glen = strlen(group);
	const char *p = text;

	out->n = 0;
	while (p && *p)
	{
		const char *eol = strchr(p, '\n');
		size_t		len = eol ? (size_t) (eol - p) : strlen(p);

		if (p[0] != '#' && len > glen && strncmp(p, group, glen) == 0 &&
			p[glen] == '|' && out->n < MAX_LINES)
		{
			char	   *line = malloc(len + 1);

			memcpy(line, p, len);
			line[len] = '\0';
			out->items[out->n++] = line;
		}
		p = eol ? eol + 1 : NULL;
	}
	qsort(out->items, (size_t) out->n, sizeof(char *), CompareLines);
}

static void
FreeLines(Lines *l)
{
	int			i;

	for (i = 0; i < l->n; i++)
		free(l->items[i]);
	l->n = 0;
}

/* CheckGroup: the listing of every offer in path equals group's expected rows. */
static void
CheckGroup(const char *expected_text, const char *group, const char *path)
{
	IncOffer   *offers[16];
	int			noffers = unit_load_offers(path, offers, 16);
	Lines		got = {0},
				want = {0};
	Listing		l = {group, &got};
	int			i;

	CHECK(noffers > 0);
	for (i = 0; i < noffers; i++)
		inc_offer_rates(offers[i], Collect, &l);
	qsort(got.items, (size_t) got.n, sizeof(char *), CompareLines);
	Expected(expected_text, group, &want);
	CHECK(want.n > 0);
	CHECK(got.n == want.n);
	for (i = 0; i < got.n && i < want.n; i++)
		CHECK_STR(got.items[i], want.items[i]);
	if (got.n != want.n)
		for (i = 0; i < got.n; i++)
			printf("  got: %s\n", got.items[i]);
	FreeLines(&got);
	FreeLines(&want);
}

/*
 * A stepped offer by amount whose threshold_definition carries an unused
 * property object: the old view showed its key, the listing shows what
 * the calculation uses (none).
 */
static void
TestUnusedProperty(void)
{
	const char *doc =
		"{\"offer_key\":\"x\",\"strategy_key\":\"stepped\",\"calculator_key\":\"percent_of_amount\","
		"\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}],"
		"\"incentive\":{\"filters\":[{\"period_key\":\"p\",\"sku_keys\":[\"a\"],\"transaction_type\":\"t\"}],"
		"\"threshold_definition\":{\"type\":\"aggregated_amount\",\"property\":{\"key\":\"unused\"},"
		"\"filters\":[{\"period_key\":\"p\",\"sku_keys\":[\"a\"],\"transaction_type\":\"t\"}]},"
		"\"rates\":[{\"threshold\":1000,\"value\":10,\"measure\":\"percent\"}]}}";
	IncOfferError err;
	IncOffer   *o = inc_offer_parse(doc, strlen(doc), &err);
	Lines		got = {0};
	Listing		l = {"unused", &got};

	CHECK(o != NULL);
	if (o == NULL)
		return;
	inc_offer_rates(o, Collect, &l);
	CHECK(got.n == 1);
	if (got.n == 1)
		CHECK_STR(got.items[0],
				  "unused|x|stepped|percent_of_amount|10_percent_greater_than_or_equal_to_1000|-|10|"
				  "percent|1000|aggregated_amount|p|2026-01-01|2026-12-31|t|-|-|-|-|-|-|-");
	FreeLines(&got);
}

/* test_rates: the rates listing of every fixture offer and the extras. */
void
test_rates(void)
{
	static const char *const fixtures[] = {
		"standard_percent", "standard_multi_entry", "standard_dollars_per_unit_uom",
		"fixed_amount_pools", "stepped_amount", "stepped_property",
		"stacked_pair_up", "stacked_multi_stack"
	};
	char	   *expected = unit_read_file("test/unit/rates_expected.txt");
	char		path[256];
	size_t		i;

	CHECK(expected != NULL);
	if (expected == NULL)
		return;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
	{
		snprintf(path, sizeof(path), "test/fixtures/%s/offers.json", fixtures[i]);
		CheckGroup(expected, fixtures[i], path);
	}
	CheckGroup(expected, "extra", "test/unit/rates_offers.json");
	TestUnusedProperty();
	free(expected);
}
