/*
 * fail.h
 *    The engine core's failures in PostgreSQL: the fail hook (ereport with
 *    the kind's SQLSTATE and hint), a trap that catches data failures
 *    instead, and a note of where the last failed calculation was.
 */
#ifndef INC_PG_FAIL_H
#define INC_PG_FAIL_H

#include "postgres.h"

#include <setjmp.h>

#include "core/numbers/core.h"
#include "pg/base/compat.h"

/* pg_fail: the core's fail hook (inc_set_hooks). */
extern pg_noreturn void pg_fail(const IncFailure *f);

/*
 * A trap for the engine core's data failures.  While pg_fail_trap
 * points at one, a failure of a data kind (a missing unit conversion, a
 * property that is not a number, a value out of range: SQLSTATE class 22;
 * a NULL column a figure needs: 23502) is not raised: its SQLSTATE and message (in the trap's context) are
 * noted there and the core unwinds by siglongjmp to jump (it holds nothing
 * but memory).  A refresh with on_error => 'skip' arms it around one
 * participant's calculation, so that a failing participant costs no
 * error, subtransaction or rollback (docs/lifecycle.md, on_error =>
 * 'skip'); it must be disarmed (NULL) before anything else can fail.
 * Internal failures, and every error of PostgreSQL itself (a cancel, out
 * of memory), are raised as always.
 */
typedef struct PgFailTrap
{
	sigjmp_buf	jump;
	MemoryContext context;		/* where the message is copied */
	int			sqlerrcode;
	char	   *message;
} PgFailTrap;

extern PgFailTrap *pg_fail_trap;

/*
 * pg_failure_clear, pg_failure_note: forget the last failure (a
 * calculation starts); remember the participant and transaction (either
 * may be NULL) a calculation was at when an error was raised, for
 * incentives_internal.calculation_failure().
 */
extern void pg_failure_clear(void);
extern void pg_failure_note(const char *participant, const char *txn);


#endif							/* INC_PG_FAIL_H */
