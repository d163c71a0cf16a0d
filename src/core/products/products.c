/*
 * products.c
 *    The product catalog (products.h): nodes by key in a map, each with
 *    its parent, its children and its own SKU windows.  Children are
 *    linked when the first product is reached after a node was added, so
 *    nodes and windows may come in any order.  A catalog the host checked
 *    has no cycle; should one come anyway, a walk stops at the depth of
 *    the number of nodes.
 */
#include <stdint.h>
#include <string.h>

#include "products.h"
#include "../util/strmap.h"

typedef struct Window
{
	const char *sku_key;
	int32_t		start;
	int32_t		end;
} Window;

typedef struct Node
{
	const char *key;
	const char *parent_key;		/* NULL: a root */
	int			first_child;	/* index into nodes, -1 for none */
	int			next_sibling;	/* index into nodes, -1 for none */
	int			nwindows;
	int			windows_cap;
	Window	   *windows;
} Node;

struct IncProducts
{
	IncStrMap  *index;			/* product_key -> node index + 1 */
	int			nnodes;
	int			nodes_cap;
	Node	   *nodes;
	bool		linked;			/* children lists match the nodes */
	int		   *stack;			/* a walk's node indexes, nnodes long */
	int		   *depths;			/* and their depths */
};

static const char *
Copy(const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *c = inc_alloc(n);

	memcpy(c, s, n);
	return c;
}

IncProducts *
inc_products_create(void)
{
	IncProducts *p = inc_alloc(sizeof(IncProducts));

	p->index = inc_strmap_create();
	return p;
}

/* NodeOf: the index of node key, created when absent. */
static int
NodeOf(IncProducts *p, const char *key)
{
	void	   *found = inc_strmap_get(p->index, key);
	Node	   *n;

	if (found != NULL)
		return (int) ((intptr_t) found - 1);
	if (p->nnodes == p->nodes_cap)
		p->nodes = inc_grow(p->nodes, p->nnodes, &p->nodes_cap, sizeof(Node), 16);
	n = &p->nodes[p->nnodes];
	memset(n, 0, sizeof(Node));
	n->key = Copy(key);
	n->first_child = -1;
	n->next_sibling = -1;
	*inc_strmap_slot(p->index, n->key) = (void *) (intptr_t) (p->nnodes + 1);
	p->linked = false;
	return p->nnodes++;
}

void
inc_products_add_node(IncProducts *p, const char *product_key, const char *parent_key)
{
	int			i = NodeOf(p, product_key);

	p->nodes[i].parent_key = parent_key ? Copy(parent_key) : NULL;
	p->linked = false;
}

void
inc_products_add_window(IncProducts *p, const char *sku_key, const char *product_key,
						int32_t start, int32_t end)
{
	int			i = NodeOf(p, product_key);	/* may move the nodes */
	Node	   *n = &p->nodes[i];

	if (n->nwindows == n->windows_cap)
		n->windows = inc_grow(n->windows, n->nwindows, &n->windows_cap, sizeof(Window), 4);
	n->windows[n->nwindows++] = (Window)
	{
		Copy(sku_key), start, end
	};
}

bool
inc_products_known(const IncProducts *p, const char *product_key)
{
	return inc_strmap_get(p->index, product_key) != NULL;
}

/* Link: every node's children, from the parents' keys. */
static void
Link(IncProducts *p)
{
	int			i;

	for (i = 0; i < p->nnodes; i++)
	{
		p->nodes[i].first_child = -1;
		p->nodes[i].next_sibling = -1;
	}
	for (i = p->nnodes - 1; i >= 0; i--)
	{
		Node	   *n = &p->nodes[i];
		void	   *parent;

		inc_check_interrupts();
		if (n->parent_key == NULL ||
			(parent = inc_strmap_get(p->index, n->parent_key)) == NULL)
			continue;
		n->next_sibling = p->nodes[(intptr_t) parent - 1].first_child;
		p->nodes[(intptr_t) parent - 1].first_child = i;
	}
	p->stack = inc_alloc(sizeof(int) * (p->nnodes + 1));
	p->depths = inc_alloc(sizeof(int) * (p->nnodes + 1));
	p->linked = true;
}

void
inc_products_reach(IncProducts *p, const char *product_key, IncProductReachFn fn, void *ctx)
{
	void	   *found = inc_strmap_get(p->index, product_key);
	int			top = 0;

	if (found == NULL)
		return;
	if (!p->linked)
		Link(p);
	p->stack[top] = (int) ((intptr_t) found - 1);
	p->depths[top++] = 0;
	while (top > 0)
	{
		int			i = p->stack[--top];
		int			depth = p->depths[top];
		const Node *n = &p->nodes[i];
		int			w,
					c;

		inc_check_interrupts();
		for (w = 0; w < n->nwindows; w++)
			fn(ctx, n->windows[w].sku_key, n->windows[w].start, n->windows[w].end,
			   depth + 1);
		if (depth + 1 >= p->nnodes)
			continue;
		for (c = n->first_child; c >= 0; c = p->nodes[c].next_sibling)
		{
			if (top == p->nnodes)
				break;
			p->stack[top] = c;
			p->depths[top++] = depth + 1;
		}
	}
}
