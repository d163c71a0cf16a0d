/*
 * calculate.c
 *    incentives.incentive_calculate(participant_key, properties,
 *    offer_keys, transactions) RETURNS SETOF incentives.earning.
 *
 * One call: load the offers (all, or those named), the SKU units and unit
 * conversions into an engine; collect the property values the offers
 * need; then stream the transactions participant by participant through
 * the engine, writing rows into a materialized tuplestore (which spills
 * to disk past work_mem).  Memory per participant lives in a context reset
 * after each participant.  Runs with the caller's rights and snapshot
 * (STABLE, read-only SPI), so row-level security applies.  While the
 * engine runs, an error context callback names the transaction and the
 * participant being calculated (from inc_engine_position).
 * incentive_diagnostics shares all of this and returns the engine's
 * diagnostics of every requested offer instead of the rows; a participant
 * named by participant_key is reported even when it has no transactions.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/regproc.h"

#include "compat.h"
#include "core/engine.h"
#include "core/strmap.h"
#include "pg_glue.h"
#include "txn_source.h"

#define NUM_EARNING_COLUMNS 17
#define NUM_DIAGNOSTICS_COLUMNS 4

/* A property given in the call's properties object. */
typedef struct CallProperty
{
	bool		is_number;
	IncDec		value;
} CallProperty;

typedef struct Properties
{
	IncStrMap  *call;			/* key -> CallProperty * */
	IncStrMap  *stored;			/* "participant\037key" -> IncDec * */
} Properties;

/* A text datum made once per call (CachedText). */
typedef struct TextEntry
{
	const char *ptr;			/* the string's address; NULL: empty slot */
	Datum		datum;			/* its text datum */
} TextEntry;

typedef struct Output
{
	ReturnSetInfo *rsinfo;
	MemoryContext call_context;
	MemoryContext row_context;
	Datum		participant_datum;	/* the participant being calculated */
	bool		diagnostics;	/* diagnostics rows instead of earnings */
	TextEntry  *texts;
	uint32		texts_mask;
	uint32		ntexts;
} Output;

static void GrowTexts(Output *out);

static void
Tick(void)
{
	CHECK_FOR_INTERRUPTS();
}

/* LoadOffers: compile the offers into e; every key in offer_keys must exist. */
static void
LoadOffers(IncEngine *e, ArrayType *offer_keys)
{
	Oid			argtypes[1] = {TEXTARRAYOID};
	Datum		args[1];
	char		nulls[1] = {' '};
	Datum	   *keys = NULL;
	bool	   *keynulls = NULL;
	int			nkeys = 0;
	uint64		i;
	int			k;

	if (offer_keys)
	{
		deconstruct_array(offer_keys, TEXTOID, -1, false, TYPALIGN_INT, &keys, &keynulls, &nkeys);
		for (k = 0; k < nkeys; k++)
			if (keynulls[k])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("offer_keys must not contain NULL")));
		args[0] = PointerGetDatum(offer_keys);
	}
	else
		nulls[0] = 'n';

	pg_offer_cache_prune();
	if (SPI_execute_with_args("SELECT offer_key, document FROM incentives.offers"
							  " WHERE $1 IS NULL OR offer_key OPERATOR(pg_catalog.=) ANY ($1)"
							  " ORDER BY offer_key COLLATE \"C\"",
							  1, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read incentives.offers");

	for (k = 0; k < nkeys; k++)
	{
		char	   *wanted = TextDatumGetCString(keys[k]);
		bool		found = false;

		for (i = 0; i < SPI_processed && !found; i++)
		{
			char	   *have = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

			found = strcmp(have, wanted) == 0;
		}
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("offer \"%s\" does not exist", wanted),
					 errhint("offer_keys must name offers in incentives.offers.")));
	}

	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		doc = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
		IncOfferError err;
		const IncOffer *offer;

		CHECK_FOR_INTERRUPTS();
		offer = pg_offer_cached(DatumGetJsonbP(doc), &err);
		if (offer == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg_internal("%s", err.message),
					 errhint("The stored offer no longer passes validation; fix it with UPDATE incentives.offers.")));
		inc_engine_add_offer(e, offer);
	}
	SPI_freetuptable(SPI_tuptable);
}

