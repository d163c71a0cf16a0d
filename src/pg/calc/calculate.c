/*
 * calculate.c
 *    incentives.incentive_calculate(participant_key, properties,
 *    offer_keys, transactions, as_of, through_date) RETURNS SETOF
 *    incentives.earning, and incentive_diagnostics, the what-if variants
 *    and forecast, which share its body (Calculate).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/timestamp.h"

#include "core/engine/engine.h"
#include "core/engine/forecast.h"
#include "pg/base/compat.h"
#include "pg/base/convert.h"
#include "pg/base/error_context.h"
#include "pg/calc/calc_row.h"
#include "pg/calc/calc_session.h"
#include "pg/load/calc_load.h"
#include "pg/load/enrollments.h"
#include "pg/read/txn_source.h"

#define NUM_EARNING_COLUMNS CALC_ROW_COLUMNS
#define NUM_DIAGNOSTICS_COLUMNS 4
#define NUM_FORECAST_COLUMNS 15

/* What a call returns. */
typedef enum CalcMode
{
	CALC_EARNINGS,				/* the earning rows */
	CALC_DIAGNOSTICS,			/* the engine's diagnostics per offer */
	CALC_FORECAST				/* the forecast per offer (incentives.forecast) */
} CalcMode;

/*
 * After the 17 columns of the earning row, a result may have group_key
 * (the earning row of 0.3.0, whose diagnostics have it 5th; 0.1.0's and
 * 0.2.0's declarations stop before it), product_key, grower_key,
 * currency, exchange_rate (0.5.0's) and transaction_date (what
 * refresh_earnings materializes, incentives_internal.calculate_dated):
 * the result's tuple descriptor tells, by name.
 */
#define MAX_EARNING_COLUMNS (NUM_EARNING_COLUMNS + 6)

typedef struct Output
{
	ReturnSetInfo *rsinfo;
	CalcRowState rows;			/* datums kept from row to row (calc_row.h) */
	MemoryContext row_context;
	Datum	   *key_datums;		/* the unit's keys, by index */
	bool		diagnostics;	/* no earning rows: diagnostics or a forecast */
	CalcRowExtra extra;			/* the columns after the 17, or -1 */
} Output;

/*
 * EmitRow: one engine row into the tuplestore (calc_row.h: nothing is
 * allocated for it; the tuplestore's copy is the only allocation).
 */
static void
EmitRow(void *ctx, const IncRow *row)
{
	Output	   *out = ctx;
	Datum		values[MAX_EARNING_COLUMNS];
	bool		nulls[MAX_EARNING_COLUMNS];
	CalcRowBuffers buf;

	if (out->diagnostics)
		return;
	calc_row_datums(&out->rows, row, out->key_datums, &out->extra, values, nulls, &buf);
	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
}

/*
 * EmitDiagnostics: one (participant, offer, strategy, diagnostics) row,
 * and the group_key it is under when the result has a 5th column.
 */
static void
EmitDiagnostics(void *ctx, const IncOffer *offer, const char *participant_key,
				const char *group_key, const char *json)
{
	Output	   *out = ctx;
	Datum		values[NUM_DIAGNOSTICS_COLUMNS + 1];
	bool		nulls[NUM_DIAGNOSTICS_COLUMNS + 1] = {false, false, false, false, false};
	MemoryContext old = MemoryContextSwitchTo(out->row_context);

	values[0] = CStringGetTextDatum(participant_key);
	values[1] = calc_row_text(&out->rows, offer->offer_key);
	values[2] = calc_row_text(&out->rows, inc_strategy_name(offer->strategy));
	values[3] = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
	values[4] = group_key ? CStringGetTextDatum(group_key) : (Datum) 0;
	nulls[4] = group_key == NULL;
	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
	MemoryContextSwitchTo(old);
	MemoryContextReset(out->row_context);
}

/* TextOrNull: a text datum of s (one of the engine's strings), or NULL. */
static Datum
TextOrNull(Output *out, const char *s, bool *isnull)
{
	*isnull = s == NULL;
	return s ? calc_row_text(&out->rows, s) : (Datum) 0;
}

/*
 * EmitForecast: one incentives.forecast row (participant_key, offer_key,
 * group_key, span_start, span_end, elapsed_days, span_days,
 * basis_to_date, projected_basis, rate_key_to_date, projected_rate_key,
 * earned_to_date, projected_earnings, accrual_to_date, and currency when
 * the result has it: declarations before 0.5.0 stop before it).
 */
