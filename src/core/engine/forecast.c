/*
 * forecast.c
 *    A participant's forecast (see forecast.h; docs/reference.md,
 *    Forecast).
 *
 * Two calculations of the same transactions: the actual one, and the
 * projected one, in which the calculation helpers multiply every
 * quantity and amount of a transaction dated from an offer's span start
 * to the as-of date by k = span_days / elapsed_days, exactly
 * (inc_engine_set_projection).  Tiers, pools, requirements and limits
 * then apply to the projected volume as they always do.  Each run's rows
 * are added up per offer (their reported incentive amounts) and each
 * offer's basis (inc_engine_set_basis: the stepped threshold value and
 * the tier it meets) is kept.  A participant gets a row per offer (and,
 * in an offer aggregated by group, per group its transactions counted
 * in) when either run has a row for it and the offer's span has started;
 * accrual_to_date = max(round(projected_earnings x elapsed_days /
 * span_days, 2), earned_to_date): what is already earned is owed (a
 * capped offer that reached its cap accrues the cap).  The basis of a group offer is its group's.
 *
 * In an offer with a rate schedule (docs/lifecycle.md, Prospective rate
 * changes) the strategies value the projected part of a transaction (its
 * quantity and amount x (k - 1)) at the schedule's rates spread evenly by
 * days over as_of_date + 1 .. the span's end (calc.h,
 * inc_calc_schedule_rate); its own part keeps its date's rates.
 */
#include "forecast.h"
#include <stdlib.h>
#include <string.h>

#include "../numbers/fixed.h"

/* One run's account of one participant's rows of one offer under one key. */
typedef struct Outcome
{
	int			offer;			/* the engine's index */
	int			participant;	/* the unit's index */
	const char *participant_key;
	int			key;			/* the state's: the aggregation key or the participant */
	const char *group_key;		/* the rows' (NULL outside a group) */
	int			next;			/* the next outcome of the offer and key, or -1 */
	int			rows;
	IncSum		earned;			/* reported incentive amounts, added up */
} Outcome;

/* The basis of one offer for one key. */
typedef struct KeyBasis
{
	bool		has_basis;		/* the offer has tiers */
	IncBasis	basis;
} KeyBasis;

/* One run: its outcomes, in the order rows came, and its bases by offer and key. */
typedef struct Run
{
	const IncEngine *engine;
	int			nkeys;
	Outcome    *outcomes;
	int			noutcomes;
	int			cap;
	KeyBasis   *bases;			/* [offer * nkeys + key] */
	int		   *first;			/* [offer * nkeys + key]: its first outcome, or -1 */
	const IncOffer *last_offer;
	int			last_index;
} Run;

/* OfferIndex: the engine's index of offer (the last one found first). */
static int
OfferIndex(Run *run, const IncOffer *offer)
{
	int			n = inc_engine_noffers(run->engine);
	int			i;

	if (offer == run->last_offer)
		return run->last_index;
	for (i = 0; i < n; i++)
		if (inc_engine_offer(run->engine, i) == offer)
		{
			run->last_offer = offer;
			run->last_index = i;
			return i;
		}
	inc_fail(INC_ERR_INTERNAL, "forecast: a row of an offer the engine does not have");
}

/*
 * OutcomeOf: the outcome of (offer, row's participant, key), made on first use.
 * The outcomes of one offer and key are chained (by participant: one for
 * an offer aggregated by participant, a group's members for one by
 * group).
 */
static Outcome *
OutcomeOf(Run *run, int offer, const IncRow *row, int key)
{
	int			participant = row->txn->participant;
	int		   *head = &run->first[offer * run->nkeys + key];
	int			i;
	Outcome    *o;

	for (i = *head; i >= 0; i = run->outcomes[i].next)
		if (run->outcomes[i].participant == participant)
			return &run->outcomes[i];
	if (run->noutcomes == run->cap)
		run->outcomes = inc_grow(run->outcomes, run->noutcomes, &run->cap, sizeof(Outcome), 16);
	o = &run->outcomes[run->noutcomes];
	memset(o, 0, sizeof(*o));
	o->offer = offer;
	o->participant = participant;
	o->participant_key = row->participant_key;
	o->key = key;
	o->group_key = row->group_key;
	o->next = *head;
	inc_sum_init(&o->earned);
	*head = run->noutcomes++;
	return o;
}

