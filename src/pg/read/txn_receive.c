/*
 * txn_receive.c
 *    The DestReceiver of a read (txn_source_int.h): each row's columns
 *    read in place, its SKU, unit and transaction type resolved to small
 *    ids, one compact record into the store (and an (id, participant)
 *    pair into the identity store), the participants read counted.
 */
#include "postgres.h"

#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/memutils.h"

#include "pg/base/compat.h"
#include "pg/base/convert.h"
#include "pg/base/error_context.h"
#include "pg/read/txn_relation.h"
#include "pg/read/txn_source_int.h"

#define MAX_SMALL_ID 65535		/* units and transaction types per call */

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
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("a transaction in relation %s has a NULL transaction_id",
						src->relname)));
	}
	pg_error_context_trim();
	ereport(ERROR,
			(errcode(ERRCODE_NOT_NULL_VIOLATION),
			 errmsg("column \"%s\" of transaction \"%s\" in relation %s is NULL",
					txn_column_name(col), TextDatumGetCString(values[C_ID]),
					src->relname)));
}

/*
 * NameId: the id (from 1) of a transaction type or a currency, interned
 * (one table of names: an id only stands for its string).
 */
static int
NameId(TxnSource *src, const char *s, size_t len)
{
	void	   *found = inc_strmap_get_len(src->types, s, len);
	MemoryContext old;
	char	   *name;

	if (found)
		return (int) (intptr_t) found;
	if (src->ntypes == MAX_SMALL_ID)
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("relation %s has more than %d transaction types and currencies",
						src->relname,
						MAX_SMALL_ID)));
	}
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
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("relation %s has more than %d units of measure", src->relname,
							MAX_SMALL_ID)));
		}
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

/*
 * CountParticipant: a participant's key (len bytes; hash: its record's,
 * StoreHash) of unit, counted once; a participant read only as the owner
 * (reading_hidden) has an entry (txn_reorder moves its records) but is not
 * one of the participants read.
 */
static Counted *
CountParticipant(TxnSource *src, uint32 hash, const char *key, uint32 len, int32 unit)
{
	PartKey		k;
	Counted    *e;
	bool		found;
	char	   *copy;

	k.key = key;
	k.len = len;
	k.hash = hash;
	e = counted_insert(src->counted, k, &found);
	if (found)
		return e;
	copy = MemoryContextAlloc(src->counted_context, Max(len, 1));
	memcpy(copy, key, len);
	e->k.key = copy;
	e->unit = unit;
	e->records = 0;
	e->range = 0;
	if (!src->reading_hidden)
		src->nparticipants++;
	return e;
}

/*
 * StoreHash: the hash a participant's records are stored, gathered and
 * shared under: that of its aggregation unit's first key for a member of
 * the participant groups (so a group and all its members stay in one
 * batch and one share), else of its own key (txn_aggregation_hash).
 */
static inline uint32
StoreHash(const TxnSource *src, int unit, const char *key, size_t len)
{
	return unit >= 0 ? src->unit_hashes[unit] : txn_aggregation_hash(key, len);
}

/*
 * ShareOf: the share of a participant's unit (unit: its unit among the
 * participant groups, or -1; hash: StoreHash's): by the caller's
 * share_hash of the unit's first key, else by txn_share_of.
 */
static inline int
ShareOf(const TxnSource *src, int unit, const char *key, size_t len, uint32 hash)
{
	if (src->share_hash == NULL)
		return txn_share_of(hash, src->nshares);
	if (unit >= 0)
	{
		key = src->unit_keys[unit];
		len = src->unit_key_lens[unit];
	}
	return (int) (src->share_hash(key, len, src->share_hash_arg) % (uint64) src->nshares);
}

/* ReceiveRow: one row of the read into the stores. */
static bool
ReceiveRow(TupleTableSlot *slot, DestReceiver *self)
{
	TxnSource  *src = ((Receiver *) self)->src;
	Datum	   *values;
	bool	   *nulls;
	text	   *id,
			   *grower = NULL,
			   *participant,
			   *type,
			   *sku,
			   *uom;
	const char *idp,
			   *pp;
	size_t		idlen,
				plen,
				glen = 0;
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
			if (src->nshares > 1 && ShareOf(src, unit, pp, plen, hash) != src->share)
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
	if (!nulls[C_GROWER])
	{
		grower = DatumGetTextPP(values[C_GROWER]);
		glen = VARSIZE_ANY_EXHDR(grower);
	}
	buf = txn_store_room(src->store, sizeof(TxnRec) + 2 * sizeof(inc_int128) +
						 sizeof(RecMember) + sizeof(int32) + sizeof(uint16) +
						 plen + glen + idlen + 17);
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
		rec->type_id = NameId(src, VARDATA_ANY(type), VARSIZE_ANY_EXHDR(type));
	}
	rec->plen = (uint32) plen;
	rec->idlen = (uint32) idlen;
	rec->flags = (uint8) (null_flags << REC_NULLS_SHIFT);
	rec->more = (nulls[C_MATCHING_DATE] ? 0 : REC_MATCHED) |
		(nulls[C_CURRENCY] ? 0 : REC_CURRENCY) | (grower ? REC_GROWER : 0);
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
	if (rec->more & REC_MATCHED)
	{
		int32		matching_date = DatumGetDateADT(values[C_MATCHING_DATE]);

		memcpy(p, &matching_date, sizeof(int32));
		p += sizeof(int32);
	}
	if (rec->more & REC_CURRENCY)
	{
		text	   *currency = DatumGetTextPP(values[C_CURRENCY]);
		uint16		currency_id = (uint16) NameId(src, VARDATA_ANY(currency),
												  VARSIZE_ANY_EXHDR(currency));

		memcpy(p, &currency_id, sizeof(uint16));
		p += sizeof(uint16);
	}
	memcpy(p, pp, plen);
	p[plen] = '\0';
	p += plen + 1;
	if (grower)
	{
		memcpy(p, VARDATA_ANY(grower), glen);
		p[glen] = '\0';
		p += glen + 1;
	}
	p = (char *) TYPEALIGN(4, p);
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

/* txn_receiver_init: receiver, the DestReceiver of a read into src. */
void
txn_receiver_init(Receiver *receiver, TxnSource *src)
{
	memset(receiver, 0, sizeof(*receiver));
	receiver->pub.receiveSlot = ReceiveRow;
	receiver->pub.rStartup = ReceiverStartup;
	receiver->pub.rShutdown = ReceiverShutdown;
	receiver->pub.rDestroy = ReceiverDestroy;
	receiver->pub.mydest = DestNone;
	receiver->src = src;
}
