/*
 * groups.c
 *    Calculation units and aggregation keys from the participant groups'
 *    windows (see groups.h; docs/reference.md, Participant groups).
 *
 * Every key named by a window is a node of a union-find.
 * inc_groups_prepare joins the member and the group of each window an
 * aggregation key at the levels asked for can go through (Joins), gives
 * each root a unit, lists each unit's keys in byte order and sorts each
 * member's windows by start_date, so a key's group on a date is its
 * first window that contains the date, and its ancestors on the date
 * follow those windows up.
 */
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "../util/strmap.h"

typedef struct Window
{
	int			group;			/* node */
	int32_t		start_date;
	int32_t		end_date;
	bool		open_ended;
} Window;

typedef struct Node
{
	char	   *key;
	int			parent;			/* union-find */
	bool		is_group;
	const char *type;			/* incentives.groups.group_type, or NULL */
	int			unit;
	int			index;			/* among its unit's keys */
	int			nwindows;
	int			windows_cap;
	Window	   *windows;		/* as a member, by start_date once prepared */
} Node;

typedef struct Unit
{
	const IncGroups *groups;
	int			nkeys;
	const char **keys;
	uint8_t    *flags;
	int		   *nodes;			/* by index */
	int		   *nest;			/* by index: inc_groups_nest_order's rank */
} Unit;

struct IncGroups
{
	IncStrMap  *map;			/* key -> node + 1 */
	int			nnodes;
	int			nodes_cap;
	Node	   *nodes;
	int			nunits;
	Unit	   *units;
};

/* inc_groups_create: no windows yet. */
IncGroups *
inc_groups_create(void)
{
	IncGroups  *g = inc_alloc(sizeof(IncGroups));

	g->map = inc_strmap_create();
	return g;
}

/* NodeOf: the node of a key (len bytes), made on first use. */
static int
NodeOf(IncGroups *g, const char *key, size_t len)
{
	void	   *found = inc_strmap_get_len(g->map, key, len);
	Node	   *n;

	if (found)
		return (int) ((intptr_t) found - 1);
	if (g->nnodes == g->nodes_cap)
		g->nodes = inc_grow(g->nodes, g->nnodes, &g->nodes_cap, sizeof(Node), 16);
	n = &g->nodes[g->nnodes];
	n->key = inc_alloc(len + 1);
	memcpy(n->key, key, len);
	n->parent = g->nnodes;
	*inc_strmap_slot(g->map, n->key) = (void *) (intptr_t) (g->nnodes + 1);
	return g->nnodes++;
}

/* Root: the root of node i's set, halving the path on the way. */
static int
Root(IncGroups *g, int i)
{
	while (g->nodes[i].parent != i)
	{
		g->nodes[i].parent = g->nodes[g->nodes[i].parent].parent;
		i = g->nodes[i].parent;
	}
	return i;
}

/* Join: one set of nodes a and b. */
static void
Join(IncGroups *g, int a, int b)
{
	a = Root(g, a);
	b = Root(g, b);
	if (a != b)
		g->nodes[a > b ? a : b].parent = a > b ? b : a;
}

/* inc_groups_add: one window of member in group. */
void
inc_groups_add(IncGroups *g, const char *member, size_t mlen, const char *group, size_t glen,
			   int32_t start_date, int32_t end_date, bool open_ended)
{
	int			m = NodeOf(g, member, mlen);
	int			k = NodeOf(g, group, glen);
	Node	   *n = &g->nodes[m];

	g->nodes[k].is_group = true;
	if (n->nwindows == n->windows_cap)
		n->windows = inc_grow(n->windows, n->nwindows, &n->windows_cap, sizeof(Window), 2);
	n->windows[n->nwindows++] = (Window)
	{
		k, start_date, end_date, open_ended
	};
}

/* IsType: is node n of type? */
static bool
IsType(const Node *n, const char *type)
{
	return n->type != NULL && strcmp(n->type, type) == 0;
}

/*
 * ReachingType: which nodes have type among themselves and their
 * ancestors on some date (reaches[node]): the nodes of that type and,
 * going down the windows from them, every member of one that does (a
 * walk down through first, the members of each group in window order:
 * members[first[k] .. first[k + 1]), each node once, so a cycle the table
 * refused but a restore let in ends it too).
 */
