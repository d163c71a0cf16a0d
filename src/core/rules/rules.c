/*
 * rules.c
 *    The program rules of an offer for one participant (see rules.h;
 *    docs/reference.md, Program rules).
 *
 * Enrollment: for a "required" offer, a transaction exists only when the
 * participant has a window (both ends inclusive, an open end never ends)
 * containing its date; the engine asks before showing it to the strategy
 * or to a requirement, so a transaction outside every window makes no
 * row, no threshold, no coverage, no requirement value and no pool share.
 * The windows come from the host (IncEnrollmentFn), once per participant
 * and offer.
 *
 * Requirements: each sums the transactions matching its filters exactly
 * as a stepped threshold does (provided amounts, or quantities in the
 * SKU's unit; each transaction at most once), or reads a property (the
 * call's, then the stored one; missing fails the requirement).  All must
 * reach their minimum, or the offer's rows are dropped.
 *
 * The order holds for data errors too (a missing unit conversion, a
 * property that is not a number, a NULL column): one is raised only for a
 * figure that would reach a result.  While an offer's requirements are
 * undecided, the errors of each requirement's inputs are noted in it
 * (IncCalc.defer), not raised, and the strategy's hooks are only kept (the
 * transaction and the hook, in a growable array of the participant's
 * memory).  At finish every requirement is evaluated; one whose value
 * could be computed and is below its minimum decides: the offer pays
 * nothing and raises nothing, the strategy never sees a transaction.
 * Otherwise the first requirement (in the offer's order) whose value could
 * not be computed raises its error; and when all are met the kept hooks go
 * to the strategy, then its finish, then the limits, every error raised as
 * it comes, naming the transaction.  With diagnostics, the strategy of an
 * offer that is not qualified is still run over the kept hooks to show
 * what it would pay, its errors noted instead of raised; when it notes
 * one, its figures are left out (RulesDiagnose).  An offer without
 * requirements runs its strategy as the transactions come.
 *
 * In an offer aggregated by group (docs/reference.md, Participant groups)
 * the state is the aggregation key's: enrollment is still each
 * transaction's own participant's (the windows of each member, from the
 * host on first use), a requirement of scope group is the key's, and one
 * of scope member sums each member's own transactions of the key (a
 * property: the member's own).  The members' gates are decided after the
 * whole key's calculation, limits included: a member that fails loses its
 * rows, its volume still counted and its share given to nobody; a gate
 * that cannot be decided raises its data error when the host wants that
 * member's rows.
 *
 * Limits: the strategy's rows are held (c->hold) with their exact amounts.
 * U is their exact sum (a pool row counts its allocated share).  Below the
 * minimum nothing is paid; above the maximum every exact amount is scaled
 * by maximum / U and the rows are rounded again with the running-sum rule
 * of fixed pools (pool.c) in (transaction_id, incentive_rate_key) byte
 * order, so they add up to the maximum exactly.  Pay rates stay nominal;
 * the effective rate follows from the reported figures (calc.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonbuf.h"
#include "../calc/growth.h"
#include "rules.h"

/*
 * The kinds of a requirement filter's hooks (a: requirement, b: filter):
 * its sum, and a growth requirement's baseline by dates (which sees every
 * transaction, whatever the enrollment).
 */
#define RULES_HOOK (-1)
#define RULES_BASELINE_HOOK (-2)

/*
 * A distinct_products requirement's listed product b (a: requirement):
 * the SKUs and dates in it, hooked as a filter of that product alone.
 */
#define RULES_PRODUCT_HOOK (-3)

/* One row the strategy made, held until the participant's total is known. */
typedef struct HeldRow
{
	IncRow		row;
	IncRat		exact;			/* incentive amount before rounding */
} HeldRow;

/* A requirement's value and whether it is met (of the key, or of a member). */
typedef struct Judged
{
	IncSum		sum;			/* aggregated and growth types */
	IncSum		baseline_sum;	/* growth types, a baseline by dates */
	IncFault	fault;			/* the first data error of its inputs */
	bool		known;			/* its value could be computed (no fault) */
	bool		has_value;		/* false: a missing property, no growth value */
	IncRat		value;			/* growth types: the growth percentage */
	IncGrowth  *growth;			/* growth types: B, C and G; else NULL */
	IncSum	   *products;		/* distinct_products: by listed product, the
								 * net provided amount in it; else NULL */
	bool		met;
} Judged;

typedef struct RequirementState
{
	int			last_txn;		/* last transaction added to a sum */
	int			last_baseline;	/* last transaction added to a baseline sum */
	Judged		key;			/* scope group: the key's */
	Judged	   *members;		/* scope member: by unit key */

	/*
	 * distinct_products: what the hooks of the transaction being observed
	 * said so far (the engine shows a transaction to all its hooks before
	 * the next one): does it match a filter, and which listed products is
	 * its SKU in on its date.  Added to the sums when the next transaction
	 * comes, or at the evaluation (Settle).
	 */
	int			pending_txn;	/* -1: none */
	bool		pending_matched;
	bool	   *pending_in;		/* by listed product */
} RequirementState;

/* JudgedInit: empty sums, and room for a growth type's B, C and G. */
static void
JudgedInit(Judged *j, const IncRequirement *req)
{
	int			i;

	inc_sum_init(&j->sum);
	inc_sum_init(&j->baseline_sum);
	if (inc_threshold_growth(req->type))
		j->growth = inc_alloc(sizeof(IncGrowth));
	if (req->type == INC_THRESHOLD_DISTINCT_PRODUCTS)
	{
		j->products = inc_alloc(sizeof(IncSum) * req->nproducts);
		for (i = 0; i < req->nproducts; i++)
			inc_sum_init(&j->products[i]);
	}
}

/* A member's gate in a group offer (its requirements of scope member). */
typedef enum Gate
{
	GATE_UNDECIDED = 0,
	GATE_PASSES,
	GATE_FAILS,
	GATE_UNKNOWN				/* a requirement's value could not be computed */
} Gate;

/* Does a transaction exist for the offer (enrollment)? */
typedef enum Admission
{
	OUTSIDE,					/* outside every window */
	INSIDE,
	UNKNOWN						/* a NULL date, and windows to test it against */
} Admission;

/*
 * A grower's state (docs/reference.md, Growers): its judged requirements
 * of scope grower (by requirement; the others unused) and its gate.
 */
typedef struct GrowerState
{
	Judged	   *reqs;
	Gate		gate;
} GrowerState;

/* A strategy hook kept while the requirements are undecided. */
typedef struct Kept
{
	const IncHook *hook;
	int			txn;
	bool		unknown;		/* its admission is UNKNOWN */
} Kept;

