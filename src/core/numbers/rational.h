/*
 * rational.h
 *    Exact rational arithmetic on fixed-capacity big integers.
 *
 * Every computed figure (coverage, overlap, contribution factor, shares of
 * a pool, incentive amounts) is carried as an exact fraction num/den and
 * rounded only when reported (docs/reference.md, Rounding).  The big
 * integers live inline (INC_BIG_LIMBS 32-bit limbs, about 600 decimal
 * digits) so no operation allocates; a result that does not fit calls
 * inc_fail(INC_ERR_RANGE, ...), never wraps.  Operations touch only the
 * limbs in use, so small values are cheap.
 *
 * Invariants of an IncRat: den > 0; num and den need not be coprime
 * (sums are reduced by the gcd when the denominator grows past one limb,
 * past two on the fast path, to keep sums of many fractions small;
 * products and quotients only when they would not fit otherwise).
 */
#ifndef INC_RATIONAL_H
#define INC_RATIONAL_H

#include "core.h"

#define INC_BIG_LIMBS 64

typedef struct IncBig
{
	uint32_t	len;			/* limbs in use; 0 means zero */
	bool		neg;			/* sign; false for zero */
	uint32_t	d[INC_BIG_LIMBS];	/* little-endian magnitude */
} IncBig;

typedef struct IncRat
{
	IncBig		num;
	IncBig		den;			/* always > 0 */
} IncRat;

/* Constructors. */
extern void inc_rat_from_int(IncRat *r, int64_t v);
extern void inc_rat_from_dec(IncRat *r, const IncDec *d);

/*
 * Arithmetic: r = a op b.  r may alias a or b.  Division by zero is
 * inc_fail(INC_ERR_INTERNAL, ...) (callers check first).
 */
extern void inc_rat_add(IncRat *r, const IncRat *a, const IncRat *b);
extern void inc_rat_sub(IncRat *r, const IncRat *a, const IncRat *b);
extern void inc_rat_mul(IncRat *r, const IncRat *a, const IncRat *b);
extern void inc_rat_div(IncRat *r, const IncRat *a, const IncRat *b);

/* inc_rat_reduce: a divided by the gcd of its numerator and denominator. */
extern void inc_rat_reduce(IncRat *a);

/* Comparisons. */
extern int	inc_rat_sign(const IncRat *a);	/* -1, 0, 1 */
extern int	inc_rat_cmp(const IncRat *a, const IncRat *b);	/* -1, 0, 1 */

/*
 * inc_rat_round: r = a rounded to scale decimal places, half away from
 * zero (PostgreSQL's round(numeric, scale)); r's den is then 10^scale.
 * 0 <= scale <= 30.
 */
extern void inc_rat_round(IncRat *r, const IncRat *a, int scale);

/*
 * inc_rat_format: round a as inc_rat_round does and write the plain
 * decimal text with exactly scale fraction digits ("813.56", "-0.02",
 * "1.000000", "0.0000") into buf.  Returns the length; a result longer
 * than cap-1 is inc_fail(INC_ERR_RANGE, ...).  Negative zero prints "0.00".
 */
extern int	inc_rat_format(const IncRat *a, int scale, char *buf, size_t cap);

/*
 * inc_rat_to_dec: a rounded as inc_rat_round does, as an IncDec of exactly
 * that scale (what the host reports); more than 38 digits is
 * inc_fail(INC_ERR_RANGE, ...).
 */
extern IncDec inc_rat_to_dec(const IncRat *a, int scale);

#endif							/* INC_RATIONAL_H */
