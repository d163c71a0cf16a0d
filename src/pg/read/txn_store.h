/*
 * txn_store.h
 *    A bag of variable-length records partitioned by a 32-bit hash: held
 *    in memory up to a limit, spilled to temporary files past it, and
 *    handed back one partition (batch) at a time, so that records with the
 *    same hash are together in memory without any sort.  This is how a
 *    calculation groups transactions by participant (docs/architecture.md,
 *    The path of one calculation); it is the hybrid hash partitioning a
 *    hash join uses for its batches.
 *
 * Records are copied in (txn_store_put_built) while the input runs; batch 0
 * stays in memory, the others go to their files.  When memory passes the
 * limit, the number of batches doubles and batch 0's records that now
 * belong elsewhere move to their files (so a batch is about the limit
 * whatever the input's size).  Then txn_store_next_batch loads the
 * batches one after the other (batch 0 first, already there); a record
 * written before the number of batches grew is passed on to its later
 * batch as its file is read.  A batch that passes the limit as it is loaded
 * (after the input) is split instead: its records go to parts by further
 * bits of their hash, each about half the limit, and the parts are handed
 * out one after the other as batches of their own, so that only that
 * batch is written again.  Records of one hash are never split, so a
 * batch may exceed the limit when one hash has more than the limit (one
 * participant's transactions); in a store that allows it
 * (txn_store_allow_overflow), such a batch goes to a file of its own
 * whole, and is read from there (txn_store_file_next).
 *
 * Everything lives in the memory context current at txn_store_create; the
 * temporary files are closed by txn_store_end or, on error, by the
 * resource owner at the end of the transaction.
 */
#ifndef INC_TXN_STORE_H
#define INC_TXN_STORE_H

#include "postgres.h"

typedef struct TxnStore TxnStore;

/* A position in the records of the batch in memory. */
typedef struct TxnStoreIter
{
	void	   *chunk;
	Size		offset;
	TxnStore   *file;			/* the batch is in its file (txn_store_in_file) */
} TxnStoreIter;

/*
 * txn_store_create: an empty store keeping at most limit bytes of records
 * in memory; expected_bytes (an estimate of everything the input will
 * put, 0 when unknown) sets the first number of batches.
 */
extern TxnStore *txn_store_create(Size limit, uint64 expected_bytes);

/*
 * txn_store_create_fixed: a store of nbatch batches, each record's batch
 * named by the caller (txn_store_put_to); batches never double, and every
 * batch goes to its file until txn_store_next_batch loads it.  For records
 * the caller groups itself (txn_source.c puts a refresh's participants in
 * ranges of keys).
 */
extern TxnStore *txn_store_create_fixed(Size limit, int nbatch);
extern void txn_store_put_to(TxnStore *s, int batch, uint32 hash, const void *data, Size len);

/*
 * txn_store_allow_overflow: a batch over the limit that doubling cannot
 * split goes to a file whole, its memory freed: txn_store_in_file says so
 * for the batch being handed out, whose records the iterator then reads
 * from the file, each valid only until the next one is read.
 */
extern void txn_store_allow_overflow(TxnStore *s);
extern bool txn_store_in_file(const TxnStore *s);

/* txn_store_one_batch: everything in memory, nothing in a file? */
extern bool txn_store_one_batch(const TxnStore *s);

/*
 * txn_store_room, txn_store_put_built: a record built in place, so that it
 * is copied once, into its batch: txn_store_room gives room for up to len
 * bytes (MAXALIGNed; valid until the next call on the store), the caller
 * writes the record there, and txn_store_put_built puts its first len
 * bytes in the batch of hash.
 */
extern void *txn_store_room(TxnStore *s, Size len);
extern void txn_store_put_built(TxnStore *s, uint32 hash, Size len);

/*
 * txn_store_next_batch: the next batch in memory (the first call keeps
 * batch 0, which is already there); false when every batch has been
 * handed out.  The previous batch's records are freed.
 */
extern bool txn_store_next_batch(TxnStore *s);

/* txn_store_iter_init, txn_store_iter_next: the records of the batch handed out. */
extern void txn_store_iter_init(TxnStore *s, TxnStoreIter *it);
extern void *txn_store_iter_next(TxnStoreIter *it, uint32 *hash);
/* txn_store_iter_next_len: the same, and the record's length (padded). */
extern void *txn_store_iter_next_len(TxnStoreIter *it, uint32 *hash, Size *len);

/* txn_store_batch_count: the records of the batch in memory. */
extern uint64 txn_store_batch_count(const TxnStore *s);

/* txn_store_end: close the files and free the memory. */
extern void txn_store_end(TxnStore *s);

#endif							/* INC_TXN_STORE_H */
