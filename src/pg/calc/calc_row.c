/*
 * calc_row.c
 *    Engine rows as earning row datums (see calc_row.h).
 *
 * The text cache is a lib/simplehash.h table keyed by the string's
 * address, kept beside the engine (CalcEngine.host) in the engine's memory
 * context, so a cached engine keeps its datums for the next call.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/memutils.h"

#include "pg/calc/calc_row.h"
#include "pg/read/txn_source.h"

/* A text datum made once per engine. */
typedef struct TextEntry
{
	const char *ptr;			/* the string's address */
	Datum		datum;			/* its text datum */
	char		status;			/* simplehash's */
} TextEntry;

/* PointerHash: a hash of an address (its two halves folded; murmurhash64 is PG16+). */
static inline uint32
PointerHash(const char *p)
{
	uint64		v = (uint64) (uintptr_t) p;

	return murmurhash32((uint32) v ^ (uint32) (v >> 32));
}

#define SH_PREFIX		texts
#define SH_ELEMENT_TYPE	TextEntry
#define SH_KEY_TYPE		const char *
#define SH_KEY			ptr
#define SH_HASH_KEY(tb, key)	PointerHash(key)
#define SH_EQUAL(tb, a, b)	((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

struct CalcTextCache
{
	MemoryContext context;		/* the engine's */
	texts_hash *texts;
};

/* calc_row_init: the engine's text cache, made on first use. */
void
calc_row_init(CalcRowState *st, CalcEngine *ce)
{
	CalcTextCache *tc = *ce->host;

	memset(st, 0, sizeof(*st));
	if (tc == NULL)
	{
		tc = MemoryContextAllocZero(ce->context, sizeof(CalcTextCache));
		tc->context = ce->context;
		tc->texts = texts_create(ce->context, 256, NULL);
		*ce->host = tc;
	}
	st->texts = tc;
}

/* calc_row_text: the text datum of the engine string s. */
Datum
calc_row_text(CalcRowState *st, const char *s)
{
	CalcTextCache *tc = st->texts;
	bool		found;
	TextEntry  *t = texts_insert(tc->texts, s, &found);
	size_t		len;

	if (found)
	{
		Assert(strcmp(text_to_cstring(DatumGetTextPP(t->datum)), s) == 0);
		return t->datum;
	}
	len = strlen(s);
	t->datum = PointerGetDatum(MemoryContextAlloc(tc->context, VARHDRSZ + len));
	SET_VARSIZE(DatumGetPointer(t->datum), VARHDRSZ + len);
	memcpy(VARDATA(DatumGetPointer(t->datum)), s, len);
	return t->datum;
}

/* SameNumeric: the numeric of d, reused when the previous row had it too. */
static inline Datum
SameNumeric(CalcLastNumeric *last, const IncDec *d)
{
	if (!last->valid || last->value.coef != d->coef || last->value.scale != d->scale)
	{
		last->value = *d;
		last->valid = true;
		pg_dec_to_numeric_in(d, last->datum.b);
	}
	return PointerGetDatum(last->datum.b);
}

/*
 * GrowerDatum: the text datum of a row's grower_key, in one buffer reused
 * row after row (a grower_key is the transaction's, in a page that may be
 * read again at another address: not for the cache by address).
 */
static Datum
GrowerDatum(CalcRowState *st, const char *s)
{
	size_t		len = strlen(s);

	if (st->grower_size < VARHDRSZ + len)
	{
		Size		size = Max(64, 2 * (VARHDRSZ + len));

		if (st->grower)
			pfree(st->grower);
		st->grower = MemoryContextAlloc(st->texts->context, size);
		st->grower_size = size;
	}
	SET_VARSIZE(st->grower, VARHDRSZ + len);
	memcpy(VARDATA(st->grower), s, len);
	return PointerGetDatum(st->grower);
}

/* calc_row_datums: one engine row as the earning row's datums. */
void
calc_row_datums(CalcRowState *st, const IncRow *row, const Datum *key_datums,
				const CalcRowExtra *extra, Datum *values, bool *nulls, CalcRowBuffers *buf)
{
	memset(nulls, 0, sizeof(bool) * CALC_ROW_COLUMNS);
	values[0] = key_datums[row->txn->participant];
	values[1] = calc_row_text(st, row->offer->offer_key);
	values[2] = calc_row_text(st, inc_calculator_name(row->offer->calculator));
	values[3] = calc_row_text(st, row->txn->sku_key);
	values[4] = calc_row_text(st, row->rate_key);
	values[5] = calc_row_text(st, row->rate_measure);
	values[6] = SameNumeric(&st->rate_value, &row->rate_value);
	values[7] = SameNumeric(&st->pay_rate, &row->pay_rate);
	values[8] = txn_source_id_datum(row->txn);
	values[9] = pg_dec_to_numeric_in(&row->txn->quantity, buf->num[0].b);
	values[10] = calc_row_text(st, row->txn->uom_key);
	values[11] = pg_dec_to_numeric_in(&row->txn->amount, buf->num[1].b);
	values[12] = pg_dec_to_numeric_in(&row->incentivized_quantity, buf->num[2].b);
	values[13] = pg_dec_to_numeric_in(&row->incentivized_amount, buf->num[3].b);
	values[14] = pg_dec_to_numeric_in(&row->incentive_amount, buf->num[4].b);
	values[15] = SameNumeric(&st->contribution, &row->contribution);
	if (row->effective_rate_null)
	{
		values[16] = (Datum) 0;
		nulls[16] = true;
	}
	else
		values[16] = pg_dec_to_numeric_in(&row->effective_rate, buf->num[5].b);
	if (extra->date_column >= 0)
	{
		values[extra->date_column] = DateADTGetDatum(row->txn->transaction_date);
		nulls[extra->date_column] = false;
	}
	if (extra->group_key_column >= 0)
	{
		/* a group_key is the aggregation key of the row's transaction */
		values[extra->group_key_column] = row->group_key ?
			key_datums[row->group_index] : (Datum) 0;
		nulls[extra->group_key_column] = row->group_key == NULL;
	}
	if (extra->product_key_column >= 0)
	{
		values[extra->product_key_column] = row->product_key ?
			calc_row_text(st, row->product_key) : (Datum) 0;
		nulls[extra->product_key_column] = row->product_key == NULL;
	}
	if (extra->grower_key_column >= 0)
	{
		values[extra->grower_key_column] = row->grower_key ?
			GrowerDatum(st, row->grower_key) : (Datum) 0;
		nulls[extra->grower_key_column] = row->grower_key == NULL;
	}
	if (extra->currency_column >= 0)
	{
		values[extra->currency_column] = row->currency ?
			calc_row_text(st, row->currency) : (Datum) 0;
		nulls[extra->currency_column] = row->currency == NULL;
	}
	if (extra->exchange_rate_column >= 0)
	{
		values[extra->exchange_rate_column] = row->has_exchange_rate ?
			pg_dec_to_numeric_in(&row->exchange_rate, buf->num[6].b) : (Datum) 0;
		nulls[extra->exchange_rate_column] = !row->has_exchange_rate;
	}
}
