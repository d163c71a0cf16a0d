/*
 * full_refresh.c
 *    How a refresh of everyone by the owner replaces the earnings
 *    (docs/operations.md, Backups, replicas and refreshes): the setting
 *    incentives.full_refresh and incentives_internal.full_refresh(), which
 *    the SQL plan asks.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "pg/refresh/refresh.h"

/* The two ways. */
typedef enum FullRefresh
{
	FULL_REFRESH_SWAP,			/* a new partition swapped in */
	FULL_REFRESH_IN_PLACE		/* the rows that moved, replaced in place */
} FullRefresh;

static const struct config_enum_entry full_refresh_options[] = {
	{"swap", FULL_REFRESH_SWAP, false},
	{"in_place", FULL_REFRESH_IN_PLACE, false},
	{NULL, 0, false}
};

static int	FullRefreshSetting = FULL_REFRESH_SWAP;

void
pg_full_refresh_init(void)
{
	DefineCustomEnumVariable("incentives.full_refresh",
							 "How a refresh of everyone by the owner of incentives.earnings replaces its rows: swap (a new partition, swapped in) or in_place (the rows that moved, deleted and inserted).",
							 "in_place takes no ACCESS EXCLUSIVE lock and runs no DDL: backups, logical replication and standby reads go on beside it. A published incentives.earnings is always refreshed in place.",
							 &FullRefreshSetting, FULL_REFRESH_SWAP, full_refresh_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
}

PG_FUNCTION_INFO_V1(incentives_full_refresh);

/* incentives_full_refresh: incentives.full_refresh, 'swap' or 'in_place'. */
Datum
incentives_full_refresh(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(FullRefreshSetting == FULL_REFRESH_SWAP ? "swap" : "in_place"));
}
