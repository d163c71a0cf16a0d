/*
 * fixed.h
 *    The calculation's fast path: exact fractions of two 128-bit integers
 *    (IncQ), for the common figures -- amounts, quantities, prices, rates
 *    and unit factors of a few digits, and what they make together.
 *
 * Every operation is exact or says it cannot be (returns false: a value
 * would not fit 128 bits), and the caller then computes the same figure
 * with the big rationals (rational.h).  Both give the same value, so the
 * rounded figures are identical to the last digit.  inc_set_exact_only
 * (core.h) makes inc_fast() false, so that the fuzzers can run every input
 * both ways and compare.  Nothing here allocates; an IncQ is 32 bytes on
 * the stack, where an IncRat is over 500.
 */
#ifndef INC_FIXED_H
#define INC_FIXED_H

#include "rational.h"

/* num / den, den > 0; not necessarily reduced. */
typedef struct IncQ
{
	inc_int128	num;
	inc_int128	den;
} IncQ;

/* inc_fast: may the fast path be taken (not inc_set_exact_only(true))? */
static inline bool
inc_fast(void)
{
	return !inc_exact_only;
}

/* r = d exactly (den 10^scale); false only for a scale past 38. */
extern bool inc_q_from_dec(IncQ *r, const IncDec *d);

/* r = v */
static inline void
inc_q_from_int(IncQ *r, int64_t v)
{
	r->num = v;
	r->den = 1;
}

/* r = a op b; false when the result does not fit (r is then undefined). */
extern bool inc_q_add(IncQ *r, const IncQ *a, const IncQ *b);
extern bool inc_q_mul(IncQ *r, const IncQ *a, const IncQ *b);
extern bool inc_q_div(IncQ *r, const IncQ *a, const IncQ *b);	/* b != 0 */

static inline int
inc_q_sign(const IncQ *a)
{
	return (a->num > 0) - (a->num < 0);
}

/*
 * inc_q_round: a rounded to scale places, half away from zero
 * (inc_rat_round's rule), as an IncDec of that scale; false when it does
 * not fit (38 digits) or cannot be computed in 128 bits.
 */
extern bool inc_q_round(const IncQ *a, int scale, IncDec *out);

/*
 * IncSum: an exact running sum (thresholds, coverage) kept as an IncQ
 * while it fits and as a big rational (inc_alloc'd) once it does not.
 */
typedef struct IncSum
{
	IncQ		q;
	IncRat	   *big;			/* NULL while the sum is q */
} IncSum;

extern void inc_sum_init(IncSum *s);
extern void inc_sum_add_q(IncSum *s, const IncQ *v);
extern void inc_sum_add_rat(IncSum *s, const IncRat *v);
/* inc_sum_get: the sum as a big rational. */
extern void inc_sum_get(const IncSum *s, IncRat *out);

/* inc_q_to_rat: the same value as a big rational. */
extern void inc_q_to_rat(IncRat *r, const IncQ *a);

/* inc_q_from_rat: a as an IncQ (reduced first when it helps); false when it does not fit. */
extern bool inc_q_from_rat(IncQ *r, const IncRat *a);

#endif							/* INC_FIXED_H */
