/*
 * test_fixtures.c
 *    Every worked fixture (test/fixtures/<case>/) through the engine core
 *    alone: offers.json, transactions.csv, the optional skus.csv,
 *    uom_conversions.csv, participant_properties.csv, properties.json,
 *    enrollments.csv, participant_groups.csv, groups.csv (the groups'
 *    types) and exchange_rates.csv, compared with expected.csv
 *    column for column as text, as the regression tests compare them
 *    through the server.
 *
 * The host's part is played here in C: the shipped unit conversions, the
 * call's properties before the stored ones, each participant's
 * transactions in transaction_id byte order, and the enrollment windows
 * of (participant, offer) in start_date order (IncEnrollmentFn), and the
 * participant groups' units (groups.h): a unit's transactions go to the
 * engine together, each with its participant's and aggregation key's
 * index.  A transactions.csv with a currency column (found by its header)
 * gives each transaction its currency (empty: NULL).  Rows are printed as
 * the earning columns in expected.csv's order (the 17, then those of
 * group_key, product_key, grower_key, currency and exchange_rate that its
 * header names, in its order), an empty field for a NULL; the two row lists must be equal as multisets.  An
 * expected_forecast_<as_of_date>.csv is the forecast as of that date
 * (inc_engine_forecast and inc_engine_forecast_unit over the transactions
 * dated on or before it, as the host reads them), printed as its 14
 * columns.
 */
#include <stdlib.h>

#include <json-c/json.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"
#include "../../src/core/engine/forecast.h"
#include "../../src/core/engine/groups.h"

#define MAX_ROWS 512
#define MAX_FIELDS 24

/* A CSV file split into rows of fields (no quoting in the fixtures). */
typedef struct Csv
{
	int			nrows;
	int			nfields[MAX_ROWS];
	char	   *fields[MAX_ROWS][MAX_FIELDS];	/* NULL: an empty field */
	char	   *text;
} Csv;

/* ReadCsv: path without its header line; false when there is no such file. */
static bool
ReadCsv(const char *path, Csv *csv)
{
	char	   *line;
	char	   *next;
	bool		header = true;

	memset(csv, 0, sizeof(*csv));
	csv->text = unit_read_file(path);
	if (csv->text == NULL)
		return false;
	for (line = csv->text; line && *line; line = next)
	{
		char	   *field = line;
		int			n = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] == '\0' || line[0] == '\r')
			continue;
		if (header)
		{
			header = false;
			continue;
		}
		if (csv->nrows == MAX_ROWS)
			break;
		for (;;)
		{
			char	   *comma = strchr(field, ',');
			char	   *cr;

			if (comma)
				*comma = '\0';
			if ((cr = strchr(field, '\r')) != NULL)
				*cr = '\0';
			if (n < MAX_FIELDS)
				csv->fields[csv->nrows][n++] = field[0] ? field : NULL;
			if (comma == NULL)
				break;
			field = comma + 1;
		}
		csv->nfields[csv->nrows++] = n;
	}
	return true;
}

static IncDec
Dec(const char *s)
{
	IncDec		d = {0, 0};

	if (s == NULL || inc_dec_parse(s, strlen(s), &d) != INC_DEC_OK)
		printf("FAIL bad decimal in a fixture: %s\n", s ? s : "(empty)");
	return d;
}

static int32_t
Date(const char *s)
{
	int32_t		d = 0;

	if (s == NULL || !inc_date_parse(s, &d))
		printf("FAIL bad date in a fixture: %s\n", s ? s : "(empty)");
	return d;
}

/* What the host callbacks read: properties and enrollments of the case. */
typedef struct Host
{
	struct json_object *call;	/* properties.json, or NULL */
	Csv			stored;			/* participant_properties.csv */
	Csv			enrollments;	/* enrollments.csv */
	IncWindow	windows[MAX_ROWS];
} Host;

static IncPropStatus
Property(void *ctx, const char *participant, const char *key, IncDec *value)
{
	Host	   *h = ctx;
	struct json_object *v;
	int			i;

	if (h->call && json_object_object_get_ex(h->call, key, &v))
	{
		const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);

		if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
			return INC_PROP_NOT_NUMBER;
		*value = Dec(text);
		return INC_PROP_FOUND;
	}
	for (i = 0; i < h->stored.nrows; i++)
		if (strcmp(h->stored.fields[i][0], participant) == 0 &&
			strcmp(h->stored.fields[i][1], key) == 0)
		{
			*value = Dec(h->stored.fields[i][2]);
			return INC_PROP_FOUND;
		}
	return INC_PROP_MISSING;
}

