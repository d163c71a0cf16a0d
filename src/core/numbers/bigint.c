/*
 * bigint.c
 *    Unsigned big-integer magnitudes for the engine core's exact rationals:
 *    compare, add, subtract, multiply (schoolbook), divide (Knuth's
 *    algorithm D, with a fast path for one-limb divisors) and gcd.
 *
 * Limbs are 32 bits so every intermediate fits a uint64_t; no floating
 * point, no allocation.  Each routine reads and writes only the limbs in
 * use, so small numbers cost little.  Sizes are the caller's business (see
 * bigint.h); rational.c checks that results fit an IncBig.
 */
#include "bigint.h"

#include <string.h>

/* Length of a with leading zero limbs dropped. */
static inline int
trim(const uint32_t *a, int n)
{
	while (n > 0 && a[n - 1] == 0)
		n--;
	return n;
}

/*
 * inc_mag_cmp: compare two magnitudes (without leading zero limbs).
 */
int
inc_mag_cmp(const uint32_t *a, int an, const uint32_t *b, int bn)
{
	int			i;

	if (an != bn)
		return an < bn ? -1 : 1;
	for (i = an - 1; i >= 0; i--)
	{
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	}
	return 0;
}

/* Exchange the operands (a, an) and (b, bn). */
static inline void
SwapOperands(const uint32_t **a, int *an, const uint32_t **b, int *bn)
{
	const uint32_t *t = *a;
	int			tn = *an;

	*a = *b;
	*an = *bn;
	*b = t;
	*bn = tn;
}

/*
 * inc_mag_add: r = a + b.
 */
int
inc_mag_add(uint32_t *r, const uint32_t *a, int an, const uint32_t *b, int bn)
{
	uint64_t	carry = 0;
	int			i;

	if (an < bn)
		SwapOperands(&a, &an, &b, &bn);
	for (i = 0; i < bn; i++)
	{
		carry += (uint64_t) a[i] + b[i];
		r[i] = (uint32_t) carry;
		carry >>= 32;
	}
	for (; i < an; i++)
	{
		carry += a[i];
		r[i] = (uint32_t) carry;
		carry >>= 32;
	}
	if (carry)
		r[an++] = (uint32_t) carry;
	return an;
}

/*
 * inc_mag_sub: r = a - b for a >= b.
 */
int
inc_mag_sub(uint32_t *r, const uint32_t *a, int an, const uint32_t *b, int bn)
{
	uint32_t	borrow = 0;
	int			i;

	for (i = 0; i < bn; i++)
	{
		uint32_t	ai = a[i];
		uint32_t	d = ai - b[i] - borrow;

		borrow = (ai < b[i]) || (ai == b[i] && borrow);
		r[i] = d;
	}
	for (; i < an; i++)
	{
		uint32_t	ai = a[i];

		r[i] = ai - borrow;
		borrow = (ai < borrow);
	}
	return trim(r, an);
}

/*
 * inc_mag_mul: r = a * b, schoolbook over the limbs in use.
 */
int
inc_mag_mul(uint32_t *r, const uint32_t *a, int an, const uint32_t *b, int bn)
{
	uint64_t	carry;
	int			i,
				j;

	if (an == 0 || bn == 0)
		return 0;
	if (an > bn)
		SwapOperands(&a, &an, &b, &bn);
	/* first row assigns, so r needs no clearing */
	carry = 0;
	for (j = 0; j < bn; j++)
	{
		carry += (uint64_t) a[0] * b[j];
		r[j] = (uint32_t) carry;
		carry >>= 32;
	}
	r[bn] = (uint32_t) carry;
	for (i = 1; i < an; i++)
	{
		uint64_t	ai = a[i];

		carry = 0;
		for (j = 0; j < bn; j++)
		{
			/* (2^32-1)^2 + 2 (2^32-1) = 2^64 - 1: no overflow */
			carry += ai * b[j] + r[i + j];
			r[i + j] = (uint32_t) carry;
			carry >>= 32;
		}
		r[i + bn] = (uint32_t) carry;
	}
	return trim(r, an + bn);
}

/*
 * inc_mag_mul_small: r = a * m + c.
 */
int
inc_mag_mul_small(uint32_t *r, const uint32_t *a, int an, uint32_t m, uint32_t c)
{
	uint64_t	carry = c;
	int			i;

	for (i = 0; i < an; i++)
	{
		carry += (uint64_t) a[i] * m;
		r[i] = (uint32_t) carry;
		carry >>= 32;
	}
	if (carry)
		r[an++] = (uint32_t) carry;
	return trim(r, an);
}

/*
 * inc_mag_divmod_small: q = a / d, *rem = a % d.
 */
int
inc_mag_divmod_small(uint32_t *q, const uint32_t *a, int an, uint32_t d,
					 uint32_t *rem)
{
	uint64_t	r = 0;
	int			i;

	for (i = an - 1; i >= 0; i--)
	{
		uint64_t	cur = (r << 32) | a[i];

		if (q)
			q[i] = (uint32_t) (cur / d);
		r = cur % d;
	}
	if (rem)
		*rem = (uint32_t) r;
	return q ? trim(q, an) : 0;
}

/*
 * inc_mag_divmod: q = a / b, r = a % b (Knuth, TAOCP vol. 2, 4.3.1,
 * algorithm D, in the form of Hacker's Delight's divmnu).
 */
