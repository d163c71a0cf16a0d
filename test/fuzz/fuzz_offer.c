/*
 * fuzz_offer.c
 *    libFuzzer harness over the offer parser/validator (inc_offer_parse,
 *    the very parse the PostgreSQL glue runs on stored offers).
 *
 * Each input is taken as offer document text.  The core's hooks go to an
 * arena of calloc'd blocks, freed after every input (so AddressSanitizer
 * sees each allocation on its own and LeakSanitizer sees json-c's), and to
 * a fail hook that must never be reached: the parser reports every bad
 * document through IncOfferError, so any inc_fail() while parsing is a bug
 * (an INC_ERR_INTERNAL one, or an error that escapes the "invalid offer
 * KEY: PATH problem" form of docs/reference.md, Bad input) and aborts.
 *
 * Besides "no crash, no leak, no undefined behaviour", every outcome is
 * checked: a rejected document has a message in that form, and an
 * accepted one holds only what the offer rules allow (resolved indexes
 * in range, rates >= 0, conversion rates > 0, measures that fit the
 * calculator, tiers sorted with distinct thresholds, program rules within
 * their bounds, ...); its rates
 * listing has one row per rate; it is then indexed by an engine, as the
 * host does before calculating, and diagnosed for a participant without
 * transactions (valid JSON, once).
 *
 * Build and run: `make fuzz` (mk/checks.mk).  A crash file reproduces with
 * `test/fuzz/fuzz_offer FILE`.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine/engine.h"
#include "core/rules/rules.h"
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- fail hook ----------------------------------------------------------- */

static FuzzArena arena;
static jmp_buf *fail_jump;

static void
FailHook(const IncFailure *f)
{
	fprintf(stderr, "fuzz_offer: inc_fail(%d) while parsing an offer: %s\n",
			(int) f->kind, f->message);
	/*
	 * The parser must report every fault through IncOfferError; an error
	 * raised instead, of whatever kind, is a bug.  Jump back only to let
	 * the harness abort with the input still reported.
	 */
	if (fail_jump)
		longjmp(*fail_jump, 1);
	abort();
}

/* ---- checks on the outcome ----------------------------------------------- */

/* A string the model may hold: non-NULL, and non-empty when required. */
static void
CheckString(const char *s, bool nonempty)
{
	EXPECT(s != NULL);
	EXPECT(!nonempty || s[0] != '\0');
}

static void
CheckDec(const IncDec *d, int min_sign)
{
	char		buf[INC_NUM_BUF];
	IncDec		back;
	int			len;

	EXPECT(d->scale >= 0 && d->scale <= INC_DEC_MAX_SCALE);
	EXPECT(inc_dec_sign(d) >= min_sign);
	/* the text form parses back to the same value and scale */
	len = inc_dec_format(d, buf, sizeof(buf));
	EXPECT(inc_dec_parse(buf, (size_t) len, &back) == INC_DEC_OK);
	EXPECT(back.coef == d->coef && back.scale == d->scale);
}

static void
CheckPeriod(const IncOffer *o, int period)
{
	EXPECT(period >= 0 && period < o->nperiods);
}

static void
CheckMeasure(const IncOffer *o, const char *measure)
{
	CheckString(measure, true);
	EXPECT(strcmp(measure, o->calculator == INC_PERCENT_OF_AMOUNT ?
				  "percent" : "dollars") == 0);
}

/* A list of keys: n >= 0, each a non-empty string. */
static void
CheckKeys(char **keys, int n)
{
	int			j;

	EXPECT(n >= 0);
	for (j = 0; j < n; j++)
		CheckString(keys[j], true);
}

/* Filters: SKUs, products or both, and the exclusions (docs/reference.md, Products). */
static void
CheckFilters(const IncOffer *o, const IncFilter *f, int n)
{
	int			i;

	EXPECT(n > 0 && f != NULL);
	for (i = 0; i < n; i++)
	{
		CheckPeriod(o, f[i].period);
		CheckString(f[i].transaction_type, true);
		EXPECT(f[i].nskus > 0 || f[i].nproducts > 0);
		CheckKeys(f[i].sku_keys, f[i].nskus);
		CheckKeys(f[i].product_keys, f[i].nproducts);
		CheckKeys(f[i].exclude_sku_keys, f[i].nexclude_skus);
		CheckKeys(f[i].exclude_product_keys, f[i].nexclude_products);
	}
}

