/*
 * convert.c
 *    Conversions between PostgreSQL datums and the engine core's types.
 *
 * numeric values come in by reading their base-10000 digits straight into
 * an IncDec (the on-disk format, unchanged since PostgreSQL 9.1), keeping
 * the stored scale; anything unusual (NaN, infinity, more than 38 digits)
 * takes the exact slow path through numeric_out, which also words the
 * errors.  Results go back
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

/* The numeric on-disk header (src/backend/utils/adt/numeric.c). */
#define NUM_SIGN_MASK			0xC000
#define NUM_NEG					0x4000
#define NUM_SHORT				0x8000
#define NUM_SPECIAL				0xC000
#define NUM_SHORT_SIGN_MASK		0x2000
#define NUM_SHORT_DSCALE_MASK	0x1F80
#define NUM_SHORT_DSCALE_SHIFT	7
#define NUM_SHORT_WEIGHT_SIGN	0x0040
#define NUM_SHORT_WEIGHT_MASK	0x003F
#define NUM_DSCALE_MASK			0x3FFF

/*
 * NumericToDecFast: decode the digits of an in-line numeric into
 * *out; false when the value is special or does not fit an IncDec (the
 * caller then takes the slow path).
 */
static bool
NumericToDecFast(Datum datum, IncDec *out)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(datum);
	const uint8 *p;
	uint16		header;
	bool		negative;
	int			dscale,
				weight,
				ndigits,
				shift,
				i;
	__int128	acc = 0;
	const __int128 limit = (__int128) 10000000000000000000ULL * 10000000000000000000ULL;

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		return false;
	p = (const uint8 *) VARDATA_ANY(v);
	memcpy(&header, p, sizeof(uint16));
	if ((header & NUM_SIGN_MASK) == NUM_SPECIAL)
		return false;
	if (header & NUM_SHORT)
	{
		negative = (header & NUM_SHORT_SIGN_MASK) != 0;
		dscale = (header & NUM_SHORT_DSCALE_MASK) >> NUM_SHORT_DSCALE_SHIFT;
		weight = header & NUM_SHORT_WEIGHT_MASK;
		if (header & NUM_SHORT_WEIGHT_SIGN)
			weight |= ~NUM_SHORT_WEIGHT_MASK;
		p += sizeof(uint16);
	}
	else
	{
		int16		w;

		negative = (header & NUM_SIGN_MASK) == NUM_NEG;
		dscale = header & NUM_DSCALE_MASK;
		memcpy(&w, p + sizeof(uint16), sizeof(int16));
		weight = w;
		p += 2 * sizeof(uint16);
	}
	ndigits = (int) ((VARSIZE_ANY_EXHDR(v) - (p - (const uint8 *) VARDATA_ANY(v))) / sizeof(int16));
	if (dscale > INC_DEC_MAX_SCALE)
		return false;

	/* acc = |value| * 10000^(ndigits - 1 - weight) */
	for (i = 0; i < ndigits; i++)
	{
		int16		digit;

		memcpy(&digit, p + i * sizeof(int16), sizeof(int16));
		if (acc >= limit / 10000)
			return false;
		acc = acc * 10000 + digit;
	}

	/* scale acc to dscale decimal places */
	shift = dscale - 4 * (ndigits - 1 - weight);
	if (ndigits == 0)
		shift = 0;
	for (; shift > 0; shift--)
	{
		if (acc >= limit / 10)
			return false;
		acc *= 10;
	}
	for (; shift < 0; shift++)
	{
		if (acc % 10 != 0)
			return false;		/* digits beyond dscale: not expected */
		acc /= 10;
	}
	out->coef = negative ? -acc : acc;
	out->scale = dscale;
	return true;
}

/*
 * pg_numeric_to_dec: a numeric datum as an IncDec.  what names the value
 * ("quantity", "amount", "factor", ...) and txn_id the transaction (may be
 * NULL) for the error when it is not finite or out of the engine's range.
 */
IncDec
pg_numeric_to_dec(Datum numeric, const char *what, const char *txn_id)
{
	char	   *text;
	IncDec		d;
	IncDecParse rc;

	if (NumericToDecFast(numeric, &d))
		return d;
	text = DatumGetCString(DirectFunctionCall1(numeric_out, numeric));
	rc = inc_dec_parse(text, strlen(text), &d);

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
