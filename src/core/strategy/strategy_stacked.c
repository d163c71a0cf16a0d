/*
 * strategy_stacked.c
 *    The stacked strategy (docs/reference.md, Stacked): dollars per
 *    coverage unit (acre) where the SKU sets of a stack overlap.
 *
 * While observing, each transaction that belongs to a set (its period,
 * type and a SKU of conversion.rates) adds its coverage -- quantity in
 * the conversion's from-unit divided by the conversion rate -- to C(s).
 * At finish, for each stack k the overlap is O(k) = min C(s) over its
 * sets; when O(k) > 0 each transaction of each set whose SKU pays a rate
 * > 0 earns coverage x f x rate with f = O(k) / C(s), and reports its
 * quantity and base amount scaled by f.  Rate-0 SKUs only anchor coverage.
 * Diagnostics report each set's coverage and each stack's overlap and
 * factors.
 *
 * An offer with "match": "grower" (docs/reference.md, Growers) keeps
 * C(s) per grower_key as well and computes each stack's overlap per
 * grower: a member earns with f = O_g(k) / C_g(s) of its own grower g.  A
 * transaction without a grower_key belongs to no set.
 *
 * An offer with a rate schedule (docs/lifecycle.md, Prospective rate
 * changes) pays each member row the pay rate of the version of its date
 * and names that version's stack key; coverage and overlaps are the
 * structure's (conversion rates never change prospectively).
 */
#include <stdio.h>
#include <string.h>

#include "../util/jsonbuf.h"
#include "strategy.h"

typedef struct SetMember
{
	int			txn;
	int			conversion;		/* index into the set's conversions */
	int			uom_id;			/* the id of the conversion's from_uom */
	int			grower;			/* match grower: its grower's index */
} SetMember;

/*
 * A set's members: in a list, or where the engine walks the transactions
 * again (IncCalc.replay: they are in pages, the offer has no program
 * rules) only the range first..last of their indexes.
 */
typedef struct SetState
{
	int			n;
	int			cap;
	SetMember  *members;
	int			first;			/* the first member's transaction */
	int			last;			/* the last member's transaction */
	IncSum		sum;			/* C(s) while observing */
	IncRat		coverage;		/* C(s), once settled */
} SetState;

/* match grower: one grower's coverage of each set. */
typedef struct GrowerSets
{
	IncSum	   *sums;			/* by set, while observing */
	IncRat	   *coverage;		/* by set, once settled */
} GrowerSets;

/* match grower: a member's factor in one set of one stack, by grower. */
typedef struct Factor
{
	bool		earns;			/* O_g(k) > 0 */
	IncRat		f;
	IncQ		fq;
	IncDec		contribution;
	bool		fast;
} Factor;

typedef struct StackedState
{
	SetState   *sets;
	bool		settled;		/* coverage holds every set's sum */
	bool		by_grower;		/* "match": "grower" */
	IncGrowers	growers;
	int			grower_cap;
	GrowerSets *grower_sets;	/* by grower index */
} StackedState;

/*
 * StackedIndex: every SKU of every set's conversion (a: set, b:
 * conversion), with the conversion's from_uom (the hook's uom_id).
 */
static void
StackedIndex(const IncOffer *offer, const IncIndexSink *sink)
{
	int			i,
				j;

	for (i = 0; i < offer->stacked.nsets; i++)
		for (j = 0; j < offer->stacked.sets[i].nconversions; j++)
		{
			const IncConversionRate *conv = &offer->stacked.sets[i].conversions[j];

			sink->hook_uom(sink->ctx, conv->sku_key, 0, i, j, conv->from_uom);
		}
}