typedef struct RulesState
{
	/* the offer's strategy and its state for the participant */
	const IncStrategyOps *strategy;
	void	   *strategy_state;
	/* enrollment: the key's windows, or in a group offer each member's */
	const IncWindow *windows;
	int			nwindows;
	bool		by_member;		/* a group offer: windows and gates per member */
	const IncWindow **member_windows;	/* by unit key, when loaded */
	int		   *member_nwindows;	/* by unit key; -1: not loaded */
	/* members seen (a group offer), and their gates */
	bool	   *seen;
	Gate	   *gates;
	int			last_txn;		/* the transaction last asked about */
	Admission	last_admission;
	int			outside;		/* transactions outside every window */
	/* growers, numbered as met (requirements of scope grower) */
	IncGrowers	growers;
	int			grower_cap;
	GrowerState *grower_states; /* by grower index */
	int			removed;		/* rows removed by their grower's gate */
	/* requirements */
	RequirementState *reqs;
	bool		evaluated;
	bool		qualified;
	/* the strategy's hooks while the requirements are undecided */
	int			nkept;
	int			kept_cap;
	Kept	   *kept;
	IncFault	strategy_fault; /* not qualified, with diagnostics: the first
								 * data error of the strategy's figures */
	/* limits: the held rows */
	bool		holding;
	int			nheld;
	int			held_cap;
	HeldRow    *held;
	IncRat		before;			/* U */
	const char *applied;		/* "minimum", "maximum" or NULL */
	IncRat		paid;			/* what the rows pay after the limits */
} RulesState;

/*
 * RulesIndex: the strategy's hooks and properties, then the requirement
 * filters' SKUs and the requirement properties.
 */
static void
RulesIndex(const IncOffer *offer, const IncIndexSink *sink)
{
	int			r,
				f;

	inc_strategy_ops(offer->strategy)->index(offer, sink);
	for (r = 0; r < offer->rules.nrequirements; r++)
	{
		const IncRequirement *req = &offer->rules.requirements[r];

		if (req->type == INC_THRESHOLD_PROPERTY)
			sink->property(sink->ctx, req->property_key);
		if (req->baseline.kind == INC_BASELINE_PROPERTY)
			sink->property(sink->ctx, req->baseline.property_key);
		for (f = 0; f < req->nproducts; f++)
		{
			/* the SKUs and dates of one listed product (period and type unused) */
			IncFilter	product;

			memset(&product, 0, sizeof(product));
			product.transaction_type = "";
			product.nproducts = 1;
			product.product_keys = &req->product_keys[f];
			sink->filter(sink->ctx, &product, RULES_PRODUCT_HOOK, r, f);
		}
		for (f = 0; f < req->nfilters; f++)
		{
			sink->filter(sink->ctx, &req->filters[f], RULES_HOOK, r, f);
			if (req->baseline.kind == INC_BASELINE_DATES)
				sink->filter(sink->ctx, &req->filters[f], RULES_BASELINE_HOOK, r, f);
		}
	}
}

/* RulesBegin: the strategy's and the rules' state of one offer for c's participant. */
static void *
RulesBegin(IncCalc *c, const IncOffer *offer)
{
	const IncRules *rules = &offer->rules;
	RulesState *rs = inc_alloc(sizeof(RulesState));
	int			r;

	rs->strategy = inc_strategy_ops(offer->strategy);
	rs->strategy_state = rs->strategy->begin(c, offer);
	rs->last_txn = -1;
	rs->by_member = offer->aggregation == INC_AGGREGATE_GROUP;
	if (rs->by_member)
	{
		int			k;

		rs->member_windows = inc_alloc(sizeof(IncWindow *) * c->unit->nkeys);
		rs->member_nwindows = inc_alloc(sizeof(int) * c->unit->nkeys);
		for (k = 0; k < c->unit->nkeys; k++)
			rs->member_nwindows[k] = -1;
		rs->seen = inc_alloc(sizeof(bool) * c->unit->nkeys);
		rs->gates = inc_alloc(sizeof(Gate) * c->unit->nkeys);
	}
	else if (rules->enrollment == INC_ENROLLMENT_REQUIRED && c->enrollments)
		rs->nwindows = c->enrollments(c->enrollments_ctx, c->participant_key,
									  offer->offer_key, &rs->windows);
	if (rules->ngrower_requirements > 0)
		inc_growers_init(&rs->growers);
	rs->reqs = inc_alloc(sizeof(RequirementState) * (rules->nrequirements + 1));
	for (r = 0; r < rules->nrequirements; r++)
	{
		rs->reqs[r].last_txn = -1;
		rs->reqs[r].last_baseline = -1;
		rs->reqs[r].pending_txn = -1;
		if (rules->requirements[r].nproducts > 0)
			rs->reqs[r].pending_in = inc_alloc(sizeof(bool) * rules->requirements[r].nproducts);
		JudgedInit(&rs->reqs[r].key, &rules->requirements[r]);
		if (rules->requirements[r].scope == INC_SCOPE_MEMBER)
		{
			int			k;

			rs->reqs[r].members = inc_alloc(sizeof(Judged) * c->unit->nkeys);
			for (k = 0; k < c->unit->nkeys; k++)
				JudgedInit(&rs->reqs[r].members[k], &rules->requirements[r]);
		}
	}
	rs->holding = rules->nrequirements > 0 || rules->limits.has_minimum ||
		rules->limits.has_maximum;
	inc_rat_from_int(&rs->before, 0);
	inc_rat_from_int(&rs->paid, 0);
	return rs;
}

/* InWindow: is date inside one of the n windows? */
static bool
InWindow(const IncWindow *windows, int n, int32_t date)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		const IncWindow *w = &windows[i];

		if (date >= w->start_date && (w->open_ended || date <= w->end_date))
			return true;
	}
	return false;
}

/*
 * MemberWindows: a group offer's windows of member m (unit key), from the
 * host on first use; returns how many.
 */
static int
MemberWindows(IncCalc *c, const IncOffer *offer, RulesState *rs, int m,
			  const IncWindow **windows)
{
	if (rs->member_nwindows[m] < 0)
	{
		rs->member_windows[m] = NULL;
		rs->member_nwindows[m] = c->enrollments ?
			c->enrollments(c->enrollments_ctx, c->unit->keys[m], offer->offer_key,
						   &rs->member_windows[m]) : 0;
	}
	*windows = rs->member_windows[m];
	return rs->member_nwindows[m];
}

/*
 * Admit: does transaction txn exist for the offer?  A NULL date matters
 * only when the participant has windows: a data error then (UNKNOWN when
 * deferred).
 */
