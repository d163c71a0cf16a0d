/*
 * txn_relation.h
 *    The relation a calculation reads transactions from (docs/reference.md,
 *    Transactions): its columns checked, and the prepared query that reads
 *    it, kept per backend.
 */
#ifndef INC_TXN_RELATION_H
#define INC_TXN_RELATION_H

#include "postgres.h"

#include "executor/spi.h"
#include "nodes/params.h"
#include "utils/date.h"

/*
 * The columns a read returns, in this order: the required ones, then the
 * optional ones (NULL when the relation has no such column), the last
 * being a matched return's matching date, read through its
 * original_transaction_id (docs/reference.md, Returns against their sale).
 */
enum
{
	C_ID, C_PARTICIPANT, C_TYPE, C_DATE, C_SKU, C_QUANTITY, C_UOM, C_AMOUNT,
	TXN_NREQUIRED,
	C_GROWER = TXN_NREQUIRED, C_CURRENCY, C_MATCHING_DATE,
	TXN_NCOLUMNS
};

/* The optional columns a relation has (TxnRelation.optional). */
#define TXN_HAS_GROWER		0x01	/* grower_key */
#define TXN_HAS_CURRENCY	0x02	/* currency */
#define TXN_HAS_ORIGINAL	0x04	/* original_transaction_id */

/* txn_column_name: the name of read column c. */
extern const char *txn_column_name(int c);

/* What txn_relation_check found. */
typedef struct TxnRelation
{
	char	   *relname;		/* quoted, qualified name, for messages */
	bool		unique_ids;		/* a unique index on transaction_id alone */
	uint64		rows;			/* the planner's row estimate, 0 when none */
	int			optional;		/* TXN_HAS_*: its optional columns */
} TxnRelation;

/*
 * txn_relation_check: relid's name, and every transaction column present
 * with a type that converts exactly (an error names the relation and the
 * column otherwise); whether a valid, immediate, non-partial unique index
 * on the plain column transaction_id alone makes a repeated id impossible;
 * which optional columns it has (of a type that fits, else an error too).
 */
extern void txn_relation_check(Oid relid, TxnRelation *out);

/*
 * txn_relation_read: the kept plan reading relid's transaction columns
 * (cast to text, date, numeric; optional: the columns of TXN_HAS_* that
 * it has, the others read as NULL), all of them in no order, or those of the
 * participants $1 (a text[]: one participant, or the members of its
 * groups; through the participant index when there is one); with
 * through_date, only the transactions dated on or before the date that
 * follows ($1, or $2 after the participant; docs/lifecycle.md,
 * Through-date).
 */
extern SPIPlanPtr txn_relation_read(Oid relid, const char *relname, int optional,
									bool one_participant, bool through_date);

/*
 * txn_relation_query: the text of that read ($1, $2 as it declares them),
 * palloc'd.
 */
extern char *txn_relation_query(const char *relname, int optional, bool one_participant,
								bool through_date);

/*
 * txn_relation_params: the parameters of that read (the participants, then
 * the date; NULL when it has none), in the current memory context.
 */
extern ParamListInfo txn_relation_params(const char *const *participants, int nparticipants,
										 const DateADT *through_date);

#endif							/* INC_TXN_RELATION_H */
