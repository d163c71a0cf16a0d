/*
 * engine.c
 *    The calculation driver: builds the SKU index of the offers, runs one
 *    participant's transactions past the strategies, finishes and
 *    diagnoses the offers, and keeps the position for error context.
 *
 * The driver knows no strategy: every step goes through the operations
 * table of the offer's strategy (strategy.h).  A transaction costs only
 * the hooks of its own SKU, so a calculation is O(transactions x offers
 * that mention their SKU).  Offer state is per participant and created on
 * first touch; a generation counter makes "forget the last participant"
 * O(1).  The shared figures (units, base amounts, rounding) are in
 * calc.c, the unit tables in units.c.
 *
 * A forecast's projection (inc_engine_set_projection) is one pointer per
 * offer, handed to the calculation helpers (IncCalc.projection) before
 * each operation of that offer; without one nothing changes.
 *
 * An offer with program rules (IncOffer.rules.any) gets the rules'
 * operations table instead of its strategy's (rules.h): they call the
 * strategy's around their own, so the driver never branches on rules and
 * an offer without rules never reaches them.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "../rules/rules.h"
#include "../strategy/strategy.h"
#include "../util/strmap.h"

typedef struct IncHookList
{
	int			id;				/* the SKU's id, from 1 */
	int			n;
	int			cap;
	IncHook    *hooks;
} IncHookList;

struct IncEngine
{
	int			noffers;
	int			offers_cap;
	const IncOffer **offers;
	const IncStrategyOps **ops;	/* per offer, set by inc_engine_prepare: the
								 * rules' for an offer with rules, else its
								 * strategy's */
	IncUnits   *units;
	IncStrMap  *index;			/* sku_key -> IncHookList * */
	const char **sku_keys;		/* by id - 1 */
	int			nsku_keys;
	IncHookList **hook_lists;	/* by SKU id; [0] unused */
	int32_t    *sku_uom_ids;	/* by SKU id: its unit's id, 0 for none */
	bool		sku_uoms_stale; /* a SKU unit was set since they were made */
	const char **property_keys;
	int			nproperty_keys;
	int			property_keys_cap;
	IncTickFn	tick;
	IncDiagnosticsFn diagnostics;
	void	   *diagnostics_ctx;
	IncEnrollmentFn enrollments;
	void	   *enrollments_ctx;
	IncBasisFn	basis;
	void	   *basis_ctx;
	IncProjection *projections; /* per offer, made by inc_engine_prepare */
	const IncProjection **projected;	/* per offer: its projection, or NULL */
	bool		projecting;		/* inc_engine_set_projection is on */
	const char **enrollment_offer_keys;	/* offers with enrollment "required" */
	int			nenrollment_offer_keys;
	IncPosition position;		/* see inc_engine_position */
	/* per-participant state, valid while state_gen[i] == gen */
	uint64_t	gen;
	uint64_t   *state_gen;
	void	  **state;
};

/* What the index sink's callbacks need: the engine and the offer indexed. */
typedef struct Indexing
{
	IncEngine  *engine;
	int			offer;
} Indexing;

/* inc_engine_create: an empty engine (in the current allocator). */
IncEngine *
inc_engine_create(void)
{
	IncEngine  *e = inc_alloc(sizeof(IncEngine));

	e->units = inc_units_create();
	e->index = inc_strmap_create();
	return e;
}

/* inc_engine_add_offer: add a compiled offer (kept by pointer). */
void
inc_engine_add_offer(IncEngine *e, const IncOffer *offer)
{
	if (e->noffers == e->offers_cap)
		e->offers = inc_grow(e->offers, e->noffers, &e->offers_cap,
							 sizeof(IncOffer *), 16);
	e->offers[e->noffers++] = offer;
}

/* inc_engine_set_sku_uom: sku_key is measured in uom_key (copied). */
void
inc_engine_set_sku_uom(IncEngine *e, const char *sku_key, const char *uom_key)
{
	inc_units_set_sku_uom(e->units, sku_key, uom_key);
	e->sku_uoms_stale = true;
}

/* inc_engine_add_conversion: quantity_in_to = quantity_in_from * factor. */
void
inc_engine_add_conversion(IncEngine *e, const char *from_uom, const char *to_uom,
						  const IncDec *factor)
{
	inc_units_add_conversion(e->units, from_uom, to_uom, factor);
}

