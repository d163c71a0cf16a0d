/*
 * product_checks.c
 *    The triggers of incentives.products and incentives.sku_products
 *    (docs/reference.md, Products): product keys follow the key hygiene of
 *    offer keys, the nodes form a forest (no cycle), two membership
 *    windows of one SKU in one node never overlap, and a parent_key or a
 *    window's product_key names a stored node.
 *
 *    The references are checked here, not by foreign keys: pg_restore -j
 *    loads the rows of an extension's tables in parallel whatever foreign
 *    keys tie them, so a window could arrive before its node and the
 *    restore would fail.  A window is therefore not refused for a missing
 *    node while a restore runs (incentives_internal.restoring(): the
 *    dumped catalog was whole), and a node is refused a delete, a rename
 *    or a TRUNCATE that would leave a child or a window naming it, as a
 *    foreign key's NO ACTION would.
 *
 *    Every write of either table takes one lock, the transaction-level
 *    advisory lock of incentives.products, before it reads the tables with
 *    the latest snapshot: two sessions that each add one edge of a cycle
 *    (or one of two overlapping windows, or two keys equal but for letter
 *    case) take turns, and the second sees the first's committed row.  One
 *    lock for the whole catalog, not one per key: the edges of a cycle can
 *    share no key with each other (A -> B in one session, C -> A ... in
 *    another), so per-key locks could not serialize them.  The catalog is
 *    small and rarely written, so writers queueing costs nothing that
 *    matters.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "core/offer/offer.h"
#include "pg/base/convert.h"
#include "pg/base/error_context.h"
#include "pg/load/stored_tables.h"

/* CatalogLock: the one lock of every write of the product catalog. */
static void
CatalogLock(void)
{
	pg_stored_key_lock("incentives.products", 0);
}

/*
 * Find: run one check query with the latest snapshot (stored_tables.h);
 * true when it finds a row (in SPI_tuptable).
 */
static bool
Find(const char *query, int nargs, Oid *argtypes, Datum *args, const char *nulls)
{
	SPIPlanPtr	plan = SPI_prepare(query, nargs, argtypes);
	int			rc;

	if (plan == NULL)
		elog(ERROR, "could not prepare a product catalog check: %s",
			 SPI_result_code_string(SPI_result));
	rc = pg_execute_latest(plan, args, nulls);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not check the product catalog: %s", SPI_result_code_string(rc));
	SPI_freeplan(plan);
	return SPI_processed > 0;
}

/* Text: column n of the first row a check found. */
static char *
Text(int n)
{
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, n);
}

/* DateText: a date as YYYY-MM-DD, or -infinity / infinity. */
static char *
DateText(DateADT d)
{
	char		buf[16];

	if (DATE_IS_NOBEGIN(d))
		return pstrdup("-infinity");
	if (DATE_IS_NOEND(d))
		return pstrdup("infinity");
	inc_date_format(d, buf, sizeof(buf));
	return pstrdup(buf);
}

/* WindowText: "from START to END" or "from START (open-ended)". */
static char *
WindowText(DateADT start, bool open_ended, DateADT end)
{
	if (open_ended)
		return psprintf("from %s (open-ended)", DateText(start));
	return psprintf("from %s to %s", DateText(start), DateText(end));
}

/* Column: a text column of a trigger's row, NULL when it is null. */
static char *
Column(Relation rel, HeapTuple tuple, const char *name)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, pg_column(rel, name), RelationGetDescr(rel), &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/*
 * Restoring: a session restoring pg_dump's output (row_security or
 * check_function_bodies off), as incentives_internal.restoring() says.
 */
static bool
Restoring(void)
{
	return !row_security || !check_function_bodies;
}

/*
 * MissingNode: refuse (23503) a reference to a node incentives.products
 * does not have, with the stored node it was probably meant to be
 * (incentives_internal.suggested_key; docs/reference.md, Suggestions).
 * what: the referencing row, as the message names it.
 */
