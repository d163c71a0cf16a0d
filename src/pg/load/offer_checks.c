/*
 * offer_checks.c
 *    What a written offer document is checked for besides its validity
 *    (docs/reference.md, Strict offers and Offer warnings): the setting
 *    incentives.unknown_offer_fields, the check of a document being
 *    written (unknown fields refused or reported, a percent above 100
 *    refused, the document-only findings raised as WARNINGs) with the
 *    validation trigger on incentives.offers and offer_error(), and the
 *    functions the SQL layer asks: offer_findings, offer_references,
 *    offer_fields, unknown_fields, suggested_key (the rule of every "did
 *    you mean" of a key, core/util/names.h) and date_problem (a date as
 *    the parser reads one).  A document being written is also judged
 *    against the book (period_outside_book): the trigger asks
 *    incentives_internal.periods_outside_book, which offer_warnings lists
 *    too.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "core/offer/offer_fields.h"
#include "core/util/names.h"
#include "core/products/select.h"
#include "pg/base/error_context.h"
#include "pg/load/offer_checks.h"
#include "pg/base/convert.h"
#include "pg/load/offer_load.h"
#include "pg/load/calc_load.h"

/* incentives.unknown_offer_fields: 'error' (the default) or 'warning'. */
static const struct config_enum_entry UnknownFieldsOptions[] = {
	{"error", INC_UNKNOWN_REFUSE, false},
	{"warning", INC_UNKNOWN_REPORT, false},
	{NULL, 0, false}
};

static int	UnknownOfferFields = INC_UNKNOWN_REFUSE;

void
pg_offer_checks_init(void)
{
	DefineCustomEnumVariable("incentives.unknown_offer_fields",
							 "What a field that no object of an offer document defines does when the document is written.",
							 "error refuses the document (SQLSTATE 22023); warning stores it and reports each such field (incentives.offer_warnings, code unknown_field).",
							 &UnknownOfferFields, INC_UNKNOWN_REFUSE, UnknownFieldsOptions,
							 PGC_USERSET, 0, NULL, NULL, NULL);
}

typedef struct WriteCheck
{
	const char *offer_key;		/* of the new document (NULL: none) */
	Jsonb	   *stored;			/* the stored document, when known */
	bool		loaded;			/* stored_fields and restoring filled */
	bool		restoring;		/* a restore session: everything is stored */
	List	   *stored_fields;	/* PgOfferFinding * of the stored document:
								 * the fields a write may keep */
	List	   *findings;		/* PgOfferFinding * of the new document */
} WriteCheck;

