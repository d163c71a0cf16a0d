/*
 * strategy_stepped.c
 *    The stepped strategy (docs/reference.md, Stepped): one tier, picked by
 *    a threshold value, applies to every earning transaction (not
 *    marginal).
 *
 * While observing, a transaction joins the earning list when it matches
 * at least one earning filter, and the threshold sum when it matches at
 * least one threshold filter (each at most once).  At finish the
 * threshold value is the sum of provided amounts, of quantities in the
 * SKUs' units, or a property; the tier is the highest threshold <= that
 * value.  fixed_amount shares the tier's value as one pool over all the
 * earning transactions.  Diagnostics report the value, every tier (met or
 * not, and what the earning transactions would earn at it) and the gap to
 * the next tier.
 *
 * Incremental tiers (tier_mode "incremental", docs/reference.md,
 * Incremental tiers) pay one blended rate instead: each tier earns its
 * value on the part of the threshold value V inside its band,
 * R = sum of r(i) x (min(V, t(i+1)) - t(i)) / V over the tiers met, and
 * every earning transaction gets one row at R, rounded once, under the
 * highest tier met.  Nothing is paid when V <= 0 or below the lowest
 * threshold.
 *
 * Growth types (docs/reference.md, Growth over a baseline) choose the
 * tier by the growth percentage G = (C - B) / B x 100 of the current
 * value C (the aggregated sum) over the baseline B: the same sum over the
 * baseline's window (baseline hooks, which see every transaction whatever
 * the enrollment) or a property (growth.c).  Without a growth value
 * (B <= 0 or missing) no tier is met.  pays_on "growth" pays only the
 * growth: the rows at the tier are held, their exact amounts scaled by
 * (C - B) / C and re-rounded by running sums (calc.h, IncRunning), and
 * passed on with the scaled exact amounts (to the rules' limits, when
 * they hold rows).  Incremental tiers over a baseline have their band
 * edges at B x (1 + t / 100) on the value C.
 *
 * An offer with a rate schedule (docs/lifecycle.md, Prospective rate
 * changes) chooses its tier, bands, requirements and limits by the
 * current version (the thresholds of every version are the same); each
 * row pays and reports the chosen tier (same index) in the version of its
 * date, incremental rows that version's blended rate over the season's
 * bands, and the tier totals of the diagnostics add up the same.
 */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "../util/jsonbuf.h"
#include "../calc/growth.h"
#include "../calc/pool.h"
#include "strategy.h"

/* Hook kinds (a: the filter's index); a baseline sees every transaction. */
#define HOOK_EARN		0
#define HOOK_THRESHOLD	1
#define HOOK_BASELINE	(2 | INC_HOOK_UNENROLLED)

typedef struct SteppedState
{
	IncIndexList earning;		/* transactions that earn, in id order; only
								 * counted (n) where KeepsRange */
	int			first_earning;	/* KeepsRange: the first earning transaction */
	int			last_earning;	/* last transaction added to earning */
	int			last_threshold; /* last transaction added to the sum */
	int			last_baseline;	/* last transaction added to the baseline */
	IncSum		threshold_sum;	/* aggregated and growth types: C */
	IncSum		baseline_sum;	/* growth types, a baseline by dates */
	/* the threshold value and tier, once Evaluate has run */
	bool		evaluated;
	bool		has_value;		/* false: a missing property, no growth value */
	IncRat		value;			/* growth types: the growth percentage G */
	IncGrowth  *growth;			/* growth types: B, C and G; else NULL */
	const IncTier *tier;		/* NULL: no tier met */
	IncRat		blended;		/* incremental, when tier: the blended rate R */
	/* incremental, when tier, in an offer with a rate schedule */
	IncRat	   *blends;			/* per version: R at its tier values */
	IncDec	   *blend_pay_rates;	/* per version: R as rows report it */
	IncRat		blend_mean;		/* the projected part's R, when projecting */
} SteppedState;

/* One row at the tier, held while pays_on "growth" scales the rows. */
typedef struct GrowthRow
{
	IncRow		row;
	IncRat		exact;
} GrowthRow;

typedef struct GrowthRows
{
	int			n;
	int			cap;
	GrowthRow  *rows;
} GrowthRows;

/* IndexFilters: what filters[0..n) select, as hooks of the given kind. */
static void
IndexFilters(const IncIndexSink *sink, int kind, const IncFilter *filters, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		sink->filter(sink->ctx, &filters[i], kind, i, 0);
}

/*
 * SteppedIndex: earning and threshold filters' SKUs, the property; a
 * baseline's hooks (the threshold filters' SKUs again) or property.
 */