static void
MissingNode(const char *key, const char *what, const char *column)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	char		nulls[1] = {' '};
	char	   *meant = NULL;

	args[0] = CStringGetTextDatum(key);
	if (Find("SELECT incentives_internal.suggested_key($1, ARRAY("
			 "  SELECT p.product_key FROM incentives.products AS p"
			 "   ORDER BY p.product_key COLLATE \"C\"))", 1, argtypes, args, nulls))
		meant = Text(1);
	pg_error_context_trim();
	ereport(ERROR,
			(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
			 errmsg("%s \"%s\" of %s names no product", column, key, what),
			 meant ? errhint("Did you mean the product \"%s\"? If not, store the product first.", meant)
			 : errhint("Store the product in incentives.products first.")));
}

/*
 * Referenced: refuse (23503) the removal of node key (a delete, or a
 * rename to renamed) while a node has it as parent_key or a window of
 * incentives.sku_products names it.
 */
static void
Referenced(const char *key, const char *renamed)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	char		nulls[1] = {' '};
	char	   *action = renamed ? psprintf("renamed to \"%s\"", renamed) : pstrdup("deleted");

	args[0] = CStringGetTextDatum(key);
	if (Find("SELECT p.product_key FROM incentives.products AS p"
			 " WHERE p.parent_key OPERATOR(pg_catalog.=) $1"
			 " ORDER BY p.product_key COLLATE \"C\" LIMIT 1", 1, argtypes, args, nulls))
	{
		char	   *child = Text(1);

		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
				 errmsg("product \"%s\" cannot be %s: it is the parent of product \"%s\"",
						key, action, child),
				 errhint("Give its children another parent_key first.")));
	}
	if (Find("SELECT w.sku_key, w.start_date, w.end_date FROM incentives.sku_products AS w"
			 " WHERE w.product_key OPERATOR(pg_catalog.=) $1"
			 " ORDER BY w.sku_key COLLATE \"C\", w.start_date LIMIT 1", 1, argtypes, args, nulls))
	{
		char	   *sku = Text(1);
		bool		isnull,
					end_null;
		Datum		start = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
		Datum		end = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &end_null);

		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
				 errmsg("product \"%s\" cannot be %s: SKU \"%s\" is in it %s",
						key, action, sku,
						WindowText(DatumGetDateADT(start), end_null,
								   end_null ? 0 : DatumGetDateADT(end))),
				 errhint("Delete or move its windows in incentives.sku_products first.")));
	}
}

PG_FUNCTION_INFO_V1(incentives_products_check);

/*
 * incentives_products_check: AFTER INSERT OR UPDATE row trigger on
 * incentives.products (docs/reference.md, Products).  A product_key being
 * written (an insert, an update that changes it) is refused when it is
 * empty, has leading or trailing white space or a control character
 * (22023, the key shown as a JSON string) or equals another product's but
 * for letter case (23505, naming both); a row whose parent chain comes
 * back to it is refused (22023, naming the keys of the cycle in order),
 * and one whose parent_key is no stored node (23503).  A delete or a
 * rename of a node that a child or a window still names is refused
 * (23503), and, at statement level, a TRUNCATE that leaves windows.
 * An after-row trigger runs once the statement's rows are all written, so
 * a statement that loads a whole tree in any order (a restore's COPY) is
 * checked against its final state.
 */
