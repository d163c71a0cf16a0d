/*
 * change_log.c
 *    How much of the change log one changed_only refresh takes
 *    (docs/lifecycle.md, changed_only => true): the setting
 *    incentives.changed_only_limit and
 *    incentives_internal.changed_only_limit(), which the SQL plan asks.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "pg/refresh/refresh.h"

/* The most changed participants a changed_only refresh takes; -1: all. */
static int	ChangedOnlyLimit = -1;

void
pg_change_log_init(void)
{
	DefineCustomIntVariable("incentives.changed_only_limit",
							"The most changed participants one changed_only refresh recalculates, the ones logged first.",
							"The others stay in incentives.earnings_changes for the next refresh. -1 takes them all. A change of offers, SKUs or unit conversions (everyone) is never limited.",
							&ChangedOnlyLimit, -1, -1, PG_INT32_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

PG_FUNCTION_INFO_V1(incentives_changed_only_limit);

/*
 * incentives_changed_only_limit: incentives.changed_only_limit, NULL when
 * it is -1 (no limit).
 */
Datum
incentives_changed_only_limit(PG_FUNCTION_ARGS)
{
	if (ChangedOnlyLimit < 0)
		PG_RETURN_NULL();
	PG_RETURN_INT32(ChangedOnlyLimit);
}
