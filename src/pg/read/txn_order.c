/*
 * txn_order.c
 *    The checks and moves of the store between the read and the first
 *    unit handed out (txn_source_int.h): every transaction_id once, and
 *    for an ordered read the store partitioned again by ranges of keys
 *    (docs/lifecycle.md, jobs).
 */
#include "postgres.h"

#include "miscadmin.h"

#include "pg/read/txn_source_int.h"

/* ---- identity ------------------------------------------------------------ */

/* An id seen in the batch of the identity check. */
typedef struct SeenId
{
	uint32		hash;
	const IdRec *rec;			/* NULL: empty slot */
} SeenId;

#define IdOf(r)				((const char *) (r) + sizeof(IdRec))
#define ParticipantOf(r)	(IdOf(r) + (r)->idlen + 1)

/* txn_check_identity: every transaction_id once, batch by batch of the id store. */
void
txn_check_identity(TxnSource *src)
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
 * txn_reorder: the store again, partitioned by ranges of keys instead of
 * hashes (ordered, when the transactions did not fit one batch): the
 * participants counted are sorted, cut into as many ranges of about
 * work_mem's worth of records as that takes (never between two members
 * of one unit of the participant groups: a unit is calculated whole), and
 * every record is moved to its participant's range (all ranges go to
 * files first, so memory stays one batch's).  The batches then come out
 * in key order, and each batch's participants (and units, by their first
 * key) are sorted (SortSlots): every participant in key order, a unit's
 * members where its first key is.
 */
void
txn_reorder(TxnSource *src)
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
