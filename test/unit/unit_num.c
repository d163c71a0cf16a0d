/*
 * unit_num.c
 *    Number helpers of the arithmetic tests (see unit_num.h).
 */
#include "unit.h"
#include "unit_num.h"

uint32_t
unit_lcg(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t) (*state >> 32);
}

IncDec
D(const char *s)
{
	IncDec		d = {0, 0};

	CHECK(inc_dec_parse(s, strlen(s), &d) == INC_DEC_OK);
	return d;
}

IncRat
R(const char *s)
{
	IncDec		d = D(s);
	IncRat		r;

	inc_rat_from_dec(&r, &d);
	return r;
}

const char *
F(const IncRat *r, int scale)
{
	static char bufs[4][1024];
	static int	next;
	char	   *b = bufs[next++ % 4];

	inc_rat_format(r, scale, b, 1024);
	return b;
}

IncRat
Q(int64_t a, int64_t b)
{
	IncRat		x,
				y;

	inc_rat_from_int(&x, a);
	inc_rat_from_int(&y, b);
	inc_rat_div(&x, &x, &y);
	return x;
}
