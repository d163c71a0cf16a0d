/*
 * fixed.c
 *    Exact fractions of 128-bit integers, the calculation's fast path (see
 *    fixed.h).
 *
 * Products are formed without reducing; only when one would overflow are
 * the factors first divided by their cross gcds (a binary gcd on 128
 * bits), and only when it still overflows does the operation give up.
 * Divisions by powers of ten and 64-bit operands use 64-bit instructions.
 */
#include "fixed.h"
#include "int128.h"

/* 10^38: IncDec coefficients stay below it. */
#define DEC_LIMIT pow10_u128[38]

/*
 * q = a / b, *rem = a % b: in 64 bits when both fit, with one 128-by-64
 * bit division when b fits 64 bits and the quotient does (the x86-64
 * divq instruction; a call into the compiler's 128-bit division
 * otherwise).
 */
static inline u128
divmod128(u128 a, u128 b, u128 *rem)
{
	if ((b >> 64) == 0)
	{
		uint64_t	y = (uint64_t) b;

		if ((a >> 64) == 0)
		{
			uint64_t	x = (uint64_t) a;

			*rem = x % y;
			return x / y;
		}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
		if ((uint64_t) (a >> 64) < y)
		{
			uint64_t	q,
						r;

			__asm__("divq %4" : "=a"(q), "=d"(r) : "a"((uint64_t) a), "d"((uint64_t) (a >> 64)), "rm"(y));
			*rem = r;
			return q;
		}
#endif
	}
	*rem = a % b;
	return a / b;
}

/* inc_q_from_dec: d exactly. */
bool
inc_q_from_dec(IncQ *r, const IncDec *d)
{
	if (d->scale < 0 || d->scale > 38)
		return false;
	r->num = d->coef;
	r->den = (s128) pow10_u128[d->scale];
	return true;
}

/* SetFrac: r = num / den; true (the tail of every operation that fits). */
static inline bool
SetFrac(IncQ *r, s128 num, s128 den)
{
	r->num = num;
	r->den = den;
	return true;
}

/* SetProduct: r = (an * bn) / (ad * bd); false (r untouched) on overflow. */
static inline bool
SetProduct(IncQ *r, s128 an, s128 bn, s128 ad, s128 bd)
{
	s128		n,
				d;

	if (__builtin_mul_overflow(an, bn, &n) || __builtin_mul_overflow(ad, bd, &d))
		return false;
	return SetFrac(r, n, d);
}

/* MulFrac: (an / ad) * (bn / bd) into r; cross gcds only when needed. */
static bool
MulFrac(IncQ *r, s128 an, s128 ad, s128 bn, s128 bd)
{
	if (SetProduct(r, an, bn, ad, bd))
		return true;
	{
		s128		g1 = (s128) gcd128(mag128(an), (u128) bd);
		s128		g2 = (s128) gcd128(mag128(bn), (u128) ad);

		if (g1 > 1)
		{
			an /= g1;
			bd /= g1;
		}
		if (g2 > 1)
		{
			bn /= g2;
			ad /= g2;
		}
	}
	return SetProduct(r, an, bn, ad, bd);
}

/* inc_q_mul: r = a * b. */
bool
inc_q_mul(IncQ *r, const IncQ *a, const IncQ *b)
{
	return MulFrac(r, a->num, a->den, b->num, b->den);
}

/* inc_q_div: r = a / b (b != 0). */
bool
inc_q_div(IncQ *r, const IncQ *a, const IncQ *b)
{
	s128		bn = b->num,
				bd = b->den;

	if (bn == 0)
		return false;
	if (bn < 0)
	{
		if (bn == -bn)			/* the most negative value */
			return false;
		bn = -bn;
		bd = -bd;
	}
	return MulFrac(r, a->num, a->den, bd, bn);
}

/* AddFrac: an / ad + bn / bd into r, over a common denominator. */
static bool
AddFrac(IncQ *r, s128 an, s128 ad, s128 bn, s128 bd)
{
	s128		x,
				y,
				d;

	if (ad == bd)
	{
		d = ad;
		x = an;
		y = bn;
	}
	else
	{
		s128		g = (s128) gcd128((u128) ad, (u128) bd);
		s128		fa = bd / g,	/* ad * fa == bd * fb == lcm */
					fb = ad / g;

		if (__builtin_mul_overflow(ad, fa, &d) ||
			__builtin_mul_overflow(an, fa, &x) ||
			__builtin_mul_overflow(bn, fb, &y))
			return false;
	}
	if (__builtin_add_overflow(x, y, &x))
		return false;
	return SetFrac(r, x, d);
}

