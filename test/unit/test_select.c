/*
 * test_select.c
 *    What filters and standard entries select through the product catalog
 *    (src/core/products/select.c; docs/reference.md, Products): dated
 *    windows joined and cut, exclusions, the nearest product, the first
 *    listed of two as near and the ties reported, descendants at their
 *    distance.
 */
#include "unit.h"
#include "../../src/core/products/select.h"

typedef struct Got
{
	int			n;
	char		lines[32][160];
} Got;

static void
Text(char *buf, size_t cap, int32_t d)
{
	if (d == INT32_MIN)
		snprintf(buf, cap, "-inf");
	else if (d == INT32_MAX)
		snprintf(buf, cap, "inf");
	else
		inc_date_format(d, buf, cap);
}

static void
Selected(void *ctx, const char *sku_key, int32_t from, int32_t to, int rate,
		 const char *product_key)
{
	Got		   *g = ctx;
	char		f[16],
				t[16];

	Text(f, sizeof(f), from);
	Text(t, sizeof(t), to);
	if (g->n < 32)
		snprintf(g->lines[g->n], sizeof(g->lines[0]), "%s %s..%s rate %d via %s", sku_key, f, t,
				 rate, product_key ? product_key : "-");
	g->n++;
}

static void
Tied(void *ctx, const char *sku_key, int32_t from, int32_t to, const char *taken,
	 const char *other, int distance)
{
	Got		   *g = ctx;
	char		f[16],
				t[16];

	Text(f, sizeof(f), from);
	Text(t, sizeof(t), to);
	if (g->n < 32)
		snprintf(g->lines[g->n], sizeof(g->lines[0]), "tie %s %s..%s %s over %s at %d", sku_key,
				 f, t, taken, other, distance);
	g->n++;
}

static int32_t
D(const char *s)
{
	int32_t		d;

	CHECK(inc_date_parse(s, &d));
	return d;
}

/* Catalog: cat > brand > line; seg (a second tree). */
static IncProducts *
Catalog(void)
{
	IncProducts *p = inc_products_create();

	/* a window may come before its node */
	inc_products_add_window(p, "s1", "line", INT32_MIN, INT32_MAX);
	inc_products_add_node(p, "line", "brand");
	inc_products_add_node(p, "brand", "cat");
	inc_products_add_node(p, "cat", NULL);
	inc_products_add_node(p, "seg", NULL);
	inc_products_add_window(p, "s2", "brand", D("2026-01-01"), D("2026-03-31"));
	inc_products_add_window(p, "s2", "cat", D("2026-03-01"), D("2026-06-30"));
	inc_products_add_window(p, "s2", "seg", D("2026-02-01"), INT32_MAX);
	inc_products_add_window(p, "s3", "cat", D("2026-01-01"), INT32_MAX);
	return p;
}

static void
CheckGot(Got *g, const char *const *want, int n)
{
	int			i;

	CHECK(g->n == n);
	if (g->n != n)
		for (i = 0; i < g->n && i < 32; i++)
			printf("     got: %s\n", g->lines[i]);
	for (i = 0; i < n && i < g->n; i++)
		CHECK_STR(g->lines[i], want[i]);
}

void
test_select(void)
{
	IncProducts *p = Catalog();
	char	   *cat[] = {"cat"};
	char	   *line[] = {"line"};
	char	   *s3[] = {"s3"};
	char	   *brand[] = {"brand"};
	char	   *none[] = {"nowhere"};
	IncFilter	f;
	IncStandardEntry e;
	IncSkuRate	rates[3];
	Got			g;

	CHECK(inc_products_known(p, "brand"));
	CHECK(!inc_products_known(p, "nowhere"));

	/* a category: its descendants' windows joined; s2's two windows meet */
	memset(&f, 0, sizeof(f));
	f.nproducts = 1;
	f.product_keys = cat;
	memset(&g, 0, sizeof(g));
	inc_select_filter(p, &f, Selected, &g);
	{
		static const char *const want[] = {
			"s1 -inf..inf rate 0 via cat",
			"s2 2026-01-01..2026-06-30 rate 0 via cat",
			"s3 2026-01-01..inf rate 0 via cat",
		};

		CheckGot(&g, want, 3);
	}

	/* excluded: a SKU, and a product on the days it holds a SKU */
	f.nexclude_skus = 1;
	f.exclude_sku_keys = s3;
	f.nexclude_products = 1;
	f.exclude_product_keys = brand;
	memset(&g, 0, sizeof(g));
	inc_select_filter(p, &f, Selected, &g);
	{
		static const char *const want[] = {
			"s2 2026-04-01..2026-06-30 rate 0 via cat",
		};

		CheckGot(&g, want, 1);
	}

	/* an unknown product reaches nothing; no catalog neither */
	memset(&f, 0, sizeof(f));
	f.nproducts = 1;
	f.product_keys = none;
	memset(&g, 0, sizeof(g));
	inc_select_filter(p, &f, Selected, &g);
	CHECK(g.n == 0);
	f.product_keys = cat;
	inc_select_filter(NULL, &f, Selected, &g);
	CHECK(g.n == 0);

	/*
	 * rates: seg (listed first), brand, cat; s2 in brand at 1 in January;
	 * in brand and seg at 1 in February and March (and in cat at 1 in
	 * March: brand is the one listed first of the others), a tie that seg
	 * takes; then in cat and seg at 1 to June, then in seg alone
	 */
	memset(rates, 0, sizeof(rates));
	rates[0].product_key = "seg";
	rates[1].product_key = "brand";
	rates[2].product_key = "cat";
	memset(&e, 0, sizeof(e));
	e.nrates = 3;
	e.rates = rates;
	memset(&g, 0, sizeof(g));
	inc_select_entry(p, &e, Selected, Tied, &g);
	{
		static const char *const want[] = {
			"s1 -inf..inf rate 1 via brand",
			"s2 2026-01-01..2026-01-31 rate 1 via brand",
			"tie s2 2026-02-01..2026-03-31 seg over brand at 1",
			"tie s2 2026-04-01..2026-06-30 seg over cat at 1",
			"s2 2026-02-01..inf rate 0 via seg",
			"s3 2026-01-01..inf rate 2 via cat",
		};

		CheckGot(&g, want, 6);
	}

	/* the SKU's own rate first, whatever is listed before it */
	rates[1].product_key = NULL;
	rates[1].sku_key = "s1";
	memset(&g, 0, sizeof(g));
	inc_select_entry(p, &e, Selected, NULL, &g);
	CHECK(g.n >= 1);
	CHECK_STR(g.lines[0], "s1 -inf..inf rate 1 via -");

	/* an entry's exclusion takes even the SKU's own rate */
	e.nexclude_products = 1;
	e.exclude_product_keys = line;
	memset(&g, 0, sizeof(g));
	inc_select_entry(p, &e, Selected, NULL, &g);
	CHECK(g.n >= 1);
	CHECK(strncmp(g.lines[0], "s1 ", 3) != 0);
}
