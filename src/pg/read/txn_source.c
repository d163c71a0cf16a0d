/*
 * txn_source.c
 *    A read of transactions opened and closed (see txn_source.h): the
 *    relation checked and read into the store, the members a caller may
 *    not see read as the relation's owner (docs/security.md, Participant
 *    groups), the participants counted.  Its parts: txn_source_int.h.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "utils/memutils.h"

#include "pg/load/participant_groups.h"
#include "pg/read/txn_relation.h"
#include "pg/read/txn_source_int.h"

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
		src->share_hash = asked->share_hash;
		src->share_hash_arg = asked->share_hash_arg;
		src->ordered = asked->ordered;
		src->collation = asked->collation;
		src->counting = asked->count_participants || asked->ordered;
	}
	if (src->counting)
	{
		src->counted_context = AllocSetContextCreate(CurrentMemoryContext,
													 "incentives participants read",
													 ALLOCSET_DEFAULT_SIZES);
		src->counted = counted_create(src->counted_context, 512, NULL);
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

	src->optional = rel.optional;
	plan = txn_relation_read(relid, src->relname, rel.optional, participant_key != NULL,
							 through_date != NULL);
	members = participant_key ? pg_groups_members(groups, participant_key, &nmembers) : NULL;
	params = txn_relation_params(members, nmembers, through_date);
	if (participant_key)
		rows = 0;				/* a participant's share: unknown, small */
	src->store = txn_store_create(limit, rows * RECORD_ESTIMATE);
	txn_store_allow_overflow(src->store);
	if (!rel.unique_ids)
		src->ids = txn_store_create(limit, rows * 48);

	txn_receiver_init(&receiver, src);
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
			rc = SPI_execute_plan_extended(txn_relation_read(relid, src->relname, rel.optional,
															 true, through_date != NULL),
										   &options);
			pg_owner_read_end(&owner);
			src->reading_hidden = false;
			if (rc < 0)
				elog(ERROR, "could not read %s: %s", src->relname, SPI_result_code_string(rc));
		}
	}

	if (src->ids)
		txn_check_identity(src);
	if (src->ordered && !txn_store_one_batch(src->store))
		txn_reorder(src);
	return src;
}

/* txn_source_hidden_keys: the keys read as the owner (see txn_source.h). */
const char *const *
txn_source_hidden_keys(const TxnSource *src, int *n)
{
	*n = src->nhidden;
	return src->hidden;
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
		txn_release_file_unit(src->handed);
	txn_close_file_units(src);
	if (src->counted_context)
		MemoryContextDelete(src->counted_context);
	if (src->sorted)
		pfree(src->sorted);
	if (src->ids)
		txn_store_end(src->ids);
	txn_store_end(src->store);
	MemoryContextDelete(src->row_context);
	if (src->slot_table)
		slots_destroy(src->slot_table);
	if (src->slots)
		pfree(src->slots);
}
