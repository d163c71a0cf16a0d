/*
 * error_context.c
 *    The CONTEXT of an error a user meets (docs/reference.md, Error
 *    context): the frames of the caller's own functions, and the notes the
 *    extension's C code pushes of what failed ("calculating transaction
 *    ... of participant ..."), but no frame of the extension's own routines
 *    and of the statements they run, which say nothing the message, detail
 *    and hint do not.
 *
 *    pg_error_context_trim() replaces error_context_stack, right before an
 *    ereport(ERROR), with a copy without those frames;
 *    incentives_internal.raise_error() (and raise_column_error()) raise
 *    the errors of the extension's PL/pgSQL routines through it.
 *
 *    A frame is recognised by what it says, evaluated alone: it is a frame
 *    of the extension's routines when its text names one of them by its
 *    signature as PL/pgSQL prints it (incentives.settle(date,text,regclass))
 *    or mentions a name of schema incentives_internal.  Names and
 *    signatures are never translated, so neither is the test.  The frames
 *    the extension's own C code pushed (their callback is code of this
 *    library) are kept wherever they are; every other frame from the newest
 *    to the outermost frame of the extension's routines goes; the older
 *    ones, the caller's, stay.
 *
 *    The signatures are read from pg_proc once per backend into their own
 *    memory context, and read again after a change of pg_proc.
 */
/* dladdr() is a GNU extension of <dlfcn.h>; PostgreSQL's Linux builds define it already */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "postgres.h"

#include <dlfcn.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "pg/base/error_context.h"

/* The schemas whose routines' frames are left out. */
static const char *const routine_schemas[] = {"incentives", "incentives_internal"};

#define ROUTINE_SCHEMAS lengthof(routine_schemas)

/* Any name of this schema in a frame makes it one of the extension's. */
#define INTERNAL_PREFIX "incentives_internal."

/*
 * The signatures of the extension's routines, as a PL/pgSQL frame names
 * them (palloc'd strings in signature_context), valid while pg_proc has
 * not changed since they were read.
 */
static MemoryContext signature_context = NULL;
static List *signatures = NIL;
static bool signatures_read = false;
static uint64 proc_changes = 0;
static uint64 signatures_as_of = 0;
static bool proc_callback_registered = false;

/* ProcChanged: a syscache callback: pg_proc changed, read it again. */
static void
ProcChanged(Datum arg, int cacheid, uint32 hashvalue)
{
	proc_changes++;
}

/*
 * ArgumentTypes: the argument types of a routine as format_procedure()
 * writes them when the routine's schema is not on the search path: a type
 * of pg_catalog by its bare name, any other qualified ("text[],regclass",
 * "incentives.earning[]"), in the current memory context.
 */
static char *
ArgumentTypes(const Form_pg_proc proc)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < proc->pronargs; i++)
	{
		char	   *type = format_type_be_qualified(proc->proargtypes.values[i]);

		if (i > 0)
			appendStringInfoChar(&buf, ',');
		if (strncmp(type, "pg_catalog.", strlen("pg_catalog.")) == 0)
			type += strlen("pg_catalog.");
		appendStringInfoString(&buf, type);
	}
	return buf.data;
}

/*
 * ReadSignatures: the signatures of every routine of the schemas
 * routine_schemas from pg_proc.  Each is named qualified, as PL/pgSQL
 * names a routine compiled while its schema is not on the search path
 * (every routine that sets search_path); a PL/pgSQL or SQL routine that
 * does not set it (a procedure that may commit) is also named bare, as it
 * is when compiled under a search_path holding its schema.
 */
static void
ReadSignatures(void)
{
	Oid			schema_oids[ROUTINE_SCHEMAS];
	uint64		as_of = proc_changes;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tuple;
	int			s;

	if (!proc_callback_registered)
	{
		CacheRegisterSyscacheCallback(PROCOID, ProcChanged, (Datum) 0);
		proc_callback_registered = true;
	}
	if (signature_context == NULL)
		signature_context = AllocSetContextCreate(TopMemoryContext, "incentives routine signatures",
												  ALLOCSET_SMALL_SIZES);
	signatures_read = false;
	MemoryContextReset(signature_context);
	signatures = NIL;
	for (s = 0; s < (int) ROUTINE_SCHEMAS; s++)
		schema_oids[s] = get_namespace_oid(routine_schemas[s], true);

	rel = table_open(ProcedureRelationId, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tuple);
		MemoryContext old;
		char	   *args;
		bool		sets_path;

		for (s = 0; s < (int) ROUTINE_SCHEMAS; s++)
			if (OidIsValid(schema_oids[s]) && proc->pronamespace == schema_oids[s])
				break;
		if (s == (int) ROUTINE_SCHEMAS)
			continue;
		sets_path = !heap_attisnull(tuple, Anum_pg_proc_proconfig, RelationGetDescr(rel));
		old = MemoryContextSwitchTo(signature_context);
		args = ArgumentTypes(proc);
		signatures = lappend(signatures,
							 psprintf("%s(%s)",
									  quote_qualified_identifier(routine_schemas[s],
																 NameStr(proc->proname)),
									  args));
		if (!sets_path && proc->prolang != ClanguageId && proc->prolang != INTERNALlanguageId)
			signatures = lappend(signatures,
								 psprintf("%s(%s)", quote_identifier(NameStr(proc->proname)), args));
		MemoryContextSwitchTo(old);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	signatures_as_of = as_of;
	signatures_read = true;
}

