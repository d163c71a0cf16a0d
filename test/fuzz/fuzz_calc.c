/*
 * fuzz_calc.c
 *    libFuzzer harness over a whole calculation: fuzzed offers, fuzzed
 *    transactions, the engine (inc_engine_*) end to end.
 *
 * Input form: the bytes are split at NUL bytes.  With no NUL the whole
 * input is one offer document; otherwise the last part drives the
 * transaction generator and the parts before it (at most MAX_OFFERS) are
 * offer documents.  Once the driver bytes run out, a generator seeded with
 * a hash of the input takes over, so a plain offer document (the seed
 * corpus) already yields transactions.  When no part is an acceptable
 * offer (most mutations break the JSON), one to three built-in offers
 * covering every strategy and calculator are used instead, so every input
 * calculates something.
 *
 * From the accepted offers the generator takes its vocabulary (SKUs,
 * transaction types, periods, units, property keys) and builds what the
 * PostgreSQL glue would hand the engine: the SKU catalog (some SKUs with a
 * unit, some without), the shipped unit conversions plus a few fuzzed
 * ones, properties (missing, numeric or not a number), and two
 * participants' transactions, sorted by transaction_id, with types,
 * dates around the period ends, SKUs (some unknown), quantities and
 * amounts as decimal strings (huge, tiny, negative, many digits) and units
 * (some with no conversion).
 *
 * The run mirrors the host's memory model: the engine and offers live in
 * a long-lived arena, each participant's working data in an arena freed
 * right after that participant (as the glue resets its memory context),
 * so a pointer kept across participants is a use after free that
 * AddressSanitizer reports.  Participants run A, B, then A again.
 *
 * Outcomes: inc_fail with INC_ERR_NO_CONVERSION or
 * INC_ERR_PROPERTY_NOT_NUMBER (its message must name the transaction or
 * the participant) or INC_ERR_RANGE (overflow) is expected and ends the
 * input, as an error ends the query; INC_ERR_INTERNAL aborts, and so does
 * INC_ERR_RANGE when every number involved is small (see SmallDec).  A
 * quarter of the inputs ("tame") draw only small non-negative numbers.
 * Checked on every completed participant:
 *   - every number of a row has its SPEC 3.1 scale (or the shortest form
 *     for rate values and exact pay rates), fits 38 digits, and its text
 *     (inc_dec_format) parses back unchanged with inc_dec_parse;
 *   - a percent pay rate is rate / 100, a dollars one the rate;
 *   - the effective rate is NULL exactly when incentivized_amount is 0.00,
 *     else round(incentive_amount / incentivized_amount, 4);
 *   - the contribution is 1.000000 outside stacked offers, in [0, 1] in
 *     them; measures fit the calculator; row pointers are ours;
 *   - (transaction_id, offer_key, incentive_rate_key) is unique;
 *   - the rows of each fixed_amount pool add up to the pool rounded to
 *     cents, exactly (SPEC 3.4);
 *   - participant A's rows are the same both times (no state leaks from B).
 *
 * With FUZZ_CALC_STATS set in the environment the harness prints, at exit,
 * how the inputs ended (rows, expected errors, small-number inputs).
 * Build and run: `make fuzz` (mk/checks.mk); reproduce a crash with
 * `test/fuzz/fuzz_calc FILE`.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/engine.h"
#include "core/offer.h"
#include "core/rational.h"
#include "core/strmap.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OFFERS	3
#define MAX_TXNS	24
#define MAX_VOCAB	48
#define MAX_PROPS	8

/* ---- arenas behind inc_alloc --------------------------------------------- */

typedef struct ArenaBlock
{
	struct ArenaBlock *next;
} ArenaBlock;

#define ARENA_HEADER 16

typedef struct Arena
{
	ArenaBlock *blocks;
} Arena;

static Arena engine_arena;		/* offers, engine: the whole input */
static Arena participant_arena; /* one participant's calculation */
static Arena *current_arena = &engine_arena;

static void *
ArenaAlloc(size_t size)
{
	ArenaBlock *b = calloc(1, ARENA_HEADER + size);

	if (b == NULL)
		return NULL;			/* inc_alloc reports it */
	b->next = current_arena->blocks;
	current_arena->blocks = b;
	return (char *) b + ARENA_HEADER;
}

static void
ArenaReset(Arena *a)
{
	while (a->blocks)
	{
		ArenaBlock *next = a->blocks->next;

		free(a->blocks);
		a->blocks = next;
	}
}

/* ---- outcome counts, printed at exit when FUZZ_CALC_STATS is set ---------- */

static struct
{
	unsigned long inputs;
	unsigned long no_offer;		/* no document accepted: built-ins used */
	unsigned long completed;	/* participants calculated */
	unsigned long rows;
	unsigned long invalid;		/* expected INC_ERR_INVALID */
	unsigned long range;		/* expected INC_ERR_RANGE */
	unsigned long small;		/* inputs in the small world */
}			stats;

