/*
 * txn_source.c
 *    Reads the transactions of a calculation into a participant-partitioned
 *    store and hands them out one participant at a time (see txn_source.h).
 *
 * The relation is checked and read by txn_relation.c: one prepared query
 * run as a whole, whose rows are pushed into a DestReceiver here that
 * reads every column in place, skips a row whose SKU no offer mentions,
 * resolves the SKU, unit and transaction type to small ids and writes one
 * compact record per row into the store (txn_store.h) under the hash of
 * its participant_key.  A one-participant read filters on participant_key
 * in the query, so the index on it serves; a through_date read filters on
 * transaction_date there too, so nothing after it is stored or checked.
 *
 * Records hold the participant key and the transaction_id (as a text
 * datum, so an output row points at it) after a fixed part; numbers are
 * the exact decimals, 64-bit when they fit.  A NULL transaction_id,
 * participant_key or sku_key is an error at once (the row cannot be
 * placed); a NULL in another column is a flag of the record (IncTxn.nulls),
 * an error only when the engine computes a figure that needs the column
 * (docs/reference.md, Errors).  A batch of the store is then
 * grouped by participant (a hash table, then a counting sort of the
 * records), and each participant's records become the IncTxns the engine
 * reads.
 *
 * Identity: a transaction_id may appear once.  When no unique index on
 * transaction_id alone guarantees it, every read row also goes (id,
 * participant) into a second store partitioned by id, checked batch by
 * batch before any participant is calculated: a repeat is an error naming
 * the id and both participants (or the one participant twice).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "storage/buffile.h"
#include "tcop/dest.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "core/util/strmap.h"
#include "pg/base/compat.h"
#include "pg/load/participant_groups.h"
#include "pg/base/convert.h"
#include "pg/read/txn_relation.h"
#include "pg/read/txn_source.h"
#include "pg/read/txn_store.h"

/* Bytes of a transaction record per row, for the store's first estimate. */
#define RECORD_ESTIMATE 96

/*
 * One transaction as stored.  After the fixed part: the wide
 * coefficients (when flagged), the unit and the key index of a member of
 * the participant groups (when flagged), the participant key and a NUL,
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
	int64		quantity;		/* coefficients, unless wide */
	int64		amount;
} TxnRec;

#define REC_WIDE_QUANTITY	0x01
#define REC_WIDE_AMOUNT		0x02
#define REC_NULLS_SHIFT		2	/* the IncTxn.nulls flags, shifted */
#define REC_MEMBER			0x80	/* a key of the participant groups */

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
 * One participant of the batch in memory, or one unit of the participant
 * groups (its first key stands for it).
 */
typedef struct Participant
{
	uint32		hash;
	uint32		plen;
	const char *key;			/* NULL: empty slot */
	int32		unit;			/* -1: a participant in no group */
	uint32		first;			/* its records: order[first .. first + n) */
	uint32		n;
	uint32		placed;
	struct FileUnit *file;		/* a batch in a file: where its records are */
} Participant;

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

#define MAX_SMALL_ID 65535		/* units and transaction types per call */

/* A participant counted (count_participants). */
typedef struct Counted
{
	uint32		hash;
	uint32		len;
	const char *key;			/* NULL: empty slot */
	int32		unit;			/* its unit of the participant groups, or -1 */
	uint64		records;		/* its transactions in the store */
	int			range;			/* ordered: its range of keys (Reorder) */
} Counted;

typedef struct Receiver
{
	DestReceiver pub;
	TxnSource  *src;
} Receiver;

struct TxnSource
{
	char	   *relname;		/* quoted, qualified name, for messages */
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
	const char **type_names;	/* by id; [0] is "" (a NULL type) */
	int			ntypes;
	int			types_cap;
	const char **sku_names;		/* by id: the engine's names */
	const char **uom_names;		/* by id: the engine's names; [0] is "" (NULL) */
	int			uom_names_cap;
	/* the batch being handed out */
	Participant	   *groups;
	uint32		groups_mask;
	uint32		next_group;
	TxnRec	  **order;			/* the batch's records, by participant */
	uint32		last_ngroups;	/* participants in the last batch */
	uint32	   *slot_of;		/* per record of the batch: its group's slot */
	uint32		order_cap;
	MemoryContext file_context; /* a batch in a file: its keys and FileUnits */
	int			page_txns;		/* transactions per page (PageTxns) */
	FileUnit   *handed;			/* the FileUnit handed out last */
	/* what a refresh asked for (TxnSourceOptions) */
	int			share;
	int			nshares;
	bool		ordered;
	Oid			collation;		/* ordered: the keys' collation (0: bytes) */
	uint32	   *sorted;			/* ordered: the batch's group slots by key */
	uint32		nsorted;
	uint32		sorted_cap;
	/* count_participants: every participant read, once */
	bool		counting;
	Counted    *counted;
	uint32		counted_mask;
	uint64		ncounted;		/* its entries */
	uint64		nparticipants;	/* of them, participants of the caller's rows */
	MemoryContext counted_context;
};

/* ---- the receiver -------------------------------------------------------- */

/*
 * NullColumn: a NULL transaction_id, participant_key or sku_key, named with
 * the transaction.
 */
static pg_noreturn void
NullColumn(TxnSource *src, int col, Datum *values, bool *nulls);

static void
NullColumn(TxnSource *src, int col, Datum *values, bool *nulls)
{
	/* the error is the row's, not the query's: no SPI statement context */
	error_context_stack = src->outer_context;
	src->position->participant_key = nulls[C_PARTICIPANT] ? NULL :
		TextDatumGetCString(values[C_PARTICIPANT]);
	src->position->transaction_id = nulls[C_ID] ? NULL : TextDatumGetCString(values[C_ID]);
	if (nulls[C_ID])
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("a transaction in relation %s has a NULL transaction_id",
						src->relname)));
	ereport(ERROR,
			(errcode(ERRCODE_NOT_NULL_VIOLATION),
			 errmsg("column \"%s\" of transaction \"%s\" in relation %s is NULL",
					txn_column_name(col), TextDatumGetCString(values[C_ID]),
					src->relname)));
}

/* TypeId: the id of a transaction type (from 1), interned. */
static int
TypeId(TxnSource *src, const char *s, size_t len)
{
	void	   *found = inc_strmap_get_len(src->types, s, len);
	MemoryContext old;
	char	   *name;

	if (found)
		return (int) (intptr_t) found;
	if (src->ntypes == MAX_SMALL_ID)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("relation %s has more than %d transaction types", src->relname,
						MAX_SMALL_ID)));
	old = MemoryContextSwitchTo(src->context);
	if (src->ntypes + 1 == src->types_cap)
	{
		src->types_cap *= 2;
		src->type_names = repalloc(src->type_names, sizeof(char *) * src->types_cap);
	}
	name = pnstrdup(s, len);
	src->type_names[++src->ntypes] = name;
	*inc_strmap_slot(src->types, name) = (void *) (intptr_t) src->ntypes;
	MemoryContextSwitchTo(old);
	return src->ntypes;
}

