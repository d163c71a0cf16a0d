/*
 * convert.h
 *    Conversions between PostgreSQL datums and the engine core's types:
 *    numerics and exact decimals, texts, arrays, a trigger's row.
 */
#ifndef INC_PG_CONVERT_H
#define INC_PG_CONVERT_H

#include "postgres.h"

#include "access/htup.h"
#include "fmgr.h"

#include "core/numbers/core.h"

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

#endif							/* INC_PG_CONVERT_H */