/*
 * CheckBaseline: a growth type has a baseline, by valid ordered dates or
 * by a property; any other type has none.
 */
static void
CheckBaseline(IncThresholdType type, const IncBaseline *b)
{
	if (!inc_threshold_growth(type))
	{
		EXPECT(b->kind == INC_BASELINE_NONE && b->property_key == NULL);
		return;
	}
	if (b->kind == INC_BASELINE_PROPERTY)
		CheckString(b->property_key, true);
	else
	{
		EXPECT(b->kind == INC_BASELINE_DATES && b->property_key == NULL);
		EXPECT(b->start_date <= b->end_date);
	}
}

/*
 * Rates: each of a SKU, or, where products may be (a standard entry's),
 * of a SKU or of a product, never both; a key at most once among its kind.
 */
static void
CheckSkuRates(const IncOffer *o, const IncSkuRate *r, int n, bool products)
{
	int			i,
				j;

	for (i = 0; i < n; i++)
	{
		EXPECT((r[i].sku_key == NULL) != (r[i].product_key == NULL));
		EXPECT(products || r[i].product_key == NULL);
		if (r[i].sku_key)
			CheckString(r[i].sku_key, true);
		else
			CheckString(r[i].product_key, true);
		CheckDec(&r[i].rate, 0);
		CheckMeasure(o, r[i].measure);
		for (j = 0; j < i; j++)
		{
			if (r[i].sku_key && r[j].sku_key)
				EXPECT(strcmp(r[i].sku_key, r[j].sku_key) != 0);
			if (r[i].product_key && r[j].product_key)
				EXPECT(strcmp(r[i].product_key, r[j].product_key) != 0);
		}
	}
}

