/*
 * enrollments.c
 *    incentives.enrollments in and out of the engine (docs/reference.md,
 *    Enrollment): the windows a calculation hands the engine through its
 *    IncEnrollmentFn, and the trigger that refuses two overlapping windows
 *    of one participant and offer.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "catalog/namespace.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "core/util/strmap.h"
#include "pg/base/convert.h"
#include "pg/base/error_context.h"
#include "pg/load/enrollments.h"
#include "pg/load/participant_groups.h"
#include "pg/load/stored_tables.h"

/* The windows of one (participant, offer), growing as rows are read. */
typedef struct WindowList
{
	int			n;
	int			cap;
	IncWindow  *windows;
} WindowList;

static char *
PairKey(const char *participant, const char *offer)
{
	return psprintf("%s\037%s", participant, offer);
}

static void LoadWindows(PgEnrollments *en, const IncEngine *e, const char *participant_key,
						const char *const *participants, int n, Jsonb *request);

/*
 * pg_enrollments_load: the windows of e's "required" offers, for the n
 * participants given (participant_key's own unit: itself, or the members
 * of its groups; NULL: everyone), plus the request's (may be NULL: a
 * jsonb array of {participant_key?, offer_key, start_date, end_date?}; a
 * missing participant_key is participant_key's).  Must run inside SPI.
 *
 * Only the offers whose enrollment is "required" are looked up (none: no
 * query at all), with the caller's rights and snapshot like every other
 * read of a calculation; the request's array is already validated by
 * incentives.calculate.  The windows are kept per (participant, offer) in
 * start_date order in the call's memory.  A database whose extension is
 * at a version without the table (this library loaded before ALTER
 * EXTENSION ... UPDATE) has no stored windows: nobody is enrolled there.
 */
void
pg_enrollments_load(PgEnrollments *en, const IncEngine *e, const char *participant_key,
					const char *const *participants, int n, Jsonb *request)
{
	en->pairs = inc_strmap_create();
	LoadWindows(en, e, participant_key, participants, n, request);
}

/* pg_enrollments_hidden: add the windows of keys the caller cannot see. */
void
pg_enrollments_hidden(PgEnrollments *en, const IncEngine *e, const char *const *keys, int n)
{
	PgOwnerRead owner;
	int			noffers;

	(void) inc_engine_enrollment_offer_keys(e, &noffers);
	if (n == 0 || noffers == 0 || !pg_stored_table_exists("enrollments"))
		return;
	pg_owner_read_begin(get_relname_relid("enrollments", get_namespace_oid("incentives", false)),
						&owner);
	LoadWindows(en, e, NULL, keys, n, NULL);
	pg_owner_read_end(&owner);
}