/* inc_engine_set_diagnostics: report every offer's diagnostics to fn. */
void
inc_engine_set_diagnostics(IncEngine *e, IncDiagnosticsFn fn, void *ctx)
{
	e->diagnostics = fn;
	e->diagnostics_ctx = ctx;
}

/* inc_engine_set_enrollments: where the windows of "required" offers come from. */
void
inc_engine_set_enrollments(IncEngine *e, IncEnrollmentFn fn, void *ctx)
{
	e->enrollments = fn;
	e->enrollments_ctx = ctx;
}

/* inc_engine_set_basis: report every touched offer's basis to fn. */
void
inc_engine_set_basis(IncEngine *e, IncBasisFn fn, void *ctx)
{
	e->basis = fn;
	e->basis_ctx = ctx;
}

/*
 * inc_engine_set_projection: each offer's projection as of *as_of_date
 * (none for an offer whose span starts after it), or none at all.
 */
void
inc_engine_set_projection(IncEngine *e, const int32_t *as_of_date)
{
	int			o;

	e->projecting = as_of_date != NULL;
	if (as_of_date == NULL)
		return;
	for (o = 0; o < e->noffers; o++)
	{
		IncProjection *p = &e->projections[o];
		int32_t		end;

		inc_offer_span(e->offers[o], &p->from, &end);
		p->to = *as_of_date;
		inc_offer_span_days(e->offers[o], *as_of_date, &p->span_days, &p->elapsed_days);
		e->projected[o] = p->elapsed_days > 0 ? p : NULL;
	}
}

/* inc_engine_set_tick: fn is called between transactions and rows. */
void
inc_engine_set_tick(IncEngine *e, IncTickFn tick)
{
	e->tick = tick;
}

/* AddHook: the index sink's hook: sku_key leads to the offer being indexed. */
static void
AddHook(void *ctx, const char *sku_key, int kind, int a, int b)
{
	Indexing   *ix = ctx;
	IncEngine  *e = ix->engine;
	void	  **slot = inc_strmap_slot(e->index, sku_key);
	IncHookList *l = *slot;

	if (l == NULL)
	{
		l = inc_alloc(sizeof(IncHookList));
		*slot = l;
	}
	if (l->n == l->cap)
		l->hooks = inc_grow(l->hooks, l->n, &l->cap, sizeof(IncHook), 4);
	l->hooks[l->n++] = (IncHook)
	{
		ix->offer, kind, a, b
	};
}

/* AddProperty: the index sink's property: a property key to load, once. */
static void
AddProperty(void *ctx, const char *property_key)
{
	IncEngine  *e = ((Indexing *) ctx)->engine;
	int			i;

	for (i = 0; i < e->nproperty_keys; i++)
		if (strcmp(e->property_keys[i], property_key) == 0)
			return;
	if (e->nproperty_keys == e->property_keys_cap)
		e->property_keys = inc_grow(e->property_keys, e->nproperty_keys,
									&e->property_keys_cap, sizeof(char *), 8);
	e->property_keys[e->nproperty_keys++] = property_key;
}

/* inc_engine_prepare: each offer's operations, the SKU index and the key lists. */
void
inc_engine_prepare(IncEngine *e)
{
	Indexing	ix = {e, 0};
	IncIndexSink sink = {AddHook, AddProperty, &ix};
	uint32_t	i;
	int			o;

	e->ops = inc_alloc(sizeof(IncStrategyOps *) * (e->noffers + 1));
	e->enrollment_offer_keys = inc_alloc(sizeof(char *) * (e->noffers + 1));
	for (o = 0; o < e->noffers; o++)
	{
		e->ops[o] = e->offers[o]->rules.any ? &inc_rules_ops :
			inc_strategy_ops(e->offers[o]->strategy);
		ix.offer = o;
		e->ops[o]->index(e->offers[o], &sink);
		if (e->offers[o]->rules.enrollment == INC_ENROLLMENT_REQUIRED)
			e->enrollment_offer_keys[e->nenrollment_offer_keys++] = e->offers[o]->offer_key;
	}

	e->sku_keys = inc_alloc(sizeof(char *) * (e->index->count + 1));
	e->hook_lists = inc_alloc(sizeof(IncHookList *) * (e->index->count + 1));
	e->sku_uom_ids = inc_alloc(sizeof(int32_t) * (e->index->count + 1));
	for (i = 0; i <= e->index->mask; i++)
		if (e->index->entries[i].key)
		{
			IncHookList *l = e->index->entries[i].value;

			e->sku_keys[e->nsku_keys++] = e->index->entries[i].key;
			l->id = e->nsku_keys;
			e->hook_lists[l->id] = l;
		}
	e->sku_uoms_stale = true;

	e->state_gen = inc_alloc(sizeof(uint64_t) * (e->noffers + 1));
	e->state = inc_alloc(sizeof(void *) * (e->noffers + 1));
	e->projections = inc_alloc(sizeof(IncProjection) * (e->noffers + 1));
	e->projected = inc_alloc(sizeof(IncProjection *) * (e->noffers + 1));
}

