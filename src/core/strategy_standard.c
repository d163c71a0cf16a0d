/*
 * strategy_standard.c
 *    The standard strategy (SPEC 2.1): a fixed rate per SKU in each
 *    incentives[] entry.
 *
 * Each entry applies independently: a transaction matching two entries
 * earns once per entry.  percent_of_amount and dollars_per_unit rows are
 * emitted as the transactions are observed; fixed_amount collects each
 * (entry, SKU) pool's transactions and shares the pool when the
 * participant is finished (allocate.c).
 */
#include "engine_internal.h"

typedef struct StandardState
{
	IncIndexList **pools;		/* per entry: per rate, the pool's transactions */
} StandardState;

/* inc_standard_begin: state of one offer for one participant. */
void *
inc_standard_begin(IncCalc *c, const IncOffer *offer)
{
	StandardState *st = inc_alloc(sizeof(StandardState));

	(void) c;
	if (offer->calculator == INC_FIXED_AMOUNT)
		st->pools = inc_alloc(sizeof(IncIndexList *) * offer->nentries);
	return st;
}

/* inc_standard_observe: transaction txn has the SKU of entry hook->a, rate hook->b. */
void
inc_standard_observe(IncCalc *c, const IncOffer *offer, void *state,
					 const IncHook *hook, int txn)
{
	StandardState *st = state;
	const IncStandardEntry *entry = &offer->entries[hook->a];
	const IncSkuRate *rate = &entry->rates[hook->b];
	const IncTxn *t = &c->txns[txn];
	IncDec		pay_rate;

	if (!inc_txn_matches(offer, entry->period, entry->transaction_type, t))
		return;

	if (offer->calculator == INC_FIXED_AMOUNT)
	{
		if (st->pools[hook->a] == NULL)
			st->pools[hook->a] = inc_alloc(sizeof(IncIndexList) * entry->nrates);
		inc_index_list_push(&st->pools[hook->a][hook->b], txn);
		return;
	}

	pay_rate = inc_pay_rate(offer->calculator, &rate->rate);
	inc_calc_emit_rate_row(c, offer, t, entry->key, rate->measure, &rate->rate, &pay_rate);
}

/* inc_standard_finish: share the fixed pools of the participant. */
void
inc_standard_finish(IncCalc *c, const IncOffer *offer, void *state)
{
	StandardState *st = state;
	int			i,
				j;

	if (offer->calculator != INC_FIXED_AMOUNT)
		return;
	for (i = 0; i < offer->nentries; i++)
	{
		const IncStandardEntry *entry = &offer->entries[i];

		if (st->pools[i] == NULL)
			continue;
		for (j = 0; j < entry->nrates; j++)
		{
			if (st->pools[i][j].n > 0)
				inc_allocate_pool(c, offer, &st->pools[i][j], &entry->rates[j].rate,
								  entry->key, entry->rates[j].measure);
		}
	}
}