/*
 * IsNameChar: can c end a longer name that name would be the tail of (an
 * ASCII letter, digit, "_" or "$", or the "." after a schema)?  A byte of
 * a multibyte character is not: a translation may quote a statement with
 * one.
 */
static bool
IsNameChar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '$' || c == '.';
}

/*
 * Mentions: does text hold name, not as the tail of a longer name
 * ("my_incentives.settle(...)", "other.settle(...)")?
 */
static bool
Mentions(const char *text, const char *name)
{
	const char *p = text;

	while ((p = strstr(p, name)) != NULL)
	{
		if (p == text || !IsNameChar(p[-1]))
			return true;
		p++;
	}
	return false;
}

/*
 * FrameText: what one frame's callback says, evaluated alone (a chain of
 * that frame only), in the current memory context; NULL when it says
 * nothing.
 */
static char *
FrameText(const ErrorContextCallback *frame)
{
	ErrorContextCallback alone;
	ErrorContextCallback *stack = error_context_stack;
	char	   *text;

	alone.previous = NULL;
	alone.callback = frame->callback;
	alone.arg = frame->arg;
	error_context_stack = &alone;
	text = GetErrorContextStack();
	error_context_stack = stack;
	return text;
}

/* IsRoutineFrame: is frame one of the extension's routines' (above)? */
static bool
IsRoutineFrame(const ErrorContextCallback *frame)
{
	char	   *text = FrameText(frame);
	bool		routine = false;
	ListCell   *lc;

	if (text == NULL)
		return false;
	if (Mentions(text, INTERNAL_PREFIX))
		routine = true;
	else
	{
		if (!signatures_read || signatures_as_of != proc_changes)
			ReadSignatures();
		foreach(lc, signatures)
		{
			if (Mentions(text, (const char *) lfirst(lc)))
			{
				routine = true;
				break;
			}
		}
	}
	pfree(text);
	return routine;
}

/* IsOwnFrame: was frame pushed by this library's code? */
static bool
IsOwnFrame(const ErrorContextCallback *frame)
{
	Dl_info		own;
	Dl_info		theirs;

	if (dladdr((const void *) pg_error_context_trim, &own) == 0 ||
		dladdr((const void *) frame->callback, &theirs) == 0)
		return false;
	return own.dli_fbase == theirs.dli_fbase;
}

/* pg_error_context_trim: see error_context.h. */
void
pg_error_context_trim(void)
{
	ErrorContextCallback *frame;
	ErrorContextCallback *outermost = NULL;
	ErrorContextCallback *head = NULL;
	ErrorContextCallback *tail = NULL;

	for (frame = error_context_stack; frame != NULL; frame = frame->previous)
		if (!IsOwnFrame(frame) && IsRoutineFrame(frame))
			outermost = frame;
	if (outermost == NULL)
		return;

	/* this library's frames newer than the outermost, copied in order */
	for (frame = error_context_stack; frame != outermost; frame = frame->previous)
	{
		ErrorContextCallback *copy;

		if (!IsOwnFrame(frame))
			continue;
		copy = palloc(sizeof(ErrorContextCallback));
		copy->callback = frame->callback;
		copy->arg = frame->arg;
		copy->previous = NULL;
		if (tail)
			tail->previous = copy;
		else
			head = copy;
		tail = copy;
	}
	/* then the caller's, as they are */
	if (tail)
	{
		tail->previous = outermost->previous;
		error_context_stack = head;
	}
	else
		error_context_stack = outermost->previous;
}

/* OptionalText: argument i as a C string, NULL when it is NULL or empty. */
static char *
OptionalText(FunctionCallInfo fcinfo, int i)
{
	char	   *s;

	if (PG_NARGS() <= i || PG_ARGISNULL(i))
		return NULL;
	s = text_to_cstring(PG_GETARG_TEXT_PP(i));
	return s[0] ? s : NULL;
}

PG_FUNCTION_INFO_V1(incentives_raise_error);

/*
 * incentives_raise_error: raise_error(state, message, detail, hint) and
 * raise_column_error(state, message, detail, hint, schema_name,
 * table_name, column_name): an ERROR of SQLSTATE state (five characters)
 * with message, and detail, hint and the schema, table and column fields
 * when they are neither NULL nor empty, as PL/pgSQL's RAISE writes them,
 * its CONTEXT trimmed (pg_error_context_trim).  Never returns.
 */
Datum
incentives_raise_error(PG_FUNCTION_ARGS)
{
	char	   *state;
	char	   *message;
	char	   *detail;
	char	   *hint;
	char	   *schema_name;
	char	   *table_name;
	char	   *column_name;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("raise_error: state and message must not be NULL")));
	state = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (strlen(state) != 5 || strspn(state, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 5)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("raise_error: invalid SQLSTATE code \"%s\"", state)));
	message = text_to_cstring(PG_GETARG_TEXT_PP(1));
	detail = OptionalText(fcinfo, 2);
	hint = OptionalText(fcinfo, 3);
	schema_name = OptionalText(fcinfo, 4);
	table_name = OptionalText(fcinfo, 5);
	column_name = OptionalText(fcinfo, 6);

	pg_error_context_trim();
	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4])),
			 errmsg_internal("%s", message),
			 detail ? errdetail_internal("%s", detail) : 0,
			 hint ? errhint("%s", hint) : 0,
			 schema_name ? err_generic_string(PG_DIAG_SCHEMA_NAME, schema_name) : 0,
			 table_name ? err_generic_string(PG_DIAG_TABLE_NAME, table_name) : 0,
			 column_name ? err_generic_string(PG_DIAG_COLUMN_NAME, column_name) : 0));
	PG_RETURN_VOID();
}