static void
EmitForecast(void *ctx, const IncForecastRow *row)
{
	Output	   *out = ctx;
	Datum		values[NUM_FORECAST_COLUMNS];
	bool		nulls[NUM_FORECAST_COLUMNS];
	MemoryContext old = MemoryContextSwitchTo(out->row_context);

	memset(nulls, 0, sizeof(nulls));
	values[0] = out->key_datums[row->participant];
	values[1] = calc_row_text(&out->rows, row->offer->offer_key);
	values[2] = row->group_key ? out->key_datums[row->group] : (Datum) 0;
	nulls[2] = row->group_key == NULL;
	values[3] = DateADTGetDatum(row->span_start);
	values[4] = DateADTGetDatum(row->span_end);
	values[5] = Int32GetDatum(row->elapsed_days);
	values[6] = Int32GetDatum(row->span_days);
	values[7] = pg_dec_to_numeric_or_null(row->has_basis_to_date ? &row->basis_to_date : NULL,
										  &nulls[7]);
	values[8] = pg_dec_to_numeric_or_null(row->has_projected_basis ? &row->projected_basis : NULL,
										  &nulls[8]);
	values[9] = TextOrNull(out, row->rate_key_to_date, &nulls[9]);
	values[10] = TextOrNull(out, row->projected_rate_key, &nulls[10]);
	values[11] = pg_dec_to_numeric(&row->earned_to_date);
	values[12] = pg_dec_to_numeric(&row->projected_earnings);
	values[13] = pg_dec_to_numeric(&row->accrual_to_date);
	values[14] = TextOrNull(out, row->offer->currency, &nulls[14]);
	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
	MemoryContextSwitchTo(old);
	MemoryContextReset(out->row_context);
}

/* OptionalArg: argument n when the call has it and it is not NULL. */
static bool
OptionalArg(FunctionCallInfo fcinfo, int n)
{
	return PG_NARGS() > n && !PG_ARGISNULL(n);
}

/*
 * Calculate: the body of incentive_calculate, incentive_diagnostics and
 * forecast; mode selects what is returned.  One call is a calculation
 * session (calc_session.h: the engine, groups, properties, enrollments,
 * the transactions read once), its rows written into a materialized
 * tuplestore (which spills past work_mem), built without allocating
 * (calc_row.h), with the caller's rights and snapshot (STABLE, read-only
 * SPI), so row-level security applies.  A result may have group_key and
 * the transaction's date after the 17 columns.  Diagnostics report a
 * participant named by participant_key even when it has no transactions.
 * forecast reads the transactions dated on or before as_of_date and
 * returns the engine's forecast per calculation unit (forecast.h), one
 * row per participant and offer (and group, in an offer aggregated by
 * group).
 *
 * The first two share their arguments (participant_key, properties,
 * offer_keys, transactions), which go on with as_of and through_date
 * (extension version 0.1.0 declares them without these: PG_NARGS tells).  The request variants
 * (calculate_request, diagnostics_request; request) have the request's
 * enrollment windows (jsonb) fifth, then as_of and through_date.  forecast
 * has (as_of_date, participant_key, offer_keys, transactions): the
 * stored properties, the offers as they are now, as_of_date its
 * through_date.
 */