static void
ReachingType(const IncGroups *g, const char *type, const int *first, const int *members,
			 bool *reaches, int *queue)
{
	int			head = 0,
				tail = 0,
				i;

	for (i = 0; i < g->nnodes; i++)
	{
		reaches[i] = IsType(&g->nodes[i], type);
		if (reaches[i])
			queue[tail++] = i;
	}
	while (head < tail)
	{
		int			k = queue[head++];

		for (i = first[k]; i < first[k + 1]; i++)
			if (!reaches[members[i]])
			{
				reaches[members[i]] = true;
				queue[tail++] = members[i];
			}
	}
}

/*
 * Joins: the member and the group of each window that an aggregation key
 * at one of the levels can go through (docs/reference.md, Participant
 * hierarchies): without a group_type, a window of a member that is no
 * group (a group's transactions are its own key's); with a group_type T,
 * a window of a member not of type T into a group that is of type T or
 * has an ancestor of type T on some date (the walk up from a member
 * stops at its first key of type T).  NULL levels: every window.
 */
static void
Joins(IncGroups *g, const IncGroupLevels *levels)
{
	int		   *first;
	int		   *members;
	int		   *queue;
	bool	   *reaches;
	int			i,
				w,
				t;

	if (levels == NULL)
	{
		for (i = 0; i < g->nnodes; i++)
			for (w = 0; w < g->nodes[i].nwindows; w++)
				Join(g, i, g->nodes[i].windows[w].group);
		return;
	}
	if (levels->untyped)
		for (i = 0; i < g->nnodes; i++)
			for (w = 0; w < g->nodes[i].nwindows && !g->nodes[i].is_group; w++)
				Join(g, i, g->nodes[i].windows[w].group);
	if (levels->ntypes == 0)
		return;

	/* each group's members, by window: members[first[k] .. first[k + 1]) */
	first = inc_alloc(sizeof(int) * (g->nnodes + 1));
	queue = inc_alloc(sizeof(int) * (g->nnodes + 1));
	reaches = inc_alloc(sizeof(bool) * (g->nnodes + 1));
	for (i = 0; i < g->nnodes; i++)
		for (w = 0; w < g->nodes[i].nwindows; w++)
			first[g->nodes[i].windows[w].group + 1]++;
	for (i = 0; i < g->nnodes; i++)
		first[i + 1] += first[i];
	members = inc_alloc(sizeof(int) * (first[g->nnodes] + 1));
	for (i = 0; i < g->nnodes; i++)
		queue[i] = first[i];
	for (i = 0; i < g->nnodes; i++)
		for (w = 0; w < g->nodes[i].nwindows; w++)
			members[queue[g->nodes[i].windows[w].group]++] = i;

	for (t = 0; t < levels->ntypes; t++)
	{
		ReachingType(g, levels->types[t], first, members, reaches, queue);
		for (i = 0; i < g->nnodes; i++)
		{
			if (IsType(&g->nodes[i], levels->types[t]))
				continue;
			for (w = 0; w < g->nodes[i].nwindows; w++)
				if (reaches[g->nodes[i].windows[w].group])
					Join(g, i, g->nodes[i].windows[w].group);
		}
	}
}

static void Nest(IncGroups *g);

static IncGroups *sorting;

/* CompareNodes: two nodes by key, bytewise. */
static int
CompareNodes(const void *a, const void *b)
{
	return strcmp(sorting->nodes[*(const int *) a].key, sorting->nodes[*(const int *) b].key);
}

static int
CompareWindows(const void *a, const void *b)
{
	const Window *x = a,
			   *y = b;

	return (x->start_date > y->start_date) - (x->start_date < y->start_date);
}