static Admission
Admit(IncCalc *c, const IncOffer *offer, RulesState *rs, int txn)
{
	const IncTxn *t = inc_calc_txn(c, txn);

	if (offer->rules.enrollment != INC_ENROLLMENT_REQUIRED)
		return INSIDE;
	if (rs->last_txn != txn)
	{
		const IncWindow *windows = rs->windows;
		int			nwindows = rs->nwindows;

		/* a group offer: the windows of the transaction's own participant */
		if (rs->by_member)
			nwindows = MemberWindows(c, offer, rs, t->participant, &windows);
		rs->last_txn = txn;
		if (nwindows == 0)
			rs->last_admission = OUTSIDE;
		else if (!inc_calc_has(c, t, INC_TXN_NULL_DATE))
			rs->last_admission = UNKNOWN;
		else
			rs->last_admission = InWindow(windows, nwindows, inc_txn_date(t)) ?
				INSIDE : OUTSIDE;
		if (rs->last_admission == OUTSIDE)
			rs->outside++;
	}
	return rs->last_admission;
}

/*
 * GrowerIndex: the index of grower key among the offer's growers, its
 * state made when it is first met.
 */
static int
GrowerIndex(const IncOffer *offer, RulesState *rs, const char *key)
{
	int			before = rs->growers.n;
	int			g = inc_growers_add(&rs->growers, key);
	int			r;

	if (rs->growers.n == before)
		return g;
	if (g == rs->grower_cap)
		rs->grower_states = inc_grow(rs->grower_states, g, &rs->grower_cap,
									 sizeof(GrowerState), 8);
	rs->grower_states[g].gate = GATE_UNDECIDED;
	rs->grower_states[g].reqs = inc_alloc(sizeof(Judged) * offer->rules.nrequirements);
	for (r = 0; r < offer->rules.nrequirements; r++)
		if (offer->rules.requirements[r].scope == INC_SCOPE_GROWER)
			JudgedInit(&rs->grower_states[g].reqs[r], &offer->rules.requirements[r]);
	return g;
}

/*
 * JudgedOf: where transaction t counts for requirement r: the key's, its
 * member's (scope member), its grower's (scope grower; NULL for a
 * transaction without a grower_key, which counts for none).
 */
static Judged *
JudgedOf(const IncOffer *offer, RulesState *rs, int r, const IncTxn *t)
{
	const IncRequirement *req = &offer->rules.requirements[r];

	if (req->scope == INC_SCOPE_MEMBER)
		return &rs->reqs[r].members[t->participant];
	if (req->scope == INC_SCOPE_GROWER)
	{
		int			g;

		if (t->grower_key == NULL)
			return NULL;
		g = GrowerIndex(offer, rs, t->grower_key);	/* may move grower_states */
		return &rs->grower_states[g].reqs[r];
	}
	return &rs->reqs[r].key;
}

/*
 * Settle: a distinct_products requirement's pending transaction (if it
 * matches a filter and is in a listed product) added to the provided
 * amount of each listed product its SKU is in, for its scope.
 */
static void
Settle(IncCalc *c, const IncOffer *offer, RulesState *rs, int r)
{
	const IncRequirement *req = &offer->rules.requirements[r];
	RequirementState *s = &rs->reqs[r];
	const IncTxn *t;
	Judged	   *j;
	IncFault   *defer = c->defer;
	int			i;

	if (s->pending_txn < 0)
		return;
	if (s->pending_matched)
	{
		t = inc_calc_txn(c, s->pending_txn);
		j = JudgedOf(offer, rs, r, t);
		for (i = 0; j != NULL && i < req->nproducts; i++)
			if (s->pending_in[i])
			{
				c->defer = &j->fault;
				inc_calc_add_volume(c, t, false, &j->products[i]);
			}
		c->defer = defer;
	}
	s->pending_txn = -1;
	s->pending_matched = false;
	memset(s->pending_in, 0, sizeof(bool) * req->nproducts);
}

/* SettleAll: every distinct_products requirement's pending transaction. */
static void
SettleAll(IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	int			r;

	for (r = 0; r < offer->rules.nrequirements; r++)
		if (offer->rules.requirements[r].type == INC_THRESHOLD_DISTINCT_PRODUCTS)
			Settle(c, offer, rs, r);
	inc_calc_at(c, NULL);
}

/*
 * ObserveDistinct: a hook of a distinct_products requirement for txn:
 * a filter's (does txn match it?) or a listed product's (its SKU is in
 * it on its date); the transaction before txn settled first.
 */
static void
ObserveDistinct(IncCalc *c, const IncOffer *offer, RulesState *rs,
				const IncHook *hook, int txn)
{
	const IncRequirement *req = &offer->rules.requirements[hook->a];
	RequirementState *s = &rs->reqs[hook->a];

	if (s->pending_txn != txn)
	{
		Settle(c, offer, rs, hook->a);
		s->pending_txn = txn;
	}
	if (hook->kind == RULES_PRODUCT_HOOK)
		s->pending_in[hook->b] = true;
	else if (!s->pending_matched)
	{
		const IncFilter *filter = &req->filters[hook->b];

		s->pending_matched = inc_txn_matches(c, offer, filter->period, filter->transaction_type,
											 inc_calc_txn(c, txn));
	}
}

/*
 * ObserveRequirement: txn's SKU is in filter hook->b of requirement
 * hook->a: its sum, or a growth requirement's baseline (by dates); a
 * distinct_products requirement's hooks go to ObserveDistinct.
 */
static void
ObserveRequirement(IncCalc *c, const IncOffer *offer, RulesState *rs,
				  const IncHook *hook, int txn)
{
	const IncRequirement *req = &offer->rules.requirements[hook->a];
	const IncFilter *filter;
	RequirementState *s = &rs->reqs[hook->a];
	const IncTxn *t = inc_calc_txn(c, txn);
	Judged	   *j;

	if (req->type == INC_THRESHOLD_DISTINCT_PRODUCTS)
	{
		ObserveDistinct(c, offer, rs, hook, txn);
		return;
	}
	filter = &req->filters[hook->b];
	j = JudgedOf(offer, rs, hook->a, t);
	if (j == NULL)
		return;

	if (hook->kind == RULES_BASELINE_HOOK)
	{
		if (s->last_baseline != txn &&
			inc_txn_in_baseline(c, &req->baseline, filter->transaction_type, t))
		{
			inc_calc_add_volume(c, t, inc_threshold_quantity(req->type), &j->baseline_sum);
			s->last_baseline = txn;
		}
		return;
	}
	if (s->last_txn == txn ||
		!inc_txn_matches(c, offer, filter->period, filter->transaction_type, t))
		return;
	inc_calc_add_volume(c, t, inc_threshold_quantity(req->type), &j->sum);
	s->last_txn = txn;
}