void
inc_mag_divmod(uint32_t *q, int *qn, uint32_t *r, int *rn,
			   const uint32_t *a, int an, const uint32_t *b, int bn)
{
	uint32_t	un[INC_WIDE_LIMBS + 1];
	uint32_t	vn[INC_WIDE_LIMBS];
	int			s;
	int			i,
				j;

	if (bn == 0 || an > INC_WIDE_LIMBS || bn > INC_WIDE_LIMBS)
		inc_fail(INC_ERR_INTERNAL, "invalid big integer division");

	if (inc_mag_cmp(a, an, b, bn) < 0)
	{
		if (qn)
			*qn = 0;
		if (r)
			memcpy(r, a, sizeof(uint32_t) * an);
		if (rn)
			*rn = an;
		return;
	}
	if (bn == 1)
	{
		uint32_t	rem;
		int			len;
		uint32_t	tmp[INC_WIDE_LIMBS];

		/* q may be NULL; the quotient still has to go somewhere */
		len = inc_mag_divmod_small(q ? q : tmp, a, an, b[0], &rem);
		if (qn)
			*qn = len;
		if (r)
			r[0] = rem;
		if (rn)
			*rn = rem != 0;
		return;
	}

	/* D1: normalize so the divisor's top limb has its high bit set */
	s = __builtin_clz(b[bn - 1]);
	if (s > 0)
	{
		for (i = bn - 1; i > 0; i--)
			vn[i] = (b[i] << s) | (b[i - 1] >> (32 - s));
		vn[0] = b[0] << s;
		un[an] = a[an - 1] >> (32 - s);
		for (i = an - 1; i > 0; i--)
			un[i] = (a[i] << s) | (a[i - 1] >> (32 - s));
		un[0] = a[0] << s;
	}
	else
	{
		memcpy(vn, b, sizeof(uint32_t) * bn);
		memcpy(un, a, sizeof(uint32_t) * an);
		un[an] = 0;
	}

	for (j = an - bn; j >= 0; j--)
	{
		/* D3: estimate the quotient limb, then correct it */
		uint64_t	num = ((uint64_t) un[j + bn] << 32) | un[j + bn - 1];
		uint64_t	qhat = num / vn[bn - 1];
		uint64_t	rhat = num % vn[bn - 1];
		uint64_t	borrow;

		while ((qhat >> 32) != 0 ||
			   qhat * vn[bn - 2] > ((rhat << 32) | un[j + bn - 2]))
		{
			qhat--;
			rhat += vn[bn - 1];
			if ((rhat >> 32) != 0)
				break;
		}

		/* D4: multiply and subtract */
		borrow = 0;
		for (i = 0; i < bn; i++)
		{
			uint64_t	p = qhat * vn[i] + borrow;
			uint32_t	lo = (uint32_t) p;

			borrow = p >> 32;
			if (un[i + j] < lo)
				borrow++;
			un[i + j] -= lo;
		}
		if (un[j + bn] < borrow)
		{
			/* D6: qhat was one too large; add the divisor back */
			uint64_t	carry = 0;

			un[j + bn] -= (uint32_t) borrow;
			qhat--;
			for (i = 0; i < bn; i++)
			{
				carry += (uint64_t) un[i + j] + vn[i];
				un[i + j] = (uint32_t) carry;
				carry >>= 32;
			}
			un[j + bn] += (uint32_t) carry;
		}
		else
			un[j + bn] -= (uint32_t) borrow;
		if (q)
			q[j] = (uint32_t) qhat;
	}
	if (q && qn)
		*qn = trim(q, an - bn + 1);
	else if (qn)
		*qn = 0;

	/* D8: unnormalize the remainder */
	if (r)
	{
		if (s > 0)
		{
			for (i = 0; i < bn - 1; i++)
				r[i] = (un[i] >> s) | (un[i + 1] << (32 - s));
			r[bn - 1] = un[bn - 1] >> s;
		}
		else
			memcpy(r, un, sizeof(uint32_t) * bn);
		if (rn)
			*rn = trim(r, bn);
	}
}

/* gcd of two uint64_t, Euclid. */
static uint64_t
gcd64(uint64_t x, uint64_t y)
{
	while (y != 0)
	{
		uint64_t	t = x % y;

		x = y;
		y = t;
	}
	return x;
}

/*
 * inc_mag_gcd: g = gcd(a, b), Euclid's algorithm on big magnitudes until
 * both fit 64 bits.
 */
int
inc_mag_gcd(uint32_t *g, const uint32_t *a, int an, const uint32_t *b, int bn)
{
	uint32_t	buf[3][INC_WIDE_LIMBS];
	uint32_t   *x = buf[0],
			   *y = buf[1],
			   *z = buf[2];
	int			xn = an,
				yn = bn,
				zn;

	if (an > INC_WIDE_LIMBS || bn > INC_WIDE_LIMBS)
		inc_fail(INC_ERR_INTERNAL, "invalid big integer gcd");
	memcpy(x, a, sizeof(uint32_t) * an);
	memcpy(y, b, sizeof(uint32_t) * bn);
	while (yn > 0)
	{
		if (xn <= 2 && yn <= 2)
		{
			uint64_t	xv = xn == 0 ? 0 : xn == 1 ? x[0] :
				((uint64_t) x[1] << 32 | x[0]);
			uint64_t	yv = yn == 1 ? y[0] : ((uint64_t) y[1] << 32 | y[0]);
			uint64_t	gv = gcd64(xv, yv);

			g[0] = (uint32_t) gv;
			if ((gv >> 32) == 0)
				return 1;		/* yv > 0, so gv > 0 */
			g[1] = (uint32_t) (gv >> 32);
			return 2;
		}
		inc_mag_divmod(NULL, NULL, z, &zn, x, xn, y, yn);
		{
			uint32_t   *t = x;

			x = y;
			xn = yn;
			y = z;
			yn = zn;
			z = t;
		}
	}
	memcpy(g, x, sizeof(uint32_t) * xn);
	return xn;
}
