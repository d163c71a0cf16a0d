/*
 * unit_num.h
 *    Number helpers of the arithmetic tests (test_numeric.c,
 *    test_bigint.c), in unit_num.c.
 */
#ifndef INC_UNIT_NUM_H
#define INC_UNIT_NUM_H

#include <stdint.h>

#include "../../src/core/numbers/rational.h"

#define OUT_OF_RANGE "numeric value out of range in incentive calculation"

/* Next pseudo-random 32 bits of the stream *state (Knuth's MMIX LCG, high half). */
extern uint32_t unit_lcg(uint64_t *state);

/* The seed of each file's stream, so every run tests the same numbers. */
#define UNIT_LCG_SEED 0x2545F4914F6CDD1DULL

/* Parse s, which must be valid. */
extern IncDec D(const char *s);

/* The rational of decimal text s. */
extern IncRat R(const char *s);

/* a / b as a rational. */
extern IncRat Q(int64_t a, int64_t b);

/* Text of a rational at scale, in one of a few rotating buffers. */
extern const char *F(const IncRat *r, int scale);

#endif
