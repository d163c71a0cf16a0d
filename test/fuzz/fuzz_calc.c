/*
 * fuzz_calc.c
 *    libFuzzer harness over a whole calculation: fuzzed offers, fuzzed
 *    transactions, the engine (inc_engine_*) end to end, with and without
 *    diagnostics.
 *
 * Input form: the bytes are split at NUL bytes.  With no NUL the whole
 * input is one offer document; otherwise the last part drives the
 * transaction generator and the parts before it (at most MAX_OFFERS) are
 * offer documents.  Once the driver bytes run out, a generator seeded with
 * a hash of the input takes over, so a plain offer document (the seed
 * corpus) already yields transactions.  When no part is an acceptable
 * offer (most mutations break the JSON), one to three built-in offers
 * covering every strategy and calculator are used instead, so every input
 * calculates something.  The generator (fuzz_world.c) takes its
 * vocabulary from the accepted offers and builds what the PostgreSQL glue
 * would hand the engine: the SKU catalog, the shipped unit conversions
 * plus a few fuzzed ones, properties (missing, numeric or not a number),
 * and two participants' transactions.
 *
 * The run mirrors the host's memory model: the engines and offers live in
 * a long-lived arena, each participant's working data in an arena freed
 * right after that participant (as the glue resets its memory context).
 * Participants run A, B, then A again, on an engine with diagnostics on
 * for half of the inputs; A also runs on a plain engine.
 *
 * Outcomes: inc_fail with INC_ERR_NO_CONVERSION, INC_ERR_NO_EXCHANGE_RATE
 * or INC_ERR_NULL (its message names the transaction, and the engine's position names the same
 * one), INC_ERR_PROPERTY_NOT_NUMBER (names the participant) or INC_ERR_RANGE
 * (overflow) is expected and ends the input, as an error ends the query;
 * INC_ERR_INTERNAL and INC_ERR_INVALID abort, and so does INC_ERR_RANGE
 * when every number involved is small (fuzz_small_dec).  Checked on every
 * completed participant (the row figures and the diagnostics in
 * fuzz_checks.c):
 *   - every number of a row has its reported scale (or the shortest form
 *     for rate values and exact pay rates), fits 38 digits, and its text
 *     parses back unchanged;
 *   - a percent pay rate is rate / 100, a dollars one the rate;
 *   - the effective rate is NULL exactly when incentivized_amount is 0.00,
 *     else round(incentive_amount / incentivized_amount, 4);
 *   - the contribution is 1.000000 outside stacked offers, in [0, 1] in
 *     them; measures fit the calculator; row pointers are ours; no row
 *     comes from a transaction with a NULL column;
 *   - every row's rate is one the offer's rates listing (inc_offer_rates)
 *     shows, with that SKU (but for stepped tiers) and rate value;
 *   - (transaction_id, offer_key, incentive_rate_key) is unique;
 *   - the rows of each fixed_amount pool add up to the pool rounded to
 *     cents, exactly (docs/reference.md, Fixed pools);
 *   - participant A's rows are the same both times, and the same without
 *     diagnostics (diagnostics never change rows; a calculation that fails
 *     without them fails with them);
 *   - participant A's rows are the same with the arithmetic's fast path
 *     off (inc_set_exact_only: big rationals only), and the same again
 *     with its transactions shuffled and their SKUs and units resolved to
 *     ids first, as the PostgreSQL glue hands them over (rows are compared
 *     as a set: their order is not part of the contract);
 *   - with diagnostics, every offer is reported once, in offer order, as a
 *     JSON object: a standard entry's incentive_amount is what its rows
 *     pay, a stepped offer's rows carry its selected_rate_key, a stack
 *     with rows earns;
 *   - the program rules (fuzz_rules.c; docs/reference.md, Program rules),
 *     with enrollment windows generated per participant and a twin of
 *     each offer with limits (the same offer without them) calculated
 *     beside it: an enrollment-required offer has no row dated outside a
 *     window; an offer whose requirement is certainly unmet has no rows; a
 *     limited offer pays what its twin pays, nothing (below its minimum),
 *     or -- capped -- its maximum exactly, over the twin's rows with the
 *     same nominal pay rates; with diagnostics, "rules" agrees with the
 *     rows (qualified, the limit applied, the amount paid);
 *   - participant groups (docs/reference.md, Participant groups): A and
 *     B members of one group, B joining it mid-season, with every offer
 *     aggregated by group (but those requiring enrollment or with
 *     requirements of scope member): the unit's rows equal a reference
 *     that calculates the same offers by participant for one participant
 *     per aggregation key owning all the transactions that carry it (or
 *     both fail), rows keeping their own participant and the group's
 *     group_key; and a call that wants A only gives A's rows of the unit;
 *   - no data error from an offer that pays nothing because of a
 *     requirement: participant A calculated again without the offers
 *     whose requirement is certainly unmet for it (fuzz_certainly_unmet)
 *     gives the same rows, or fails with the very same data error (only a
 *     range error, outside the small world, may be the removed offers');
 *   - participant A's forecast (docs/reference.md, Forecast) as of a date
 *     around a period's bounds, over its transactions dated on or before
 *     it: the same rows on the fast path and with the big rationals (or
 *     the same failure); in every row 1 <= elapsed_days <= span_days,
 *     accrual_to_date = max(round(projected_earnings x elapsed_days /
 *     span_days, 2), earned_to_date), no basis but for stepped offers, and once the span
 *     is over (k = 1) the projection equals the actual calculation;
 *   - rate schedules (docs/lifecycle.md, Prospective rate changes): a
 *     third of the offers (not fixed_amount) get two or three versions
 *     that differ only in rate values (fuzz_gen_schedule), added with
 *     inc_engine_add_offer_schedule; every check above holds for them,
 *     a row's rate value being one some version lists.
 *
 * With FUZZ_CALC_STATS set in the environment the harness prints, at exit,
 * how the inputs ended.  Build and run: `make fuzz` (mk/checks.mk);
 * reproduce a crash with `test/fuzz/fuzz_calc FILE`.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/engine/forecast.h"
#include "core/numbers/rational.h"
#include "fuzz_checks.h"
#include "fuzz_common.h"
#include "fuzz_rules.h"
#include "fuzz_world.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OFFERS	3				/* offer documents per input; twins add more */
#define MAX_PROPS	8
#define MAX_EXTRA_CONVERSIONS 3

static FuzzArena engine_arena;	/* offers, engines: the whole input */
static uint64_t last_diag_hash; /* of the last completed participant */
static FuzzArena participant_arena; /* one participant's calculation */

/* ---- outcome counts, printed at exit when FUZZ_CALC_STATS is set ---------- */

static struct
{
	unsigned long inputs;
	unsigned long no_offer;		/* no document accepted: built-ins used */
	unsigned long completed;	/* participants calculated */
	unsigned long rows;
	unsigned long diagnosed;	/* offers diagnosed */
	unsigned long invalid;		/* expected conversion / property errors */
	unsigned long range;		/* expected INC_ERR_RANGE */
	unsigned long small;		/* inputs in the small world */
	unsigned long compared;		/* fast and exact paths compared */
	unsigned long gated;		/* runs without the offers that pay nothing */
	unsigned long gated_failed; /* ... of a participant that failed with them */
	unsigned long grouped;		/* units compared with their reference */
	unsigned long forecasts;	/* forecasts completed */
	unsigned long scheduled;	/* offers given a rate schedule */
}			stats;

