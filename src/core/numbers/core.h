/*
 * core.h
 *    Services every file of the engine core uses: memory, failure and
 *    exact decimals.
 *
 * The engine core (src/core) includes no PostgreSQL header.  It allocates
 * through inc_alloc() and reports an unrecoverable error through
 * inc_fail(); both go through hooks the host installs once with
 * inc_set_hooks().  The PostgreSQL glue routes them to palloc and ereport
 * (so memory belongs to the current memory context and a failure unwinds
 * with longjmp); the C test binary and the fuzzer route them to an arena
 * and a setjmp.  Core code therefore never frees what it allocates: the
 * host frees the whole context/arena.
 */
#ifndef INC_CORE_H
#define INC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define INC_NORETURN __attribute__((noreturn))
#define INC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define INC_NORETURN
#define INC_PRINTF(f, a)
#endif

/*
 * What kind of failure; the host maps each to a SQLSTATE and may add its
 * own hint (the PostgreSQL glue names the table to fix, src/pg/base/fail.c).
 * The core's messages name the data at fault, never a SQL object.
 */
typedef enum IncErrKind
{
	INC_ERR_INVALID = 1,		/* bad input data: 22023 invalid_parameter_value */
	INC_ERR_NO_CONVERSION,		/* a transaction's unit has no conversion to
								 * the unit needed: 22023 */
	INC_ERR_PROPERTY_NOT_NUMBER,	/* a property value that is not a number:
									 * 22023 */
	INC_ERR_NO_EXCHANGE_RATE,	/* a transaction's currency has no exchange
								 * rate to its offer's on its date: 22023 */
	INC_ERR_NULL,				/* a transaction column a figure needs is
								 * NULL: 23502 not_null_violation */
	INC_ERR_RANGE,				/* a number too large to compute: 22003 */
	INC_ERR_INTERNAL			/* cannot happen: XX000 */
} IncErrKind;

/*
 * IncFailure: what the fail hook receives.  message is complete and
 * follows PostgreSQL style (lower case, no final period); subject is the
 * key the failure is about when the host may want it for a hint (the
 * property key of INC_ERR_PROPERTY_NOT_NUMBER), else NULL.
 */
typedef struct IncFailure
{
	IncErrKind	kind;
	const char *message;
	const char *subject;
} IncFailure;

/* Allocate size bytes, zeroed; never returns NULL. */
typedef void *(*IncAllocHook) (size_t size);

/* Report an error; must not return (longjmp or exit). */
typedef void (*IncFailHook) (const IncFailure *failure);

extern void inc_set_hooks(IncAllocHook alloc, IncFailHook fail);

/*
 * A host's check for a request to stop (PostgreSQL's CHECK_FOR_INTERRUPTS:
 * a cancel or a statement timeout), called from the loops whose length
 * the input decides (the offer parser's); it may unwind like the fail
 * hook.  inc_check_interrupts calls it, or does nothing when none is set.
 */
typedef void (*IncInterruptHook) (void);

extern void inc_set_interrupt_hook(IncInterruptHook check);
extern void inc_check_interrupts(void);

/*
 * inc_set_exact_only: true turns off the fast paths of the arithmetic
 * (machine-integer fractions in fixed.h and rational.c), so that every
 * figure is computed with the big rationals only.  Results are identical
 * either way; the fuzzers compare the two on every input.
 */
extern bool inc_exact_only;
extern void inc_set_exact_only(bool on);
extern void *inc_alloc(size_t size);
extern char *inc_strdup(const char *s);

/*
 * inc_grow: the growth step of an append-only array that is full: a new
 * inc_alloc array twice *cap elements of size bytes long (first when *cap
 * is 0) holding a copy of the n elements at items; *cap is updated.
 */
extern void *inc_grow(const void *items, int n, int *cap, size_t size, int first);

/*
 * inc_grow_list: the same for a list that grows with the transactions
 * (whose elements nobody points at): the array it replaces goes back to
 * the host (inc_free), so that the list never takes more than twice its
 * length.
 */
extern void *inc_grow_list(void *items, int n, int *cap, size_t size, int first);

/*
 * A host's release of memory from inc_alloc (pfree).  Optional: without
 * it, inc_free does nothing and the memory goes with the host's context.
 */
