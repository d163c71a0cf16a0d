/*
 * offer_info.c
 *    What an offer document says, read from the compiled offer instead of
 *    the raw jsonb: its rates as flat rows (the rows of
 *    incentives.program_rates) and its summary (label, strategy,
 *    calculator), so the SQL surface never re-derives a rule the engine
 *    applies (generated rate keys, shortest-form numbers, the period a
 *    stepped offer's filters share).
 *
 * Both compile the document through the per-backend offer cache
 * (offer_cache.c), so listing every stored offer costs one compilation per
 * distinct document; an invalid document is an error with the
 * validation's message.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "pg/base/compat.h"
#include "pg/base/error_context.h"
#include "core/calc/growth.h"
#include "core/engine/engine.h"
#include "core/rules/rules.h"
#include "pg/base/convert.h"
#include "pg/load/offer_load.h"

/* 0.5.0's rows; 0.4.0's and 0.2.0's declarations (before the update) stop earlier */
#define NUM_RATE_COLUMNS 27
#define NUM_RATE_COLUMNS_0_4 25
#define NUM_RATE_COLUMNS_0_2 21
#define NUM_SUMMARY_COLUMNS 13
#define NUM_SUMMARY_COLUMNS_0_4 12
#define NUM_SUMMARY_COLUMNS_0_2 8

/* CompiledOffer: document as an offer, or the validation error. */
static const IncOffer *
CompiledOffer(Jsonb *document)
{
	IncOfferError err;
	const IncOffer *offer = pg_offer_cached(document, &err);

	if (offer == NULL)
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_internal("%s", err.message)));
	}
	return offer;
}

/* The tuplestore and the per-row context of one offer_rates call. */
typedef struct RateOutput
{
	ReturnSetInfo *rsinfo;
	MemoryContext row_context;
} RateOutput;

/* EmitRate: one IncRateRow into the tuplestore, in program_rates' columns. */
static void
EmitRate(void *ctx, const IncRateRow *row)
{
	RateOutput *out = ctx;
	Datum		values[NUM_RATE_COLUMNS];
	bool		nulls[NUM_RATE_COLUMNS];
	MemoryContext old = MemoryContextSwitchTo(out->row_context);
	const IncOffer *offer = row->offer;

	values[0] = pg_text_or_null(offer->offer_key, &nulls[0]);
	values[1] = pg_text_or_null(inc_strategy_name(offer->strategy), &nulls[1]);
	values[2] = pg_text_or_null(inc_calculator_name(offer->calculator), &nulls[2]);
	values[3] = pg_text_or_null(row->rate_key, &nulls[3]);
	values[4] = pg_text_or_null(row->sku_key, &nulls[4]);
	values[5] = pg_dec_to_numeric_or_null(&row->rate_value, &nulls[5]);
	values[6] = pg_text_or_null(row->measure, &nulls[6]);
	values[7] = pg_dec_to_numeric_or_null(row->threshold, &nulls[7]);
	values[8] = pg_text_or_null(row->threshold_type, &nulls[8]);
	values[9] = pg_text_or_null(row->period ? row->period->key : NULL, &nulls[9]);
	nulls[10] = nulls[11] = row->period == NULL;
	values[10] = row->period ? DateADTGetDatum(row->period->start_date) : (Datum) 0;
	values[11] = row->period ? DateADTGetDatum(row->period->end_date) : (Datum) 0;
	values[12] = pg_text_or_null(row->transaction_type, &nulls[12]);
	values[13] = pg_text_or_null(row->sku_set_key, &nulls[13]);
	values[14] = pg_text_or_null(row->stack_key, &nulls[14]);
	values[15] = pg_text_or_null(row->threshold_property_key, &nulls[15]);
	values[16] = pg_dec_to_numeric_or_null(row->price, &nulls[16]);
	values[17] = pg_text_or_null(row->coverage_unit, &nulls[17]);
	values[18] = pg_dec_to_numeric_or_null(row->coverage_rate, &nulls[18]);
	values[19] = pg_text_or_null(row->coverage_uom_key, &nulls[19]);
	values[20] = pg_text_or_null(row->tier_mode, &nulls[20]);
	values[21] = pg_text_or_null(row->pays_on, &nulls[21]);
	nulls[22] = nulls[23] = row->baseline == NULL || row->baseline->kind != INC_BASELINE_DATES;
	values[22] = nulls[22] ? (Datum) 0 : DateADTGetDatum(row->baseline->start_date);
	values[23] = nulls[23] ? (Datum) 0 : DateADTGetDatum(row->baseline->end_date);
	values[24] = pg_text_or_null(row->baseline ? row->baseline->property_key : NULL, &nulls[24]);
	values[25] = pg_text_or_null(row->product_key, &nulls[25]);
	values[26] = pg_text_or_null(offer->group_type, &nulls[26]);

	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
	MemoryContextSwitchTo(old);
	MemoryContextReset(out->row_context);
}

PG_FUNCTION_INFO_V1(incentives_offer_rates);

