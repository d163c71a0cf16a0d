/*
 * txn_source_int.h
 *    Private to src/pg/read/: the state of a transaction source (struct
 *    TxnSource), its records and slots, and what its files share:
 *    txn_source.c (open, close), txn_receive.c (the rows into the store),
 *    txn_order.c (identity, key order) and txn_units.c (the units handed
 *    out).  The interface is txn_source.h.
 *
 * The relation is checked and read by txn_relation.c: one prepared query
 * run as a whole, whose rows are pushed into a DestReceiver (txn_receive.c)
 * that reads every column in place, skips a row whose SKU no offer
 * mentions, resolves the SKU, unit and transaction type to small ids and
 * writes one compact record per row into the store (txn_store.h) under the
 * hash of its participant_key.  A one-participant read filters on
 * participant_key in the query, so the index on it serves; a through_date
 * read filters on transaction_date there too, so nothing after it is
 * stored or checked.
 *
 * Records hold the participant key and the transaction_id (as a text
 * datum, so an output row points at it) after a fixed part; numbers are
 * the exact decimals, 64-bit when they fit.  A NULL transaction_id,
 * participant_key or sku_key is an error at once (the row cannot be
 * placed); a NULL in another column is a flag of the record (IncTxn.nulls),
 * an error only when the engine computes a figure that needs the column
 * (docs/reference.md, Errors).  A batch of the store is then
 * gathered by participant (a hash table of slots, then a counting sort of
 * the records), and each participant's records become the IncTxns the
 * engine reads (txn_units.c).
 *
 * Identity: a transaction_id may appear once.  When no unique index on
 * transaction_id alone guarantees it, every read row also goes (id,
 * participant) into a second store partitioned by id, checked batch by
 * batch before any participant is calculated: a repeat is an error naming
 * the id and both participants, or the one participant twice (txn_order.c).
 */
#ifndef INC_TXN_SOURCE_INT_H
#define INC_TXN_SOURCE_INT_H

#include "postgres.h"

#include "common/hashfn.h"
#include "storage/buffile.h"
#include "tcop/dest.h"
#include "utils/varlena.h"

#include "core/util/strmap.h"
#include "pg/read/txn_source.h"
#include "pg/read/txn_store.h"

/* Bytes of a transaction record per row, for the store's first estimate. */
#define RECORD_ESTIMATE 96

/*
 * One transaction as stored.  After the fixed part: the wide
 * coefficients (when flagged), the unit and the key index of a member of
 * the participant groups (when flagged), a matched return's matching date
 * (an int32, REC_MATCHED) and the currency's id (a uint16, REC_CURRENCY),
 * the participant key and a NUL, the grower_key and a NUL (REC_GROWER),
 * then at the next 4-byte boundary the transaction_id as a text datum
 * (4-byte header) followed by a NUL.
 */
typedef struct TxnRec
{
	int32		date;
	int32		sku_id;
	uint16		uom_id;
	uint16		type_id;
	uint32		plen;
	uint32		idlen;
	uint8		qscale;
	uint8		ascale;
	uint8		flags;
	uint8		more;			/* REC_MATCHED, REC_CURRENCY, REC_GROWER */
	int64		quantity;		/* coefficients, unless wide */
	int64		amount;
} TxnRec;

#define REC_WIDE_QUANTITY	0x01
#define REC_WIDE_AMOUNT		0x02
#define REC_NULLS_SHIFT		2	/* the IncTxn.nulls flags, shifted */
#define REC_MEMBER			0x80	/* a key of the participant groups */
#define REC_MATCHED			0x01	/* TxnRec.more: a matched return */
#define REC_CURRENCY		0x02	/* TxnRec.more: a currency */
#define REC_GROWER			0x04	/* TxnRec.more: a grower_key */

/* A member's place, after the wide coefficients (REC_MEMBER). */
typedef struct RecMember
{
	int32		unit;			/* groups.h */
	int32		index;			/* among the unit's keys */
} RecMember;

/* An (id, participant) pair of the identity check: lengths, then both. */
typedef struct IdRec
{
	uint32		idlen;
	uint32		plen;
	/* id, NUL, participant, NUL */
} IdRec;

/*
 * A key of the tables by participant: its bytes, their length and the
 * hash its records are stored under (StoreHash in txn_receive.c: for a
 * member of the participant groups, its unit's).
 */
typedef struct PartKey
{
	const char *key;
	uint32		len;
	uint32		hash;
} PartKey;

/*
 * A participant of the batch in memory (TxnSource.slots), or one unit of
 * the participant groups (its first key stands for it).
 */
