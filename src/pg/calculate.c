/*
 * calculate.c
 *    incentives.incentive_calculate(participant_key, properties,
 *    offer_keys, transactions, as_of, through_date) RETURNS SETOF
 *    incentives.earning.
 *
 * One call: load the offers (all, or those named; from
 * incentives.offer_versions as they were at as_of when it is given), the
 * SKU units and unit conversions into an engine; collect the property
 * values the offers need; then stream the transactions (dated on or before
 * through_date when it is given) participant by participant through
 * the engine, writing rows into a materialized tuplestore (which spills
 * to disk past work_mem).  Memory per participant lives in a context reset
 * after each participant.  Runs with the caller's rights and snapshot
 * (STABLE, read-only SPI), so row-level security applies.  While the
 * engine runs, an error context callback names the transaction and the
 * participant being calculated (from inc_engine_position).
 * incentive_diagnostics shares all of this and returns the engine's
 * diagnostics of every requested offer instead of the rows; a participant
 * named by participant_key is reported even when it has no transactions.
 * The enrollment windows of offers that require enrollment come from
 * enrollments.c; the what-if entry point (incentives.calculate) adds the
 * request's own through a fifth argument of the internal variants.
 * A second error context callback notes where a failed calculation was
 * (lifecycle.c), for refreshes that skip failing participants.
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

#include "compat.h"
#include "core/engine.h"
#include "core/strmap.h"
#include "enrollments.h"
#include "pg_glue.h"
#include "txn_source.h"

#define NUM_EARNING_COLUMNS 17
#define NUM_DIAGNOSTICS_COLUMNS 4

/*
 * A result type with one more column than the earning row gets the
 * transaction's date there (incentives_internal.calculate_dated, which
 * refresh_earnings materializes).
 */
#define NUM_DATED_COLUMNS (NUM_EARNING_COLUMNS + 1)

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

typedef struct Output
{
	ReturnSetInfo *rsinfo;
	MemoryContext row_context;
	const char *participant_key;
	bool		diagnostics;	/* diagnostics rows instead of earnings */
} Output;

static void
Tick(void)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * LoadOffers: compile the offers into e; every key in offer_keys must
 * exist.  With as_of, the offers are the versions valid at that time
 * (incentives.offer_versions; docs/lifecycle.md), else incentives.offers.
 */