/* Everything the offer rules promise about an accepted offer. */
static void
CheckOffer(const IncOffer *o)
{
	int			i,
				j,
				k;

	CheckString(o->offer_key, true);
	EXPECT(o->strategy == INC_STANDARD || o->strategy == INC_STEPPED ||
		   o->strategy == INC_STACKED);
	EXPECT((o->strategy == INC_STACKED) ==
		   (o->calculator == INC_DOLLARS_PER_COVERAGE_UNIT));
	EXPECT(o->nperiods > 0);
	for (i = 0; i < o->nperiods; i++)
	{
		CheckString(o->periods[i].key, true);
		EXPECT(o->periods[i].start_date <= o->periods[i].end_date);
		for (j = 0; j < i; j++)
			EXPECT(strcmp(o->periods[i].key, o->periods[j].key) != 0);
	}
	for (i = 0; i < o->nprices; i++)
	{
		CheckString(o->prices[i].sku_key, true);
		CheckDec(&o->prices[i].price, 0);
		EXPECT(inc_offer_price(o, o->prices[i].sku_key) == &o->prices[i].price);
		/* sorted by sku_key for the binary search, so distinct */
		if (i > 0)
			EXPECT(strcmp(o->prices[i - 1].sku_key, o->prices[i].sku_key) < 0);
	}

	switch (o->strategy)
	{
		case INC_STANDARD:
			EXPECT(o->nentries > 0);
			for (i = 0; i < o->nentries; i++)
			{
				const IncStandardEntry *e = &o->entries[i];

				CheckString(e->key, true);
				CheckPeriod(o, e->period);
				CheckString(e->transaction_type, true);
				EXPECT(e->nrates > 0);
				CheckSkuRates(o, e->rates, e->nrates, true);
				CheckKeys(e->exclude_sku_keys, e->nexclude_skus);
				CheckKeys(e->exclude_product_keys, e->nexclude_products);
				for (j = 0; j < i; j++)
					EXPECT(strcmp(e->key, o->entries[j].key) != 0);
			}
			break;
		case INC_STEPPED:
			{
				const IncStepped *st = &o->stepped;

				CheckFilters(o, st->filters, st->nfilters);
				if (st->threshold_type == INC_THRESHOLD_PROPERTY)
					CheckString(st->property_key, true);
				else
				{
					EXPECT(st->threshold_type == INC_THRESHOLD_AMOUNT ||
						   st->threshold_type == INC_THRESHOLD_QUANTITY ||
						   inc_threshold_growth(st->threshold_type));
					CheckFilters(o, st->threshold_filters, st->nthreshold_filters);
				}
				CheckBaseline(st->threshold_type, &st->baseline);
				if (st->pays_on == INC_PAYS_ON_GROWTH)
					EXPECT(inc_threshold_growth(st->threshold_type) &&
						   o->calculator != INC_FIXED_AMOUNT &&
						   st->tier_mode != INC_TIERS_INCREMENTAL);
				else
					EXPECT(st->pays_on == INC_PAYS_ON_ALL_VOLUME);
				EXPECT(st->ntiers > 0);
				for (i = 0; i < st->ntiers; i++)
				{
					CheckString(st->tiers[i].key, true);
					CheckDec(&st->tiers[i].threshold, -1);
					if (inc_threshold_growth(st->threshold_type))
					{
						static const IncDec minus_hundred = {-100, 0};

						EXPECT(inc_dec_cmp(&st->tiers[i].threshold, &minus_hundred) >= 0);
					}
					CheckDec(&st->tiers[i].value, 0);
					CheckMeasure(o, st->tiers[i].measure);
					/* sorted, thresholds distinct */
					if (i > 0)
						EXPECT(inc_dec_cmp(&st->tiers[i - 1].threshold,
										   &st->tiers[i].threshold) < 0);
					for (j = 0; j < i; j++)
						EXPECT(strcmp(st->tiers[i].key, st->tiers[j].key) != 0);
				}
				break;
			}
		case INC_STACKED:
			{
				const IncStacked *sk = &o->stacked;

				EXPECT(sk->nsets > 0 && sk->nstacks > 0);
				for (i = 0; i < sk->nsets; i++)
				{
					const IncSkuSet *s = &sk->sets[i];

					CheckString(s->key, true);
					CheckPeriod(o, s->period);
					CheckString(s->transaction_type, true);
					CheckString(s->coverage_unit, true);
					EXPECT(s->nconversions > 0);
					for (j = 0; j < s->nconversions; j++)
					{
						CheckString(s->conversions[j].sku_key, true);
						CheckString(s->conversions[j].from_uom, true);
						CheckDec(&s->conversions[j].rate, 1);
					}
					CheckSkuRates(o, s->rates, s->nrates, false);
					/* every pay rate's SKU is among the conversions */
					for (j = 0; j < s->nrates; j++)
					{
						bool		found = false;

						for (k = 0; k < s->nconversions && !found; k++)
							found = strcmp(s->rates[j].sku_key,
										   s->conversions[k].sku_key) == 0;
						EXPECT(found);
					}
					for (j = 0; j < i; j++)
						EXPECT(strcmp(s->key, sk->sets[j].key) != 0);
				}
				for (i = 0; i < sk->nstacks; i++)
				{
					const IncStack *st = &sk->stacks[i];

					CheckString(st->key, true);
					EXPECT(st->nsets > 0);
					for (j = 0; j < st->nsets; j++)
					{
						EXPECT(st->sets[j] >= 0 && st->sets[j] < sk->nsets);
						EXPECT(strcmp(sk->sets[st->sets[j]].coverage_unit,
									  sk->sets[st->sets[0]].coverage_unit) == 0);
						for (k = 0; k < j; k++)
							EXPECT(st->sets[j] != st->sets[k]);
					}
					for (j = 0; j < i; j++)
						EXPECT(strcmp(st->key, sk->stacks[j].key) != 0);
				}
				break;
			}
	}
}

