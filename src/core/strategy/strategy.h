/*
 * strategy.h
 *    The strategy interface: what the engine asks of every strategy, as a
 *    table of operations per strategy (IncStrategyOps), and the table that
 *    maps IncStrategy to its operations (strategy.c).
 *
 * The engine (engine.c) indexes offers by SKU and runs each participant's
 * transactions past the offers that mention their SKU; it knows nothing
 * of any strategy and calls them only through this table:
 *
 *   index    once per offer, before any calculation: report every SKU the
 *            offer needs to see (a hook: the strategy's own kind and
 *            indexes, handed back to observe) and every property it reads;
 *   begin    the offer's state for one participant (created when its first
 *            transaction touches the offer; with diagnostics on, for every
 *            offer);
 *   observe  one transaction (index txn into c->txns) at one hook;
 *   finish   after the participant's last transaction: compute what needs
 *            totals (tiers, pools, overlaps) and emit the remaining rows;
 *   diagnose after finish, with diagnostics on: why the participant earns
 *            what it does under the offer, as a JSON object (inc_alloc
 *            memory); an untouched offer is diagnosed from a fresh state;
 *   rates    list the offer's rates as flat records (IncRateRow), without
 *            any calculation;
 *   basis    after finish: the threshold value the tiers are chosen by and
 *            the tier it meets (a forecast's basis, docs/reference.md,
 *            Forecast), whether or not rows follow; false for a strategy
 *            without tiers.
 *
 * The program rules (rules.h) are an operations table of this shape too,
 * whose operations call the strategy's: the engine calls it for an offer
 * with rules, and a strategy never knows whether it is wrapped.
 *
 * A strategy file includes this header and the layers below it (calc.h,
 * pool.h, jsonbuf.h, the offer model); it never calls the engine.
 */
#ifndef INC_STRATEGY_H
#define INC_STRATEGY_H

#include "../calc/calc.h"

/*
 * A hook kind with this bit set sees its transactions whatever the
 * offer's enrollment (docs/reference.md, Growth over a baseline: a
 * baseline is not filtered by enrollment); the program rules let them
 * through.
 */
#define INC_HOOK_UNENROLLED 0x100

/*
 * One place an offer mentions a SKU; kind, a and b mean what the strategy
 * says.  The hook sees the SKU's transactions dated from..to (days since
 * 2000-01-01, both inclusive): every day for a SKU an offer lists, the
 * days the SKU is in a product for one it reaches through a product.
 */
typedef struct IncHook
{
	int			offer;			/* index of the offer in the engine */
	int			kind;
	int			a;
	int			b;
	int			uom_id;			/* hook_uom: the id of its uom (units.h); else 0 */
	int32_t		from;
	int32_t		to;
} IncHook;

/*
 * Where a strategy's index operation reports what its offer needs: hooks,
 * a hook whose transactions convert to a unit of measure (hook_uom: the
 * engine resolves the uom's id once, so the calculation converts by id),
 * the hooks of a filter (filter: the SKUs and dates it selects, through
 * products too, each hooked with kind, a and b), the hooks of a standard
 * entry (entry: each SKU and dates it pays, hooked with kind, a and the
 * index of the rate it takes as b), and properties.
 */
typedef struct IncIndexSink
{
	void		(*hook) (void *ctx, const char *sku_key, int kind, int a, int b);
	void		(*hook_uom) (void *ctx, const char *sku_key, int kind, int a, int b,
							 const char *uom_key);
	void		(*filter) (void *ctx, const IncFilter *filter, int kind, int a, int b);
	void		(*entry) (void *ctx, const IncStandardEntry *entry, int kind, int a);
	void		(*property) (void *ctx, const char *property_key);
	void	   *ctx;
} IncIndexSink;

typedef struct IncStrategyOps
{
	IncStrategy strategy;
	void		(*index) (const IncOffer *offer, const IncIndexSink *sink);
	void	   *(*begin) (IncCalc *c, const IncOffer *offer);
	void		(*observe) (IncCalc *c, const IncOffer *offer, void *state,
							const IncHook *hook, int txn);
	void		(*finish) (IncCalc *c, const IncOffer *offer, void *state);
	const char *(*diagnose) (IncCalc *c, const IncOffer *offer, void *state);
	void		(*rates) (const IncOffer *offer, IncRateFn fn, void *ctx);
	bool		(*basis) (IncCalc *c, const IncOffer *offer, void *state, IncBasis *out);
} IncStrategyOps;

/*
 * INC_STRATEGY_OPS: define the table name of strategy value whose
 * operations are named Prefix + the operation (PrefixIndex, PrefixBegin,
 * PrefixObserve, PrefixFinish, PrefixDiagnose, PrefixRates, PrefixBasis).
 */
#define INC_STRATEGY_OPS(name, value, Prefix) \
	const IncStrategyOps name = { \
		.strategy = value, \
		.index = Prefix##Index, \
		.begin = Prefix##Begin, \
		.observe = Prefix##Observe, \
		.finish = Prefix##Finish, \
		.diagnose = Prefix##Diagnose, \
		.rates = Prefix##Rates, \
		.basis = Prefix##Basis, \
	}

/* The strategies (strategy_standard.c, strategy_stepped.c, strategy_stacked.c). */
extern const IncStrategyOps inc_standard_ops;
extern const IncStrategyOps inc_stepped_ops;
extern const IncStrategyOps inc_stacked_ops;

/* inc_strategy_ops: the operations of strategy s (strategy.c). */
extern const IncStrategyOps *inc_strategy_ops(IncStrategy s);

#endif							/* INC_STRATEGY_H */
