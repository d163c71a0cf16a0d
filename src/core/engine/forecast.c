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
 * the tier it meets) is kept.  An offer gets a row when either run has a
 * row for it and its span has started; accrual_to_date =
 * round(projected_earnings x elapsed_days / span_days, 2).
 */
#include "forecast.h"
#include "../numbers/fixed.h"

/* One run's account of one offer. */
typedef struct Outcome
{
	int			rows;
	IncSum		earned;			/* reported incentive amounts, added up */
	bool		has_basis;		/* the offer has tiers */
	IncBasis	basis;
} Outcome;

/* One run: its outcomes by offer index, and the offer last seen. */
typedef struct Run
{
	const IncEngine *engine;
	Outcome    *outcomes;
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

/* CountRow: the emit callback: a row's reported amount, added to its offer's. */
static void
CountRow(void *ctx, const IncRow *row)
{
	Run		   *run = ctx;
	Outcome    *o = &run->outcomes[OfferIndex(run, row->offer)];
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

/* KeepBasis: the basis callback: the offer's basis, when it has tiers. */
static void
KeepBasis(void *ctx, const IncOffer *offer, const IncBasis *basis)
{
	Run		   *run = ctx;
	Outcome    *o = &run->outcomes[OfferIndex(run, offer)];

	o->has_basis = basis != NULL;
	if (basis)
		o->basis = *basis;
}

/* Calculate: one run of the participant's transactions (projected as of *as_of). */
static void
Calculate(IncEngine *e, Run *run, const int32_t *as_of, const char *participant_key,
		  const IncTxn *txns, int ntxns, IncPropertyFn props, void *props_ctx)
{
	int			n = inc_engine_noffers(e);
	int			i;

	run->engine = e;
	run->outcomes = inc_alloc(sizeof(Outcome) * (n + 1));
	for (i = 0; i < n; i++)
		inc_sum_init(&run->outcomes[i].earned);
	inc_engine_set_projection(e, as_of);
	inc_engine_set_basis(e, KeepBasis, run);
	inc_engine_calculate(e, participant_key, txns, ntxns, props, props_ctx, CountRow, run);
	inc_engine_set_basis(e, NULL, NULL);
	inc_engine_set_projection(e, NULL);
}

/* Amount: an outcome's earnings, to 2 places (exact already). */
static IncDec
Amount(const Outcome *o)
{
	IncRat		sum;

	inc_sum_get(&o->earned, &sum);
	return inc_rat_to_dec(&sum, 2);
}

/* inc_engine_forecast: both runs, then a row per offer that has a row in either. */
void
inc_engine_forecast(IncEngine *e, int32_t as_of_date, const char *participant_key,
					const IncTxn *txns, int ntxns, IncPropertyFn props, void *props_ctx,
					IncForecastFn fn, void *ctx)
{
	Run			actual = {0};
	Run			projected = {0};
	int			n = inc_engine_noffers(e);
	int			i;

	Calculate(e, &actual, NULL, participant_key, txns, ntxns, props, props_ctx);
	Calculate(e, &projected, &as_of_date, participant_key, txns, ntxns, props, props_ctx);
	for (i = 0; i < n; i++)
	{
		const Outcome *a = &actual.outcomes[i];
		const Outcome *p = &projected.outcomes[i];
		IncForecastRow row;
		IncRat		accrual,
					days;

		if (a->rows == 0 && p->rows == 0)
			continue;
		row.offer = inc_engine_offer(e, i);
		inc_offer_span(row.offer, &row.span_start, &row.span_end);
		if (as_of_date < row.span_start)
			continue;
		inc_offer_span_days(row.offer, as_of_date, &row.span_days, &row.elapsed_days);
		row.has_basis_to_date = a->has_basis && a->basis.has_value;
		if (row.has_basis_to_date)
			row.basis_to_date = a->basis.value;
		row.rate_key_to_date = a->has_basis ? a->basis.rate_key : NULL;
		row.has_projected_basis = p->has_basis && p->basis.has_value;
		if (row.has_projected_basis)
			row.projected_basis = p->basis.value;
		row.projected_rate_key = p->has_basis ? p->basis.rate_key : NULL;
		row.earned_to_date = Amount(a);
		row.projected_earnings = Amount(p);

		inc_rat_from_dec(&accrual, &row.projected_earnings);
		inc_rat_from_int(&days, row.elapsed_days);
		inc_rat_mul(&accrual, &accrual, &days);
		inc_rat_from_int(&days, row.span_days);
		inc_rat_div(&accrual, &accrual, &days);
		row.accrual_to_date = inc_rat_to_dec(&accrual, 2);
		fn(ctx, &row);
	}
}