/* StackedBegin: the state of one offer for one participant. */
static void *
StackedBegin(IncCalc *c, const IncOffer *offer)
{
	StackedState *st = inc_alloc(sizeof(StackedState));
	int			i;

	(void) c;
	st->sets = inc_alloc(sizeof(SetState) * offer->stacked.nsets);
	for (i = 0; i < offer->stacked.nsets; i++)
		inc_sum_init(&st->sets[i].sum);
	st->by_grower = offer->stacked.match == INC_MATCH_GROWER;
	if (st->by_grower)
		inc_growers_init(&st->growers);
	return st;
}

/* Coverage: t's coverage units under conversion rate conv (from_uom: its id). */
static void
Coverage(IncCalc *c, const IncTxn *t, const IncConversionRate *conv, int from_uom,
		 IncRat *out)
{
	IncRat		rate;

	inc_calc_convert(c, t, from_uom, out);
	inc_rat_from_dec(&rate, &conv->rate);
	inc_rat_div(out, out, &rate);
}

static bool CoverageQ(IncCalc *c, const IncTxn *t, const IncConversionRate *conv,
					  int from_uom, IncQ *out);

/* Settle: every set's coverage sum as a big rational, once (and each grower's). */
static void
Settle(const IncOffer *offer, StackedState *st)
{
	int			i,
				g;

	if (st->settled)
		return;
	for (i = 0; i < offer->stacked.nsets; i++)
		inc_sum_get(&st->sets[i].sum, &st->sets[i].coverage);
	for (g = 0; st->by_grower && g < st->growers.n; g++)
	{
		GrowerSets *gs = &st->grower_sets[g];

		gs->coverage = inc_alloc(sizeof(IncRat) * offer->stacked.nsets);
		for (i = 0; i < offer->stacked.nsets; i++)
			inc_sum_get(&gs->sums[i], &gs->coverage[i]);
	}
	st->settled = true;
}

/* GrowerOf: match grower: the index of t's grower, numbered when new. */
static int
GrowerOf(const IncOffer *offer, StackedState *st, const IncTxn *t)
{
	int			before = st->growers.n;
	int			g = inc_growers_add(&st->growers, t->grower_key);
	int			i;

	if (st->growers.n == before)
		return g;
	/* new: its sums */
	if (g == st->grower_cap)
		st->grower_sets = inc_grow(st->grower_sets, g, &st->grower_cap,
								   sizeof(GrowerSets), 8);
	st->grower_sets[g].sums = inc_alloc(sizeof(IncSum) * offer->stacked.nsets);
	for (i = 0; i < offer->stacked.nsets; i++)
		inc_sum_init(&st->grower_sets[g].sums[i]);
	return g;
}

/* StackedObserve: txn's SKU is in set hook->a's conversion hook->b. */
static void
StackedObserve(IncCalc *c, const IncOffer *offer, void *state,
			   const IncHook *hook, int txn)
{
	StackedState *st = state;
	const IncSkuSet *set = &offer->stacked.sets[hook->a];
	SetState   *ss = &st->sets[hook->a];
	const IncTxn *t = inc_calc_txn(c, txn);
	IncRat		coverage;
	IncQ		q;
	int			g = -1;

	/* matched by grower: a transaction without one takes part in nothing */
	if (st->by_grower && t->grower_key == NULL)
		return;
	if (!inc_txn_matches(c, offer, set->period, set->transaction_type, t))
		return;
	if (st->by_grower)
		g = GrowerOf(offer, st, t);

	if (CoverageQ(c, t, &set->conversions[hook->b], hook->uom_id, &q))
	{
		inc_sum_add_q(&ss->sum, &q);
		if (g >= 0)
			inc_sum_add_q(&st->grower_sets[g].sums[hook->a], &q);
	}
	else
	{
		Coverage(c, t, &set->conversions[hook->b], hook->uom_id, &coverage);
		inc_sum_add_rat(&ss->sum, &coverage);
		if (g >= 0)
			inc_sum_add_rat(&st->grower_sets[g].sums[hook->a], &coverage);
	}
	if (ss->n == 0)
		ss->first = txn;
	ss->last = txn;
	if (c->replay)
	{
		ss->n++;
		return;
	}
	if (ss->n == ss->cap)
		ss->members = inc_grow_list(ss->members, ss->n, &ss->cap, sizeof(SetMember), 8);
	ss->members[ss->n++] = (SetMember)
	{
		txn, hook->b, hook->uom_id, g
	};
}

