/*
 * strmap.h
 *    A string-keyed hash map (open addressing, linear probing), for the engine's
 *    SKU index and unit tables.  Keys are not copied: they must outlive the
 *    map.  Memory comes from inc_alloc and is never freed individually.
 */
#ifndef INC_STRMAP_H
#define INC_STRMAP_H

#include "../numbers/core.h"

typedef struct IncStrMapEntry
{
	const char *key;			/* NULL: empty slot */
	uint32_t	hash;
	uint32_t	len;			/* strlen(key) */
	void	   *value;
} IncStrMapEntry;

typedef struct IncStrMap
{
	uint32_t	mask;			/* capacity - 1 (capacity a power of 2) */
	uint32_t	count;
	IncStrMapEntry *entries;
} IncStrMap;

extern IncStrMap *inc_strmap_create(void);

/* inc_strmap_get: the value stored for key, or NULL. */
extern void *inc_strmap_get(const IncStrMap *map, const char *key);

/*
 * inc_strmap_get_len: the same for the len bytes at key (no NUL needed):
 * what a host reading text in place looks up.
 */
extern void *inc_strmap_get_len(const IncStrMap *map, const char *key, size_t len);

/*
 * inc_strmap_slot: the value slot for key, created (holding NULL) when
 * absent; key is kept by pointer.
 */
extern void **inc_strmap_slot(IncStrMap *map, const char *key);

#endif							/* INC_STRMAP_H */