/* Hold: the hold hook: keep a copy of the row and its exact amount. */
static void
Hold(void *ctx, const IncRow *row, const IncRat *exact)
{
	RulesState *rs = ctx;

	if (rs->nheld == rs->held_cap)
		rs->held = inc_grow_list(rs->held, rs->nheld, &rs->held_cap, sizeof(HeldRow), 16);
	rs->held[rs->nheld].row = *row;
	rs->held[rs->nheld].exact = *exact;
	rs->nheld++;
}

/* HoldRows: route the strategy's rows to the rules, when they need them. */
static void
HoldRows(IncCalc *c, RulesState *rs)
{
	if (rs->holding)
	{
		c->hold = Hold;
		c->hold_ctx = rs;
	}
}

/* Raise: a noted data error, raised where it was found. */
static void Raise(IncCalc *c, const IncFault *f) INC_NORETURN;

static void
Raise(IncCalc *c, const IncFault *f)
{
	inc_calc_at(c, f->txn);
	inc_fail_about(f->kind, f->subject, "%s", f->message);
}

/*
 * Judge: a requirement's value (its sum, the property of key, or a growth
 * type's growth percentage over key's baseline) against its minimum, into
 * j; a data error of the property is noted in j.
 */
static void
Judge(IncCalc *c, const IncRequirement *req, const char *key, Judged *j)
{
	IncRat		minimum;

	if (req->type == INC_THRESHOLD_PROPERTY)
	{
		c->defer = &j->fault;
		j->has_value = inc_calc_property_of(c, key, req->property_key, &j->value);
		c->defer = NULL;
	}
	else if (req->type == INC_THRESHOLD_DISTINCT_PRODUCTS)
	{
		/* the listed products with a net provided amount > 0 */
		IncRat		net;
		int			i,
					count = 0;

		for (i = 0; i < req->nproducts; i++)
		{
			inc_sum_get(&j->products[i], &net);
			if (inc_rat_sign(&net) > 0)
				count++;
		}
		inc_rat_from_int(&j->value, count);
		j->has_value = true;
	}
	else
	{
		inc_sum_get(&j->sum, &j->value);
		j->has_value = true;
	}
	if (j->growth)
	{
		IncRat		dates_sum;

		inc_sum_get(&j->baseline_sum, &dates_sum);
		c->defer = &j->fault;
		inc_growth_evaluate(c, key, &req->baseline, &j->value, &dates_sum, j->growth);
		c->defer = NULL;
		j->has_value = j->growth->status == INC_GROWTH_VALUE;
		if (j->has_value)
			j->value = j->growth->growth;
	}
	j->known = j->fault.kind == 0;
	inc_rat_from_dec(&minimum, &req->minimum);
	j->met = j->known && j->has_value && inc_rat_cmp(&j->value, &minimum) >= 0;
}

/*
 * Evaluate: every requirement's value of the key and whether it is met,
 * once (those of scope member gate members instead: MemberGate).  A
 * requirement whose value could be computed and is below its minimum
 * decides alone; else the first whose value could not be computed raises
 * its data error.
 */
static void
Evaluate(IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	const Judged *first_unknown = NULL;
	bool		decided = false;
	int			r;

	if (rs->evaluated)
		return;
	SettleAll(c, offer, rs);
	rs->qualified = true;
	for (r = 0; r < offer->rules.nrequirements; r++)
	{
		const IncRequirement *req = &offer->rules.requirements[r];
		Judged	   *j = &rs->reqs[r].key;

		if (req->scope == INC_SCOPE_MEMBER || req->scope == INC_SCOPE_GROWER)
			continue;
		Judge(c, req, c->participant_key, j);
		if (!j->met)
			rs->qualified = false;
		if (j->known && !j->met)
			decided = true;
		if (!j->known && first_unknown == NULL)
			first_unknown = j;
	}
	rs->evaluated = true;
	if (first_unknown && !decided)
		Raise(c, &first_unknown->fault);
}

/*
 * MemberGate: whether member m of a group offer keeps its rows: every
 * requirement of scope member judged on m's own transactions of the key
 * (a property: m's own), once.  One that could be computed and is not met
 * fails the member; else one that could not be computed leaves the gate
 * unknown, and raise raises its data error.
 */
static Gate
MemberGate(IncCalc *c, const IncOffer *offer, RulesState *rs, int m, bool raise)
{
	const Judged *first_unknown = NULL;
	int			r;

	if (rs->gates[m] == GATE_UNDECIDED)
	{
		rs->gates[m] = GATE_PASSES;
		for (r = 0; r < offer->rules.nrequirements; r++)
		{
			const IncRequirement *req = &offer->rules.requirements[r];
			Judged	   *j;

			if (req->scope != INC_SCOPE_MEMBER)
				continue;
			j = &rs->reqs[r].members[m];
			Judge(c, req, c->unit->keys[m], j);
			if (j->known && !j->met)
				rs->gates[m] = GATE_FAILS;
			if (!j->known && first_unknown == NULL)
				first_unknown = j;
		}
		if (rs->gates[m] == GATE_PASSES && first_unknown)
			rs->gates[m] = GATE_UNKNOWN;
	}
	if (rs->gates[m] == GATE_UNKNOWN && raise)
	{
		for (r = 0; r < offer->rules.nrequirements; r++)
			if (offer->rules.requirements[r].scope == INC_SCOPE_MEMBER &&
				!rs->reqs[r].members[m].known)
				Raise(c, &rs->reqs[r].members[m].fault);
	}
	return rs->gates[m];
}

/*
 * GrowerGate: whether the rows of grower g's transactions stay: every
 * requirement of scope grower judged on the grower's transactions of the
 * key, once.  One that could be computed and is not met fails the grower;
 * else one that could not be computed leaves the gate unknown, and raise
 * raises its data error.
 */
static Gate
GrowerGate(IncCalc *c, const IncOffer *offer, RulesState *rs, int g, bool raise)
{
	GrowerState *gs = &rs->grower_states[g];
	const Judged *first_unknown = NULL;
	int			r;

	if (gs->gate == GATE_UNDECIDED)
	{
		gs->gate = GATE_PASSES;
		for (r = 0; r < offer->rules.nrequirements; r++)
		{
			const IncRequirement *req = &offer->rules.requirements[r];
			Judged	   *j;

			if (req->scope != INC_SCOPE_GROWER)
				continue;
			j = &gs->reqs[r];
			Judge(c, req, c->participant_key, j);
			if (j->known && !j->met)
				gs->gate = GATE_FAILS;
			if (!j->known && first_unknown == NULL)
				first_unknown = j;
		}
		if (gs->gate == GATE_PASSES && first_unknown)
			gs->gate = GATE_UNKNOWN;
	}
	if (gs->gate == GATE_UNKNOWN && raise)
	{
		for (r = 0; r < offer->rules.nrequirements; r++)
			if (offer->rules.requirements[r].scope == INC_SCOPE_GROWER && !gs->reqs[r].known)
				Raise(c, &gs->reqs[r].fault);
	}
	return gs->gate;
}

