/*
 * strategy_standard.c
 *    The standard strategy (docs/reference.md, Standard): a fixed rate per
 *    SKU in each incentives[] entry.
 *
 * Each entry applies independently: a transaction matching two entries
 * earns once per entry.  percent_of_amount and dollars_per_unit rows are
 * emitted as the transactions are observed; fixed_amount collects each
 * (entry, SKU) pool's transactions and shares the pool when the
 * participant is finished (pool.c).  Diagnostics report each entry with
 * its period, rates, the transactions it matched and what it paid.
 */
#include <stdio.h>

#include "../util/jsonbuf.h"
#include "../calc/pool.h"
#include "strategy.h"

typedef struct StandardState
{
	IncIndexList **pools;		/* fixed_amount, per entry: per rate, the
								 * pool's transactions */
	int		   *matched;		/* per entry: transactions matched */
	IncRat	   *paid;			/* per entry, with diagnostics: the reported
								 * incentive amounts added up */
} StandardState;

/*
 * StandardIndex: every SKU each entry pays, through its own rate or a
 * product's (a: entry, b: the rate it takes).
 */
static void
StandardIndex(const IncOffer *offer, const IncIndexSink *sink)
{
	int			i;

	for (i = 0; i < offer->nentries; i++)
		sink->entry(sink->ctx, &offer->entries[i], 0, i);
}

/* StandardBegin: the state of one offer for one participant. */
static void *
StandardBegin(IncCalc *c, const IncOffer *offer)
{
	StandardState *st = inc_alloc(sizeof(StandardState));
	int			i;

	if (offer->calculator == INC_FIXED_AMOUNT)
		st->pools = inc_alloc(sizeof(IncIndexList *) * offer->nentries);
	st->matched = inc_alloc(sizeof(int) * offer->nentries);
	if (c->diagnostics)
	{
		st->paid = inc_alloc(sizeof(IncRat) * offer->nentries);
		for (i = 0; i < offer->nentries; i++)
			inc_rat_from_int(&st->paid[i], 0);
	}
	return st;
}

/*
 * ScheduledRow: the row of an offer with a rate schedule
 * (docs/lifecycle.md, Prospective rate changes): the rate, pay rate and
 * entry key of the version at t's date; in a forecast's projection, the
 * projected part of t at the schedule's rates over the days left
 * (inc_calc_schedule_rate).
 */
static IncDec
ScheduledRow(IncCalc *c, const IncOffer *offer, const IncHook *hook, const IncTxn *t)
{
	const IncOffer *version = inc_calc_version(offer, t);
	const IncStandardEntry *entry = &version->entries[hook->a];
	const IncSkuRate *rate = &entry->rates[hook->b];
	IncRat	   *rates;
	IncRat		own,
				mean,
				paid;
	int			s;

	if (!inc_calc_schedule_projected(c, offer, t))
		return inc_calc_emit_rate_row(c, offer, t, entry->key, rate->measure,
									  &rate->rate, &rate->pay_rate);
	rates = inc_alloc(sizeof(IncRat) * offer->nschedule);
	for (s = 0; s < offer->nschedule; s++)
		inc_rat_from_dec(&rates[s],
						 &offer->schedule[s].offer->entries[hook->a].rates[hook->b].rate);
	inc_calc_schedule_mean(c, offer, rates, &mean);
	inc_rat_from_dec(&own, &rate->rate);
	inc_calc_schedule_rate(c, offer, t, &own, &mean, &paid);
	return inc_calc_emit_rate_row_rat(c, offer, t, entry->key, rate->measure, &rate->rate,
									  &rate->pay_rate, &paid);
}

/* StandardObserve: transaction txn has the SKU of entry hook->a, rate hook->b. */
static void
StandardObserve(IncCalc *c, const IncOffer *offer, void *state,
				const IncHook *hook, int txn)
{
	StandardState *st = state;
	const IncStandardEntry *entry = &offer->entries[hook->a];
	const IncSkuRate *rate = &entry->rates[hook->b];
	const IncTxn *t = inc_calc_txn(c, txn);
	IncDec		amount;

	if (!inc_txn_matches(c, offer, entry->period, entry->transaction_type, t))
		return;
	st->matched[hook->a]++;

	if (offer->calculator == INC_FIXED_AMOUNT)
	{
		if (st->pools[hook->a] == NULL)
			st->pools[hook->a] = inc_alloc(sizeof(IncIndexList) * entry->nrates);
		inc_index_list_push(&st->pools[hook->a][hook->b], txn);
		return;
	}

	c->product_key = rate->product_key;
	if (offer->nschedule > 0)
		amount = ScheduledRow(c, offer, hook, t);
	else
		amount = inc_calc_emit_rate_row(c, offer, t, entry->key, rate->measure,
										&rate->rate, &rate->pay_rate);
	c->product_key = NULL;
	if (st->paid)
	{
		IncRat		a;

		inc_rat_from_dec(&a, &amount);
		inc_rat_add(&st->paid[hook->a], &st->paid[hook->a], &a);
	}
}

