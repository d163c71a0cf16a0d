/*
 * convert.c
 *    Conversions between PostgreSQL datums and the engine core's types.
 *
 * numeric values cross as text: numeric_out gives the exact digits with
 * the stored scale, which the core parses into an IncDec.  Results go back
 * as scaled integers (int64_div_fast_to_numeric keeps the scale, so 150000
 * at scale 2 is 1500.00), through numeric_in only when they do not fit 64
 * bits.  No binary floating point on either side.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "pg_glue.h"

/*
 * pg_numeric_to_dec: a numeric datum as an IncDec.  what names the value
 * ("quantity", "amount", "factor", ...) and txn_id the transaction (may be
 * NULL) for the error when it is not finite or out of the engine's range.
 */
IncDec
pg_numeric_to_dec(Datum numeric, const char *what, const char *txn_id)
{
	char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out, numeric));
	IncDec		d;
	IncDecParse rc = inc_dec_parse(text, strlen(text), &d);

	if (rc != INC_DEC_OK)
		ereport(ERROR,
				(errcode(rc == INC_DEC_RANGE ? ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE
						 : ERRCODE_INVALID_PARAMETER_VALUE),
				 txn_id ?
				 errmsg("%s %s of transaction \"%s\" is %s", what, text, txn_id,
						rc == INC_DEC_RANGE ? "out of range" : "not a finite number") :
				 errmsg("%s %s is %s", what, text,
						rc == INC_DEC_RANGE ? "out of range" : "not a finite number"),
				 rc == INC_DEC_RANGE ?
				 errdetail("Numbers are calculated exactly with at most %d digits and %d decimal places.",
						   INC_DEC_MAX_DIGITS, INC_DEC_MAX_SCALE) : 0));
	pfree(text);
	return d;
}

/* pg_text_to_numeric: numeric_in of a plain decimal text. */
Datum
pg_text_to_numeric(const char *text)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum(text),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* pg_dec_to_numeric: an IncDec as a numeric of the same value and scale. */
Datum
pg_dec_to_numeric(const IncDec *d)
{
	char		text[INC_NUM_BUF];

#if PG_VERSION_NUM >= 140000
	if (d->coef >= PG_INT64_MIN && d->coef <= PG_INT64_MAX)
		return NumericGetDatum(int64_div_fast_to_numeric((int64) d->coef, d->scale));
#endif
	inc_dec_format(d, text, sizeof(text));
	return pg_text_to_numeric(text);
}

/* pg_cstring_array: a text[] datum of n C strings. */
Datum
pg_cstring_array(const char *const *items, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * (n > 0 ? n : 1));
	int			i;

	for (i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(items[i]);
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}
