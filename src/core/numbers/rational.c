/*
 * rational.c
 *    Exact rationals num/den over fixed-capacity big integers (IncRat), the
 *    arithmetic behind every computed figure of the engine.
 *
 * Each operation works in "wide" temporaries big enough for any product
 * of two IncBig values, reduces by the gcd when the denominator is past
 * one limb (or the numerator would not fit otherwise), and only then
 * checks that the result fits an IncBig; so r may alias a or b, and a
 * result too large is inc_fail(INC_ERR_RANGE, ...), never wrapped.
 * Rounding (half away from zero) happens only in inc_rat_round and
 * inc_rat_format.  No floating point, no allocation.
 *
 * Fast path: most figures are small (amounts, quantities, rates and
 * factors of a few digits over powers of ten), so every operation first
 * tries 64/128-bit machine arithmetic when its operands fit 64 bits (two
 * limbs) -- cross products in 128 bits, overflow detected, never wrapped
 * -- and rounding when numerator and denominator fit 128 bits.  Only when
 * a value does not fit does it take the limb arithmetic.  Both paths
 * compute the same exact value (their fractions may differ in how far
 * they are reduced, never in value), so rounded figures are identical;
 * inc_set_exact_only(true) (core.h) turns the fast path off so the fuzzers can
 * run both on every input and compare.
 */
#include "bigint.h"

#include <string.h>

#include "int128.h"


#define OUT_OF_RANGE "numeric value out of range in incentive calculation"

/* The largest scale inc_rat_round accepts. */
#define RAT_MAX_ROUND_SCALE 30

/* A signed wide temporary; only the limbs below len are meaningful. */
typedef struct Wide
{
	int			len;
	bool		neg;
	uint32_t	d[INC_WIDE_LIMBS];
} Wide;

static void range_fail(void) INC_NORETURN;

static void
range_fail(void)
{
	inc_fail(INC_ERR_RANGE, OUT_OF_RANGE);
}

/* Store magnitude d (n limbs) with sign neg into dst, checking capacity. */
static inline void
big_store(IncBig *dst, const uint32_t *d, int n, bool neg)
{
	if (n > INC_BIG_LIMBS)
		range_fail();
	dst->len = (uint32_t) n;
	dst->neg = n > 0 && neg;
	memcpy(dst->d, d, sizeof(uint32_t) * n);
}

/* Set a magnitude from a u128; returns the length (room: 4 limbs). */
static int
mag_from_u128(uint32_t *d, unsigned __int128 v)
{
	int			n = 0;

	while (v != 0)
	{
		d[n++] = (uint32_t) v;
		v >>= 32;
	}
	return n;
}

/* Set b to one. */
static inline void
big_one(IncBig *b)
{
	b->len = 1;
	b->neg = false;
	b->d[0] = 1;
}

/* Are the magnitudes of a and b equal? */
static inline bool
big_eq(const IncBig *a, const IncBig *b)
{
	return a->len == b->len &&
		memcmp(a->d, b->d, sizeof(uint32_t) * a->len) == 0;
}

/* ---- the fast path's helpers ---------------------------------------------- */

/* The magnitude of b as a u64 when it has at most two limbs. */
static inline bool
big_u64(const IncBig *b, uint64_t *v)
{
	switch (b->len)
	{
		case 0:
			*v = 0;
			return true;
		case 1:
			*v = b->d[0];
			return true;
		case 2:
			*v = (uint64_t) b->d[1] << 32 | b->d[0];
			return true;
	}
	return false;
}

/* The magnitude of b as a u128 when it has at most four limbs. */
static inline bool
big_u128(const IncBig *b, u128 *v)
{
	u128		m = 0;
	int			i;

	if (b->len > 4)
		return false;
	for (i = (int) b->len - 1; i >= 0; i--)
		m = m << 32 | b->d[i];
	*v = m;
	return true;
}

/* b = v with sign neg (false for zero). */
static inline void
big_set_u128(IncBig *b, u128 v, bool neg)
{
	b->len = (uint32_t) mag_from_u128(b->d, v);
	b->neg = b->len > 0 && neg;
}

/*
 * rat_set_small: r = (num, neg) / den, reduced by their gcd when either
 * is past 64 bits (so that the next operation stays on the fast path).
 */
