/*
 * stored_tables.c
 *    Helpers of the glue of incentives.enrollments and
 *    incentives.participant_groups (docs/reference.md, Enrollment and
 *    Participant groups): whether such a table exists, and what their
 *    triggers share -- column lookup, a window as text, the advisory lock
 *    of a key, a check query with the latest snapshot (stored_tables.h).
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "core/offer/offer.h"
#include "pg/load/stored_tables.h"

/* pg_stored_table_exists: does incentives.NAME exist (see the header)? */
bool
pg_stored_table_exists(const char *name)
{
	Oid			nsp = get_namespace_oid("incentives", true);

	return OidIsValid(nsp) && OidIsValid(get_relname_relid(name, nsp));
}

/* pg_window_text: "from START to END" or "from START (open-ended)". */
char *
pg_window_text(DateADT start, bool open_ended, DateADT end)
{
	char		s[16],
				e[16];

	inc_date_format(start, s, sizeof(s));
	if (open_ended)
		return psprintf("from %s (open-ended)", s);
	inc_date_format(end, e, sizeof(e));
	return psprintf("from %s to %s", s, e);
}

/* pg_column: attnum of a column of the trigger's relation, by name. */
int
pg_column(Relation rel, const char *name)
{
	int			attnum = SPI_fnumber(RelationGetDescr(rel), name);

	if (attnum <= 0)
		elog(ERROR, "relation \"%s\" has no column \"%s\"", RelationGetRelationName(rel), name);
	return attnum;
}

/* pg_stored_key_lock: the advisory lock of a key of table. */
void
pg_stored_key_lock(const char *table, uint32 key_hash)
{
	DirectFunctionCall2(pg_advisory_xact_lock_int4,
						Int32GetDatum((int32) hash_bytes((const unsigned char *) table,
														 (int) strlen(table))),
						Int32GetDatum((int32) key_hash));
}

/* pg_execute_latest: a check query with the latest snapshot. */
int
pg_execute_latest(SPIPlanPtr plan, Datum *args, const char *nulls)
{
	return SPI_execute_snapshot(plan, args, nulls,
								IsolationUsesXactSnapshot() ? GetLatestSnapshot() : InvalidSnapshot,
								InvalidSnapshot, false, false, 1);
}
