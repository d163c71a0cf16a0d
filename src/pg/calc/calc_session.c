/*
 * calc_session.c
 *    One calculation set up once (see calc_session.h): the engine, the
 *    participant groups and who a one-participant call reads, properties,
 *    enrollment windows, the transactions, and what a group's figures need
 *    of members the caller cannot see (docs/security.md).
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "pg/base/fail.h"
#include "pg/calc/calc_session.h"
#include "pg/load/participant_groups.h"

/*
 * NoteFailure: error context callback of a session; notes the participant
 * and transaction it was at (base/fail.c), so that a refresh that skips
 * failing participants can say which transaction failed without reading
 * the message (docs/lifecycle.md, on_error => 'skip').  While the engine
 * runs its position says where; while reading, the row the source raised
 * the error about does.
 */
static void
NoteFailure(void *arg)
{
	CalcSession *s = arg;
	const char *participant;
	const char *transaction_id;

	if (s->engine && inc_engine_position(s->engine, &participant, &transaction_id))
		pg_failure_note(participant, transaction_id);
	else
		pg_failure_note(s->read_position.participant_key, s->read_position.transaction_id);
}

/* calc_session_open: the calculation's data loaded, its transactions read. */
void
calc_session_open(CalcSession *s, const CalcSessionOptions *o)
{
	const char *const *members = NULL;
	int			nmembers = 0;
	const char *const *hidden;
	int			nhidden;

	memset(s, 0, sizeof(*s));
	/* where a failure happens, from the first load on */
	pg_failure_clear();
	s->failure.callback = NoteFailure;
	s->failure.arg = s;
	s->failure.previous = error_context_stack;
	error_context_stack = &s->failure;
	/* offers, SKU units, conversions: cached when this snapshot has them */
	pg_calc_engine(o->offer_keys, o->as_of, &s->ce);
	s->engine = s->ce.engine;
	inc_engine_set_tick(s->engine, pg_calc_tick);
	inc_engine_set_diagnostics(s->engine, NULL, NULL);
	/* the participant groups, and who a one-participant call reads */
	s->groups = pg_groups_load(s->engine, o->relid);
	if (o->participant)
		members = pg_groups_members(s->groups, o->participant, &nmembers);
	s->props = pg_calc_properties(s->engine, o->properties, members, nmembers);
	pg_enrollments_load(&s->enrollments, s->engine, o->participant, members, nmembers,
						o->request_enrollments);
	inc_engine_set_enrollments(s->engine, pg_enrollments_lookup, &s->enrollments);

	s->unit_context = AllocSetContextCreate(CurrentMemoryContext, "incentives participant",
											ALLOCSET_DEFAULT_SIZES);
	/* every transaction read, grouped by unit (txn_source.h) */
	s->src = txn_source_open(o->relid, o->participant, o->through_date, s->engine,
							 s->ce.context, s->groups, &s->read_position, o->source);
	/* what a group's figures need of members the caller cannot see */
	hidden = txn_source_hidden_keys(s->src, &nhidden);
	pg_calc_properties_hidden(s->props, s->engine, hidden, nhidden);
	pg_enrollments_hidden(&s->enrollments, s->engine, hidden, nhidden);

	/* the engine's position names what failed, while it calculates */
	s->context.callback = pg_calc_error_context;
	s->context.arg = s->engine;
	s->context.previous = error_context_stack;
	error_context_stack = &s->context;
}

/* calc_session_next: the next unit, its memory reset first. */
bool
calc_session_next(CalcSession *s)
{
	MemoryContextReset(s->unit_context);
	return txn_source_next(s->src, s->unit_context, &s->unit);
}

/* calc_session_close: the error contexts popped, the source closed. */
void
calc_session_close(CalcSession *s)
{
	error_context_stack = s->failure.previous;
	txn_source_close(s->src);
	MemoryContextDelete(s->unit_context);
}
