/*
 * stored_tables.h
 *    What the glue of the tables the extension stores beside the offers
 *    (incentives.enrollments and incentives.participant_groups,
 *    docs/reference.md) shares: whether a table exists yet, and the
 *    pieces of their overlap-check triggers (stored_tables.c).
 */
#ifndef INC_STORED_TABLES_H
#define INC_STORED_TABLES_H

#include "postgres.h"

#include "executor/spi.h"
#include "utils/date.h"
#include "utils/rel.h"

/*
 * pg_stored_table_exists: does incentives.NAME exist?  Not in a database
 * whose extension is still at a version without it (this library loaded
 * before ALTER EXTENSION ... UPDATE).
 */
extern bool pg_stored_table_exists(const char *name);

/* pg_window_text: "from START to END" or "from START (open-ended)". */
extern char *pg_window_text(DateADT start, bool open_ended, DateADT end);

/* pg_column: attnum of a column of a trigger's relation, by name. */
extern int	pg_column(Relation rel, const char *name);

/*
 * pg_stored_key_lock: the transaction-level advisory lock of a key of the
 * table named table ("incentives.NAME"), by the key's hash.
 */
extern void pg_stored_key_lock(const char *table, uint32 key_hash);

/*
 * pg_execute_latest: run one check query of a trigger (at most one row)
 * with the latest snapshot under REPEATABLE READ and SERIALIZABLE too, so
 * a row committed by the session it waited for is seen (as the foreign key
 * checks of ri_triggers.c do); SPI_execute_snapshot's result.
 */
extern int	pg_execute_latest(SPIPlanPtr plan, Datum *args, const char *nulls);

#endif							/* INC_STORED_TABLES_H */
