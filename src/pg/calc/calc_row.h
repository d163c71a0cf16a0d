/*
 * calc_row.h
 *    An engine row (IncRow) as the datums of an earning row
 *    (docs/reference.md, Earning rows): what incentive_calculate returns
 *    and what refresh_earnings writes into incentives.earnings.
 *
 * Nothing is allocated per row: the text datums of the engine's strings
 * (offer and rate keys, measures, calculator names, SKU and unit names)
 * are made once per engine and kept beside it, the transaction_id datum
 * is the one in the transaction's record, a numeric that repeats row
 * after row (a tier's rate, a pool's pay rate, a contribution of 1) is
 * reused, and the other numerics are written into the caller's buffers.
 */
#ifndef INC_CALC_ROW_H
#define INC_CALC_ROW_H

#include "postgres.h"

#include "pg/load/calc_load.h"
#include "core/calc/calc_io.h"
#include "pg/base/convert.h"

/* The earning row's columns before group_key (incentives.earning). */
#define CALC_ROW_COLUMNS 17

typedef struct CalcTextCache CalcTextCache;

/* A numeric kept for a run of rows with the same value in one column. */
typedef struct CalcLastNumeric
{
	bool		valid;
	IncDec		value;
	union
	{
		char		b[PG_NUMERIC_BUF];
		int32		align;
	}			datum;
} CalcLastNumeric;

/* What building rows keeps from row to row (calc_row_init). */
typedef struct CalcRowState
{
	CalcTextCache *texts;
	CalcLastNumeric rate_value;
	CalcLastNumeric pay_rate;
	CalcLastNumeric contribution;
	char	   *grower;			/* the grower_key's text datum, reused */
	Size		grower_size;
} CalcRowState;

/* Room for the numerics of one row that are not kept (calc_row_datums). */
typedef struct CalcRowBuffers
{
	union
	{
		char		b[PG_NUMERIC_BUF];
		int32		align;
	}			num[7];
} CalcRowBuffers;

/* calc_row_init: a state for rows of engine ce (its text cache made on first use). */
extern void calc_row_init(CalcRowState *st, CalcEngine *ce);

/*
 * calc_row_text: the text datum of an engine string s, made once per
 * engine (found by address: the engine's strings stay put while it lives).
 */
extern Datum calc_row_text(CalcRowState *st, const char *s);

/*
 * Where a row's columns after the 17 go (-1: not in this result): the
 * transaction's date (what refresh_earnings materializes), group_key
 * (0.3.0's earning row and the earnings), product_key, grower_key,
 * currency and exchange_rate (0.5.0's).
 */
typedef struct CalcRowExtra
{
	int			date_column;
	int			group_key_column;
	int			product_key_column;
	int			grower_key_column;
	int			currency_column;
	int			exchange_rate_column;
} CalcRowExtra;

/*
 * calc_row_datums: the 17 columns of row into values/nulls, and those of
 * extra; key_datums are the text datums of the unit's keys (txn_source.h,
 * TxnUnit): the participant_key is that of the row's participant, the
 * group_key that of its transaction's aggregation key when the row is
 * under a group.  The datums point into st, buf, key_datums, the engine
 * and the transaction's record: valid until the next row.
 */
extern void calc_row_datums(CalcRowState *st, const IncRow *row, const Datum *key_datums,
							const CalcRowExtra *extra, Datum *values, bool *nulls,
							CalcRowBuffers *buf);

#endif							/* INC_CALC_ROW_H */