/* inc_q_add: r = a + b. */
bool
inc_q_add(IncQ *r, const IncQ *a, const IncQ *b)
{
	return AddFrac(r, a->num, a->den, b->num, b->den);
}

/* inc_q_round: a rounded to scale places, half away from zero. */
bool
inc_q_round(const IncQ *a, int scale, IncDec *out)
{
	u128		n = mag128(a->num),
				d = (u128) a->den,
				p,
				q,
				rem,
				frac,
				frem;

	if (scale < 0 || scale > 38)
		return false;
	p = pow10_u128[scale];
	if (d == p)
		q = n;					/* already at this scale */
	else
	{
		/* q = n / d * p + round(n % d * p / d), each step in 128 bits */
		q = divmod128(n, d, &rem);
		if (rem != 0 && rem > ((u128) 0 - 1) / p)
			return false;
		frac = divmod128(rem * p, d, &frem);
		if (frem >= d - frem)	/* 2 frem >= d: half away from zero */
			frac++;
		if (q != 0 && q > (DEC_LIMIT - 1) / p)
			return false;
		q = q * p + frac;
	}
	if (q >= DEC_LIMIT)
		return false;
	out->coef = a->num < 0 ? -(s128) q : (s128) q;
	out->scale = scale;
	return true;
}

/* SetBig: the limbs of a u128 magnitude. */
static void
SetBig(IncBig *b, u128 v, bool neg)
{
	int			n = 0;

	while (v != 0)
	{
		b->d[n++] = (uint32_t) v;
		v >>= 32;
	}
	b->len = (uint32_t) n;
	b->neg = n > 0 && neg;
}

/* inc_q_to_rat: a as a big rational. */
void
inc_q_to_rat(IncRat *r, const IncQ *a)
{
	if (a->num == 0)
	{
		inc_rat_from_int(r, 0);
		return;
	}
	SetBig(&r->num, mag128(a->num), a->num < 0);
	SetBig(&r->den, (u128) a->den, false);
}

/* GetBig: the magnitude of b when it fits 127 bits. */
static bool
GetBig(const IncBig *b, u128 *v)
{
	u128		m = 0;
	int			i;

	if (b->len > 4 || (b->len == 4 && (b->d[3] & 0x80000000u)))
		return false;
	for (i = (int) b->len - 1; i >= 0; i--)
		m = m << 32 | b->d[i];
	*v = m;
	return true;
}

/* inc_q_from_rat: a as an IncQ, reduced first if it does not fit. */
bool
inc_q_from_rat(IncQ *r, const IncRat *a)
{
	u128		n,
				d;
	IncRat		reduced;

	if (!GetBig(&a->num, &n) || !GetBig(&a->den, &d))
	{
		reduced = *a;
		inc_rat_reduce(&reduced);
		if (!GetBig(&reduced.num, &n) || !GetBig(&reduced.den, &d))
			return false;
		a = &reduced;
	}
	r->num = a->num.neg ? -(s128) n : (s128) n;
	r->den = (s128) d;
	return true;
}

/* inc_sum_init: 0. */
void
inc_sum_init(IncSum *s)
{
	inc_q_from_int(&s->q, 0);
	s->big = NULL;
}

/* Big: the sum as a big rational from now on. */
static IncRat *
Big(IncSum *s)
{
	if (s->big == NULL)
	{
		s->big = inc_alloc(sizeof(IncRat));
		inc_q_to_rat(s->big, &s->q);
	}
	return s->big;
}

/* inc_sum_add_q: s += v. */
void
inc_sum_add_q(IncSum *s, const IncQ *v)
{
	IncRat		r;
	IncQ		t;

	if (s->big == NULL && inc_q_add(&t, &s->q, v))
	{
		s->q = t;
		return;
	}
	inc_q_to_rat(&r, v);
	inc_rat_add(Big(s), Big(s), &r);
}

/* inc_sum_add_rat: s += v. */
void
inc_sum_add_rat(IncSum *s, const IncRat *v)
{
	IncRat	   *b = Big(s);

	inc_rat_add(b, b, v);
}

/* inc_sum_get: the sum. */
void
inc_sum_get(const IncSum *s, IncRat *out)
{
	if (s->big)
		*out = *s->big;
	else
		inc_q_to_rat(out, &s->q);
}