static void
LoadOffers(IncEngine *e, ArrayType *offer_keys, const TimestampTz *as_of)
{
	Oid			argtypes[2] = {TEXTARRAYOID, TIMESTAMPTZOID};
	Datum		args[2];
	char		nulls[2] = {' ', ' '};
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
	if (as_of == NULL)
	{
		if (SPI_execute_with_args("SELECT offer_key, document FROM incentives.offers"
								  " WHERE $1 IS NULL OR offer_key OPERATOR(pg_catalog.=) ANY ($1)"
								  " ORDER BY offer_key COLLATE \"C\"",
								  1, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read incentives.offers");
	}
	else
	{
		args[1] = TimestampTzGetDatum(*as_of);
		if (SPI_execute_with_args("SELECT offer_key, document FROM incentives.offer_versions"
								  " WHERE ($1 IS NULL OR offer_key OPERATOR(pg_catalog.=) ANY ($1))"
								  " AND valid_from OPERATOR(pg_catalog.<=) $2"
								  " AND (valid_to IS NULL OR valid_to OPERATOR(pg_catalog.>) $2)"
								  " ORDER BY offer_key COLLATE \"C\"",
								  2, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read incentives.offer_versions");
	}

	for (k = 0; k < nkeys; k++)
	{
		char	   *wanted = TextDatumGetCString(keys[k]);
		bool		found = false;

		for (i = 0; i < SPI_processed && !found; i++)
		{
			char	   *have = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

			found = strcmp(have, wanted) == 0;
		}
		if (!found && as_of == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("offer \"%s\" does not exist", wanted),
					 errhint("offer_keys must name offers in incentives.offers.")));
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("offer \"%s\" does not exist", wanted),
					 errdetail("The calculation is as of %s.", timestamptz_to_str(*as_of)),
					 errhint("offer_keys must name offers that incentives.offer_versions shows valid at as_of.")));
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

/* EmitRow: one engine row into the tuplestore. */
static void
EmitRow(void *ctx, const IncRow *row)
{
	Output	   *out = ctx;
	Datum		values[NUM_DATED_COLUMNS];
	bool		nulls[NUM_DATED_COLUMNS];
	MemoryContext old = MemoryContextSwitchTo(out->row_context);

	if (out->diagnostics)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(out->participant_key);
	values[1] = CStringGetTextDatum(row->offer->offer_key);
	values[2] = CStringGetTextDatum(inc_calculator_name(row->offer->calculator));
	values[3] = CStringGetTextDatum(row->txn->sku_key);
	values[4] = CStringGetTextDatum(row->rate_key);
	values[5] = CStringGetTextDatum(row->rate_measure);
	values[6] = pg_dec_to_numeric(&row->rate_value);
	values[7] = pg_dec_to_numeric(&row->pay_rate);
	values[8] = CStringGetTextDatum(row->txn->transaction_id);
	values[9] = pg_dec_to_numeric(&row->txn->quantity);
	values[10] = CStringGetTextDatum(row->txn->uom_key);
	values[11] = pg_dec_to_numeric(&row->txn->amount);
	values[12] = pg_dec_to_numeric(&row->incentivized_quantity);
	values[13] = pg_dec_to_numeric(&row->incentivized_amount);
	values[14] = pg_dec_to_numeric(&row->incentive_amount);
	values[15] = pg_dec_to_numeric(&row->contribution);
	if (row->effective_rate_null)
	{
		values[16] = (Datum) 0;
		nulls[16] = true;
	}
	else
		values[16] = pg_dec_to_numeric(&row->effective_rate);
	if (out->rsinfo->setDesc->natts == NUM_DATED_COLUMNS)
	{
		values[NUM_EARNING_COLUMNS] = DateADTGetDatum(row->txn->transaction_date);
		nulls[NUM_EARNING_COLUMNS] = false;
	}

	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
	MemoryContextSwitchTo(old);
	MemoryContextReset(out->row_context);
}

/* EmitDiagnostics: one (participant, offer, strategy, diagnostics) row. */
static void
EmitDiagnostics(void *ctx, const IncOffer *offer, const char *json)
{
	Output	   *out = ctx;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	MemoryContext old = MemoryContextSwitchTo(out->row_context);

	values[0] = CStringGetTextDatum(out->participant_key);
	values[1] = CStringGetTextDatum(offer->offer_key);
	values[2] = CStringGetTextDatum(inc_strategy_name(offer->strategy));
	values[3] = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
	MemoryContextSwitchTo(old);
	MemoryContextReset(out->row_context);
}

/* One participant's transactions, in its own memory context. */
typedef struct Participant
{
	MemoryContext context;		/* reset after each participant */
	char	   *key;			/* NULL until the first transaction */
	IncTxn	   *txns;
	int			ntxns;
	int			cap;
} Participant;

/*
 * CopyInto: a deep copy of *txn and *key into context, replacing both (the
 * row that starts the next participant must outlive this one's context).
 */
static void
CopyInto(MemoryContext context, IncTxn *txn, char **key)
{
	MemoryContext old = MemoryContextSwitchTo(context);

	txn->transaction_id = pstrdup(txn->transaction_id);
	txn->transaction_type = pstrdup(txn->transaction_type);
	txn->sku_key = pstrdup(txn->sku_key);
	txn->uom_key = pstrdup(txn->uom_key);
	*key = pstrdup(*key);
	MemoryContextSwitchTo(old);
}

/* AddTxn: append txn (already in p->context) to the participant. */
static void
AddTxn(Participant *p, const IncTxn *txn, const char *relname)
{
	if (p->ntxns > 0 &&
		strcmp(txn->transaction_id, p->txns[p->ntxns - 1].transaction_id) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("transaction \"%s\" appears more than once in relation %s",
						txn->transaction_id, relname)));
	if (p->ntxns == p->cap)
	{
		p->cap = p->cap ? p->cap * 2 : 256;
		p->txns = p->txns ? repalloc_huge(p->txns, sizeof(IncTxn) * p->cap)
			: MemoryContextAllocHuge(p->context, sizeof(IncTxn) * p->cap);
	}
	p->txns[p->ntxns++] = *txn;
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

/* What NoteFailure looks at. */
typedef struct FailureWhere
{
	const IncEngine *engine;
	const TxnSource *src;
} FailureWhere;

/*
 * NoteFailure: error context callback of a calculation; notes the
 * participant and transaction it was at (lifecycle.c), so that a refresh
 * that skips failing participants can say which transaction failed without
 * reading the message.  While the engine runs its position says where;
 * while reading, the source's current row does.
 */
static void
NoteFailure(void *arg)
{
	FailureWhere *where = arg;
	const char *participant;
	const char *transaction_id;

	if (inc_engine_position(where->engine, &participant, &transaction_id))
		pg_failure_note(participant, transaction_id);
	else
		pg_failure_note(where->src->current_participant, where->src->current_id);
}

/* Finish: calculate the participant, then forget it. */
static void
Finish(Participant *p, IncEngine *engine, Properties *props, Output *out)
{
	out->participant_key = p->key;
	inc_engine_calculate(engine, p->key, p->txns, p->ntxns,
						 LookupProperty, props, EmitRow, out);
	MemoryContextReset(p->context);
	p->key = NULL;
	p->txns = NULL;
	p->ntxns = p->cap = 0;
}

/* OptionalArg: argument n when the call has it and it is not NULL. */
static bool
OptionalArg(FunctionCallInfo fcinfo, int n)
{
	return PG_NARGS() > n && !PG_ARGISNULL(n);
}

/*
 * Calculate: the body of incentive_calculate and incentive_diagnostics,
 * which share their arguments; diagnostics selects what is returned.
 * Their arguments (participant_key, properties, offer_keys, transactions)
 * go on with as_of and through_date (0.1.0's declarations stop before
 * them: PG_NARGS tells).  The request variants (calculate_request,
 * diagnostics_request; request) have the request's enrollment windows
 * (jsonb) fifth, then as_of and through_date.
 */
static Datum
Calculate(FunctionCallInfo fcinfo, bool diagnostics, bool request)
{
	char	   *participant_filter = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	Jsonb	   *properties = PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	ArrayType  *offer_keys = PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2);
	Jsonb	   *request_enrollments = request && OptionalArg(fcinfo, 4) ?
		PG_GETARG_JSONB_P(4) : NULL;
	int			as_of_arg = request ? 5 : 4;
	TimestampTz as_of_value = 0;
	TimestampTz *as_of = NULL;
	DateADT		through_value = 0;
	DateADT    *through_date = NULL;
	FailureWhere failure_where;
	ErrorContextCallback failure_callback;
	Oid			relid;
	IncEngine  *engine;
	Properties	props;
	PgEnrollments enrollments;
	Output		out;
	TxnSource	src;
	Participant participant;
	ErrorContextCallback context;
	bool		calculated_any = false;
	MemoryContext carry_context,
				call_context;
	const char *const *skus;
	int			nskus;

	if (OptionalArg(fcinfo, as_of_arg))
	{
		as_of_value = PG_GETARG_TIMESTAMPTZ(as_of_arg);
		as_of = &as_of_value;
	}
	if (OptionalArg(fcinfo, as_of_arg + 1))
	{
		through_value = PG_GETARG_DATEADT(as_of_arg + 1);
		through_date = &through_value;
	}

	InitMaterializedSRF(fcinfo, 0);
	out.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	out.diagnostics = diagnostics;
	/* the rows built below fill exactly this many columns (or one more: the date) */
	if (out.rsinfo->setDesc->natts !=
		(diagnostics ? NUM_DIAGNOSTICS_COLUMNS : NUM_EARNING_COLUMNS) &&
		(diagnostics || out.rsinfo->setDesc->natts != NUM_DATED_COLUMNS))
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

	engine = inc_engine_create();

	/* where a failure happened, for refresh_earnings(on_error => 'skip') */
	memset(&src, 0, sizeof(src));
	pg_failure_clear();
	failure_where.engine = engine;
	failure_where.src = &src;
	failure_callback.callback = NoteFailure;
	failure_callback.arg = &failure_where;
	failure_callback.previous = error_context_stack;
	error_context_stack = &failure_callback;

	inc_engine_set_tick(engine, Tick);
	if (diagnostics)
		inc_engine_set_diagnostics(engine, EmitDiagnostics, &out);
	LoadOffers(engine, offer_keys, as_of);
	inc_engine_prepare(engine);
	skus = inc_engine_sku_keys(engine, &nskus);
	LoadReferenceData(engine, skus, nskus);
	LoadCallProperties(&props, properties);
	LoadStoredProperties(&props, engine, participant_filter);
	pg_enrollments_load(&enrollments, engine, participant_filter, request_enrollments);
	inc_engine_set_enrollments(engine, pg_enrollments_lookup, &enrollments);

	memset(&participant, 0, sizeof(participant));
	participant.context = AllocSetContextCreate(call_context, "incentives participant",
												ALLOCSET_DEFAULT_SIZES);
	carry_context = AllocSetContextCreate(call_context, "incentives carry",
										  ALLOCSET_SMALL_SIZES);
	out.row_context = AllocSetContextCreate(call_context, "incentives row",
											ALLOCSET_SMALL_SIZES);

	/* the engine's position names what failed, while it calculates */
	context.callback = CalculationContext;
	context.arg = engine;
	context.previous = error_context_stack;
	error_context_stack = &context;

	/* transactions come ordered by participant: calculate each as it ends */
	txn_source_open(&src, relid, participant_filter, skus, nskus, through_date);
	MemoryContextSwitchTo(participant.context);
	for (;;)
	{
		IncTxn		txn;
		char	   *key;
		bool		more;

		CHECK_FOR_INTERRUPTS();
		more = txn_source_next(&src, &txn, &key);
		if (participant.key && (!more || strcmp(key, participant.key) != 0))
		{
			/* the source's current row follows its copies (NoteFailure) */
			if (more)
				CopyInto(carry_context, &txn, &key);
			src.current_id = more ? txn.transaction_id : NULL;
			src.current_participant = more ? key : NULL;
			Finish(&participant, engine, &props, &out);
			calculated_any = true;
			if (more)
				CopyInto(participant.context, &txn, &key);
			src.current_id = more ? txn.transaction_id : NULL;
			src.current_participant = more ? key : NULL;
			MemoryContextReset(carry_context);
		}
		if (!more)
			break;
		if (participant.key == NULL)
			participant.key = key;
		AddTxn(&participant, &txn, src.relname);
	}

	/* a participant named but without transactions: from an empty state */
	if (participant_filter && !calculated_any)
	{
		participant.key = participant_filter;
		Finish(&participant, engine, &props, &out);
	}

	error_context_stack = context.previous;
	MemoryContextSwitchTo(call_context);
	src.current_id = src.current_participant = NULL;
	txn_source_close(&src);
	error_context_stack = failure_callback.previous;
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(incentives_incentive_calculate);

/* incentives_incentive_calculate: the earning rows (docs/reference.md, Earning rows). */
Datum
incentives_incentive_calculate(PG_FUNCTION_ARGS)
{
	return Calculate(fcinfo, false, false);
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
	return Calculate(fcinfo, true, false);
}

PG_FUNCTION_INFO_V1(incentives_calculate_request);

/*
 * incentives_calculate_request: incentive_calculate with the request's
 * enrollment windows added (incentives.calculate's what-if).
 */
Datum
incentives_calculate_request(PG_FUNCTION_ARGS)
{
	return Calculate(fcinfo, false, true);
}

PG_FUNCTION_INFO_V1(incentives_diagnostics_request);

/*
 * incentives_diagnostics_request: incentive_diagnostics with the request's
 * enrollment windows added.
 */
Datum
incentives_diagnostics_request(PG_FUNCTION_ARGS)
{
	return Calculate(fcinfo, true, true);
}