/* CountRow: the emit callback: a row's reported amount, added to its outcome's. */
static void
CountRow(void *ctx, const IncRow *row)
{
	Run		   *run = ctx;
	int			offer = OfferIndex(run, row->offer);
	int			key = row->offer->aggregation == INC_AGGREGATE_GROUP ?
		row->group_index : row->txn->participant;
	Outcome    *o = OutcomeOf(run, offer, row, key);
	IncQ		amount;
	IncRat		big;

	o->rows++;
	if (inc_q_from_dec(&amount, &row->incentive_amount))
		inc_sum_add_q(&o->earned, &amount);
	else
	{
		inc_rat_from_dec(&big, &row->incentive_amount);
		inc_sum_add_rat(&o->earned, &big);
	}
}

/* KeepBasis: the basis callback: the offer's basis for the key, when it has tiers. */
static void
KeepBasis(void *ctx, const IncOffer *offer, int key, const IncBasis *basis)
{
	Run		   *run = ctx;
	KeyBasis   *b = &run->bases[OfferIndex(run, offer) * run->nkeys + key];

	b->has_basis = basis != NULL;
	if (basis)
		b->basis = *basis;
}

/* Calculate: one run of the unit's transactions (projected as of *as_of). */
static void
Calculate(IncEngine *e, Run *run, const int32_t *as_of, const IncUnit *unit,
		  const IncTxn *txns, int ntxns, IncPropertyFn props, void *props_ctx)
{
	int			n = inc_engine_noffers(e);
	int			i;

	run->engine = e;
	run->nkeys = unit->nkeys;
	run->bases = inc_alloc(sizeof(KeyBasis) * ((size_t) n * unit->nkeys + 1));
	run->first = inc_alloc(sizeof(int) * ((size_t) n * unit->nkeys + 1));
	for (i = 0; i < n * unit->nkeys; i++)
		run->first[i] = -1;
	inc_engine_set_projection(e, as_of);
	inc_engine_set_basis(e, KeepBasis, run);
	inc_engine_calculate_unit(e, unit, txns, ntxns, props, props_ctx, CountRow, run);
	inc_engine_set_basis(e, NULL, NULL);
	inc_engine_set_projection(e, NULL);
}

/* Amount: an outcome's earnings, to 2 places (exact already); 0 without one. */
static IncDec
Amount(const Outcome *o)
{
	IncRat		sum;

	if (o == NULL)
		inc_rat_from_int(&sum, 0);
	else
		inc_sum_get(&o->earned, &sum);
	return inc_rat_to_dec(&sum, 2);
}

/* A row to be: an outcome of either run, or of both. */
typedef struct Pair
{
	const Outcome *actual;
	const Outcome *projected;
} Pair;

/* OfPair: either outcome of a pair (they agree on offer, participant and key). */
static const Outcome *
OfPair(const Pair *p)
{
	return p->actual ? p->actual : p->projected;
}

/* ComparePairs: offer order, then participant key, then group key (none first). */
static int
ComparePairs(const void *a, const void *b)
{
	const Outcome *ox = OfPair(a),
			   *oy = OfPair(b);
	int			cmp;

	if (ox->offer != oy->offer)
		return ox->offer < oy->offer ? -1 : 1;
	cmp = strcmp(ox->participant_key, oy->participant_key);
	if (cmp != 0 || ox->group_key == oy->group_key)
		return cmp;
	if (ox->group_key == NULL || oy->group_key == NULL)
		return ox->group_key == NULL ? -1 : 1;
	return strcmp(ox->group_key, oy->group_key);
}