/* LoadWindows: pg_enrollments_load's read, into en->pairs. */
static void
LoadWindows(PgEnrollments *en, const IncEngine *e, const char *participant_key,
			const char *const *participants, int n, Jsonb *request)
{
	Oid			argtypes[4] = {TEXTARRAYOID, TEXTOID, JSONBOID, TEXTARRAYOID};
	Datum		args[4];
	char		nulls[4] = {' ', 'n', 'n', 'n'};
	const char *const *offers;
	int			noffers;
	uint64		i;

	offers = inc_engine_enrollment_offer_keys(e, &noffers);
	if (noffers == 0)
		return;
	args[0] = pg_cstring_array(offers, noffers);
	if (participant_key)
	{
		args[1] = CStringGetTextDatum(participant_key);
		nulls[1] = ' ';
	}
	if (request)
	{
		args[2] = JsonbPGetDatum(request);
		nulls[2] = ' ';
	}
	if (participants)
	{
		args[3] = pg_cstring_array(participants, n);
		nulls[3] = ' ';
	}
	if (SPI_execute_with_args(psprintf("SELECT w.participant_key, w.offer_key, w.start_date, w.end_date"
									   " FROM (%s"
									   "       SELECT COALESCE(r.w OPERATOR(pg_catalog.->>) 'participant_key', $2) AS participant_key,"
									   "              r.w OPERATOR(pg_catalog.->>) 'offer_key' AS offer_key,"
									   "              (r.w OPERATOR(pg_catalog.->>) 'start_date')::pg_catalog.date AS start_date,"
									   "              (r.w OPERATOR(pg_catalog.->>) 'end_date')::pg_catalog.date AS end_date"
									   "         FROM pg_catalog.jsonb_array_elements(COALESCE($3, '[]')) AS r(w)) AS w"
									   " WHERE w.offer_key OPERATOR(pg_catalog.=) ANY ($1)"
									   "   AND ($4 IS NULL OR w.participant_key OPERATOR(pg_catalog.=) ANY ($4))"
									   " ORDER BY w.participant_key, w.offer_key, w.start_date",
									   pg_stored_table_exists("enrollments") ?
									   "SELECT n.participant_key, n.offer_key, n.start_date, n.end_date"
									   "  FROM incentives.enrollments AS n"
									   " WHERE n.offer_key OPERATOR(pg_catalog.=) ANY ($1)"
									   "   AND ($4 IS NULL OR n.participant_key OPERATOR(pg_catalog.=) ANY ($4))"
									   " UNION ALL" : ""),
							  4, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read incentives.enrollments");

	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *participant = SPI_getvalue(tuple, desc, 1);
		char	   *offer = SPI_getvalue(tuple, desc, 2);
		bool		start_null,
					end_null;
		Datum		start = SPI_getbinval(tuple, desc, 3, &start_null);
		Datum		end = SPI_getbinval(tuple, desc, 4, &end_null);
		void	  **slot;
		WindowList *list;

		if (participant == NULL || offer == NULL || start_null)
			continue;			/* the table forbids it; a request is validated */
		slot = inc_strmap_slot(en->pairs, PairKey(participant, offer));
		if (*slot == NULL)
			*slot = palloc0(sizeof(WindowList));
		list = *slot;
		if (list->n == list->cap)
		{
			list->cap = list->cap ? list->cap * 2 : 4;
			list->windows = list->windows ?
				repalloc(list->windows, sizeof(IncWindow) * list->cap) :
				palloc(sizeof(IncWindow) * list->cap);
		}
		list->windows[list->n].start_date = DatumGetDateADT(start);
		list->windows[list->n].open_ended = end_null;
		list->windows[list->n].end_date = end_null ? 0 : DatumGetDateADT(end);
		list->n++;
	}
	SPI_freetuptable(SPI_tuptable);
}

/* pg_enrollments_lookup: the IncEnrollmentFn over what pg_enrollments_load read. */
int
pg_enrollments_lookup(void *ctx, const char *participant_key, const char *offer_key,
					  const IncWindow **windows)
{
	PgEnrollments *en = ctx;
	char	   *key = PairKey(participant_key, offer_key);
	WindowList *list = inc_strmap_get(en->pairs, key);

	pfree(key);
	*windows = list ? list->windows : NULL;
	return list ? list->n : 0;
}

PG_FUNCTION_INFO_V1(incentives_enrollments_check);

/*
 * incentives_enrollments_check: AFTER INSERT OR UPDATE row trigger on
 * incentives.enrollments: another window of the row's participant and
 * offer that overlaps it (both ends inclusive, a NULL end_date never ends)
 * is an error (23P01) naming the participant, the offer and both windows.
 * A transaction-level advisory lock on the pair makes two sessions adding
 * windows of one pair take turns; the search reads with the latest
 * snapshot, so under REPEATABLE READ or SERIALIZABLE too a window
 * committed by the session it waited for is seen (as ri_triggers.c does).
 */
Datum
incentives_enrollments_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	HeapTuple	tuple;
	TupleDesc	desc;
	bool		isnull,
				end_null;
	char	   *participant,
			   *offer;
	Datum		start,
				end;
	Oid			argtypes[4] = {TEXTOID, TEXTOID, DATEOID, DATEOID};
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	char	   *pair;
	SPIPlanPtr	plan;
	int			rc;

	tuple = pg_row_trigger_tuple(fcinfo, true, "incentives_internal.enrollments_check");
	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	participant = TextDatumGetCString(heap_getattr(tuple, pg_column(rel, "participant_key"), desc, &isnull));
	offer = TextDatumGetCString(heap_getattr(tuple, pg_column(rel, "offer_key"), desc, &isnull));
	start = heap_getattr(tuple, pg_column(rel, "start_date"), desc, &isnull);
	end = heap_getattr(tuple, pg_column(rel, "end_date"), desc, &end_null);

	/* one (participant, offer) at a time, until this transaction ends */
	pair = psprintf("%s%c%s", participant, '\0', offer);
	pg_stored_key_lock("incentives.enrollments",
					   hash_bytes((const unsigned char *) pair,
								  (int) (strlen(participant) + 1 + strlen(offer))));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare("SELECT n.start_date, n.end_date FROM incentives.enrollments AS n"
					   " WHERE n.participant_key OPERATOR(pg_catalog.=) $1"
					   "   AND n.offer_key OPERATOR(pg_catalog.=) $2"
					   "   AND n.start_date OPERATOR(pg_catalog.<>) $3"
					   "   AND n.start_date OPERATOR(pg_catalog.<=) COALESCE($4, 'infinity')"
					   "   AND COALESCE(n.end_date, 'infinity') OPERATOR(pg_catalog.>=) $3"
					   " ORDER BY n.start_date LIMIT 1",
					   4, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare the enrollment overlap check: %s",
			 SPI_result_code_string(SPI_result));
	args[0] = CStringGetTextDatum(participant);
	args[1] = CStringGetTextDatum(offer);
	args[2] = start;
	args[3] = end_null ? (Datum) 0 : end;
	nulls[3] = end_null ? 'n' : ' ';
	rc = pg_execute_latest(plan, args, nulls);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not check enrollment windows: %s", SPI_result_code_string(rc));
	if (SPI_processed > 0)
	{
		bool		other_start_null,
					other_end_null;
		Datum		other_start = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
												&other_start_null);
		Datum		other_end = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
											  &other_end_null);

		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_EXCLUSION_VIOLATION),
				 errmsg("enrollment of participant \"%s\" in offer \"%s\" %s overlaps its enrollment %s",
						participant, offer,
						pg_window_text(DatumGetDateADT(start), end_null, end_null ? 0 : DatumGetDateADT(end)),
						pg_window_text(DatumGetDateADT(other_start), other_end_null,
									   other_end_null ? 0 : DatumGetDateADT(other_end))),
				 errhint("Windows of one participant in one offer must not overlap: end one before the next starts.")));
	}
	SPI_finish();
	return PointerGetDatum(NULL);
}
