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
 * (groups.h), read once in the caller's snapshot, in the current memory
 * context, for a calculation whose transactions come from relid.  Read as
 * the table's owner, once the caller's SELECT privilege is checked (a
 * group is whole even to a reader that sees some of its members only),
 * unless the caller is subject to row-level security on
 * incentives.transactions and relid hides nothing from it: then with the
 * caller's rights, so that it learns no membership of a participant it may
 * not see (docs/security.md, Participant groups).  NULL when no offer of e
 * is aggregated by group, or the table is empty or missing (a database
 * still at a version without it).  Must run inside SPI.
 */
extern IncGroups *pg_groups_load(const IncEngine *e, Oid relid);

/*
 * Reading as a relation's owner (docs/security.md, Participant groups): a
 * group's figures need every member's data, also of members the caller may
 * not see.  pg_owner_read_begin checks that the caller may SELECT from
 * relid (an error as the read itself would raise) and makes its owner the
 * current user, until pg_owner_read_end; an error in between unwinds it
 * with the (sub)transaction.
 */
typedef struct PgOwnerRead
{
	Oid			saved_user;
	int			saved_context;
} PgOwnerRead;

extern void pg_owner_read_begin(Oid relid, PgOwnerRead *r);
extern void pg_owner_read_end(const PgOwnerRead *r);

/*
 * pg_rls_hides: is row-level security active on relid for the caller (so
 * that the members of a group it sees may have rows it does not)?
 */
extern bool pg_rls_hides(Oid relid);

/*
 * pg_groups_members: the participants a calculation of participant_key
 * reads: every key of its unit (groups may be NULL), else itself alone;
 * sets *n.
 */
extern const char *const *pg_groups_members(const IncGroups *groups, const char *participant_key,
											int *n);

#endif							/* INC_PARTICIPANT_GROUPS_H */