static int
CompareWindows(const void *a, const void *b)
{
	const IncWindow *x = a,
			   *y = b;

	return (x->start_date > y->start_date) - (x->start_date < y->start_date);
}

/* Enrollments: the IncEnrollmentFn of the case (windows sorted by start). */
static int
Enrollments(void *ctx, const char *participant, const char *offer, const IncWindow **out)
{
	Host	   *h = ctx;
	IncWindow  *w = inc_alloc(sizeof(IncWindow) * (h->enrollments.nrows + 1));
	int			n = 0;
	int			i;

	for (i = 0; i < h->enrollments.nrows; i++)
	{
		char	  **f = h->enrollments.fields[i];

		if (strcmp(f[0], participant) != 0 || strcmp(f[1], offer) != 0)
			continue;
		w[n].start_date = Date(f[2]);
		w[n].open_ended = f[3] == NULL;
		w[n].end_date = f[3] ? Date(f[3]) : 0;
		n++;
	}
	qsort(w, (size_t) n, sizeof(IncWindow), CompareWindows);
	*out = w;
	return n;
}

/*
 * The columns expected.csv may have after the 17 earning columns, each
 * printed when its header names it, in its order.
 */
typedef enum Extra
{
	EXTRA_GROUP_KEY,
	EXTRA_PRODUCT_KEY,
	EXTRA_GROWER_KEY,
	EXTRA_CURRENCY,
	EXTRA_EXCHANGE_RATE
} Extra;

static const char *const ExtraNames[] = {
	"group_key", "product_key", "grower_key", "currency", "exchange_rate"
};

#define MAX_EXTRA 8

/* The rows printed as expected.csv's lines. */
typedef struct Printed
{
	int			n;
	int			nextra;
	Extra		extra[MAX_EXTRA];	/* the columns after the 17th */
	char		rows[MAX_ROWS][768];
} Printed;

/* ExtraText: the extra column x of row ("" for NULL). */
static const char *
ExtraText(const IncRow *row, Extra x)
{
	const char *s = NULL;

	switch (x)
	{
		case EXTRA_GROUP_KEY:
			s = row->group_key;
			break;
		case EXTRA_PRODUCT_KEY:
			s = row->product_key;
			break;
		case EXTRA_GROWER_KEY:
			s = row->grower_key;
			break;
		case EXTRA_CURRENCY:
			s = row->currency;
			break;
		case EXTRA_EXCHANGE_RATE:
			s = row->has_exchange_rate ? unit_dec_text(&row->exchange_rate) : NULL;
			break;
	}
	return s ? s : "";
}

static void
Print(void *ctx, const IncRow *row)
{
	Printed    *p = ctx;
	size_t		len;
	int			x;

	if (p->n < MAX_ROWS)
	{
		len = (size_t) snprintf(p->rows[p->n], sizeof(p->rows[0]),
								"%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s",
								row->participant_key, row->offer->offer_key,
								inc_calculator_name(row->offer->calculator), row->txn->sku_key,
								row->rate_key, row->rate_measure, unit_dec_text(&row->rate_value),
								unit_dec_text(&row->pay_rate), row->txn->transaction_id,
								unit_dec_text(&row->txn->quantity), row->txn->uom_key,
								unit_dec_text(&row->txn->amount),
								unit_dec_text(&row->incentivized_quantity),
								unit_dec_text(&row->incentivized_amount),
								unit_dec_text(&row->incentive_amount),
								unit_dec_text(&row->contribution),
								row->effective_rate_null ? "" : unit_dec_text(&row->effective_rate));
		for (x = 0; x < p->nextra && len < sizeof(p->rows[0]); x++)
			len += (size_t) snprintf(p->rows[p->n] + len, sizeof(p->rows[0]) - len, ",%s",
									 ExtraText(row, p->extra[x]));
	}
	p->n++;
}

/* DateText: a day number as YYYY-MM-DD in one of 8 rotating buffers. */
static const char *
DateText(int32_t days)
{
	static char buf[8][16];
	static int	next;
	char	   *b = buf[next++ % 8];

	inc_date_format(days, b, 16);
	return b;
}

