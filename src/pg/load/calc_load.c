/*
 * calc_load.c
 *    The engine of a calculation and the property values it needs (see
 *    calc_load.h).
 *
 * Reads run with the caller's rights and snapshot (read-only SPI), each
 * through a plan prepared once per backend (SPI_keepplan; the plan cache
 * replans after DDL).  An engine is built only when the engine cache has
 * none for this call (engine_cache.h): a loop of per-participant calls in
 * one statement reads the offers, SKU units and conversions once.  A call
 * with as_of reads the offer versions valid then (docs/lifecycle.md, Offer
 * versions and as_of) into an engine of its own: the cache never serves
 * or keeps it.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "pg/load/calc_load.h"
#include "core/util/strmap.h"
#include "pg/load/engine_cache.h"
#include "pg/load/participant_groups.h"
#include "pg/base/convert.h"
#include "pg/base/error_context.h"
#include "pg/load/offer_load.h"

/* The reads, prepared once per backend. */
typedef enum KeptRead
{
	READ_OFFERS,
	READ_OFFER_VERSIONS,
	READ_OFFERS_UNSCHEDULED,
	READ_OFFER_VERSIONS_UNSCHEDULED,
	READ_SKUS,
	READ_CONVERSIONS,
	READ_PRODUCTS,
	READ_EXCHANGE_RATES,
	READ_PROPERTIES_ALL,
	READ_PROPERTIES_SOME,
	NUM_READS
} KeptRead;

/* The parts the offer reads and the property reads share. */
#define OFFERS_IN_KEYS \
	"($1 IS NULL OR offer_key OPERATOR(pg_catalog.=) ANY ($1))"
#define OFFERS_ORDER " ORDER BY offer_key COLLATE \"C\""
/*
 * An offer's rate schedule (docs/lifecycle.md, Prospective rate changes):
 * the effective_from dates and documents of the versions in force, in
 * order, as of as_of (NULL: now); both NULL for an offer without one.
 */
#define SCHEDULE_COLUMNS(as_of) \
	"(SELECT pg_catalog.array_agg(s.effective_from ORDER BY s.version)" \
	" FROM incentives_internal.rate_schedule(offer_key, " as_of ") AS s)," \
	" (SELECT pg_catalog.array_agg(s.document ORDER BY s.version)" \
	" FROM incentives_internal.rate_schedule(offer_key, " as_of ") AS s)"
#define PROPERTIES_SELECT \
	"SELECT participant_key, property_key, value FROM incentives.participant_properties WHERE "
#define PROPERTIES_IN_KEYS "property_key OPERATOR(pg_catalog.=) ANY ($1)"