/* The program rules an accepted offer may hold (docs/reference.md, Program rules). */
static void
CheckRules(const IncOffer *o)
{
	const IncRules *r = &o->rules;
	const char *json;
	int			i,
				j;

	EXPECT(r->enrollment == INC_ENROLLMENT_OPEN || r->enrollment == INC_ENROLLMENT_REQUIRED);
	/* match: grower only in a stacked offer */
	EXPECT(o->stacked.match == INC_MATCH_PARTICIPANT ||
		   (o->strategy == INC_STACKED && o->stacked.match == INC_MATCH_GROWER));
	if (o->strategy != INC_STEPPED)
		EXPECT(o->stepped.tier_mode == INC_TIERS_ALL_VOLUME &&
			   o->stepped.pays_on == INC_PAYS_ON_ALL_VOLUME);
	else if (o->stepped.tier_mode == INC_TIERS_INCREMENTAL)
	{
		EXPECT(o->calculator == INC_PERCENT_OF_AMOUNT || o->calculator == INC_DOLLARS_PER_UNIT);
		EXPECT(o->stepped.threshold_type != INC_THRESHOLD_PROPERTY);
		EXPECT(inc_dec_sign(&o->stepped.tiers[0].threshold) >= 0 ||
			   inc_threshold_growth(o->stepped.threshold_type));
	}
	else
		EXPECT(o->stepped.tier_mode == INC_TIERS_ALL_VOLUME);
	for (i = 0; i < r->nrequirements; i++)
	{
		const IncRequirement *q = &r->requirements[i];

		CheckString(q->key, true);
		CheckDec(&q->minimum, -1);
		if (q->type == INC_THRESHOLD_PROPERTY)
		{
			CheckString(q->property_key, true);
			EXPECT(q->nfilters == 0);
		}
		else
		{
			EXPECT(q->type == INC_THRESHOLD_AMOUNT || q->type == INC_THRESHOLD_QUANTITY ||
				   q->type == INC_THRESHOLD_DISTINCT_PRODUCTS || inc_threshold_growth(q->type));
			EXPECT(q->property_key == NULL);
			CheckFilters(o, q->filters, q->nfilters);
		}
		/* distinct_products: distinct products, a whole minimum 1..their number */
		if (q->type == INC_THRESHOLD_DISTINCT_PRODUCTS)
		{
			IncDec		m = inc_dec_trim(&q->minimum);
			int			k;

			EXPECT(q->nproducts > 0);
			EXPECT(m.scale == 0 && m.coef >= 1 && m.coef <= q->nproducts);
			for (j = 0; j < q->nproducts; j++)
			{
				CheckString(q->product_keys[j], true);
				for (k = 0; k < j; k++)
					EXPECT(strcmp(q->product_keys[j], q->product_keys[k]) != 0);
			}
		}
		else
			EXPECT(q->nproducts == 0);
		/* scope: member only in a group offer, grower only on summed types */
		EXPECT(q->scope == INC_SCOPE_GROUP || q->scope == INC_SCOPE_MEMBER ||
			   q->scope == INC_SCOPE_GROWER);
		if (q->scope == INC_SCOPE_MEMBER)
			EXPECT(o->aggregation == INC_AGGREGATE_GROUP);
		if (q->scope == INC_SCOPE_GROWER)
			EXPECT(q->type == INC_THRESHOLD_AMOUNT || q->type == INC_THRESHOLD_QUANTITY ||
				   q->type == INC_THRESHOLD_DISTINCT_PRODUCTS);
		CheckBaseline(q->type, &q->baseline);
		for (j = 0; j < i; j++)
			EXPECT(strcmp(q->key, r->requirements[j].key) != 0);
	}
	if (r->limits.has_minimum)
		CheckDec(&r->limits.minimum, 0);
	if (r->limits.has_maximum)
		CheckDec(&r->limits.maximum, 1);
	if (r->limits.has_minimum && r->limits.has_maximum)
		EXPECT(inc_dec_cmp(&r->limits.minimum, &r->limits.maximum) <= 0);
	EXPECT(r->any == (r->enrollment == INC_ENROLLMENT_REQUIRED || r->nrequirements > 0 ||
					  r->limits.has_minimum || r->limits.has_maximum));
	/* the programs view's requirements: a JSON array, one object each */
	json = inc_rules_requirements_json(o);
	EXPECT(json != NULL && json[0] == '[');
}