/* inc_engine_noffers: how many offers the engine has. */
int
inc_engine_noffers(const IncEngine *e)
{
	return e->noffers;
}

/* inc_engine_offer: offer i, in the order they were added. */
const IncOffer *
inc_engine_offer(const IncEngine *e, int i)
{
	return e->offers[i];
}

/* inc_engine_sku_id: the id of the SKU named by len bytes at sku, or 0. */
int
inc_engine_sku_id(const IncEngine *e, const char *sku, size_t len)
{
	const IncHookList *l = inc_strmap_get_len(e->index, sku, len);

	return l ? l->id : 0;
}

/* inc_engine_sku_key: the name of SKU id. */
const char *
inc_engine_sku_key(const IncEngine *e, int id)
{
	return e->sku_keys[id - 1];
}

/* inc_engine_uom_id: the id of the unit named by len bytes at uom (interned). */
int
inc_engine_uom_id(IncEngine *e, const char *uom, size_t len)
{
	return inc_units_intern(e->units, uom, len);
}

/* inc_engine_uom_key: the name of unit id. */
const char *
inc_engine_uom_key(const IncEngine *e, int id)
{
	return inc_units_name(e->units, id);
}

/* RefreshSkuUoms: each indexed SKU's unit id, after the SKU units changed. */
static void
RefreshSkuUoms(IncEngine *e)
{
	int			i;

	for (i = 0; i < e->nsku_keys; i++)
	{
		const char *uom = inc_units_sku_uom(e->units, e->sku_keys[i]);

		e->sku_uom_ids[i + 1] = uom ? inc_units_find(e->units, uom) : 0;
	}
	e->sku_uoms_stale = false;
}

/* inc_engine_sku_keys: every SKU some offer mentions. */
const char *const *
inc_engine_sku_keys(const IncEngine *e, int *n)
{
	*n = e->nsku_keys;
	return e->sku_keys;
}

/* inc_engine_enrollment_offer_keys: the offers whose enrollment is "required". */
const char *const *
inc_engine_enrollment_offer_keys(const IncEngine *e, int *n)
{
	*n = e->nenrollment_offer_keys;
	return e->enrollment_offer_keys;
}

/* inc_engine_needs_properties: does an offer read a property? */
bool
inc_engine_needs_properties(const IncEngine *e)
{
	return e->nproperty_keys > 0;
}

/* inc_engine_property_keys: the property keys the offers use. */
const char *const *
inc_engine_property_keys(const IncEngine *e, int *n)
{
	*n = e->nproperty_keys;
	return e->property_keys;
}

/*
 * OfferState: offer idx's state for the participant of c, begun (and
 * recorded as touched) on first use.
 */
static void *
OfferState(IncEngine *e, IncCalc *c, int *touched, int *ntouched, int idx)
{
	if (e->state_gen[idx] == e->gen)
		return e->state[idx];
	e->state[idx] = e->ops[idx]->begin(c, e->offers[idx]);
	e->state_gen[idx] = e->gen;
	touched[(*ntouched)++] = idx;
	return e->state[idx];
}

static int
CompareInts(const void *a, const void *b)
{
	int			x = *(const int *) a,
				y = *(const int *) b;

	return (x > y) - (x < y);
}