/* PrintForecast: one forecast row as expected_forecast_*.csv's line. */
static void
PrintForecast(void *ctx, const IncForecastRow *row)
{
	Printed    *p = ctx;

	if (p->n < MAX_ROWS)
		snprintf(p->rows[p->n], sizeof(p->rows[0]),
				 "%s,%s,%s,%s,%s,%d,%d,%s,%s,%s,%s,%s,%s,%s",
				 row->participant_key, row->offer->offer_key,
				 row->group_key ? row->group_key : "",
				 DateText(row->span_start), DateText(row->span_end),
				 row->elapsed_days, row->span_days,
				 row->has_basis_to_date ? unit_dec_text(&row->basis_to_date) : "",
				 row->has_projected_basis ? unit_dec_text(&row->projected_basis) : "",
				 row->rate_key_to_date ? row->rate_key_to_date : "",
				 row->projected_rate_key ? row->projected_rate_key : "",
				 unit_dec_text(&row->earned_to_date), unit_dec_text(&row->projected_earnings),
				 unit_dec_text(&row->accrual_to_date));
	p->n++;
}

/* The transactions.csv rows in (participant_key, transaction_id) byte order. */
static const Csv *sorting;

static int
CompareTxnRows(const void *a, const void *b)
{
	char *const *x = sorting->fields[*(const int *) a];
	char *const *y = sorting->fields[*(const int *) b];
	int			cmp = strcmp(x[1], y[1]);

	return cmp ? cmp : strcmp(x[0], y[0]);
}