Datum
incentives_products_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuple;
	Relation	rel;
	char	   *key,
			   *parent,
			   *old_key = NULL;
	bool		new_key = true;
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	char		nulls[2] = {' ', ' '};

	/* TRUNCATE (statement level): no window may be left naming a node */
	if (CALLED_AS_TRIGGER(fcinfo) && TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event) &&
		TRIGGER_FIRED_AFTER(trigdata->tg_event))
	{
		CatalogLock();
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (Find("SELECT w.product_key FROM incentives.sku_products AS w"
				 " ORDER BY w.product_key COLLATE \"C\" LIMIT 1", 0, NULL, NULL, NULL))
		{
			char	   *node = Text(1);

			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
					 errmsg("incentives.products cannot be truncated: windows of incentives.sku_products name its products (\"%s\" and maybe others)",
							node),
					 errhint("Truncate both tables together: TRUNCATE incentives.sku_products, incentives.products.")));
		}
		SPI_finish();
		return PointerGetDatum(NULL);
	}

	tuple = pg_row_trigger_tuple(fcinfo, true, "incentives_internal.products_check");
	rel = trigdata->tg_relation;
	key = Column(rel, tuple, "product_key");
	parent = Column(rel, tuple, "parent_key");
	if (!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		old_key = Column(rel, trigdata->tg_trigtuple, "product_key");
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		new_key = strcmp(old_key, key) != 0;

	CatalogLock();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* a delete, a rename: nothing may be left naming the old key */
	if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
	{
		Referenced(old_key, NULL);
		SPI_finish();
		return PointerGetDatum(NULL);
	}
	if (new_key && old_key != NULL)
		Referenced(old_key, key);

	if (new_key)
	{
		/* well formed: the white space and control characters of offer keys */
		args[0] = CStringGetTextDatum(key);
		if (Find("SELECT pg_catalog.format('product key %s %s', pg_catalog.to_jsonb(k)::pg_catalog.text, CASE"
				 "  WHEN k OPERATOR(pg_catalog.=) '' THEN 'is empty'"
				 "  WHEN k OPERATOR(pg_catalog.~) '^[\\s\\u0085\\u00a0\\u1680\\u2000-\\u200b\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]'"
				 "    THEN 'has leading white space'"
				 "  WHEN k OPERATOR(pg_catalog.~) '[\\s\\u0085\\u00a0\\u1680\\u2000-\\u200b\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]$'"
				 "    THEN 'has trailing white space'"
				 "  ELSE 'has a control character' END)"
				 "  FROM (SELECT $1 AS k) AS t"
				 " WHERE k OPERATOR(pg_catalog.=) ''"
				 "    OR k OPERATOR(pg_catalog.~) '^[\\s\\u0085\\u00a0\\u1680\\u2000-\\u200b\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]'"
				 "    OR k OPERATOR(pg_catalog.~) '[\\s\\u0085\\u00a0\\u1680\\u2000-\\u200b\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]$'"
				 "    OR k OPERATOR(pg_catalog.~) '[\\u0001-\\u001f\\u007f-\\u009f]'",
				 1, argtypes, args, nulls))
		{
			char	   *problem = Text(1);

			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s", problem),
					 errhint("A product key is not empty and has no surrounding white space and no control character.")));
		}

		/* another product's key, but for letter case */
		if (Find("SELECT p.product_key FROM incentives.products AS p"
				 " WHERE pg_catalog.lower(p.product_key) OPERATOR(pg_catalog.=) pg_catalog.lower($1)"
				 "   AND p.product_key OPERATOR(pg_catalog.<>) $1"
				 " ORDER BY p.product_key COLLATE \"C\" LIMIT 1", 1, argtypes, args, nulls))
		{
			char	   *rival = Text(1);

			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("product key \"%s\" differs only in letter case from the existing product \"%s\"",
							key, rival),
					 errdetail("Product keys are compared without regard to letter case."),
					 errhint("Use the product \"%s\", or choose another key.", rival)));
		}
	}

	/*
	 * No cycle: walk up from the row's parent; the walk ends at a root, at
	 * the row itself (a cycle: the path names it), or at a key it has
	 * passed (a cycle not through this row, which the checks never let in:
	 * the guard only ends the walk).
	 */
	if (parent != NULL && strcmp(parent, key) != 0)
	{
		args[0] = CStringGetTextDatum(parent);
		if (!Find("SELECT FROM incentives.products AS p WHERE p.product_key OPERATOR(pg_catalog.=) $1",
				  1, argtypes, args, nulls))
			MissingNode(parent, psprintf("product \"%s\"", key), "parent_key");
	}
	if (parent != NULL)
	{
		args[0] = CStringGetTextDatum(key);
		args[1] = CStringGetTextDatum(parent);
		if (Find("WITH RECURSIVE up (node, path) AS ("
				 "  SELECT $2, ARRAY[$1, $2]"
				 "  UNION ALL"
				 "  SELECT p.parent_key, up.path OPERATOR(pg_catalog.||) p.parent_key"
				 "    FROM up JOIN incentives.products AS p ON p.product_key OPERATOR(pg_catalog.=) up.node"
				 "   WHERE up.node OPERATOR(pg_catalog.<>) $1"
				 "     AND p.parent_key IS NOT NULL"
				 "     AND NOT p.parent_key OPERATOR(pg_catalog.=) ANY (up.path[2:])"
				 ")"
				 " SELECT pg_catalog.array_to_string(up.path, ' -> ') FROM up"
				 " WHERE up.node OPERATOR(pg_catalog.=) $1 LIMIT 1", 2, argtypes, args, nulls))
		{
			char	   *cycle = Text(1);

			pg_error_context_trim();
			if (strcmp(key, parent) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("product \"%s\" cannot be its own parent", key),
						 errhint("A product at the top of its tree has parent_key NULL.")));
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("product \"%s\" cannot have parent \"%s\": the products would form a cycle (%s)",
							key, parent, cycle),
					 errdetail("Products form a forest: following parent_key up from any product ends at a product without a parent."),
					 errhint("Give one product of the cycle another parent, or parent_key NULL.")));
		}
	}
	SPI_finish();
	return PointerGetDatum(NULL);
}