static const struct
{
	const char *query;
	int			nargs;
	Oid			argtypes[2];
}			reads[NUM_READS] = {
	[READ_OFFERS] = {"SELECT offer_key, document, " SCHEDULE_COLUMNS("NULL")
		" FROM incentives.offers"
		" WHERE " OFFERS_IN_KEYS OFFERS_ORDER, 1, {TEXTARRAYOID}},
	[READ_OFFER_VERSIONS] = {"SELECT offer_key, document, " SCHEDULE_COLUMNS("$2")
		" FROM incentives.offer_versions"
		" WHERE " OFFERS_IN_KEYS
		" AND valid_from OPERATOR(pg_catalog.<=) $2"
		" AND (valid_to IS NULL OR valid_to OPERATOR(pg_catalog.>) $2)"
	OFFERS_ORDER, 2, {TEXTARRAYOID, TIMESTAMPTZOID}},
	/* the same before 0.4.0's declarations (no rate schedules) */
	[READ_OFFERS_UNSCHEDULED] = {"SELECT offer_key, document FROM incentives.offers"
		" WHERE " OFFERS_IN_KEYS OFFERS_ORDER, 1, {TEXTARRAYOID}},
	[READ_OFFER_VERSIONS_UNSCHEDULED] = {"SELECT offer_key, document FROM incentives.offer_versions"
		" WHERE " OFFERS_IN_KEYS
		" AND valid_from OPERATOR(pg_catalog.<=) $2"
		" AND (valid_to IS NULL OR valid_to OPERATOR(pg_catalog.>) $2)"
	OFFERS_ORDER, 2, {TEXTARRAYOID, TIMESTAMPTZOID}},
	[READ_SKUS] = {"SELECT sku_key, uom_key FROM incentives.skus"
	" WHERE sku_key OPERATOR(pg_catalog.=) ANY ($1)", 1, {TEXTARRAYOID}},
	[READ_CONVERSIONS] = {"SELECT from_uom_key, to_uom_key, factor FROM incentives.uom_conversions",
	0, {InvalidOid}},
	/*
	 * the products the offers name and their descendants (a cycle, which
	 * the tables' checks refuse, ends with UNION), each node with its
	 * parent, then each SKU window of them
	 */
	[READ_PRODUCTS] = {"WITH RECURSIVE reach(product_key) AS ("
		" SELECT p.product_key FROM incentives.products AS p"
		" WHERE p.product_key OPERATOR(pg_catalog.=) ANY ($1)"
		" UNION"
		" SELECT c.product_key FROM incentives.products AS c, reach AS r"
		" WHERE c.parent_key OPERATOR(pg_catalog.=) r.product_key)"
		" SELECT p.product_key, p.parent_key, NULL::pg_catalog.text, NULL::pg_catalog.date,"
		" NULL::pg_catalog.date"
		" FROM incentives.products AS p, reach AS r"
		" WHERE p.product_key OPERATOR(pg_catalog.=) r.product_key"
		" UNION ALL"
		" SELECT s.product_key, NULL, s.sku_key, s.start_date, s.end_date"
		" FROM incentives.sku_products AS s, reach AS r"
		" WHERE s.product_key OPERATOR(pg_catalog.=) r.product_key", 1, {TEXTARRAYOID}},
	/* the rates to or from the offers' currencies */
	[READ_EXCHANGE_RATES] = {"SELECT from_currency, to_currency, rate_date, rate"
		" FROM incentives.exchange_rates"
		" WHERE from_currency OPERATOR(pg_catalog.=) ANY ($1)"
		" OR to_currency OPERATOR(pg_catalog.=) ANY ($1)", 1, {TEXTARRAYOID}},
	[READ_PROPERTIES_ALL] = {PROPERTIES_SELECT PROPERTIES_IN_KEYS, 1, {TEXTARRAYOID}},
	[READ_PROPERTIES_SOME] = {PROPERTIES_SELECT "participant_key OPERATOR(pg_catalog.=) ANY ($2) AND "
	PROPERTIES_IN_KEYS, 2, {TEXTARRAYOID, TEXTARRAYOID}},
};

static SPIPlanPtr kept[NUM_READS];

/* Read: run read r with args (nulls as SPI wants them); rows in SPI_tuptable. */
static void
Read(KeptRead r, Datum *args, const char *nulls)
{
	if (kept[r] == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(reads[r].query, reads[r].nargs,
									   (Oid *) reads[r].argtypes);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare \"%s\": %s", reads[r].query,
				 SPI_result_code_string(SPI_result));
		kept[r] = plan;
	}
	if (SPI_execute_plan(kept[r], args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run \"%s\"", reads[r].query);
}

/* OfferKeys: offer_keys checked (no NULL) and joined into one text, or NULL. */
static char *
OfferKeys(ArrayType *offer_keys, Datum **keys, int *nkeys)
{
	bool	   *keynulls = NULL;
	StringInfoData joined;
	int			k;

	*keys = NULL;
	*nkeys = 0;
	if (offer_keys == NULL)
		return NULL;
	deconstruct_array(offer_keys, TEXTOID, -1, false, TYPALIGN_INT, keys, &keynulls, nkeys);
	initStringInfo(&joined);
	for (k = 0; k < *nkeys; k++)
	{
		if (keynulls[k])
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("offer_keys must not contain NULL")));
		}
		appendStringInfoString(&joined, TextDatumGetCString((*keys)[k]));
		appendStringInfoChar(&joined, '\037');
	}
	return joined.data;
}