/* UomId: the engine's id of a unit (interned there), its name noted. */
static inline int
UomId(TxnSource *src, const char *s, size_t len)
{
	MemoryContext old = MemoryContextSwitchTo(src->engine_context);
	int			id = inc_engine_uom_id(src->engine, s, len);

	MemoryContextSwitchTo(old);
	if (id >= src->uom_names_cap)
	{
		int			cap = Max(16, id * 2);

		if (id > MAX_SMALL_ID)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("relation %s has more than %d units of measure", src->relname,
							MAX_SMALL_ID)));
		old = MemoryContextSwitchTo(src->context);
		src->uom_names = src->uom_names ?
			repalloc(src->uom_names, sizeof(char *) * cap) : palloc(sizeof(char *) * cap);
		MemoryContextSwitchTo(old);
		memset(src->uom_names + src->uom_names_cap, 0,
			   sizeof(char *) * (cap - src->uom_names_cap));
		src->uom_names_cap = cap;
	}
	if (src->uom_names[id] == NULL)
		src->uom_names[id] = inc_engine_uom_key(src->engine, id);
	return id;
}

/* PutNumber: a decimal's coefficient in the fixed part, or wide at *wide. */
static inline char *
PutNumber(const IncDec *d, int64 *narrow, uint8 *scale, uint8 *flags, uint8 flag, char *wide)
{
	*scale = (uint8) d->scale;
	if (d->coef >= PG_INT64_MIN && d->coef <= PG_INT64_MAX)
	{
		*narrow = (int64) d->coef;
		return wide;
	}
	*flags |= flag;
	memcpy(wide, &d->coef, sizeof(d->coef));
	return wide + sizeof(d->coef);
}

/* GrowCounted: twice the slots of the participants counted (or the first 1024). */
static void
GrowCounted(TxnSource *src)
{
	Counted	   *old = src->counted;
	uint32		oldmask = src->counted_mask;
	uint32		i;

	src->counted_mask = old ? oldmask * 2 + 1 : 1023;
	src->counted = MemoryContextAllocZero(src->counted_context, sizeof(Counted) * (src->counted_mask + 1));
	for (i = 0; old && i <= oldmask; i++)
		if (old[i].key)
		{
			uint32		j = murmurhash32(old[i].hash) & src->counted_mask;

			while (src->counted[j].key)
				j = (j + 1) & src->counted_mask;
			src->counted[j] = old[i];
		}
	if (old)
		pfree(old);
}

/* FindCounted: the slot of a participant counted, or the empty slot for it. */
static inline Counted *
FindCounted(TxnSource *src, uint32 hash, const char *key, uint32 len)
{
	uint32		i = murmurhash32(hash) & src->counted_mask;

	for (;; i = (i + 1) & src->counted_mask)
	{
		Counted	   *e = &src->counted[i];

		if (e->key == NULL ||
			(e->hash == hash && e->len == len && memcmp(e->key, key, len) == 0))
			return e;
	}
}

/*
 * CountParticipant: a participant's key (len bytes; hash: its record's,
 * StoreHash) of unit, counted once; a participant read only as the owner
 * (reading_hidden) has an entry (Reorder moves its records) but is not
 * one of the participants read.
 */
static Counted *
CountParticipant(TxnSource *src, uint32 hash, const char *key, uint32 len, int32 unit)
{
	Counted    *e = FindCounted(src, hash, key, len);
	char	   *copy;

	if (e->key != NULL)
		return e;
	copy = MemoryContextAlloc(src->counted_context, Max(len, 1));
	memcpy(copy, key, len);
	e->hash = hash;
	e->len = len;
	e->key = copy;
	e->unit = unit;
	if (!src->reading_hidden)
		src->nparticipants++;
	if (++src->ncounted * 2 > src->counted_mask + 1)
	{
		GrowCounted(src);
		e = FindCounted(src, hash, copy, len);
	}
	return e;
}

/*
 * StoreHash: the hash a participant's records are stored, grouped and
 * shared under: that of its aggregation unit's first key for a member of
 * the participant groups (so a group and all its members stay in one
 * batch and one share), else of its own key (txn_aggregation_hash).
 */
static inline uint32
StoreHash(const TxnSource *src, int unit, const char *key, size_t len)
{
	return unit >= 0 ? src->unit_hashes[unit] : txn_aggregation_hash(key, len);
}