static inline void
rat_set_small(IncRat *r, u128 num, bool neg, u128 den)
{
	if (num == 0)
	{
		r->num.len = 0;
		r->num.neg = false;
		big_one(&r->den);
		return;
	}
	if ((num >> 64) != 0 || (den >> 64) != 0)
	{
		u128		g = gcd128(num, den);

		if (g > 1)
		{
			num /= g;
			den /= g;
		}
	}
	big_set_u128(&r->num, num, neg);
	big_set_u128(&r->den, den, false);
}

/*
 * r = (a, aneg) + (b, bneg), signed; r has max(an, bn) + 1 limbs of room
 * and may alias a or b.  Returns the length, sign to *rneg.
 */
static int
signed_add(uint32_t *r, bool *rneg, const uint32_t *a, int an, bool aneg,
		   const uint32_t *b, int bn, bool bneg)
{
	int			n;

	if (aneg == bneg)
	{
		n = inc_mag_add(r, a, an, b, bn);
		*rneg = aneg;
	}
	else if (inc_mag_cmp(a, an, b, bn) >= 0)
	{
		n = inc_mag_sub(r, a, an, b, bn);
		*rneg = aneg;
	}
	else
	{
		n = inc_mag_sub(r, b, bn, a, an);
		*rneg = bneg;
	}
	if (n == 0)
		*rneg = false;
	return n;
}

/* Divide num and den by their gcd. */
static void
wide_reduce(Wide *num, Wide *den)
{
	uint32_t	g[INC_WIDE_LIMBS];
	uint32_t	q[INC_WIDE_LIMBS];
	int			gn;

	gn = inc_mag_gcd(g, num->d, num->len, den->d, den->len);
	if (gn == 1)
	{
		if (g[0] == 1)
			return;
		num->len = inc_mag_divmod_small(num->d, num->d, num->len, g[0], NULL);
		den->len = inc_mag_divmod_small(den->d, den->d, den->len, g[0], NULL);
		return;
	}
	inc_mag_divmod(q, &num->len, NULL, NULL, num->d, num->len, g, gn);
	memcpy(num->d, q, sizeof(uint32_t) * num->len);
	inc_mag_divmod(q, &den->len, NULL, NULL, den->d, den->len, g, gn);
	memcpy(den->d, q, sizeof(uint32_t) * den->len);
}

/*
 * r = num/den (den > 0): zero becomes 0/1; the fraction is reduced when a
 * sum's denominator is past one limb (eager: sums of many fractions stay
 * small) or when it would not fit otherwise (a product or quotient, which
 * is mostly rounded at once: reducing it would cost a gcd for nothing);
 * then the result must fit.
 */
static void
rat_finish(IncRat *r, Wide *num, Wide *den, bool eager)
{
	if (num->len == 0)
	{
		r->num.len = 0;
		r->num.neg = false;
		big_one(&r->den);
		return;
	}
	if ((eager && den->len > 1) || num->len > INC_BIG_LIMBS || den->len > INC_BIG_LIMBS)
		wide_reduce(num, den);
	if (num->len > INC_BIG_LIMBS || den->len > INC_BIG_LIMBS)
		range_fail();
	big_store(&r->num, num->d, num->len, num->neg);
	big_store(&r->den, den->d, den->len, false);
}

/*
 * inc_rat_from_int: r = v.
 */
void
inc_rat_from_int(IncRat *r, int64_t v)
{
	uint64_t	m = v < 0 ? (uint64_t) 0 - (uint64_t) v : (uint64_t) v;

	r->num.d[0] = (uint32_t) m;
	r->num.d[1] = (uint32_t) (m >> 32);
	r->num.len = (m >> 32) ? 2 : (m != 0);
	r->num.neg = v < 0;
	big_one(&r->den);
}

/*
 * inc_rat_from_dec: r = d exactly (coef / 10^scale, trailing zeros of the
 * coefficient cancelled against the power of ten).
 */