/* StandardFinish: share the fixed pools of the participant. */
static void
StandardFinish(IncCalc *c, const IncOffer *offer, void *state)
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
			if (st->pools[i][j].n == 0)
				continue;
			c->product_key = entry->rates[j].product_key;
			inc_allocate_pool(c, offer, &st->pools[i][j], &entry->rates[j].rate,
							  entry->key, entry->rates[j].measure,
							  st->paid ? &st->paid[i] : NULL);
			c->product_key = NULL;
		}
	}
}

/*
 * StandardDiagnose: {"entries": [{"rate_key", "label", "period_key",
 * "period_start_date", "period_end_date", "transaction_type", "rates":
 * [{"sku_key", "product_key" (a product's rate), "rate", "measure"}],
 * "transactions", "incentive_amount"}]}
 * in entry order.
 */
static const char *
StandardDiagnose(IncCalc *c, const IncOffer *offer, void *state)
{
	StandardState *st = state;
	IncJsonBuf	b;
	char		text[64];
	int			i,
				j;

	(void) c;
	inc_json_init(&b);
	inc_json_raw(&b, "{\"entries\":[");
	for (i = 0; i < offer->nentries; i++)
	{
		const IncStandardEntry *entry = &offer->entries[i];
		const IncPeriod *period = &offer->periods[entry->period];

		inc_json_raw(&b, i ? ",{" : "{");
		inc_json_key_string(&b, "rate_key", entry->key);
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "label", entry->label);
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "period_key", period->key);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "period_start_date");
		inc_date_format(period->start_date, text, sizeof(text));
		inc_json_string(&b, text);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "period_end_date");
		inc_date_format(period->end_date, text, sizeof(text));
		inc_json_string(&b, text);
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "transaction_type", entry->transaction_type);
		inc_json_raw(&b, ",\"rates\":[");
		for (j = 0; j < entry->nrates; j++)
		{
			inc_json_raw(&b, j ? ",{" : "{");
			inc_json_key_string(&b, "sku_key", entry->rates[j].sku_key);
			if (entry->rates[j].product_key)
			{
				inc_json_raw(&b, ",");
				inc_json_key_string(&b, "product_key", entry->rates[j].product_key);
			}
			inc_json_raw(&b, ",\"rate\":");
			inc_json_dec(&b, &entry->rates[j].rate);
			inc_json_raw(&b, ",");
			inc_json_key_string(&b, "measure", entry->rates[j].measure);
			inc_json_raw(&b, "}");
		}
		snprintf(text, sizeof(text), "],\"transactions\":%d,\"incentive_amount\":",
				 st->matched[i]);
		inc_json_raw(&b, text);
		inc_json_rat(&b, st->paid ? &st->paid[i] : NULL, 2);
		inc_json_raw(&b, "}");
	}
	inc_json_raw(&b, "]}");
	return b.data;
}

/* StandardRates: one row per entry and SKU or product rate. */
static void
StandardRates(const IncOffer *offer, IncRateFn fn, void *ctx)
{
	int			i,
				j;

	for (i = 0; i < offer->nentries; i++)
	{
		const IncStandardEntry *entry = &offer->entries[i];

		for (j = 0; j < entry->nrates; j++)
		{
			const IncSkuRate *rate = &entry->rates[j];
			IncRateRow	row = inc_rate_row(offer, entry->key, &rate->rate, rate->measure,
										   &offer->periods[entry->period],
										   entry->transaction_type);

			row.sku_key = rate->sku_key;
			row.product_key = rate->product_key;
			inc_rate_row_emit(&row, fn, ctx);
		}
	}
}

/* StandardBasis: no tiers, so no basis (its entries pay fixed rates). */
static bool
StandardBasis(IncCalc *c, const IncOffer *offer, void *state, IncBasis *out)
{
	(void) c;
	(void) offer;
	(void) state;
	(void) out;
	return false;
}

INC_STRATEGY_OPS(inc_standard_ops, INC_STANDARD, Standard);
