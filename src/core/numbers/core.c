/*
 * core.c
 *    The services every engine core file uses: the allocation and failure
 *    hooks, and the IncDec exact decimal (parsing, comparison, text forms).
 *
 * The host installs its hooks once with inc_set_hooks(); nothing here
 * includes a PostgreSQL header.  IncDec arithmetic is exact: a number that
 * does not fit (more than 38 digits of coefficient, or a scale above 38)
 * is reported, never rounded.  No floating point is used anywhere.
 */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "int128.h"

static IncAllocHook alloc_hook;
static IncFailHook fail_hook;
static IncInterruptHook interrupt_hook;
static IncFreeHook free_hook;

bool		inc_exact_only = false;

/* inc_set_exact_only: the big rationals only (see core.h). */
void
inc_set_exact_only(bool on)
{
	inc_exact_only = on;
}

/* Exponents beyond this are clamped; any such number is out of range. */
#define EXP_CLAMP	((int64_t) 1000000000)

/*
 * inc_set_hooks: install the host's allocator and failure reporter.  Must
 * be called before any other core function.
 */
void
inc_set_hooks(IncAllocHook alloc, IncFailHook fail)
{
	alloc_hook = alloc;
	fail_hook = fail;
}

/* inc_set_interrupt_hook: install the host's check for a request to stop. */
void
inc_set_interrupt_hook(IncInterruptHook check)
{
	interrupt_hook = check;
}

/* inc_check_interrupts: the host's check, if it installed one. */
void
inc_check_interrupts(void)
{
	if (interrupt_hook)
		interrupt_hook();
}

/*
 * inc_alloc: size zeroed bytes from the host's allocator; never NULL.
 */
void *
inc_alloc(size_t size)
{
	void	   *p;

	if (alloc_hook == NULL)
		abort();
	p = alloc_hook(size);
	if (p == NULL)
		inc_fail(INC_ERR_INTERNAL, "out of memory");
	return p;				/* the hook zeroes it (palloc0, calloc) */
}

/*
 * inc_strdup: a copy of s in memory from inc_alloc.
 */
char *
inc_strdup(const char *s)
{
	size_t		n = strlen(s);
	char	   *p = inc_alloc(n + 1);

	memcpy(p, s, n + 1);
	return p;
}

/*
 * inc_grow: a copy of the n elements at items in a new array twice *cap long.
 */
void *
inc_grow(const void *items, int n, int *cap, size_t size, int first)
{
	int			newcap = *cap ? *cap * 2 : first;
	void	   *grown = inc_alloc(size * (size_t) newcap);

	if (n)
		memcpy(grown, items, size * (size_t) n);
	*cap = newcap;
	return grown;
}

/* inc_grow_list: inc_grow, the replaced array released (core.h). */
void *
inc_grow_list(void *items, int n, int *cap, size_t size, int first)
{
	bool		had = *cap > 0 && items != NULL;
	void	   *grown = inc_grow(items, n, cap, size, first);

	if (had)
		inc_free(items);
	return grown;
}

/* inc_set_free_hook: install the host's release of memory. */
void
inc_set_free_hook(IncFreeHook release)
{
	free_hook = release;
}

/* inc_free: memory from inc_alloc back to the host, when it takes it. */
void
inc_free(void *p)
{
	if (free_hook && p)
		free_hook(p);
}

static void FailV(IncErrKind kind, const char *subject, const char *fmt,
				  va_list ap) INC_NORETURN INC_PRINTF(3, 0);

/* FailV: format the message and hand the failure to the hook (no return). */
static void
FailV(IncErrKind kind, const char *subject, const char *fmt, va_list ap)
{
	char		buf[2048];
	IncFailure	failure;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	failure.kind = kind;
	failure.message = buf;
	failure.subject = subject;
	if (fail_hook)
		fail_hook(&failure);
	/* The hook must not return; if it does, stop rather than go on. */
	abort();
}

/*
 * inc_fail: format the message and hand it to the fail hook, which does not
 * return.
 */
void
inc_fail(IncErrKind kind, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	FailV(kind, NULL, fmt, ap);
	va_end(ap);
}

/* inc_fail_about: inc_fail with the failure's subject (core.h, IncFailure). */
void
inc_fail_about(IncErrKind kind, const char *subject, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	FailV(kind, subject, fmt, ap);
	va_end(ap);
}

/*
 * inc_dec_parse: parse len bytes of s as a decimal number, keeping the
 * scale as written (see core.h).
 */