void
inc_rat_from_dec(IncRat *r, const IncDec *d)
{
	unsigned __int128 m;
	unsigned __int128 p = 1;
	int			scale = d->scale;
	int			i;

	if (scale < 0 || scale > INC_DEC_MAX_SCALE)
		inc_fail(INC_ERR_INTERNAL, "invalid decimal scale %d", scale);
	m = d->coef < 0 ? (unsigned __int128) 0 - (unsigned __int128) d->coef :
		(unsigned __int128) d->coef;
	if (m == 0)
	{
		r->num.len = 0;
		r->num.neg = false;
		big_one(&r->den);
		return;
	}
	if ((m >> 64) == 0 && scale < 20)
	{
		uint64_t	m64 = (uint64_t) m;

		/* the same fraction as below, in 64-bit steps */
		while (scale > 0 && m64 % 10 == 0)
		{
			m64 /= 10;
			scale--;
		}
		big_set_u128(&r->num, m64, d->coef < 0);
		big_set_u128(&r->den, pow10_u128[scale], false);
		return;
	}
	while (scale > 0 && m % 10 == 0)
	{
		m /= 10;
		scale--;
	}
	for (i = 0; i < scale; i++)
		p *= 10;
	r->num.len = (uint32_t) mag_from_u128(r->num.d, m);
	r->num.neg = d->coef < 0;
	r->den.len = (uint32_t) mag_from_u128(r->den.d, p);
	r->den.neg = false;
}

/* r = a + b, or a - b when negate_b. */
static void
rat_addsub(IncRat *r, const IncRat *a, const IncRat *b, bool negate_b)
{
	Wide		num,
				t,
				den;
	bool		bneg = b->num.len > 0 && (b->num.neg != negate_b);
	uint64_t	an,
				ad,
				bn,
				bd;

	if (!inc_exact_only && big_u64(&a->num, &an) && big_u64(&a->den, &ad) &&
		big_u64(&b->num, &bn) && big_u64(&b->den, &bd))
	{
		u128		x,
					y,
					d;
		bool		xneg = a->num.neg,
					yneg = bneg;

		/* over a common denominator: the same one, a multiple, or the product */
		if (ad == bd)
		{
			x = an;
			y = bn;
			d = ad;
		}
		else if (ad % bd == 0)
		{
			x = an;
			y = (u128) bn * (ad / bd);
			d = ad;
		}
		else if (bd % ad == 0)
		{
			x = (u128) an * (bd / ad);
			y = bn;
			d = bd;
		}
		else
		{
			x = (u128) an * bd;
			y = (u128) bn * ad;
			d = (u128) ad * bd;
		}
		if (xneg == yneg)
		{
			if (x + y >= x)		/* no carry out of 128 bits */
			{
				rat_set_small(r, x + y, xneg, d);
				return;
			}
		}
		else if (x >= y)
		{
			rat_set_small(r, x - y, xneg, d);
			return;
		}
		else
		{
			rat_set_small(r, y - x, yneg, d);
			return;
		}
	}

	if (big_eq(&a->den, &b->den))
	{
		/* same denominator: no cross multiplication */
		num.len = signed_add(num.d, &num.neg, a->num.d, a->num.len, a->num.neg,
							 b->num.d, b->num.len, bneg);
		den.len = a->den.len;
		den.neg = false;
		memcpy(den.d, a->den.d, sizeof(uint32_t) * a->den.len);
	}
	else
	{
		num.len = inc_mag_mul(num.d, a->num.d, a->num.len, b->den.d, b->den.len);
		t.len = inc_mag_mul(t.d, b->num.d, b->num.len, a->den.d, a->den.len);
		num.len = signed_add(num.d, &num.neg, num.d, num.len, a->num.neg,
							 t.d, t.len, bneg);
		den.len = inc_mag_mul(den.d, a->den.d, a->den.len, b->den.d, b->den.len);
		den.neg = false;
	}
	rat_finish(r, &num, &den, true);
}

/*
 * inc_rat_add: r = a + b.
 */
void
inc_rat_add(IncRat *r, const IncRat *a, const IncRat *b)
{
	rat_addsub(r, a, b, false);
}

/*
 * inc_rat_sub: r = a - b.
 */
void
inc_rat_sub(IncRat *r, const IncRat *a, const IncRat *b)
{
	rat_addsub(r, a, b, true);
}

/*
 * rat_mul_frac: r = a * |n| / |d| with sign neg (d not zero): the product
 * of inc_rat_mul (n/d = b) and the quotient of inc_rat_div (n/d = 1/b).
 * Reads all of a, n and d before writing r, which may alias them.
 */
