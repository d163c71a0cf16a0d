/*
 * participant_groups.c
 *    incentives.participant_groups in and out of the engine
 *    (docs/reference.md, Participant groups): the windows a calculation
 *    reads once and turns into calculation units (core/engine/groups.h),
 *    and the trigger that refuses overlapping windows and cycles.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/syscache.h"

#include "pg/base/error_context.h"
#include "pg/load/participant_groups.h"
#include "pg/base/convert.h"
#include "pg/load/stored_tables.h"

static SPIPlanPtr read_plan;
static SPIPlanPtr types_plan;

static IncGroups *LoadGroups(bool as_owner, const IncGroupLevels *levels);

/* RelationOwner: the owner of relid. */
static Oid
RelationOwner(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

/* pg_owner_read_begin: the caller may read relid; its owner reads it. */
void
pg_owner_read_begin(Oid relid, PgOwnerRead *r)
{
	AclResult	acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);

	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, get_relkind_objtype(get_rel_relkind(relid)), get_rel_name(relid));
	GetUserIdAndSecContext(&r->saved_user, &r->saved_context);
	SetUserIdAndSecContext(RelationOwner(relid),
						   r->saved_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

/* pg_owner_read_end: the caller again. */
void
pg_owner_read_end(const PgOwnerRead *r)
{
	SetUserIdAndSecContext(r->saved_user, r->saved_context);
}

/* pg_rls_hides: row-level security active on relid for the caller? */
bool
pg_rls_hides(Oid relid)
{
	return check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED;
}

/*
 * pg_groups_load: the table's windows as calculation units, or NULL.  Read
 * only when some offer of the engine is aggregated by group (else the data
 * path is the one without groups): one kept plan reading the whole table
 * -- a small one: a row per membership -- in the caller's snapshot
 * (docs/security.md, Participant groups).  It is read as the table's
 * owner, once the caller's SELECT privilege is checked, so that a group
 * is whole to a reader that sees some of its members only, when the
 * transactions come from relid hiding rows from the caller; a caller
 * subject to row-level security on incentives.transactions whose relid
 * hides nothing from it (a table of its own, say, whose rows may name any
 * participant) reads it with its own rights: the table's policy shows it
 * the memberships of the participants it sees in incentives.transactions,
 * and no other.  A database whose extension is at a version without the
 * table (this library loaded before ALTER EXTENSION ... UPDATE) has no
 * groups.
 */
IncGroups *
pg_groups_load(const IncEngine *e, Oid relid)
{
	Oid			transactions;
	IncGroupLevels levels;

	if (!inc_engine_aggregates_groups(e))
		return NULL;
	inc_engine_group_levels(e, &levels);
	transactions = get_relname_relid("transactions", get_namespace_oid("incentives", false));
	return LoadGroups(!OidIsValid(transactions) || !pg_rls_hides(transactions) ||
					  pg_rls_hides(relid), &levels);
}

/*
 * LoadTypes: the group types of incentives.groups into groups
 * (docs/reference.md, Participant hierarchies), read as LoadGroups reads
 * the memberships (docs/security.md, Participant groups); none when the
 * extension is at a version without the table.
 */
static void
LoadTypes(IncGroups *groups, bool as_owner)
{
	PgOwnerRead owner;
	uint64		i;
	int			rc;

	if (!pg_stored_table_exists("groups"))
		return;
	if (types_plan == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare("SELECT group_key, group_type FROM incentives.groups", 0, NULL);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare the read of incentives.groups: %s",
				 SPI_result_code_string(SPI_result));
		types_plan = plan;
	}
	if (as_owner)
		pg_owner_read_begin(get_relname_relid("groups", get_namespace_oid("incentives", false)),
							&owner);
	rc = SPI_execute_plan(types_plan, NULL, NULL, true, 0);
	if (as_owner)
		pg_owner_read_end(&owner);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read incentives.groups");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		key_null,
					type_null;
		Datum		key = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &key_null);
		Datum		type = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &type_null);
		text	   *k,
				   *t;

		CHECK_FOR_INTERRUPTS();
		if (key_null || type_null)
			continue;			/* the table forbids it */
		k = DatumGetTextPP(key);
		t = DatumGetTextPP(type);
		inc_groups_set_type(groups, VARDATA_ANY(k), VARSIZE_ANY_EXHDR(k),
							VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * LoadGroups: pg_groups_load's read, or NULL (none, or no table); as the
 * table's owner, or with the caller's rights; its units those of the
 * levels given (NULL: every level).
 */
static IncGroups *
LoadGroups(bool as_owner, const IncGroupLevels *levels)
{
	IncGroups  *groups;
	PgOwnerRead owner;
	uint64		i;
	int			rc;

	if (!pg_stored_table_exists("participant_groups"))
		return NULL;
	if (read_plan == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare("SELECT participant_key, group_key, start_date, end_date"
									   "  FROM incentives.participant_groups", 0, NULL);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare the read of incentives.participant_groups: %s",
				 SPI_result_code_string(SPI_result));
		read_plan = plan;
	}
	if (as_owner)
		pg_owner_read_begin(get_relname_relid("participant_groups",
											  get_namespace_oid("incentives", false)),
							&owner);
	rc = SPI_execute_plan(read_plan, NULL, NULL, true, 0);
	if (as_owner)
		pg_owner_read_end(&owner);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read incentives.participant_groups");
	if (SPI_processed == 0)
	{
		SPI_freetuptable(SPI_tuptable);
		return NULL;
	}

	groups = inc_groups_create();
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		member_null,
					group_null,
					start_null,
					end_null;
		Datum		member = SPI_getbinval(tuple, desc, 1, &member_null);
		Datum		group = SPI_getbinval(tuple, desc, 2, &group_null);
		Datum		start = SPI_getbinval(tuple, desc, 3, &start_null);
		Datum		end = SPI_getbinval(tuple, desc, 4, &end_null);
		text	   *m,
				   *g;

		if (member_null || group_null || start_null)
			continue;			/* the table forbids it */
		m = DatumGetTextPP(member);
		g = DatumGetTextPP(group);
		inc_groups_add(groups, VARDATA_ANY(m), VARSIZE_ANY_EXHDR(m),
					   VARDATA_ANY(g), VARSIZE_ANY_EXHDR(g), DatumGetDateADT(start),
					   end_null ? 0 : DatumGetDateADT(end), end_null);
	}
	SPI_freetuptable(SPI_tuptable);
	LoadTypes(groups, as_owner);
	inc_groups_prepare(groups, levels);
	return groups;
}