static void
SteppedIndex(const IncOffer *offer, const IncIndexSink *sink)
{
	const IncStepped *stepped = &offer->stepped;

	IndexFilters(sink, HOOK_EARN, stepped->filters, stepped->nfilters);
	IndexFilters(sink, HOOK_THRESHOLD, stepped->threshold_filters,
				 stepped->nthreshold_filters);
	if (stepped->threshold_type == INC_THRESHOLD_PROPERTY)
		sink->property(sink->ctx, stepped->property_key);
	if (stepped->baseline.kind == INC_BASELINE_DATES)
		IndexFilters(sink, HOOK_BASELINE, stepped->threshold_filters,
					 stepped->nthreshold_filters);
	else if (stepped->baseline.kind == INC_BASELINE_PROPERTY)
		sink->property(sink->ctx, stepped->baseline.property_key);
}

/*
 * KeepsRange: whether the earning transactions are kept as their range
 * first_earning..last_earning instead of a list: the engine walks them
 * again (IncCalc.replay, transactions in pages), and finish pays them one
 * by one at the tier's own rate (TierRows without a rate schedule) with
 * no diagnostics to report them.
 */
static bool
KeepsRange(const IncCalc *c, const IncOffer *offer)
{
	return c->replay != NULL && !c->diagnostics && offer->nschedule == 0 &&
		offer->stepped.tier_mode != INC_TIERS_INCREMENTAL &&
		offer->stepped.pays_on != INC_PAYS_ON_GROWTH &&
		offer->calculator != INC_FIXED_AMOUNT;
}

/* SteppedBegin: the state of one offer for one participant. */
static void *
SteppedBegin(IncCalc *c, const IncOffer *offer)
{
	SteppedState *st = inc_alloc(sizeof(SteppedState));

	(void) c;
	st->last_earning = -1;
	st->last_threshold = -1;
	st->last_baseline = -1;
	inc_sum_init(&st->threshold_sum);
	inc_sum_init(&st->baseline_sum);
	if (inc_threshold_growth(offer->stepped.threshold_type))
		st->growth = inc_alloc(sizeof(IncGrowth));
	return st;
}

/*
 * SteppedObserve: txn's SKU is in earning, threshold or (for a baseline)
 * threshold filter hook->a.
 */
static void
SteppedObserve(IncCalc *c, const IncOffer *offer, void *state,
			   const IncHook *hook, int txn)
{
	SteppedState *st = state;
	const IncStepped *stepped = &offer->stepped;
	const IncTxn *t = inc_calc_txn(c, txn);
	const IncFilter *filter;

	if (hook->kind == HOOK_EARN)
	{
		filter = &stepped->filters[hook->a];
		if (st->last_earning != txn &&
			inc_txn_matches(c, offer, filter->period, filter->transaction_type, t))
		{
			if (st->earning.n == 0)
				st->first_earning = txn;
			if (KeepsRange(c, offer))
				st->earning.n++;
			else
				inc_index_list_push(&st->earning, txn);
			st->last_earning = txn;
		}
		return;
	}

	filter = &stepped->threshold_filters[hook->a];
	if (hook->kind == HOOK_BASELINE)
	{
		if (st->last_baseline != txn &&
			inc_txn_in_baseline(c, &stepped->baseline, filter->transaction_type, t))
		{
			inc_calc_add_volume(c, t, inc_threshold_quantity(stepped->threshold_type),
								&st->baseline_sum);
			st->last_baseline = txn;
		}
		return;
	}
	if (st->last_threshold != txn &&
		inc_txn_matches(c, offer, filter->period, filter->transaction_type, t))
	{
		inc_calc_add_volume(c, t, inc_threshold_quantity(stepped->threshold_type),
							&st->threshold_sum);
		st->last_threshold = txn;
	}
}

/* SelectTier: the tier with the highest threshold <= value, or NULL. */
static const IncTier *
SelectTier(const IncStepped *stepped, const IncRat *value)
{
	int			i;

	for (i = stepped->ntiers - 1; i >= 0; i--)
	{
		IncRat		threshold;

		inc_rat_from_dec(&threshold, &stepped->tiers[i].threshold);
		if (inc_rat_cmp(&threshold, value) <= 0)
			return &stepped->tiers[i];
	}
	return NULL;
}

/*
 * Volume: the value incremental bands are measured on: C for growth
 * types, else the threshold value.
 */
static const IncRat *
Volume(const SteppedState *st)
{
	return st->growth ? &st->growth->current : &st->value;
}

/* HasEdges: are the band edges known (growth types: only with a growth value)? */
static bool
HasEdges(const SteppedState *st)
{
	return st->growth == NULL || st->growth->status == INC_GROWTH_VALUE;
}

/*
 * Edge: where tier i's band starts on Volume: its threshold, or for
 * growth types B x (1 + threshold / 100) (when HasEdges).
 */
