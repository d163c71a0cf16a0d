/*
 * products.h
 *    The product catalog (docs/reference.md, Products): product nodes (a
 *    brand, a line, a category, a segment) forming a forest, and the dated
 *    windows in which a SKU belongs to a node.  A SKU is in node N on a
 *    day when it has a window containing that day for N or for a
 *    descendant of N; its distance to N is 1 + the edges from the window's
 *    node up to N.
 *
 * The host adds every node and window, then asks what a product reaches.
 * Keys are copied; memory comes from inc_alloc.
 */
#ifndef INC_PRODUCTS_H
#define INC_PRODUCTS_H

#include "../numbers/core.h"

typedef struct IncProducts IncProducts;

/* A window of the catalog: sku_key in a node from start to end (both inclusive). */
typedef void (*IncProductReachFn) (void *ctx, const char *sku_key, int32_t start,
								   int32_t end, int distance);

/* inc_products_create: an empty catalog. */
extern IncProducts *inc_products_create(void);

/* inc_products_add_node: node product_key under parent_key (NULL: a root). */
extern void inc_products_add_node(IncProducts *p, const char *product_key,
								  const char *parent_key);

/*
 * inc_products_add_window: sku_key belongs to product_key from start to end,
 * days since 2000-01-01, both inclusive (INT32_MIN and INT32_MAX: open).
 */
extern void inc_products_add_window(IncProducts *p, const char *sku_key,
									const char *product_key, int32_t start,
									int32_t end);

/* inc_products_known: is product_key a node of the catalog? */
extern bool inc_products_known(const IncProducts *p, const char *product_key);

/*
 * inc_products_reach: every window of product_key and of its descendants,
 * with its distance to product_key; nothing for an unknown product.
 */
extern void inc_products_reach(IncProducts *p, const char *product_key,
							   IncProductReachFn fn, void *ctx);

#endif							/* INC_PRODUCTS_H */