/*
 * TxnGrowerGate: the gate of t's grower (a transaction without a
 * grower_key fails); raise as for GrowerGate.
 */
static Gate
TxnGrowerGate(IncCalc *c, const IncOffer *offer, RulesState *rs, const IncTxn *t, bool raise)
{
	if (t->grower_key == NULL)
		return GATE_FAILS;
	return GrowerGate(c, offer, rs, GrowerIndex(offer, rs, t->grower_key), raise);
}

/*
 * RemoveByGrower: the held rows of transactions whose grower fails its
 * requirements of scope grower (or that have none) removed, after the
 * strategy and before the limits (docs/reference.md, Growers): their
 * volume counted, their shares given to nobody.  An undecidable gate
 * raises its data error when the host wants the row's participant; else
 * the row goes.
 */
static void
RemoveByGrower(IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	int			i,
				kept = 0;

	for (i = 0; i < rs->nheld; i++)
	{
		HeldRow    *h = &rs->held[i];
		bool		wanted = (c->unit->flags[h->row.txn->participant] & INC_KEY_REPORT) != 0;

		if (c->tick)
			c->tick();
		inc_calc_at(c, h->row.txn);
		if (TxnGrowerGate(c, offer, rs, h->row.txn, wanted) != GATE_PASSES)
		{
			rs->removed++;
			continue;
		}
		if (kept != i)
			rs->held[kept] = *h;
		kept++;
	}
	rs->nheld = kept;
	inc_calc_at(c, NULL);
}

/*
 * AllGrowersFail: does every kept strategy hook's transaction certainly
 * fail its grower's requirements (or have no grower)?  Then no row of the
 * offer remains: it pays nothing because of a requirement (not qualified:
 * its strategy's data errors are not raised).
 */
static bool
AllGrowersFail(IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	int			i;

	for (i = 0; i < rs->nkept; i++)
	{
		const IncTxn *t = inc_calc_txn(c, rs->kept[i].txn);

		if (c->tick)
			c->tick();
		if (TxnGrowerGate(c, offer, rs, t, false) != GATE_FAILS)
			return false;
	}
	return true;
}

/*
 * Replay: the kept hooks to the strategy, in the order they came (a kept
 * transaction whose admission is unknown: the error of its NULL date).
 */
static void
Replay(IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	int			i;

	for (i = 0; i < rs->nkept; i++)
	{
		const Kept *k = &rs->kept[i];

		if (c->tick)
			c->tick();
		inc_calc_at(c, inc_calc_txn(c, k->txn));
		if (k->unknown)
			(void) inc_calc_has(c, inc_calc_txn(c, k->txn), INC_TXN_NULL_DATE);
		else
			rs->strategy->observe(c, offer, rs->strategy_state, k->hook, k->txn);
	}
	inc_calc_at(c, NULL);
}

/* CompareHeld: (transaction_id, incentive_rate_key) in byte order. */
static int
CompareHeld(const void *a, const void *b)
{
	return inc_row_order(&(*(const HeldRow *const *) a)->row,
						 &(*(const HeldRow *const *) b)->row);
}

/*
 * Release: one held row to the host with its final amount, counted as
 * paid -- unless, in a group offer with requirements of scope member, its
 * participant fails them (after the group's calculation: its share is
 * not given to others).  An undecidable gate raises its data error when
 * the host wants the member's rows; else they are dropped anyway.
 */
static void
Release(IncCalc *c, const IncOffer *offer, RulesState *rs, HeldRow *h, const IncDec *amount)
{
	IncRat		a;

	if (offer->rules.nmember_requirements > 0)
	{
		int			m = h->row.txn->participant;
		bool		wanted = (c->unit->flags[m] & INC_KEY_REPORT) != 0;

		inc_calc_at(c, h->row.txn);
		if (MemberGate(c, offer, rs, m, wanted) != GATE_PASSES)
			return;
	}
	inc_calc_at(c, h->row.txn);
	inc_calc_emit_held(c, &h->row, amount);
	inc_rat_from_dec(&a, amount);
	inc_rat_add(&rs->paid, &rs->paid, &a);
}

/*
 * Cap: the held rows scaled by maximum / U and rounded again by running
 * sums in (transaction_id, incentive_rate_key) order: row i gets
 * round(S(i), 2) - round(S(i-1), 2), S(i) the scaled exact running sum.
 */
static void
Cap(IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	HeldRow   **order = inc_alloc(sizeof(HeldRow *) * (rs->nheld + 1));
	IncRat		maximum;
	IncRunning	running;
	int			i;

	for (i = 0; i < rs->nheld; i++)
		order[i] = &rs->held[i];
	qsort(order, (size_t) rs->nheld, sizeof(HeldRow *), CompareHeld);
	inc_rat_from_dec(&maximum, &offer->rules.limits.maximum);
	inc_running_init(&running, &maximum, &rs->before);
	for (i = 0; i < rs->nheld; i++)
	{
		IncDec		amount = inc_running_next(&running, &order[i]->exact, NULL);

		Release(c, offer, rs, order[i], &amount);
	}
}

/*
 * RulesObserve: nothing outside every window (but for a baseline's hooks,
 * INC_HOOK_UNENROLLED and RULES_BASELINE_HOOK); a requirement hook to its
 * requirement (its data errors noted in it); a strategy hook kept while
 * the offer has requirements, else to the strategy, its rows held.
 */