static void
Edge(const IncStepped *stepped, const SteppedState *st, int i, IncRat *edge)
{
	if (st->growth)
		inc_growth_edge(&st->growth->baseline, &stepped->tiers[i].threshold, edge);
	else
		inc_rat_from_dec(edge, &stepped->tiers[i].threshold);
}

/*
 * BlendedRate: the blended rate of incremental tiers at volume v > 0:
 * sum over the tiers with e(i) <= v of r(i) x (min(v, e(i+1)) - e(i)),
 * divided by v, e(i) the band edges (Edge).
 */
static void
BlendedRate(const IncStepped *stepped, const SteppedState *st, const IncRat *v, IncRat *rate)
{
	int			i;

	inc_rat_from_int(rate, 0);
	for (i = 0; i < stepped->ntiers; i++)
	{
		IncRat		from,
					to,
					r;

		Edge(stepped, st, i, &from);
		if (inc_rat_cmp(&from, v) > 0)
			break;
		to = *v;
		if (i + 1 < stepped->ntiers)
		{
			Edge(stepped, st, i + 1, &r);
			if (inc_rat_cmp(&r, v) < 0)
				to = r;
		}
		inc_rat_sub(&to, &to, &from);
		inc_rat_from_dec(&r, &stepped->tiers[i].value);
		inc_rat_mul(&r, &r, &to);
		inc_rat_add(rate, rate, &r);
	}
	inc_rat_div(rate, rate, v);
}

static IncDec BlendedPayRate(const IncOffer *offer, const IncRat *rate);

/*
 * ScheduleBlends: incremental tiers with a rate schedule
 * (docs/lifecycle.md, Prospective rate changes): the bands are the
 * season's, over the volume as it is, and each version's blended rate is
 * its tier values over those bands, computed once per version; in a
 * projection, also the blended rate of the projected part.
 */
static void
ScheduleBlends(IncCalc *c, const IncOffer *offer, SteppedState *st)
{
	int			s;

	st->blends = inc_alloc(sizeof(IncRat) * offer->nschedule);
	st->blend_pay_rates = inc_alloc(sizeof(IncDec) * offer->nschedule);
	for (s = 0; s < offer->nschedule; s++)
	{
		BlendedRate(&offer->schedule[s].offer->stepped, st, Volume(st), &st->blends[s]);
		st->blend_pay_rates[s] = BlendedPayRate(offer, &st->blends[s]);
	}
	if (inc_calc_schedule_projecting(c, offer))
		inc_calc_schedule_mean(c, offer, st->blends, &st->blend_mean);
}

/*
 * Evaluate: the participant's threshold value and tier into the state,
 * once (a missing property or no growth value: no value, no tier;
 * incremental: no tier at a volume <= 0, else the blended rate too).
 */
static void
Evaluate(IncCalc *c, const IncOffer *offer, SteppedState *st)
{
	const IncStepped *stepped = &offer->stepped;

	if (st->evaluated)
		return;
	if (stepped->threshold_type == INC_THRESHOLD_PROPERTY)
		st->has_value = inc_calc_property(c, stepped->property_key, &st->value);
	else
	{
		inc_sum_get(&st->threshold_sum, &st->value);
		st->has_value = true;
	}
	if (st->growth)
	{
		IncRat		dates_sum;

		inc_sum_get(&st->baseline_sum, &dates_sum);
		inc_growth_evaluate(c, c->participant_key, &stepped->baseline, &st->value, &dates_sum,
							st->growth);
		st->has_value = st->growth->status == INC_GROWTH_VALUE;
		if (st->has_value)
			st->value = st->growth->growth;
	}
	st->tier = st->has_value ? SelectTier(stepped, &st->value) : NULL;
	if (stepped->tier_mode == INC_TIERS_INCREMENTAL && st->tier)
	{
		if (inc_rat_sign(Volume(st)) <= 0)
			st->tier = NULL;
		else
			BlendedRate(stepped, st, Volume(st), &st->blended);
	}
	if (stepped->tier_mode == INC_TIERS_INCREMENTAL && st->tier && offer->nschedule > 0)
		ScheduleBlends(c, offer, st);
	st->evaluated = true;
}

/*
 * GrowthShare: the share of the volume that is growth, (C - B) / C, into
 * num and den; false when C <= B (no growth to pay) or there is no
 * growth value.
 */
static bool
GrowthShare(const SteppedState *st, IncRat *num, IncRat *den)
{
	if (st->growth == NULL || st->growth->status != INC_GROWTH_VALUE)
		return false;
	inc_rat_sub(num, &st->growth->current, &st->growth->baseline);
	*den = st->growth->current;
	return inc_rat_sign(num) > 0;
}

