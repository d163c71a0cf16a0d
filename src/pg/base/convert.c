/*
 * convert.c
 *    Conversions between PostgreSQL datums and the engine core's types.
 *
 * numeric values come in by reading their base-10000 digits straight into
 * an IncDec (the on-disk format, unchanged since PostgreSQL 9.1), keeping
 * the stored scale; anything unusual (NaN, infinity, more than 38 digits)
 * takes the exact slow path through numeric_out, which also words the
 * errors.  Results go back
 * as numerics written directly from the coefficient (what numeric.c would
 * build for it, with the same scale), without allocating.  No binary
 * floating point on either side.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "pg/base/convert.h"
#include "pg/base/error_context.h"

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
 * pg_numeric_to_dec_fast: decode the digits of an in-line numeric into
 * *out; false when the value is special or does not fit an IncDec (then
 * pg_numeric_to_dec says why).
 */
bool
pg_numeric_to_dec_fast(Datum datum, IncDec *out)
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
	/* the decimal places the digits' value lacks (< 0: has beyond dscale) */
	shift = ndigits == 0 ? 0 : dscale - 4 * (ndigits - 1 - weight);

	/* acc = |value| * 10000^(ndigits - 1 - weight) */
	if (ndigits <= 4)
	{
		uint64		small = 0;	/* 16 digits fit 64 bits: no 128-bit steps */

		for (i = 0; i < ndigits; i++)
		{
			int16		digit;

			memcpy(&digit, p + i * sizeof(int16), sizeof(int16));
			small = small * 10000 + (uint64) digit;
		}
		if (shift >= -3 && shift <= 3 && small < PG_UINT64_MAX / 1000)
		{
			static const uint64 pow10[4] = {1, 10, 100, 1000};

			if (shift >= 0)
				small *= pow10[shift];
			else if (small % pow10[-shift] == 0)
				small /= pow10[-shift];		/* the last digit's zeros beyond dscale */
			else
				return false;	/* digits beyond dscale: not expected */
			out->coef = negative ? -(__int128) small : (__int128) small;
			out->scale = dscale;
			return true;
		}
		acc = small;
	}
	else
		for (i = 0; i < ndigits; i++)
		{
			int16		digit;

			memcpy(&digit, p + i * sizeof(int16), sizeof(int16));
			if (acc >= limit / 10000)
				return false;
			acc = acc * 10000 + digit;
		}

	/* scale acc to dscale decimal places */
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

	if (pg_numeric_to_dec_fast(numeric, &d))
		return d;
	text = DatumGetCString(DirectFunctionCall1(numeric_out, numeric));
	rc = inc_dec_parse(text, strlen(text), &d);

	if (rc != INC_DEC_OK)
	{
		pg_error_context_trim();
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
	}
	pfree(text);
	return d;
}

/*
 * incentives_internal.number_problem(value numeric): NULL when the engine
 * calculates with value exactly, else what is wrong with it ("is out of
 * range: ...", "is not a finite number"), for the checks of the tables
 * whose numbers every calculation reads (docs/reference.md, Unit
 * conversions).
 */
PG_FUNCTION_INFO_V1(incentives_number_problem);

Datum
incentives_number_problem(PG_FUNCTION_ARGS)
{
	IncDec		d;
	char	   *text;
	IncDecParse rc;

	if (pg_numeric_to_dec_fast(PG_GETARG_DATUM(0), &d))
		PG_RETURN_NULL();
	text = DatumGetCString(DirectFunctionCall1(numeric_out, PG_GETARG_DATUM(0)));
	rc = inc_dec_parse(text, strlen(text), &d);
	if (rc == INC_DEC_OK)
		PG_RETURN_NULL();
	if (rc == INC_DEC_RANGE)
		PG_RETURN_TEXT_P(cstring_to_text(psprintf("is out of range: numbers are calculated exactly with at most %d digits and %d decimal places",
												  INC_DEC_MAX_DIGITS, INC_DEC_MAX_SCALE)));
	PG_RETURN_TEXT_P(cstring_to_text("is not a finite number"));
}

/* pg_text_to_numeric: numeric_in of a plain decimal text. */
Datum
pg_text_to_numeric(const char *text)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum(text),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/*
 * pg_dec_to_numeric_in: d as a numeric of the same value and scale, written
 * into buf (PG_NUMERIC_BUF bytes, int-aligned), byte for byte what
 * numeric.c's make_result builds for it: base-10000 digits aligned on the
 * decimal point, leading and trailing zero digits dropped (zero has none
 * and a positive sign), always the short header (a scale of at most 38
 * and a weight within +-10 fit it).  Nothing is allocated: the row's
 * tuple copies it.
 */
