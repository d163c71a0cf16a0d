/*
 * unit.h
 *    A tiny test harness for the engine core (no PostgreSQL).
 *
 * Each test_*.c file defines one entry point listed in unit_main.c and
 * uses CHECK* to record results.  unit_expect_failure() runs a function
 * that must end in inc_fail() and captures the message, so error texts
 * can be asserted exactly.  The binary prints one line per failure and a
 * final "N passed, N failed" line; its exit status is non-zero on failure.
 */
#ifndef INC_UNIT_H
#define INC_UNIT_H

#include <stdio.h>
#include <string.h>

#include "../../src/core/numbers/core.h"

extern int	unit_passed;
extern int	unit_failed;

#define CHECK(cond) \
	do { if (cond) unit_passed++; else { unit_failed++; \
		printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define CHECK_STR(got, want) \
	do { const char *g_ = (got), *w_ = (want); \
		if (g_ && w_ && strcmp(g_, w_) == 0) unit_passed++; else { unit_failed++; \
		printf("FAIL %s:%d: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, \
			   g_ ? g_ : "(null)", w_ ? w_ : "(null)"); } } while (0)

/*
 * unit_expect_failure: call fn(arg); it must call inc_fail.  Returns true
 * if it did and copies the message (kind to *kind) for the caller to
 * check; false (and counts a failure) if fn returned normally.
 */
extern int	unit_expect_failure(void (*fn) (void *), void *arg,
								IncErrKind *kind, char *message, size_t cap);

/* The subject of the last captured failure ("" when it had none). */
extern const char *unit_failure_subject(void);

/*
 * When set, called by the fail hook before it jumps back, while the
 * failing code's state is still live (e.g. to read inc_engine_position).
 */
extern void (*unit_fail_observer) (const IncFailure *failure);

/* Free everything allocated through inc_alloc since the last reset. */
extern void unit_arena_reset(void);

/*
 * unit_dec_text: the full text of d (inc_dec_format) in one of 16 rotating
 * buffers, so a row's numbers can all be arguments of one printf.
 */
extern const char *unit_dec_text(const IncDec *d);

/* unit_read_file: a whole file (malloc'd, NUL-terminated), or NULL. */
extern char *unit_read_file(const char *path);

/*
 * unit_load_offers: the offers of a JSON array file, each compiled from its
 * text; at most max.  Returns how many (a failure is recorded for any
 * that does not compile).
 */
struct IncOffer;
extern int	unit_load_offers(const char *path, struct IncOffer **out, int max);

/* The test groups. */
extern void test_numeric(void);
extern void test_numeric_big(void);	/* called by test_numeric */
extern void test_offer_parse(void);
extern void test_offer_diff(void);
extern void test_offer_fields(void);
extern void test_names(void);
extern void test_offer_rules(void);
extern void test_engine(void);
extern void test_strategy(void);
extern void test_rates(void);
extern void test_fixtures(void);
extern void test_fixtures_paged(void);
extern void test_rules(void);
extern void test_rules_errors(void);
extern void test_groups(void);
extern void test_schedule(void);
extern void test_growth(void);
extern void test_select(void);
extern void test_currency(void);

#endif