static inline void
rat_mul_frac(IncRat *r, const IncRat *a, const IncBig *n, const IncBig *d, bool neg)
{
	Wide		num,
				den;
	uint64_t	an,
				ad,
				bn,
				bd;

	if (!inc_exact_only && big_u64(&a->num, &an) && big_u64(&a->den, &ad) &&
		big_u64(n, &bn) && big_u64(d, &bd))
	{
		rat_set_small(r, (u128) an * bn, neg, (u128) ad * bd);
		return;
	}
	num.len = inc_mag_mul(num.d, a->num.d, a->num.len, n->d, n->len);
	num.neg = neg;
	den.len = inc_mag_mul(den.d, a->den.d, a->den.len, d->d, d->len);
	den.neg = false;
	rat_finish(r, &num, &den, false);
}

/*
 * inc_rat_mul: r = a * b.
 */
void
inc_rat_mul(IncRat *r, const IncRat *a, const IncRat *b)
{
	rat_mul_frac(r, a, &b->num, &b->den, a->num.neg != b->num.neg);
}

/*
 * inc_rat_div: r = a / b; b must not be zero.
 */
void
inc_rat_div(IncRat *r, const IncRat *a, const IncRat *b)
{
	if (b->num.len == 0)
		inc_fail(INC_ERR_INTERNAL, "division by zero in incentive calculation");
	rat_mul_frac(r, a, &b->den, &b->num, a->num.neg != b->num.neg);
}

/*
 * inc_rat_reduce: a in lowest terms.
 */
void
inc_rat_reduce(IncRat *a)
{
	Wide		num,
				den;

	if (a->num.len == 0)
		return;
	num.len = (int) a->num.len;
	num.neg = a->num.neg;
	memcpy(num.d, a->num.d, sizeof(uint32_t) * a->num.len);
	den.len = (int) a->den.len;
	den.neg = false;
	memcpy(den.d, a->den.d, sizeof(uint32_t) * a->den.len);
	wide_reduce(&num, &den);
	big_store(&a->num, num.d, num.len, num.neg);
	big_store(&a->den, den.d, den.len, false);
}

/*
 * inc_rat_sign: -1, 0 or 1.
 */
int
inc_rat_sign(const IncRat *a)
{
	if (a->num.len == 0)
		return 0;
	return a->num.neg ? -1 : 1;
}

/*
 * inc_rat_cmp: compare a and b exactly: -1, 0, 1.  Never fails.
 */
int
inc_rat_cmp(const IncRat *a, const IncRat *b)
{
	int			c;

	if (inc_cmp_signs(inc_rat_sign(a), inc_rat_sign(b), &c))
		return c;
	if (!inc_exact_only)
	{
		uint64_t	an,
					ad,
					bn,
					bd;

		if (big_u64(&a->num, &an) && big_u64(&a->den, &ad) &&
			big_u64(&b->num, &bn) && big_u64(&b->den, &bd))
		{
			u128		x = (u128) an * bd,
						y = (u128) bn * ad;

			c = (x > y) - (x < y);
			return a->num.neg ? -c : c;
		}
	}
	if (big_eq(&a->den, &b->den))
		c = inc_mag_cmp(a->num.d, a->num.len, b->num.d, b->num.len);
	else
	{
		uint32_t	x[INC_WIDE_LIMBS];
		uint32_t	y[INC_WIDE_LIMBS];
		int			xn,
					yn;

		xn = inc_mag_mul(x, a->num.d, a->num.len, b->den.d, b->den.len);
		yn = inc_mag_mul(y, b->num.d, b->num.len, a->den.d, a->den.len);
		c = inc_mag_cmp(x, xn, y, yn);
	}
	return a->num.neg ? -c : c;
}

/* x = x * 10^n, x having room for the growth. */
static int
mag_mul_pow10(uint32_t *x, int xn, int n)
{
	static const uint32_t pow10[10] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
		1000000000
	};

	while (n >= 9)
	{
		xn = inc_mag_mul_small(x, x, xn, pow10[9], 0);
		n -= 9;
	}
	if (n > 0)
		xn = inc_mag_mul_small(x, x, xn, pow10[n], 0);
	return xn;
}

/*
 * inc_rat_round: r = a rounded to scale decimal places, half away from
 * zero; r's denominator is 10^scale.
 */