/* PayRate: the pay rate entry of the set's conversion c, or NULL when it has none. */
static const IncSkuRate *
PayRate(const IncSkuSet *set, int c)
{
	int			r = set->conversions[c].pay_rate;

	return r >= 0 ? &set->rates[r] : NULL;
}

/* CoverageQ: Coverage on the fast path; false when it does not fit. */
static bool
CoverageQ(IncCalc *c, const IncTxn *t, const IncConversionRate *conv, int from_uom,
		  IncQ *out)
{
	IncQ		rate;

	return inc_calc_convert_q(c, t, from_uom, out) &&
		inc_q_from_dec(&rate, &conv->rate) && inc_q_div(out, out, &rate);
}

/*
 * RowFast: a set member's row on the fast path (f is the stack's factor
 * for the set); false, with nothing emitted, when a value does not fit.
 */
static bool
RowFast(IncCalc *c, const IncOffer *offer, const IncStack *stack, const IncSkuSet *set,
		const SetMember *m, const IncTxn *t, const IncSkuRate *pay, const IncQ *f,
		const IncDec *contribution)
{
	IncQ		quantity,
				base,
				incentive,
				r;
	IncRowValues v;

	if (!inc_calc_sku_quantity_q(c, t, &quantity) ||
		!inc_calc_base_amount_q(c, offer, t, &quantity, &base) ||
		!CoverageQ(c, t, &set->conversions[m->conversion], m->uom_id, &incentive) ||
		!inc_q_from_dec(&r, &pay->rate) ||
		!inc_q_mul(&incentive, &incentive, f) ||
		!inc_q_mul(&incentive, &incentive, &r) ||
		!inc_q_mul(&quantity, &quantity, f) ||
		!inc_q_mul(&base, &base, f) ||
		!inc_q_round(&quantity, 6, &v.incentivized_quantity) ||
		!inc_q_round(&base, 2, &v.incentivized_amount) ||
		!inc_q_round(&incentive, 2, &v.incentive_amount))
		return false;
	v.rate_key = stack->key;
	v.rate_measure = "dollars";
	v.rate_value = &pay->rate;
	v.pay_rate = pay->pay_rate;
	v.contribution = contribution;
	inc_calc_emit_values(c, offer, t, &v, &incentive);
	return true;
}

/*
 * Scheduled: a member's pay rate in an offer with a rate schedule
 * (docs/lifecycle.md, Prospective rate changes): *pay and *stack from the
 * version of t's date (the set's and the stack's same index), and into
 * rate the rate it pays on its figures: that version's, or in a
 * projection, with the projected part at the schedule's rates over the
 * days left (inc_calc_schedule_rate).  NULL pay: the SKU pays nothing.
 */
static void
Scheduled(IncCalc *c, const IncOffer *offer, int stack_index, int set_index, int conversion,
		  const IncTxn *t, const IncSkuRate **pay, const IncStack **stack, IncRat *rate)
{
	const IncOffer *version = inc_calc_version(offer, t);
	IncRat	   *rates;
	IncRat		mean;
	int			s;

	*pay = PayRate(&version->stacked.sets[set_index], conversion);
	*stack = &version->stacked.stacks[stack_index];
	if (*pay == NULL)
		return;
	inc_rat_from_dec(rate, &(*pay)->rate);
	if (!inc_calc_schedule_projected(c, offer, t))
		return;
	rates = inc_alloc(sizeof(IncRat) * offer->nschedule);
	for (s = 0; s < offer->nschedule; s++)
		inc_rat_from_dec(&rates[s],
						 &PayRate(&offer->schedule[s].offer->stacked.sets[set_index],
								  conversion)->rate);
	inc_calc_schedule_mean(c, offer, rates, &mean);
	inc_calc_schedule_rate(c, offer, t, rate, &mean, rate);
}