IncDecParse
inc_dec_parse(const char *s, size_t len, IncDec *out)
{
	size_t		i = 0;
	bool		neg = false;
	size_t		int_start,
				int_end,
				frac_start = 0,
				frac_end = 0;
	int64_t		exp = 0;
	int64_t		sig = 0;		/* significant digits (no leading zeros) */
	int64_t		scale;
	u128		coef = 0;
	bool		seen_nonzero = false;
	size_t		k;
	int			pass;

	if (i < len && (s[i] == '-' || s[i] == '+'))
	{
		neg = (s[i] == '-');
		i++;
	}
	int_start = i;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++;
	int_end = i;
	if (i < len && s[i] == '.')
	{
		i++;
		frac_start = i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		frac_end = i;
	}
	if (int_end == int_start && frac_end == frac_start)
		return INC_DEC_SYNTAX;	/* no digits at all */
	if (i < len && (s[i] == 'e' || s[i] == 'E'))
	{
		bool		eneg = false;
		size_t		estart;

		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
		{
			eneg = (s[i] == '-');
			i++;
		}
		estart = i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
		{
			if (exp < EXP_CLAMP)
				exp = exp * 10 + (s[i] - '0');
			i++;
		}
		if (i == estart)
			return INC_DEC_SYNTAX;
		if (exp > EXP_CLAMP)
			exp = EXP_CLAMP;
		if (eneg)
			exp = -exp;
	}
	if (i != len)
		return INC_DEC_SYNTAX;

	/* Accumulate the significant digits; more than 38 is out of range. */
	for (pass = 0; pass < 2; pass++)
	{
		size_t		from = pass == 0 ? int_start : frac_start;
		size_t		to = pass == 0 ? int_end : frac_end;

		for (k = from; k < to; k++)
		{
			if (!seen_nonzero && s[k] == '0')
				continue;
			seen_nonzero = true;
			if (++sig > INC_DEC_MAX_DIGITS)
				return INC_DEC_RANGE;
			coef = coef * 10 + (u128) (s[k] - '0');
		}
	}

	/* frac digits fit easily: len is a size_t, the clamp keeps exp small */
	scale = (int64_t) (frac_end - frac_start);
	if (scale > EXP_CLAMP)
		scale = EXP_CLAMP;
	scale -= exp;
	if (scale < 0)
	{
		/* positive exponent beyond the fraction: append zeros */
		if (coef != 0)
		{
			if (sig - scale > INC_DEC_MAX_DIGITS)
				return INC_DEC_RANGE;
			coef *= pow10_u128[(int) -scale];
		}
		scale = 0;
	}
	if (scale > INC_DEC_MAX_SCALE)
		return INC_DEC_RANGE;

	out->coef = neg ? -(__int128) coef : (__int128) coef;
	out->scale = (int32_t) scale;
	return INC_DEC_OK;
}

/*
 * inc_dec_sign: -1, 0 or 1.
 */
int
inc_dec_sign(const IncDec *d)
{
	return (d->coef > 0) - (d->coef < 0);
}

/*
 * Compare magnitudes am/10^as and bm/10^bs with as <= bs: scale am up by
 * 10^(bs-as), noticing first when that would pass every possible bm.
 */
static int
cmp_mag_scaled(u128 am, int as, u128 bm, int bs)
{
	int			k = bs - as;
	u128		p;

	if (am == 0)
		return bm == 0 ? 0 : -1;
	if (k > 38)
		return 1;				/* am * 10^k >= 10^39 > any u128 */
	p = pow10_u128[k];
	if (am > ((u128) 0 - 1) / p)
		return 1;
	am *= p;
	return (am > bm) - (am < bm);
}

/*
 * inc_dec_cmp: compare numerically, whatever the scales: -1, 0, 1.
 */
int
inc_dec_cmp(const IncDec *a, const IncDec *b)
{
	int			c;

	if (inc_cmp_signs(inc_dec_sign(a), inc_dec_sign(b), &c))
		return c;
	if (a->scale <= b->scale)
		c = cmp_mag_scaled(mag128(a->coef), a->scale, mag128(b->coef), b->scale);
	else
		c = -cmp_mag_scaled(mag128(b->coef), b->scale, mag128(a->coef), a->scale);
	return a->coef < 0 ? -c : c;
}

/*
 * Write d into buf: all scale fraction digits, or (trim) without trailing
 * fraction zeros.  Returns the length.
 */