/* LoadReferenceData: SKU units and unit conversions into e. */
static void
LoadReferenceData(IncEngine *e, const char *const *skus, int nskus)
{
	Oid			argtypes[1] = {TEXTARRAYOID};
	Datum		args[1];
	uint64		i;

	args[0] = pg_cstring_array(skus, nskus);
	if (SPI_execute_with_args("SELECT sku_key, uom_key FROM incentives.skus"
							  " WHERE sku_key OPERATOR(pg_catalog.=) ANY ($1)",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read incentives.skus");
	for (i = 0; i < SPI_processed; i++)
		inc_engine_set_sku_uom(e,
							   SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1),
							   SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
	SPI_freetuptable(SPI_tuptable);

	if (SPI_execute("SELECT from_uom_key, to_uom_key, factor FROM incentives.uom_conversions",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read incentives.uom_conversions");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		f = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &isnull);
		IncDec		factor = pg_numeric_to_dec(f, "unit conversion factor", NULL);

		inc_engine_add_conversion(e,
								  SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1),
								  SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2),
								  &factor);
	}
	SPI_freetuptable(SPI_tuptable);
}

/* LoadCallProperties: the call's properties object, by key. */
static void
LoadCallProperties(Properties *props, Jsonb *properties)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	props->call = inc_strmap_create();
	if (properties == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(properties))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("properties must be a JSON object, e.g. '{\"business_plan_achieved\": 90}'")));

	it = JsonbIteratorInit(&properties->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			key = pnstrdup(v.val.string.val, v.val.string.len);
		else if (tok == WJB_VALUE)
		{
			CallProperty *p = palloc0(sizeof(CallProperty));

			if (v.type == jbvNumeric)
			{
				p->is_number = true;
				p->value = pg_numeric_to_dec(NumericGetDatum(v.val.numeric),
											 psprintf("property \"%s\"", key), NULL);
			}
			*inc_strmap_slot(props->call, key) = p;
		}
	}
}

static char *
StoredKey(const char *participant, const char *property)
{
	return psprintf("%s\037%s", participant, property);
}