/* What the rows of one set within one stack share (EmitSet). */
typedef struct SetEmit
{
	IncCalc    *c;
	const IncOffer *offer;
	const IncStack *stack;
	const IncSkuSet *set;
	int			stack_index;
	int			set_index;
	IncRat		f;				/* the set's factor O / C(s) */
	IncQ		fq;				/* f on the fast path */
	IncDec		contribution;	/* f to 6 places, on the fast path */
	bool		fast;
	const StackedState *st;
	const Factor *factors;		/* match grower: by grower, else NULL */
} SetEmit;

/* EmitMember: the row of one member of the set. */
static void
EmitMember(const SetEmit *se, const SetMember *m)
{
	IncCalc    *c = se->c;
	const IncOffer *offer = se->offer;
	const IncSkuSet *set = se->set;
	const IncStack *stack = se->stack;
	const IncTxn *t = inc_calc_txn(c, m->txn);
	const IncSkuRate *pay = PayRate(set, m->conversion);
	IncRat		r,
				quantity,
				base,
				incentive;
	IncRowFigures fig;
	bool		blended = false;
	const IncRat *f = &se->f;
	const IncQ *fq = &se->fq;
	const IncDec *contribution = &se->contribution;
	bool		fast = se->fast;

	if (se->factors)
	{
		const Factor *gf = &se->factors[m->grower];

		if (!gf->earns)
			return;
		f = &gf->f;
		fq = &gf->fq;
		contribution = &gf->contribution;
		fast = gf->fast;
	}
	if (offer->nschedule > 0)
	{
		Scheduled(c, offer, se->stack_index, se->set_index, m->conversion, t,
				  &pay, &stack, &r);
		/* a rate blended over versions has no decimal: the exact path */
		blended = inc_calc_schedule_projected(c, offer, t);
		if (pay == NULL || (blended ? inc_rat_sign(&r) : inc_dec_sign(&pay->rate)) <= 0)
			return;
	}
	else if (pay == NULL || inc_dec_sign(&pay->rate) <= 0)
		return;
	inc_calc_at(c, t);
	if (fast && !blended &&
		RowFast(c, offer, stack, set, m, t, pay, fq, contribution))
		return;
	inc_calc_sku_quantity(c, t, &quantity);
	inc_calc_base_amount(c, offer, t, &quantity, &base);
	Coverage(c, t, &set->conversions[m->conversion], m->uom_id, &incentive);
	if (!blended)
		inc_rat_from_dec(&r, &pay->rate);
	inc_rat_mul(&incentive, &incentive, f);
	inc_rat_mul(&incentive, &incentive, &r);
	inc_rat_mul(&quantity, &quantity, f);
	inc_rat_mul(&base, &base, f);

	fig.rate_key = stack->key;
	fig.rate_measure = "dollars";
	fig.rate_value = &pay->rate;
	fig.pay_rate = pay->pay_rate;
	fig.incentivized_quantity = &quantity;
	fig.incentivized_amount = &base;
	fig.incentive_amount = &incentive;
	fig.contribution = f;
	inc_calc_emit(c, offer, t, &fig);
}

/*
 * ReplayMember: IncReplayFn over the set's range: the transactions
 * StackedObserve made members of the set, again.
 */
static void
ReplayMember(void *ctx, const IncHook *hook, int txn)
{
	const SetEmit *se = ctx;
	const IncTxn *t = inc_calc_txn(se->c, txn);
	SetMember	m;

	if (hook->a != se->set_index ||
		(se->factors && t->grower_key == NULL) ||
		!inc_txn_matches(se->c, se->offer, se->set->period, se->set->transaction_type, t))
		return;
	m.txn = txn;
	m.conversion = hook->b;
	m.uom_id = hook->uom_id;
	m.grower = se->factors ? inc_growers_find(&se->st->growers, t->grower_key) : -1;
	if (se->factors && m.grower < 0)
		return;
	EmitMember(se, &m);
}