/* Pairs: every outcome of the actual run with its projected match, then the rest. */
static Pair *
Pairs(const Run *actual, const Run *projected, int nkeys, int *npairs)
{
	Pair	   *pairs = inc_alloc(sizeof(Pair) * (actual->noutcomes + projected->noutcomes + 1));
	bool	   *matched = inc_alloc(sizeof(bool) * (projected->noutcomes + 1));
	int			n = 0,
				i,
				j;

	for (i = 0; i < actual->noutcomes; i++)
	{
		const Outcome *a = &actual->outcomes[i];

		pairs[n].actual = a;
		pairs[n].projected = NULL;
		for (j = projected->first[a->offer * nkeys + a->key]; j >= 0;
			 j = projected->outcomes[j].next)
			if (projected->outcomes[j].participant == a->participant)
			{
				matched[j] = true;
				pairs[n].projected = &projected->outcomes[j];
				break;
			}
		n++;
	}
	for (j = 0; j < projected->noutcomes; j++)
		if (!matched[j])
		{
			pairs[n].actual = NULL;
			pairs[n].projected = &projected->outcomes[j];
			n++;
		}
	qsort(pairs, (size_t) n, sizeof(Pair), ComparePairs);
	*npairs = n;
	return pairs;
}

/* inc_engine_forecast_unit: both runs, then a row per outcome of either. */
void
inc_engine_forecast_unit(IncEngine *e, int32_t as_of_date, const IncUnit *unit,
						 const IncTxn *txns, int ntxns, IncPropertyFn props, void *props_ctx,
						 IncForecastFn fn, void *ctx)
{
	Run			actual = {0};
	Run			projected = {0};
	Pair	   *pairs;
	int			npairs,
				i;

	Calculate(e, &actual, NULL, unit, txns, ntxns, props, props_ctx);
	Calculate(e, &projected, &as_of_date, unit, txns, ntxns, props, props_ctx);
	pairs = Pairs(&actual, &projected, unit->nkeys, &npairs);
	for (i = 0; i < npairs; i++)
	{
		const Outcome *o = OfPair(&pairs[i]);
		const KeyBasis *a = &actual.bases[o->offer * unit->nkeys + o->key];
		const KeyBasis *p = &projected.bases[o->offer * unit->nkeys + o->key];
		IncForecastRow row;
		IncRat		accrual,
					days;

		row.offer = inc_engine_offer(e, o->offer);
		inc_offer_span(row.offer, &row.span_start, &row.span_end);
		if (as_of_date < row.span_start)
			continue;
		row.participant = o->participant;
		row.participant_key = o->participant_key;
		row.group = o->group_key ? o->key : -1;
		row.group_key = o->group_key;
		inc_offer_span_days(row.offer, as_of_date, &row.span_days, &row.elapsed_days);
		row.has_basis_to_date = a->has_basis && a->basis.has_value;
		if (row.has_basis_to_date)
			row.basis_to_date = a->basis.value;
		row.rate_key_to_date = a->has_basis ? a->basis.rate_key : NULL;
		row.has_projected_basis = p->has_basis && p->basis.has_value;
		if (row.has_projected_basis)
			row.projected_basis = p->basis.value;
		row.projected_rate_key = p->has_basis ? p->basis.rate_key : NULL;
		row.earned_to_date = Amount(pairs[i].actual);
		row.projected_earnings = Amount(pairs[i].projected);

		inc_rat_from_dec(&accrual, &row.projected_earnings);
		inc_rat_from_int(&days, row.elapsed_days);
		inc_rat_mul(&accrual, &accrual, &days);
		inc_rat_from_int(&days, row.span_days);
		inc_rat_div(&accrual, &accrual, &days);
		row.accrual_to_date = inc_rat_to_dec(&accrual, 2);
		/* what is already earned is owed: never accrue less */
		if (inc_dec_cmp(&row.accrual_to_date, &row.earned_to_date) < 0)
			row.accrual_to_date = row.earned_to_date;
		fn(ctx, &row);
	}
}

/* inc_engine_forecast: a unit of one participant. */
void
inc_engine_forecast(IncEngine *e, int32_t as_of_date, const char *participant_key,
					const IncTxn *txns, int ntxns, IncPropertyFn props, void *props_ctx,
					IncForecastFn fn, void *ctx)
{
	static const uint8_t flags = INC_KEY_REPORT | INC_KEY_VISIBLE;
	/* in the calculation's memory: the position points at it after a failure */
	IncUnit    *unit = inc_alloc(sizeof(IncUnit));
	const char **keys = inc_alloc(sizeof(char *));

	keys[0] = participant_key;
	unit->nkeys = 1;
	unit->pages = NULL;
	unit->keys = keys;
	unit->flags = &flags;
	inc_engine_forecast_unit(e, as_of_date, unit, txns, ntxns, props, props_ctx, fn, ctx);
}