/*
 * BlendedPayRate: offer_sku_pay_rate of incremental tiers: R / 100
 * (percent) or R (dollars), rounded to 6 places.
 */
static IncDec
BlendedPayRate(const IncOffer *offer, const IncRat *rate)
{
	IncRat		r = *rate;

	if (offer->calculator == INC_PERCENT_OF_AMOUNT)
	{
		IncRat		hundred;

		inc_rat_from_int(&hundred, 100);
		inc_rat_div(&r, &r, &hundred);
	}
	return inc_rat_to_dec(&r, 6);
}

/*
 * ScheduledIncrementalFinish: IncrementalFinish in an offer with a rate
 * schedule: each row at the blended rate of its date's version (in a
 * projection, its projected part at the projected part's), reporting
 * that version's tier and blended pay rate.
 */
static void
ScheduledIncrementalFinish(IncCalc *c, const IncOffer *offer, SteppedState *st)
{
	int			tier = (int) (st->tier - offer->stepped.tiers);
	int			i;

	for (i = 0; i < st->earning.n; i++)
	{
		const IncTxn *t = inc_calc_txn(c, st->earning.items[i]);
		int			s = inc_calc_version_index(offer, t);
		const IncTier *version_tier = &offer->schedule[s].offer->stepped.tiers[tier];
		IncRat		rate;

		inc_calc_at(c, t);
		inc_calc_schedule_rate(c, offer, t, &st->blends[s], &st->blend_mean, &rate);
		inc_calc_emit_rate_row_rat(c, offer, t, version_tier->key, version_tier->measure,
								   &version_tier->value, &st->blend_pay_rates[s], &rate);
	}
}

/* IncrementalFinish: every earning transaction at the blended rate. */
static void
IncrementalFinish(IncCalc *c, const IncOffer *offer, SteppedState *st)
{
	IncDec		pay_rate = BlendedPayRate(offer, &st->blended);
	int			i;

	if (offer->nschedule > 0)
	{
		ScheduledIncrementalFinish(c, offer, st);
		return;
	}
	for (i = 0; i < st->earning.n; i++)
	{
		const IncTxn *t = inc_calc_txn(c, st->earning.items[i]);
		IncRat		quantity,
					base,
					incentive;
		IncRowFigures f;

		inc_calc_at(c, t);
		inc_calc_rate_figures_rat(c, offer, t, &st->blended, &quantity, &base, &incentive);
		f.rate_key = st->tier->key;
		f.rate_measure = st->tier->measure;
		f.rate_value = &st->tier->value;
		f.pay_rate = pay_rate;
		f.incentivized_quantity = &quantity;
		f.incentivized_amount = &base;
		f.incentive_amount = &incentive;
		f.contribution = NULL;
		inc_calc_emit(c, offer, t, &f);
	}
}

/*
 * TierValues: the value of tier i in every version of offer's rate
 * schedule (inc_alloc memory), and into *mean the projected part's value
 * when the calculation projects (inc_calc_schedule_projecting).
 */
static IncRat *
TierValues(IncCalc *c, const IncOffer *offer, int i, IncRat *mean)
{
	IncRat	   *values = inc_alloc(sizeof(IncRat) * offer->nschedule);
	int			s;

	for (s = 0; s < offer->nschedule; s++)
		inc_rat_from_dec(&values[s], &offer->schedule[s].offer->stepped.tiers[i].value);
	if (inc_calc_schedule_projecting(c, offer))
		inc_calc_schedule_mean(c, offer, values, mean);
	return values;
}

/*
 * ScheduledTierRows: TierRows in an offer with a rate schedule
 * (docs/lifecycle.md, Prospective rate changes): the tier chosen by the
 * current version, each row at that tier's value, pay rate and key in
 * the version of its date; in a projection, a projected row's projected
 * part at the schedule's values over the days left.
 */
static void
ScheduledTierRows(IncCalc *c, const IncOffer *offer, const SteppedState *st)
{
	int			tier = (int) (st->tier - offer->stepped.tiers);
	IncRat	   *values = NULL;
	IncRat		mean;
	int			i;

	for (i = 0; i < st->earning.n; i++)
	{
		const IncTxn *t = inc_calc_txn(c, st->earning.items[i]);
		int			s = inc_calc_version_index(offer, t);
		const IncTier *version_tier = &offer->schedule[s].offer->stepped.tiers[tier];
		IncRat		rate;

		inc_calc_at(c, t);
		if (!inc_calc_schedule_projected(c, offer, t))
		{
			inc_calc_emit_rate_row(c, offer, t, version_tier->key, version_tier->measure,
								   &version_tier->value, &version_tier->pay_rate);
			continue;
		}
		if (values == NULL)
			values = TierValues(c, offer, tier, &mean);
		inc_calc_schedule_rate(c, offer, t, &values[s], &mean, &rate);
		inc_calc_emit_rate_row_rat(c, offer, t, version_tier->key, version_tier->measure,
								   &version_tier->value, &version_tier->pay_rate, &rate);
	}
}