/*
 * EmitSet: the rows of set s within a stack of overlap O (match grower:
 * overlap NULL, and factors holds each grower's factor for the set).
 */
static void
EmitSet(IncCalc *c, const IncOffer *offer, const StackedState *st, const IncStack *stack,
		const IncSkuSet *set, const SetState *ss, const IncRat *overlap,
		const Factor *factors)
{
	SetEmit		se;
	int			i;

	if (ss->n == 0)
		return;
	se.c = c;
	se.offer = offer;
	se.stack = stack;
	se.set = set;
	se.st = st;
	se.factors = factors;
	se.stack_index = (int) (stack - offer->stacked.stacks);
	se.set_index = (int) (set - offer->stacked.sets);
	se.fast = false;
	if (overlap)
	{
		inc_rat_div(&se.f, overlap, &ss->coverage);
		se.fast = inc_fast() && inc_q_from_rat(&se.fq, &se.f);
		if (se.fast)
			se.contribution = inc_rat_to_dec(&se.f, 6);
	}
	if (c->replay)
		c->replay(c, ss->first, ss->last, ReplayMember, &se);
	else
		for (i = 0; i < ss->n; i++)
			EmitMember(&se, &ss->members[i]);
}

/* Overlap: O(k), the smallest coverage of the stack's sets. */
static const IncRat *
Overlap(const StackedState *st, const IncStack *stack)
{
	const IncRat *overlap = &st->sets[stack->sets[0]].coverage;
	int			j;

	for (j = 1; j < stack->nsets; j++)
		if (inc_rat_cmp(&st->sets[stack->sets[j]].coverage, overlap) < 0)
			overlap = &st->sets[stack->sets[j]].coverage;
	return overlap;
}

/* GrowerOverlap: match grower: O_g(k), grower g's smallest coverage of the stack's sets. */
static const IncRat *
GrowerOverlap(const StackedState *st, const IncStack *stack, int g)
{
	const IncRat *coverage = st->grower_sets[g].coverage;
	const IncRat *overlap = &coverage[stack->sets[0]];
	int			j;

	for (j = 1; j < stack->nsets; j++)
		if (inc_rat_cmp(&coverage[stack->sets[j]], overlap) < 0)
			overlap = &coverage[stack->sets[j]];
	return overlap;
}

/*
 * FinishByGrower: match grower: for each stack, each grower's overlap;
 * for each set of the stack, each grower's factor O_g(k) / C_g(s), then
 * the set's rows, each at its grower's factor.
 */
static void
FinishByGrower(IncCalc *c, const IncOffer *offer, StackedState *st)
{
	Factor	   *factors = inc_alloc(sizeof(Factor) * (st->growers.n + 1));
	int			k,
				j,
				g;

	for (k = 0; k < offer->stacked.nstacks; k++)
	{
		const IncStack *stack = &offer->stacked.stacks[k];

		for (j = 0; j < stack->nsets; j++)
		{
			int			s = stack->sets[j];
			bool		any = false;

			for (g = 0; g < st->growers.n; g++)
			{
				const IncRat *overlap = GrowerOverlap(st, stack, g);
				Factor	   *gf = &factors[g];

				if (c->tick)
					c->tick();
				gf->earns = inc_rat_sign(overlap) > 0;
				if (!gf->earns)
					continue;
				any = true;
				inc_rat_div(&gf->f, overlap, &st->grower_sets[g].coverage[s]);
				gf->fast = inc_fast() && inc_q_from_rat(&gf->fq, &gf->f);
				if (gf->fast)
					gf->contribution = inc_rat_to_dec(&gf->f, 6);
			}
			if (any)
				EmitSet(c, offer, st, stack, &offer->stacked.sets[s], &st->sets[s], NULL,
						factors);
		}
	}
}