Datum
pg_dec_to_numeric_in(const IncDec *d, void *buf)
{
	unsigned __int128 m = d->coef < 0 ? (unsigned __int128) 0 - (unsigned __int128) d->coef :
		(unsigned __int128) d->coef;
	uint16		groups[12];		/* least significant first */
	int			ngroups = 0;
	int			scale = d->scale;
	int			k = (scale + 3) / 4;	/* base-10000 digits after the point */
	int			r = scale % 4;
	int			weight;
	int			lo = 0;
	int			n;
	int			i;
	char	   *p = buf;
	uint16		header;
	static const int pow10[5] = {1, 10, 100, 1000, 10000};

	Assert(scale >= 0 && scale <= INC_DEC_MAX_SCALE);
	if (r != 0)
	{
		if ((m >> 64) == 0)
		{
			groups[ngroups++] = (uint16) (((uint64) m % pow10[r]) * pow10[4 - r]);
			m = (uint64) m / pow10[r];
		}
		else
		{
			groups[ngroups++] = (uint16) ((m % pow10[r]) * pow10[4 - r]);
			m /= pow10[r];
		}
	}
	while ((m >> 64) != 0)
	{
		groups[ngroups++] = (uint16) (m % 10000);
		m /= 10000;
	}
	{
		uint64		m64 = (uint64) m;	/* 64-bit steps from here */

		while (m64 != 0)
		{
			groups[ngroups++] = (uint16) (m64 % 10000);
			m64 /= 10000;
		}
	}
	while (ngroups > 0 && groups[ngroups - 1] == 0)
		ngroups--;				/* leading zero digits */
	while (lo < ngroups && groups[lo] == 0)
		lo++;					/* trailing zero digits */
	n = ngroups - lo;
	weight = ngroups - 1 - k;
	if (n == 0)
		weight = 0;
	header = NUM_SHORT |
		(n > 0 && d->coef < 0 ? NUM_SHORT_SIGN_MASK : 0) |
		(uint16) (scale << NUM_SHORT_DSCALE_SHIFT) |
		(weight < 0 ? NUM_SHORT_WEIGHT_SIGN : 0) |
		(uint16) (weight & NUM_SHORT_WEIGHT_MASK);
	SET_VARSIZE(p, VARHDRSZ + sizeof(uint16) * (1 + n));
	memcpy(p + VARHDRSZ, &header, sizeof(uint16));
	for (i = 0; i < n; i++)
	{
		int16		digit = (int16) groups[ngroups - 1 - i];

		memcpy(p + VARHDRSZ + sizeof(uint16) * (1 + i), &digit, sizeof(int16));
	}
#ifdef INC_CHECK_NUMERIC
	{
		char		text[INC_NUM_BUF];
		Datum		ref;

		inc_dec_format(d, text, sizeof(text));
		ref = pg_text_to_numeric(text);
		if (VARSIZE(DatumGetPointer(ref)) != VARSIZE(buf) ||
			memcmp(DatumGetPointer(ref), buf, VARSIZE(buf)) != 0)
			elog(ERROR, "numeric encoding of %s differs", text);
		if (d->coef >= PG_INT64_MIN && d->coef <= PG_INT64_MAX)
		{
			ref = NumericGetDatum(int64_div_fast_to_numeric((int64) d->coef, d->scale));
			if (VARSIZE(DatumGetPointer(ref)) != VARSIZE(buf) ||
				memcmp(DatumGetPointer(ref), buf, VARSIZE(buf)) != 0)
				elog(ERROR, "numeric encoding of %s differs from int64_div_fast_to_numeric", text);
		}
	}
#endif
	return PointerGetDatum(buf);
}

/* pg_dec_to_numeric: an IncDec as a numeric of the same value and scale. */
Datum
pg_dec_to_numeric(const IncDec *d)
{
	return pg_dec_to_numeric_in(d, palloc(PG_NUMERIC_BUF));
}

/* pg_dec_to_numeric_or_null: the numeric of d, or a NULL when d is NULL. */
Datum
pg_dec_to_numeric_or_null(const IncDec *d, bool *isnull)
{
	*isnull = d == NULL;
	return d ? pg_dec_to_numeric(d) : (Datum) 0;
}

/* pg_text_or_null: the text of s, or a NULL when s is NULL. */
Datum
pg_text_or_null(const char *s, bool *isnull)
{
	*isnull = s == NULL;
	return s ? CStringGetTextDatum(s) : (Datum) 0;
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

/*
 * pg_row_trigger_tuple: the row of a row-level trigger call fired before
 * (after false) or after the event, the new row for an UPDATE; an error
 * naming the SQL function name when fcinfo is no such call.
 */
HeapTuple
pg_row_trigger_tuple(FunctionCallInfo fcinfo, bool after, const char *name)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		(after ? !TRIGGER_FIRED_AFTER(trigdata->tg_event) :
		 !TRIGGER_FIRED_BEFORE(trigdata->tg_event)) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s() must be %s ROW trigger", name,
						after ? "an AFTER" : "a BEFORE")));
	return TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
		trigdata->tg_newtuple : trigdata->tg_trigtuple;
}
