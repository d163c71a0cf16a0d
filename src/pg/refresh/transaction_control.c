/*
 * transaction_control.c
 *    A refresh that spans transactions (docs/lifecycle.md, jobs):
 *
 *    incentives_internal.transaction_control_allowed(): may the calling
 *    procedure COMMIT?  True when it was CALLed outside a transaction block
 *    (psql, pg_cron) and is not inside an exception block.  The answer
 *    comes from SPI's own notion of a non-atomic context, so refresh_earnings
 *    and settle never read an error message's text to learn it.
 *
 *    incentives_internal.refresh_hold(), refresh_try_hold() and
 *    refresh_release(): the lock a refresh with jobs > 1 (or a
 *    changed_only refresh that may commit) holds across its transactions:
 *    a session lock on incentives.earnings in EXCLUSIVE mode, as the
 *    one-transaction refresh's LOCK TABLE takes it for its transaction;
 *    refresh_try_hold does not wait for it.  Only a role that may take
 *    that lock with LOCK TABLE may take it here; it is released by
 *    refresh_release, by an error that ends the transaction, or by the
 *    session's end.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "pg/refresh/refresh.h"

PG_FUNCTION_INFO_V1(incentives_transaction_control_allowed);

/*
 * incentives_transaction_control_allowed: true when the PL/pgSQL procedure
 * that evaluates this call may COMMIT: its SPI connection is non-atomic
 * (CALLed outside a transaction block, or from such a procedure) and no
 * subtransaction (exception block) is open.
 */
Datum
incentives_transaction_control_allowed(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(SPI_inside_nonatomic_context() && !IsSubTransaction());
}

/* incentives.earnings, while this session holds its refresh lock. */
static LockRelId held = {InvalidOid, InvalidOid};
static bool callback_registered = false;

/* Release: the session lock, if held. */
static void
Release(void)
{
	if (OidIsValid(held.relId))
	{
		UnlockRelationIdForSession(&held, ExclusiveLock);
		held.relId = InvalidOid;
	}
}

/*
 * ReleaseOnAbort: a top-level transaction that ends in error releases the
 * lock (the procedure releases it itself after an error it catches).
 */
static void
ReleaseOnAbort(XactEvent event, void *arg)
{
	(void) arg;
	if (event == XACT_EVENT_ABORT)
		Release();
}

/* refresh_holds: does this session hold the refresh lock? */
bool
refresh_holds(void)
{
	return OidIsValid(held.relId);
}

/*
 * Hold: take the session lock after LOCK TABLE's privilege check for
 * EXCLUSIVE mode, waiting for it as LOCK TABLE does, or with nowait not at
 * all (false when another session holds a conflicting lock).
 */
static bool
Hold(bool nowait)
{
	Oid			relid = get_relname_relid("earnings", get_namespace_oid("incentives", false));
	AclResult	aclresult;
	LOCKTAG		tag;

	if (!OidIsValid(relid))
		elog(ERROR, "incentives.earnings does not exist");
	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_UPDATE | ACL_DELETE | ACL_TRUNCATE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, "earnings");
	if (OidIsValid(held.relId))
		return true;
	if (!callback_registered)
	{
		RegisterXactCallback(ReleaseOnAbort, NULL);
		callback_registered = true;
	}
	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	if (LockAcquire(&tag, ExclusiveLock, true, nowait) == LOCKACQUIRE_NOT_AVAIL)
		return false;
	held.relId = relid;
	held.dbId = MyDatabaseId;
	return true;
}

PG_FUNCTION_INFO_V1(incentives_refresh_hold);

/* incentives_refresh_hold: the session lock, waiting for it. */
Datum
incentives_refresh_hold(PG_FUNCTION_ARGS)
{
	(void) Hold(false);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(incentives_refresh_try_hold);

/*
 * incentives_refresh_try_hold: the session lock if no other session
 * holds a conflicting one (a refresh of everyone or of a participant, a
 * live refresh); false at once otherwise.
 */
Datum
incentives_refresh_try_hold(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(Hold(true));
}

PG_FUNCTION_INFO_V1(incentives_refresh_release);

/* incentives_refresh_release: the session lock released, if held. */
Datum
incentives_refresh_release(PG_FUNCTION_ARGS)
{
	Release();
	PG_RETURN_VOID();
}