static void
RulesObserve(IncCalc *c, const IncOffer *offer, void *state, const IncHook *hook, int txn)
{
	RulesState *rs = state;
	IncFault	ignored = {0};
	Admission	admission;

	if (rs->by_member && hook->kind != RULES_BASELINE_HOOK)
		rs->seen[inc_calc_txn(c, txn)->participant] = true;
	if (hook->kind == RULES_HOOK || hook->kind == RULES_BASELINE_HOOK ||
		hook->kind == RULES_PRODUCT_HOOK)
	{
		Judged	   *j = JudgedOf(offer, rs, hook->a, inc_calc_txn(c, txn));

		/* a transaction that counts for no grower notes nothing */
		c->defer = j ? &j->fault : &ignored;
		admission = hook->kind != RULES_BASELINE_HOOK ? Admit(c, offer, rs, txn) : INSIDE;
		if (admission == INSIDE)
			ObserveRequirement(c, offer, rs, hook, txn);
		else if (admission == UNKNOWN)	/* noted in this requirement too */
			(void) inc_calc_has(c, inc_calc_txn(c, txn), INC_TXN_NULL_DATE);
		c->defer = NULL;
		return;
	}
	if (offer->rules.nrequirements > 0)
	{
		/* an unknown admission is raised if the strategy runs (Replay) */
		c->defer = &ignored;
		admission = hook->kind & INC_HOOK_UNENROLLED ? INSIDE : Admit(c, offer, rs, txn);
		c->defer = NULL;
		if (admission == OUTSIDE)
			return;
		if (rs->nkept == rs->kept_cap)
			rs->kept = inc_grow_list(rs->kept, rs->nkept, &rs->kept_cap, sizeof(Kept), 16);
		rs->kept[rs->nkept++] = (Kept)
		{
			hook, txn, admission == UNKNOWN
		};
		return;
	}
	if (!(hook->kind & INC_HOOK_UNENROLLED) && Admit(c, offer, rs, txn) == OUTSIDE)
		return;
	HoldRows(c, rs);
	rs->strategy->observe(c, offer, rs->strategy_state, hook, txn);
	c->hold = NULL;
}

/* ApplyLimits: U, then the limits, then the held rows to the host (qualified). */
static void
ApplyLimits(IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	const IncLimits *limits = &offer->rules.limits;
	IncRat		bound;
	int			i;

	if (!rs->holding)
		return;
	if (rs->qualified && offer->rules.ngrower_requirements > 0)
		RemoveByGrower(c, offer, rs);
	for (i = 0; i < rs->nheld; i++)
		inc_rat_add(&rs->before, &rs->before, &rs->held[i].exact);
	if (!rs->qualified)
		return;
	if (limits->has_minimum)
	{
		inc_rat_from_dec(&bound, &limits->minimum);
		if (inc_rat_cmp(&rs->before, &bound) < 0)
		{
			rs->applied = "minimum";
			return;
		}
	}
	if (limits->has_maximum)
	{
		inc_rat_from_dec(&bound, &limits->maximum);
		if (inc_rat_cmp(&rs->before, &bound) > 0)
		{
			rs->applied = "maximum";
			Cap(c, offer, rs);
			inc_calc_at(c, NULL);
			return;
		}
	}
	for (i = 0; i < rs->nheld; i++)
		Release(c, offer, rs, &rs->held[i], &rs->held[i].row.incentive_amount);
	inc_calc_at(c, NULL);
}

/*
 * AllMembersFail: has the key members, and does every one certainly fail
 * its requirements of scope member?  Then no row of the offer reaches
 * anyone: it pays nothing because of a requirement, like an unmet
 * requirement of the key (not qualified: its strategy's data errors are
 * not raised).
 */
static bool
AllMembersFail(IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	bool		any = false;
	int			m;

	for (m = 0; m < c->unit->nkeys; m++)
		if (rs->seen[m])
		{
			if (MemberGate(c, offer, rs, m, false) != GATE_FAILS)
				return false;
			any = true;
		}
	return any;
}

/*
 * RulesFinish: the requirements; when they are met (or there are none),
 * the strategy's kept hooks and its finish (its rows held), then the
 * limits, then the held rows.  An offer that is not qualified runs its
 * strategy only for diagnostics, its data errors noted, its rows dropped.
 */
static void
RulesFinish(IncCalc *c, const IncOffer *offer, void *state)
{
	RulesState *rs = state;

	if (offer->rules.nrequirements > 0)
	{
		Evaluate(c, offer, rs);
		if (rs->qualified && offer->rules.nmember_requirements > 0 && AllMembersFail(c, offer, rs))
			rs->qualified = false;
		if (rs->qualified && offer->rules.ngrower_requirements > 0 && AllGrowersFail(c, offer, rs))
			rs->qualified = false;
		if (!rs->qualified && !c->diagnostics)
			return;
		if (!rs->qualified)
			c->defer = &rs->strategy_fault;
		HoldRows(c, rs);
		Replay(c, offer, rs);
	}
	else
		HoldRows(c, rs);
	rs->strategy->finish(c, offer, rs->strategy_state);
	c->hold = NULL;
	c->defer = NULL;
	inc_calc_at(c, NULL);
	Evaluate(c, offer, rs);
	ApplyLimits(c, offer, rs);
}

/* Dec: d as a JSON number, or null. */
static void
Dec(IncJsonBuf *b, bool present, const IncDec *d)
{
	if (present)
		inc_json_dec(b, d);
	else
		inc_json_raw(b, "null");
}

/* Date: a day number as a JSON string. */
static void
Date(IncJsonBuf *b, int32_t days)
{
	char		text[16];

	inc_date_format(days, text, sizeof(text));
	inc_json_string(b, text);
}

/* WindowList: windows as JSON objects, each led by participant when not NULL. */
static void
WindowList(IncJsonBuf *b, const char *participant, const IncWindow *windows, int n,
		   bool *first)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		inc_json_raw(b, *first ? "{" : ",{");
		*first = false;
		if (participant)
		{
			inc_json_key_string(b, "participant_key", participant);
			inc_json_raw(b, ",");
		}
		inc_json_key(b, "start_date");
		Date(b, windows[i].start_date);
		inc_json_raw(b, ",");
		inc_json_key(b, "end_date");
		if (windows[i].open_ended)
			inc_json_raw(b, "null");
		else
			Date(b, windows[i].end_date);
		inc_json_raw(b, "}");
	}
}

/* Shown: may member m's figures show in the key's diagnostics? */
static bool
Shown(const IncCalc *c, int m)
{
	return (c->unit->flags[m] & (INC_KEY_VISIBLE | INC_KEY_REPORT)) != 0;
}

/*
 * Windows: "windows" and "transactions_outside_windows" (null when open);
 * in a group offer the windows of each member seen that may be shown,
 * each with its "participant_key".
 */
static void
Windows(IncJsonBuf *b, const IncCalc *c, const IncOffer *offer, const RulesState *rs)
{
	char		count[64];
	bool		first = true;
	int			m;

	if (offer->rules.enrollment != INC_ENROLLMENT_REQUIRED)
	{
		inc_json_raw(b, "\"windows\":null,\"transactions_outside_windows\":null");
		return;
	}
	inc_json_raw(b, "\"windows\":[");
	if (rs->by_member)
	{
		for (m = 0; m < c->unit->nkeys; m++)
			if (rs->member_nwindows[m] > 0 && Shown(c, m))
				WindowList(b, c->unit->keys[m], rs->member_windows[m],
						   rs->member_nwindows[m], &first);
	}
	else
		WindowList(b, NULL, rs->windows, rs->nwindows, &first);
	snprintf(count, sizeof(count), "],\"transactions_outside_windows\":%d", rs->outside);
	inc_json_raw(b, count);
}