/*
 * incentives_offer_rates: offer_rates(document jsonb) RETURNS TABLE
 * (offer_key, strategy_key, calculator_key, rate_key, sku_key, rate_value,
 * measure, threshold, threshold_type, period_key, period_start_date,
 * period_end_date, transaction_type, sku_set_key, stack_key,
 * threshold_property_key, price, coverage_unit, coverage_rate,
 * coverage_uom_key, tier_mode, pays_on, baseline_start_date,
 * baseline_end_date, baseline_property_key, product_key, group_type): the
 * offer's rates as flat rows (engine.h, inc_offer_rates), each with the
 * offer's group_type (NULL when it has none), in the tuplestore of the
 * per-query context.  A database at an older version has fewer columns.
 */
Datum
incentives_offer_rates(PG_FUNCTION_ARGS)
{
	RateOutput	out;
	const IncOffer *offer;

	InitMaterializedSRF(fcinfo, 0);
	out.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	if (out.rsinfo->setDesc->natts != NUM_RATE_COLUMNS &&
		out.rsinfo->setDesc->natts != NUM_RATE_COLUMNS_0_4 &&
		out.rsinfo->setDesc->natts != NUM_RATE_COLUMNS_0_2)
		elog(ERROR, "offer_rates returns %d columns, expected %d",
			 out.rsinfo->setDesc->natts, NUM_RATE_COLUMNS);
	offer = CompiledOffer(PG_GETARG_JSONB_P(0));
	out.row_context = AllocSetContextCreate(CurrentMemoryContext, "incentives rate row",
											ALLOCSET_SMALL_SIZES);
	inc_offer_rates(offer, EmitRate, &out);
	MemoryContextDelete(out.row_context);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(incentives_offer_summary);

/*
 * incentives_offer_summary: offer_summary(document jsonb, OUT label text,
 * OUT strategy_key text, OUT calculator_key text, OUT tier_mode text, OUT
 * enrollment text, OUT requirements jsonb, OUT limit_minimum numeric, OUT
 * limit_maximum numeric, OUT aggregation text, OUT threshold_type text,
 * OUT pays_on text, OUT baseline jsonb, OUT group_type text): what the
 * programs view shows
 * beside the document (label NULL when absent; tier_mode, threshold_type
 * and pays_on NULL but for stepped offers, baseline but for their growth
 * types; the limits NULL when not set), the program rules as compiled
 * (docs/reference.md, Program rules; Growth over a baseline) and the
 * aggregation and group type (Participant groups, Participant
 * hierarchies).  A database at an older version has fewer columns.
 */
Datum
incentives_offer_summary(PG_FUNCTION_ARGS)
{
	const IncOffer *offer = CompiledOffer(PG_GETARG_JSONB_P(0));
	bool		stepped = offer->strategy == INC_STEPPED;
	TupleDesc	desc;
	Datum		values[NUM_SUMMARY_COLUMNS];
	bool		nulls[NUM_SUMMARY_COLUMNS];

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "offer_summary must return a row type");
	desc = BlessTupleDesc(desc);
	if (desc->natts != NUM_SUMMARY_COLUMNS && desc->natts != NUM_SUMMARY_COLUMNS_0_4 &&
		desc->natts != NUM_SUMMARY_COLUMNS_0_2)
		elog(ERROR, "offer_summary returns %d columns, expected %d",
			 desc->natts, NUM_SUMMARY_COLUMNS);
	values[0] = pg_text_or_null(offer->label, &nulls[0]);
	values[1] = pg_text_or_null(inc_strategy_name(offer->strategy), &nulls[1]);
	values[2] = pg_text_or_null(inc_calculator_name(offer->calculator), &nulls[2]);
	values[3] = pg_text_or_null(offer->strategy == INC_STEPPED ?
						   inc_tier_mode_name(offer->stepped.tier_mode) : NULL, &nulls[3]);
	values[4] = pg_text_or_null(inc_enrollment_name(offer->rules.enrollment), &nulls[4]);
	values[5] = DirectFunctionCall1(jsonb_in,
									CStringGetDatum(inc_rules_requirements_json(offer)));
	nulls[5] = false;
	values[6] = pg_dec_to_numeric_or_null(offer->rules.limits.has_minimum ?
							  &offer->rules.limits.minimum : NULL, &nulls[6]);
	values[7] = pg_dec_to_numeric_or_null(offer->rules.limits.has_maximum ?
							  &offer->rules.limits.maximum : NULL, &nulls[7]);
	values[8] = pg_text_or_null(inc_aggregation_name(offer->aggregation), &nulls[8]);
	values[9] = pg_text_or_null(stepped ? inc_threshold_type_name(offer->stepped.threshold_type) : NULL,
						   &nulls[9]);
	values[10] = pg_text_or_null(stepped ? inc_pays_on_name(offer->stepped.pays_on) : NULL, &nulls[10]);
	nulls[11] = !stepped || offer->stepped.baseline.kind == INC_BASELINE_NONE;
	values[11] = (Datum) 0;
	if (!nulls[11])
	{
		IncJsonBuf	b;

		inc_json_init(&b);
		inc_growth_baseline_json(&b, &offer->stepped.baseline);
		values[11] = DirectFunctionCall1(jsonb_in, CStringGetDatum(b.data));
	}
	values[12] = pg_text_or_null(offer->group_type, &nulls[12]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