/* What ReplayTierRow needs. */
typedef struct TierReplay
{
	IncCalc    *c;
	const IncOffer *offer;
	const SteppedState *st;
	int			last;			/* the last transaction given a row */
} TierReplay;

/* TierRow: t's row at the tier's rate. */
static void
TierRow(IncCalc *c, const IncOffer *offer, const SteppedState *st, const IncTxn *t)
{
	inc_calc_at(c, t);
	inc_calc_emit_rate_row(c, offer, t, st->tier->key, st->tier->measure,
						   &st->tier->value, &st->tier->pay_rate);
}

/*
 * ReplayTierRow: IncReplayFn over the earning range: the transactions
 * SteppedObserve counted as earning, again, each once.
 */
static void
ReplayTierRow(void *ctx, const IncHook *hook, int txn)
{
	TierReplay *r = ctx;
	const IncFilter *filter;
	const IncTxn *t;

	if (hook->kind != HOOK_EARN || r->last == txn)
		return;
	filter = &r->offer->stepped.filters[hook->a];
	t = inc_calc_txn(r->c, txn);
	if (!inc_txn_matches(r->c, r->offer, filter->period, filter->transaction_type, t))
		return;
	r->last = txn;
	TierRow(r->c, r->offer, r->st, t);
}

/* TierRows: every earning transaction's row at the tier's rate. */
static void
TierRows(IncCalc *c, const IncOffer *offer, const SteppedState *st)
{
	int			i;

	if (offer->nschedule > 0)
	{
		ScheduledTierRows(c, offer, st);
		return;
	}
	if (KeepsRange(c, offer))
	{
		TierReplay	r = {c, offer, st, -1};

		c->replay(c, st->first_earning, st->last_earning, ReplayTierRow, &r);
		return;
	}
	for (i = 0; i < st->earning.n; i++)
		TierRow(c, offer, st, inc_calc_txn(c, st->earning.items[i]));
}

/* HoldGrowthRow: the hold hook of GrowthFinish: keep the row and its exact amount. */
static void
HoldGrowthRow(void *ctx, const IncRow *row, const IncRat *exact)
{
	GrowthRows *rows = ctx;

	if (rows->n == rows->cap)
		rows->rows = inc_grow_list(rows->rows, rows->n, &rows->cap, sizeof(GrowthRow), 16);
	rows->rows[rows->n].row = *row;
	rows->rows[rows->n].exact = *exact;
	rows->n++;
}

static int
CompareGrowthRows(const void *a, const void *b)
{
	return inc_row_order(&((const GrowthRow *) a)->row, &((const GrowthRow *) b)->row);
}

/*
 * GrowthFinish: pays_on "growth": the tier's rows, held, scaled by
 * (C - B) / C and re-rounded by running sums, then passed on (to the
 * rules' hold with the scaled exact amounts, or to the host); no rows
 * when C <= B.
 */
static void
GrowthFinish(IncCalc *c, const IncOffer *offer, const SteppedState *st)
{
	IncHoldFn	hold = c->hold;
	void	   *hold_ctx = c->hold_ctx;
	GrowthRows	rows = {0};
	IncRat		num,
				den,
				scaled;
	IncRunning	running;
	int			i;

	if (!GrowthShare(st, &num, &den))
		return;
	c->hold = HoldGrowthRow;
	c->hold_ctx = &rows;
	TierRows(c, offer, st);
	c->hold = hold;
	c->hold_ctx = hold_ctx;

	qsort(rows.rows, (size_t) rows.n, sizeof(GrowthRow), CompareGrowthRows);
	inc_running_init(&running, &num, &den);
	for (i = 0; i < rows.n; i++)
	{
		GrowthRow  *r = &rows.rows[i];
		IncDec		amount = inc_running_next(&running, &r->exact, &scaled);

		inc_calc_at(c, r->row.txn);
		r->row.incentive_amount = amount;
		if (hold)
			hold(hold_ctx, &r->row, &scaled);
		else
			inc_calc_emit_held(c, &r->row, &amount);
	}
	inc_calc_at(c, NULL);
}