/* pg_groups_members: the keys of participant_key's unit, or itself. */
const char *const *
pg_groups_members(const IncGroups *groups, const char *participant_key, int *n)
{
	const char **one;
	int			index;
	int			u = groups ? inc_groups_find(groups, participant_key, strlen(participant_key),
											 &index) : -1;

	if (u >= 0)
	{
		IncUnit		unit = inc_groups_unit(groups, u);

		*n = unit.nkeys;
		return unit.keys;
	}
	one = palloc(sizeof(char *));
	one[0] = participant_key;
	*n = 1;
	return one;
}

/* ---- the trigger ---------------------------------------------------------- */

/*
 * Check: run one check query of the trigger with the latest snapshot
 * (under REPEATABLE READ and SERIALIZABLE too, a row committed by the
 * session it waited for is seen); true when it finds a row (in
 * SPI_tuptable).
 */
static bool
Check(const char *query, int nargs, Oid *argtypes, Datum *args, const char *nulls)
{
	SPIPlanPtr	plan = SPI_prepare(query, nargs, argtypes);
	int			rc;

	if (plan == NULL)
		elog(ERROR, "could not prepare a participant groups check: %s",
			 SPI_result_code_string(SPI_result));
	rc = pg_execute_latest(plan, args, nulls);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not check participant groups: %s", SPI_result_code_string(rc));
	return SPI_processed > 0;
}

/* Text: column n of the first row a check found. */
static char *
Text(int n)
{
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, n);
}

PG_FUNCTION_INFO_V1(incentives_participant_groups_check);

/*
 * incentives_participant_groups_check: AFTER INSERT OR UPDATE row trigger
 * on incentives.participant_groups (docs/reference.md, Participant
 * groups).  Refused, naming the rows: another window of the row's
 * participant that overlaps it (23P01; both ends inclusive, a NULL
 * end_date never ends); a row that makes the participant its own ancestor
 * on some day of its window (22023, naming every key of the cycle).
 * Groups may be members of groups, so a cycle can close through rows of
 * keys other than the row's own: every writer of the table takes one
 * transaction-level advisory lock (the same key for all) before reading
 * the table with the latest snapshot, so writers of the hierarchy take
 * turns (docs/reference.md, Participant hierarchies).
 */