static void
PrintStats(void)
{
	fprintf(stderr, "fuzz_calc stats: %lu inputs, %lu on built-in offers, "
			"%lu participants calculated, %lu rows, %lu offers diagnosed, "
			"%lu invalid-input errors, %lu range errors, %lu inputs with small "
			"numbers only, %lu fast/exact comparisons, %lu runs without the offers "
			"certainly failing a requirement (%lu of a failed participant), %lu group "
			"units compared with their reference, %lu forecasts, %lu offers with "
			"a rate schedule\n",
			stats.inputs, stats.no_offer, stats.completed, stats.rows, stats.diagnosed,
			stats.invalid, stats.range, stats.small, stats.compared, stats.gated,
			stats.gated_failed, stats.grouped, stats.forecasts, stats.scheduled);
	fuzz_rules_stats(stderr);
}

/* ---- failures ------------------------------------------------------------ */

static jmp_buf *fail_jump;
static bool parsing;			/* no inc_fail may happen while parsing */
static bool small_world;		/* see fuzz_small_dec: no overflow is possible */
static const IncEngine *calculating;	/* the engine inside inc_engine_calculate */
static const char *calculating_participant;
static IncErrKind last_fail_kind;	/* of the last expected failure */
static char last_fail_message[2048];

/*
 * CheckPosition: the engine's position while it fails: the participant
 * being calculated, and for a missing conversion the very transaction the
 * message names.
 */
static void
CheckPosition(const IncFailure *f)
{
	const char *participant;
	const char *transaction_id;
	const char *named;

	if (calculating == NULL)
		return;
	if (!inc_engine_position(calculating, &participant, &transaction_id))
		fuzz_bug("no engine position during a calculation", f->message);
	if (strcmp(participant, calculating_participant) != 0)
		fuzz_bug("engine position names another participant", participant);
	if (f->kind == INC_ERR_NO_CONVERSION || f->kind == INC_ERR_NULL ||
		f->kind == INC_ERR_NO_EXCHANGE_RATE)
	{
		const char *prefix = f->kind == INC_ERR_NULL ? "of transaction \"" : "for transaction \"";
		char		want[256];

		named = strstr(f->message, prefix);
		if (named == NULL || transaction_id == NULL)
			fuzz_bug("data error without its transaction", f->message);
		snprintf(want, sizeof(want), "%s%s\"", prefix, transaction_id);
		if (strncmp(named, want, strlen(want)) != 0)
			fuzz_bug("engine position names another transaction", f->message);
	}
	if (f->kind == INC_ERR_NULL)
	{
		char		want[256];

		snprintf(want, sizeof(want), "of participant \"%s\" is NULL", calculating_participant);
		if (strstr(f->message, want) == NULL || f->subject == NULL)
			fuzz_bug("NULL error without its participant or column", f->message);
	}
}

static void
FailHook(const IncFailure *f)
{
	if (f->kind == INC_ERR_INTERNAL || f->kind == INC_ERR_INVALID || parsing ||
		fail_jump == NULL || f->message == NULL || f->message[0] == '\0')
	{
		fprintf(stderr, "fuzz_calc: unexpected inc_fail(%d)%s: %s\n", (int) f->kind,
				parsing ? " while parsing an offer" : "",
				f->message ? f->message : "(null)");
		abort();
	}
	CheckPosition(f);
	last_fail_kind = f->kind;
	snprintf(last_fail_message, sizeof(last_fail_message), "%s", f->message);
	if (f->kind == INC_ERR_NO_CONVERSION || f->kind == INC_ERR_PROPERTY_NOT_NUMBER ||
		f->kind == INC_ERR_NULL || f->kind == INC_ERR_NO_EXCHANGE_RATE)
	{
		/* the error names the transaction or the participant */
		if (strstr(f->message, "for transaction \"") == NULL &&
			strstr(f->message, "of participant \"") == NULL)
			fuzz_bug("invalid-input error names no transaction or participant", f->message);
		if (f->kind == INC_ERR_PROPERTY_NOT_NUMBER && f->subject == NULL)
			fuzz_bug("property error without the property", f->message);
		stats.invalid++;
	}
	else
	{
		if (small_world)
			fuzz_bug("out-of-range error on small numbers", f->message);
		stats.range++;
	}
	longjmp(*fail_jump, 1);
}

/* ---- properties ---------------------------------------------------------- */

typedef struct PropTable
{
	int			n;
	const char *keys[MAX_PROPS];
	IncPropStatus status[2][MAX_PROPS]; /* per participant */
	IncDec		value[2][MAX_PROPS];
} PropTable;

static const char *const Participants[2] = {"retailer_a", "retailer_b"};

static IncPropStatus
Property(void *ctx, const char *participant_key, const char *property_key,
		 IncDec *value)
{
	PropTable  *t = ctx;
	int			p = strcmp(participant_key, Participants[1]) == 0 ? 1 : 0;
	int			i;

	for (i = 0; i < t->n; i++)
	{
		if (strcmp(t->keys[i], property_key) != 0)
			continue;
		if (t->status[p][i] == INC_PROP_FOUND)
			*value = t->value[p][i];
		return t->status[p][i];
	}
	fuzz_bug("property looked up that the engine did not list", property_key);
	return INC_PROP_MISSING;
}

/* ---- the offers' rates listings ------------------------------------------ */

/* Key of a listed rate: offer, rate key, SKU ("" for a stepped tier). */
static char *
Join3(const char *a, const char *b, const char *c)
{
	size_t		la = strlen(a),
				lb = strlen(b),
				lc = strlen(c);
	char	   *s = inc_alloc(la + lb + lc + 3);

	memcpy(s, a, la);
	s[la] = '\037';
	memcpy(s + la + 1, b, lb);
	s[la + lb + 1] = '\037';
	memcpy(s + la + lb + 2, c, lc + 1);
	return s;
}

/*
 * RateKey: the key of a listed rate with its value: a rate schedule's
 * versions list one rate key with several values.
 */
static char *
RateKey(const char *offer_key, const char *rate_key, const char *sku_key, const IncDec *value)
{
	char		text[INC_NUM_BUF];

	inc_dec_format_short(value, text, sizeof(text));
	return Join3(offer_key, rate_key, Join3(sku_key, text, ""));
}

/*
 * RateItem: what a rate is of in RateKey: its SKU, "product:" and its
 * product for a standard rate of a product (docs/reference.md, Products),
 * "" for a stepped tier.
 */
static const char *
RateItem(const char *sku_key, const char *product_key)
{
	if (product_key)
		return Join3("product:", product_key, "");
	return sku_key ? sku_key : "";
}

/* ListRate: record one rate of the listing (rate_key, SKU, value) -> rate value. */
static void
ListRate(void *ctx, const IncRateRow *row)
{
	IncStrMap  *rates = ctx;
	IncDec	   *value = inc_alloc(sizeof(IncDec));

	EXPECT(row->rate_key != NULL && row->rate_key[0] != '\0');
	EXPECT(fuzz_dec_form(&row->rate_value, -1));
	EXPECT((row->sku_key == NULL) ==
		   (row->offer->strategy == INC_STEPPED || row->product_key != NULL));
	EXPECT(row->product_key == NULL || row->offer->strategy == INC_STANDARD);
	EXPECT((row->threshold != NULL) == (row->offer->strategy == INC_STEPPED));
	*value = row->rate_value;
	*inc_strmap_slot(rates, RateKey(row->offer->offer_key, row->rate_key,
									RateItem(row->sku_key, row->product_key),
									&row->rate_value)) = value;
}

