/*
 * participant_groups.c
 *    incentives.participant_groups in and out of the engine
 *    (docs/reference.md, Participant groups): the windows a calculation
 *    reads once and turns into units (core/engine/groups.h).
 *
 * Loading: only when some offer of the engine is aggregated by group (else
 * nothing is read and the data path is the one without groups), one kept
 * plan reading the whole table -- a small one: a row per membership --
 * with the caller's rights and snapshot like every other read of a
 * calculation.  A database whose extension is still at a version without
 * the table (this library loaded before ALTER EXTENSION ... UPDATE) has no
 * groups.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"

#include "participant_groups.h"

static SPIPlanPtr read_plan;

/* StoredTable: does incentives.participant_groups exist (see the file header)? */
static bool
StoredTable(void)
{
	Oid			nsp = get_namespace_oid("incentives", true);

	return OidIsValid(nsp) && OidIsValid(get_relname_relid("participant_groups", nsp));
}

/* pg_groups_load: the table's windows as units, or NULL (see the header). */
IncGroups *
pg_groups_load(const IncEngine *e)
{
	IncGroups  *groups;
	uint64		i;

	if (!inc_engine_aggregates_groups(e) || !StoredTable())
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
	if (SPI_execute_plan(read_plan, NULL, NULL, true, 0) != SPI_OK_SELECT)
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
	inc_groups_prepare(groups);
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
