/*
 * module.c
 *    Module initialisation: routes the engine core's memory and failures
 *    into PostgreSQL.
 *
 * The core allocates with palloc0 in whatever memory context is current
 * (so a reset or an error frees everything) and fails with ereport, which
 * unwinds by longjmp; the core holds no resource other than memory while
 * it runs.  A failure during a calculation names the transaction and the
 * participant being calculated.
 */
#include "postgres.h"

#include "fmgr.h"

#include "core/engine_internal.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static void *
PgAlloc(size_t size)
{
	return palloc0(size);
}

static int
ErrCode(IncErrKind kind)
{
	switch (kind)
	{
		case INC_ERR_INVALID:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case INC_ERR_RANGE:
			return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
		case INC_ERR_INTERNAL:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

static void
PgFail(IncErrKind kind, const char *message, const char *detail, const char *hint)
{
	char	   *where = NULL;

	if (inc_current_txn && inc_current_participant)
		where = psprintf("While calculating transaction \"%s\" of participant \"%s\".",
						 inc_current_txn->transaction_id, inc_current_participant);
	else if (inc_current_participant)
		where = psprintf("While calculating participant \"%s\".", inc_current_participant);

	ereport(ERROR,
			(errcode(ErrCode(kind)),
			 errmsg_internal("%s", message),
			 detail ? errdetail_internal("%s", detail) :
			 where ? errdetail_internal("%s", where) : 0,
			 hint ? errhint("%s", hint) : 0));
	pg_unreachable();
}

/* _PG_init: install the engine core's hooks. */
void
_PG_init(void)
{
	inc_set_hooks(PgAlloc, PgFail);
}