Datum
incentives_participant_groups_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	HeapTuple	tuple;
	TupleDesc	desc;
	bool		isnull,
				end_null;
	char	   *participant,
			   *group;
	Datum		start,
				end;
	Oid			argtypes[4] = {TEXTOID, DATEOID, DATEOID, TEXTOID};
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	char	   *window;

	tuple = pg_row_trigger_tuple(fcinfo, true, "incentives_internal.participant_groups_check");
	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	participant = TextDatumGetCString(heap_getattr(tuple, pg_column(rel, "participant_key"), desc, &isnull));
	group = TextDatumGetCString(heap_getattr(tuple, pg_column(rel, "group_key"), desc, &isnull));
	start = heap_getattr(tuple, pg_column(rel, "start_date"), desc, &isnull);
	end = heap_getattr(tuple, pg_column(rel, "end_date"), desc, &end_null);
	window = pg_window_text(DatumGetDateADT(start), end_null, end_null ? 0 : DatumGetDateADT(end));

	if (strcmp(participant, group) == 0)
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("participant \"%s\" cannot be a member of itself", participant),
				 errhint("A participant whose key is the group_key buys for the group directly: it needs no row.")));
	}

	/* one lock for every writer of the hierarchy, until this transaction ends */
	pg_stored_key_lock("incentives.participant_groups", 0);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* another window of the participant that overlaps */
	args[0] = CStringGetTextDatum(participant);
	args[1] = start;
	args[2] = end_null ? (Datum) 0 : end;
	nulls[2] = end_null ? 'n' : ' ';
	if (Check("SELECT g.group_key, g.start_date, g.end_date FROM incentives.participant_groups AS g"
			  " WHERE g.participant_key OPERATOR(pg_catalog.=) $1"
			  "   AND g.start_date OPERATOR(pg_catalog.<>) $2"
			  "   AND g.start_date OPERATOR(pg_catalog.<=) COALESCE($3, 'infinity')"
			  "   AND COALESCE(g.end_date, 'infinity') OPERATOR(pg_catalog.>=) $2"
			  " ORDER BY g.start_date LIMIT 1", 3, argtypes, args, nulls))
	{
		bool		other_end_null;
		Datum		other_start = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
												&isnull);
		Datum		other_end = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3,
											  &other_end_null);

		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_EXCLUSION_VIOLATION),
				 errmsg("membership of participant \"%s\" in group \"%s\" %s overlaps its membership in group \"%s\" %s",
						participant, group, window, Text(1),
						pg_window_text(DatumGetDateADT(other_start), other_end_null,
									   other_end_null ? 0 : DatumGetDateADT(other_end))),
				 errhint("A participant belongs to one group at a time: end one window before the next starts.")));
	}

	/*
	 * A cycle: the group's ancestors, each through a window that shares a
	 * day with the row's window and with every window below it on the way,
	 * reach the participant.  The walk stops at a key it has passed (rows
	 * stored without this trigger), so it ends.
	 */
	args[0] = CStringGetTextDatum(group);
	args[3] = CStringGetTextDatum(participant);
	if (Check("WITH RECURSIVE up(key, low, high, path) AS ("
			  "  SELECT $1, $2, COALESCE($3, 'infinity'::pg_catalog.date),"
			  "         ARRAY[$4, $1]"
			  "  UNION ALL"
			  "  SELECT g.group_key, GREATEST(up.low, g.start_date),"
			  "         LEAST(up.high, COALESCE(g.end_date, 'infinity'::pg_catalog.date)),"
			  "         up.path OPERATOR(pg_catalog.||) g.group_key"
			  "    FROM up JOIN incentives.participant_groups AS g"
			  "      ON g.participant_key OPERATOR(pg_catalog.=) up.key"
			  "   WHERE up.key OPERATOR(pg_catalog.<>) $4"
			  "     AND g.start_date OPERATOR(pg_catalog.<=) up.high"
			  "     AND COALESCE(g.end_date, 'infinity'::pg_catalog.date) OPERATOR(pg_catalog.>=) up.low"
			  "     AND NOT g.group_key OPERATOR(pg_catalog.=) ANY (up.path[2:])"
			  ")"
			  " SELECT pg_catalog.array_to_string(path, ' -> '), low, high FROM up"
			  "  WHERE key OPERATOR(pg_catalog.=) $4"
			  "  ORDER BY pg_catalog.cardinality(path), low LIMIT 1", 4, argtypes, args, nulls))
	{
		bool		high_null;
		Datum		low = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
		Datum		high = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &high_null);
		DateADT		high_date = DatumGetDateADT(high);

		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("membership of participant \"%s\" in group \"%s\" %s makes a cycle %s: %s",
						participant, group, window,
						pg_window_text(DatumGetDateADT(low), DATE_IS_NOEND(high_date),
									   DATE_IS_NOEND(high_date) ? 0 : high_date),
						Text(1)),
				 errhint("A group cannot be its own ancestor on any day: end one of the windows of the cycle first.")));
	}
	SPI_finish();
	return PointerGetDatum(NULL);
}