/*
 * HasRateSchedules: do the extension's declarations have rate schedules
 * (incentives_internal.rate_schedule, 0.4.0 on)?  A library newer than the
 * declarations (before ALTER EXTENSION ... UPDATE) reads offers without.
 */
static bool
HasRateSchedules(void)
{
	Oid			argtypes[2] = {TEXTOID, TIMESTAMPTZOID};
	List	   *name = list_make2(makeString("incentives_internal"), makeString("rate_schedule"));

	return OidIsValid(LookupFuncName(name, 2, argtypes, true));
}

/* StoredOffer: a stored document compiled (through the offer cache). */
static const IncOffer *
StoredOffer(Jsonb *document)
{
	IncOfferError err;
	const IncOffer *offer = pg_offer_cached(document, &err);

	if (offer == NULL)
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_internal("%s", err.message),
				 errhint("The stored offer no longer passes validation; fix it with UPDATE incentives.offers.")));
	}
	return offer;
}

/*
 * AddOffer: offer into e (in context), with the rate schedule that row's
 * columns 3 and 4 hold (the SCHEDULE_COLUMNS: effective_from dates and
 * documents, the first version's date NULL), when it has one.
 */
static void
AddOffer(IncEngine *e, MemoryContext context, const IncOffer *offer, HeapTuple row,
		 TupleDesc desc)
{
	bool		dates_null;
	bool		docs_null;
	Datum		dates = (Datum) 0;
	Datum		docs = (Datum) 0;
	Datum	   *date_values;
	bool	   *date_nulls;
	Datum	   *doc_values;
	bool	   *doc_nulls;
	int			ndates;
	int			ndocs;
	int32_t    *effective_from;
	const IncOffer **versions;
	MemoryContext old;
	int			i;

	if (desc->natts < 4)
		dates_null = docs_null = true;		/* READ_*_UNSCHEDULED */
	else
	{
		dates = SPI_getbinval(row, desc, 3, &dates_null);
		docs = SPI_getbinval(row, desc, 4, &docs_null);
	}
	if (dates_null || docs_null)
	{
		old = MemoryContextSwitchTo(context);
		inc_engine_add_offer(e, offer);
		MemoryContextSwitchTo(old);
		return;
	}
	deconstruct_array(DatumGetArrayTypeP(dates), DATEOID, sizeof(DateADT), true, TYPALIGN_INT,
					  &date_values, &date_nulls, &ndates);
	deconstruct_array(DatumGetArrayTypeP(docs), JSONBOID, -1, false, TYPALIGN_INT,
					  &doc_values, &doc_nulls, &ndocs);
	if (ndates != ndocs || ndocs < 2)
		elog(ERROR, "rate schedule of offer \"%s\" has %d dates and %d documents",
			 offer->offer_key, ndates, ndocs);
	effective_from = palloc(sizeof(int32_t) * ndocs);
	versions = palloc(sizeof(IncOffer *) * ndocs);
	for (i = 0; i < ndocs; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (doc_nulls[i] || (i > 0 && date_nulls[i]))
			elog(ERROR, "rate schedule of offer \"%s\" has a NULL at %d", offer->offer_key, i);
		effective_from[i] = i > 0 ? DatumGetDateADT(date_values[i]) : PG_INT32_MIN;
		versions[i] = StoredOffer(DatumGetJsonbP(doc_values[i]));
	}
	old = MemoryContextSwitchTo(context);
	inc_engine_add_offer_schedule(e, offer, ndocs, effective_from, versions);
	MemoryContextSwitchTo(old);
}

/*
 * LoadOffers: compile the offers into e (in context); every key in keys
 * must exist (with as_of: be valid then).
 */