static int
CompareStrings(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The shipped unit conversions (docs/reference.md, Unit conversions). */
static const char *const Shipped[][3] = {
	{"gal", "qt", "4"}, {"gal", "pt", "8"}, {"gal", "fl_oz", "128"},
	{"gal", "l", "3.785411784"}, {"l", "ml", "1000"}, {"lb", "oz", "16"},
	{"ton", "lb", "2000"}, {"kg", "g", "1000"}, {"lb", "kg", "0.45359237"},
};

/* The column of transactions.csv holding the currency, or -1. */
static int currency_column = -1;

/* The column of transactions.csv holding the grower_key, or -1. */
static int grower_column = -1;

/* FixtureTxn: a transactions.csv row as the engine's transaction. */
static void
FixtureTxn(char **f, IncTxn *t)
{
	memset(t, 0, sizeof(*t));
	t->grower_key = grower_column >= 0 ? f[grower_column] : NULL;
	t->transaction_id = f[0];
	t->transaction_type = f[2];
	t->transaction_date = Date(f[3]);
	t->sku_key = f[4];
	t->quantity = Dec(f[5]);
	t->uom_key = f[6];
	t->amount = Dec(f[7]);
	t->currency = currency_column >= 0 ? f[currency_column] : NULL;
}

/*
 * Paged: the transactions handed to the engine in pages (IncTxnPages) of
 * two, two pages in memory at once, as a host does past its memory limit.
 * Each load copies the page's transaction_ids (after a 4-byte prefix) and
 * currencies into its slot's buffers, first overwriting what the slot
 * held, so that a pointer kept past its page reads a wrong id or currency
 * and fails the comparison.
 */
#define PAGE_TXNS	2
#define PAGE_SLOTS	2
#define PAGE_ID		64

typedef struct Paged
{
	IncTxnPages pages;
	const IncTxn *txns;
	char		ids[PAGE_SLOTS][PAGE_TXNS][4 + PAGE_ID];
	char		growers[PAGE_SLOTS][PAGE_TXNS][PAGE_ID];
	char		currencies[PAGE_SLOTS][PAGE_TXNS][8];
} Paged;

static bool paged;

static void
LoadPage(void *ctx, int page, int slot, IncTxn *out)
{
	Paged	   *p = ctx;
	int			i;

	memset(p->ids[slot], '#', sizeof(p->ids[slot]));
	memset(p->growers[slot], '#', sizeof(p->growers[slot]));
	memset(p->currencies[slot], '#', sizeof(p->currencies[slot]));
	for (i = 0; i < PAGE_TXNS && page * PAGE_TXNS + i < p->pages.ntxns; i++)
	{
		char	   *id = p->ids[slot][i];

		out[i] = p->txns[page * PAGE_TXNS + i];
		memcpy(id, "len:", 4);
		snprintf(id + 4, PAGE_ID, "%s", out[i].transaction_id);
		out[i].transaction_id = id + 4;
		/* a grower_key lives in the slot too */
		if (out[i].grower_key)
		{
			snprintf(p->growers[slot][i], PAGE_ID, "%s", out[i].grower_key);
			out[i].grower_key = p->growers[slot][i];
		}
		if (out[i].currency)
		{
			snprintf(p->currencies[slot][i], sizeof(p->currencies[0][0]), "%s", out[i].currency);
			out[i].currency = p->currencies[slot][i];
		}
	}
}

/* UnitIn: unit, its transactions in pages when paged (in *p). */
static const IncUnit *
UnitIn(const IncUnit *unit, IncUnit *copy, Paged *p, const IncTxn *t, int n)
{
	if (!paged)
		return unit;
	*copy = *unit;
	p->pages.ntxns = n;
	p->pages.per_page = PAGE_TXNS;
	p->pages.nslots = PAGE_SLOTS;
	p->pages.id_prefix = 4;
	p->pages.load = LoadPage;
	p->pages.ctx = p;
	p->txns = t;
	copy->pages = &p->pages;
	return copy;
}

/*
 * Column: the index of column name in the header line of the CSV file
 * path, or -1 (also when there is no such file).
 */
static int
Column(const char *path, const char *name)
{
	char	   *text = unit_read_file(path);
	char	   *field;
	int			i = 0,
				found = -1;

	if (text == NULL)
		return -1;
	text[strcspn(text, "\r\n")] = '\0';
	for (field = text; found < 0; i++)
	{
		size_t		len = strcspn(field, ",");

		if (len == strlen(name) && strncmp(field, name, len) == 0)
			found = i;
		if (field[len] == '\0')
			break;
		field += len + 1;
	}
	free(text);
	return found;
}

/* ExtraColumns: expected's columns after the 17 earning columns, into p. */
static void
ExtraColumns(const char *path, Printed *p)
{
	int			x,
				at;

	p->nextra = 0;
	for (at = 17; at < 17 + MAX_EXTRA; at++)
	{
		int			found = -1;

		for (x = 0; x < (int) (sizeof(ExtraNames) / sizeof(ExtraNames[0])); x++)
			if (Column(path, ExtraNames[x]) == at)
				found = x;
		if (found < 0)
			break;
		p->extra[p->nextra++] = (Extra) found;
	}
}

/* RunFixture: the case's rows against expected (a file name in the case). */
static void
RunFixture(const char *name, const char *expected_file)
{
	static Csv	txns,
				expected,
				extra;
	static Host host;
	static Printed printed;
	char		path[256];
	IncOffer   *offers[16];
	int			noffers;
	IncEngine  *e = inc_engine_create();
	int			order[MAX_ROWS];
	char	   *want[MAX_ROWS];
	char	   *got[MAX_ROWS];
	int			i,
				u,
				start;
	char	   *props;
	IncGroups  *groups;
	IncGroupLevels levels;
	const char *forecast = strncmp(expected_file, "expected_forecast_", 18) == 0 ?
		expected_file + 18 : NULL;
	char		as_of_text[11] = "";
	int32_t		as_of = 0;

	if (forecast)
	{
		memcpy(as_of_text, forecast, 10);
		as_of = Date(as_of_text);
	}

	snprintf(path, sizeof(path), "test/fixtures/%s/offers.json", name);
	noffers = unit_load_offers(path, offers, 16);
	for (i = 0; i < noffers; i++)
		inc_engine_add_offer(e, offers[i]);
	for (i = 0; i < (int) (sizeof(Shipped) / sizeof(Shipped[0])); i++)
	{
		IncDec		f = Dec(Shipped[i][2]);

		inc_engine_add_conversion(e, Shipped[i][0], Shipped[i][1], &f);
	}
	snprintf(path, sizeof(path), "test/fixtures/%s/uom_conversions.csv", name);
	if (ReadCsv(path, &extra))
		for (i = 0; i < extra.nrows; i++)
		{
			IncDec		f = Dec(extra.fields[i][2]);

			inc_engine_add_conversion(e, extra.fields[i][0], extra.fields[i][1], &f);
		}
	free(extra.text);
	snprintf(path, sizeof(path), "test/fixtures/%s/skus.csv", name);
	if (ReadCsv(path, &extra))
		for (i = 0; i < extra.nrows; i++)
			inc_engine_set_sku_uom(e, extra.fields[i][0], extra.fields[i][1]);
	free(extra.text);

	memset(&host, 0, sizeof(host));
	snprintf(path, sizeof(path), "test/fixtures/%s/participant_properties.csv", name);
	ReadCsv(path, &host.stored);
	snprintf(path, sizeof(path), "test/fixtures/%s/enrollments.csv", name);
	ReadCsv(path, &host.enrollments);
	snprintf(path, sizeof(path), "test/fixtures/%s/properties.json", name);
	props = strcmp(expected_file, "expected.csv") == 0 ? unit_read_file(path) : NULL;
	host.call = props ? json_tokener_parse(props) : NULL;
	free(props);
	inc_engine_set_enrollments(e, Enrollments, &host);
	snprintf(path, sizeof(path), "test/fixtures/%s/products.csv", name);
	if (ReadCsv(path, &extra))
	{
		IncProducts *products = inc_products_create();

		for (i = 0; i < extra.nrows; i++)
			inc_products_add_node(products, extra.fields[i][0], extra.fields[i][1]);
		free(extra.text);
		snprintf(path, sizeof(path), "test/fixtures/%s/sku_products.csv", name);
		CHECK(ReadCsv(path, &extra));
		for (i = 0; i < extra.nrows; i++)
		{
			char	  **f = extra.fields[i];

			inc_products_add_window(products, f[0], f[1],
									strcmp(f[2], "-infinity") == 0 ? INT32_MIN : Date(f[2]),
									f[3] ? Date(f[3]) : INT32_MAX);
		}
		inc_engine_set_products(e, products);
	}
	free(extra.text);
	snprintf(path, sizeof(path), "test/fixtures/%s/exchange_rates.csv", name);
	if (ReadCsv(path, &extra))
		for (i = 0; i < extra.nrows; i++)
		{
			char	  **f = extra.fields[i];

			inc_engine_add_exchange_rate(e, f[0], f[1], Date(f[2]), Dec(f[3]));
		}
	free(extra.text);
	inc_engine_prepare(e);

	snprintf(path, sizeof(path), "test/fixtures/%s/transactions.csv", name);
	CHECK(ReadCsv(path, &txns));
	currency_column = Column(path, "currency");
	grower_column = Column(path, "grower_key");
	for (i = 0; i < txns.nrows; i++)
		order[i] = i;
	sorting = &txns;
	qsort(order, (size_t) txns.nrows, sizeof(int), CompareTxnRows);

	snprintf(path, sizeof(path), "test/fixtures/%s/participant_groups.csv", name);
	groups = inc_groups_create();
	if (ReadCsv(path, &extra))
		for (i = 0; i < extra.nrows; i++)
		{
			char	  **f = extra.fields[i];

			inc_groups_add(groups, f[0], strlen(f[0]), f[1], strlen(f[1]), Date(f[2]),
						   f[3] ? Date(f[3]) : 0, f[3] == NULL);
		}
	free(extra.text);
	snprintf(path, sizeof(path), "test/fixtures/%s/groups.csv", name);
	if (ReadCsv(path, &extra))
		for (i = 0; i < extra.nrows; i++)
		{
			char	  **f = extra.fields[i];

			inc_groups_set_type(groups, f[0], strlen(f[0]), f[1], strlen(f[1]));
		}
	free(extra.text);
	inc_engine_group_levels(e, &levels);
	inc_groups_prepare(groups, &levels);

	snprintf(path, sizeof(path), "test/fixtures/%s/%s", name, expected_file);
	CHECK(ReadCsv(path, &expected));
	printed.n = 0;
	ExtraColumns(path, &printed);

	/* each participant in no group alone, in order */
	for (start = 0; start < txns.nrows;)
	{
		IncTxn	   *t = inc_alloc(sizeof(IncTxn) * txns.nrows);
		const char *participant = txns.fields[order[start]][1];
		int			n = 0,
					index;

		while (start < txns.nrows && strcmp(txns.fields[order[start]][1], participant) == 0)
		{
			char	  **f = txns.fields[order[start++]];

			if (inc_groups_find(groups, f[1], strlen(f[1]), &index) >= 0)
				continue;
			/* a forecast reads what a calculation through its date reads */
			if (forecast && Date(f[3]) > as_of)
				continue;
			FixtureTxn(f, &t[n++]);
		}
		if (n > 0 && paged)
		{
			static const uint8_t flags = INC_KEY_REPORT | INC_KEY_VISIBLE;
			IncUnit		alone = {1, &participant, &flags, NULL, NULL, NULL};
			IncUnit		copy;
			static Paged p;
			const IncUnit *in = UnitIn(&alone, &copy, &p, t, n);

			if (forecast)
				inc_engine_forecast_unit(e, as_of, in, NULL, n, Property, &host,
										 PrintForecast, &printed);
			else
				inc_engine_calculate_unit(e, in, NULL, n, Property, &host, Print, &printed);
		}
		else if (n > 0 && forecast)
			inc_engine_forecast(e, as_of, participant, t, n, Property, &host,
								PrintForecast, &printed);
		else if (n > 0)
			inc_engine_calculate(e, participant, t, n, Property, &host, Print, &printed);
	}
	/* then each unit of the groups, its transactions together */
	for (u = 0; u < inc_groups_count(groups); u++)
	{
		IncTxn	   *t = inc_alloc(sizeof(IncTxn) * (txns.nrows + 1));
		IncUnit		unit = inc_groups_unit(groups, u);
		uint8_t    *flags = inc_alloc((size_t) unit.nkeys);
		IncUnit		copy;
		static Paged p;
		const IncUnit *in;
		int			n = 0,
					index;

		for (i = 0; i < unit.nkeys; i++)
			flags[i] = unit.flags[i] | INC_KEY_REPORT | INC_KEY_VISIBLE;
		for (i = 0; i < txns.nrows; i++)
		{
			char	  **f = txns.fields[order[i]];

			if (inc_groups_find(groups, f[1], strlen(f[1]), &index) != u)
				continue;
			if (forecast && Date(f[3]) > as_of)
				continue;
			FixtureTxn(f, &t[n]);
			t[n].participant = index;
			t[n].aggregation = inc_groups_aggregation(groups, u, index, t[n].transaction_date, true,
													 NULL);
			n++;
		}
		unit.flags = flags;
		in = UnitIn(&unit, &copy, &p, t, n);
		if (forecast)
			inc_engine_forecast_unit(e, as_of, in, paged ? NULL : t, n, Property, &host,
									 PrintForecast, &printed);
		else
			inc_engine_calculate_unit(e, in, paged ? NULL : t, n, Property, &host, Print,
									  &printed);
	}

	CHECK(printed.n == expected.nrows);
	if (printed.n != expected.nrows)
	{
		printf("     %s/%s: %d rows, expected %d\n", name, expected_file, printed.n, expected.nrows);
		for (i = 0; i < printed.n && i < MAX_ROWS; i++)
			printf("     got %s\n", printed.rows[i]);
	}
	for (i = 0; i < expected.nrows && i < printed.n && i < MAX_ROWS; i++)
	{
		char	   *line = malloc(1024);
		size_t		len = 0;
		int			k;

		line[0] = '\0';
		for (k = 0; k < expected.nfields[i]; k++)
			len += snprintf(line + len, 1024 - len, "%s%s", k ? "," : "",
							expected.fields[i][k] ? expected.fields[i][k] : "");
		want[i] = line;
		got[i] = printed.rows[i];
	}
	if (printed.n == expected.nrows)
	{
		qsort(want, (size_t) expected.nrows, sizeof(char *), CompareStrings);
		qsort(got, (size_t) printed.n, sizeof(char *), CompareStrings);
		for (i = 0; i < expected.nrows; i++)
			CHECK_STR(got[i], want[i]);
	}
	for (i = 0; i < expected.nrows && i < printed.n && i < MAX_ROWS; i++)
		free(want[i]);
	free(txns.text);
	free(expected.text);
	free(host.stored.text);
	free(host.enrollments.text);
	if (host.call)
		json_object_put(host.call);
	unit_arena_reset();
}

/* test_fixtures: every fixture case, the rules' included. */
void
test_fixtures(void)
{
	static const char *const cases[] = {
		"standard_percent", "standard_multi_entry", "standard_dollars_per_unit_uom",
		"stepped_amount", "stepped_property", "stacked_pair_up", "stacked_multi_stack",
		"fixed_amount_pools", "rules_enrollment", "rules_requirements",
		"rules_incremental_tiers", "rules_limits", "groups_accumulate", "groups_pool_limits",
		"hierarchy_region_chain",
		"growth_baseline", "forecast_run_rate", "products_brands_categories",
		"currency_cad",
		"growers_matched_acres",
	};
	int			i;

	for (i = 0; i < (int) (sizeof(cases) / sizeof(cases[0])); i++)
		RunFixture(cases[i], "expected.csv");
	RunFixture("stepped_property", "expected_stored.csv");
	RunFixture("forecast_run_rate", "expected_forecast_2026-05-31.csv");
}

/* test_fixtures_paged: the same, the transactions in pages (Paged). */
void
test_fixtures_paged(void)
{
	paged = true;
	test_fixtures();
	paged = false;
}