void
inc_rat_round(IncRat *r, const IncRat *a, int scale)
{
	uint32_t	x[INC_WIDE_LIMBS];
	uint32_t	q[INC_WIDE_LIMBS];
	uint32_t	rem[INC_WIDE_LIMBS];
	int			xn,
				qn,
				rn;
	bool		neg = a->num.neg;

	if (scale < 0 || scale > RAT_MAX_ROUND_SCALE)
		inc_fail(INC_ERR_INTERNAL, "invalid rounding scale %d", scale);

	if (!inc_exact_only && scale < 20)
	{
		u128		n,
					d;

		if (big_u128(&a->num, &n) && big_u128(&a->den, &d) &&
			n <= ((u128) 0 - 1) / pow10_u128[scale])
		{
			u128		x = n * pow10_u128[scale];
			u128		q = x / d;
			u128		rem = x - q * d;

			if (rem >= d - rem)		/* 2 rem >= den: half away from zero */
				q++;
			big_set_u128(&r->num, q, neg);
			big_set_u128(&r->den, pow10_u128[scale], false);
			return;
		}
	}

	/* q = |num| * 10^scale / den, rounded half away from zero */
	memcpy(x, a->num.d, sizeof(uint32_t) * a->num.len);
	xn = mag_mul_pow10(x, (int) a->num.len, scale);
	if (a->den.len == 1 && a->den.d[0] == 1)
	{
		big_store(&r->num, x, xn, neg);
	}
	else
	{
		inc_mag_divmod(q, &qn, rem, &rn, x, xn, a->den.d, (int) a->den.len);
		if (rn > 0)
		{
			rn = inc_mag_mul_small(rem, rem, rn, 2, 0);
			if (inc_mag_cmp(rem, rn, a->den.d, (int) a->den.len) >= 0)
			{
				static const uint32_t one = 1;

				qn = inc_mag_add(q, q, qn, &one, 1);
			}
		}
		big_store(&r->num, q, qn, neg);
	}

	r->den.d[0] = 1;
	r->den.len = (uint32_t) mag_mul_pow10(r->den.d, 1, scale);
	r->den.neg = false;
}

/*
 * inc_rat_format: a rounded to scale places as plain text with exactly
 * scale fraction digits; never "-0.00".
 */
int
inc_rat_format(const IncRat *a, int scale, char *buf, size_t cap)
{
	IncRat		t;
	uint32_t	m[INC_BIG_LIMBS];
	char		digits[INC_BIG_LIMBS * 10 + RAT_MAX_ROUND_SCALE + 16];
	int			mn;
	int			nd = 0;
	int			n = 0;
	int			len;
	int			i;

	inc_rat_round(&t, a, scale);

	/* decimal digits of |t.num|, least significant first, 9 at a time */
	mn = (int) t.num.len;
	memcpy(m, t.num.d, sizeof(uint32_t) * mn);
	while (mn > 0)
	{
		uint32_t	chunk;

		mn = inc_mag_divmod_small(m, m, mn, 1000000000, &chunk);
		for (i = 0; i < 9; i++)
		{
			digits[nd++] = (char) ('0' + chunk % 10);
			chunk /= 10;
		}
	}
	while (nd > 0 && digits[nd - 1] == '0')
		nd--;
	while (nd < scale + 1)
		digits[nd++] = '0';

	len = (t.num.neg ? 1 : 0) + (nd - scale) + (scale > 0 ? scale + 1 : 0);
	if (cap == 0 || (size_t) len > cap - 1)
		range_fail();
	if (t.num.neg)
		buf[n++] = '-';			/* t.num is non-zero, so no "-0" */
	for (i = nd - 1; i >= scale; i--)
		buf[n++] = digits[i];
	if (scale > 0)
	{
		buf[n++] = '.';
		for (i = scale - 1; i >= 0; i--)
			buf[n++] = digits[i];
	}
	buf[n] = '\0';
	return n;
}

/*
 * inc_rat_to_dec: a rounded to scale places (half away from zero) as an
 * IncDec with exactly that scale; beyond 38 digits is a range failure.
 */
IncDec
inc_rat_to_dec(const IncRat *a, int scale)
{
	IncRat		t;
	unsigned __int128 m = 0;
	static const unsigned __int128 limit =
		(unsigned __int128) 10000000000000000000ULL * 10000000000000000000ULL;
	IncDec		d;
	int			i;

	inc_rat_round(&t, a, scale);
	if (t.num.len > 4)
		range_fail();
	for (i = (int) t.num.len - 1; i >= 0; i--)
		m = (m << 32) | t.num.d[i];
	if (m >= limit)
		range_fail();
	d.coef = t.num.neg ? -(__int128) m : (__int128) m;
	d.scale = scale;
	return d;
}