/* ReceiveRow: one row of the read into the stores. */
static bool
ReceiveRow(TupleTableSlot *slot, DestReceiver *self)
{
	TxnSource  *src = ((Receiver *) self)->src;
	Datum	   *values;
	bool	   *nulls;
	text	   *id,
			   *participant,
			   *type,
			   *sku,
			   *uom;
	const char *idp,
			   *pp;
	size_t		idlen,
				plen;
	int			sku_id = 0;
	IncDec		quantity = {0, 0},
				amount = {0, 0};
	uint8		null_flags;
	MemoryContext old;
	TxnRec	   *rec;
	char	   *buf,
			   *p;
	int			unit = -1;
	RecMember	member;
	uint32		hash = 0;
	bool		placed = false; /* participant, unit and hash known */
	Counted    *counted = NULL;

	CHECK_FOR_INTERRUPTS();
	old = MemoryContextSwitchTo(src->row_context);
	values = slot->tts_values;
	nulls = slot->tts_isnull;

	/*
	 * A refresh's share (the key read first: another share's row costs no
	 * more than that), by the hash of the row's unit (StoreHash: a group
	 * stays in one share), and the participants it counts, whatever their
	 * SKUs.  A row without a key is the first share's (its error is raised
	 * once).
	 */
	if (src->nshares > 1 || src->counting)
	{
		slot_getsomeattrs(slot, C_PARTICIPANT + 1);
		if (!nulls[C_PARTICIPANT])
		{
			participant = DatumGetTextPP(values[C_PARTICIPANT]);
			pp = VARDATA_ANY(participant);
			plen = VARSIZE_ANY_EXHDR(participant);
			unit = src->membership ?
				inc_groups_find(src->membership, pp, plen, &member.index) : -1;
			hash = StoreHash(src, unit, pp, plen);
			placed = true;
			if (src->nshares > 1 && txn_share_of(hash, src->nshares) != src->share)
			{
				MemoryContextSwitchTo(old);
				MemoryContextReset(src->row_context);
				return true;
			}
			if (src->counting)
				counted = CountParticipant(src, hash, pp, (uint32) plen, unit);
		}
		else if (src->nshares > 1 && src->share != 0)
		{
			MemoryContextSwitchTo(old);
			MemoryContextReset(src->row_context);
			return true;
		}
	}
	slot_getallattrs(slot);

	/* a SKU no offer mentions can never matter: skip the row */
	if (!nulls[C_SKU])
	{
		sku = DatumGetTextPP(values[C_SKU]);
		sku_id = inc_engine_sku_id(src->engine, VARDATA_ANY(sku), VARSIZE_ANY_EXHDR(sku));
		if (sku_id == 0)
		{
			MemoryContextSwitchTo(old);
			MemoryContextReset(src->row_context);
			return true;
		}
	}
	if (nulls[C_ID] || nulls[C_PARTICIPANT] || nulls[C_SKU])
		NullColumn(src, nulls[C_ID] ? C_ID : nulls[C_PARTICIPANT] ? C_PARTICIPANT : C_SKU,
				   values, nulls);
	/* the other columns' NULLs go with the record, for the engine to judge */
	null_flags = (nulls[C_TYPE] ? INC_TXN_NULL_TYPE : 0) |
		(nulls[C_DATE] ? INC_TXN_NULL_DATE : 0) |
		(nulls[C_QUANTITY] ? INC_TXN_NULL_QUANTITY : 0) |
		(nulls[C_UOM] ? INC_TXN_NULL_UOM : 0) |
		(nulls[C_AMOUNT] ? INC_TXN_NULL_AMOUNT : 0);

	id = DatumGetTextPP(values[C_ID]);
	idp = VARDATA_ANY(id);
	idlen = VARSIZE_ANY_EXHDR(id);
	if (!placed)
	{
		participant = DatumGetTextPP(values[C_PARTICIPANT]);
		pp = VARDATA_ANY(participant);
		plen = VARSIZE_ANY_EXHDR(participant);
		unit = src->membership ?
			inc_groups_find(src->membership, pp, plen, &member.index) : -1;
		hash = StoreHash(src, unit, pp, plen);
	}
	if (src->participant &&
		(src->participant_unit >= 0 ? unit != src->participant_unit :
		 plen != src->participant_len || memcmp(pp, src->participant, plen) != 0))
	{
		/* the index's equality may be looser than bytes (a collation) */
		MemoryContextSwitchTo(old);
		MemoryContextReset(src->row_context);
		return true;
	}
	if (unit >= 0 && !src->reading_hidden)
		src->seen[src->unit_offsets[unit] + member.index] = true;
	if (!(nulls[C_QUANTITY] || pg_numeric_to_dec_fast(values[C_QUANTITY], &quantity)) ||
		!(nulls[C_AMOUNT] || pg_numeric_to_dec_fast(values[C_AMOUNT], &amount)))
	{
		/* the slow path, whose errors are the row's (see NullColumn) */
		ErrorContextCallback *spi_context = error_context_stack;

		error_context_stack = src->outer_context;
		src->position->participant_key = pnstrdup(pp, plen);
		src->position->transaction_id = pnstrdup(idp, idlen);
		if (!nulls[C_QUANTITY])
			quantity = pg_numeric_to_dec(values[C_QUANTITY], "quantity",
										 src->position->transaction_id);
		if (!nulls[C_AMOUNT])
			amount = pg_numeric_to_dec(values[C_AMOUNT], "amount",
									   src->position->transaction_id);
		src->position->participant_key = src->position->transaction_id = NULL;
		error_context_stack = spi_context;
	}

	/*
	 * the record, built in the store's room: fixed part, wide numbers,
	 * member place, participant, id datum
	 */
	buf = txn_store_room(src->store, sizeof(TxnRec) + 2 * sizeof(inc_int128) +
						 sizeof(RecMember) + plen + idlen + 16);
	rec = (TxnRec *) buf;
	rec->date = nulls[C_DATE] ? 0 : DatumGetDateADT(values[C_DATE]);
	rec->sku_id = sku_id;
	rec->uom_id = 0;
	if (!nulls[C_UOM])
	{
		uom = DatumGetTextPP(values[C_UOM]);
		rec->uom_id = UomId(src, VARDATA_ANY(uom), VARSIZE_ANY_EXHDR(uom));
	}
	rec->type_id = 0;
	if (!nulls[C_TYPE])
	{
		type = DatumGetTextPP(values[C_TYPE]);
		rec->type_id = TypeId(src, VARDATA_ANY(type), VARSIZE_ANY_EXHDR(type));
	}
	rec->plen = (uint32) plen;
	rec->idlen = (uint32) idlen;
	rec->flags = (uint8) (null_flags << REC_NULLS_SHIFT);
	p = buf + sizeof(TxnRec);
	p = PutNumber(&quantity, &rec->quantity, &rec->qscale, &rec->flags, REC_WIDE_QUANTITY, p);
	p = PutNumber(&amount, &rec->amount, &rec->ascale, &rec->flags, REC_WIDE_AMOUNT, p);
	if (unit >= 0)
	{
		rec->flags |= REC_MEMBER;
		member.unit = unit;
		memcpy(p, &member, sizeof(RecMember));
		p += sizeof(RecMember);
	}
	memcpy(p, pp, plen);
	p[plen] = '\0';
	p = (char *) TYPEALIGN(4, p + plen + 1);
	SET_VARSIZE(p, VARHDRSZ + idlen);
	memcpy(p + VARHDRSZ, idp, idlen);
	p[VARHDRSZ + idlen] = '\0';
	p += VARHDRSZ + idlen + 1;
	/* partitioned by the unit: a member's by its unit's first key */
	txn_store_put_built(src->store, hash, p - buf);
	if (counted)
		counted->records++;

	if (src->ids)
	{
		IdRec	   *ir;

		buf = txn_store_room(src->ids, sizeof(IdRec) + idlen + plen + 2);
		ir = (IdRec *) buf;
		ir->idlen = (uint32) idlen;
		ir->plen = (uint32) plen;
		p = buf + sizeof(IdRec);
		memcpy(p, idp, idlen);
		p[idlen] = '\0';
		memcpy(p + idlen + 1, pp, plen);
		p[idlen + 1 + plen] = '\0';
		txn_store_put_built(src->ids, hash_bytes((const unsigned char *) idp, (int) idlen),
							sizeof(IdRec) + idlen + plen + 2);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(src->row_context);
	return true;
}

static void
ReceiverStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
ReceiverShutdown(DestReceiver *self)
{
}

static void
ReceiverDestroy(DestReceiver *self)
{
}

/*
 * Slot: the first slot of hash in a table of mask + 1 slots.  The hash is
 * mixed first: a batch of the store holds only hashes whose bits 16 and up
 * share the batch number (txn_store.c), so its own low bits would crowd a
 * large table's slots into a few runs.
 */
static inline uint32
Slot(uint32 hash, uint32 mask)
{
	return (uint32) (((uint64) hash * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

/* ---- identity ------------------------------------------------------------ */

/* An id seen in the batch of the identity check. */
typedef struct SeenId
{
	uint32		hash;
	const IdRec *rec;			/* NULL: empty slot */
} SeenId;

#define IdOf(r)				((const char *) (r) + sizeof(IdRec))
#define ParticipantOf(r)	(IdOf(r) + (r)->idlen + 1)

/* CheckIdentity: every transaction_id once, batch by batch of the id store. */
static void
CheckIdentity(TxnSource *src)
{
	while (txn_store_next_batch(src->ids))
	{
		TxnStoreIter it;
		uint32		hash;
		const IdRec *r;
		uint32		n = (uint32) txn_store_batch_count(src->ids),
					mask;
		SeenId	   *seen;

		for (mask = 15; mask + 1 < n * 2; mask = mask * 2 + 1)
			;
		seen = MemoryContextAllocZero(src->context, sizeof(SeenId) * (mask + 1));
		txn_store_iter_init(src->ids, &it);
		while ((r = txn_store_iter_next(&it, &hash)) != NULL)
		{
			uint32		i = Slot(hash, mask);

			CHECK_FOR_INTERRUPTS();
			for (;; i = (i + 1) & mask)
			{
				const IdRec *o = seen[i].rec;

				if (o == NULL)
				{
					seen[i].hash = hash;
					seen[i].rec = r;
					break;
				}
				if (seen[i].hash != hash || o->idlen != r->idlen ||
					memcmp(IdOf(o), IdOf(r), r->idlen) != 0)
					continue;
				src->position->participant_key = ParticipantOf(r);
				src->position->transaction_id = IdOf(r);
				if (o->plen == r->plen && memcmp(ParticipantOf(o), ParticipantOf(r), r->plen) == 0)
					ereport(ERROR,
							(errcode(ERRCODE_UNIQUE_VIOLATION),
							 errmsg("transaction \"%s\" appears more than once in relation %s",
									IdOf(r), src->relname),
							 errdetail("Participant \"%s\" has it more than once; it would earn each time.",
									   ParticipantOf(r))));
				ereport(ERROR,
						(errcode(ERRCODE_UNIQUE_VIOLATION),
						 errmsg("transaction \"%s\" appears more than once in relation %s",
								IdOf(r), src->relname),
						 errdetail("It belongs to participant \"%s\" and to participant \"%s\"; it would earn under both.",
								   ParticipantOf(o), ParticipantOf(r))));
			}
		}
		pfree(seen);
	}
	txn_store_end(src->ids);
	src->ids = NULL;
}

/* ---- key order across batches (ordered) ------------------------------------ */

static inline const char *KeyOf(const TxnRec *r);
static inline int CompareKeys(const char *a, uint32 alen, const char *b, uint32 blen,
							  Oid collation);

/*
 * CompareCounted: two participants counted, by the key they are handed
 * out under (their unit's first key for members of the participant
 * groups: a unit's members are next to each other), then by their own.
 */
static int
CompareCounted(const void *a, const void *b, void *arg)
{
	const TxnSource *src = arg;
	const Counted *x = *(const Counted *const *) a;
	const Counted *y = *(const Counted *const *) b;

	if (x->unit != y->unit && (x->unit >= 0 || y->unit >= 0))
	{
		const char *xk = x->unit >= 0 ? src->unit_keys[x->unit] : x->key;
		const char *yk = y->unit >= 0 ? src->unit_keys[y->unit] : y->key;
		uint32		xl = x->unit >= 0 ? src->unit_key_lens[x->unit] : x->len;
		uint32		yl = y->unit >= 0 ? src->unit_key_lens[y->unit] : y->len;
		int			c = CompareKeys(xk, xl, yk, yl, src->collation);

		if (c != 0)
			return c;
	}
	return CompareKeys(x->key, x->len, y->key, y->len, src->collation);
}

/*
 * Reorder: the store again, partitioned by ranges of keys instead of
 * hashes (ordered, when the transactions did not fit one batch): the
 * participants counted are sorted, cut into as many ranges of about
 * work_mem's worth of records as that takes (never between two members
 * of one unit of the participant groups: a unit is calculated whole), and
 * every record is moved to its participant's range (all ranges go to
 * files first, so memory stays one batch's).  The batches then come out
 * in key order, and each batch's participants (and units, by their first
 * key) are sorted (SortGroups): every participant in key order, a unit's
 * members where its first key is.
 */
static void
Reorder(TxnSource *src)
{
	Size		limit = (Size) work_mem * 1024;
	Counted   **order = MemoryContextAllocHuge(src->context, sizeof(Counted *) * Max(src->ncounted, 1));
	uint64		n = 0,
				records = 0,
				done = 0,
				per;
	int			nranges;
	uint32		i;
	TxnStore   *ranged;
	TxnStoreIter it;
	uint32		hash;
	Size		len;
	char	   *r;

	for (i = 0; i <= src->counted_mask; i++)
		if (src->counted[i].key)
		{
			order[n++] = &src->counted[i];
			records += src->counted[i].records;
		}
	qsort_arg(order, n, sizeof(Counted *), CompareCounted, src);
	nranges = (int) Min((records * RECORD_ESTIMATE) / limit + 1, 4096);
	per = records / nranges + 1;
	for (i = 0; i < n; i++)
	{
		if (i > 0 && order[i]->unit >= 0 && order[i]->unit == order[i - 1]->unit)
			order[i]->range = order[i - 1]->range;
		else
			order[i]->range = (int) Min(done / per, (uint64) nranges - 1);
		done += order[i]->records;
	}
	pfree(order);

	ranged = txn_store_create_fixed(limit, nranges);
	txn_store_allow_overflow(ranged);
	while (txn_store_next_batch(src->store))
	{
		txn_store_iter_init(src->store, &it);
		while ((r = txn_store_iter_next_len(&it, &hash, &len)) != NULL)
		{
			const TxnRec *rec = (const TxnRec *) r;
			Counted    *e = FindCounted(src, hash, KeyOf(rec), rec->plen);

			Assert(e->key != NULL);
			txn_store_put_to(ranged, e->range, hash, r, len);
		}
		CHECK_FOR_INTERRUPTS();
	}
	txn_store_end(src->store);
	src->store = ranged;
}

/* ---- the source ---------------------------------------------------------- */

/*
 * HiddenMembers: the keys of every unit of which the caller read a row
 * that it read none of (members it cannot see, and the groups), into
 * src->hidden: what a group's figures need beyond the caller's rows.
 */
static void
HiddenMembers(TxnSource *src)
{
	int			u,
				k,
				cap = 16;

	src->hidden = palloc(sizeof(char *) * cap);
	for (u = 0; u < inc_groups_count(src->membership); u++)
	{
		IncUnit		unit = inc_groups_unit(src->membership, u);
		bool		any = false;

		for (k = 0; k < unit.nkeys; k++)
			any |= src->seen[src->unit_offsets[u] + k];
		for (k = 0; any && k < unit.nkeys; k++)
			if (!src->seen[src->unit_offsets[u] + k])
			{
				if (src->nhidden == cap)
				{
					cap *= 2;
					src->hidden = repalloc(src->hidden, sizeof(char *) * cap);
				}
				src->hidden[src->nhidden++] = unit.keys[k];
			}
	}
}

/* txn_source_open: check the relation, read it into the store. */
TxnSource *
txn_source_open(Oid relid, const char *participant_key, const DateADT *through_date,
				IncEngine *engine, MemoryContext engine_context, const IncGroups *groups,
				TxnPosition *position, const TxnSourceOptions *asked)
{
	TxnSource  *src;
	TxnRelation rel;
	SPIPlanPtr	plan;
	ParamListInfo params;
	SPIExecuteOptions options;
	Receiver	receiver;
	uint64		rows;
	Size		limit = (Size) work_mem * 1024;
	int			rc;
	const char *const *members;
	int			nmembers = 0;

	txn_relation_check(relid, &rel);
	src = palloc0(sizeof(TxnSource));
	src->context = CurrentMemoryContext;
	src->relname = rel.relname;
	src->engine = engine;
	src->engine_context = engine_context;
	src->participant = participant_key;
	src->participant_len = participant_key ? strlen(participant_key) : 0;
	src->membership = groups;
	src->participant_unit = -1;
	if (groups)
	{
		int			u,
					index;

		int			nkeys = 0;

		src->unit_keys = palloc(sizeof(char *) * (inc_groups_count(groups) + 1));
		src->unit_key_lens = palloc(sizeof(uint32) * (inc_groups_count(groups) + 1));
		src->unit_hashes = palloc(sizeof(uint32) * (inc_groups_count(groups) + 1));
		src->unit_offsets = palloc(sizeof(int) * (inc_groups_count(groups) + 1));
		for (u = 0; u < inc_groups_count(groups); u++)
		{
			IncUnit		unit = inc_groups_unit(groups, u);

			src->unit_offsets[u] = nkeys;
			nkeys += unit.nkeys;
			src->unit_keys[u] = unit.keys[0];
			src->unit_key_lens[u] = (uint32) strlen(unit.keys[0]);
			src->unit_hashes[u] = txn_aggregation_hash(unit.keys[0], src->unit_key_lens[u]);
		}
		src->seen = palloc0(sizeof(bool) * (nkeys + 1));
		if (participant_key)
			src->participant_unit = inc_groups_find(groups, participant_key,
													src->participant_len, &index);
	}
	src->position = position;
	src->types = inc_strmap_create();
	src->types_cap = 8;
	src->type_names = palloc(sizeof(char *) * src->types_cap);
	src->type_names[0] = "";
	src->uom_names_cap = 16;
	src->uom_names = palloc0(sizeof(char *) * src->uom_names_cap);
	src->uom_names[0] = "";
	src->row_context = AllocSetContextCreate(CurrentMemoryContext, "incentives read row",
											 ALLOCSET_SMALL_SIZES);
	if (asked)
	{
		src->share = asked->share;
		src->nshares = asked->nshares;
		src->ordered = asked->ordered;
		src->collation = asked->collation;
		src->counting = asked->count_participants || asked->ordered;
	}
	if (src->counting)
	{
		src->counted_context = AllocSetContextCreate(CurrentMemoryContext,
													 "incentives participants read",
													 ALLOCSET_DEFAULT_SIZES);
		GrowCounted(src);
	}
	rows = rel.rows;
	{
		const char *const *skus;
		int			nskus,
					i;

		skus = inc_engine_sku_keys(engine, &nskus);
		src->sku_names = palloc(sizeof(char *) * (nskus + 1));
		src->sku_names[0] = NULL;
		for (i = 0; i < nskus; i++)
			src->sku_names[i + 1] = skus[i];
	}

	plan = txn_relation_read(relid, src->relname, participant_key != NULL, through_date != NULL);
	members = participant_key ? pg_groups_members(groups, participant_key, &nmembers) : NULL;
	params = txn_relation_params(members, nmembers, through_date);
	if (participant_key)
		rows = 0;				/* a participant's share: unknown, small */
	src->store = txn_store_create(limit, rows * RECORD_ESTIMATE);
	txn_store_allow_overflow(src->store);
	if (!rel.unique_ids)
		src->ids = txn_store_create(limit, rows * 48);

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = ReceiveRow;
	receiver.pub.rStartup = ReceiverStartup;
	receiver.pub.rShutdown = ReceiverShutdown;
	receiver.pub.rDestroy = ReceiverDestroy;
	receiver.pub.mydest = DestNone;
	receiver.src = src;
	memset(&options, 0, sizeof(options));
	options.params = params;
	options.read_only = true;
	options.dest = &receiver.pub;
	src->outer_context = error_context_stack;
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc < 0)
		elog(ERROR, "could not read %s: %s", src->relname, SPI_result_code_string(rc));

	/* the members of a group the caller sees part of, that it cannot see */
	if (groups && pg_rls_hides(relid))
	{
		src->hiding = true;
		HiddenMembers(src);
		if (src->nhidden > 0)
		{
			PgOwnerRead owner;

			options.params = txn_relation_params(src->hidden, src->nhidden, through_date);
			src->reading_hidden = true;
			pg_owner_read_begin(relid, &owner);
			rc = SPI_execute_plan_extended(txn_relation_read(relid, src->relname, true,
															 through_date != NULL),
										   &options);
			pg_owner_read_end(&owner);
			src->reading_hidden = false;
			if (rc < 0)
				elog(ERROR, "could not read %s: %s", src->relname, SPI_result_code_string(rc));
		}
	}

	if (src->ids)
		CheckIdentity(src);
	if (src->ordered && !txn_store_one_batch(src->store))
		Reorder(src);
	return src;
}

/* txn_source_hidden_keys: the keys read as the owner (see txn_source.h). */
const char *const *
txn_source_hidden_keys(const TxnSource *src, int *n)
{
	*n = src->nhidden;
	return src->hidden;
}

/* FindGroup: the slot of a participant: its group, or the empty slot for it. */
static inline Participant *
FindGroup(Participant *groups, uint32 mask, uint32 hash, const char *key, uint32 plen)
{
	uint32		i = Slot(hash, mask);

	for (;; i = (i + 1) & mask)
	{
		Participant	   *g = &groups[i];

		if (g->key == NULL ||
			(g->hash == hash && g->plen == plen && memcmp(g->key, key, plen) == 0))
			return g;
	}
}

/* GrowGroups: twice the slots, the groups moved over. */
static void
GrowGroups(TxnSource *src)
{
	Participant	   *old = src->groups;
	uint32		oldmask = src->groups_mask;
	uint32		i;

	src->groups_mask = oldmask * 2 + 1;
	src->groups = MemoryContextAllocZero(src->context, sizeof(Participant) * (src->groups_mask + 1));
	for (i = 0; i <= oldmask; i++)
		if (old[i].key)
			*FindGroup(src->groups, src->groups_mask, old[i].hash, old[i].key, old[i].plen) = old[i];
	pfree(old);
}

/* MemberOf: where a record's member place is (REC_MEMBER). */
static inline const char *
MemberOf(const TxnRec *r)
{
	return (const char *) r + sizeof(TxnRec) +
		((r->flags & REC_WIDE_QUANTITY) ? sizeof(inc_int128) : 0) +
		((r->flags & REC_WIDE_AMOUNT) ? sizeof(inc_int128) : 0);
}

/* KeyOf: the participant key of a record. */
static inline const char *
KeyOf(const TxnRec *r)
{
	return MemberOf(r) + ((r->flags & REC_MEMBER) ? sizeof(RecMember) : 0);
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
 * UnitKeyOf: the key a record is grouped under, *len its length: its
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

/* CompareGroups: two group slots by their participants' keys. */
static int
CompareGroups(const void *a, const void *b, void *arg)
{
	const TxnSource *src = arg;
	const Participant *x = &src->groups[*(const uint32 *) a];
	const Participant *y = &src->groups[*(const uint32 *) b];

	return CompareKeys(x->key, x->plen, y->key, y->plen, src->collation);
}

/* SortGroups: the batch's group slots in the byte order of their keys. */
static void
SortGroups(TxnSource *src, uint32 ngroups)
{
	uint32		i,
				n = 0;

	if (ngroups > src->sorted_cap)
	{
		if (src->sorted)
			pfree(src->sorted);
		src->sorted_cap = Max(ngroups, 64);
		src->sorted = MemoryContextAllocHuge(src->context, sizeof(uint32) * src->sorted_cap);
	}
	for (i = 0; i <= src->groups_mask; i++)
		if (src->groups[i].key)
			src->sorted[n++] = i;
	qsort_arg(src->sorted, n, sizeof(uint32), CompareGroups, src);
	src->nsorted = n;
}

/*
 * GroupsFor: the participants of the batch in memory (a hash table), and
 * its records put in order by participant (a counting sort: each record's
 * group is found once, then the records are placed).
 */
static void
GroupsFor(TxnSource *src)
{
	TxnStoreIter it;
	uint32		hash;
	TxnRec	   *r;
	uint32		ngroups = 0;
	uint32		n = (uint32) txn_store_batch_count(src->store);
	bool		grew = false,
				rehash = false;
	uint32		rehash_from = 0;
	uint32		k = 0,
				i,
				next = 0;

	/*
	 * participants are few beside transactions: as many slots as twice the
	 * last batch's participants (batches are alike), growing when needed
	 */
	if (src->groups)
		pfree(src->groups);
	src->groups_mask = 63;
	while (src->groups_mask + 1 < src->last_ngroups * 4)
		src->groups_mask = src->groups_mask * 2 + 1;
	src->groups = MemoryContextAllocZero(src->context, sizeof(Participant) * (src->groups_mask + 1));
	if (n > src->order_cap)
	{
		if (src->order)
		{
			pfree(src->order);
			pfree(src->slot_of);
		}
		src->order_cap = Max(n, 1024);
		src->order = MemoryContextAllocHuge(src->context, sizeof(TxnRec *) * src->order_cap);
		src->slot_of = MemoryContextAllocHuge(src->context, sizeof(uint32) * src->order_cap);
	}

	/*
	 * each record's group slot in slot_of (slots move when the table grows:
	 * then they are found again in a second pass, from the hashes)
	 */
	txn_store_iter_init(src->store, &it);
	while ((r = txn_store_iter_next(&it, &hash)) != NULL)
	{
		uint32		len;
		int32		unit;
		const char *key = UnitKeyOf(src, r, &len, &unit);
		Participant *g = FindGroup(src->groups, src->groups_mask, hash, key, len);

		if (g->key == NULL)
		{
			if ((ngroups + 1) * 2 > src->groups_mask + 1)
			{
				GrowGroups(src);
				g = FindGroup(src->groups, src->groups_mask, hash, key, len);
				grew = true;
			}
			ngroups++;
			g->key = key;
			g->hash = hash;
			g->plen = len;
			g->unit = unit;
		}
		g->n++;
		src->slot_of[k] = grew ? hash : (uint32) (g - src->groups);
		if (grew && !rehash)
		{
			/* the slots noted so far are stale: note hashes from here on */
			rehash = true;
			rehash_from = k;
		}
		src->order[k++] = r;
		if ((k & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	for (i = 0; i <= src->groups_mask; i++)
		if (src->groups[i].key)
		{
			src->groups[i].first = next;
			next += src->groups[i].n;
		}
	for (i = 0; rehash && i < k; i++)
	{
		uint32		h,
					len;
		int32		unit;
		const char *key;

		r = src->order[i];
		key = UnitKeyOf(src, r, &len, &unit);
		h = i < rehash_from ? txn_aggregation_hash(key, len)
			: src->slot_of[i];
		src->slot_of[i] = (uint32) (FindGroup(src->groups, src->groups_mask, h,
											  key, len) - src->groups);
	}
	src->last_ngroups = ngroups;
	/* place: the records of slot g at order[first ..] (order is read first) */
	{
		TxnRec	  **placed = MemoryContextAllocHuge(src->context, sizeof(TxnRec *) * Max(k, 1));

		for (i = 0; i < k; i++)
		{
			Participant *g = &src->groups[src->slot_of[i]];

			placed[g->first + g->placed++] = src->order[i];
		}
		memcpy(src->order, placed, sizeof(TxnRec *) * k);
		pfree(placed);
	}
	src->next_group = 0;
	if (src->ordered)
		SortGroups(src, ngroups);
}

/* PageTxns: transactions per page, so that the pages take about work_mem / 4. */
static int
PageTxns(void)
{
	Size		per = (Size) work_mem * 1024 / 4 / PAGE_SLOTS / PAGE_BYTES_PER_TXN;

	return (int) Min(Max(per, 16), 65536);
}

/*
 * GroupsInFile: the units of a batch that went to a file whole, each
 * unit's records copied to a file of its own (FileUnit), in one pass.
 */
static void
GroupsInFile(TxnSource *src)
{
	TxnStoreIter it;
	uint32		hash;
	Size		len;
	char	   *r;
	uint32		ngroups = 0;
	uint64		k = 0;

	if (src->file_context == NULL)
		src->file_context = AllocSetContextCreate(src->context, "incentives units in files",
												  ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(src->file_context);
	if (src->groups)
		pfree(src->groups);
	src->groups_mask = 63;
	src->groups = MemoryContextAllocZero(src->context, sizeof(Participant) * (src->groups_mask + 1));
	src->page_txns = PageTxns();

	txn_store_iter_init(src->store, &it);
	while ((r = txn_store_iter_next_len(&it, &hash, &len)) != NULL)
	{
		const TxnRec *rec = (const TxnRec *) r;
		uint32		klen;
		int32		unit;
		const char *key = UnitKeyOf(src, rec, &klen, &unit);
		Participant *g = FindGroup(src->groups, src->groups_mask, hash, key, klen);
		FileUnit   *fu;

		if (g->key == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(src->file_context);

			if ((ngroups + 1) * 2 > src->groups_mask + 1)
			{
				GrowGroups(src);
				g = FindGroup(src->groups, src->groups_mask, hash, key, klen);
			}
			ngroups++;
			g->key = pnstrdup(key, klen);
			g->hash = hash;
			g->plen = klen;
			g->unit = unit;
			fu = palloc0(sizeof(FileUnit));
			fu->file = BufFileCreateTemp(false);
			fu->src = src;
			if (unit >= 0)
				fu->members = palloc0(inc_groups_unit(src->membership, unit).nkeys);
			g->file = fu;
			MemoryContextSwitchTo(old);
		}
		fu = g->file;
		if (g->n % (uint32) src->page_txns == 0)
		{
			if (fu->npages == fu->pages_cap)
			{
				MemoryContext old = MemoryContextSwitchTo(src->file_context);

				fu->pages_cap = fu->pages_cap ? fu->pages_cap * 2 : 16;
				fu->page_filenos = fu->page_filenos ?
					repalloc(fu->page_filenos, sizeof(int) * fu->pages_cap) :
					palloc(sizeof(int) * fu->pages_cap);
				fu->page_offsets = fu->page_offsets ?
					repalloc(fu->page_offsets, sizeof(off_t) * fu->pages_cap) :
					palloc(sizeof(off_t) * fu->pages_cap);
				fu->page_bytes = fu->page_bytes ?
					repalloc(fu->page_bytes, sizeof(Size) * fu->pages_cap) :
					palloc(sizeof(Size) * fu->pages_cap);
				MemoryContextSwitchTo(old);
			}
			BufFileTell(fu->file, &fu->page_filenos[fu->npages], &fu->page_offsets[fu->npages]);
			fu->page_bytes[fu->npages] = 0;
			fu->npages++;
		}
		BufFileWrite(fu->file, &len, sizeof(Size));
		BufFileWrite(fu->file, r, len);
		fu->page_bytes[fu->npages - 1] += sizeof(Size) + len;
		if (fu->members)
			fu->members[RecordMember(rec).index] = true;
		g->n++;
		if ((++k & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	src->last_ngroups = ngroups;
	src->next_group = 0;
	if (src->ordered)
		SortGroups(src, ngroups);
}

/*
 * RecordCoef: a coefficient of a record: the narrow one, or (wide) the
 * next 16 bytes after the record header at *p, which then moves past them.
 */
static inline inc_int128
RecordCoef(const char **p, bool wide, int64 narrow)
{
	inc_int128	coef;

	if (!wide)
		return narrow;
	memcpy(&coef, *p, sizeof(inc_int128));
	*p += sizeof(inc_int128);
	return coef;
}

/* ExpandRecord: a stored record as the engine's IncTxn. */
static inline void
ExpandRecord(const TxnSource *src, const TxnRec *r, IncTxn *t)
{
	const char *p = (const char *) r + sizeof(TxnRec);

	t->transaction_type = src->type_names[r->type_id];
	t->transaction_date = r->date;
	t->nulls = r->flags >> REC_NULLS_SHIFT;
	t->sku_id = r->sku_id;
	t->sku_key = src->sku_names[r->sku_id];
	t->uom_id = r->uom_id;
	t->uom_key = src->uom_names[r->uom_id];
	t->quantity.scale = r->qscale;
	t->quantity.coef = RecordCoef(&p, r->flags & REC_WIDE_QUANTITY, r->quantity);
	t->amount.scale = r->ascale;
	t->amount.coef = RecordCoef(&p, r->flags & REC_WIDE_AMOUNT, r->amount);
	t->participant = 0;
	t->aggregation = 0;
	if (r->flags & REC_MEMBER)
	{
		RecMember	m;

		memcpy(&m, p, sizeof(RecMember));
		p += sizeof(RecMember);
		t->participant = m.index;
		t->aggregation = inc_groups_aggregation(src->membership, m.unit, m.index, r->date,
												!(t->nulls & INC_TXN_NULL_DATE));
	}
	p = (const char *) TYPEALIGN(4, p + r->plen + 1);
	t->transaction_id = p + VARHDRSZ;
}

/* TextDatum: a text datum of len bytes at s, in context. */
static Datum
TextDatum(MemoryContext context, const char *s, size_t len)
{
	Datum		d = PointerGetDatum(MemoryContextAlloc(context, VARHDRSZ + len));

	SET_VARSIZE(DatumGetPointer(d), VARHDRSZ + len);
	memcpy(VARDATA(DatumGetPointer(d)), s, len);
	return d;
}

/*
 * UnitOf: the unit of a group of the batch, in context: a participant in
 * no group alone, else the keys of its participant groups' unit, each
 * flagged INC_KEY_VISIBLE, and INC_KEY_REPORT for the participant read
 * alone (a one-participant call) or else for every participant with
 * transactions.
 */
static void
UnitOf(const TxnSource *src, const Participant *g, MemoryContext context, TxnUnit *out)
{
	uint8	   *flags;
	int			k;

	if (g->unit < 0)
	{
		const char **keys = MemoryContextAlloc(context, sizeof(char *));

		flags = MemoryContextAlloc(context, 1);
		keys[0] = g->key;
		flags[0] = INC_KEY_REPORT | INC_KEY_VISIBLE;
		out->unit.nkeys = 1;
		out->unit.keys = keys;
		out->unit.flags = flags;
		out->unit.pages = NULL;
		out->key_datums = MemoryContextAlloc(context, sizeof(Datum));
		out->key_datums[0] = TextDatum(context, g->key, g->plen);
		return;
	}
	out->unit = inc_groups_unit(src->membership, g->unit);
	flags = MemoryContextAlloc(context, out->unit.nkeys);
	out->key_datums = MemoryContextAlloc(context, sizeof(Datum) * out->unit.nkeys);
	for (k = 0; k < out->unit.nkeys; k++)
	{
		/* under row-level security, only what the caller read a row of */
		bool		seen = !src->hiding || src->seen[src->unit_offsets[g->unit] + k];

		flags[k] = out->unit.flags[k] | (seen ? INC_KEY_VISIBLE : 0);
		if (src->participant ? strcmp(out->unit.keys[k], src->participant) == 0 && seen :
			src->hiding && seen)
			flags[k] |= INC_KEY_REPORT;
		out->key_datums[k] = TextDatum(context, out->unit.keys[k], strlen(out->unit.keys[k]));
	}
	out->unit.flags = flags;
}

/* LoadPage: a page of a FileUnit's records as transactions (IncTxnLoadFn). */
static void
LoadPage(void *ctx, int page, int slot, IncTxn *out)
{
	FileUnit   *fu = ctx;
	Size		bytes = fu->page_bytes[page];
	Size		off = 0;
	char	   *p;
	int			i = 0;

	if (bytes > fu->slot_size[slot])
	{
		if (fu->slots[slot])
			pfree(fu->slots[slot]);
		fu->slots[slot] = MemoryContextAlloc(fu->src->file_context, bytes);
		fu->slot_size[slot] = bytes;
	}
	p = fu->slots[slot];
	if (BufFileSeek(fu->file, fu->page_filenos[page], fu->page_offsets[page], SEEK_SET) != 0 ||
		BufFileRead(fu->file, p, bytes) != bytes)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of the calculation")));
	while (off < bytes)
	{
		Size		len;

		memcpy(&len, p + off, sizeof(Size));
		off += sizeof(Size);
		ExpandRecord(fu->src, (const TxnRec *) (p + off), &out[i++]);
		off += len;
	}
	CHECK_FOR_INTERRUPTS();
}

/* ReleaseFileUnit: a FileUnit's file and pages, once its unit is done. */
static void
ReleaseFileUnit(FileUnit *fu)
{
	int			s;

	BufFileClose(fu->file);
	fu->file = NULL;
	for (s = 0; s < PAGE_SLOTS; s++)
		if (fu->slots[s])
		{
			pfree(fu->slots[s]);
			fu->slots[s] = NULL;
		}
}

/* CloseFileUnits: the files of the batch's units not yet released. */
static void
CloseFileUnits(TxnSource *src)
{
	uint32		i;

	if (src->groups == NULL)
		return;
	for (i = 0; i <= src->groups_mask; i++)
		if (src->groups[i].key && src->groups[i].file && src->groups[i].file->file)
			ReleaseFileUnit(src->groups[i].file);
}

/*
 * HandFile: a unit of a batch in a file, its transactions read in pages
 * (IncUnit.pages), so that memory holds only PAGE_SLOTS pages of them.
 */
static void
HandFile(TxnSource *src, const Participant *g, MemoryContext context, TxnUnit *unit)
{
	FileUnit   *fu = g->file;
	int			k;

	UnitOf(src, g, context, unit);
	/* everyone's call: each participant with transactions */
	if (g->unit >= 0 && src->participant == NULL && !src->hiding)
		for (k = 0; k < unit->unit.nkeys; k++)
			if (fu->members[k])
				((uint8 *) unit->unit.flags)[k] |= INC_KEY_REPORT;
	fu->pages.ntxns = (int) g->n;
	fu->pages.per_page = src->page_txns;
	fu->pages.nslots = PAGE_SLOTS;
	fu->pages.id_prefix = VARHDRSZ;
	fu->pages.load = LoadPage;
	fu->pages.ctx = fu;
	unit->unit.pages = &fu->pages;
	unit->txns = NULL;
	unit->ntxns = (int) g->n;
	src->handed = fu;
	elog(DEBUG1, "the %u transactions of \"%s\" are read in pages from a temporary file (work_mem %d kB)",
		 g->n, g->key, work_mem);
}

/* txn_source_next: the next unit and its transactions. */
bool
txn_source_next(TxnSource *src, MemoryContext context, TxnUnit *unit)
{
	if (src->handed)
	{
		ReleaseFileUnit(src->handed);
		src->handed = NULL;
	}
	for (;;)
	{
		if (src->groups)
		{
			while (src->ordered ? src->next_group < src->nsorted :
				   src->next_group <= src->groups_mask)
			{
				uint32		slot = src->ordered ? src->sorted[src->next_group] : src->next_group;
				Participant *g = &src->groups[slot];
				TxnRec	  **recs = src->order + g->first;
				IncTxn	   *out;
				uint32		i;

				src->next_group++;
				if (g->key == NULL)
					continue;
				if (g->file)
				{
					HandFile(src, g, context, unit);
					return true;
				}
				UnitOf(src, g, context, unit);
				out = MemoryContextAllocHuge(context, sizeof(IncTxn) * g->n);
				for (i = 0; i < g->n; i++)
				{
					if (i + 4 < g->n)
						__builtin_prefetch(recs[i + 4]);
					ExpandRecord(src, recs[i], &out[i]);
					/* everyone's call: each participant with transactions */
					if (g->unit >= 0 && src->participant == NULL && !src->hiding)
						((uint8 *) unit->unit.flags)[out[i].participant] |= INC_KEY_REPORT;
				}
				unit->txns = out;
				unit->ntxns = (int) g->n;
				return true;
			}
		}
		CHECK_FOR_INTERRUPTS();
		CloseFileUnits(src);
		if (!txn_store_next_batch(src->store))
			return false;
		if (txn_store_in_file(src->store))
			GroupsInFile(src);
		else
			GroupsFor(src);
	}
}

/* txn_source_id_datum: the transaction_id datum, in the record. */
Datum
txn_source_id_datum(const IncTxn *txn)
{
	return PointerGetDatum(txn->transaction_id - VARHDRSZ);
}

/* txn_source_participants: the distinct participants read (count_participants). */
uint64
txn_source_participants(const TxnSource *src)
{
	return src->nparticipants;
}

/* txn_source_close: release the store and its files. */
void
txn_source_close(TxnSource *src)
{
	if (src->handed)
		ReleaseFileUnit(src->handed);
	CloseFileUnits(src);
	if (src->counted_context)
		MemoryContextDelete(src->counted_context);
	if (src->sorted)
		pfree(src->sorted);
	if (src->ids)
		txn_store_end(src->ids);
	txn_store_end(src->store);
	MemoryContextDelete(src->row_context);
	if (src->groups)
		pfree(src->groups);
}