/* SteppedFinish: pick the tier and emit the earning rows. */
static void
SteppedFinish(IncCalc *c, const IncOffer *offer, void *state)
{
	SteppedState *st = state;

	if (st->earning.n == 0)
		return;
	Evaluate(c, offer, st);
	if (st->tier == NULL)
		return;
	if (offer->stepped.tier_mode == INC_TIERS_INCREMENTAL)
	{
		IncrementalFinish(c, offer, st);
		return;
	}
	if (offer->stepped.pays_on == INC_PAYS_ON_GROWTH)
	{
		GrowthFinish(c, offer, st);
		return;
	}

	if (offer->calculator == INC_FIXED_AMOUNT)
	{
		inc_allocate_pool(c, offer, &st->earning, &st->tier->value, st->tier->key,
						  st->tier->measure, NULL);
		return;
	}
	TierRows(c, offer, st);
}

/*
 * TierRate: the rate the earning transactions get at tier: its value, or
 * for incremental tiers the blended rate at max(V, the tier's band edge);
 * false when that is <= 0 (nothing earned) or the edges are not known.
 */
static bool
TierRate(const IncStepped *stepped, const SteppedState *st, int tier, IncRat *rate)
{
	IncRat		v;

	if (stepped->tier_mode != INC_TIERS_INCREMENTAL)
	{
		inc_rat_from_dec(rate, &stepped->tiers[tier].value);
		return true;
	}
	if (!HasEdges(st))
		return false;
	Edge(stepped, st, tier, &v);
	if (st->has_value && inc_rat_cmp(Volume(st), &v) > 0)
		v = *Volume(st);
	if (inc_rat_sign(&v) <= 0)
		return false;
	BlendedRate(stepped, st, &v, rate);
	return true;
}

/*
 * TierTotal: what the earning transactions would earn in all at tier (the
 * sum of the rounded rows; a fixed pool pays its value when the bases sum
 * to more than 0; incremental tiers at TierRate; pays_on "growth" the
 * exact total x (C - B) / C rounded, as its re-rounded rows add up).
 */
static void
TierTotal(IncCalc *c, const IncOffer *offer, const SteppedState *st,
		  const IncTier *tier, IncRat *total)
{
	IncRat		quantity,
				base,
				incentive,
				sum,
				rate,
				num,
				den,
				mean;
	IncRat	   *rates = NULL;
	bool		growth = offer->stepped.pays_on == INC_PAYS_ON_GROWTH;
	int			index = (int) (tier - offer->stepped.tiers);
	int			i;

	inc_rat_from_int(total, 0);
	inc_rat_from_int(&sum, 0);
	inc_rat_from_int(&mean, 0);
	if (!TierRate(&offer->stepped, st, index, &rate))
		return;
	if (growth && !GrowthShare(st, &num, &den))
		return;
	if (offer->nschedule > 0)
	{
		/* each transaction at its date's version (docs/lifecycle.md, Prospective rate changes) */
		rates = inc_alloc(sizeof(IncRat) * offer->nschedule);
		for (i = 0; i < offer->nschedule; i++)
			(void) TierRate(&offer->schedule[i].offer->stepped, st, index, &rates[i]);
		if (inc_calc_schedule_projecting(c, offer))
			inc_calc_schedule_mean(c, offer, rates, &mean);
	}
	for (i = 0; i < st->earning.n; i++)
	{
		const IncTxn *t = inc_calc_txn(c, st->earning.items[i]);

		inc_calc_at(c, t);
		if (rates)
			inc_calc_schedule_rate(c, offer, t, &rates[inc_calc_version_index(offer, t)], &mean,
								   &rate);
		inc_calc_rate_figures_rat(c, offer, t, &rate, &quantity, &base, &incentive);
		if (offer->calculator == INC_FIXED_AMOUNT)
			inc_rat_add(&sum, &sum, &base);
		else if (growth)
			inc_rat_add(&sum, &sum, &incentive);
		else
		{
			inc_rat_round(&incentive, &incentive, 2);
			inc_rat_add(total, total, &incentive);
		}
	}
	if (offer->calculator == INC_FIXED_AMOUNT && st->earning.n > 0 && inc_rat_sign(&sum) > 0)
		inc_rat_from_dec(total, &tier->value);
	if (growth)
	{
		inc_rat_mul(&sum, &sum, &num);
		inc_rat_div(&sum, &sum, &den);
		inc_rat_round(total, &sum, 2);
	}
}

/*
 * Bands: incremental tiers' "blended_rate" (null when no tier is met),
 * "next_blended_rate" (at the next threshold; null when there is none)
 * and "bands": [{"rate_key", "from", "to" (null: no end), "value",
 * "volume" (the part of the threshold value inside the band)}]; over a
 * baseline from and to are growth percentages, each band adds
 * "start_volume" and "end_volume" (its edges on C, null when unknown or
 * without end) and volume is the part of C inside it.
 */
