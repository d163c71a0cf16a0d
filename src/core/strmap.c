/*
 * strmap.c
 *    String-keyed hash map with open addressing and linear probing.
 *
 * The engine looks every transaction's SKU up here, so lookups must be
 * cheap: one FNV-1a pass over the key, then probing compares the stored
 * hash before the string.  The table doubles at 50% load.
 */
#include <string.h>

#include "strmap.h"

static uint32_t
HashString(const char *s)
{
	uint32_t	h = 2166136261u;

	for (; *s; s++)
	{
		h ^= (unsigned char) *s;
		h *= 16777619u;
	}
	return h;
}

static IncStrMapEntry *
FindEntry(const IncStrMap *map, const char *key, uint32_t hash)
{
	uint32_t	i = hash & map->mask;

	for (;;)
	{
		IncStrMapEntry *e = &map->entries[i];

		if (e->key == NULL || (e->hash == hash && strcmp(e->key, key) == 0))
			return e;
		i = (i + 1) & map->mask;
	}
}

/* inc_strmap_create: an empty map. */
IncStrMap *
inc_strmap_create(void)
{
	IncStrMap  *map = inc_alloc(sizeof(IncStrMap));

	map->mask = 15;
	map->entries = inc_alloc(sizeof(IncStrMapEntry) * 16);
	return map;
}

/* inc_strmap_get: the value stored for key, or NULL. */
void *
inc_strmap_get(const IncStrMap *map, const char *key)
{
	IncStrMapEntry *e = FindEntry(map, key, HashString(key));

	return e->key ? e->value : NULL;
}

static void
Grow(IncStrMap *map)
{
	IncStrMapEntry *old = map->entries;
	uint32_t	oldcap = map->mask + 1;
	uint32_t	i;

	if (oldcap >= (1u << 30))
		inc_fail(INC_ERR_RANGE, "too many keys in incentive index");
	map->mask = oldcap * 2 - 1;
	map->entries = inc_alloc(sizeof(IncStrMapEntry) * oldcap * 2);
	for (i = 0; i < oldcap; i++)
	{
		if (old[i].key)
			*FindEntry(map, old[i].key, old[i].hash) = old[i];
	}
}

/* inc_strmap_slot: the value slot for key, created holding NULL when absent. */
void **
inc_strmap_slot(IncStrMap *map, const char *key)
{
	uint32_t	hash = HashString(key);
	IncStrMapEntry *e = FindEntry(map, key, hash);

	if (e->key == NULL)
	{
		if ((map->count + 1) * 2 > map->mask + 1)
		{
			Grow(map);
			e = FindEntry(map, key, hash);
		}
		e->key = key;
		e->hash = hash;
		e->value = NULL;
		map->count++;
	}
	return &e->value;
}
