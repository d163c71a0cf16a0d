/*
 * bigint.h
 *    Private to the engine core: unsigned big-integer magnitudes as arrays
 *    of little-endian 32-bit limbs, the machinery under IncRat.
 *
 * A magnitude is (limbs, length); a length of 0 is zero and results never
 * have leading zero limbs.  Callers provide the result space (the sizes
 * each function needs are noted) so nothing here allocates; the "wide"
 * size INC_WIDE_LIMBS holds any product of two IncBig magnitudes, with
 * room for a carry.  Only rational.c and the unit tests use this header.
 */
#ifndef INC_BIGINT_H
#define INC_BIGINT_H

#include "rational.h"

#define INC_WIDE_LIMBS (2 * INC_BIG_LIMBS + 2)

/* Compare magnitudes: -1, 0, 1. */
extern int	inc_mag_cmp(const uint32_t *a, int an, const uint32_t *b, int bn);

/* r = a + b; r has max(an, bn) + 1 limbs of room and may alias a or b. */
extern int	inc_mag_add(uint32_t *r, const uint32_t *a, int an,
						const uint32_t *b, int bn);

/* r = a - b, requires a >= b; r has an limbs of room, may alias a or b. */
extern int	inc_mag_sub(uint32_t *r, const uint32_t *a, int an,
						const uint32_t *b, int bn);

/* r = a * b; r has an + bn limbs of room and must not alias a or b. */
extern int	inc_mag_mul(uint32_t *r, const uint32_t *a, int an,
						const uint32_t *b, int bn);

/* r = a * m + c; r has an + 1 limbs of room and may alias a. */
extern int	inc_mag_mul_small(uint32_t *r, const uint32_t *a, int an,
							  uint32_t m, uint32_t c);

/*
 * q = a / d, *rem = a % d for a one-limb d > 0; q has an limbs of room
 * and may alias a, or is NULL when only the remainder is wanted.
 * Returns the length of q.
 */
extern int	inc_mag_divmod_small(uint32_t *q, const uint32_t *a, int an,
								 uint32_t d, uint32_t *rem);

/*
 * q = a / b, r = a % b for b > 0 (Knuth algorithm D).  an, bn <=
 * INC_WIDE_LIMBS.  q has an - bn + 1 limbs of room (or is NULL), r has bn
 * limbs of room (or is NULL); neither may alias a or b.  The lengths go
 * to *qn and *rn when those are not NULL.
 */
extern void inc_mag_divmod(uint32_t *q, int *qn, uint32_t *r, int *rn,
						   const uint32_t *a, int an,
						   const uint32_t *b, int bn);

/*
 * g = gcd(a, b); g has max(an, bn) limbs of room and may alias neither.
 * gcd(0, 0) is 0.  Returns the length of g.
 */
extern int	inc_mag_gcd(uint32_t *g, const uint32_t *a, int an,
						const uint32_t *b, int bn);

#endif							/* INC_BIGINT_H */