PG_FUNCTION_INFO_V1(incentives_sku_products_check);

/*
 * incentives_sku_products_check: AFTER INSERT OR UPDATE row trigger on
 * incentives.sku_products (docs/reference.md, Products).  Refused (23P01,
 * naming the SKU, the product and both windows): another window of the
 * same SKU in the same product that overlaps the row's (both ends
 * inclusive, a NULL end_date never ends).  Windows that touch (one ends
 * the day before the next starts) do not overlap; windows of one SKU in
 * different products may.  A product_key that is no stored node is
 * refused too (23503), but while a restore runs.
 */
Datum
incentives_sku_products_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuple = pg_row_trigger_tuple(fcinfo, true, "incentives_internal.sku_products_check");
	Relation	rel = trigdata->tg_relation;
	TupleDesc	desc = RelationGetDescr(rel);
	char	   *sku = Column(rel, tuple, "sku_key");
	char	   *product = Column(rel, tuple, "product_key");
	bool		isnull,
				end_null;
	Datum		start = heap_getattr(tuple, pg_column(rel, "start_date"), desc, &isnull);
	Datum		end = heap_getattr(tuple, pg_column(rel, "end_date"), desc, &end_null);
	Oid			argtypes[4] = {TEXTOID, TEXTOID, DATEOID, DATEOID};
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	CatalogLock();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* the node exists (not checked while a restore loads the tables) */
	args[0] = CStringGetTextDatum(product);
	if (!Restoring() &&
		!Find("SELECT FROM incentives.products AS p WHERE p.product_key OPERATOR(pg_catalog.=) $1",
			  1, argtypes, args, nulls))
		MissingNode(product, psprintf("a window of SKU \"%s\"", sku), "product_key");

	args[0] = CStringGetTextDatum(sku);
	args[1] = CStringGetTextDatum(product);
	args[2] = start;
	args[3] = end_null ? (Datum) 0 : end;
	nulls[3] = end_null ? 'n' : ' ';
	if (Find("SELECT w.start_date, w.end_date FROM incentives.sku_products AS w"
			 " WHERE w.sku_key OPERATOR(pg_catalog.=) $1"
			 "   AND w.product_key OPERATOR(pg_catalog.=) $2"
			 "   AND w.start_date OPERATOR(pg_catalog.<>) $3"
			 "   AND w.start_date OPERATOR(pg_catalog.<=) COALESCE($4, 'infinity')"
			 "   AND COALESCE(w.end_date, 'infinity') OPERATOR(pg_catalog.>=) $3"
			 " ORDER BY w.start_date LIMIT 1", 4, argtypes, args, nulls))
	{
		bool		other_end_null;
		Datum		other_start = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
												&isnull);
		Datum		other_end = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
											  &other_end_null);

		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_EXCLUSION_VIOLATION),
				 errmsg("window of SKU \"%s\" in product \"%s\" %s overlaps its window %s",
						sku, product,
						WindowText(DatumGetDateADT(start), end_null,
								   end_null ? 0 : DatumGetDateADT(end)),
						WindowText(DatumGetDateADT(other_start), other_end_null,
								   other_end_null ? 0 : DatumGetDateADT(other_end))),
				 errhint("Both ends are inclusive: end one window the day before the next starts, or extend the existing window instead.")));
	}
	SPI_finish();
	return PointerGetDatum(NULL);
}