typedef struct Participant
{
	const char *key;
	uint32		plen;
	int32		unit;			/* -1: a participant in no group */
	uint32		first;			/* its records: order[first .. first + n) */
	uint32		n;
	uint32		placed;
	struct FileUnit *file;		/* a batch in a file: where its records are */
} Participant;

/* An entry of the batch's table of participants (TxnSource.slot_table). */
typedef struct SlotEntry
{
	PartKey		k;
	uint32		index;			/* its participant in TxnSource.slots */
	char		status;			/* simplehash's */
} SlotEntry;

/*
 * FileUnit: the records of one unit of a batch that went to a file whole
 * (txn_store_in_file), in a temporary file of their own, read a page at a
 * time by the engine (IncTxnPages): each record is its length (a Size)
 * and its bytes.  PAGE_SLOTS pages are in memory at once, taking about a
 * quarter of work_mem (PageTxns).
 */
#define PAGE_SLOTS	8
#define PAGE_BYTES_PER_TXN	(sizeof(IncTxn) + 128)

typedef struct FileUnit
{
	BufFile    *file;
	int			npages;
	int			pages_cap;
	int		   *page_filenos;	/* per page: where it starts */
	off_t	   *page_offsets;
	Size	   *page_bytes;		/* per page: its bytes */
	bool	   *members;		/* per key of its unit: a record of it seen */
	const TxnSource *src;
	IncTxnPages pages;
	char	   *slots[PAGE_SLOTS];	/* the pages' bytes in memory */
	Size		slot_size[PAGE_SLOTS];
} FileUnit;

/* A participant counted (count_participants). */
typedef struct Counted
{
	PartKey		k;
	int32		unit;			/* its unit of the participant groups, or -1 */
	uint64		records;		/* its transactions in the store */
	int			range;			/* ordered: its range of keys (txn_reorder) */
	char		status;			/* simplehash's */
} Counted;

/*
 * MixHash: a hash mixed for a table's slots: a batch of the store holds
 * only hashes whose bits 16 and up share the batch number (txn_store.c),
 * so its own low bits would crowd a large table's slots into a few runs.
 */
static inline uint32
MixHash(uint32 hash)
{
	return (uint32) (((uint64) hash * 0x9E3779B97F4A7C15ULL) >> 32);
}

/* PartKeyEqual: two keys of the same participant. */
static inline bool
PartKeyEqual(PartKey a, PartKey b)
{
	return a.hash == b.hash && a.len == b.len && memcmp(a.key, b.key, a.len) == 0;
}

/* The batch's participants by key (SlotEntry; txn_units.c). */
#define SH_PREFIX		slots
#define SH_ELEMENT_TYPE	SlotEntry
#define SH_KEY_TYPE		PartKey
#define SH_KEY			k
#define SH_HASH_KEY(tb, key)	MixHash((key).hash)
#define SH_EQUAL(tb, a, b)	PartKeyEqual(a, b)
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* The participants counted, by key (count_participants). */
#define SH_PREFIX		counted
#define SH_ELEMENT_TYPE	Counted
#define SH_KEY_TYPE		PartKey
#define SH_KEY			k
#define SH_HASH_KEY(tb, key)	murmurhash32((key).hash)
#define SH_EQUAL(tb, a, b)	PartKeyEqual(a, b)
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

typedef struct Receiver
{
	DestReceiver pub;
	TxnSource  *src;
} Receiver;