/* ListedUnder: a version's listing, recorded under its offer's key (a twin's). */
typedef struct ListedUnder
{
	IncStrMap  *rates;
	const IncOffer *offer;
} ListedUnder;

static void
ListVersionRate(void *ctx, const IncRateRow *row)
{
	ListedUnder *l = ctx;
	IncRateRow	copy = *row;

	copy.offer = l->offer;
	ListRate(l->rates, &copy);
}

/* ListVersionRates: the rates of a schedule version of offer o, as o's. */
static void
ListVersionRates(const IncOffer *o, const IncOffer *version, IncStrMap *rates)
{
	ListedUnder l = {rates, o};

	inc_offer_rates(version, ListVersionRate, &l);
}

/* ---- row checks ---------------------------------------------------------- */

/* One fixed pool's rows: their sum and the pool. */
typedef struct PoolSum
{
	IncRat		sum;
	IncDec		pool;
} PoolSum;

typedef struct Run
{
	FuzzRows	out;			/* offers, rows and diagnostics */
	const IncStrMap *rates;		/* the listings of the offers */
	const IncTxn *txns;
	int			ntxns;
	int			cap;
	char	  **triples;		/* "id\037offer\037rate_key" per row */
	IncStrMap  *pools;			/* pool key -> PoolSum */
	uint64_t	hash;			/* of every row's text, in any order */
	uint64_t	diag_hash;		/* of the diagnostics, in order */
} Run;

/* HashText: the rows' hash, a sum, so that it does not depend on their order. */
static void
HashText(Run *r, const char *s)
{
	uint64_t	h = fuzz_hash((const uint8_t *) s, strlen(s) + 1);

	r->hash += h * 1099511628211ULL ^ (h >> 29);
}

static void
Emit(void *ctx, const IncRow *row)
{
	Run		   *r = ctx;
	const IncOffer *o = row->offer;
	const IncDec *listed;
	char		desc[1024];
	char		b[8][INC_NUM_BUF];
	bool		ours = false;
	int			i;

	for (i = 0; i < r->out.noffers; i++)
		ours |= o == r->out.offers[i];
	EXPECT(ours);
	EXPECT(row->txn >= r->txns && row->txn < r->txns + r->ntxns);
	EXPECT(row->txn->nulls == 0);
	EXPECT(row->rate_key != NULL && row->rate_key[0] != '\0');
	snprintf(desc, sizeof(desc), "offer %s txn %s rate_key %s: %s %s %s %s %s %s %s %s",
			 o->offer_key, row->txn->transaction_id, row->rate_key,
			 fuzz_dec_text(&row->rate_value, b[0]), fuzz_dec_text(&row->pay_rate, b[1]),
			 fuzz_dec_text(&row->incentivized_quantity, b[2]),
			 fuzz_dec_text(&row->incentivized_amount, b[3]),
			 fuzz_dec_text(&row->incentive_amount, b[4]),
			 fuzz_dec_text(&row->contribution, b[5]),
			 row->effective_rate_null ? "NULL" : fuzz_dec_text(&row->effective_rate, b[6]),
			 row->rate_measure ? row->rate_measure : "(null)");
	fuzz_check_row(row, desc);

	/* the rate is one the offer lists, with this SKU and value */
	listed = inc_strmap_get(r->rates, RateKey(o->offer_key, row->rate_key,
											  o->strategy == INC_STEPPED ? "" :
											  RateItem(row->txn->sku_key, row->product_key),
											  &row->rate_value));
	EXPECT_ROW(listed != NULL && inc_dec_cmp(listed, &row->rate_value) == 0, desc);

	/* kept for the uniqueness and diagnostics checks */
	if (r->out.nrows == r->cap)
	{
		int			cap = r->cap ? r->cap * 2 : 64;
		char	  **t = inc_alloc(sizeof(char *) * (size_t) cap);
		IncRow	   *rows = inc_alloc(sizeof(IncRow) * (size_t) cap);

		if (r->out.nrows)
		{
			memcpy(t, r->triples, sizeof(char *) * (size_t) r->out.nrows);
			memcpy(rows, r->out.rows, sizeof(IncRow) * (size_t) r->out.nrows);
		}
		r->triples = t;
		r->out.rows = rows;
		r->cap = cap;
	}
	((IncRow *) r->out.rows)[r->out.nrows] = *row;
	((IncRow *) r->out.rows)[r->out.nrows].rate_key = inc_strdup(row->rate_key);
	r->triples[r->out.nrows++] = Join3(row->txn->transaction_id, o->offer_key,
								   row->rate_key);

	/* fixed pools: standard per (entry, SKU), stepped one per tier */
	if (o->calculator == INC_FIXED_AMOUNT)
	{
		void	  **slot = inc_strmap_slot(r->pools,
										   Join3(o->offer_key, row->rate_key,
												 o->strategy == INC_STANDARD ?
												 RateItem(row->txn->sku_key, row->product_key) :
												 ""));
		PoolSum    *ps = *slot;
		IncRat		amount;

		if (ps == NULL)
		{
			ps = inc_alloc(sizeof(PoolSum));
			inc_rat_from_int(&ps->sum, 0);
			ps->pool = row->rate_value;
			*slot = ps;
		}
		EXPECT_ROW(inc_dec_cmp(&ps->pool, &row->rate_value) == 0, desc);
		inc_rat_from_dec(&amount, &row->incentive_amount);
		inc_rat_add(&ps->sum, &ps->sum, &amount);
	}

	HashText(r, desc);
	stats.rows++;
}

