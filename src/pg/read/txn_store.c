/*
 * txn_store.c
 *    Hash-partitioned records, in memory up to a limit and in temporary
 *    files past it (see txn_store.h).
 *
 * A record is a header (total length, hash) and the caller's bytes,
 * MAXALIGNed, the same in memory and in a file.  The batch of a hash is
 * taken from its bits rotated by 16, so that the low bits stay free for
 * the caller's own hash table within a batch (as nodeHash.c does).  The
 * batch in memory is a list of chunks filled one after the other.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

#include "pg/read/txn_store.h"

#define CHUNK_SIZE		(64 * 1024)
#define MAX_BATCHES		4096
#define MAX_PARTS		64

typedef struct Chunk
{
	struct Chunk *next;
	Size		used;			/* bytes of records */
	Size		size;			/* room for records */
	char		data[FLEXIBLE_ARRAY_MEMBER];
} Chunk;

#define CHUNK_HEADER	MAXALIGN(offsetof(Chunk, data))

static void FreeChunks(TxnStore *s);

typedef struct RecordHeader
{
	uint32		len;			/* header and payload, MAXALIGNed */
	uint32		hash;
} RecordHeader;

#define RECORD_HEADER	MAXALIGN(sizeof(RecordHeader))

struct TxnStore
{
	MemoryContext context;
	Size		limit;
	Size		used;			/* bytes of records in memory */
	int			nbatch;			/* a power of 2 */
	int			curbatch;		/* the batch in memory */
	bool		started;		/* txn_store_next_batch called */
	bool		grow;			/* doubling still helps */
	bool		fixed;			/* the caller names each record's batch */
	BufFile   **files;			/* per batch, NULL until written */
	Size	   *bytes;			/* per batch, bytes written to its file */
	BufFile    *parts[MAX_PARTS];	/* the batch in memory's parts, when split */
	int			nparts;
	int			nextpart;		/* the part to load next */
	bool		splitting;		/* the batch being loaded goes to its parts */
	Chunk	   *head;
	Chunk	   *tail;
	uint64		in_memory;		/* records in the chunks */
	RecordHeader *room;			/* a record being built (txn_store_room) */
	Size		room_size;
	bool		may_overflow;	/* txn_store_allow_overflow */
	BufFile    *overflow;		/* the batch in memory, when it went to a file whole */
	uint64		in_overflow;	/* its records */
	char	   *read;			/* txn_store_file_next's record */
	Size		read_size;
};

static inline int
BatchOf(const TxnStore *s, uint32 hash)
{
	return (int) (pg_rotate_right32(hash, 16) & (uint32) (s->nbatch - 1));
}

/* Append: a record into the chunks in memory. */
static void
Append(TxnStore *s, const RecordHeader *rec)
{
	Chunk	   *c = s->tail;

	if (c == NULL || c->size - c->used < rec->len)
	{
		Size		size = Max(CHUNK_SIZE, rec->len);

		c = MemoryContextAlloc(s->context, CHUNK_HEADER + size);
		c->next = NULL;
		c->used = 0;
		c->size = size;
		if (s->tail)
			s->tail->next = c;
		else
			s->head = c;
		s->tail = c;
	}
	memcpy((char *) c + CHUNK_HEADER + c->used, rec, rec->len);
	c->used += rec->len;
	s->used += rec->len;
	s->in_memory++;
}

/* Spill: a record into the file of batch b. */
static void
Spill(TxnStore *s, int b, const RecordHeader *rec)
{
	if (s->files[b] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(s->context);

		s->files[b] = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
	}
	BufFileWrite(s->files[b], (void *) rec, rec->len);
	s->bytes[b] += rec->len;
}

/*
 * Overflow: a record of the batch in memory (or none) into the batch's own
 * file, when the batch goes there whole (the first call moves what memory
 * held).
 */
static void
Overflow(TxnStore *s, const RecordHeader *rec)
{
	if (s->overflow == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(s->context);
		Chunk	   *c;

		s->overflow = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
		for (c = s->head; c; c = c->next)
			BufFileWrite(s->overflow, (char *) c + CHUNK_HEADER, c->used);
		s->in_overflow = s->in_memory;
		FreeChunks(s);
	}
	if (rec)
	{
		BufFileWrite(s->overflow, (void *) rec, rec->len);
		s->in_overflow++;
	}
}

/* FreeChunks: forget the records in memory. */
static void
FreeChunks(TxnStore *s)
{
	Chunk	   *c = s->head;

	while (c)
	{
		Chunk	   *next = c->next;

		pfree(c);
		c = next;
	}
	s->head = s->tail = NULL;
	s->used = 0;
	s->in_memory = 0;
}