/* StackedFinish: overlaps per stack, then the rows. */
static void
StackedFinish(IncCalc *c, const IncOffer *offer, void *state)
{
	StackedState *st = state;
	int			k,
				j;

	Settle(offer, st);
	if (st->by_grower)
	{
		FinishByGrower(c, offer, st);
		return;
	}
	for (k = 0; k < offer->stacked.nstacks; k++)
	{
		const IncStack *stack = &offer->stacked.stacks[k];
		const IncRat *overlap = Overlap(st, stack);

		if (inc_rat_sign(overlap) <= 0)
			continue;
		for (j = 0; j < stack->nsets; j++)
			EmitSet(c, offer, st, stack, &offer->stacked.sets[stack->sets[j]],
					&st->sets[stack->sets[j]], overlap, NULL);
	}
}

/*
 * GrowersJson: match grower: ,"growers": [{"grower_key", "coverage": {set
 * key: C_g(s)}, "overlaps": {rate key: O_g(k)}}].
 */
static void
GrowersJson(IncJsonBuf *b, const IncOffer *offer, const StackedState *st)
{
	int			g,
				i;

	inc_json_raw(b, ",\"growers\":[");
	for (g = 0; g < st->growers.n; g++)
	{
		inc_json_raw(b, g ? ",{" : "{");
		inc_json_key_string(b, "grower_key", st->growers.keys[g]);
		inc_json_raw(b, ",\"coverage\":{");
		for (i = 0; i < offer->stacked.nsets; i++)
		{
			if (i)
				inc_json_raw(b, ",");
			inc_json_key(b, offer->stacked.sets[i].key);
			inc_json_rat(b, &st->grower_sets[g].coverage[i], 6);
		}
		inc_json_raw(b, "},\"overlaps\":{");
		for (i = 0; i < offer->stacked.nstacks; i++)
		{
			if (i)
				inc_json_raw(b, ",");
			inc_json_key(b, offer->stacked.stacks[i].key);
			inc_json_rat(b, GrowerOverlap(st, &offer->stacked.stacks[i], g), 6);
		}
		inc_json_raw(b, "}}");
	}
	inc_json_raw(b, "]");
}

/*
 * StackOverlapByGrower: match grower: the sum of the stack's positive
 * per-grower overlaps (what it pays on).
 */
static void
StackOverlapByGrower(const StackedState *st, const IncStack *stack, IncRat *out)
{
	int			g;

	inc_rat_from_int(out, 0);
	for (g = 0; g < st->growers.n; g++)
	{
		const IncRat *o = GrowerOverlap(st, stack, g);

		if (inc_rat_sign(o) > 0)
			inc_rat_add(out, out, o);
	}
}

/*
 * StackedDiagnose: {"sets": [{"key", "coverage_unit", "coverage",
 * "transactions"}], "stacks": [{"rate_key", "sku_set_keys", "overlap",
 * "earns", "factors": {set key: f}}]}.  Matched by grower, a set's
 * coverage and transactions are those with a grower, a stack's overlap is
 * the sum of its growers' positive overlaps (its factors: {}), and
 * "match": "grower" and "growers" (GrowersJson) follow.
 */