static int
CompareStrings(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* CheckRun: the checks that need all of a participant's rows. */
static void
CheckRun(Run *r)
{
	uint32_t	i;
	int			k;
	char	  **sorted = inc_alloc(sizeof(char *) * (size_t) (r->out.nrows + 1));

	if (r->out.nrows)
		memcpy(sorted, r->triples, sizeof(char *) * (size_t) r->out.nrows);
	if (r->out.nrows > 1)
		qsort(sorted, (size_t) r->out.nrows, sizeof(char *), CompareStrings);
	for (k = 1; k < r->out.nrows; k++)
		EXPECT_ROW(strcmp(sorted[k - 1], sorted[k]) != 0, sorted[k]);

	for (i = 0; i <= r->pools->mask; i++)
	{
		const PoolSum *ps = r->pools->entries[i].value;
		IncRat		pool;

		if (r->pools->entries[i].key == NULL)
			continue;
		inc_rat_from_dec(&pool, &ps->pool);
		inc_rat_round(&pool, &pool, 2);
		EXPECT_ROW(inc_rat_cmp(&pool, &ps->sum) == 0, r->pools->entries[i].key);
	}
}

/* ---- diagnostics --------------------------------------------------------- */

static void
Diagnose(void *ctx, const IncOffer *offer, const char *participant_key,
		 const char *group_key, const char *json)
{
	Run		   *r = ctx;

	(void) participant_key;
	(void) group_key;
	/* every offer once, in offer order */
	EXPECT(r->out.ndiagnosed < r->out.noffers && offer == r->out.offers[r->out.ndiagnosed]);
	EXPECT(json != NULL);
	r->out.diagnostics[r->out.ndiagnosed++] = inc_strdup(json);
	r->diag_hash = (r->diag_hash ^ fuzz_hash((const uint8_t *) json, strlen(json))) * 1099511628211ULL;
	stats.diagnosed++;
}

/* ---- running participants ------------------------------------------------ */

/* What the engines are built from, so that two of them are alike. */
typedef struct World
{
	const IncOffer *offers[FUZZ_MAX_OFFERS];	/* the documents', then twins */
	int			noffers;
	FuzzWindows windows;		/* enrollment windows of the participants */
	int			nextra;
	const char *extra_from[MAX_EXTRA_CONVERSIONS];
	const char *extra_to[MAX_EXTRA_CONVERSIONS];
	IncDec		extra_factor[MAX_EXTRA_CONVERSIONS];
	IncStrMap  *sku_uom;
	IncStrMap  *rates;
} World;

/*
 * AddOffer: offer o to e; one with a rate schedule (fuzz_gen_schedule)
 * through inc_engine_add_offer_schedule, as the glue hands it over: its
 * effective dates and versions, o itself the current one.
 */
static void
AddOffer(IncEngine *e, const IncOffer *o)
{
	int32_t    *from;
	const IncOffer **versions;
	int			s;

	if (o->nschedule == 0)
	{
		inc_engine_add_offer(e, o);
		return;
	}
	from = inc_alloc(sizeof(int32_t) * (size_t) o->nschedule);
	versions = inc_alloc(sizeof(IncOffer *) * (size_t) o->nschedule);
	for (s = 0; s < o->nschedule; s++)
	{
		/* the first date is ignored: any value */
		from[s] = s == 0 ? 0 : o->schedule[s].effective_from;
		versions[s] = o->schedule[s].offer;
	}
	inc_engine_add_offer_schedule(e, o, o->nschedule, from, versions);
}

/* NewEngine: an engine over w, as the glue builds one. */
static IncEngine *
NewEngine(const World *w, bool diagnostics)
{
	static const struct
	{
		const char *from;
		const char *to;
		const char *factor;
	}			shipped[] = {
		{"gal", "qt", "4"}, {"gal", "pt", "8"}, {"gal", "fl_oz", "128"},
		{"gal", "l", "3.785411784"}, {"l", "ml", "1000"}, {"lb", "oz", "16"},
		{"ton", "lb", "2000"}, {"kg", "g", "1000"}, {"lb", "kg", "0.45359237"}
	};
	/* the currencies of fuzz_gen_txns: EUR has none, USD -> CAD both ways */
	static const struct
	{
		const char *from;
		const char *to;
		const char *date;
		const char *rate;
	}			rates[] = {
		{"USD", "CAD", "2025-01-01", "1.25"}, {"USD", "CAD", "2026-07-01", "1.3333"},
		{"CAD", "USD", "2026-03-01", "0.7"}, {"CAD", "USD", "2026-07-01", "0.75"},
		{"CAD", "USD", "2026-10-01", "0.7"}
	};
	IncEngine  *e = inc_engine_create();
	uint32_t	i;
	int			k;

	for (k = 0; k < w->noffers; k++)
		AddOffer(e, w->offers[k]);
	for (k = 0; k < (int) (sizeof(shipped) / sizeof(shipped[0])); k++)
	{
		IncDec		f;

		inc_dec_parse(shipped[k].factor, strlen(shipped[k].factor), &f);
		inc_engine_add_conversion(e, shipped[k].from, shipped[k].to, &f);
	}
	for (k = 0; k < w->nextra; k++)
		inc_engine_add_conversion(e, w->extra_from[k], w->extra_to[k], &w->extra_factor[k]);
	for (k = 0; k < (int) (sizeof(rates) / sizeof(rates[0])); k++)
	{
		IncDec		r;
		int32_t		day;

		inc_dec_parse(rates[k].rate, strlen(rates[k].rate), &r);
		(void) inc_date_parse(rates[k].date, &day);
		inc_engine_add_exchange_rate(e, rates[k].from, rates[k].to, day, r);
	}
	for (i = 0; i <= w->sku_uom->mask; i++)
		if (w->sku_uom->entries[i].key)
			inc_engine_set_sku_uom(e, w->sku_uom->entries[i].key,
								   w->sku_uom->entries[i].value);
	if (diagnostics)
		inc_engine_set_diagnostics(e, Diagnose, NULL);
	inc_engine_set_enrollments(e, fuzz_windows, (void *) &w->windows);
	inc_engine_prepare(e);
	return e;
}

/*
 * RunParticipant: calculate one participant in its own arena; false on an
 * expected error.  The row hash goes to *hash.
 */
static bool
RunParticipant(IncEngine *e, bool diagnostics, const World *w, int participant,
			   const IncTxn *txns, int ntxns, PropTable *props, uint64_t *hash)
{
	jmp_buf		jb;
	Run		   *r;
	int			i;

	fuzz_arena = &participant_arena;
	if (setjmp(jb) != 0)
	{
		fail_jump = NULL;
		calculating = NULL;
		fuzz_arena_reset(&participant_arena);
		fuzz_arena = &engine_arena;
		return false;
	}
	fail_jump = &jb;
	r = inc_alloc(sizeof(Run));
	/* the engine's: an offer with a schedule is its copy */
	for (i = 0; i < w->noffers; i++)
		r->out.offers[i] = inc_engine_offer(e, i);
	r->out.noffers = w->noffers;
	r->rates = w->rates;
	r->txns = txns;
	r->ntxns = ntxns;
	r->pools = inc_strmap_create();
	if (diagnostics)
		inc_engine_set_diagnostics(e, Diagnose, r);
	calculating = e;
	calculating_participant = Participants[participant];
	inc_engine_calculate(e, Participants[participant], txns, ntxns,
						 Property, props, Emit, r);
	calculating = NULL;
	CheckRun(r);
	fuzz_check_rules(&r->out, txns, ntxns, Participants[participant], &w->windows,
					 w->sku_uom, Property, props);
	if (diagnostics)
	{
		fuzz_check_diagnostics(&r->out);
		fuzz_check_rules_diagnostics(&r->out);
	}
	stats.completed++;
	*hash = r->hash ^ (uint64_t) r->out.nrows;
	last_diag_hash = r->diag_hash;
	fail_jump = NULL;
	fuzz_arena_reset(&participant_arena);
	fuzz_arena = &engine_arena;
	return true;
}

/* SameDec: a and b are the same decimal, scale and all. */
static bool
SameDec(const IncDec *a, const IncDec *b)
{
	return a->coef == b->coef && a->scale == b->scale;
}

/* The offers a forecast of one participant outside groups has had a row of. */
static const IncOffer *forecast_seen[64];
static int	forecast_nseen;

/* CollectForecast: one forecast row checked and hashed (in order). */
static void
CollectForecast(void *ctx, const IncForecastRow *row)
{
	uint64_t   *hash = ctx;
	const char *key = row->offer->offer_key;
	IncRat		a,
				days;
	IncDec		accrual;
	char		desc[1024];
	char		b[6][INC_NUM_BUF];
	int			i;

	if (row->elapsed_days < 1 || row->elapsed_days > row->span_days)
		fuzz_bug("forecast days out of range", key);
	if (row->group_key != NULL || strcmp(row->participant_key, Participants[0]) != 0)
		fuzz_bug("a forecast row of another participant, or of a group", key);
	for (i = 0; i < forecast_nseen; i++)
		if (forecast_seen[i] == row->offer)
			fuzz_bug("two forecast rows of one participant and offer", key);
	if (forecast_nseen < (int) (sizeof(forecast_seen) / sizeof(forecast_seen[0])))
		forecast_seen[forecast_nseen++] = row->offer;
	inc_rat_from_dec(&a, &row->projected_earnings);
	inc_rat_from_int(&days, row->elapsed_days);
	inc_rat_mul(&a, &a, &days);
	inc_rat_from_int(&days, row->span_days);
	inc_rat_div(&a, &a, &days);
	accrual = inc_rat_to_dec(&a, 2);
	if (inc_dec_cmp(&accrual, &row->earned_to_date) < 0)
		accrual = row->earned_to_date;
	if (!SameDec(&accrual, &row->accrual_to_date))
		fuzz_bug("accrual_to_date is not max(round(projected x elapsed / span, 2), earned_to_date)", key);
	if (row->offer->strategy != INC_STEPPED &&
		(row->has_basis_to_date || row->has_projected_basis || row->rate_key_to_date ||
		 row->projected_rate_key))
		fuzz_bug("a forecast basis of an offer without tiers", key);
	if (row->elapsed_days == row->span_days &&
		(!SameDec(&row->earned_to_date, &row->projected_earnings) ||
		 row->has_basis_to_date != row->has_projected_basis ||
		 (row->has_basis_to_date && !SameDec(&row->basis_to_date, &row->projected_basis)) ||
		 row->rate_key_to_date != row->projected_rate_key))
		fuzz_bug("the span is over, but the projection differs from the actual calculation", key);
	snprintf(desc, sizeof(desc), "%s %d/%d %s %s %s %s %s %s %s %s", key, row->elapsed_days,
			 row->span_days,
			 row->has_basis_to_date ? fuzz_dec_text(&row->basis_to_date, b[0]) : "-",
			 row->has_projected_basis ? fuzz_dec_text(&row->projected_basis, b[1]) : "-",
			 row->rate_key_to_date ? row->rate_key_to_date : "-",
			 row->projected_rate_key ? row->projected_rate_key : "-",
			 fuzz_dec_text(&row->earned_to_date, b[2]),
			 fuzz_dec_text(&row->projected_earnings, b[3]),
			 fuzz_dec_text(&row->accrual_to_date, b[4]), "");
	*hash = *hash * 1099511628211ULL ^ fuzz_hash((const uint8_t *) desc, strlen(desc) + 1);
}

/*
 * RunForecast: participant A's forecast as of as_of on engine e (without
 * diagnostics), over its transactions dated on or before it, in its own
 * arena; false on an expected error.  The rows' hash goes to *hash.
 */
static bool
RunForecast(IncEngine *e, const IncTxn *txns, int ntxns, PropTable *props, int32_t as_of,
			uint64_t *hash)
{
	jmp_buf		jb;
	IncTxn	   *upto;
	int			n = 0;
	int			i;

	fuzz_arena = &participant_arena;
	if (setjmp(jb) != 0)
	{
		/* as a host reusing the engine after a failure does */
		inc_engine_clear_position(e);
		fail_jump = NULL;
		calculating = NULL;
		fuzz_arena_reset(&participant_arena);
		fuzz_arena = &engine_arena;
		return false;
	}
	fail_jump = &jb;
	upto = inc_alloc(sizeof(IncTxn) * (size_t) (ntxns + 1));
	for (i = 0; i < ntxns; i++)
		if (!(txns[i].nulls & INC_TXN_NULL_DATE) && txns[i].transaction_date <= as_of)
			upto[n++] = txns[i];
	*hash = 1;
	forecast_nseen = 0;
	calculating = e;
	calculating_participant = Participants[0];
	inc_engine_forecast(e, as_of, Participants[0], upto, n, Property, props, CollectForecast, hash);
	calculating = NULL;
	stats.forecasts++;
	fail_jump = NULL;
	fuzz_arena_reset(&participant_arena);
	fuzz_arena = &engine_arena;
	return true;
}

/*
 * CheckForecast: participant A's forecast as of a date around one of the
 * periods' bounds, and after every period: the same on the fast path and
 * with the big rationals (CollectForecast checks each row).
 */
static void
CheckForecast(IncEngine *e, FuzzDriver *d, const FuzzVocab *v, const IncTxn *txns, int ntxns,
			  PropTable *props)
{
	int32_t		dates[2];
	int32_t		last = v->ends[0];
	int			k;

	for (k = 1; k < v->nperiods; k++)
		if (v->ends[k] > last)
			last = v->ends[k];
	k = (int) fuzz_take(d, (uint32_t) v->nperiods);
	dates[0] = (fuzz_take(d, 2) ? v->starts[k] : v->ends[k]) + (int32_t) fuzz_take(d, 61) - 30;
	dates[1] = last + 1;
	for (k = 0; k < 2; k++)
	{
		uint64_t	fast,
					exact;
		bool		fast_ok = RunForecast(e, txns, ntxns, props, dates[k], &fast);
		bool		exact_ok;

		inc_set_exact_only(true);
		exact_ok = RunForecast(e, txns, ntxns, props, dates[k], &exact);
		inc_set_exact_only(false);
		if (fast_ok != exact_ok)
			fuzz_bug(fast_ok ? "a forecast failed with the exact arithmetic only"
					 : "a forecast failed on the fast path only", NULL);
		if (fast_ok && fast != exact)
			fuzz_bug("the fast path and the exact arithmetic give different forecasts", NULL);
	}
}

/*
 * ShuffledResolved: a copy of txns in another order (a permutation drawn
 * from d), each transaction's SKU and unit resolved to e's ids, as the
 * glue hands them over.  Call it in the engine's arena (units are
 * interned).
 */
static IncTxn *
ShuffledResolved(IncEngine *e, FuzzDriver *d, const IncTxn *txns, int n)
{
	IncTxn	   *copy = inc_alloc(sizeof(IncTxn) * (size_t) (n + 1));
	int			i;

	memcpy(copy, txns, sizeof(IncTxn) * (size_t) n);
	for (i = n - 1; i > 0; i--)
	{
		int			j = (int) fuzz_take(d, (uint32_t) i + 1);
		IncTxn		t = copy[i];

		copy[i] = copy[j];
		copy[j] = t;
	}
	for (i = 0; i < n; i++)
	{
		IncTxn	   *t = &copy[i];

		t->sku_id = inc_engine_sku_id(e, t->sku_key, strlen(t->sku_key));
		if (t->sku_id)
			t->sku_key = inc_engine_sku_key(e, t->sku_id);
		if (t->nulls & INC_TXN_NULL_UOM)
			continue;			/* the glue leaves a NULL unit at id 0, "" */
		t->uom_id = inc_engine_uom_id(e, t->uom_key, strlen(t->uom_key));
		t->uom_key = inc_engine_uom_key(e, t->uom_id);
	}
	return copy;
}

/*
 * CheckGated: participant A again, without the offers whose requirement is
 * certainly unmet for it: they pay nothing, so they raise no data error
 * either (docs/reference.md, Program rules).  A's rows are the same; a
 * failure is the very same data error (a range error, outside the small
 * world, may be theirs: their diagnostics still price the strategy).
 */
static void
CheckGated(const World *w, bool diagnostics, const IncTxn *txns, int ntxns, PropTable *props,
		   bool a_ok, uint64_t hash_a, IncErrKind a_kind, const char *a_message)
{
	World	   *rest = inc_alloc(sizeof(World));
	uint64_t	hash = 0;
	bool		ok;
	int			k;

	*rest = *w;
	rest->noffers = 0;
	for (k = 0; k < w->noffers; k++)
		if (w->offers[k]->rules.nrequirements == 0 ||
			!fuzz_certainly_unmet(w->offers[k], txns, ntxns, Participants[0], &w->windows,
								  w->sku_uom, Property, props))
			rest->offers[rest->noffers++] = w->offers[k];
	if (rest->noffers == w->noffers)
		return;
	stats.gated++;
	if (!a_ok)
		stats.gated_failed++;
	ok = RunParticipant(NewEngine(rest, diagnostics), diagnostics, rest, 0, txns, ntxns, props,
						&hash);
	if (a_ok)
	{
		if (!ok)
			fuzz_bug("participant A failed without offers that pay it nothing", last_fail_message);
		if (hash != hash_a)
			fuzz_bug("offers that pay nothing because of a requirement changed the rows", NULL);
		return;
	}
	if (a_kind == INC_ERR_RANGE)
		return;
	if (ok)
		fuzz_bug("a data error from an offer that pays nothing because of a requirement",
				 a_message);
	if (last_fail_kind != a_kind || strcmp(last_fail_message, a_message) != 0)
		fuzz_bug("another data error without the offers that pay nothing", a_message);
}

/* ---- participant groups -------------------------------------------------- */

/* The unit of CheckGroups: the group, then A and B (byte order). */
static const char *const GroupKeys[3] = {"coop", "retailer_a", "retailer_b"};

/*
 * The rows of a group run as text, each led by its participant and
 * group_key.  A reference run's rows come from copies of the unit's
 * transactions (own): who names each copy's participant, and group its
 * group_key (or NULL).
 */
typedef struct GroupRows
{
	int			n;
	int			cap;
	char	  **rows;
	const IncTxn *own;
	const int  *who;
	const char *group;
} GroupRows;

static void
GroupEmit(void *ctx, const IncRow *row)
{
	GroupRows  *g = ctx;
	char		b[8][INC_NUM_BUF];
	char		text[1024];
	const char *participant = row->participant_key;
	const char *group = row->group_key;

	if (g->own)
	{
		participant = GroupKeys[g->who[row->txn - g->own]];
		group = g->group;
	}
	snprintf(text, sizeof(text), "%s %s %s %s %s %s %s %s %s %s %s",
			 participant, group ? group : "-",
			 row->offer->offer_key, row->txn->transaction_id, row->rate_key,
			 fuzz_dec_text(&row->rate_value, b[0]), fuzz_dec_text(&row->pay_rate, b[1]),
			 fuzz_dec_text(&row->incentivized_quantity, b[2]),
			 fuzz_dec_text(&row->incentivized_amount, b[3]),
			 fuzz_dec_text(&row->incentive_amount, b[4]),
			 fuzz_dec_text(&row->contribution, b[5]));
	if (g->n == g->cap)
	{
		int			cap = g->cap ? g->cap * 2 : 64;
		char	  **rows = inc_alloc(sizeof(char *) * (size_t) cap);

		if (g->n)
			memcpy(rows, g->rows, sizeof(char *) * (size_t) g->n);
		g->rows = rows;
		g->cap = cap;
	}
	g->rows[g->n++] = inc_strdup(text);
}

/* GroupText: the rows of participant (NULL: all) of g, sorted, joined. */
static char *
GroupText(const GroupRows *g, const char *participant)
{
	char	  **sorted = inc_alloc(sizeof(char *) * (size_t) (g->n + 1));
	size_t		len = 1;
	int			n = 0,
				i;
	char	   *out,
			   *p;

	for (i = 0; i < g->n; i++)
		if (participant == NULL ||
			(strncmp(g->rows[i], participant, strlen(participant)) == 0 &&
			 g->rows[i][strlen(participant)] == ' '))
		{
			sorted[n++] = g->rows[i];
			len += strlen(g->rows[i]) + 1;
		}
	if (n > 1)
		qsort(sorted, (size_t) n, sizeof(char *), CompareStrings);
	out = p = inc_alloc(len);
	for (i = 0; i < n; i++)
	{
		size_t		l = strlen(sorted[i]);

		memcpy(p, sorted[i], l);
		p[l] = '\n';
		p += l + 1;
	}
	*p = '\0';
	return out;
}

/*
 * GroupRun: the unit of txns (flags per key) through engine e, or with
 * reference, each aggregation key as a participant of its own that owns
 * every transaction carrying it (e's offers then aggregate by
 * participant); false on an expected error.  The text of the rows goes to
 * *text, that of A's rows to *text_a, in the engine arena.
 */
static bool
GroupRun(IncEngine *e, bool reference, const IncTxn *txns, int ntxns, const uint8_t *flags,
		 PropTable *props, char **text, char **text_a)
{
	jmp_buf		jb;
	GroupRows  *g;
	int			k,
				i;

	fuzz_arena = &participant_arena;
	if (setjmp(jb) != 0)
	{
		fail_jump = NULL;
		fuzz_arena_reset(&participant_arena);
		fuzz_arena = &engine_arena;
		return false;
	}
	fail_jump = &jb;
	g = inc_alloc(sizeof(GroupRows));
	if (!reference)
	{
		IncUnit		unit;

		memset(&unit, 0, sizeof(unit));
		unit.nkeys = 3;
		unit.pages = NULL;
		unit.keys = GroupKeys;
		unit.flags = flags;
		inc_engine_calculate_unit(e, &unit, txns, ntxns, Property, props, GroupEmit, g);
	}
	else
		for (k = 0; k < 3; k++)
		{
			IncTxn	   *own = inc_alloc(sizeof(IncTxn) * (size_t) (ntxns + 1));
			int		   *who = inc_alloc(sizeof(int) * (size_t) (ntxns + 1));
			int			n = 0;

			for (i = 0; i < ntxns; i++)
				if (txns[i].aggregation == k)
				{
					own[n] = txns[i];
					own[n].participant = own[n].aggregation = 0;
					who[n++] = txns[i].participant;
				}
			if (n == 0)
				continue;
			g->own = own;
			g->who = who;
			g->group = k == 0 ? GroupKeys[0] : NULL;
			inc_engine_calculate(e, GroupKeys[k], own, n, Property, props, GroupEmit, g);
		}
	fail_jump = NULL;
	fuzz_arena = &engine_arena;
	*text = GroupText(g, NULL);
	*text_a = GroupText(g, GroupKeys[1]);
	fuzz_arena_reset(&participant_arena);
	return true;
}

/*
 * CheckGroups (docs/reference.md, Participant groups): A and B members of
 * the group "coop" -- A throughout, B from a date drawn from the input
 * (before it B is its own aggregation key; so is a transaction without a
 * date) -- with every offer of w aggregated by group (those whose
 * enrollment is open and that have no requirement of scope member; B's
 * transaction ids renamed, ids being unique in a unit).  The unit's rows
 * equal the reference's (GroupRun), or both fail; and A's rows of a call
 * that wants A only are A's rows of the whole unit.
 */
static void
CheckGroups(const World *w, FuzzDriver *d, IncTxn *const *txns, const int *ntxns,
			PropTable *props)
{
	World	   *grouped = inc_alloc(sizeof(World));
	World	   *alone = inc_alloc(sizeof(World));
	static const uint8_t everyone[3] = {INC_KEY_GROUP | INC_KEY_VISIBLE,
	INC_KEY_REPORT | INC_KEY_VISIBLE, INC_KEY_REPORT | INC_KEY_VISIBLE};
	static const uint8_t only_a[3] = {INC_KEY_GROUP | INC_KEY_VISIBLE,
	INC_KEY_REPORT | INC_KEY_VISIBLE, INC_KEY_VISIBLE};
	IncTxn	   *unit = inc_alloc(sizeof(IncTxn) * (size_t) (ntxns[0] + ntxns[1] + 1));
	int32_t		joins = txns[1] && ntxns[1] > 0 ?
		txns[1][fuzz_take(d, (uint32_t) ntxns[1])].transaction_date : 0;
	char	   *got,
			   *got_a,
			   *want,
			   *mine,
			   *a;
	bool		got_ok,
				want_ok;
	int			n = 0,
				k,
				p,
				i;

	*grouped = *w;
	*alone = *w;
	grouped->noffers = alone->noffers = 0;
	for (k = 0; k < w->noffers; k++)
	{
		IncOffer   *by_group,
				   *by_participant;

		if (w->offers[k]->rules.enrollment == INC_ENROLLMENT_REQUIRED ||
			w->offers[k]->rules.nmember_requirements > 0)
			continue;
		by_group = inc_alloc(sizeof(IncOffer));
		by_participant = inc_alloc(sizeof(IncOffer));
		*by_group = *w->offers[k];
		*by_participant = *w->offers[k];
		by_group->aggregation = INC_AGGREGATE_GROUP;
		by_participant->aggregation = INC_AGGREGATE_PARTICIPANT;
		grouped->offers[grouped->noffers++] = by_group;
		alone->offers[alone->noffers++] = by_participant;
	}
	if (grouped->noffers == 0)
		return;
	for (p = 0; p < 2; p++)
		for (i = 0; i < ntxns[p]; i++)
		{
			IncTxn	   *t = &unit[n++];

			*t = txns[p][i];
			if (p == 1)
			{
				char	   *id = inc_strdup(t->transaction_id);

				id[0] = 'U';
				t->transaction_id = id;
			}
			t->participant = p + 1;
			t->aggregation = p == 0 ||
				(!(t->nulls & INC_TXN_NULL_DATE) && t->transaction_date >= joins) ? 0 : p + 1;
		}

	got_ok = GroupRun(NewEngine(grouped, false), false, unit, n, everyone, props, &got, &got_a);
	want_ok = GroupRun(NewEngine(alone, false), true, unit, n, everyone, props, &want, &a);
	stats.grouped++;
	if (got_ok != want_ok)
		fuzz_bug(got_ok ? "a group's reference failed, its unit did not" :
				 "a group's unit failed, its reference did not", last_fail_message);
	if (!got_ok)
		return;
	if (strcmp(got, want) != 0)
	{
		fprintf(stderr, "unit:\n%s\nreference:\n%s\n", got, want);
		fuzz_bug("a group's rows differ from its reference's", NULL);
	}
	if (!GroupRun(NewEngine(grouped, false), false, unit, n, only_a, props, &mine, &a))
		fuzz_bug("a member's own call failed, the whole unit's did not", last_fail_message);
	if (strcmp(mine, got_a) != 0)
	{
		fprintf(stderr, "A alone:\n%s\nA of the unit:\n%s\n", mine, got_a);
		fuzz_bug("a member's rows differ when it is calculated alone", NULL);
	}
}

/* ---- entry point --------------------------------------------------------- */

/* AcceptOffers: the offers of the input's parts, else built-in ones. */
static void
AcceptOffers(World *w, FuzzDriver *d, const uint8_t *const *parts,
			 const size_t *lens, int nparts)
{
	int			k;

	parsing = true;
	for (k = 0; k < nparts; k++)
	{
		IncOfferError err;
		IncOffer   *o = inc_offer_parse((const char *) parts[k], lens[k], &err);
		int			j;
		bool		dup = false;

		if (o == NULL)
			continue;
		for (j = 0; j < w->noffers; j++)
			dup |= strcmp(w->offers[j]->offer_key, o->offer_key) == 0;
		if (!dup)				/* offer_key is the table's primary key */
			w->offers[w->noffers++] = o;
	}
	if (w->noffers == 0)
	{
		/* one to three built-in offers, distinct */
		int			want = 1 + (int) fuzz_take(d, MAX_OFFERS);
		bool		used[16] = {false};

		stats.no_offer++;
		for (k = 0; k < want; k++)
		{
			int			pick = (int) fuzz_take(d, (uint32_t) fuzz_nbuiltin);
			IncOfferError err;
			IncOffer   *o;

			while (used[pick])
				pick = (pick + 1) % fuzz_nbuiltin;
			used[pick] = true;
			o = inc_offer_parse(fuzz_builtin_offers[pick],
								strlen(fuzz_builtin_offers[pick]), &err);
			if (o == NULL)
				fuzz_bug("built-in offer rejected", err.message);
			w->offers[w->noffers++] = o;
		}
	}
	parsing = false;
	/* a third of the offers get a rate schedule (twins share it) */
	for (k = 0; k < w->noffers; k++)
		if (w->offers[k]->calculator != INC_FIXED_AMOUNT && fuzz_take(d, 3) == 0)
		{
			fuzz_gen_schedule(d, (IncOffer *) w->offers[k]);
			stats.scheduled++;
		}
	w->noffers = fuzz_add_twins(w->offers, w->noffers, FUZZ_MAX_OFFERS);
	w->rates = inc_strmap_create();
	for (k = 0; k < w->noffers; k++)
	{
		int			s;

		inc_offer_rates(w->offers[k], ListRate, w->rates);
		for (s = 0; s < w->offers[k]->nschedule; s++)
			ListVersionRates(w->offers[k], w->offers[k]->schedule[s].offer, w->rates);
	}
}

static void
RunInput(const uint8_t *data, size_t size)
{
	const uint8_t *parts[MAX_OFFERS + 1];
	size_t		lens[MAX_OFFERS + 1];
	int			nparts = 0;
	size_t		start = 0;
	size_t		i;
	FuzzDriver	d;
	World		w;
	FuzzVocab  *v;
	IncEngine  *e,
			   *plain;
	bool		diagnostics;
	PropTable  *props;
	const char *const *keys;
	int			nkeys;
	IncTxn	   *txns[2];
	int			ntxns[2];
	uint64_t	hash_a,
				hash_b,
				hash_a2,
				hash_plain,
				hash_exact,
				hash_shuffled;
	IncTxn	   *shuffled;
	bool		exact_ok,
				a_ok;
	uint64_t	diag_a;
	bool		extra_small = true;
	bool		plain_ok;
	IncErrKind	a_kind;
	static char a_message[2048];
	int			k;
	int			p;

	/* split at NULs: offers ..., driver */
	for (i = 0; i <= size && nparts < MAX_OFFERS + 1; i++)
	{
		if (i == size || data[i] == 0)
		{
			parts[nparts] = data + start;
			lens[nparts++] = i - start;
			start = i + 1;
		}
	}
	memset(&d, 0, sizeof(d));
	memset(&w, 0, sizeof(w));
	d.state = fuzz_hash(data, size);
	small_world = false;
	if (nparts > 1)
	{
		/* the rest of the input, NULs and all, drives the generator */
		nparts--;
		d.p = parts[nparts];
		d.n = size - (size_t) (parts[nparts] - data);
	}
	AcceptOffers(&w, &d, parts, lens, nparts);

	/* a quarter of the inputs use small non-negative numbers only */
	d.tame = fuzz_take(&d, 4) == 0;
	diagnostics = fuzz_take(&d, 2) == 0;

	v = inc_alloc(sizeof(FuzzVocab));
	for (k = 0; k < w.noffers; k++)
		fuzz_vocab_offer(v, w.offers[k]);
	if (v->nskus == 0 || v->ntypes == 0 || v->nperiods == 0)
		fuzz_bug("accepted offer without SKUs, types or periods", w.offers[0]->offer_key);

	/* fuzzed conversions beside the shipped ones, and the SKU catalog */
	w.nextra = (int) fuzz_take(&d, MAX_EXTRA_CONVERSIONS + 1);
	for (k = 0; k < w.nextra; k++)
	{
		w.extra_from[k] = fuzz_pick_uom(&d, v);
		w.extra_to[k] = fuzz_pick_uom(&d, v);
		w.extra_factor[k] = fuzz_gen_dec(&d, true);
		/* used to multiply and to divide */
		extra_small &= fuzz_small_dec(&w.extra_factor[k], true, false);
	}
	w.sku_uom = inc_strmap_create();
	for (k = 0; k < v->nskus; k++)
	{
		uint32_t	choice = fuzz_take(&d, 4);

		if (choice != 0)
		{
			/* a stacked SKU is often measured in its conversion's unit */
			const char *uom = choice < 3 && v->sku_from[k] ? v->sku_from[k] :
				fuzz_pick_uom(&d, v);

			*inc_strmap_slot(w.sku_uom, v->skus[k]) = (void *) uom;
		}
	}
	fuzz_gen_windows(&d, v, &w.windows, Participants);
	e = NewEngine(&w, diagnostics);
	plain = diagnostics ? NewEngine(&w, false) : NULL;

	/* every SKU the engine indexes came from the offers */
	keys = inc_engine_sku_keys(e, &nkeys);
	for (k = 0; k < nkeys; k++)
	{
		bool		found = false;
		int			j;

		for (j = 0; j < v->nskus && !found; j++)
			found = strcmp(keys[k], v->skus[j]) == 0;
		EXPECT(found || v->nskus == FUZZ_MAX_VOCAB);
	}

	/* properties per participant */
	props = inc_alloc(sizeof(PropTable));
	keys = inc_engine_property_keys(e, &nkeys);
	EXPECT(inc_engine_needs_properties(e) == (nkeys > 0));
	for (k = 0; k < nkeys && k < MAX_PROPS; k++)
	{
		props->keys[props->n] = keys[k];
		for (p = 0; p < 2; p++)
		{
			uint32_t	s = fuzz_take(&d, 8);

			props->status[p][props->n] = s == 0 ? INC_PROP_MISSING :
				s == 1 ? INC_PROP_NOT_NUMBER : INC_PROP_FOUND;
			props->value[p][props->n] = fuzz_gen_dec(&d, false);
		}
		props->n++;
	}
	if (nkeys > MAX_PROPS)
		return;					/* the lookup table would be incomplete */

	for (p = 0; p < 2; p++)
		txns[p] = fuzz_gen_txns(&d, v, w.sku_uom, &ntxns[p]);

	small_world = extra_small;
	for (k = 0; k < w.noffers && small_world; k++)
		small_world = fuzz_small_offer(w.offers[k]);
	for (p = 0; p < 2 && small_world; p++)
		for (k = 0; k < ntxns[p] && small_world; k++)
			small_world = fuzz_small_dec(&txns[p][k].quantity, false, true) &&
				fuzz_small_dec(&txns[p][k].amount, false, true);
	/* a property can be a stepped offer's threshold value */
	for (p = 0; p < 2 && small_world; p++)
		for (k = 0; k < props->n && small_world; k++)
			small_world = props->status[p][k] != INC_PROP_FOUND ||
				fuzz_small_dec(&props->value[p][k], false, false);
	if (small_world)
		stats.small++;

	/* diagnostics never change the rows, and only add ways to fail */
	plain_ok = plain && RunParticipant(plain, false, &w, 0, txns[0], ntxns[0], props,
									   &hash_plain);
	a_ok = RunParticipant(e, diagnostics, &w, 0, txns[0], ntxns[0], props, &hash_a);
	diag_a = last_diag_hash;
	a_kind = last_fail_kind;
	snprintf(a_message, sizeof(a_message), "%s", last_fail_message);
	CheckGated(&w, diagnostics, txns[0], ntxns[0], props, a_ok, hash_a, a_kind, a_message);

	/* the fast path and the big rationals give the same rows, or both fail */
	inc_set_exact_only(true);
	exact_ok = RunParticipant(e, diagnostics, &w, 0, txns[0], ntxns[0], props, &hash_exact);
	inc_set_exact_only(false);
	if (exact_ok != a_ok)
		fuzz_bug(a_ok ? "participant A failed with the exact arithmetic only"
				 : "participant A failed on the fast path only", NULL);
	if (a_ok && (hash_exact != hash_a || last_diag_hash != diag_a))
		fuzz_bug("the fast path and the exact arithmetic give different rows or diagnostics", NULL);
	stats.compared++;

	if (!a_ok)
		return;					/* diagnostics may fail alone: they price every tier */
	if (plain && !plain_ok)
		fuzz_bug("calculation failed without diagnostics only", NULL);
	if (plain && hash_plain != hash_a)
		fuzz_bug("diagnostics changed participant A's rows", NULL);

	/* any order, ids resolved by the host: the same rows */
	shuffled = ShuffledResolved(e, &d, txns[0], ntxns[0]);
	if (!RunParticipant(e, diagnostics, &w, 0, shuffled, ntxns[0], props, &hash_shuffled))
		fuzz_bug("participant A failed shuffled, with resolved ids", NULL);
	if (hash_shuffled != hash_a || last_diag_hash != diag_a)
		fuzz_bug("participant A's rows or diagnostics differ shuffled, with resolved ids", NULL);

	CheckGroups(&w, &d, txns, ntxns, props);

	/* the forecast's engine has no diagnostics */
	CheckForecast(plain ? plain : e, &d, v, txns[0], ntxns[0], props);

	if (!RunParticipant(e, diagnostics, &w, 1, txns[1], ntxns[1], props, &hash_b))
		return;
	if (!RunParticipant(e, diagnostics, &w, 0, txns[0], ntxns[0], props, &hash_a2))
		fuzz_bug("participant A failed the second time only", NULL);
	if (hash_a != hash_a2)
		fuzz_bug("participant A's rows differ after participant B", NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool hooked = false;
	jmp_buf		jb;

	if (!hooked)
	{
		fuzz_name = "fuzz_calc";
		fuzz_arena = &engine_arena;
		inc_set_hooks(fuzz_alloc, FailHook);
		if (getenv("FUZZ_CALC_STATS"))
			atexit(PrintStats);
		hooked = true;
	}
	stats.inputs++;
	fuzz_arena = &engine_arena;
	/* an expected error while building the engine ends the input too */
	if (setjmp(jb) == 0)
	{
		fail_jump = &jb;
		RunInput(data, size);
	}
	fail_jump = NULL;
	calculating = NULL;
	parsing = false;
	small_world = false;
	fuzz_arena_reset(&participant_arena);
	fuzz_arena_reset(&engine_arena);
	fuzz_arena = &engine_arena;
	return 0;
}