static int
dec_format(const IncDec *d, char *buf, size_t cap, bool trim)
{
	char		digits[48];		/* u128 has at most 39 digits */
	char		out[INC_NUM_BUF];
	int			nd = 0;
	int			scale = d->scale;
	int			fdigits;
	int			n = 0;
	int			i;
	u128		m = mag128(d->coef);

	if (scale < 0 || scale > INC_DEC_MAX_SCALE)
		inc_fail(INC_ERR_INTERNAL, "invalid decimal scale %d", scale);

	/* digits least significant first, at least scale + 1 of them */
	do
	{
		digits[nd++] = (char) ('0' + (int) (m % 10));
		m /= 10;
	} while (m != 0);
	while (nd < scale + 1)
		digits[nd++] = '0';

	fdigits = scale;
	if (trim)
		while (fdigits > 0 && digits[scale - fdigits] == '0')
			fdigits--;

	if (d->coef < 0)
	{
		/* never "-0": the value is non-zero, so some digit shown is too */
		out[n++] = '-';
	}
	for (i = nd - 1; i >= scale; i--)
		out[n++] = digits[i];
	if (fdigits > 0)
	{
		out[n++] = '.';
		for (i = scale - 1; i >= scale - fdigits; i--)
			out[n++] = digits[i];
	}
	if ((size_t) n >= cap)
		inc_fail(INC_ERR_INTERNAL, "number text does not fit its buffer");
	memcpy(buf, out, n);
	buf[n] = '\0';
	return n;
}

/*
 * inc_dec_format: the text of d with exactly d->scale fraction digits.
 */
int
inc_dec_format(const IncDec *d, char *buf, size_t cap)
{
	return dec_format(d, buf, cap, false);
}

/*
 * inc_dec_format_short: the text of d without trailing fraction zeros (and
 * without the point when no fraction remains).
 */
int
inc_dec_format_short(const IncDec *d, char *buf, size_t cap)
{
	return dec_format(d, buf, cap, true);
}

/*
 * inc_dec_div_pow10: d / 10^n exactly.  The scale grows by n; when that
 * passes 38, trailing zeros of the coefficient are dropped first (same
 * value).  A negative n multiplies.  Fails with INC_ERR_RANGE when the
 * value cannot be an IncDec.
 */
IncDec
inc_dec_div_pow10(const IncDec *d, int n)
{
	IncDec		r = *d;
	int64_t		scale = (int64_t) d->scale + n;

	if (r.coef == 0)
	{
		/* zero at any scale is zero: clamp the scale into range */
		if (scale < 0)
			scale = 0;
		if (scale > INC_DEC_MAX_SCALE)
			scale = INC_DEC_MAX_SCALE;
		r.scale = (int32_t) scale;
		return r;
	}
	while (scale > INC_DEC_MAX_SCALE && r.coef % 10 == 0)
	{
		r.coef /= 10;
		scale--;
	}
	if (scale > INC_DEC_MAX_SCALE)
		inc_fail(INC_ERR_RANGE, "numeric value out of range in incentive calculation");
	if (scale < 0)
	{
		u128		m = mag128(r.coef);
		u128		limit = pow10_u128[INC_DEC_MAX_DIGITS];
		u128		p;

		if (-scale > INC_DEC_MAX_DIGITS)
			inc_fail(INC_ERR_RANGE, "numeric value out of range in incentive calculation");
		p = pow10_u128[(int) -scale];
		if (m >= limit / p + (limit % p != 0))
			inc_fail(INC_ERR_RANGE, "numeric value out of range in incentive calculation");
		m *= p;
		r.coef = r.coef < 0 ? -(__int128) m : (__int128) m;
		scale = 0;
	}
	r.scale = (int32_t) scale;
	return r;
}

/*
 * inc_dec_trim: the same value with trailing fraction zeros removed, the
 * shortest plain form ("3.0" -> 3, "0.50" -> 0.5, "0.00" -> 0).
 */
IncDec
inc_dec_trim(const IncDec *d)
{
	IncDec		r = *d;

	if (r.coef >= INT64_MIN && r.coef <= INT64_MAX)
	{
		int64_t		c = (int64_t) r.coef;	/* the same in 64-bit steps */

		while (r.scale > 0 && c % 10 == 0)
		{
			c /= 10;
			r.scale--;
		}
		r.coef = c;
		return r;
	}
	while (r.scale > 0 && r.coef % 10 == 0)
	{
		r.coef /= 10;
		r.scale--;
	}
	return r;
}