/* inc_groups_prepare: a unit per set, its keys in byte order. */
void
inc_groups_prepare(IncGroups *g, const IncGroupLevels *levels)
{
	int		   *unit_of_root = inc_alloc(sizeof(int) * (g->nnodes + 1));
	int		   *order = inc_alloc(sizeof(int) * (g->nnodes + 1));
	int			i;

	Joins(g, levels);
	for (i = 0; i < g->nnodes; i++)
		unit_of_root[i] = -1;
	for (i = 0; i < g->nnodes; i++)
	{
		int			r = Root(g, i);

		if (unit_of_root[r] < 0)
			unit_of_root[r] = g->nunits++;
		g->nodes[i].unit = unit_of_root[r];
		order[i] = i;
		if (g->nodes[i].nwindows > 1)
			qsort(g->nodes[i].windows, (size_t) g->nodes[i].nwindows, sizeof(Window),
				  CompareWindows);
	}
	sorting = g;
	qsort(order, (size_t) g->nnodes, sizeof(int), CompareNodes);
	sorting = NULL;

	g->units = inc_alloc(sizeof(Unit) * (g->nunits + 1));
	for (i = 0; i < g->nnodes; i++)
		g->units[g->nodes[i].unit].nkeys++;
	for (i = 0; i < g->nunits; i++)
	{
		Unit	   *u = &g->units[i];

		u->groups = g;
		u->keys = inc_alloc(sizeof(char *) * u->nkeys);
		u->flags = inc_alloc(u->nkeys);
		u->nodes = inc_alloc(sizeof(int) * u->nkeys);
		u->nest = inc_alloc(sizeof(int) * u->nkeys);
		u->nkeys = 0;
	}
	/* in key order: each unit's keys come out sorted */
	for (i = 0; i < g->nnodes; i++)
	{
		Node	   *n = &g->nodes[order[i]];
		Unit	   *u = &g->units[n->unit];

		n->index = u->nkeys++;
		u->keys[n->index] = n->key;
		u->flags[n->index] = n->is_group ? INC_KEY_GROUP : 0;
		u->nodes[n->index] = order[i];
	}
	Nest(g);
}

/* TreeParent: the group of node i's first window within its unit, or -1. */
static int
TreeParent(const IncGroups *g, int i)
{
	const Node *n = &g->nodes[i];
	int			w;

	for (w = 0; w < n->nwindows; w++)
		if (g->nodes[n->windows[w].group].unit == n->unit)
			return n->windows[w].group;
	return -1;
}

/*
 * Nest: each unit's nest ranks: a walk down each unit's trees (a key's
 * tree parent: TreeParent), from its keys without one in key order, each
 * key's children in key order, ranked as first reached; keys a stored
 * cycle leaves unreached start walks of their own, in key order.
 */
static void
Nest(IncGroups *g)
{
	int		   *first = inc_alloc(sizeof(int) * (g->nnodes + 2));
	int		   *children = inc_alloc(sizeof(int) * (g->nnodes + 1));
	int		   *parent = inc_alloc(sizeof(int) * (g->nnodes + 1));
	int		   *fill = inc_alloc(sizeof(int) * (g->nnodes + 1));
	int		   *stack = inc_alloc(sizeof(int) * (g->nnodes + 1));
	bool	   *reached = inc_alloc(sizeof(bool) * (g->nnodes + 1));
	int		   *next_rank = inc_alloc(sizeof(int) * (g->nunits + 1));
	int			i,
				u,
				k,
				pass;

	/* children by tree parent, each in key order: nodes taken in key order */
	for (i = 0; i < g->nnodes; i++)
	{
		parent[i] = TreeParent(g, i);
		if (parent[i] >= 0)
			first[parent[i] + 1]++;
	}
	for (i = 0; i < g->nnodes; i++)
		first[i + 1] += first[i];
	for (i = 0; i < g->nnodes; i++)
		fill[i] = first[i];
	for (u = 0; u < g->nunits; u++)
		for (k = 0; k < g->units[u].nkeys; k++)
		{
			int			node = g->units[u].nodes[k];

			if (parent[node] >= 0)
				children[fill[parent[node]]++] = node;
		}

	/* pass 0: from the roots; pass 1: what a cycle left */
	for (pass = 0; pass < 2; pass++)
		for (u = 0; u < g->nunits; u++)
			for (k = 0; k < g->units[u].nkeys; k++)
			{
				int			top = 0;
				int			start = g->units[u].nodes[k];

				if (reached[start] || (pass == 0 && parent[start] >= 0))
					continue;
				reached[start] = true;
				stack[top++] = start;
				while (top > 0)
				{
					int			node = stack[--top];
					int			c;

					g->units[u].nest[g->nodes[node].index] = next_rank[u]++;
					/* pushed last to first: taken first to last */
					for (c = first[node + 1] - 1; c >= first[node]; c--)
						if (!reached[children[c]])
						{
							reached[children[c]] = true;
							stack[top++] = children[c];
						}
				}
			}
}