/* ListedRates: the number of rates the listing shows for offer o. */
static int
ListedRates(const IncOffer *o)
{
	int			n = 0;
	int			i,
				j;

	switch (o->strategy)
	{
		case INC_STANDARD:
			for (i = 0; i < o->nentries; i++)
				n += o->entries[i].nrates;
			break;
		case INC_STEPPED:
			n = o->stepped.ntiers;
			break;
		case INC_STACKED:
			for (i = 0; i < o->stacked.nstacks; i++)
				for (j = 0; j < o->stacked.stacks[i].nsets; j++)
					n += o->stacked.sets[o->stacked.stacks[i].sets[j]].nconversions;
			break;
	}
	return n;
}

/* CheckRate: one row of the rates listing. */
static void
CheckRate(void *ctx, const IncRateRow *row)
{
	int		   *count = ctx;

	(*count)++;
	CheckString(row->rate_key, true);
	CheckDec(&row->rate_value, 0);
	EXPECT(row->rate_value.scale == 0 || row->rate_value.coef % 10 != 0);
	CheckString(row->measure, true);
	EXPECT((row->sku_key == NULL) ==
		   (row->offer->strategy == INC_STEPPED || row->product_key != NULL));
	EXPECT(row->product_key == NULL || row->offer->strategy == INC_STANDARD);
	EXPECT((row->threshold_type != NULL) == (row->offer->strategy == INC_STEPPED));
	EXPECT((row->stack_key != NULL) == (row->offer->strategy == INC_STACKED));
	EXPECT(row->period != NULL || row->offer->strategy == INC_STEPPED);
	EXPECT(row->price == NULL || (row->sku_key != NULL &&
								  inc_dec_cmp(row->price,
											  inc_offer_price(row->offer, row->sku_key)) == 0));
}

/* NoRow: a participant without transactions earns nothing. */
static void
NoRow(void *ctx, const IncRow *row)
{
	(void) ctx;
	fuzz_bug("a row without transactions", row->rate_key);
}

/* CheckDiagnostics: an untouched offer's diagnostics are a JSON object. */
static void
CheckDiagnostics(void *ctx, const IncOffer *offer, const char *participant_key,
		 const char *group_key, const char *json)
{
	int		   *count = ctx;
	struct json_object *obj = fuzz_json_object(json);

	(void) participant_key;
	(void) group_key;
	(void) offer;
	if (obj == NULL)
		fuzz_bug("diagnostics are not a JSON object", json);
	fuzz_json_free(obj);
	(*count)++;
}

/* A rejection: the message form of bad input, NUL-terminated within its buffer. */
static void
CheckRejection(const IncOfferError *err)
{
	static const char keyed[] = "invalid offer \"";
	static const char nokey[] = "invalid offer (no offer_key): ";
	size_t		len = strnlen(err->message, sizeof(err->message));

	EXPECT(len < sizeof(err->message));
	EXPECT(strncmp(err->message, keyed, sizeof(keyed) - 1) == 0 ||
		   strncmp(err->message, nokey, sizeof(nokey) - 1) == 0);
	/* something follows the prefix */
	EXPECT(len > sizeof(keyed) - 1);
}

/* ---- entry point --------------------------------------------------------- */

/* ---- the checks of a document being written ------------------------------ */

/* Findings of one parse: how many, and how many were unknown fields. */
typedef struct Findings
{
	int			n;
	int			unknown;
} Findings;

static void
CheckFinding(void *ctx, const char *path, const char *code, const char *message,
			 const char *value)
{
	Findings   *f = ctx;

	EXPECT(path != NULL && path[0] != '\0');
	EXPECT(strcmp(code, "unknown_field") == 0 || strcmp(code, "implausible_rate") == 0);
	EXPECT(strncmp(message, path, strlen(path)) == 0);
	EXPECT(value != NULL && value[0] != '\0');
	f->n++;
	if (strcmp(code, "unknown_field") == 0)
		f->unknown++;
}

