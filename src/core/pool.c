/*
 * pool.c
 *    Fixed pools, penny-exact (docs/reference.md, Fixed pools).
 *
 * A pool P is shared by transactions in proportion to their base amounts.
 * With B the sum of the bases (nothing is paid when B <= 0), and the
 * transactions in transaction_id byte order, row i gets
 * round(S(i), 2) - round(S(i-1), 2) where S(i) = P * (base(1) + ... +
 * base(i)) / B is the exact running share.  The rows add up to P exactly
 * and each is within a cent of its exact share.
 */
#include "pool.h"

/* inc_allocate_pool: emit the rows of one pool (see file header). */
void
inc_allocate_pool(IncCalc *c, const IncOffer *offer, const IncIndexList *txns,
				  const IncDec *pool, const char *rate_key, const char *rate_measure,
				  IncRat *paid)
{
	IncRat	   *quantities = inc_alloc(sizeof(IncRat) * txns->n);
	IncRat	   *bases = inc_alloc(sizeof(IncRat) * txns->n);
	IncRat		total,
				p,
				running,
				share,
				rounded,
				previous,
				rate;
	IncDec		pay_rate;
	int			i;

	inc_rat_from_int(&total, 0);
	for (i = 0; i < txns->n; i++)
	{
		const IncTxn *t = &c->txns[txns->items[i]];

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
		const IncTxn *t = &c->txns[txns->items[i]];
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
		if (paid)
		{
			IncRat		a;

			inc_rat_from_dec(&a, &amount);
			inc_rat_add(paid, paid, &a);
		}
	}
}
