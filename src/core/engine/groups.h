/*
 * groups.h
 *    The participant groups of a calculation (docs/reference.md,
 *    Participant groups): which participants' transactions must be
 *    calculated together (the calculation units), and the aggregation key
 *    of each transaction.
 *
 * A host reads the windows of incentives.participant_groups once per call
 * (a member belongs to a group from start_date to end_date, both
 * inclusive), adds them here and prepares: every key that appears in a
 * window, as a member or as a group, is a node, and members and groups
 * connected through the windows that can carry an aggregation key form
 * one unit (a group with all its members, and groups joined by a member
 * that moves between them).  A key in no window is a unit of its own,
 * which the host makes itself (one key: its aggregation key is always
 * itself).  Within a unit:
 *
 *   the keys are in byte order, flagged INC_KEY_GROUP when they are a
 *   group_key;
 *   a group may itself be a member of a group (a hierarchy): prepared
 *   for the levels of a calculation's offers (IncGroupLevels), a window
 *   joins its member and its group only when a transaction's aggregation
 *   key at one of those levels can go through it, so a unit is what
 *   those levels tie together (no offer at a national group's level: the
 *   national group does not tie its members into one unit); prepared for
 *   every level, a unit is a whole connected hierarchy;
 *   the aggregation key of a transaction in an offer without a
 *   group_type is its participant when that is a group on any date (a
 *   head office buying directly), else the group of the participant's
 *   window containing the transaction's date (the earliest such window
 *   when windows overlap, which the table refuses), else the participant;
 *   with a group_type T, the first of the participant and its ancestors
 *   on the date whose type (inc_groups_set_type) is T, else the
 *   participant.  A transaction without a date aggregates under its
 *   participant.
 *
 * Memory comes from inc_alloc, in the allocator current when the groups
 * are created; names are copied.
 */
#ifndef INC_GROUPS_H
#define INC_GROUPS_H

#include "../calc/calc_io.h"

typedef struct IncGroups IncGroups;

extern IncGroups *inc_groups_create(void);

/*
 * inc_groups_add: member (mlen bytes) belongs to group (glen bytes) from
 * start_date to end_date (days since 2000-01-01; no end when open_ended).
 * Call before inc_groups_prepare.
 */
extern void inc_groups_add(IncGroups *g, const char *member, size_t mlen,
						   const char *group, size_t glen, int32_t start_date,
						   int32_t end_date, bool open_ended);

/*
 * inc_groups_set_type: the group_type of key (len bytes; type tlen bytes,
 * copied), from incentives.groups; a key in no window is ignored.  After
 * the last add.
 */
extern void inc_groups_set_type(IncGroups *g, const char *key, size_t len,
								const char *type, size_t tlen);

/*
 * IncGroupLevels: the levels offers aggregate at: untyped (some offer
 * aggregated by group has no group_type) and the distinct group_types.
 */
typedef struct IncGroupLevels
{
	bool		untyped;
	int			ntypes;
	const char *const *types;
} IncGroupLevels;

/*
 * inc_groups_prepare: the units, for the levels given (NULL: every
 * level, a unit is a whole connected hierarchy); after the last add and
 * the last set_type, before any lookup.
 */
extern void inc_groups_prepare(IncGroups *g, const IncGroupLevels *levels);

/* inc_groups_count: how many units (0: no groups at all). */
extern int	inc_groups_count(const IncGroups *g);

/*
 * inc_groups_find: the unit (from 0) of the key of len bytes and its index
 * among the unit's keys, or -1 (and *index -1) for a key in no window.
 */
extern int	inc_groups_find(const IncGroups *g, const char *key, size_t len, int *index);

/*
 * inc_groups_unit: unit u's keys and their flags (INC_KEY_GROUP only: the
 * host sets its own flags in a copy), in byte order, and its aggregate
 * function (IncUnit.aggregate: offers with a group_type).
 */
extern IncUnit inc_groups_unit(const IncGroups *g, int u);

/*
 * inc_groups_nest_order: unit u's keys' ranks (by key index, 0 to
 * nkeys - 1) in an order where each group is followed by its members,
 * their members, and so on (down each key's first window within the
 * unit): transactions put in the rank order of their participants have
 * every aggregation key's together, but for members that move between
 * groups.
 */
extern const int *inc_groups_nest_order(const IncGroups *g, int u);

/*
 * inc_groups_aggregation: the index, among unit u's keys, of the
 * aggregation key of a transaction of the unit's key index dated date
 * (has_date false: no date, its participant) in an offer whose
 * group_type is group_type (NULL: none).
 */
extern int	inc_groups_aggregation(const IncGroups *g, int u, int index, int32_t date,
								   bool has_date, const char *group_type);

#endif							/* INC_GROUPS_H */