/* ---- the units, for the refresh and the placement ------------------------ */

/*
 * ReturnUnits: every key of groups' units with the first key of its unit,
 * into the function's result (participant_key, unit_key).
 */
static void
ReturnUnits(FunctionCallInfo fcinfo, const IncGroups *groups, MemoryContext caller)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			u,
				k;

	for (u = 0; groups && u < inc_groups_count(groups); u++)
	{
		IncUnit		unit = inc_groups_unit(groups, u);

		CHECK_FOR_INTERRUPTS();
		for (k = 0; k < unit.nkeys; k++)
		{
			Datum		values[2];
			bool		nulls[2] = {false, false};
			MemoryContext old = MemoryContextSwitchTo(caller);

			values[0] = CStringGetTextDatum(unit.keys[k]);
			values[1] = CStringGetTextDatum(unit.keys[0]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			MemoryContextSwitchTo(old);
		}
	}
}

PG_FUNCTION_INFO_V1(incentives_participant_units);

/*
 * incentives_participant_units: participant_units() RETURNS TABLE
 * (participant_key text, unit_key text): every key of
 * incentives.participant_groups (members and groups) with the first key of
 * its unit of every level (a whole connected hierarchy) in byte order,
 * the one that stands for the unit (groups.h): the keys whose earnings a
 * refresh may have to calculate together, whatever its offers and the
 * types of the groups (a unit of a calculation is within one of these).
 * Read as pg_groups_load reads the table.
 */
Datum
incentives_participant_units(PG_FUNCTION_ARGS)
{
	MemoryContext caller = CurrentMemoryContext;

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ReturnUnits(fcinfo, LoadGroups(true, NULL), caller);
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(incentives_placement_units);

/*
 * incentives_placement_units: placement_units() RETURNS TABLE
 * (participant_key text, unit_key text): as participant_units(), with the
 * units of the levels that the stored offers aggregate at in any of their
 * versions (incentives.offers, incentives.offer_versions): the keys that
 * a calculation of any of those offers may calculate together, which a
 * sharded layout places on one partition (docs/scaling.md, Participant
 * groups).  A national group no offer aggregates at then ties nothing
 * together.  Only a role that may execute participant_units() may list
 * them (docs/security.md, Internal functions that read as the owner).
 */
Datum
incentives_placement_units(PG_FUNCTION_ARGS)
{
	MemoryContext caller = CurrentMemoryContext;
	IncGroupLevels levels;
	const char **types;
	uint64		i;
	bool		isnull;

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* it lists what participant_units() lists: only to the roles that may run that */
	if (SPI_execute("SELECT pg_catalog.has_function_privilege("
					"'incentives_internal.participant_units()', 'EXECUTE')", true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not check the privilege of participant_units()");
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) || isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for function placement_units"),
				 errdetail("It lists every member and group key, as participant_units() does."),
				 errhint("Grant EXECUTE on incentives_internal.participant_units() to the role (docs/security.md).")));
	if (SPI_execute("SELECT DISTINCT d.document ->> 'group_type'"
					"  FROM (SELECT o.document FROM incentives.offers AS o"
					"        UNION ALL"
					"        SELECT v.document FROM incentives.offer_versions AS v) AS d"
					" WHERE d.document ->> 'aggregation' = 'group'", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the offers' levels");
	levels.untyped = false;
	levels.ntypes = 0;
	types = palloc(sizeof(char *) * (SPI_processed + 1));
	for (i = 0; i < SPI_processed; i++)
	{
		char	   *type = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		if (type == NULL)
			levels.untyped = true;
		else
			types[levels.ntypes++] = type;
	}
	levels.types = types;
	ReturnUnits(fcinfo, LoadGroups(true, &levels), caller);
	SPI_finish();
	return (Datum) 0;
}