static void
Bands(IncJsonBuf *b, const IncOffer *offer, const SteppedState *st, const IncTier *next)
{
	const IncStepped *stepped = &offer->stepped;
	const IncRat *v = Volume(st);
	IncRat		rate;
	int			i;

	inc_json_raw(b, ",\"blended_rate\":");
	inc_json_rat(b, st->tier ? &st->blended : NULL, 6);
	inc_json_raw(b, ",\"next_blended_rate\":");
	inc_json_rat(b, next && TierRate(stepped, st, (int) (next - stepped->tiers), &rate) ?
				 &rate : NULL, 6);
	inc_json_raw(b, ",\"bands\":[");
	for (i = 0; i < stepped->ntiers; i++)
	{
		const IncTier *tier = &stepped->tiers[i];
		IncRat		from,
					to,
					volume;
		bool		bounded = i + 1 < stepped->ntiers;
		bool		edges = HasEdges(st);

		inc_rat_from_int(&volume, 0);
		if (edges)
		{
			Edge(stepped, st, i, &from);
			if (bounded)
				Edge(stepped, st, i + 1, &to);
			if (st->has_value && inc_rat_cmp(v, &from) > 0)
			{
				volume = bounded && inc_rat_cmp(&to, v) < 0 ? to : *v;
				inc_rat_sub(&volume, &volume, &from);
			}
		}
		inc_json_raw(b, i ? ",{" : "{");
		inc_json_key_string(b, "rate_key", tier->key);
		inc_json_raw(b, ",\"from\":");
		inc_json_dec(b, &tier->threshold);
		inc_json_raw(b, ",\"to\":");
		if (bounded)
			inc_json_dec(b, &stepped->tiers[i + 1].threshold);
		else
			inc_json_raw(b, "null");
		inc_json_raw(b, ",\"value\":");
		inc_json_dec(b, &tier->value);
		inc_json_raw(b, ",\"volume\":");
		inc_json_rat(b, &volume, 6);
		if (st->growth)
		{
			inc_json_raw(b, ",\"start_volume\":");
			inc_json_rat(b, edges ? &from : NULL, 6);
			inc_json_raw(b, ",\"end_volume\":");
			inc_json_rat(b, edges && bounded ? &to : NULL, 6);
		}
		inc_json_raw(b, "}");
	}
	inc_json_raw(b, "]");
}

/*
 * GrowthNext: growth types' "next_volume" (the current value C at which
 * the next tier is met, B x (1 + its threshold / 100)) and
 * "volume_to_next" (what C still needs to reach it, in dollars or units),
 * null when there is no next tier or no growth value.
 */
static void
GrowthNext(IncJsonBuf *b, const IncOffer *offer, const SteppedState *st, const IncTier *next)
{
	IncRat		edge,
				gap;
	bool		known = next != NULL && st->growth->status == INC_GROWTH_VALUE;

	if (known)
	{
		Edge(&offer->stepped, st, (int) (next - offer->stepped.tiers), &edge);
		inc_rat_sub(&gap, &edge, &st->growth->current);
	}
	inc_json_raw(b, ",\"next_volume\":");
	inc_json_rat(b, known ? &edge : NULL, 6);
	inc_json_raw(b, ",\"volume_to_next\":");
	inc_json_rat(b, known ? &gap : NULL, 6);
}

/*
 * SteppedDiagnose: {"tier_mode", "threshold_type", "property_key",
 * "threshold_value" (null when the property is missing),
 * "earning_transactions", "tiers": [{"rate_key", "threshold", "value",
 * "measure", "met", "incentive_amount"}] ascending, "selected_rate_key",
 * "next_rate_key", "next_threshold", "gap_to_next"}, and for incremental
 * tiers what Bands adds.  Growth types: threshold_value is the growth
 * percentage (null without a growth value), followed by "pays_on" and
 * what inc_growth_json writes (the baseline, its value, the current value
 * and why there is no growth value); gap_to_next is in percentage points,
 * followed by what GrowthNext adds.
 */
