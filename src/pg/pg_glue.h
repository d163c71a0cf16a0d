/*
 * pg_glue.h
 *    Declarations shared by the PostgreSQL glue files (src/pg).
 *
 * The glue is thin: it reads offers, reference data and transactions with
 * SPI, converts between PostgreSQL datums and the engine core's types,
 * and returns rows through a tuplestore.  All the arithmetic is in
 * src/core.
 */
#ifndef INC_PG_GLUE_H
#define INC_PG_GLUE_H

#include "postgres.h"

#include <setjmp.h>

#include "access/htup.h"
#include "fmgr.h"
#include "utils/jsonb.h"

#include "core/numbers/core.h"
#include "core/offer/offer.h"

/* offer_load.c */
extern IncOffer *pg_offer_from_jsonb(Jsonb *document, IncOfferError *err);
extern IncOffer *pg_offer_from_jsonb_checked(Jsonb *document, const IncOfferChecks *checks,
											 IncOfferError *err);

/* offer_cache.c */
extern void pg_offer_cache_prune(void);
extern const IncOffer *pg_offer_cached(Jsonb *document, IncOfferError *err);

/*
 * module.c: a trap for the engine core's data failures.  While pg_fail_trap
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

/* lifecycle.c */
extern void pg_failure_clear(void);
extern void pg_failure_note(const char *participant, const char *txn);

/* convert.c */
extern IncDec pg_numeric_to_dec(Datum numeric, const char *what, const char *txn_id);
extern bool pg_numeric_to_dec_fast(Datum numeric, IncDec *out);
extern Datum pg_text_to_numeric(const char *text);
extern Datum pg_dec_to_numeric(const IncDec *d);
extern Datum pg_dec_to_numeric_or_null(const IncDec *d, bool *isnull);
extern Datum pg_text_or_null(const char *s, bool *isnull);

/* Room for any IncDec as a numeric (pg_dec_to_numeric_in). */
#define PG_NUMERIC_BUF 40
extern Datum pg_dec_to_numeric_in(const IncDec *d, void *buf);
extern Datum pg_cstring_array(const char *const *items, int n);
extern HeapTuple pg_row_trigger_tuple(FunctionCallInfo fcinfo, bool after, const char *name);

#endif							/* INC_PG_GLUE_H */
