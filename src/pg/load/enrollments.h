/*
 * enrollments.h
 *    The enrollment windows a calculation hands the engine
 *    (enrollments.c): loaded once per call, looked up through the engine's
 *    IncEnrollmentFn.
 */
#ifndef INC_ENROLLMENTS_H
#define INC_ENROLLMENTS_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "core/engine/engine.h"

typedef struct PgEnrollments
{
	struct IncStrMap *pairs;	/* "participant\037offer" -> windows */
} PgEnrollments;

extern void pg_enrollments_load(PgEnrollments *en, const IncEngine *e,
								const char *participant_key, const char *const *participants,
								int n, Jsonb *request);
/*
 * pg_enrollments_hidden: add the windows of n keys the caller cannot see,
 * read as the table's owner (txn_source_hidden_keys).
 */
extern void pg_enrollments_hidden(PgEnrollments *en, const IncEngine *e,
								  const char *const *keys, int n);
extern int	pg_enrollments_lookup(void *ctx, const char *participant_key,
								  const char *offer_key, const IncWindow **windows);

#endif							/* INC_ENROLLMENTS_H */