/* inc_engine_calculate: every earning row of one participant. */
void
inc_engine_calculate(IncEngine *e, const char *participant_key,
					 const IncTxn *txns, int ntxns,
					 IncPropertyFn props, void *props_ctx,
					 IncEmitFn emit, void *emit_ctx)
{
	IncCalc		c;
	int		   *touched = inc_alloc(sizeof(int) * (e->noffers + 1));
	int			ntouched = 0;
	int			i,
				h;

	if (e->sku_uoms_stale)
		RefreshSkuUoms(e);
	memset(&c, 0, sizeof(c));
	c.units = e->units;
	c.sku_uom_ids = e->sku_uom_ids;
	c.participant_key = participant_key;
	c.txns = txns;
	c.props = props;
	c.props_ctx = props_ctx;
	c.emit = emit;
	c.emit_ctx = emit_ctx;
	c.tick = e->tick;
	/* a basis is reported whether or not the rules let rows out */
	c.diagnostics = e->diagnostics != NULL || e->basis != NULL;
	c.position = &e->position;
	c.enrollments = e->enrollments;
	c.enrollments_ctx = e->enrollments_ctx;
	e->position.participant_key = participant_key;
	e->position.txn = NULL;
	e->gen++;

	for (i = 0; i < ntxns; i++)
	{
		const IncTxn *t = &txns[i];
		const IncHookList *hooks = t->sku_id ? e->hook_lists[t->sku_id] :
			inc_strmap_get(e->index, t->sku_key);

		if (e->tick)
			e->tick();
		if (hooks == NULL)
			continue;
		inc_calc_at(&c, t);
		for (h = 0; h < hooks->n; h++)
		{
			const IncHook *hook = &hooks->hooks[h];
			void	   *state;

			if (e->projecting)
				c.projection = e->projected[hook->offer];
			state = OfferState(e, &c, touched, &ntouched, hook->offer);
			e->ops[hook->offer]->observe(&c, e->offers[hook->offer], state, hook, i);
		}
	}
	inc_calc_at(&c, NULL);

	/* with diagnostics, every offer is reported, touched or not */
	if (e->diagnostics)
		for (i = 0; i < e->noffers; i++)
		{
			if (e->projecting)
				c.projection = e->projected[i];
			(void) OfferState(e, &c, touched, &ntouched, i);
		}

	/* finish offers in offer order, so output order is stable */
	qsort(touched, ntouched, sizeof(int), CompareInts);
	for (i = 0; i < ntouched; i++)
	{
		int			o = touched[i];

		if (e->projecting)
			c.projection = e->projected[o];
		e->ops[o]->finish(&c, e->offers[o], e->state[o]);
		inc_calc_at(&c, NULL);
		if (e->diagnostics)
		{
			const char *json = e->ops[o]->diagnose(&c, e->offers[o], e->state[o]);

			inc_calc_at(&c, NULL);
			e->diagnostics(e->diagnostics_ctx, e->offers[o], json);
		}
		if (e->basis)
		{
			IncBasis	basis;
			bool		known = e->ops[o]->basis(&c, e->offers[o], e->state[o], &basis);

			inc_calc_at(&c, NULL);
			e->basis(e->basis_ctx, e->offers[o], known ? &basis : NULL);
		}
	}
	e->position.participant_key = NULL;
}

/*
 * inc_engine_clear_position: outside a calculation again (a calculation
 * that failed left its position behind; a host reusing the engine clears
 * it, since the strings it points at are gone), and without what a failed
 * forecast left on: its basis report and its projection.
 */
void
inc_engine_clear_position(IncEngine *e)
{
	e->position.participant_key = NULL;
	e->position.txn = NULL;
	/* a failed forecast's (forecast.c): its report went with it */
	e->basis = NULL;
	e->basis_ctx = NULL;
	e->projecting = false;
}

/* inc_engine_position: the participant and transaction being calculated. */
bool
inc_engine_position(const IncEngine *e, const char **participant,
					const char **transaction_id)
{
	*participant = e->position.participant_key;
	*transaction_id = e->position.participant_key && e->position.txn ?
		e->position.txn->transaction_id : NULL;
	return *participant != NULL;
}

/* inc_offer_rates: the offer's rates, listed by its strategy. */
void
inc_offer_rates(const IncOffer *offer, IncRateFn fn, void *ctx)
{
	inc_strategy_ops(offer->strategy)->rates(offer, fn, ctx);
}