typedef void (*IncFreeHook) (void *p);

extern void inc_set_free_hook(IncFreeHook release);
extern void inc_free(void *p);

/* inc_fail: format the message and hand it to the fail hook. */
extern void inc_fail(IncErrKind kind, const char *fmt,...) INC_NORETURN INC_PRINTF(2, 3);

/* inc_fail_about: the same, with the failure's subject (see IncFailure). */
extern void inc_fail_about(IncErrKind kind, const char *subject,
						   const char *fmt,...) INC_NORETURN INC_PRINTF(3, 4);

/*
 * IncDec: an exact decimal as written, value = coef / 10^scale.
 *
 * Inputs (offer numbers, transaction quantities and amounts, conversion
 * factors, property values) are IncDec.  The scale is kept as written, so
 * "100.0" stays coef 1000, scale 1 and prints back as "100.0".
 * 0 <= scale <= INC_DEC_MAX_SCALE and |coef| < 10^38.
 */
#define INC_DEC_MAX_SCALE 38
#define INC_DEC_MAX_DIGITS 38

/*
 * 128-bit integer aligned to 8 bytes, as PostgreSQL's own int128: palloc
 * only guarantees 8-byte alignment, and 16-byte aligned moves of a
 * misaligned __int128 would fault.
 */
#if defined(__GNUC__) || defined(__clang__)
typedef __int128 inc_int128 __attribute__((aligned(8)));
#else
#error "a compiler with __int128 is required"
#endif

typedef struct IncDec
{
	inc_int128	coef;
	int32_t		scale;
} IncDec;

typedef enum IncDecParse
{
	INC_DEC_OK = 0,
	INC_DEC_SYNTAX,				/* not a plain decimal number */
	INC_DEC_RANGE				/* a number, but beyond 38 digits / scale 38 */
} IncDecParse;

/*
 * inc_dec_parse: parse len bytes of s (no NUL needed) as a decimal number:
 * optional sign, digits, optional fraction, optional exponent (e/E).  This
 * covers JSON numbers and PostgreSQL numeric output.  "NaN", "Infinity",
 * empty input and trailing garbage are INC_DEC_SYNTAX.  An exponent is
 * applied to coef/scale: "1.5e3" -> coef 1500 scale 0, "1e-3" -> coef 1
 * scale 3, "2.50e1" -> coef 250 scale 1.
 */
extern IncDecParse inc_dec_parse(const char *s, size_t len, IncDec *out);

/* Sign of d: -1, 0 or 1. */
extern int	inc_dec_sign(const IncDec *d);

/*
 * inc_cmp_signs: the first step of comparing two numbers of signs sa and
 * sb (-1, 0, 1; inc_dec_cmp, inc_rat_cmp): when the signs decide it (they
 * differ, or both are zero), true with the result -1, 0 or 1 in *c; false
 * when the magnitudes must decide.
 */
static inline bool
inc_cmp_signs(int sa, int sb, int *c)
{
	*c = (sa > sb) - (sa < sb);
	return sa != sb || sa == 0;
}

/* Compare numerically (1000 equals 1000.0): -1, 0, 1. */
extern int	inc_dec_cmp(const IncDec *a, const IncDec *b);

/*
 * Text forms, written to buf (cap bytes, including NUL); each returns the
 * length written.  inc_dec_format writes exactly d->scale fraction digits
 * ("100.0", "-0.50"); inc_dec_format_short the shortest plain form with
 * trailing fraction zeros removed ("100", "1.88", "0.5", "0", "-2.5").
 * A buffer of INC_NUM_BUF bytes is always enough for an IncDec.
 */
#define INC_NUM_BUF 96
extern int	inc_dec_format(const IncDec *d, char *buf, size_t cap);
extern int	inc_dec_format_short(const IncDec *d, char *buf, size_t cap);

/* inc_dec_trim: d without trailing fraction zeros ("3.0" -> "3", "0.50" -> "0.5"). */
extern IncDec inc_dec_trim(const IncDec *d);

/* inc_dec_div_pow10: d / 10^n exactly (scale grows by n); fails on range. */
extern IncDec inc_dec_div_pow10(const IncDec *d, int n);

#endif							/* INC_CORE_H */