/* The offer_key string of document, or NULL. */
static char *
DocumentKey(Jsonb *document)
{
	JsonbValue	buf;
	JsonbValue *v;

	if (!JB_ROOT_IS_OBJECT(document))
		return NULL;
	v = getKeyJsonValueFromContainer(&document->root, "offer_key", strlen("offer_key"), &buf);
	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/*
 * StoredDocument: whether the session is a restore
 * (incentives_internal.restoring(): pg_dump's output turns row_security
 * and check_function_bodies off), and the latest stored document of
 * offer_key (NULL: none, or offer_key NULL).
 */
static Jsonb *
StoredDocument(const char *offer_key, bool *restoring)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	char		nulls[1];
	MemoryContext caller = CurrentMemoryContext;
	Jsonb	   *stored = NULL;
	bool		isnull;
	Datum		d;

	args[0] = offer_key ? CStringGetTextDatum(offer_key) : (Datum) 0;
	nulls[0] = offer_key ? ' ' : 'n';
	SPI_connect();
	if (SPI_execute_with_args("SELECT incentives_internal.restoring(), COALESCE("
							  "(SELECT o.document FROM incentives.offers AS o"
							  "  WHERE o.offer_key OPERATOR(pg_catalog.=) $1),"
							  "(SELECT v.document FROM incentives.offer_versions AS v"
							  "  WHERE v.offer_key OPERATOR(pg_catalog.=) $1"
							  "  ORDER BY v.version DESC LIMIT 1))",
							  1, argtypes, args, nulls, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "reading the stored offer \"%s\" failed", offer_key ? offer_key : "");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	*restoring = !isnull && DatumGetBool(d);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	if (!isnull)
	{
		MemoryContext spi = MemoryContextSwitchTo(caller);

		stored = DatumGetJsonbPCopy(d);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	return stored;
}

/* The stored document's findings (read when first needed): what a write may keep. */
static void
LoadStoredFields(WriteCheck *wc)
{
	IncOfferError err;
	Jsonb	   *latest;

	wc->loaded = true;
	latest = StoredDocument(wc->offer_key, &wc->restoring);
	if (wc->stored == NULL)
		wc->stored = latest;
	if (wc->stored != NULL && !wc->restoring)
	{
		bool		valid;

		wc->stored_fields = pg_offer_findings(wc->stored, &err, &valid);
	}
}

/* IncOfferChecks.stored: the stored document has value at path. */
static bool
IsStored(void *ctx, const char *path, const char *value)
{
	WriteCheck *wc = ctx;
	ListCell   *lc;

	if (!wc->loaded)
		LoadStoredFields(wc);
	if (wc->restoring)
		return true;
	foreach(lc, wc->stored_fields)
	{
		PgOfferFinding *f = lfirst(lc);

		if (strcmp(f->path, path) == 0 && strcmp(f->value, value) == 0)
			return true;
	}
	return false;
}

static void
NoteFinding(void *ctx, const char *path, const char *code, const char *message,
			const char *value)
{
	WriteCheck *wc = ctx;
	PgOfferFinding *f = palloc(sizeof(PgOfferFinding));

	f->path = pstrdup(path);
	f->code = pstrdup(code);
	f->message = pstrdup(message);
	f->value = pstrdup(value);
	wc->findings = lappend(wc->findings, f);
}

/*
 * HasBookCheck: do the extension's declarations have
 * incentives_internal.periods_outside_book (0.5.0 on)?  A library newer
 * than the declarations (before ALTER EXTENSION ... UPDATE) skips it.
 */
static bool
HasBookCheck(void)
{
	Oid			argtypes[3] = {REGCLASSOID, JSONBOID, TEXTOID};
	List	   *name = list_make2(makeString("incentives_internal"),
								  makeString("periods_outside_book"));

	return OidIsValid(LookupFuncName(name, 3, argtypes, true));
}

/*
 * WarnBookFindings: raise as WARNINGs what document says against the book
 * (the stored offers but the one of except_key, an UPDATE's old key, and
 * incentives.transactions): its periods outside the dates of every other
 * offer (incentives_internal.periods_outside_book, the rule
 * offer_warnings lists as period_outside_book; docs/reference.md, Offer
 * warnings).  Not in a restore session, whose offers and transactions
 * arrive in any order.  The read is not read-only, so the offers written
 * before this one by the same statement count.
 */
static void
WarnBookFindings(Jsonb *document, const char *offer_key, const char *except_key)
{
	Oid			argtypes[2] = {JSONBOID, TEXTOID};
	Datum		args[2];
	char		nulls[2];
	uint64		i;

	if (!HasBookCheck())
		return;
	args[0] = JsonbPGetDatum(document);
	nulls[0] = ' ';
	args[1] = except_key ? CStringGetTextDatum(except_key) : (Datum) 0;
	nulls[1] = except_key ? ' ' : 'n';
	SPI_connect();
	if (SPI_execute_with_args("SELECT f.message FROM incentives_internal.periods_outside_book("
							  "'incentives.transactions', $1, $2) AS f"
							  " WHERE NOT incentives_internal.restoring()",
							  2, argtypes, args, nulls, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "checking the offer \"%s\" against the book failed", offer_key);
	for (i = 0; i < SPI_processed; i++)
	{
		char	   *message = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		ereport(WARNING,
				(errmsg("offer \"%s\": %s", offer_key, message),
				 errdetail("incentives.offer_warnings lists it with code period_outside_book.")));
	}
	SPI_finish();
}

/*
 * pg_offer_write_error: the error message for writing document over
 * stored (the row's old document, or NULL: the offer's stored version is
 * read when needed), or NULL when it may be written; with warn, its
 * findings are then raised as WARNINGs, and so is what it says against
 * the book (WarnBookFindings, over the other stored offers than stored's).
 *
 * A field the stored document already has, unchanged, never makes a
 * write fail: the stored document is the row's old one for an UPDATE,
 * else the offer's latest stored version (incentives.offers, else
 * incentives.offer_versions: an offer deleted and inserted again keeps its
 * history), read only when the new document has a field to excuse.  In a
 * restore session (incentives_internal.restoring(); a parallel restore
 * may write the offers before their versions) every field is the stored
 * document's: reported, never refused.
 */
char *
pg_offer_write_error(Jsonb *document, Jsonb *stored, bool warn)
{
	MemoryContext scratch = AllocSetContextCreate(CurrentMemoryContext,
												  "incentives offer check",
												  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(scratch);
	WriteCheck	wc = {0};
	IncOfferChecks checks = {(IncUnknownFields) UnknownOfferFields, true, IsStored,
	NoteFinding, &wc};
	IncOfferError err;
	char	   *message = NULL;
	ListCell   *lc;

	wc.offer_key = DocumentKey(document);
	wc.stored = stored;
	if (pg_offer_from_jsonb_checked(document, &checks, &err) == NULL)
		message = MemoryContextStrdup(old, err.message);
	else if (warn)
	{
		foreach(lc, wc.findings)
		{
			PgOfferFinding *f = lfirst(lc);

			ereport(WARNING,
					(errmsg("offer \"%s\": %s", wc.offer_key, f->message),
					 errdetail("incentives.offer_warnings lists it with code %s.", f->code)));
		}
		WarnBookFindings(document, wc.offer_key, stored ? DocumentKey(stored) : NULL);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(scratch);
	return message;
}

/* pg_offer_findings: the findings of a stored document, read leniently. */
List *
pg_offer_findings(Jsonb *document, IncOfferError *err, bool *valid)
{
	WriteCheck	wc = {0};
	IncOfferChecks checks = {INC_UNKNOWN_REPORT, false, NULL, NoteFinding, &wc};

	*valid = pg_offer_from_jsonb_checked(document, &checks, err) != NULL;
	return wc.findings;
}

PG_FUNCTION_INFO_V1(incentives_offer_findings);

/*
 * incentives_offer_findings: offer_findings(document jsonb) RETURNS TABLE
 * (path text, code text, message text): the document-only findings of a
 * stored offer (unknown_field, implausible_rate); an invalid document is
 * an error (22023).
 */
Datum
incentives_offer_findings(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	IncOfferError err;
	bool		valid;
	List	   *findings;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	findings = pg_offer_findings(PG_GETARG_JSONB_P(0), &err, &valid);
	if (!valid)
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_internal("%s", err.message)));
	}
	foreach(lc, findings)
	{
		PgOfferFinding *f = lfirst(lc);
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(f->path);
		values[1] = CStringGetTextDatum(f->code);
		values[2] = CStringGetTextDatum(f->message);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

static const char *const RefKindNames[] = {
	[INC_REF_SKU] = "sku",
	[INC_REF_TRANSACTION_TYPE] = "transaction_type",
	[INC_REF_PERIOD] = "period",
	[INC_REF_PRODUCT] = "product",
	[INC_REF_EXCLUDED_SKU] = "excluded_sku",
	[INC_REF_EXCLUDED_PRODUCT] = "excluded_product"
};

/* One reference into the tuplestore, in offer_references' columns. */
static void
EmitReference(void *ctx, const IncOfferRef *ref)
{
	ReturnSetInfo *rsinfo = ctx;
	Datum		values[11];
	bool		nulls[11];

	values[0] = pg_text_or_null(ref->path, &nulls[0]);
	values[1] = pg_text_or_null(RefKindNames[ref->kind], &nulls[1]);
	values[2] = pg_text_or_null(ref->role, &nulls[2]);
	values[3] = pg_text_or_null(ref->sku_key, &nulls[3]);
	values[4] = pg_text_or_null(ref->transaction_type, &nulls[4]);
	values[5] = pg_text_or_null(ref->period ? ref->period->key : NULL, &nulls[5]);
	nulls[6] = nulls[7] = ref->period == NULL;
	values[6] = ref->period ? DateADTGetDatum(ref->from) : (Datum) 0;
	values[7] = ref->period ? DateADTGetDatum(ref->to) : (Datum) 0;
	values[8] = pg_text_or_null(ref->from_uom, &nulls[8]);
	values[9] = BoolGetDatum(ref->per_unit);
	nulls[9] = false;
	values[10] = pg_text_or_null(ref->product_key, &nulls[10]);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* ProductKey: an IncOfferRefFn adding a reference's product key to the List *ctx. */
static void
ProductKey(void *ctx, const IncOfferRef *ref)
{
	List	  **keys = ctx;

	if (ref->product_key != NULL)
		*keys = lappend(*keys, (void *) ref->product_key);
}

/*
 * OfferProducts: the catalog of the products offer names (docs/reference.md,
 * Products), in the current memory; NULL when it names none.
 */
static IncProducts *
OfferProducts(const IncOffer *offer)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *list = NIL;
	const char **keys;
	IncProducts *products;
	ListCell   *lc;
	int			n = 0;

	inc_offer_references(offer, ProductKey, &list);
	if (list == NIL)
		return NULL;
	keys = palloc(sizeof(char *) * list_length(list));
	foreach(lc, list)
		keys[n++] = lfirst(lc);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	products = pg_calc_products(keys, n, caller);
	SPI_finish();
	return products;
}

PG_FUNCTION_INFO_V1(incentives_offer_references);

/*
 * incentives_offer_references: offer_references(document jsonb) RETURNS
 * TABLE (path, kind, role, sku_key, transaction_type, period_key,
 * start_date, end_date, from_uom, per_unit, product_key): what the offer reads
 * (offer.h, inc_offer_references_through), compiled through the offer
 * cache, with the SKUs it reads through its products in the catalog.
 */
Datum
incentives_offer_references(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	IncOfferError err;
	const IncOffer *offer;

	InitMaterializedSRF(fcinfo, 0);
	offer = pg_offer_cached(PG_GETARG_JSONB_P(0), &err);
	if (offer == NULL)
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_internal("%s", err.message)));
	}
	inc_offer_references_through(offer, OfferProducts(offer), EmitReference, rsinfo);
	return (Datum) 0;
}

/* What a tie of a standard entry is reported with (Tie). */
typedef struct Ties
{
	ReturnSetInfo *rsinfo;
	const IncPeriod *period;	/* the entry's */
	int			entry;
} Ties;

/* NotReported: inc_select_entry's IncSelectFn when only its ties are wanted. */
static void
NotReported(void *ctx, const char *sku_key, int32_t from, int32_t to, int rate,
			const char *product_key)
{
}

/* Tie: one tie of a standard entry on the days of its period, as a row. */
static void
Tie(void *ctx, const char *sku_key, int32_t from, int32_t to, const char *taken,
	const char *other, int distance)
{
	Ties	   *t = ctx;
	Datum		values[7];
	bool		nulls[7] = {false, false, false, false, false, false, false};
	char		path[64];

	if (from < t->period->start_date)
		from = t->period->start_date;
	if (to > t->period->end_date)
		to = t->period->end_date;
	if (from > to)
		return;
	snprintf(path, sizeof(path), "incentives[%d]", t->entry);
	values[0] = CStringGetTextDatum(path);
	values[1] = CStringGetTextDatum(sku_key);
	values[2] = CStringGetTextDatum(taken);
	values[3] = CStringGetTextDatum(other);
	values[4] = Int32GetDatum(distance);
	values[5] = DateADTGetDatum(from);
	values[6] = DateADTGetDatum(to);
	tuplestore_putvalues(t->rsinfo->setResult, t->rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(incentives_offer_product_ties);

/*
 * incentives_offer_product_ties: offer_product_ties(document jsonb) RETURNS
 * TABLE (path, sku_key, taken, other, distance, start_date, end_date):
 * where a standard entry's SKU is in two of its listed products at the
 * same nearest distance on days of the entry's period, the product whose
 * rate applies (listed first) and the other (docs/reference.md, Products).
 */
Datum
incentives_offer_product_ties(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	IncOfferError err;
	const IncOffer *offer;
	IncProducts *products;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	offer = pg_offer_cached(PG_GETARG_JSONB_P(0), &err);
	if (offer == NULL)
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_internal("%s", err.message)));
	}
	products = OfferProducts(offer);
	if (products == NULL || offer->strategy != INC_STANDARD)
		return (Datum) 0;
	for (i = 0; i < offer->nentries; i++)
	{
		Ties		t = {rsinfo, &offer->periods[offer->entries[i].period], i};

		CHECK_FOR_INTERRUPTS();
		inc_select_entry(products, &offer->entries[i], NotReported, Tie, &t);
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(incentives_offer_fields);

/*
 * incentives_offer_fields: offer_fields() RETURNS TABLE (object text,
 * field text): every object of an offer document and of a calculation
 * request with its own fields, in the order of the core's table
 * (offer_fields.h), which the parser checks documents against.
 */
Datum
incentives_offer_fields(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			k,
				i;

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < INC_NOBJECT_KINDS; k++)
		for (i = 0; inc_object_fields[k].fields[i] != NULL; i++)
		{
			Datum		values[2];
			bool		nulls[2] = {false, false};

			values[0] = CStringGetTextDatum(inc_object_fields[k].name);
			values[1] = CStringGetTextDatum(inc_object_fields[k].fields[i]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(incentives_unknown_fields);

/*
 * incentives_unknown_fields: unknown_fields(object jsonb, kind text)
 * RETURNS TABLE (field text, problem text): each field of the JSON object
 * that an object of kind (an object name of offer_fields()) does not
 * define, with "is not a field of OBJECT" and the advice, in the object's
 * order; nothing when object is not a JSON object.  The request document
 * of incentives.calculate(jsonb) is checked with it.
 */
Datum
incentives_unknown_fields(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Jsonb	   *object = PG_GETARG_JSONB_P(0);
	char	   *kind_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	int			kind = -1;
	int			k;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			depth = 0;

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < INC_NOBJECT_KINDS; k++)
		if (strcmp(inc_object_fields[k].name, kind_name) == 0)
			kind = k;
	if (kind < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is not an object of an offer or request document", kind_name)));
	if (!JB_ROOT_IS_OBJECT(object))
		return (Datum) 0;
	it = JsonbIteratorInit(&object->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		CHECK_FOR_INTERRUPTS();
		if (tok == WJB_BEGIN_OBJECT || tok == WJB_BEGIN_ARRAY)
			depth++;
		else if (tok == WJB_END_OBJECT || tok == WJB_END_ARRAY)
			depth--;
		else if (tok == WJB_KEY && depth == 1)
		{
			char	   *name = pnstrdup(v.val.string.val, v.val.string.len);
			char		advice[256];
			Datum		values[2];
			bool		nulls[2] = {false, false};

			if (inc_object_field_known((IncObjectKind) kind, name))
				continue;
			inc_object_field_advice((IncObjectKind) kind, inc_object_fields[kind].family,
									name, advice, sizeof(advice));
			values[0] = CStringGetTextDatum(name);
			values[1] = CStringGetTextDatum(psprintf("is not a field of %s%s%s",
													 inc_object_fields[kind].path,
													 advice[0] ? "; " : "", advice));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(incentives_suggested_key);

/*
 * incentives_suggested_key: suggested_key(key text, candidates text[]) ->
 * text: the candidate key was probably meant to be, by the rule of every
 * suggestion (core/util/names.h: the same but for case, separators,
 * look-alike digits or a plural s; an abbreviation; within 1 or 2 edits;
 * of candidates as good, the one names.h prefers); NULL when none fits.  The candidates are read in
 * place, one at a time, NULLs skipped; only those whose length is within
 * reach of the key's are compared character by character.
 */
Datum
incentives_suggested_key(PG_FUNCTION_ARGS)
{
	text	   *key = PG_GETARG_TEXT_PP(0);
	ArrayType  *candidates = PG_GETARG_ARRAYTYPE_P(1);
	ArrayIterator it;
	IncNameSearch search;
	Datum		candidate;
	bool		isnull;
	text	   *best = NULL;

	inc_name_search_begin(&search, VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key));
	it = array_create_iterator(candidates, 0, NULL);
	while (array_iterate(it, &candidate, &isnull))
	{
		text	   *t;

		CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;
		t = DatumGetTextPP(candidate);
		if (inc_name_search_consider(&search, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)))
			best = t;
	}
	array_free_iterator(it);
	if (best == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text_with_len(VARDATA_ANY(best), VARSIZE_ANY_EXHDR(best)));
}

PG_FUNCTION_INFO_V1(incentives_date_problem);

/*
 * incentives_date_problem: date_problem(value text) -> text: NULL when
 * value is a date as an offer document writes one ("YYYY-MM-DD", a real
 * calendar day of years 1 to 9999), else the problem in the parser's
 * words (core/offer/offer.h, inc_date_problem): "must be a date
 * (YYYY-MM-DD)", or "\"2026-02-30\" is not a valid calendar date
 * (February 2026 has 28 days)".
 */
Datum
incentives_date_problem(PG_FUNCTION_ARGS)
{
	char	   *value = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char		problem[96];
	int32_t		days;

	if (inc_date_problem(value, &days, problem, sizeof(problem)) == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(problem));
}

PG_FUNCTION_INFO_V1(incentives_offer_error);

/*
 * incentives_offer_error: offer_error(document jsonb) -> text.  NULL when
 * the document may be stored, else the message storing it would raise
 * (over the offer's stored version, if any: offer_checks.c).
 */
Datum
incentives_offer_error(PG_FUNCTION_ARGS)
{
	char	   *message = pg_offer_write_error(PG_GETARG_JSONB_P(0), NULL, false);

	if (message == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(message));
}

PG_FUNCTION_INFO_V1(incentives_offers_validate);

/*
 * incentives_offers_validate: BEFORE INSERT OR UPDATE row trigger on
 * incentives.offers; raises 22023 with the offer and JSON path of the
 * first fault, so an invalid offer never enters the table, and the
 * document's findings as WARNINGs (offer_checks.c: an UPDATE is checked
 * over the row's old document).
 */
Datum
incentives_offers_validate(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuple;
	TupleDesc	tupdesc;
	int			attnum;
	bool		isnull;
	Datum		document;
	char	   *message;

	tuple = pg_row_trigger_tuple(fcinfo, false, "incentives.offers_validate");
	tupdesc = RelationGetDescr(trigdata->tg_relation);
	attnum = SPI_fnumber(tupdesc, "document");
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("relation \"%s\" has no column \"document\"",
						RelationGetRelationName(trigdata->tg_relation))));

	document = heap_getattr(tuple, attnum, tupdesc, &isnull);
	if (!isnull)
	{
		Jsonb	   *stored = NULL;

		if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		{
			bool		old_null;
			Datum		old = heap_getattr(trigdata->tg_trigtuple, attnum, tupdesc, &old_null);

			if (!old_null)
				stored = DatumGetJsonbP(old);
		}
		message = pg_offer_write_error(DatumGetJsonbP(document), stored, true);
		if (message)
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg_internal("%s", message)));
		}
	}
	return PointerGetDatum(tuple);
}