static Datum
Calculate(FunctionCallInfo fcinfo, CalcMode mode, bool request)
{
	bool		forecast = mode == CALC_FORECAST;
	bool		diagnostics = mode == CALC_DIAGNOSTICS;
	int			participant_arg = forecast ? 1 : 0;
	char	   *participant_filter = PG_ARGISNULL(participant_arg) ? NULL :
		text_to_cstring(PG_GETARG_TEXT_PP(participant_arg));
	Jsonb	   *properties = forecast || PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	ArrayType  *offer_keys = PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2);
	Jsonb	   *request_enrollments = request && OptionalArg(fcinfo, 4) ?
		PG_GETARG_JSONB_P(4) : NULL;
	int			as_of_arg = request ? 5 : 4;
	TimestampTz as_of_value = 0;
	TimestampTz *as_of = NULL;
	DateADT		through_value = 0;
	DateADT    *through_date = NULL;
	CalcSession session;
	CalcSessionOptions options;
	Oid			relid;
	IncEngine  *engine;
	Output		out;
	bool		calculated_any = false;
	MemoryContext call_context;
	int			natts,
				expected;

	if (forecast)
	{
		if (PG_ARGISNULL(0))
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("as_of_date of a forecast must not be NULL")));
		}
		through_value = PG_GETARG_DATEADT(0);
		if (DATE_NOT_FINITE(through_value))
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("as_of_date of a forecast must be a finite date")));
		}
		through_date = &through_value;
	}
	else if (OptionalArg(fcinfo, as_of_arg))
	{
		as_of_value = PG_GETARG_TIMESTAMPTZ(as_of_arg);
		as_of = &as_of_value;
	}
	if (!forecast && OptionalArg(fcinfo, as_of_arg + 1))
	{
		through_value = PG_GETARG_DATEADT(as_of_arg + 1);
		through_date = &through_value;
	}

	InitMaterializedSRF(fcinfo, 0);
	memset(&out, 0, sizeof(out));
	out.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	out.diagnostics = mode != CALC_EARNINGS;
	out.extra.group_key_column = -1;
	out.extra.product_key_column = -1;
	out.extra.grower_key_column = -1;
	out.extra.currency_column = -1;
	out.extra.exchange_rate_column = -1;
	out.extra.date_column = -1;
	natts = out.rsinfo->setDesc->natts;
	/* the rows built below fill exactly these columns */
	if (forecast)
		expected = natts == NUM_FORECAST_COLUMNS - 1 ? natts : NUM_FORECAST_COLUMNS;
	else if (diagnostics)
		expected = natts == NUM_DIAGNOSTICS_COLUMNS + 1 ? natts : NUM_DIAGNOSTICS_COLUMNS;
	else
	{
		int			c;

		expected = NUM_EARNING_COLUMNS;
		for (c = NUM_EARNING_COLUMNS; c < natts && c < MAX_EARNING_COLUMNS; c++)
		{
			const char *name = NameStr(TupleDescAttr(out.rsinfo->setDesc, c)->attname);

			if (strcmp(name, "group_key") == 0 && out.extra.group_key_column < 0)
				out.extra.group_key_column = expected++;
			else if (strcmp(name, "product_key") == 0 && out.extra.product_key_column < 0)
				out.extra.product_key_column = expected++;
			else if (strcmp(name, "grower_key") == 0 && out.extra.grower_key_column < 0)
				out.extra.grower_key_column = expected++;
			else if (strcmp(name, "currency") == 0 && out.extra.currency_column < 0)
				out.extra.currency_column = expected++;
			else if (strcmp(name, "exchange_rate") == 0 && out.extra.exchange_rate_column < 0)
				out.extra.exchange_rate_column = expected++;
			else if (strcmp(name, "transaction_date") == 0 && out.extra.date_column < 0)
				out.extra.date_column = expected++;
		}
	}
	if (natts != expected)
		elog(ERROR, "%s returns %d columns, expected %d",
			 forecast ? "forecast" : diagnostics ? "incentive_diagnostics" : "incentive_calculate",
			 natts, expected);

	if (PG_ARGISNULL(3))
		relid = DatumGetObjectId(DirectFunctionCall1(to_regclass,
													 CStringGetTextDatum("incentives.transactions")));
	else
		relid = PG_GETARG_OID(3);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	call_context = CurrentMemoryContext;

	memset(&options, 0, sizeof(options));
	options.relid = relid;
	options.offer_keys = offer_keys;
	options.as_of = as_of;
	options.through_date = through_date;
	options.participant = participant_filter;
	options.properties = properties;
	options.request_enrollments = request_enrollments;
	calc_session_open(&session, &options);
	engine = session.engine;
	calc_row_init(&out.rows, &session.ce);
	inc_engine_set_diagnostics(engine, diagnostics ? EmitDiagnostics : NULL, &out);
	out.row_context = AllocSetContextCreate(call_context, "incentives row",
											ALLOCSET_SMALL_SIZES);

	while (calc_session_next(&session))
	{
		TxnUnit    *unit = &session.unit;

		MemoryContextSwitchTo(session.unit_context);
		out.key_datums = unit->key_datums;
		if (forecast)
			inc_engine_forecast_unit(engine, through_value, &unit->unit, unit->txns, unit->ntxns,
									 pg_calc_property, session.props, EmitForecast, &out);
		else
			inc_engine_calculate_unit(engine, &unit->unit, unit->txns, unit->ntxns,
									  pg_calc_property, session.props, EmitRow, &out);
		MemoryContextSwitchTo(call_context);
		calculated_any = true;
	}

	/* a participant named but without transactions: from an empty state */
	if (participant_filter && !calculated_any && !forecast)
	{
		Datum		key = CStringGetTextDatum(participant_filter);

		MemoryContextSwitchTo(session.unit_context);
		out.key_datums = &key;
		inc_engine_calculate(engine, participant_filter, NULL, 0, pg_calc_property,
							 session.props, EmitRow, &out);
		MemoryContextSwitchTo(call_context);
	}

	calc_session_close(&session);
	SPI_finish();
	return (Datum) 0;
}

/*
 * The SQL-callable entry points: each is Calculate with its mode and
 * request flag.
 */
#define CALCULATE_ENTRY(name, mode, request) \
	PG_FUNCTION_INFO_V1(name); \
	Datum \
	name(PG_FUNCTION_ARGS) \
	{ \
		return Calculate(fcinfo, mode, request); \
	} \
	extern int	no_such_variable

/* incentives_incentive_calculate: the earning rows (docs/reference.md, Earning rows). */
CALCULATE_ENTRY(incentives_incentive_calculate, CALC_EARNINGS, false);

/*
 * incentives_incentive_diagnostics: per participant and requested offer
 * the engine's diagnostics (JSON): the thresholds, tiers, pools and
 * overlaps behind the earnings, touched or not (engine.h,
 * inc_engine_set_diagnostics).
 */
CALCULATE_ENTRY(incentives_incentive_diagnostics, CALC_DIAGNOSTICS, false);

/*
 * incentives_calculate_request: incentive_calculate with the request's
 * enrollment windows added (incentives.calculate's what-if).
 */
CALCULATE_ENTRY(incentives_calculate_request, CALC_EARNINGS, true);

/*
 * incentives_diagnostics_request: incentive_diagnostics with the request's
 * enrollment windows added.
 */
CALCULATE_ENTRY(incentives_diagnostics_request, CALC_DIAGNOSTICS, true);

/*
 * incentives_forecast: per participant and offer, earned to date,
 * projected to the end of the span and accrued (docs/reference.md,
 * Forecast).
 */
CALCULATE_ENTRY(incentives_forecast, CALC_FORECAST, false);