static void
LoadOffers(IncEngine *e, MemoryContext context, ArrayType *offer_keys, Datum *keys, int nkeys,
		   const TimestampTz *as_of)
{
	Datum		args[2];
	char		nulls[2] = {offer_keys ? ' ' : 'n', ' '};
	uint64		i;
	int			k;

	args[0] = PointerGetDatum(offer_keys);
	args[1] = as_of ? TimestampTzGetDatum(*as_of) : (Datum) 0;
	pg_offer_cache_prune();
	if (HasRateSchedules())
		Read(as_of ? READ_OFFER_VERSIONS : READ_OFFERS, args, nulls);
	else
		Read(as_of ? READ_OFFER_VERSIONS_UNSCHEDULED : READ_OFFERS_UNSCHEDULED, args, nulls);

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
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("offer \"%s\" does not exist", wanted),
					 errhint("offer_keys must name offers in incentives.offers.")));
		}
		if (!found)
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("offer \"%s\" does not exist", wanted),
					 errdetail("The calculation is as of %s.", timestamptz_to_str(*as_of)),
					 errhint("offer_keys must name offers that incentives.offer_versions shows valid at as_of.")));
		}
	}

	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		doc = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
		const IncOffer *offer;

		CHECK_FOR_INTERRUPTS();
		offer = StoredOffer(DatumGetJsonbP(doc));
		AddOffer(e, context, offer, SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
	}
	SPI_freetuptable(SPI_tuptable);
}

/* LoadReferenceData: SKU units and unit conversions into e (in context). */
static void
LoadReferenceData(IncEngine *e, MemoryContext context)
{
	const char *const *skus;
	int			nskus;
	Datum		args[1];
	MemoryContext old;
	uint64		i;

	skus = inc_engine_sku_keys(e, &nskus);
	args[0] = pg_cstring_array(skus, nskus);
	Read(READ_SKUS, args, NULL);
	old = MemoryContextSwitchTo(context);
	for (i = 0; i < SPI_processed; i++)
		inc_engine_set_sku_uom(e,
							   SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1),
							   SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
	MemoryContextSwitchTo(old);
	SPI_freetuptable(SPI_tuptable);

	Read(READ_CONVERSIONS, NULL, NULL);
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		f = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &isnull);
		IncDec		factor = pg_numeric_to_dec(f, "unit conversion factor", NULL);
		char	   *from = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char	   *to = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);

		old = MemoryContextSwitchTo(context);
		inc_engine_add_conversion(e, from, to, &factor);
		MemoryContextSwitchTo(old);
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * pg_calc_products: the catalog of products keys[0..n) and their
 * descendants (docs/reference.md, Products), in context; NULL when the
 * database has no product tables yet (declarations before 0.5.0).  SPI is
 * connected by the caller.
 */
IncProducts *
pg_calc_products(const char *const *keys, int n, MemoryContext context)
{
	Oid			nsp = get_namespace_oid("incentives", false);
	Datum		args[1];
	MemoryContext old;
	IncProducts *products;
	uint64		i;

	if (!OidIsValid(get_relname_relid("sku_products", nsp)))
		return NULL;
	args[0] = pg_cstring_array(keys, n);
	Read(READ_PRODUCTS, args, NULL);
	old = MemoryContextSwitchTo(context);
	products = inc_products_create();
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *product = SPI_getvalue(row, desc, 1);
		char	   *sku = SPI_getvalue(row, desc, 3);
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		if (sku == NULL)
			inc_products_add_node(products, product, SPI_getvalue(row, desc, 2));
		else
		{
			DateADT		start = DatumGetDateADT(SPI_getbinval(row, desc, 4, &isnull));
			Datum		end = SPI_getbinval(row, desc, 5, &isnull);

			/* a date's own day numbers: days since 2000-01-01, -infinity INT32_MIN */
			inc_products_add_window(products, sku, product, start,
									isnull ? INT32_MAX : DatumGetDateADT(end));
		}
	}
	MemoryContextSwitchTo(old);
	SPI_freetuptable(SPI_tuptable);
	return products;
}

