/*
 * txn_order.c
 *    The checks and moves of the store between the read and the first
 *    unit handed out (txn_source_int.h): every transaction_id once, and
 *    for an ordered read the store partitioned again by ranges of keys
 *    (docs/lifecycle.md, jobs).
 */
#include "postgres.h"

#include "miscadmin.h"

#include "pg/base/error_context.h"
#include "pg/read/txn_source_int.h"

/* ---- identity ------------------------------------------------------------ */

#define IdOf(r)				((const char *) (r) + sizeof(IdRec))
#define ParticipantOf(r)	(IdOf(r) + (r)->idlen + 1)

/* An id seen in the batch of the identity check. */
typedef struct SeenId
{
	const IdRec *rec;
	uint32		hash;			/* MixHash of its record's hash */
	char		status;			/* simplehash's */
} SeenId;

/* IdEqual: two records of the same transaction_id. */
static inline bool
IdEqual(const IdRec *a, const IdRec *b)
{
	return a->idlen == b->idlen && memcmp(IdOf(a), IdOf(b), a->idlen) == 0;
}

/* The ids of a batch of the identity store, by id (their records' hash, hash_bytes). */
#define SH_PREFIX		seen
#define SH_ELEMENT_TYPE	SeenId
#define SH_KEY_TYPE		const IdRec *
#define SH_KEY			rec
#define SH_HASH_KEY(tb, key)	MixHash(hash_bytes((const unsigned char *) IdOf(key), (int) (key)->idlen))
#define SH_EQUAL(tb, a, b)	IdEqual(a, b)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a)	((a)->hash)
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* txn_check_identity: every transaction_id once, batch by batch of the id store. */
void
txn_check_identity(TxnSource *src)
{
	while (txn_store_next_batch(src->ids))
	{
		TxnStoreIter it;
		uint32		hash;
		const IdRec *r;
		uint32		n = (uint32) txn_store_batch_count(src->ids);
		seen_hash  *seen = seen_create(src->context, Max(n, 16), NULL);

		txn_store_iter_init(src->ids, &it);
		while ((r = txn_store_iter_next(&it, &hash)) != NULL)
		{
			bool		found;
			const IdRec *o;

			CHECK_FOR_INTERRUPTS();
			o = seen_insert_hash(seen, r, MixHash(hash), &found)->rec;
			if (!found)
				continue;
			src->position->participant_key = ParticipantOf(r);
			src->position->transaction_id = IdOf(r);
			if (o->plen == r->plen && memcmp(ParticipantOf(o), ParticipantOf(r), r->plen) == 0)
			{
				pg_error_context_trim();
				ereport(ERROR,
						(errcode(ERRCODE_UNIQUE_VIOLATION),
						 errmsg("transaction \"%s\" appears more than once in relation %s",
								IdOf(r), src->relname),
						 errdetail("Participant \"%s\" has it more than once; it would earn each time.",
								   ParticipantOf(r))));
			}
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("transaction \"%s\" appears more than once in relation %s",
							IdOf(r), src->relname),
					 errdetail("It belongs to participant \"%s\" and to participant \"%s\"; it would earn under both.",
							   ParticipantOf(o), ParticipantOf(r))));
		}
		seen_destroy(seen);
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
		const char *xk = x->unit >= 0 ? src->unit_keys[x->unit] : x->k.key;
		const char *yk = y->unit >= 0 ? src->unit_keys[y->unit] : y->k.key;
		uint32		xl = x->unit >= 0 ? src->unit_key_lens[x->unit] : x->k.len;
		uint32		yl = y->unit >= 0 ? src->unit_key_lens[y->unit] : y->k.len;
		int			c = CompareKeys(xk, xl, yk, yl, src->collation);

		if (c != 0)
			return c;
	}
	return CompareKeys(x->k.key, x->k.len, y->k.key, y->k.len, src->collation);
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
	Counted   **order = MemoryContextAllocHuge(src->context,
											   sizeof(Counted *) * Max(src->counted->members, 1));
	counted_iterator ci;
	Counted    *c;
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

	counted_start_iterate(src->counted, &ci);
	while ((c = counted_iterate(src->counted, &ci)) != NULL)
	{
		order[n++] = c;
		records += c->records;
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
			PartKey		k;
			Counted    *e;

			k.key = KeyOf(rec);
			k.len = rec->plen;
			k.hash = hash;
			e = counted_lookup(src->counted, k);
			Assert(e != NULL);
			txn_store_put_to(ranged, e->range, hash, r, len);
		}
		CHECK_FOR_INTERRUPTS();
	}
	txn_store_end(src->store);
	src->store = ranged;
}