struct TxnSource
{
	char	   *relname;		/* quoted, qualified name, for messages */
	int			optional;		/* its optional columns (TXN_HAS_*) */
	IncEngine  *engine;
	MemoryContext engine_context;	/* where the engine interns units */
	const char *participant;	/* the one participant read, or NULL */
	size_t		participant_len;
	const IncGroups *membership;	/* the participant groups, or NULL */
	int			participant_unit;	/* the one participant's unit, or -1 */
	const char **unit_keys;		/* by unit: its first key (stands for it) */
	uint32	   *unit_key_lens;
	uint32	   *unit_hashes;	/* by unit: the hash of that key */
	int		   *unit_offsets;	/* by unit: its first key's place in seen */
	bool	   *seen;			/* per key of the groups: the caller read a row of it */
	bool		hiding;			/* row-level security hides rows from the caller */
	bool		reading_hidden; /* the read of the members the caller cannot see */
	const char **hidden;		/* their keys (and the groups'), read as the owner */
	int			nhidden;
	MemoryContext context;		/* where the source lives */
	MemoryContext row_context;	/* reset after every row */
	ErrorContextCallback *outer_context;	/* the error context around the read */
	TxnPosition *position;		/* the row a read error is about */
	TxnStore   *store;			/* transactions by participant */
	TxnStore   *ids;			/* (id, participant) by id, or NULL */
	IncStrMap  *types;			/* transaction_type -> id, as a pointer-sized int */
	const char **type_names;	/* by id; [0] is "" (a NULL type); the
								 * currencies' names are interned here too */
	int			ntypes;
	int			types_cap;
	const char **sku_names;		/* by id: the engine's names */
	const char **uom_names;		/* by id: the engine's names; [0] is "" (NULL) */
	int			uom_names_cap;
	/* the batch being handed out */
	slots_hash *slot_table;		/* its participants by key */
	Participant *slots;			/* its participants, in the order first read */
	uint32		nslots;
	uint32		slots_cap;
	uint32		next_slot;
	TxnRec	  **order;			/* the batch's records, by participant */
	uint32		last_nunits;	/* participants in the last batch */
	uint32	   *slot_of;		/* per record of the batch: its slot */
	uint32		order_cap;
	MemoryContext file_context; /* a batch in a file: its keys and FileUnits */
	int			page_txns;		/* transactions per page (PageTxns) */
	FileUnit   *handed;			/* the FileUnit handed out last */
	/* what a refresh asked for (TxnSourceOptions) */
	int			share;
	int			nshares;
	uint64		(*share_hash) (const char *key, size_t len, void *arg);
	void	   *share_hash_arg;
	bool		ordered;
	Oid			collation;		/* ordered: the keys' collation (0: bytes) */
	uint32	   *sorted;			/* ordered: the batch's slots by key */
	uint32		nsorted;
	uint32		sorted_cap;
	/* count_participants: every participant read, once */
	bool		counting;
	counted_hash *counted;		/* in counted_context */
	uint64		nparticipants;	/* of them, participants of the caller's rows */
	MemoryContext counted_context;
};

/* MemberOf: where a record's member place is (REC_MEMBER). */
static inline const char *
MemberOf(const TxnRec *r)
{
	return (const char *) r + sizeof(TxnRec) +
		((r->flags & REC_WIDE_QUANTITY) ? sizeof(inc_int128) : 0) +
		((r->flags & REC_WIDE_AMOUNT) ? sizeof(inc_int128) : 0);
}

/* MoreOf: where a record's matching date and currency id are. */
static inline const char *
MoreOf(const TxnRec *r)
{
	return MemberOf(r) + ((r->flags & REC_MEMBER) ? sizeof(RecMember) : 0);
}

/* KeyOf: the participant key of a record. */
static inline const char *
KeyOf(const TxnRec *r)
{
	return MoreOf(r) + ((r->more & REC_MATCHED) ? sizeof(int32) : 0) +
		((r->more & REC_CURRENCY) ? sizeof(uint16) : 0);
}

/* GrowerOf: the grower_key of a record (REC_GROWER), NUL-terminated. */
static inline const char *
GrowerOf(const TxnRec *r)
{
	return KeyOf(r) + r->plen + 1;
}

/* RecordIdOf: the transaction_id datum of a record. */
static inline const char *
RecordIdOf(const TxnRec *r)
{
	const char *p = GrowerOf(r);

	if (r->more & REC_GROWER)
		p += strlen(p) + 1;
	return (const char *) TYPEALIGN(4, p);
}

/* RecordMember: a member record's unit and key index. */
static inline RecMember
RecordMember(const TxnRec *r)
{
	RecMember	m;

	memcpy(&m, MemberOf(r), sizeof(RecMember));
	return m;
}

/*
 * UnitKeyOf: the key of a record's slot, *len its length: its
 * unit's first key for a member, else its participant's.
 */
static inline const char *
UnitKeyOf(const TxnSource *src, const TxnRec *r, uint32 *len, int32 *unit)
{
	if (r->flags & REC_MEMBER)
	{
		*unit = RecordMember(r).unit;
		*len = src->unit_key_lens[*unit];
		return src->unit_keys[*unit];
	}
	*unit = -1;
	*len = r->plen;
	return KeyOf(r);
}

/* CompareKeys: two keys in the order of collation (0: bytewise). */
static inline int
CompareKeys(const char *a, uint32 alen, const char *b, uint32 blen, Oid collation)
{
	int			c;

	if (OidIsValid(collation))
		return varstr_cmp(a, (int) alen, b, (int) blen, collation);
	c = memcmp(a, b, Min(alen, blen));
	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/* ---- across the files ---------------------------------------------------- */

/* txn_receive.c */
extern void txn_receiver_init(Receiver *receiver, TxnSource *src);

/* txn_order.c */
extern void txn_check_identity(TxnSource *src);
extern void txn_reorder(TxnSource *src);

/* txn_units.c */
extern void txn_release_file_unit(FileUnit *fu);
extern void txn_close_file_units(TxnSource *src);

#endif							/* INC_TXN_SOURCE_INT_H */