/*
 * LoadProducts: the catalog of the products the offers of e name, when
 * they name any, into e (in context), before it is prepared.
 */
static void
LoadProducts(IncEngine *e, MemoryContext context)
{
	const char *const *keys;
	int			nkeys;
	IncProducts *products;

	keys = inc_engine_product_keys(e, &nkeys);
	if (nkeys == 0)
		return;
	products = pg_calc_products(keys, nkeys, context);
	if (products)
		inc_engine_set_products(e, products);
}

/*
 * LoadExchangeRates: the exchange rates to or from the currencies of the
 * offers of e (docs/reference.md, Currencies), when one has a currency
 * and the database has the table (declarations before 0.5.0 do not), into
 * e (in context), before it is prepared.
 */
static void
LoadExchangeRates(IncEngine *e, MemoryContext context)
{
	const char **currencies;
	int			ncurrencies = 0;
	int			noffers = inc_engine_noffers(e);
	Datum		args[1];
	MemoryContext old;
	uint64		i;
	int			o;

	currencies = palloc(sizeof(char *) * Max(noffers, 1));
	for (o = 0; o < noffers; o++)
	{
		const char *currency = inc_engine_offer(e, o)->currency;

		if (currency != NULL)
			currencies[ncurrencies++] = currency;
	}
	if (ncurrencies == 0 ||
		!OidIsValid(get_relname_relid("exchange_rates", get_namespace_oid("incentives", false))))
	{
		pfree(currencies);
		return;
	}
	args[0] = pg_cstring_array(currencies, ncurrencies);
	pfree(currencies);
	Read(READ_EXCHANGE_RATES, args, NULL);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		DateADT		rate_date = DatumGetDateADT(SPI_getbinval(row, desc, 3, &isnull));
		IncDec		rate = pg_numeric_to_dec(SPI_getbinval(row, desc, 4, &isnull),
											 "exchange rate", NULL);
		char	   *from = SPI_getvalue(row, desc, 1);
		char	   *to = SPI_getvalue(row, desc, 2);

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(context);
		inc_engine_add_exchange_rate(e, from, to, rate_date, rate);
		MemoryContextSwitchTo(old);
	}
	SPI_freetuptable(SPI_tuptable);
}

/* pg_calc_engine: the cached engine for this call, or a new one. */
void
pg_calc_engine(ArrayType *offer_keys, const TimestampTz *as_of, CalcEngine *out)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum	   *keys;
	int			nkeys;
	char	   *key = OfferKeys(offer_keys, &keys, &nkeys);
	bool		cacheable = as_of == NULL && pg_engine_cache_usable();
	EngineEntry *entry = cacheable ? pg_engine_cache_lookup(key) : NULL;
	MemoryContext context;
	IncEngine  *e;

	if (entry)
	{
		inc_engine_clear_position(entry->engine);	/* a failed call's */
		out->engine = entry->engine;
		out->context = entry->context;
		out->host = &entry->host;
		return;
	}

	/* built under the caller's memory, moved to the cache when complete */
	pg_engine_cache_reset();	/* its offers may go with the offer cache */
	context = AllocSetContextCreate(caller, "incentives engine", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(context);
	e = inc_engine_create();
	MemoryContextSwitchTo(caller);
	LoadOffers(e, context, offer_keys, keys, nkeys, as_of);
	LoadProducts(e, context);
	LoadExchangeRates(e, context);
	MemoryContextSwitchTo(context);
	inc_engine_prepare(e);
	MemoryContextSwitchTo(caller);
	LoadReferenceData(e, context);
	MemoryContextSwitchTo(caller);

	out->engine = e;
	out->context = context;
	if (cacheable)
	{
		entry = pg_engine_cache_store(context, e, key);
		out->host = &entry->host;
	}
	else
		out->host = MemoryContextAllocZero(context, sizeof(void *));
}

/* ---- properties ---------------------------------------------------------- */

