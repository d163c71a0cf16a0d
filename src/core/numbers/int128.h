/*
 * int128.h
 *    Helpers on 128-bit machine integers shared by the decimal code
 *    (core.c), the 128-bit fractions of the fast path (fixed.c) and the
 *    big rationals' fast path (rational.c).  Header only, all static inline:
 *    no source file depends on another through it.
 */
#ifndef INC_INT128_H
#define INC_INT128_H

#include <stdint.h>

typedef unsigned __int128 u128;
typedef __int128 s128;

/* 10^n for 0 <= n <= 38. */
static const u128 pow10_u128[39] = {
	(u128) 1ULL, (u128) 10ULL, (u128) 100ULL, (u128) 1000ULL, (u128) 10000ULL,
	(u128) 100000ULL, (u128) 1000000ULL, (u128) 10000000ULL, (u128) 100000000ULL,
	(u128) 1000000000ULL, (u128) 10000000000ULL, (u128) 100000000000ULL,
	(u128) 1000000000000ULL, (u128) 10000000000000ULL, (u128) 100000000000000ULL,
	(u128) 1000000000000000ULL, (u128) 10000000000000000ULL,
	(u128) 100000000000000000ULL, (u128) 1000000000000000000ULL,
	(u128) 10000000000000000000ULL,
	(u128) 10000000000000000000ULL * 10ULL,
	(u128) 10000000000000000000ULL * 100ULL,
	(u128) 10000000000000000000ULL * 1000ULL,
	(u128) 10000000000000000000ULL * 10000ULL,
	(u128) 10000000000000000000ULL * 100000ULL,
	(u128) 10000000000000000000ULL * 1000000ULL,
	(u128) 10000000000000000000ULL * 10000000ULL,
	(u128) 10000000000000000000ULL * 100000000ULL,
	(u128) 10000000000000000000ULL * 1000000000ULL,
	(u128) 10000000000000000000ULL * 10000000000ULL,
	(u128) 10000000000000000000ULL * 100000000000ULL,
	(u128) 10000000000000000000ULL * 1000000000000ULL,
	(u128) 10000000000000000000ULL * 10000000000000ULL,
	(u128) 10000000000000000000ULL * 100000000000000ULL,
	(u128) 10000000000000000000ULL * 1000000000000000ULL,
	(u128) 10000000000000000000ULL * 10000000000000000ULL,
	(u128) 10000000000000000000ULL * 100000000000000000ULL,
	(u128) 10000000000000000000ULL * 1000000000000000000ULL,
	(u128) 10000000000000000000ULL * 10000000000000000000ULL
};

/* |v| as u128 (correct for the most negative value too). */
static inline u128
mag128(s128 v)
{
	return v < 0 ? (u128) 0 - (u128) v : (u128) v;
}

/* Trailing zero bits of v, which must not be zero. */
static inline int
ctz128(u128 v)
{
	uint64_t	lo = (uint64_t) v;

	return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t) (v >> 64));
}

/*
 * gcd of two u128, gcd(0, x) = x: Euclid in 64-bit instructions when both
 * fit, else binary.
 */
static inline u128
gcd128(u128 a, u128 b)
{
	int			shift;

	if (a == 0)
		return b;
	if (b == 0)
		return a;
	if ((a >> 64) == 0 && (b >> 64) == 0)
	{
		uint64_t	x = (uint64_t) a,
					y = (uint64_t) b;

		while (y != 0)
		{
			uint64_t	t = x % y;

			x = y;
			y = t;
		}
		return x;
	}
	shift = ctz128(a | b);
	a >>= ctz128(a);
	do
	{
		b >>= ctz128(b);
		if (a > b)
		{
			u128		t = a;

			a = b;
			b = t;
		}
		b -= a;
	} while (b != 0);
	return a << shift;
}

#endif							/* INC_INT128_H */