static const char *
SteppedDiagnose(IncCalc *c, const IncOffer *offer, void *state)
{
	SteppedState *st = state;
	const IncStepped *stepped = &offer->stepped;
	const IncRat *value;
	const IncTier *next = NULL;
	IncJsonBuf	b;
	char		count[64];
	int			i;

	Evaluate(c, offer, st);
	value = st->has_value ? &st->value : NULL;
	inc_json_init(&b);
	inc_json_raw(&b, "{");
	inc_json_key_string(&b, "tier_mode", inc_tier_mode_name(stepped->tier_mode));
	inc_json_raw(&b, ",");
	inc_json_key_string(&b, "threshold_type", inc_threshold_type_name(stepped->threshold_type));
	inc_json_raw(&b, ",");
	inc_json_key_string(&b, "property_key", stepped->property_key);
	inc_json_raw(&b, ",");
	inc_json_key(&b, "threshold_value");
	inc_json_rat(&b, value, 6);
	if (st->growth)
	{
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "pays_on", inc_pays_on_name(stepped->pays_on));
		inc_growth_json(&b, &stepped->baseline, st->growth);
	}
	snprintf(count, sizeof(count), ",\"earning_transactions\":%d,\"tiers\":[", st->earning.n);
	inc_json_raw(&b, count);
	for (i = 0; i < stepped->ntiers; i++)
	{
		const IncTier *tier = &stepped->tiers[i];
		IncRat		threshold,
					total;
		bool		met = false;

		inc_rat_from_dec(&threshold, &tier->threshold);
		if (value)
			met = inc_rat_cmp(&threshold, value) <= 0 &&
				(stepped->tier_mode != INC_TIERS_INCREMENTAL || inc_rat_sign(Volume(st)) > 0);
		if (!met && next == NULL)
			next = tier;
		TierTotal(c, offer, st, tier, &total);
		inc_json_raw(&b, i ? ",{" : "{");
		inc_json_key_string(&b, "rate_key", tier->key);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "threshold");
		inc_json_dec(&b, &tier->threshold);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "value");
		inc_json_dec(&b, &tier->value);
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "measure", tier->measure);
		inc_json_raw(&b, met ? ",\"met\":true," : ",\"met\":false,");
		inc_json_key(&b, "incentive_amount");
		inc_json_rat(&b, &total, 2);
		inc_json_raw(&b, "}");
	}
	inc_json_raw(&b, "],");
	inc_json_key_string(&b, "selected_rate_key", st->tier ? st->tier->key : NULL);
	inc_json_raw(&b, ",");
	inc_json_key_string(&b, "next_rate_key", next ? next->key : NULL);
	inc_json_raw(&b, ",");
	if (next)
	{
		IncRat		gap;

		inc_json_key(&b, "next_threshold");
		inc_json_dec(&b, &next->threshold);
		inc_json_raw(&b, ",");
		inc_rat_from_dec(&gap, &next->threshold);
		if (value)
			inc_rat_sub(&gap, &gap, value);
		inc_json_key(&b, "gap_to_next");
		inc_json_rat(&b, value ? &gap : NULL, 6);
	}
	else
		inc_json_raw(&b, "\"next_threshold\":null,\"gap_to_next\":null");
	if (st->growth)
		GrowthNext(&b, offer, st, next);
	if (stepped->tier_mode == INC_TIERS_INCREMENTAL)
		Bands(&b, offer, st, next);
	inc_json_raw(&b, "}");
	return b.data;
}

/*
 * SteppedRates: one row per tier (ascending threshold); the period and
 * transaction type are shown when every earning filter has the same.
 */
static void
SteppedRates(const IncOffer *offer, IncRateFn fn, void *ctx)
{
	const IncStepped *stepped = &offer->stepped;
	const IncFilter *first = &stepped->filters[0];
	const IncPeriod *period = &offer->periods[first->period];
	const char *transaction_type = first->transaction_type;
	int			i;

	for (i = 1; i < stepped->nfilters; i++)
	{
		if (stepped->filters[i].period != first->period)
			period = NULL;
		if (strcmp(stepped->filters[i].transaction_type, first->transaction_type) != 0)
			transaction_type = NULL;
	}
	for (i = 0; i < stepped->ntiers; i++)
	{
		const IncTier *tier = &stepped->tiers[i];
		IncRateRow	row = inc_rate_row(offer, tier->key, &tier->value, tier->measure,
									   period, transaction_type);

		row.threshold = &tier->threshold;
		row.threshold_type = inc_threshold_type_name(stepped->threshold_type);
		row.threshold_property_key = stepped->property_key;
		row.tier_mode = inc_tier_mode_name(stepped->tier_mode);
		row.pays_on = inc_pays_on_name(stepped->pays_on);
		row.baseline = stepped->baseline.kind != INC_BASELINE_NONE ? &stepped->baseline : NULL;
		inc_rate_row_emit(&row, fn, ctx);
	}
}

/*
 * SteppedBasis: the threshold value (the growth percentage for growth
 * types) and the tier it meets.
 */
static bool
SteppedBasis(IncCalc *c, const IncOffer *offer, void *state, IncBasis *out)
{
	SteppedState *st = state;

	Evaluate(c, offer, st);
	out->has_value = st->has_value;
	if (st->has_value)
		out->value = inc_rat_to_dec(&st->value, 6);
	out->rate_key = st->tier ? st->tier->key : NULL;
	return true;
}

INC_STRATEGY_OPS(inc_stepped_ops, INC_STEPPED, Stepped);
