/*
 * pool.c
 *    Fixed pools, penny-exact (docs/reference.md, Fixed pools).
 *
 * A pool P is shared by transactions in proportion to their base amounts.
 * With B the sum of the bases (nothing is paid when B <= 0), and the
 * transactions in transaction_id byte order, row i gets
 * round(S(i), 2) - round(S(i-1), 2) where S(i) = P * (base(1) + ... +
 * base(i)) / B is the exact running share.  The rows add up to P exactly
 * and each is within a cent of its exact share.  The engine hands
 * transactions over in any order, so the pool sorts its own.
 */
#include <stdlib.h>
#include <string.h>

#include "pool.h"

/* A pool member while sorting: its id (kept: inc_calc_keep) and its index. */
typedef struct Member
{
	const char *id;
	int			txn;
} Member;

static int
CompareMembers(const void *a, const void *b)
{
	const Member *x = a,
			   *y = b;
	int			c = strcmp(x->id, y->id);

	if (c != 0)
		return c;
	return (x->txn > y->txn) - (x->txn < y->txn);
}

/* SortById: txns->items in transaction_id byte order (the index breaks ties). */
static void
SortById(const IncCalc *c, const IncIndexList *txns)
{
	Member	   *m;
	int			i;
	bool		sorted = true;

	for (i = 1; i < txns->n && sorted; i++)
		sorted = strcmp(inc_calc_txn(c, txns->items[i - 1])->transaction_id,
						inc_calc_txn(c, txns->items[i])->transaction_id) < 0;
	if (sorted)
		return;
	m = inc_alloc(sizeof(Member) * txns->n);
	for (i = 0; i < txns->n; i++)
	{
		m[i].id = inc_calc_keep(c, inc_calc_txn(c, txns->items[i]))->transaction_id;
		m[i].txn = txns->items[i];
	}
	qsort(m, txns->n, sizeof(Member), CompareMembers);
	for (i = 0; i < txns->n; i++)
		txns->items[i] = m[i].txn;
}

/* Paid: add a row's reported amount to *paid (diagnostics), when wanted. */
static void
Paid(IncRat *paid, const IncDec *amount)
{
	IncRat		a;

	if (paid == NULL)
		return;
	inc_rat_from_dec(&a, amount);
	inc_rat_add(paid, paid, &a);
}

/*
 * PoolFast: the pool's rows on the fast path (fixed.h): every figure is
 * worked out first, then the rows are emitted; false, with nothing
 * emitted, when some value does not fit (the caller then takes the exact
 * path).  txns is sorted already.
 */
static bool
PoolFast(IncCalc *c, const IncOffer *offer, const IncIndexList *txns, const IncDec *pool,
		 const char *rate_key, const char *rate_measure, IncRat *paid)
{
	IncQ	   *bases = inc_alloc(sizeof(IncQ) * txns->n);
	IncRowValues *rows = inc_alloc(sizeof(IncRowValues) * txns->n);
	IncQ		total,
				p,
				running,
				share,
				rate;
	IncDec		pay_rate,
				previous;
	int			i;

	inc_q_from_int(&total, 0);
	for (i = 0; i < txns->n; i++)
	{
		const IncTxn *t = inc_calc_txn(c, txns->items[i]);
		IncQ		quantity;

		inc_calc_at(c, t);
		if (!inc_calc_sku_quantity_q(c, t, &quantity) ||
			!inc_calc_base_amount_q(c, offer, t, &quantity, &bases[i]) ||
			!inc_q_add(&total, &total, &bases[i]) ||
			!inc_q_round(&quantity, 6, &rows[i].incentivized_quantity) ||
			!inc_q_round(&bases[i], 2, &rows[i].incentivized_amount))
			return false;
	}
	if (inc_q_sign(&total) <= 0)
		return true;			/* nothing is paid */
	if (!inc_q_from_dec(&p, pool) || !inc_q_div(&rate, &p, &total) ||
		!inc_q_round(&rate, 6, &pay_rate))
		return false;

	inc_q_from_int(&running, 0);
	previous.coef = 0;
	previous.scale = 2;
	for (i = 0; i < txns->n; i++)
	{
		IncDec		rounded;

		if (!inc_q_add(&running, &running, &bases[i]) ||
			!inc_q_mul(&share, &p, &running) ||
			!inc_q_div(&share, &share, &total) ||
			!inc_q_round(&share, 2, &rounded))
			return false;
		rows[i].incentive_amount.coef = rounded.coef - previous.coef;
		rows[i].incentive_amount.scale = 2;
		previous = rounded;
	}

	for (i = 0; i < txns->n; i++)
	{
		const IncTxn *t = inc_calc_txn(c, txns->items[i]);
		IncDec		amount;
		IncQ		exact;

		inc_calc_at(c, t);
		rows[i].rate_key = rate_key;
		rows[i].rate_measure = rate_measure;
		rows[i].rate_value = pool;
		rows[i].pay_rate = pay_rate;
		rows[i].contribution = NULL;
		/* a pool row's exact amount is its allocated share */
		exact.num = rows[i].incentive_amount.coef;
		exact.den = 100;
		amount = inc_calc_emit_values(c, offer, t, &rows[i], &exact);
		Paid(paid, &amount);
	}
	return true;
}

/* inc_allocate_pool: emit the rows of one pool (see file header). */
void
inc_allocate_pool(IncCalc *c, const IncOffer *offer, const IncIndexList *txns,
				  const IncDec *pool, const char *rate_key, const char *rate_measure,
				  IncRat *paid)
{
	IncRat	   *quantities;
	IncRat	   *bases;
	IncRat		total,
				p,
				running,
				share,
				rounded,
				previous,
				rate;
	IncDec		pay_rate;
	int			i;

	SortById(c, txns);
	if (inc_fast() && PoolFast(c, offer, txns, pool, rate_key, rate_measure, paid))
		return;

	quantities = inc_alloc(sizeof(IncRat) * txns->n);
	bases = inc_alloc(sizeof(IncRat) * txns->n);
	inc_rat_from_int(&total, 0);
	for (i = 0; i < txns->n; i++)
	{
		const IncTxn *t = inc_calc_txn(c, txns->items[i]);

		inc_calc_at(c, t);
		inc_calc_sku_quantity(c, t, &quantities[i]);
		inc_calc_base_amount(c, offer, t, &quantities[i], &bases[i]);
		inc_rat_add(&total, &total, &bases[i]);
	}
	if (inc_rat_sign(&total) <= 0)
		return;

	inc_rat_from_dec(&p, pool);
	inc_rat_div(&rate, &p, &total);
	pay_rate = inc_rat_to_dec(&rate, 6);

	inc_rat_from_int(&running, 0);
	inc_rat_from_int(&previous, 0);
	for (i = 0; i < txns->n; i++)
	{
		const IncTxn *t = inc_calc_txn(c, txns->items[i]);
		IncRowFigures f;
		IncDec		amount;

		inc_calc_at(c, t);
		inc_rat_add(&running, &running, &bases[i]);
		inc_rat_mul(&share, &p, &running);
		inc_rat_div(&share, &share, &total);
		inc_rat_round(&rounded, &share, 2);
		inc_rat_sub(&share, &rounded, &previous);
		previous = rounded;

		f.rate_key = rate_key;
		f.rate_measure = rate_measure;
		f.rate_value = pool;
		f.pay_rate = pay_rate;
		f.incentivized_quantity = &quantities[i];
		f.incentivized_amount = &bases[i];
		f.incentive_amount = &share;
		f.contribution = NULL;
		amount = inc_calc_emit(c, offer, t, &f);
		Paid(paid, &amount);
	}
}