static void
PrintStats(void)
{
	fprintf(stderr, "fuzz_calc stats: %lu inputs, %lu on built-in offers, "
			"%lu participants calculated, %lu rows, %lu invalid-input errors, "
			"%lu range errors, %lu inputs with small numbers only\n", stats.inputs,
			stats.no_offer, stats.completed, stats.rows, stats.invalid, stats.range,
			stats.small);
}

/* ---- failures ------------------------------------------------------------ */

static void Bug(const char *what, const char *detail) INC_NORETURN;

static void
Bug(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_calc: %s%s%s\n", what, detail ? ": " : "",
			detail ? detail : "");
	abort();
}

#define EXPECT(cond) \
	do { if (!(cond)) Bug("invariant failed", #cond); } while (0)
#define EXPECT_ROW(cond, text) \
	do { if (!(cond)) Bug("invariant failed: " #cond, (text)); } while (0)

static jmp_buf *fail_jump;
static bool parsing;			/* no inc_fail may happen while parsing */
static bool small_world;		/* see SmallDec: no overflow is possible */

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
	/* a missing conversion or a non-numeric property: the expected end */
	if (f->kind == INC_ERR_NO_CONVERSION || f->kind == INC_ERR_PROPERTY_NOT_NUMBER)
	{
		/* SPEC 5: the error names the transaction or the property */
		if (strstr(f->message, "for transaction \"") == NULL &&
			strstr(f->message, "of participant \"") == NULL)
			Bug("invalid-input error names no transaction or participant", f->message);
		stats.invalid++;
	}
	else
	{
		if (small_world)
			Bug("out-of-range error on small numbers", f->message);
		stats.range++;
	}
	longjmp(*fail_jump, 1);
}

/* ---- the driver: input bytes, then a seeded generator -------------------- */

typedef struct Driver
{
	const uint8_t *p;
	size_t		n;
	size_t		pos;
	uint64_t	state;			/* xorshift64 once the bytes run out */
	bool		tame;			/* GenDec: small non-negative values only */
} Driver;

static uint32_t
NextByte(Driver *d)
{
	if (d->pos < d->n)
		return d->p[d->pos++];
	d->state ^= d->state << 13;
	d->state ^= d->state >> 7;
	d->state ^= d->state << 17;
	return (uint32_t) (d->state >> 24) & 0xff;
}

/* A value in [0, bound), bound >= 1. */
static uint32_t
Take(Driver *d, uint32_t bound)
{
	uint32_t	v = NextByte(d);

	if (bound > 256)
		v = (v << 8) | NextByte(d);
	return bound ? v % bound : 0;
}

static uint64_t
Fnv64(const uint8_t *p, size_t n)
{
	uint64_t	h = 1469598103934665603ULL;

	while (n-- > 0)
	{
		h ^= *p++;
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* ---- vocabulary of the offers ------------------------------------------- */

typedef struct Vocab
{
	int			nskus;
	const char *skus[MAX_VOCAB];
	const char *sku_from[MAX_VOCAB];	/* a stacked conversion's unit, or NULL */
	int			ntypes;
	const char *types[MAX_VOCAB];
	int			nuoms;
	const char *uoms[MAX_VOCAB];
	int			nperiods;
	int32_t		starts[MAX_VOCAB];
	int32_t		ends[MAX_VOCAB];
} Vocab;

/* Add s to list unless there; its index, or -1 when the list is full. */
static int
AddWord(const char **list, int *n, const char *s)
{
	int			i;

	for (i = 0; i < *n; i++)
		if (strcmp(list[i], s) == 0)
			return i;
	if (*n == MAX_VOCAB)
		return -1;
	list[*n] = s;
	return (*n)++;
}

static void
VocabFilters(Vocab *v, const IncFilter *f, int n)
{
	int			i,
				j;

	for (i = 0; i < n; i++)
	{
		AddWord(v->types, &v->ntypes, f[i].transaction_type);
		for (j = 0; j < f[i].nskus; j++)
			AddWord(v->skus, &v->nskus, f[i].sku_keys[j]);
	}
}

static void
VocabOffer(Vocab *v, const IncOffer *o)
{
	int			i,
				j;

	for (i = 0; i < o->nperiods && v->nperiods < MAX_VOCAB; i++)
	{
		v->starts[v->nperiods] = o->periods[i].start_date;
		v->ends[v->nperiods++] = o->periods[i].end_date;
	}
	for (i = 0; i < o->nprices; i++)
		AddWord(v->skus, &v->nskus, o->prices[i].sku_key);
	switch (o->strategy)
	{
		case INC_STANDARD:
			for (i = 0; i < o->nentries; i++)
			{
				AddWord(v->types, &v->ntypes, o->entries[i].transaction_type);
				for (j = 0; j < o->entries[i].nrates; j++)
					AddWord(v->skus, &v->nskus, o->entries[i].rates[j].sku_key);
			}
			break;
		case INC_STEPPED:
			VocabFilters(v, o->stepped.filters, o->stepped.nfilters);
			VocabFilters(v, o->stepped.threshold_filters,
						 o->stepped.nthreshold_filters);
			break;
		case INC_STACKED:
			for (i = 0; i < o->stacked.nsets; i++)
			{
				const IncSkuSet *s = &o->stacked.sets[i];

				AddWord(v->types, &v->ntypes, s->transaction_type);
				for (j = 0; j < s->nconversions; j++)
				{
					int			k = AddWord(v->skus, &v->nskus,
											s->conversions[j].sku_key);

					if (k >= 0 && v->sku_from[k] == NULL)
						v->sku_from[k] = s->conversions[j].from_uom;
					AddWord(v->uoms, &v->nuoms, s->conversions[j].from_uom);
				}
			}
			break;
	}
}

/* ---- fuzzed decimals ----------------------------------------------------- */

/*
 * A decimal as PostgreSQL numeric could hold it within the engine's
 * IncDec limits: small and cent amounts mostly, then the extremes.
 */
static IncDec
GenDec(Driver *d, bool positive)
{
	static const char *const extremes[] = {
		"0", "1", "-1", "1e30", "-1e30", "1e37", "-1e37",
		"99999999999999999999999999999999999999",
		"-99999999999999999999999999999999999999",
		"0.00000000000000000000000000000000000001",
		"-0.00000000000000000000000000000000000001",
		"3.785411784", "0.45359237", "0.00921875", "100.000", "-0.005",
		"0.005", "12345678901234567890.123456789012345678", "1.5e3", "2.50e1"
	};
	char		buf[96];
	size_t		len = 0;
	IncDec		v;
	uint32_t	kind = Take(d, d->tame ? 5 : 8);
	const char *sign = !d->tame && Take(d, 4) == 0 ? "-" : "";

	if (kind < 3)
		len = (size_t) snprintf(buf, sizeof(buf), "%s%u", sign, Take(d, 1000));
	else if (kind < 5)
	{
		uint32_t	cents = Take(d, 65536);

		len = (size_t) snprintf(buf, sizeof(buf), "%s%u.%02u",
								sign, cents / 100, cents % 100);
	}
	else if (kind < 7)
	{
		const char *e = extremes[Take(d, sizeof(extremes) / sizeof(extremes[0]))];

		len = strlen(e);
		memcpy(buf, e, len + 1);
	}
	else
	{
		/* up to 38 random digits, a random point, maybe an exponent */
		uint32_t	ndigits = 1 + Take(d, 38);
		uint32_t	point = Take(d, ndigits + 1);
		uint32_t	i;

		if (Take(d, 3) == 0)
			buf[len++] = '-';
		for (i = 0; i < ndigits; i++)
		{
			if (i == point && i > 0)
				buf[len++] = '.';
			buf[len++] = (char) ('0' + Take(d, 10));
		}
		if (Take(d, 4) == 0)
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, "e%d",
									 (int) Take(d, 81) - 40);
		buf[len] = '\0';
	}
	if (inc_dec_parse(buf, len, &v) != INC_DEC_OK)
		inc_dec_parse("7", 1, &v);
	if (positive && inc_dec_sign(&v) <= 0)
		inc_dec_parse("2.5", 3, &v);
	return v;
}

/* ---- the small world ----------------------------------------------------- */

/*
 * An input is "small" when every number the calculation multiplies by has
 * magnitude below 10^6 and at most 30 fraction digits, every one it
 * divides by is at least 0.001, and no transaction quantity or amount is
 * negative (so no sum of bases cancels).  Then every figure has at most
 * about 22 integer digits, far inside the 38 digits a reported IncDec
 * holds, and an INC_ERR_RANGE is a bug.  (The fraction digit bound leaves
 * out a known limit: a percent rate with more than 36 fraction digits has
 * an exact pay rate, rate / 100, beyond the 38-digit scale of an IncDec.)
 */
static bool
SmallDec(const IncDec *d, bool divisor, bool nonneg)
{
	static bool init = false;
	static IncDec million,
				minus_million,
				thousandth;

	if (!init)
	{
		inc_dec_parse("1000000", 7, &million);
		inc_dec_parse("-1000000", 8, &minus_million);
		inc_dec_parse("0.001", 5, &thousandth);
		init = true;
	}
	if (d->scale > 30)
		return false;
	if (inc_dec_cmp(d, &million) >= 0 || inc_dec_cmp(d, &minus_million) <= 0)
		return false;
	if (nonneg && inc_dec_sign(d) < 0)
		return false;
	return !divisor || inc_dec_cmp(d, &thousandth) >= 0;
}

/* Are the numbers of offer o small (see above)? */
static bool
SmallOffer(const IncOffer *o)
{
	int			i,
				j;

	for (i = 0; i < o->nprices; i++)
		if (!SmallDec(&o->prices[i].price, false, false))
			return false;
	switch (o->strategy)
	{
		case INC_STANDARD:
			for (i = 0; i < o->nentries; i++)
				for (j = 0; j < o->entries[i].nrates; j++)
					if (!SmallDec(&o->entries[i].rates[j].rate, false, false))
						return false;
			break;
		case INC_STEPPED:
			for (i = 0; i < o->stepped.ntiers; i++)
				if (!SmallDec(&o->stepped.tiers[i].value, false, false))
					return false;
			break;
		case INC_STACKED:
			for (i = 0; i < o->stacked.nsets; i++)
			{
				const IncSkuSet *s = &o->stacked.sets[i];

				for (j = 0; j < s->nconversions; j++)
					if (!SmallDec(&s->conversions[j].rate, true, false))
						return false;
				for (j = 0; j < s->nrates; j++)
					if (!SmallDec(&s->rates[j].rate, false, false))
						return false;
			}
			break;
	}
	return true;
}

/* ---- properties ---------------------------------------------------------- */

typedef struct PropTable
{
	int			n;
	const char *keys[MAX_PROPS];
	IncPropStatus status[2][MAX_PROPS];	/* per participant */
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
	Bug("property looked up that the engine did not list", property_key);
	return INC_PROP_MISSING;
}

/* ---- row checks ---------------------------------------------------------- */

/*
 * Is d an IncDec the host can turn into a numeric as SPEC 3.1 reports it:
 * exactly scale fraction digits (scale < 0: the shortest form, no
 * trailing fraction zero), within 38 digits, and text that
 * inc_dec_format writes and inc_dec_parse reads back unchanged?
 */
static bool
DecForm(const IncDec *d, int scale)
{
	char		buf[INC_NUM_BUF];
	IncDec		back;
	int			len;
	__int128	limit = 1;
	int			i;

	if (d->scale < 0 || d->scale > INC_DEC_MAX_SCALE)
		return false;
	if (scale >= 0 ? d->scale != scale : (d->scale > 0 && d->coef % 10 == 0))
		return false;
	for (i = 0; i < INC_DEC_MAX_DIGITS; i++)
		limit *= 10;
	if (d->coef >= limit || d->coef <= -limit)
		return false;
	len = inc_dec_format(d, buf, sizeof(buf));
	if (inc_dec_parse(buf, (size_t) len, &back) != INC_DEC_OK)
		return false;
	return back.coef == d->coef && back.scale == d->scale;
}

/* d as text, for messages. */
static const char *
DecText(const IncDec *d, char *buf)
{
	if (d->scale < 0 || d->scale > INC_DEC_MAX_SCALE)
		return "(bad scale)";
	inc_dec_format(d, buf, INC_NUM_BUF);
	return buf;
}

/* One fixed pool's rows: their sum and the pool. */
typedef struct PoolSum
{
	IncRat		sum;
	IncDec		pool;
} PoolSum;

typedef struct Run
{
	const IncOffer *offers[MAX_OFFERS];
	int			noffers;
	const IncTxn *txns;
	int			ntxns;
	int			nrows;
	int			cap;
	char	  **triples;		/* "id\037offer\037rate_key" per row */
	IncStrMap  *pools;			/* pool key -> PoolSum */
	uint64_t	hash;			/* of every row's text, in order */
} Run;

static void
HashText(Run *r, const char *s)
{
	r->hash ^= Fnv64((const uint8_t *) s, strlen(s) + 1);
	r->hash *= 1099511628211ULL;
}

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

static void
Emit(void *ctx, const IncRow *row)
{
	Run		   *r = ctx;
	const IncOffer *o = row->offer;
	char		desc[1024];
	char		b[8][INC_NUM_BUF];
	bool		ours = false;
	int			i;

	for (i = 0; i < r->noffers; i++)
		ours |= o == r->offers[i];
	EXPECT(ours);
	EXPECT(row->txn >= r->txns && row->txn < r->txns + r->ntxns);
	EXPECT(row->rate_key != NULL && row->rate_key[0] != '\0');
	snprintf(desc, sizeof(desc), "offer %s txn %s rate_key %s: %s %s %s %s %s %s %s %s",
			 o->offer_key, row->txn->transaction_id, row->rate_key,
			 DecText(&row->rate_value, b[0]), DecText(&row->pay_rate, b[1]),
			 DecText(&row->incentivized_quantity, b[2]),
			 DecText(&row->incentivized_amount, b[3]),
			 DecText(&row->incentive_amount, b[4]),
			 DecText(&row->contribution, b[5]),
			 row->effective_rate_null ? "NULL" : DecText(&row->effective_rate, b[6]),
			 row->rate_measure ? row->rate_measure : "(null)");

	/* measure */
	EXPECT_ROW(row->rate_measure != NULL &&
			   strcmp(row->rate_measure, o->calculator == INC_PERCENT_OF_AMOUNT ?
					  "percent" : "dollars") == 0, desc);

	/* SPEC 3.1 scales */
	EXPECT_ROW(DecForm(&row->rate_value, -1), desc);
	EXPECT_ROW(DecForm(&row->pay_rate, o->calculator == INC_FIXED_AMOUNT ? 6 : -1), desc);
	EXPECT_ROW(DecForm(&row->incentivized_quantity, 6), desc);
	EXPECT_ROW(DecForm(&row->incentivized_amount, 2), desc);
	EXPECT_ROW(DecForm(&row->incentive_amount, 2), desc);
	EXPECT_ROW(DecForm(&row->contribution, 6), desc);

	/* the rate value and a percent or dollars pay rate follow the offer */
	EXPECT_ROW(inc_dec_sign(&row->rate_value) >= 0, desc);
	if (o->calculator != INC_FIXED_AMOUNT)
	{
		IncRat		rate,
					pay,
					hundred;

		inc_rat_from_dec(&rate, &row->rate_value);
		inc_rat_from_dec(&pay, &row->pay_rate);
		if (o->calculator == INC_PERCENT_OF_AMOUNT)
		{
			inc_rat_from_int(&hundred, 100);
			inc_rat_mul(&pay, &pay, &hundred);
		}
		EXPECT_ROW(inc_rat_cmp(&rate, &pay) == 0, desc);
	}

	/* contribution: 1 outside stacked, within [0, 1] in it */
	if (o->strategy != INC_STACKED)
		EXPECT_ROW(row->contribution.coef == 1000000, desc);
	else
		EXPECT_ROW(row->contribution.coef >= 0 && row->contribution.coef <= 1000000,
				   desc);

	/* effective rate: NULL exactly for a zero amount, else the rounded ratio */
	EXPECT_ROW(row->effective_rate_null == (row->incentivized_amount.coef == 0), desc);
	if (!row->effective_rate_null)
	{
		IncRat		amount,
					incentive;
		IncDec		want;

		EXPECT_ROW(DecForm(&row->effective_rate, 4), desc);
		inc_rat_from_dec(&amount, &row->incentivized_amount);
		inc_rat_from_dec(&incentive, &row->incentive_amount);
		inc_rat_div(&incentive, &incentive, &amount);
		want = inc_rat_to_dec(&incentive, 4);
		EXPECT_ROW(want.coef == row->effective_rate.coef &&
				   want.scale == row->effective_rate.scale, desc);
	}

	/* uniqueness, checked when the participant is complete */
	if (r->nrows == r->cap)
	{
		int			cap = r->cap ? r->cap * 2 : 64;
		char	  **t = inc_alloc(sizeof(char *) * (size_t) cap);

		if (r->nrows)
			memcpy(t, r->triples, sizeof(char *) * (size_t) r->nrows);
		r->triples = t;
		r->cap = cap;
	}
	r->triples[r->nrows++] = Join3(row->txn->transaction_id, o->offer_key,
								   row->rate_key);

	/* fixed pools: standard per (entry, SKU), stepped one per tier */
	if (o->calculator == INC_FIXED_AMOUNT)
	{
		void	  **slot = inc_strmap_slot(r->pools,
										   Join3(o->offer_key, row->rate_key,
												 o->strategy == INC_STANDARD ?
												 row->txn->sku_key : ""));
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

/* Checks that need all of a participant's rows. */
static void
CheckRun(Run *r)
{
	uint32_t	i;
	int			k;

	if (r->nrows > 1)
		qsort(r->triples, (size_t) r->nrows, sizeof(char *), CompareStrings);
	for (k = 1; k < r->nrows; k++)
		EXPECT_ROW(strcmp(r->triples[k - 1], r->triples[k]) != 0, r->triples[k]);

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

/* ---- built-in offers ----------------------------------------------------- */

/*
 * When no part of the input is an acceptable offer (most mutations of a
 * document break it), the driver bytes calculate against one to three of
 * these instead, so such inputs still explore the transactions.  They
 * share SKUs "a", "b", "c" and cover every strategy and calculator.
 */
#define B_PERIODS "\"periods\":[{\"key\":\"p\",\"start_date\":\"2026-01-01\",\"end_date\":\"2026-12-31\"}," \
	"{\"key\":\"q\",\"start_date\":\"2026-07-01\",\"end_date\":\"2027-06-30\"}],"
#define B_HEAD(key, strategy, calc) \
	"{\"offer_key\":\"" key "\",\"strategy_key\":\"" strategy "\",\"calculator_key\":\"" calc "\"," B_PERIODS
#define B_RATE(sku, rate, measure) \
	"{\"sku_key\":\"" sku "\",\"rate\":" rate ",\"measure\":\"" measure "\"}"
#define B_FILTER(period, skus, type) \
	"{\"period_key\":\"" period "\",\"sku_keys\":[" skus "],\"transaction_type\":\"" type "\"}"
#define B_TIER(threshold, value, measure) \
	"{\"threshold\":" threshold ",\"value\":" value ",\"measure\":\"" measure "\"}"

static const char *const BuiltinOffers[] = {
	B_HEAD("b.standard.percent", "standard", "percent_of_amount")
	"\"prices\":[{\"sku_key\":\"a\",\"price\":50.0}],\"incentives\":["
	"{\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":["
	B_RATE("a", "3.0", "percent") "," B_RATE("b", "1.25", "percent") "]},"
	"{\"key\":\"e2\",\"period_key\":\"q\",\"transaction_type\":\"sell\",\"rates\":["
	B_RATE("a", "2", "percent") "]}]}",

	B_HEAD("b.standard.fixed", "standard", "fixed_amount")
	"\"incentives\":[{\"period_key\":\"p\",\"transaction_type\":\"buy\",\"rates\":["
	B_RATE("a", "1000", "dollars") "," B_RATE("c", "333.333", "dollars") "]}]}",

	B_HEAD("b.stepped.quantity", "stepped", "dollars_per_unit")
	"\"incentive\":{\"filters\":[" B_FILTER("p", "\"a\",\"b\"", "buy") "],"
	"\"threshold_definition\":{\"type\":\"aggregated_quantity\",\"filters\":["
	B_FILTER("p", "\"a\",\"b\",\"c\"", "buy") "," B_FILTER("q", "\"c\"", "sell") "]},"
	"\"rates\":[" B_TIER("0", "0.5", "dollars") "," B_TIER("100", "1.25", "dollars") ","
	B_TIER("-50", "0.1", "dollars") "]}}",

	B_HEAD("b.stepped.amount", "stepped", "percent_of_amount")
	"\"incentive\":{\"filters\":[" B_FILTER("q", "\"b\",\"c\"", "sell") "],"
	"\"threshold_definition\":{\"type\":\"aggregated_amount\",\"filters\":["
	B_FILTER("q", "\"b\"", "sell") "]},"
	"\"rates\":[" B_TIER("1000", "10", "percent") "," B_TIER("2000.0", "15", "percent") "]}}",

	B_HEAD("b.stepped.property", "stepped", "fixed_amount")
	"\"incentive\":{\"filters\":[" B_FILTER("p", "\"a\",\"c\"", "sell") "],"
	"\"threshold_definition\":{\"type\":\"property\",\"property\":{\"key\":\"bp\"}},"
	"\"rates\":[" B_TIER("80", "500", "dollars") "," B_TIER("100", "1000.005", "dollars") "]}}",

	B_HEAD("b.stacked", "stacked", "dollars_per_coverage_unit")
	"\"prices\":[{\"sku_key\":\"b\",\"price\":12.5}],\"incentive\":{\"sku_sets\":["
	"{\"key\":\"s\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":"
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"a\",\"rate\":1.0,\"from\":\"unit\"}]},"
	"\"rates\":[" B_RATE("a", "0", "dollars") "]},"
	"{\"key\":\"t\",\"period_key\":\"p\",\"transaction_type\":\"sell\",\"conversion\":"
	"{\"coverage_unit\":\"acre\",\"rates\":[{\"sku_key\":\"b\",\"rate\":0.00921875,\"from\":\"gal\"},"
	"{\"sku_key\":\"c\",\"rate\":2,\"from\":\"l\"}]},"
	"\"rates\":[" B_RATE("b", "0.75", "dollars") "," B_RATE("c", "1", "dollars") "]}],"
	"\"stacks\":[{\"sku_set_keys\":[\"s\",\"t\"]},{\"key\":\"t_only\",\"sku_set_keys\":[\"t\"]}]}}"
};

#define NBUILTIN ((int) (sizeof(BuiltinOffers) / sizeof(BuiltinOffers[0])))

/* ---- the transactions ---------------------------------------------------- */

static const char *const BaseUoms[] = {"gal", "qt", "l", "ml", "unit", "jug", "lb", "kg"};

static const char *
PickUom(Driver *d, const Vocab *v)
{
	uint32_t	n = (uint32_t) (sizeof(BaseUoms) / sizeof(BaseUoms[0]));
	uint32_t	i = Take(d, n + (uint32_t) v->nuoms);

	return i < n ? BaseUoms[i] : v->uoms[i - n];
}

static IncTxn *
GenTxns(Driver *d, const Vocab *v, IncStrMap *sku_uom, int *ntxns)
{
	int			n = (int) Take(d, MAX_TXNS + 1);
	IncTxn	   *txns = inc_alloc(sizeof(IncTxn) * (size_t) (n + 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		IncTxn	   *t = &txns[i];
		char		id[16];
		uint32_t	pick;

		snprintf(id, sizeof(id), "T%03d", i);	/* byte order = index order */
		t->transaction_id = inc_strdup(id);

		t->transaction_type = Take(d, 8) == 0 ? "other_type" :
			v->types[Take(d, (uint32_t) v->ntypes)];

		pick = Take(d, (uint32_t) v->nperiods);
		switch (Take(d, 8))
		{
			case 0:
				t->transaction_date = v->starts[pick] - 1;
				break;
			case 1:
				t->transaction_date = v->starts[pick];
				break;
			case 2:
				t->transaction_date = v->ends[pick];
				break;
			case 3:
				t->transaction_date = v->ends[pick] + 1;
				break;
			default:
				t->transaction_date = v->starts[pick] +
					(int32_t) ((uint32_t) (v->ends[pick] - v->starts[pick]) / 2);
				break;
		}

		pick = Take(d, 8) == 0 ? (uint32_t) v->nskus : Take(d, (uint32_t) v->nskus);
		t->sku_key = pick < (uint32_t) v->nskus ? v->skus[pick] : "unknown_sku";
		t->quantity = GenDec(d, false);

		/*
		 * Mostly the SKU's own unit (or, for a SKU with none, its stacked
		 * conversion's unit), so that most inputs calculate; sometimes any
		 * unit, which may have no conversion.
		 */
		if (Take(d, 16) == 0)
			t->uom_key = PickUom(d, v);
		else if (inc_strmap_get(sku_uom, t->sku_key) != NULL)
			t->uom_key = inc_strmap_get(sku_uom, t->sku_key);
		else if (pick < (uint32_t) v->nskus && v->sku_from[pick] != NULL)
			t->uom_key = v->sku_from[pick];
		else
			t->uom_key = PickUom(d, v);
		t->amount = GenDec(d, false);
	}
	*ntxns = n;
	return txns;
}

/* Calculate one participant in its own arena; false on an expected error. */
static bool
RunParticipant(IncEngine *e, const IncOffer *const *offers, int noffers,
			   int participant, const IncTxn *txns, int ntxns,
			   PropTable *props, uint64_t *hash)
{
	jmp_buf		jb;
	Run		   *r;
	int			i;

	current_arena = &participant_arena;
	if (setjmp(jb) != 0)
	{
		fail_jump = NULL;
		ArenaReset(&participant_arena);
		current_arena = &engine_arena;
		return false;
	}
	fail_jump = &jb;
	r = inc_alloc(sizeof(Run));
	for (i = 0; i < noffers; i++)
		r->offers[i] = offers[i];
	r->noffers = noffers;
	r->txns = txns;
	r->ntxns = ntxns;
	r->pools = inc_strmap_create();
	inc_engine_calculate(e, Participants[participant], txns, ntxns,
						 Property, props, Emit, r);
	CheckRun(r);
	stats.completed++;
	*hash = r->hash ^ (uint64_t) r->nrows;
	fail_jump = NULL;
	ArenaReset(&participant_arena);
	current_arena = &engine_arena;
	return true;
}

/* ---- entry point --------------------------------------------------------- */

static void
RunInput(const uint8_t *data, size_t size)
{
	const uint8_t *parts[MAX_OFFERS + 1];
	size_t		lens[MAX_OFFERS + 1];
	int			nparts = 0;
	size_t		start = 0;
	size_t		i;
	Driver		d;
	const IncOffer *offers[MAX_OFFERS];
	int			noffers = 0;
	Vocab	   *v;
	IncEngine  *e;
	IncStrMap  *sku_uom;
	PropTable  *props;
	const char *const *keys;
	int			nkeys;
	IncTxn	   *txns[2];
	int			ntxns[2];
	uint64_t	hash_a,
				hash_b,
				hash_a2;
	bool		extra_small = true;
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
	d.state = Fnv64(data, size);
	small_world = false;
	if (nparts > 1)
	{
		/* the rest of the input, NULs and all, drives the generator */
		nparts--;
		d.p = parts[nparts];
		d.n = size - (size_t) (parts[nparts] - data);
	}

	parsing = true;
	for (k = 0; k < nparts; k++)
	{
		IncOfferError err;
		IncOffer   *o = inc_offer_parse((const char *) parts[k], lens[k], &err);
		int			j;
		bool		dup = false;

		if (o == NULL)
			continue;
		for (j = 0; j < noffers; j++)
			dup |= strcmp(offers[j]->offer_key, o->offer_key) == 0;
		if (!dup)				/* offer_key is the table's primary key */
			offers[noffers++] = o;
	}
	if (noffers == 0)
	{
		/* one to three built-in offers, distinct */
		int			want = 1 + (int) Take(&d, MAX_OFFERS);
		bool		used[NBUILTIN] = {false};

		stats.no_offer++;
		for (k = 0; k < want; k++)
		{
			int			pick = (int) Take(&d, NBUILTIN);
			IncOfferError err;
			IncOffer   *o;

			while (used[pick])
				pick = (pick + 1) % NBUILTIN;
			used[pick] = true;
			o = inc_offer_parse(BuiltinOffers[pick], strlen(BuiltinOffers[pick]), &err);

			if (o == NULL)
				Bug("built-in offer rejected", err.message);
			offers[noffers++] = o;
		}
	}
	parsing = false;

	/* a quarter of the inputs use small non-negative numbers only */
	d.tame = Take(&d, 4) == 0;

	v = inc_alloc(sizeof(Vocab));
	for (k = 0; k < noffers; k++)
		VocabOffer(v, offers[k]);
	if (v->nskus == 0 || v->ntypes == 0 || v->nperiods == 0)
		Bug("accepted offer without SKUs, types or periods", offers[0]->offer_key);

	/* the engine, as the glue builds it */
	e = inc_engine_create();
	for (k = 0; k < noffers; k++)
		inc_engine_add_offer(e, offers[k]);
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
		int			extra = (int) Take(&d, 4);

		extra_small = true;

		for (k = 0; k < (int) (sizeof(shipped) / sizeof(shipped[0])); k++)
		{
			IncDec		f;

			inc_dec_parse(shipped[k].factor, strlen(shipped[k].factor), &f);
			inc_engine_add_conversion(e, shipped[k].from, shipped[k].to, &f);
		}
		while (extra-- > 0)
		{
			const char *from = PickUom(&d, v);
			const char *to = PickUom(&d, v);
			IncDec		f = GenDec(&d, true);

			/* used to multiply and to divide */
			extra_small &= SmallDec(&f, true, false);
			inc_engine_add_conversion(e, from, to, &f);
		}
	}
	sku_uom = inc_strmap_create();
	for (k = 0; k < v->nskus; k++)
	{
		uint32_t	choice = Take(&d, 4);

		if (choice != 0)
		{
			/* a stacked SKU is often measured in its conversion's unit */
			const char *uom = choice < 3 && v->sku_from[k] ? v->sku_from[k] :
				PickUom(&d, v);

			inc_engine_set_sku_uom(e, v->skus[k], uom);
			*inc_strmap_slot(sku_uom, v->skus[k]) = (void *) uom;
		}
	}
	inc_engine_prepare(e);

	/* every SKU the engine indexes came from the offers */
	keys = inc_engine_sku_keys(e, &nkeys);
	for (k = 0; k < nkeys; k++)
	{
		bool		found = false;
		int			j;

		for (j = 0; j < v->nskus && !found; j++)
			found = strcmp(keys[k], v->skus[j]) == 0;
		EXPECT(found || v->nskus == MAX_VOCAB);
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
			uint32_t	s = Take(&d, 8);

			props->status[p][props->n] = s == 0 ? INC_PROP_MISSING :
				s == 1 ? INC_PROP_NOT_NUMBER : INC_PROP_FOUND;
			props->value[p][props->n] = GenDec(&d, false);
		}
		props->n++;
	}
	if (nkeys > MAX_PROPS)
		return;					/* the lookup table would be incomplete */

	for (p = 0; p < 2; p++)
		txns[p] = GenTxns(&d, v, sku_uom, &ntxns[p]);

	small_world = extra_small;
	for (k = 0; k < noffers && small_world; k++)
		small_world = SmallOffer(offers[k]);
	for (p = 0; p < 2 && small_world; p++)
		for (k = 0; k < ntxns[p] && small_world; k++)
			small_world = SmallDec(&txns[p][k].quantity, false, true) &&
				SmallDec(&txns[p][k].amount, false, true);
	if (small_world)
		stats.small++;

	if (!RunParticipant(e, offers, noffers, 0, txns[0], ntxns[0], props, &hash_a))
		return;
	if (!RunParticipant(e, offers, noffers, 1, txns[1], ntxns[1], props, &hash_b))
		return;
	if (!RunParticipant(e, offers, noffers, 0, txns[0], ntxns[0], props, &hash_a2))
		Bug("participant A failed the second time only", NULL);
	if (hash_a != hash_a2)
		Bug("participant A's rows differ after participant B", NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool hooked = false;
	jmp_buf		jb;

	if (!hooked)
	{
		inc_set_hooks(ArenaAlloc, FailHook);
		if (getenv("FUZZ_CALC_STATS"))
			atexit(PrintStats);
		hooked = true;
	}
	stats.inputs++;
	current_arena = &engine_arena;
	/* an expected error while building the engine ends the input too */
	if (setjmp(jb) == 0)
	{
		fail_jump = &jb;
		RunInput(data, size);
	}
	fail_jump = NULL;
	parsing = false;
	small_world = false;
	ArenaReset(&participant_arena);
	ArenaReset(&engine_arena);
	current_arena = &engine_arena;
	return 0;
}