/* inc_groups_nest_order: unit u's nest ranks. */
const int *
inc_groups_nest_order(const IncGroups *g, int u)
{
	return g->units[u].nest;
}

/* inc_groups_count: the number of units. */
int
inc_groups_count(const IncGroups *g)
{
	return g->nunits;
}

/* inc_groups_find: the unit of a key and its index there, or -1. */
int
inc_groups_find(const IncGroups *g, const char *key, size_t len, int *index)
{
	void	   *found = g->nnodes ? inc_strmap_get_len(g->map, key, len) : NULL;
	const Node *n;

	*index = -1;
	if (found == NULL)
		return -1;
	n = &g->nodes[(intptr_t) found - 1];
	*index = n->index;
	return n->unit;
}

/*
 * inc_groups_set_type: key's group_type (copied).  A key in no window is
 * no group: its type is not kept.
 */
void
inc_groups_set_type(IncGroups *g, const char *key, size_t len, const char *type, size_t tlen)
{
	void	   *found = g->nnodes ? inc_strmap_get_len(g->map, key, len) : NULL;
	char	   *copy;

	if (found == NULL)
		return;
	copy = inc_alloc(tlen + 1);
	memcpy(copy, type, tlen);
	g->nodes[(intptr_t) found - 1].type = copy;
}

/* GroupOn: the node of n's group on date, or -1. */
static int
GroupOn(const Node *n, int32_t date)
{
	int			i;

	for (i = 0; i < n->nwindows; i++)
	{
		const Window *w = &n->windows[i];

		if (w->start_date > date)
			break;
		if (w->open_ended || date <= w->end_date)
			return w->group;
	}
	return -1;
}

/* UnitAggregate: IncUnit.aggregate of a unit of groups. */
static int32_t
UnitAggregate(const void *ctx, const IncTxn *t, const char *group_type)
{
	const Unit *u = ctx;

	return inc_groups_aggregation(u->groups, (int) (u - u->groups->units), t->participant,
								  inc_txn_date(t), !(t->nulls & INC_TXN_NULL_DATE),
								  group_type);
}

/* inc_groups_unit: unit u's keys and group flags, and how it aggregates. */
IncUnit
inc_groups_unit(const IncGroups *g, int u)
{
	IncUnit		unit;

	memset(&unit, 0, sizeof(unit));
	unit.nkeys = g->units[u].nkeys;
	unit.pages = NULL;
	unit.keys = g->units[u].keys;
	unit.flags = g->units[u].flags;
	unit.aggregate = UnitAggregate;
	unit.aggregate_ctx = &g->units[u];
	return unit;
}

/*
 * inc_groups_aggregation: the aggregation key (docs/reference.md,
 * Participant hierarchies).  Without group_type: the key itself when it
 * is a group on any date, else its group on date, else itself.  With
 * group_type: the first of the key and its ancestors on date whose type
 * it is, else the key.  The walk up takes at most one step per node (the
 * table refuses cycles; one stored without the check ends it too).
 */
int
inc_groups_aggregation(const IncGroups *g, int u, int index, int32_t date, bool has_date,
					   const char *group_type)
{
	int			node = g->units[u].nodes[index];
	int			steps;

	if (group_type == NULL)
	{
		const Node *n = &g->nodes[node];
		int			k;

		if (n->is_group || !has_date)
			return index;
		k = GroupOn(n, date);
		return k >= 0 ? g->nodes[k].index : index;
	}
	for (steps = 0; node >= 0 && steps <= g->nnodes; steps++)
	{
		const Node *n = &g->nodes[node];

		if (n->type && strcmp(n->type, group_type) == 0)
			return n->index;
		if (!has_date)
			break;
		node = GroupOn(n, date);
	}
	return index;
}