/*
 * JudgedJson: "value", "met" and "gap" of a judged requirement, or nulls
 * and its "error" when its value could not be computed.
 */
static void
JudgedJson(IncJsonBuf *b, const IncRequirement *req, const Judged *j)
{
	IncRat		gap;

	if (!j->known)
	{
		/* another requirement decided, so its error was not raised */
		inc_json_raw(b, "\"value\":null,\"met\":null,\"gap\":null,");
		inc_json_key_string(b, "error", j->fault.message);
		return;
	}
	inc_json_raw(b, "\"value\":");
	inc_json_rat(b, j->has_value ? &j->value : NULL, 6);
	inc_json_raw(b, j->met ? ",\"met\":true,\"gap\":" : ",\"met\":false,\"gap\":");
	inc_rat_from_dec(&gap, &req->minimum);
	if (j->has_value)
	{
		inc_rat_sub(&gap, &gap, &j->value);
		if (inc_rat_sign(&gap) < 0)
			inc_rat_from_int(&gap, 0);
	}
	inc_json_rat(b, j->has_value ? &gap : NULL, 6);
}

/*
 * Requirements: "requirements" with each value against its minimum.  In a
 * group offer each also has its "scope"; one of scope member has no value
 * of its own (nulls) but "members": [{"participant_key", "value", "met",
 * "gap"}] of the members seen (or whose diagnostics are the key's) that
 * may be shown, judged on their own transactions of the key.
 */
static void
Requirements(IncJsonBuf *b, IncCalc *c, const IncOffer *offer, RulesState *rs)
{
	int			r;

	inc_json_raw(b, "\"requirements\":[");
	for (r = 0; r < offer->rules.nrequirements; r++)
	{
		const IncRequirement *req = &offer->rules.requirements[r];
		const RequirementState *s = &rs->reqs[r];

		inc_json_raw(b, r ? ",{" : "{");
		inc_json_key_string(b, "key", req->key);
		inc_json_raw(b, ",");
		inc_json_key_string(b, "type", inc_threshold_type_name(req->type));
		inc_json_raw(b, ",");
		inc_json_key_string(b, "property_key", req->property_key);
		inc_json_raw(b, ",\"minimum\":");
		inc_json_dec(b, &req->minimum);
		if (req->scope != INC_SCOPE_MEMBER && s->key.growth && s->key.known)
			inc_growth_json(b, &req->baseline, s->key.growth);
		inc_json_raw(b, ",");
		if (rs->by_member || req->scope == INC_SCOPE_GROWER)
		{
			inc_json_key_string(b, "scope", inc_scope_name(req->scope));
			inc_json_raw(b, ",");
		}
		if (req->scope == INC_SCOPE_MEMBER)
		{
			bool		first = true;
			int			m;

			inc_json_raw(b, "\"value\":null,\"met\":null,\"gap\":null,\"members\":[");
			for (m = 0; m < c->unit->nkeys; m++)
			{
				/* its transactions count here, or its diagnostics are the key's */
				if (!(rs->seen[m] || (c->carriers && c->carriers[m])) || !Shown(c, m))
					continue;
				(void) MemberGate(c, offer, rs, m, false);
				inc_json_raw(b, first ? "{" : ",{");
				first = false;
				inc_json_key_string(b, "participant_key", c->unit->keys[m]);
				if (s->members[m].growth && s->members[m].known)
					inc_growth_json(b, &req->baseline, s->members[m].growth);
				inc_json_raw(b, ",");
				JudgedJson(b, req, &s->members[m]);
				inc_json_raw(b, "}");
			}
			inc_json_raw(b, "]}");
			continue;
		}
		if (req->scope == INC_SCOPE_GROWER)
		{
			int			g;

			inc_json_raw(b, "\"value\":null,\"met\":null,\"gap\":null,\"growers\":[");
			for (g = 0; g < rs->growers.n; g++)
			{
				(void) GrowerGate(c, offer, rs, g, false);
				inc_json_raw(b, g ? ",{" : "{");
				inc_json_key_string(b, "grower_key", rs->growers.keys[g]);
				inc_json_raw(b, ",");
				JudgedJson(b, req, &rs->grower_states[g].reqs[r]);
				inc_json_raw(b, "}");
			}
			inc_json_raw(b, "]}");
			continue;
		}
		JudgedJson(b, req, &s->key);
		inc_json_raw(b, "}");
	}
	inc_json_raw(b, "]");
}

/* Limits: "limits", null when the offer has none. */
static void
Limits(IncJsonBuf *b, const IncOffer *offer, const RulesState *rs)
{
	const IncLimits *limits = &offer->rules.limits;

	if (!limits->has_minimum && !limits->has_maximum)
	{
		inc_json_raw(b, "\"limits\":null");
		return;
	}
	inc_json_raw(b, "\"limits\":{\"minimum\":");
	Dec(b, limits->has_minimum, &limits->minimum);
	inc_json_raw(b, ",\"maximum\":");
	Dec(b, limits->has_maximum, &limits->maximum);
	inc_json_raw(b, ",\"amount_before_limits\":");
	inc_json_rat(b, rs->strategy_fault.kind ? NULL : &rs->before, 6);
	inc_json_raw(b, ",");
	inc_json_key_string(b, "applied", rs->applied);
	inc_json_raw(b, "}");
}

/*
 * RulesDiagnose: the strategy's diagnostics (an object) with "rules": {"enrollment",
 * "windows" ([{"start_date", "end_date"}], null when open),
 * "transactions_outside_windows", "requirements": [{"key", "type",
 * "property_key", "minimum", "value", "met", "gap"}, an "error" instead
 * of a value that could not be computed], "qualified", "strategy_error"
 * (only when the strategy's figures are left out), "limits": {"minimum",
 * "maximum", "amount_before_limits", "applied"} or null,
 * "incentive_amount" (what the offer's rows pay after the rules; null when
 * only enrollment applies, whose rows are never held)}.  An offer that is
 * not qualified shows what its strategy would pay before the
 * requirements, or, when a data error spoils that (noted, never raised),
 * none of the strategy's figures: the object has "rules" only.
 */
