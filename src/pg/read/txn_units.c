/*
 * txn_units.c
 *    The units of a read handed out (txn_source_int.h): each batch of the
 *    store gathered by participant or unit into slots, its records turned
 *    into IncTxns; a unit of a batch that went to a file copied to a file
 *    of its own and handed to the engine in pages (FileUnit).
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "pg/base/compat.h"
#include "pg/read/txn_source_int.h"

/*
 * NewTable: the batch's table of participants, empty, sized for as many
 * as the last batch had (batches are alike), growing when needed; the
 * participants' array emptied.
 */
static void
NewTable(TxnSource *src)
{
	if (src->slot_table)
		slots_destroy(src->slot_table);
	src->slot_table = slots_create(src->context, Max(src->last_nunits * 2, 64), NULL);
	src->nslots = 0;
}

/*
 * FindSlot: the index in slots of the participant (or unit) of key (len
 * bytes, stored under hash), *found whether it was there; when new, one
 * more participant with no records, of unit, its key the one given (or,
 * with keep, a copy of it there).
 */
static inline uint32
FindSlot(TxnSource *src, uint32 hash, const char *key, uint32 len, int32 unit,
		 MemoryContext keep, bool *found)
{
	PartKey		k;
	SlotEntry  *e;
	Participant *g;

	k.key = key;
	k.len = len;
	k.hash = hash;
	e = slots_insert(src->slot_table, k, found);
	if (*found)
		return e->index;
	if (src->nslots == src->slots_cap)
	{
		src->slots_cap = src->slots_cap ? src->slots_cap * 2 : 64;
		src->slots = src->slots ?
			repalloc_huge(src->slots, sizeof(Participant) * src->slots_cap) :
			MemoryContextAllocHuge(src->context, sizeof(Participant) * src->slots_cap);
	}
	if (keep)
	{
		char	   *copy = MemoryContextAlloc(keep, len + 1);

		memcpy(copy, key, len);
		copy[len] = '\0';
		e->k.key = copy;
	}
	e->index = src->nslots++;
	g = &src->slots[e->index];
	memset(g, 0, sizeof(Participant));
	g->key = e->k.key;
	g->plen = len;
	g->unit = unit;
	return e->index;
}

/* CompareSlots: two slots by their participants' keys. */
static int
CompareSlots(const void *a, const void *b, void *arg)
{
	const TxnSource *src = arg;
	const Participant *x = &src->slots[*(const uint32 *) a];
	const Participant *y = &src->slots[*(const uint32 *) b];

	return CompareKeys(x->key, x->plen, y->key, y->plen, src->collation);
}

/* SortSlots: the batch's slots in the byte order of their keys. */
static void
SortSlots(TxnSource *src, uint32 nunits)
{
	uint32		i,
				n = 0;

	if (nunits > src->sorted_cap)
	{
		if (src->sorted)
			pfree(src->sorted);
		src->sorted_cap = Max(nunits, 64);
		src->sorted = MemoryContextAllocHuge(src->context, sizeof(uint32) * src->sorted_cap);
	}
	for (i = 0; i < src->nslots; i++)
		src->sorted[n++] = i;
	qsort_arg(src->sorted, n, sizeof(uint32), CompareSlots, src);
	src->nsorted = n;
}

/*
 * SlotsFor: the participants of the batch in memory (a hash table), and
 * its records put in order by participant (a counting sort: each record's
 * slot is found once, then the records are placed).
 */
