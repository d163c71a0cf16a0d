/*
 * strmap.c
 *    String-keyed hash map with open addressing and linear probing.
 *
 * The engine looks every transaction's SKU up here, so lookups must be
 * cheap: one pass over the key eight bytes at a time, then probing
 * compares the stored hash and length before the bytes.  The table
 * doubles at 50% load.
 */
#include <string.h>

#include "strmap.h"

/*
 * HashBytes: a hash of len bytes, eight at a time (a multiply and a shift
 * per word), so that a SKU key costs two or three steps.
 */
static uint32_t
HashBytes(const char *s, size_t len)
{
	uint64_t	h = 0x9E3779B97F4A7C15ULL ^ len;
	uint64_t	w;

	while (len >= 8)
	{
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
		h ^= h >> 31;
		s += 8;
		len -= 8;
	}
	if (len > 0)
	{
		/* the last 1..7 bytes, little-endian, as the words above */
		w = 0;
		while (len > 0)
		{
			len--;
			w = (w << 8) | (unsigned char) s[len];
		}
		h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
		h ^= h >> 31;
	}
	h *= 0x94D049BB133111EBULL;
	return (uint32_t) (h >> 32);
}

static uint32_t
HashString(const char *s)
{
	return HashBytes(s, strlen(s));
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
	return inc_strmap_get_len(map, key, strlen(key));
}

/* inc_strmap_get_len: the value stored for the len bytes at key, or NULL. */
void *
inc_strmap_get_len(const IncStrMap *map, const char *key, size_t len)
{
	uint32_t	hash = HashBytes(key, len);
	uint32_t	i = hash & map->mask;

	for (;;)
	{
		const IncStrMapEntry *e = &map->entries[i];

		if (e->key == NULL)
			return NULL;
		if (e->hash == hash && e->len == len && memcmp(e->key, key, len) == 0)
			return e->value;
		i = (i + 1) & map->mask;
	}
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
		e->len = (uint32_t) strlen(key);
		e->value = NULL;
		map->count++;
	}
	return &e->value;
}