/* SetBatches: n batches (a power of 2, never fewer than now). */
static void
SetBatches(TxnStore *s, int n)
{
	if (s->files == NULL)
	{
		s->files = MemoryContextAllocZero(s->context, sizeof(BufFile *) * n);
		s->bytes = MemoryContextAllocZero(s->context, sizeof(Size) * n);
	}
	else
	{
		s->files = repalloc(s->files, sizeof(BufFile *) * n);
		memset(s->files + s->nbatch, 0, sizeof(BufFile *) * (n - s->nbatch));
		s->bytes = repalloc(s->bytes, sizeof(Size) * n);
		memset(s->bytes + s->nbatch, 0, sizeof(Size) * (n - s->nbatch));
	}
	s->nbatch = n;
}

/*
 * IncreaseBatches: double the batches until the batch in memory fits the
 * limit, moving the records that leave it to their files; stop growing
 * when a doubling moves nothing (one hash over the limit).
 */
static void
IncreaseBatches(TxnStore *s)
{
	while (s->used > s->limit && s->grow && s->nbatch < MAX_BATCHES)
	{
		Chunk	   *c = s->head;
		uint64		moved = 0;

		SetBatches(s, s->nbatch * 2);
		s->head = s->tail = NULL;
		s->used = 0;
		s->in_memory = 0;
		while (c)
		{
			Chunk	   *next = c->next;
			Size		off = 0;

			while (off < c->used)
			{
				RecordHeader *rec = (RecordHeader *) ((char *) c + CHUNK_HEADER + off);
				int			b = BatchOf(s, rec->hash);

				if (b == s->curbatch)
					Append(s, rec);
				else
				{
					Spill(s, b, rec);
					moved++;
				}
				off += rec->len;
			}
			pfree(c);
			c = next;
			CHECK_FOR_INTERRUPTS();
		}
		if (moved == 0)
			s->grow = false;
	}
}

/*
 * Keep: a record of the batch in memory: appended, the batches doubled
 * when memory passes the limit, and the batch sent to its file whole when
 * doubling cannot bring it under (txn_store_allow_overflow).  Once the
 * batches are handed out, a store that allows it sends the batch to its
 * file at once: a doubling then would write again half of every batch
 * still to come.
 */
static void
Keep(TxnStore *s, const RecordHeader *rec)
{
	if (s->overflow)
	{
		Overflow(s, rec);
		return;
	}
	Append(s, rec);
	if (s->used > s->limit)
	{
		if (!(s->started && s->may_overflow))
			IncreaseBatches(s);
		if (s->used > s->limit && s->may_overflow)
			Overflow(s, NULL);
	}
}

/*
 * PartOf: the part of a split batch that a hash goes to, from the bits
 * above those that name its batch.
 */
static inline int
PartOf(const TxnStore *s, uint32 hash)
{
	return (int) ((pg_rotate_right32(hash, 16) >> pg_leftmost_one_pos32(s->nbatch)) &
				  (uint32) (s->nparts - 1));
}

/* WritePart: a record into its part's file. */
static void
WritePart(TxnStore *s, const RecordHeader *rec)
{
	int			p = PartOf(s, rec->hash);

	if (s->parts[p] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(s->context);

		s->parts[p] = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
	}
	BufFileWrite(s->parts[p], (void *) rec, rec->len);
}

/*
 * Split: the batch being loaded passed the limit; its records go to parts
 * by further bits of their hash, enough parts for each to be about half
 * the limit (file_bytes is what the batch's file held), those in memory
 * first.  The parts are then loaded one after the other (NextPart).  A
 * doubling would write half of every batch still to come again; a split
 * writes this batch's records once more.
 */
static void
Split(TxnStore *s, Size file_bytes)
{
	Chunk	   *c;

	s->nparts = 2;
	while (s->nparts < MAX_PARTS && (Size) s->nparts * s->limit < 2 * file_bytes)
		s->nparts *= 2;
	s->nextpart = 0;
	s->splitting = true;
	for (c = s->head; c; c = c->next)
	{
		Size		off = 0;

		while (off < c->used)
		{
			RecordHeader *rec = (RecordHeader *) ((char *) c + CHUNK_HEADER + off);

			WritePart(s, rec);
			off += rec->len;
		}
		CHECK_FOR_INTERRUPTS();
	}
	FreeChunks(s);
	elog(DEBUG1, "a batch of %zu bytes of the calculation's records is read in %d parts (work_mem %d kB)",
		 file_bytes, s->nparts, work_mem);
}

/* txn_store_create: an empty store (see txn_store.h). */
TxnStore *
txn_store_create(Size limit, uint64 expected_bytes)
{
	TxnStore   *s = palloc0(sizeof(TxnStore));
	int			n = 1;

	s->context = AllocSetContextCreate(CurrentMemoryContext, "incentives transaction store",
									   ALLOCSET_DEFAULT_SIZES);
	s->limit = Max(limit, CHUNK_SIZE);
	s->grow = true;
	while (n < MAX_BATCHES && expected_bytes > (uint64) s->limit * n)
		n *= 2;
	SetBatches(s, n);
	return s;
}