static const char *
StackedDiagnose(IncCalc *c, const IncOffer *offer, void *state)
{
	StackedState *st = state;
	IncJsonBuf	b;
	char		count[64];
	int			i,
				j;

	(void) c;
	Settle(offer, st);
	inc_json_init(&b);
	inc_json_raw(&b, "{\"sets\":[");
	for (i = 0; i < offer->stacked.nsets; i++)
	{
		const IncSkuSet *set = &offer->stacked.sets[i];

		inc_json_raw(&b, i ? ",{" : "{");
		inc_json_key_string(&b, "key", set->key);
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "coverage_unit", set->coverage_unit);
		inc_json_raw(&b, ",\"coverage\":");
		inc_json_rat(&b, &st->sets[i].coverage, 6);
		snprintf(count, sizeof(count), ",\"transactions\":%d}", st->sets[i].n);
		inc_json_raw(&b, count);
	}
	inc_json_raw(&b, "],\"stacks\":[");
	for (i = 0; i < offer->stacked.nstacks; i++)
	{
		const IncStack *stack = &offer->stacked.stacks[i];
		const IncRat *overlap = Overlap(st, stack);
		IncRat		by_grower;
		bool		earns;

		if (st->by_grower)
		{
			StackOverlapByGrower(st, stack, &by_grower);
			overlap = &by_grower;
		}
		earns = inc_rat_sign(overlap) > 0;

		inc_json_raw(&b, i ? ",{" : "{");
		inc_json_key_string(&b, "rate_key", stack->key);
		inc_json_raw(&b, ",\"sku_set_keys\":[");
		for (j = 0; j < stack->nsets; j++)
		{
			if (j)
				inc_json_raw(&b, ",");
			inc_json_string(&b, offer->stacked.sets[stack->sets[j]].key);
		}
		inc_json_raw(&b, "],\"overlap\":");
		inc_json_rat(&b, overlap, 6);
		inc_json_raw(&b, earns ? ",\"earns\":true,\"factors\":{" : ",\"earns\":false,\"factors\":{");
		for (j = 0; earns && !st->by_grower && j < stack->nsets; j++)
		{
			IncRat		f;

			inc_rat_div(&f, overlap, &st->sets[stack->sets[j]].coverage);
			if (j)
				inc_json_raw(&b, ",");
			inc_json_key(&b, offer->stacked.sets[stack->sets[j]].key);
			inc_json_rat(&b, &f, 6);
		}
		inc_json_raw(&b, "}}");
	}
	inc_json_raw(&b, "]");
	if (st->by_grower)
	{
		inc_json_raw(&b, ",\"match\":\"grower\"");
		GrowersJson(&b, offer, st);
	}
	inc_json_raw(&b, "}");
	return b.data;
}

/*
 * StackedRates: one row per stack, set of the stack and SKU of the set's
 * conversion; a SKU without a pay rate shows rate 0 (it anchors coverage).
 */
static void
StackedRates(const IncOffer *offer, IncRateFn fn, void *ctx)
{
	static const IncDec zero = {0, 0};
	int			k,
				j,
				i;

	for (k = 0; k < offer->stacked.nstacks; k++)
	{
		const IncStack *stack = &offer->stacked.stacks[k];

		for (j = 0; j < stack->nsets; j++)
		{
			const IncSkuSet *set = &offer->stacked.sets[stack->sets[j]];

			for (i = 0; i < set->nconversions; i++)
			{
				const IncConversionRate *conv = &set->conversions[i];
				const IncSkuRate *pay = PayRate(set, i);
				IncRateRow	row = inc_rate_row(offer, stack->key, pay ? &pay->rate : &zero,
											   pay ? pay->measure : "dollars",
											   &offer->periods[set->period],
											   set->transaction_type);

				row.sku_key = conv->sku_key;
				row.sku_set_key = set->key;
				row.stack_key = stack->key;
				row.coverage_unit = set->coverage_unit;
				row.coverage_rate = &conv->rate;
				row.coverage_uom_key = conv->from_uom;
				inc_rate_row_emit(&row, fn, ctx);
			}
		}
	}
}

/* StackedBasis: no tiers, so no basis (its stacks pay fixed rates on their overlap). */
static bool
StackedBasis(IncCalc *c, const IncOffer *offer, void *state, IncBasis *out)
{
	(void) c;
	(void) offer;
	(void) state;
	(void) out;
	return false;
}

INC_STRATEGY_OPS(inc_stacked_ops, INC_STACKED, Stacked);
