/*
 * participant_groups.h
 *    incentives.participant_groups in and out of the engine
 *    (participant_groups.c): the groups' units a calculation reads once,
 *    and the participants a one-participant call must read with it.
 */
#ifndef INC_PARTICIPANT_GROUPS_H
#define INC_PARTICIPANT_GROUPS_H

#include "postgres.h"

#include "core/engine/engine.h"
#include "core/engine/groups.h"

/*
 * pg_groups_load: the windows of incentives.participant_groups as units
 * (groups.h), read once with the caller's rights and snapshot, in the
 * current memory context; NULL when no offer of e is aggregated by group,
 * or the table is empty or missing (a database still at a version without
 * it).  Must run inside SPI.
 */
extern IncGroups *pg_groups_load(const IncEngine *e);

/*
 * pg_groups_members: the participants a calculation of participant_key
 * reads: every key of its unit (groups may be NULL), else itself alone;
 * sets *n.
 */
extern const char *const *pg_groups_members(const IncGroups *groups, const char *participant_key,
											int *n);

#endif							/* INC_PARTICIPANT_GROUPS_H */