/* txn_store_create_fixed: nbatch batches the caller fills (txn_store_put_to). */
TxnStore *
txn_store_create_fixed(Size limit, int nbatch)
{
	TxnStore   *s = palloc0(sizeof(TxnStore));

	s->context = AllocSetContextCreate(CurrentMemoryContext, "incentives transaction store",
									   ALLOCSET_DEFAULT_SIZES);
	s->limit = Max(limit, CHUNK_SIZE);
	s->grow = false;
	s->fixed = true;
	s->curbatch = -1;			/* every batch to its file: memory stays free */
	SetBatches(s, Max(nbatch, 1));
	return s;
}

/* txn_store_put_to: copy a record (len bytes) into batch b. */
void
txn_store_put_to(TxnStore *s, int b, uint32 hash, const void *data, Size len)
{
	RecordHeader *rec;
	Size		total = MAXALIGN(RECORD_HEADER + len);

	Assert(s->fixed && b >= 0 && b < s->nbatch);
	rec = MemoryContextAlloc(s->context, total);
	rec->len = (uint32) total;
	rec->hash = hash;
	memcpy((char *) rec + RECORD_HEADER, data, len);
	if (total > RECORD_HEADER + len)
		memset((char *) rec + RECORD_HEADER + len, 0, total - RECORD_HEADER - len);
	if (b == s->curbatch)
		Append(s, rec);
	else
		Spill(s, b, rec);
	pfree(rec);
}

/* txn_store_room: room for a record of up to len bytes, after its header. */
void *
txn_store_room(TxnStore *s, Size len)
{
	Size		total = MAXALIGN(RECORD_HEADER + len);

	if (total > s->room_size)
	{
		s->room_size = Max(total, 512);
		if (s->room)
			pfree(s->room);
		s->room = MemoryContextAlloc(s->context, s->room_size);
	}
	return (char *) s->room + RECORD_HEADER;
}

/* txn_store_put_built: the record in the room (len bytes) into its batch. */
void
txn_store_put_built(TxnStore *s, uint32 hash, Size len)
{
	RecordHeader *rec = s->room;
	Size		total = MAXALIGN(RECORD_HEADER + len);
	int			b;

	Assert(rec != NULL && total <= s->room_size);
	rec->len = (uint32) total;
	rec->hash = hash;
	if (total > RECORD_HEADER + len)
		memset((char *) rec + RECORD_HEADER + len, 0, total - RECORD_HEADER - len);

	b = BatchOf(s, hash);
	if (b == s->curbatch)
		Keep(s, rec);
	else
		Spill(s, b, rec);
}

/*
 * LoadFile: read a file of batch b's records into memory, passing on
 * records of later batches; split (Split) when the batch passes the limit
 * and splitting is allowed.
 */
static void
LoadFile(TxnStore *s, BufFile *file, int b, bool split, Size file_bytes)
{
	RecordHeader header;
	char	   *rec = NULL;
	Size		cap = 0;

	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind a temporary file of the calculation: %m")));
	for (;;)
	{
		size_t		got = BufFileRead(file, &header, sizeof(header));
		int			to;

		if (got == 0)
			break;
		if (got != sizeof(header) || header.len < RECORD_HEADER)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a temporary file of the calculation")));
		if (header.len > cap)
		{
			cap = Max(header.len, 1024);
			rec = rec ? repalloc(rec, cap) : MemoryContextAlloc(s->context, cap);
		}
		memcpy(rec, &header, sizeof(header));
		if (BufFileRead(file, rec + sizeof(header), header.len - sizeof(header)) !=
			header.len - sizeof(header))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a temporary file of the calculation")));
		to = s->fixed ? b : BatchOf(s, header.hash);
		if (to != b)
			Spill(s, to, (RecordHeader *) rec);
		else if (s->splitting)
			WritePart(s, (RecordHeader *) rec);
		else if (!split)
			Keep(s, (RecordHeader *) rec);
		else
		{
			Append(s, (RecordHeader *) rec);
			if (s->used > s->limit)
				Split(s, file_bytes);
		}
		CHECK_FOR_INTERRUPTS();
	}
	BufFileClose(file);
	if (rec)
		pfree(rec);
}

/*
 * LoadBatch: batch b's file into memory; a batch of a store that doubles
 * (not txn_store_create_fixed) is split when it passes the limit.
 */
static void
LoadBatch(TxnStore *s, int b)
{
	BufFile    *file = s->files[b];

	s->files[b] = NULL;
	LoadFile(s, file, b, !s->fixed, s->bytes[b]);
	s->bytes[b] = 0;
	s->splitting = false;
}