static void
CheckReference(void *ctx, const IncOfferRef *ref)
{
	(void) ctx;
	EXPECT(ref->path != NULL && ref->path[0] != '\0');
	if (ref->kind == INC_REF_SKU)
		CheckString(ref->sku_key, true);
	if (ref->kind == INC_REF_PERIOD)
		EXPECT(ref->period != NULL && ref->role == NULL);
	else
		CheckString(ref->role, true);
}

/*
 * The same document under the checks of a write and of a reading that
 * reports: a reading accepts exactly what the lenient parse accepted; a
 * write accepts only what a reading accepts, and refuses it only for an
 * unknown field, a percent above 100 or an annotation that is no string.
 */
static void
CheckWrites(const uint8_t *data, size_t size, bool accepted)
{
	Findings	read = {0, 0};
	Findings	write = {0, 0};
	IncOfferChecks reading = {INC_UNKNOWN_REPORT, false, NULL, CheckFinding, &read};
	IncOfferChecks writing = {INC_UNKNOWN_REFUSE, true, NULL, CheckFinding, &write};
	IncOfferParser parser;
	IncOfferError err;
	IncOffer   *offer;

	inc_offer_parser_init(&parser);
	offer = inc_offer_parser_check(&parser, (const char *) data, size, &reading, &err);
	EXPECT((offer != NULL) == accepted);
	if (offer != NULL)
		inc_offer_references(offer, CheckReference, NULL);
	offer = inc_offer_parser_check(&parser, (const char *) data, size, &writing, &err);
	if (offer != NULL)
	{
		EXPECT(accepted);
		EXPECT(write.unknown == 0);
	}
	else if (accepted)
		EXPECT(strstr(err.message, " is not a field of ") != NULL ||
			   strstr(err.message, " may not be above 100") != NULL ||
			   strstr(err.message, " must be a string") != NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool hooked = false;
	jmp_buf		jb;
	IncOfferError err;
	IncOffer   *volatile offer = NULL;

	if (!hooked)
	{
		fuzz_name = "fuzz_offer";
		fuzz_arena = &arena;
		inc_set_hooks(fuzz_alloc, FailHook);
		hooked = true;
	}

	memset(&err, 0x7f, sizeof(err));	/* the parser must set it */
	if (setjmp(jb) != 0)
	{
		fail_jump = NULL;
		fuzz_bug("inc_fail escaped the offer parser", NULL);
	}
	fail_jump = &jb;
	offer = inc_offer_parse((const char *) data, size, &err);
	CheckWrites(data, size, offer != NULL);
	if (offer == NULL)
		CheckRejection(&err);
	else
	{
		IncEngine  *e;
		const char *const *keys;
		int			nkeys;
		int			nproducts;
		int			count = 0;

		CheckOffer(offer);
		CheckRules(offer);
		/* the rates listing: one row per rate, as program_rates shows it */
		inc_offer_rates(offer, CheckRate, &count);
		EXPECT(count == ListedRates(offer));

		/* the host indexes every accepted offer before calculating */
		e = inc_engine_create();
		inc_engine_add_offer(e, offer);
		count = 0;
		inc_engine_set_diagnostics(e, CheckDiagnostics, &count);
		inc_engine_prepare(e);
		keys = inc_engine_sku_keys(e, &nkeys);
		/* every offer reads a SKU, or names products (no catalog here) */
		inc_engine_product_keys(e, &nproducts);
		EXPECT(nkeys > 0 || nproducts > 0);
		while (nkeys-- > 0)
			CheckString(keys[nkeys], true);

		/* a participant without transactions or properties: diagnosed all the same */
		inc_engine_calculate(e, "nobody", NULL, 0, NULL, NULL, NoRow, NULL);
		EXPECT(count == 1);
	}
	fail_jump = NULL;
	fuzz_arena_reset(&arena);
	return 0;
}