static const char *
RulesDiagnose(IncCalc *c, const IncOffer *offer, void *state)
{
	RulesState *rs = state;
	const char *strategy_json = "{}";
	IncJsonBuf	b;
	size_t		len;
	char	   *head;

	Evaluate(c, offer, rs);
	if (!rs->qualified && offer->rules.nrequirements > 0)
		c->defer = &rs->strategy_fault;
	if (rs->strategy_fault.kind == 0)
		strategy_json = rs->strategy->diagnose(c, offer, rs->strategy_state);
	c->defer = NULL;
	inc_calc_at(c, NULL);
	if (rs->strategy_fault.kind != 0)
		strategy_json = "{}";

	/* the strategy's object without its closing brace */
	len = strlen(strategy_json);
	head = inc_alloc(len + 1);
	memcpy(head, strategy_json, len);
	while (len > 0 && head[len - 1] != '}')
		len--;
	head[len > 0 ? len - 1 : 0] = '\0';

	inc_json_init(&b);
	inc_json_raw(&b, head);
	inc_json_raw(&b, strcmp(head, "{") == 0 ? "\"rules\":{" : ",\"rules\":{");
	inc_json_key_string(&b, "enrollment", inc_enrollment_name(offer->rules.enrollment));
	inc_json_raw(&b, ",");
	Windows(&b, c, offer, rs);
	inc_json_raw(&b, ",");
	Requirements(&b, c, offer, rs);
	inc_json_raw(&b, rs->qualified ? ",\"qualified\":true," : ",\"qualified\":false,");
	if (rs->strategy_fault.kind != 0)
	{
		inc_json_key_string(&b, "strategy_error", rs->strategy_fault.message);
		inc_json_raw(&b, ",");
	}
	Limits(&b, offer, rs);
	inc_json_raw(&b, ",\"incentive_amount\":");
	inc_json_rat(&b, rs->holding ? &rs->paid : NULL, 2);
	inc_json_raw(&b, "}}");
	return b.data;
}

/* RulesRates: the strategy's rates (the rules change none). */
static void
RulesRates(const IncOffer *offer, IncRateFn fn, void *ctx)
{
	inc_strategy_ops(offer->strategy)->rates(offer, fn, ctx);
}

/*
 * RulesBasis: the strategy's basis (the rules change none), unless a data
 * error of the strategy's figures was noted (an offer that is not
 * qualified: its figures are left out, as in RulesDiagnose).
 */
static bool
RulesBasis(IncCalc *c, const IncOffer *offer, void *state, IncBasis *out)
{
	RulesState *rs = state;
	bool		known;

	if (!rs->qualified && offer->rules.nrequirements > 0)
		c->defer = &rs->strategy_fault;
	known = rs->strategy->basis(c, offer, rs->strategy_state, out);
	c->defer = NULL;
	if (rs->strategy_fault.kind != 0)
	{
		out->has_value = false;
		out->rate_key = NULL;
	}
	return known;
}

/* KeyList: ,"name":[keys...] -- always for sku_keys, else only when non-empty. */
static void
KeyList(IncJsonBuf *b, const char *name, char **keys, int n, bool always)
{
	int			k;

	if (n == 0 && !always)
		return;
	inc_json_raw(b, ",");
	inc_json_key(b, name);
	inc_json_raw(b, "[");
	for (k = 0; k < n; k++)
	{
		if (k)
			inc_json_raw(b, ",");
		inc_json_string(b, keys[k]);
	}
	inc_json_raw(b, "]");
}

/*
 * Filters: a JSON array of filters: period_key, sku_keys, the product
 * lists a filter has (docs/reference.md, Products), transaction_type.
 */
static void
Filters(IncJsonBuf *b, const IncOffer *offer, const IncFilter *filters, int n)
{
	int			i;

	inc_json_raw(b, "[");
	for (i = 0; i < n; i++)
	{
		const IncFilter *f = &filters[i];

		inc_json_raw(b, i ? ",{" : "{");
		inc_json_key_string(b, "period_key", offer->periods[f->period].key);
		KeyList(b, "sku_keys", f->sku_keys, f->nskus, true);
		KeyList(b, "product_keys", f->product_keys, f->nproducts, false);
		KeyList(b, "exclude_sku_keys", f->exclude_sku_keys, f->nexclude_skus, false);
		KeyList(b, "exclude_product_keys", f->exclude_product_keys, f->nexclude_products, false);
		inc_json_raw(b, ",");
		inc_json_key_string(b, "transaction_type", f->transaction_type);
		inc_json_raw(b, "}");
	}
	inc_json_raw(b, "]");
}

/* inc_rules_requirements_json: the offer's requirements, compiled, as JSON (see rules.h). */
const char *
inc_rules_requirements_json(const IncOffer *offer)
{
	const IncRules *rules = &offer->rules;
	IncJsonBuf	b;
	int			r;

	inc_json_init(&b);
	inc_json_raw(&b, "[");
	for (r = 0; r < rules->nrequirements; r++)
	{
		const IncRequirement *req = &rules->requirements[r];

		inc_json_raw(&b, r ? ",{" : "{");
		inc_json_key_string(&b, "key", req->key);
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "type", inc_threshold_type_name(req->type));
		inc_json_raw(&b, ",\"minimum\":");
		inc_json_dec(&b, &req->minimum);
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "property_key", req->property_key);
		if (offer->aggregation == INC_AGGREGATE_GROUP || req->scope == INC_SCOPE_GROWER)
		{
			inc_json_raw(&b, ",");
			inc_json_key_string(&b, "scope", inc_scope_name(req->scope));
		}
		if (req->nproducts > 0)
			KeyList(&b, "product_keys", req->product_keys, req->nproducts, true);
		inc_json_raw(&b, ",\"filters\":");
		if (req->nfilters)
			Filters(&b, offer, req->filters, req->nfilters);
		else
			inc_json_raw(&b, "null");
		if (req->baseline.kind != INC_BASELINE_NONE)
		{
			inc_json_raw(&b, ",\"baseline\":");
			inc_growth_baseline_json(&b, &req->baseline);
		}
		inc_json_raw(&b, "}");
	}
	inc_json_raw(&b, "]");
	return b.data;
}

/*
 * inc_rules_ops: the rules' operations, each around the offer's strategy's.
 * It is no strategy of its own: .strategy is the first value only because
 * the field must hold one (the engine never reads it).
 */
const IncStrategyOps inc_rules_ops = {
	.strategy = INC_STANDARD,
	.index = RulesIndex,
	.begin = RulesBegin,
	.observe = RulesObserve,
	.finish = RulesFinish,
	.diagnose = RulesDiagnose,
	.rates = RulesRates,
	.basis = RulesBasis,
};
