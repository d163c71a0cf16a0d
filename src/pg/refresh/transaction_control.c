/*
 * transaction_control.c
 *    incentives_internal.transaction_control_allowed(): may the calling
 *    procedure COMMIT?  True when it was CALLed outside a transaction block
 *    (psql, pg_cron) and is not inside an exception block.  The answer
 *    comes from SPI's own notion of a non-atomic context, so refresh_earnings
 *    and settle never read an error message's text to learn it.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"

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
