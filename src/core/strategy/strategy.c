/*
 * strategy.c
 *    The table of strategies: IncStrategy -> its operations (strategy.h).
 *
 * Adding a fourth strategy takes:
 *   1. the offer model (offer.h, offer.c): a value in IncStrategy (and
 *      INC_NSTRATEGIES), its structure in IncOffer, its strategy_key in
 *      inc_strategy_names;
 *   2. the parser (offer_parse.c): the calculators it allows and the walk
 *      of its document structure;
 *   3. one new file, strategy_NAME.c, defining
 *      const IncStrategyOps inc_NAME_ops (index, begin, observe, finish,
 *      diagnose, rates) with INC_STRATEGY_OPS, declared in strategy.h;
 *   4. one entry in the table below.
 * The engine (engine.c), the program rules (rules.c) and the PostgreSQL
 * glue need no change.
 */
#include "strategy.h"

static const IncStrategyOps *const Strategies[] = {
	[INC_STANDARD] = &inc_standard_ops,
	[INC_STEPPED] = &inc_stepped_ops,
	[INC_STACKED] = &inc_stacked_ops,
};

/* inc_strategy_ops: the operations of s; s must be a known strategy. */
const IncStrategyOps *
inc_strategy_ops(IncStrategy s)
{
	if ((unsigned) s >= sizeof(Strategies) / sizeof(Strategies[0]) ||
		Strategies[s] == NULL || Strategies[s]->strategy != s)
		inc_fail(INC_ERR_INTERNAL, "no operations for strategy %d", (int) s);
	return Strategies[s];
}