/* A property given in the call's properties object. */
typedef struct CallProperty
{
	bool		is_number;
	IncDec		value;
} CallProperty;

struct CalcProperties
{
	IncStrMap  *call;			/* key -> CallProperty * */
	IncStrMap  *stored;			/* "participant\037key" -> IncDec * */
};

/* LoadCallProperties: the call's properties object, by key. */
static void
LoadCallProperties(CalcProperties *props, Jsonb *properties)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	props->call = inc_strmap_create();
	if (properties == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(properties))
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("properties must be a JSON object, e.g. '{\"business_plan_achieved\": 90}'")));
	}

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

/* StoredKey: "participant<US>property" into buf (cap bytes) or palloc'd. */
static char *
StoredKey(const char *participant, const char *property, char *buf, size_t cap)
{
	size_t		lp = strlen(participant),
				lk = strlen(property);
	char	   *key = lp + lk + 2 <= cap ? buf : palloc(lp + lk + 2);

	memcpy(key, participant, lp);
	key[lp] = '\037';
	memcpy(key + lp + 1, property, lk + 1);
	return key;
}

/*
 * LoadStoredProperties: incentives.participant_properties of the used
 * keys, of the n participants (and groups) given, or of everyone.
 */
static void
LoadStoredProperties(CalcProperties *props, IncEngine *e, const char *const *participants,
					 int n)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum		args[2];
	const char *const *keys;
	int			nkeys;
	uint64		i;

	keys = inc_engine_property_keys(e, &nkeys);
	if (nkeys == 0)
		return;
	args[0] = pg_cstring_array(keys, nkeys);
	if (participants)
	{
		args[1] = pg_cstring_array(participants, n);
		Read(READ_PROPERTIES_SOME, args, NULL);
	}
	else
		Read(READ_PROPERTIES_ALL, args, NULL);
	MemoryContextSwitchTo(caller);
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
		*inc_strmap_slot(props->stored, StoredKey(participant, property, NULL, 0)) = value;
	}
	SPI_freetuptable(SPI_tuptable);
}

/* pg_calc_properties: the call's and the stored property values. */
CalcProperties *
pg_calc_properties(IncEngine *engine, Jsonb *properties, const char *const *participants, int n)
{
	CalcProperties *props = palloc0(sizeof(CalcProperties));

	LoadCallProperties(props, properties);
	props->stored = inc_strmap_create();
	LoadStoredProperties(props, engine, participants, n);
	return props;
}

/* pg_calc_properties_hidden: the stored values of keys the caller cannot see. */
void
pg_calc_properties_hidden(CalcProperties *props, IncEngine *engine,
						  const char *const *keys, int n)
{
	PgOwnerRead owner;

	if (n == 0 || !inc_engine_needs_properties(engine))
		return;
	pg_owner_read_begin(get_relname_relid("participant_properties",
										  get_namespace_oid("incentives", false)), &owner);
	LoadStoredProperties(props, engine, keys, n);
	pg_owner_read_end(&owner);
}

/* pg_calc_property: the call's value first, then the stored one. */
IncPropStatus
pg_calc_property(void *ctx, const char *participant_key, const char *property_key, IncDec *value)
{
	CalcProperties *props = ctx;
	CallProperty *call = inc_strmap_get(props->call, property_key);
	IncDec	   *stored;
	char		buf[256];

	if (call)
	{
		if (!call->is_number)
			return INC_PROP_NOT_NUMBER;
		*value = call->value;
		return INC_PROP_FOUND;
	}
	stored = inc_strmap_get(props->stored, StoredKey(participant_key, property_key,
													 buf, sizeof(buf)));
	if (stored == NULL)
		return INC_PROP_MISSING;
	*value = *stored;
	return INC_PROP_FOUND;
}

/* pg_calc_tick: interrupts are checked per transaction calculated. */
void
pg_calc_tick(void)
{
	CHECK_FOR_INTERRUPTS();
}

/* pg_calc_error_context: which transaction of which participant. */
void
pg_calc_error_context(void *arg)
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