static void
SlotsFor(TxnSource *src)
{
	TxnStoreIter it;
	uint32		hash;
	TxnRec	   *r;
	uint32		n = (uint32) txn_store_batch_count(src->store);
	uint32		k = 0,
				i,
				next = 0;

	NewTable(src);
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

	/* each record's slot in slot_of */
	txn_store_iter_init(src->store, &it);
	while ((r = txn_store_iter_next(&it, &hash)) != NULL)
	{
		uint32		len;
		int32		unit;
		const char *key = UnitKeyOf(src, r, &len, &unit);
		bool		found;
		uint32		slot = FindSlot(src, hash, key, len, unit, NULL, &found);

		src->slots[slot].n++;
		src->slot_of[k] = slot;
		src->order[k++] = r;
		if ((k & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	for (i = 0; i < src->nslots; i++)
	{
		src->slots[i].first = next;
		next += src->slots[i].n;
	}
	src->last_nunits = src->nslots;
	/* place: the records of slot g at order[first ..] (order is read first) */
	{
		TxnRec	  **placed = MemoryContextAllocHuge(src->context, sizeof(TxnRec *) * Max(k, 1));

		for (i = 0; i < k; i++)
		{
			Participant *g = &src->slots[src->slot_of[i]];

			placed[g->first + g->placed++] = src->order[i];
		}
		memcpy(src->order, placed, sizeof(TxnRec *) * k);
		pfree(placed);
	}
	src->next_slot = 0;
	if (src->ordered)
		SortSlots(src, src->nslots);
}

/* PageTxns: transactions per page, so that the pages take about work_mem / 4. */
static int
PageTxns(void)
{
	Size		per = (Size) work_mem * 1024 / 4 / PAGE_SLOTS / PAGE_BYTES_PER_TXN;

	return (int) Min(Max(per, 16), 65536);
}

/*
 * SlotsInFile: the units of a batch that went to a file whole, each
 * unit's records copied to a file of its own (FileUnit), in one pass.
 */
static void
SlotsInFile(TxnSource *src)
{
	TxnStoreIter it;
	uint32		hash;
	Size		len;
	char	   *r;
	uint64		k = 0;

	if (src->file_context == NULL)
		src->file_context = AllocSetContextCreate(src->context, "incentives units in files",
												  ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(src->file_context);
	NewTable(src);
	src->page_txns = PageTxns();

	txn_store_iter_init(src->store, &it);
	while ((r = txn_store_iter_next_len(&it, &hash, &len)) != NULL)
	{
		const TxnRec *rec = (const TxnRec *) r;
		uint32		klen;
		int32		unit;
		const char *key = UnitKeyOf(src, rec, &klen, &unit);
		bool		found;
		uint32		slot = FindSlot(src, hash, key, klen, unit,
									   src->file_context, &found);
		Participant *g = &src->slots[slot];
		FileUnit   *fu;

		if (!found)
		{
			MemoryContext old = MemoryContextSwitchTo(src->file_context);

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
	src->last_nunits = src->nslots;
	src->next_slot = 0;
	if (src->ordered)
		SortSlots(src, src->nslots);
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
	t->matched = false;
	t->matching_date = 0;
	t->currency = NULL;
	t->grower_key = NULL;
	p = MoreOf(r);
	if (r->more & REC_MATCHED)
	{
		t->matched = true;
		memcpy(&t->matching_date, p, sizeof(int32));
		p += sizeof(int32);
	}
	if (r->more & REC_CURRENCY)
	{
		uint16		currency_id;

		memcpy(&currency_id, p, sizeof(uint16));
		t->currency = src->type_names[currency_id];
	}
	if (r->flags & REC_MEMBER)
	{
		RecMember	m = RecordMember(r);

		t->participant = m.index;
		t->aggregation = inc_groups_aggregation(src->membership, m.unit, m.index,
												inc_txn_date(t),
												!(t->nulls & INC_TXN_NULL_DATE), NULL);
	}
	if (r->more & REC_GROWER)
		t->grower_key = GrowerOf(r);
	t->transaction_id = RecordIdOf(r) + VARHDRSZ;
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
 * UnitOf: the unit of a slot of the batch, in context: a participant in
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
		out->unit.aggregate = NULL;	/* a key in no group: its own key */
		out->unit.aggregate_ctx = NULL;
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

/* ReadPage: the bytes of a FileUnit's page into (page_bytes[page] of them). */
static void
ReadPage(FileUnit *fu, int page, char *into)
{
	if (BufFileSeek(fu->file, fu->page_filenos[page], fu->page_offsets[page], SEEK_SET) != 0 ||
		BufFileRead(fu->file, into, fu->page_bytes[page]) != fu->page_bytes[page])
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of the calculation")));
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
	ReadPage(fu, page, p);
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

/* txn_release_file_unit: a FileUnit's file and pages, once its unit is done. */
void
txn_release_file_unit(FileUnit *fu)
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

/* txn_close_file_units: the files of the batch's units not yet released. */
void
txn_close_file_units(TxnSource *src)
{
	uint32		i;

	for (i = 0; i < src->nslots; i++)
		if (src->slots[i].file && src->slots[i].file->file)
			txn_release_file_unit(src->slots[i].file);
}

/* PutBigEndian: v's four bytes at p, most significant first. */
static inline void
PutBigEndian(char *p, uint32 v)
{
	p[0] = (char) (v >> 24);
	p[1] = (char) (v >> 16);
	p[2] = (char) (v >> 8);
	p[3] = (char) v;
}

/*
 * NestFile: the records of a unit of several keys rewritten in the nest
 * order of their participants (inc_groups_nest_order), each participant's
 * in the order they came, into a new file of as many pages.  Every
 * aggregation key's transactions then lie together, so that the engine's
 * walk over a key's range of them (IncCalc.replay) reads little else.
 * The records go through a sort of bytea values (the participant's rank
 * and the record's number, both big-endian, then the record), bounded by
 * work_mem: it spills as a sort does.
 */
static void
NestFile(FileUnit *fu, const int *nest)
{
	TypeCacheEntry *type = lookup_type_cache(BYTEAOID, TYPECACHE_LT_OPR);
	Tuplesortstate *sort = tuplesort_begin_datum(BYTEAOID, type->lt_opr, InvalidOid, false,
												 work_mem, NULL, TUPLESORT_NONE);
	BufFile    *out;
	char	   *page = NULL;
	Size		page_cap = 0;
	char	   *value = NULL;
	Size		value_cap = 0;
	uint32		k = 0;
	int			p;
	Datum		d;
	bool		isnull;

	for (p = 0; p < fu->npages; p++)
	{
		Size		bytes = fu->page_bytes[p];
		Size		off = 0;

		if (bytes > page_cap)
		{
			if (page)
				pfree(page);
			page = palloc(bytes);
			page_cap = bytes;
		}
		ReadPage(fu, p, page);
		while (off < bytes)
		{
			Size		len;
			const TxnRec *rec;

			memcpy(&len, page + off, sizeof(Size));
			off += sizeof(Size);
			rec = (const TxnRec *) (page + off);
			if (VARHDRSZ + 8 + len > value_cap)
			{
				if (value)
					pfree(value);
				value_cap = VARHDRSZ + 8 + len;
				value = palloc(value_cap);
			}
			SET_VARSIZE(value, VARHDRSZ + 8 + len);
			PutBigEndian(value + VARHDRSZ,
						 (rec->flags & REC_MEMBER) ? (uint32) nest[RecordMember(rec).index] : 0);
			PutBigEndian(value + VARHDRSZ + 4, k++);
			memcpy(value + VARHDRSZ + 8, rec, len);
			tuplesort_putdatum(sort, PointerGetDatum(value), false);
			off += len;
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (page)
		pfree(page);
	if (value)
		pfree(value);
	tuplesort_performsort(sort);

	/* the same pages, each as many records as before */
	out = BufFileCreateTemp(false);
	p = -1;
	k = 0;
	while (tuplesort_getdatum(sort, true, true, &d, &isnull, NULL))
	{
		bytea	   *v = DatumGetByteaPP(d);
		Size		len = VARSIZE_ANY_EXHDR(v) - 8;

		if (k % (uint32) fu->pages.per_page == 0)
		{
			p++;
			BufFileTell(out, &fu->page_filenos[p], &fu->page_offsets[p]);
			fu->page_bytes[p] = 0;
		}
		BufFileWrite(out, &len, sizeof(Size));
		BufFileWrite(out, VARDATA_ANY(v) + 8, len);
		fu->page_bytes[p] += sizeof(Size) + len;
		pfree(DatumGetPointer(d));
		if ((++k & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	tuplesort_end(sort);
	BufFileClose(fu->file);
	fu->file = out;
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
	if (g->unit >= 0 && unit->unit.nkeys > 1)
		NestFile(fu, inc_groups_nest_order(src->membership, g->unit));
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
		txn_release_file_unit(src->handed);
		src->handed = NULL;
	}
	for (;;)
	{
		while (src->ordered ? src->next_slot < src->nsorted :
			   src->next_slot < src->nslots)
		{
			uint32		slot = src->ordered ? src->sorted[src->next_slot] : src->next_slot;
			Participant *g = &src->slots[slot];
			TxnRec	  **recs = src->order + g->first;
			IncTxn	   *out;
			uint32		i;

			src->next_slot++;
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
		CHECK_FOR_INTERRUPTS();
		txn_close_file_units(src);
		if (!txn_store_next_batch(src->store))
			return false;
		if (txn_store_in_file(src->store))
			SlotsInFile(src);
		else
			SlotsFor(src);
	}
}

/* txn_source_id_datum: the transaction_id datum, in the record. */
Datum
txn_source_id_datum(const IncTxn *txn)
{
	return PointerGetDatum(txn->transaction_id - VARHDRSZ);
}