/* NextPart: load the next part of the split batch in memory; false after the last. */
static bool
NextPart(TxnStore *s)
{
	while (s->nextpart < s->nparts)
	{
		BufFile    *file = s->parts[s->nextpart];

		s->parts[s->nextpart++] = NULL;
		if (file != NULL)
		{
			LoadFile(s, file, s->curbatch, false, 0);
			return true;
		}
	}
	s->nparts = 0;
	return false;
}

/* txn_store_next_batch: the next batch in memory; false after the last. */
bool
txn_store_next_batch(TxnStore *s)
{
	if (!s->started)
	{
		s->started = true;
		if (!s->fixed)
			return true;		/* batch 0 is in memory */
	}
	FreeChunks(s);
	if (s->overflow)
	{
		BufFileClose(s->overflow);
		s->overflow = NULL;
		s->in_overflow = 0;
	}
	if (s->nparts > 0 && NextPart(s))
		return true;
	while (++s->curbatch < s->nbatch)
	{
		if (s->files[s->curbatch] != NULL)
		{
			LoadBatch(s, s->curbatch);
			if (s->nparts > 0)
				NextPart(s);
			return true;
		}
	}
	return false;
}

/* txn_store_allow_overflow: a batch that cannot be split goes to a file whole. */
void
txn_store_allow_overflow(TxnStore *s)
{
	s->may_overflow = true;
}

/* txn_store_in_file: did the batch in memory go to its file whole? */
bool
txn_store_in_file(const TxnStore *s)
{
	return s->overflow != NULL;
}

/* FileRewind: FileNext from the batch's first record. */
static void
FileRewind(TxnStore *s)
{
	if (BufFileSeek(s->overflow, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind a temporary file of the calculation: %m")));
}

/*
 * FileNext: the next record of the batch in its file (its bytes valid
 * until the next call), with its hash and length, or NULL.
 */
static void *
FileNext(TxnStore *s, uint32 *hash, Size *len)
{
	RecordHeader header;
	size_t		got = BufFileRead(s->overflow, &header, sizeof(header));

	if (got == 0)
		return NULL;
	if (got != sizeof(header) || header.len < RECORD_HEADER)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of the calculation")));
	if (header.len > s->read_size)
	{
		s->read_size = Max(header.len, 1024);
		if (s->read)
			pfree(s->read);
		s->read = MemoryContextAlloc(s->context, s->read_size);
	}
	if (BufFileRead(s->overflow, s->read + RECORD_HEADER, header.len - RECORD_HEADER) !=
		header.len - RECORD_HEADER)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of the calculation")));
	*hash = header.hash;
	*len = header.len - RECORD_HEADER;
	return s->read + RECORD_HEADER;
}

/* txn_store_iter_init: from the first record of the batch in memory. */
void
txn_store_iter_init(TxnStore *s, TxnStoreIter *it)
{
	it->chunk = s->head;
	it->offset = 0;
	it->file = s->overflow ? s : NULL;
	if (it->file)
		FileRewind(s);
}

/* txn_store_iter_next: the next record's bytes and hash, or NULL. */
void *
txn_store_iter_next(TxnStoreIter *it, uint32 *hash)
{
	Size		len;

	return txn_store_iter_next_len(it, hash, &len);
}

/* txn_store_iter_next_len: the same, and the record's length (padded). */
void *
txn_store_iter_next_len(TxnStoreIter *it, uint32 *hash, Size *len)
{
	Chunk	   *c = it->chunk;
	RecordHeader *rec;

	if (it->file)
		return FileNext(it->file, hash, len);
	while (c && it->offset >= c->used)
	{
		c = c->next;
		it->chunk = c;
		it->offset = 0;
	}
	if (c == NULL)
		return NULL;
	rec = (RecordHeader *) ((char *) c + CHUNK_HEADER + it->offset);
	it->offset += rec->len;
	*hash = rec->hash;
	*len = rec->len - RECORD_HEADER;
	return (char *) rec + RECORD_HEADER;
}

uint64
txn_store_batch_count(const TxnStore *s)
{
	return s->in_memory + s->in_overflow;
}

/* txn_store_one_batch: has nothing left memory (a single batch, no file)? */
bool
txn_store_one_batch(const TxnStore *s)
{
	int			b;

	if (s->overflow)
		return false;
	for (b = 0; b < s->nbatch; b++)
		if (s->files[b])
			return false;
	return true;
}

/* txn_store_end: close every file, free everything. */
void
txn_store_end(TxnStore *s)
{
	int			b;

	for (b = 0; b < s->nbatch; b++)
		if (s->files[b])
			BufFileClose(s->files[b]);
	for (b = 0; b < s->nparts; b++)
		if (s->parts[b])
			BufFileClose(s->parts[b]);
	if (s->overflow)
		BufFileClose(s->overflow);
	MemoryContextDelete(s->context);
	pfree(s);
}