/* LoadStoredProperties: incentives.participant_properties of the used keys. */
static void
LoadStoredProperties(Properties *props, IncEngine *e, const char *participant_key)
{
	Oid			argtypes[2] = {TEXTARRAYOID, TEXTOID};
	Datum		args[2];
	char		nulls[2] = {' ', 'n'};
	const char *const *keys;
	int			nkeys;
	uint64		i;

	props->stored = inc_strmap_create();
	keys = inc_engine_property_keys(e, &nkeys);
	if (nkeys == 0)
		return;
	args[0] = pg_cstring_array(keys, nkeys);
	if (participant_key)
	{
		args[1] = CStringGetTextDatum(participant_key);
		nulls[1] = ' ';
	}
	if (SPI_execute_with_args("SELECT participant_key, property_key, value"
							  " FROM incentives.participant_properties"
							  " WHERE property_key OPERATOR(pg_catalog.=) ANY ($1)"
							  " AND ($2 IS NULL OR participant_key OPERATOR(pg_catalog.=) $2)",
							  2, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read incentives.participant_properties");
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		char	   *participant = SPI_getvalue(tuple, desc, 1);
		char	   *property = SPI_getvalue(tuple, desc, 2);
		IncDec	   *value = palloc(sizeof(IncDec));

		*value = pg_numeric_to_dec(SPI_getbinval(tuple, desc, 3, &isnull),
								   psprintf("stored property \"%s\" of participant \"%s\"",
											property, participant), NULL);
		*inc_strmap_slot(props->stored, StoredKey(participant, property)) = value;
	}
	SPI_freetuptable(SPI_tuptable);
}

/* LookupProperty: the call's value first, then the stored one. */
static IncPropStatus
LookupProperty(void *ctx, const char *participant_key, const char *property_key, IncDec *value)
{
	Properties *props = ctx;
	CallProperty *call = inc_strmap_get(props->call, property_key);
	IncDec	   *stored;

	if (call)
	{
		if (!call->is_number)
			return INC_PROP_NOT_NUMBER;
		*value = call->value;
		return INC_PROP_FOUND;
	}
	stored = inc_strmap_get(props->stored, StoredKey(participant_key, property_key));
	if (stored == NULL)
		return INC_PROP_MISSING;
	*value = *stored;
	return INC_PROP_FOUND;
}

/*
 * CachedText: the text datum of s, made once per call.  The strings of a
 * row (offer and rate keys, measures, calculator names, SKU and unit
 * names) are the engine's and stay put for the whole calculation
 * (calc_io.h, IncRow), and they are few: they are found by address.
 */
static Datum
CachedText(Output *out, const char *s)
{
	uint32		i = (uint32) (((uintptr_t) s >> 3) * 2654435761u) & out->texts_mask;

	for (;; i = (i + 1) & out->texts_mask)
	{
		TextEntry  *t = &out->texts[i];

		if (t->ptr == s)
		{
			Assert(strcmp(text_to_cstring(DatumGetTextPP(t->datum)), s) == 0);
			return t->datum;
		}
		if (t->ptr == NULL)
		{
			if ((out->ntexts + 1) * 2 > out->texts_mask + 1)
			{
				GrowTexts(out);
				return CachedText(out, s);
			}
			out->ntexts++;
			t->ptr = s;
			t->datum = PointerGetDatum(MemoryContextAlloc(out->call_context,
														 VARHDRSZ + strlen(s)));
			SET_VARSIZE(DatumGetPointer(t->datum), VARHDRSZ + strlen(s));
			memcpy(VARDATA(DatumGetPointer(t->datum)), s, strlen(s));
			return t->datum;
		}
	}
}

/* GrowTexts: twice the slots of the text cache. */
static void
GrowTexts(Output *out)
{
	TextEntry  *old = out->texts;
	uint32		oldmask = out->texts_mask;
	uint32		i;

	out->texts_mask = oldmask ? oldmask * 2 + 1 : 255;
	out->texts = MemoryContextAllocZero(out->call_context,
										sizeof(TextEntry) * (out->texts_mask + 1));
	out->ntexts = 0;
	for (i = 0; old && i <= oldmask; i++)
		if (old[i].ptr)
		{
			uint32		j = (uint32) (((uintptr_t) old[i].ptr >> 3) * 2654435761u) & out->texts_mask;

			while (out->texts[j].ptr)
				j = (j + 1) & out->texts_mask;
			out->texts[j] = old[i];
			out->ntexts++;
		}
}

/*
 * EmitRow: one engine row into the tuplestore.  Texts come from the cache
 * or point into the transaction's record, numerics are written into local
 * buffers: the tuplestore's copy is the only allocation.
 */
static void
EmitRow(void *ctx, const IncRow *row)
{
	Output	   *out = ctx;
	Datum		values[NUM_EARNING_COLUMNS];
	bool		nulls[NUM_EARNING_COLUMNS];
	union
	{
		char		b[PG_NUMERIC_BUF];
		int32		align;
	}			num[10];

	if (out->diagnostics)
		return;
	memset(nulls, 0, sizeof(nulls));
	values[0] = out->participant_datum;
	values[1] = CachedText(out, row->offer->offer_key);
	values[2] = CachedText(out, inc_calculator_name(row->offer->calculator));
	values[3] = CachedText(out, row->txn->sku_key);
	values[4] = CachedText(out, row->rate_key);
	values[5] = CachedText(out, row->rate_measure);
	values[6] = pg_dec_to_numeric_in(&row->rate_value, num[0].b);
	values[7] = pg_dec_to_numeric_in(&row->pay_rate, num[1].b);
	values[8] = txn_source_id_datum(row->txn);
	values[9] = pg_dec_to_numeric_in(&row->txn->quantity, num[2].b);
	values[10] = CachedText(out, row->txn->uom_key);
	values[11] = pg_dec_to_numeric_in(&row->txn->amount, num[3].b);
	values[12] = pg_dec_to_numeric_in(&row->incentivized_quantity, num[4].b);
	values[13] = pg_dec_to_numeric_in(&row->incentivized_amount, num[5].b);
	values[14] = pg_dec_to_numeric_in(&row->incentive_amount, num[6].b);
	values[15] = pg_dec_to_numeric_in(&row->contribution, num[7].b);
	if (row->effective_rate_null)
	{
		values[16] = (Datum) 0;
		nulls[16] = true;
	}
	else
		values[16] = pg_dec_to_numeric_in(&row->effective_rate, num[8].b);

	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
}

/* EmitDiagnostics: one (participant, offer, strategy, diagnostics) row. */
static void
EmitDiagnostics(void *ctx, const IncOffer *offer, const char *json)
{
	Output	   *out = ctx;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	MemoryContext old = MemoryContextSwitchTo(out->row_context);

	values[0] = out->participant_datum;
	values[1] = CachedText(out, offer->offer_key);
	values[2] = CachedText(out, inc_strategy_name(offer->strategy));
	values[3] = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
	MemoryContextSwitchTo(old);
	MemoryContextReset(out->row_context);
}

/*
 * CalculationContext: error context callback while the engine runs: which
 * transaction of which participant (nothing outside a calculation).
 */
static void
CalculationContext(void *arg)
{
	const IncEngine *engine = arg;
	const char *participant;
	const char *transaction_id;

	if (!inc_engine_position(engine, &participant, &transaction_id))
		return;
	if (transaction_id)
		errcontext("calculating transaction \"%s\" of participant \"%s\"",
				   transaction_id, participant);
	else
		errcontext("calculating participant \"%s\"", participant);
}

/*
 * Calculate: the body of incentive_calculate and incentive_diagnostics,
 * which share their arguments; diagnostics selects what is returned.
 */
static Datum
Calculate(FunctionCallInfo fcinfo, bool diagnostics)
{
	char	   *participant_filter = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	Jsonb	   *properties = PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	ArrayType  *offer_keys = PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2);
	Oid			relid;
	IncEngine  *engine;
	Properties	props;
	Output		out;
	TxnSource  *src;
	ErrorContextCallback context;
	bool		calculated_any = false;
	MemoryContext participant_context,
				call_context;
	const char *key;
	IncTxn	   *txns;
	int			ntxns;

	InitMaterializedSRF(fcinfo, 0);
	memset(&out, 0, sizeof(out));
	out.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	out.diagnostics = diagnostics;
	/* the rows built below fill exactly this many columns */
	if (out.rsinfo->setDesc->natts !=
		(diagnostics ? NUM_DIAGNOSTICS_COLUMNS : NUM_EARNING_COLUMNS))
		elog(ERROR, "%s returns %d columns, expected %d",
			 diagnostics ? "incentive_diagnostics" : "incentive_calculate",
			 out.rsinfo->setDesc->natts,
			 diagnostics ? NUM_DIAGNOSTICS_COLUMNS : NUM_EARNING_COLUMNS);

	if (PG_ARGISNULL(3))
		relid = DatumGetObjectId(DirectFunctionCall1(to_regclass,
													 CStringGetTextDatum("incentives.transactions")));
	else
		relid = PG_GETARG_OID(3);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	call_context = CurrentMemoryContext;
	out.call_context = call_context;
	GrowTexts(&out);

	engine = inc_engine_create();
	inc_engine_set_tick(engine, Tick);
	if (diagnostics)
		inc_engine_set_diagnostics(engine, EmitDiagnostics, &out);
	LoadOffers(engine, offer_keys);
	inc_engine_prepare(engine);
	{
		const char *const *skus;
		int			nskus;

		skus = inc_engine_sku_keys(engine, &nskus);
		LoadReferenceData(engine, skus, nskus);
	}
	LoadCallProperties(&props, properties);
	LoadStoredProperties(&props, engine, participant_filter);

	participant_context = AllocSetContextCreate(call_context, "incentives participant",
												ALLOCSET_DEFAULT_SIZES);
	out.row_context = AllocSetContextCreate(call_context, "incentives row",
											ALLOCSET_SMALL_SIZES);

	/* every transaction read, grouped by participant (txn_source.h) */
	src = txn_source_open(relid, participant_filter, engine, call_context);

	/* the engine's position names what failed, while it calculates */
	context.callback = CalculationContext;
	context.arg = engine;
	context.previous = error_context_stack;
	error_context_stack = &context;

	while (txn_source_next(src, participant_context, &key, &out.participant_datum,
						   &txns, &ntxns))
	{
		MemoryContextSwitchTo(participant_context);
		inc_engine_calculate(engine, key, txns, ntxns, LookupProperty, &props, EmitRow, &out);
		MemoryContextSwitchTo(call_context);
		MemoryContextReset(participant_context);
		calculated_any = true;
	}

	/* a participant named but without transactions: from an empty state */
	if (participant_filter && !calculated_any)
	{
		MemoryContextSwitchTo(participant_context);
		out.participant_datum = CStringGetTextDatum(participant_filter);
		inc_engine_calculate(engine, participant_filter, NULL, 0, LookupProperty, &props,
							 EmitRow, &out);
		MemoryContextSwitchTo(call_context);
	}

	error_context_stack = context.previous;

	txn_source_close(src);
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(incentives_incentive_calculate);

/* incentives_incentive_calculate: the earning rows (docs/reference.md, Earning rows). */
Datum
incentives_incentive_calculate(PG_FUNCTION_ARGS)
{
	return Calculate(fcinfo, false);
}

PG_FUNCTION_INFO_V1(incentives_incentive_diagnostics);

/*
 * incentives_incentive_diagnostics: per participant and requested offer
 * (all offers by default), the entries, thresholds, tiers, coverage and
 * overlaps behind the earnings, touched or not (engine.h,
 * inc_engine_set_diagnostics).
 */
Datum
incentives_incentive_diagnostics(PG_FUNCTION_ARGS)
{
	return Calculate(fcinfo, true);
}
