/*
 * unit_main.c
 *    Runs the engine core's unit tests: a malloc arena behind inc_alloc, a
 *    setjmp behind inc_fail, and the test groups in order.
 */
#include <setjmp.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "unit.h"
#include "../../src/core/offer/offer.h"

int			unit_passed;
int			unit_failed;
void		(*unit_fail_observer) (const IncFailure *failure);

typedef struct Block
{
	struct Block *next;
} Block;

static Block *arena;
static jmp_buf *fail_jump;
static IncErrKind fail_kind;
static char fail_message[2048];
static char fail_subject[256];

static void *
ArenaAlloc(size_t size)
{
	Block	   *b = calloc(1, sizeof(Block) + size + 16);

	if (b == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	b->next = arena;
	arena = b;
	return (char *) b + ((sizeof(Block) + 15) & ~(size_t) 15);
}

void
unit_arena_reset(void)
{
	while (arena)
	{
		Block	   *next = arena->next;

		free(arena);
		arena = next;
	}
}

static void
FailHook(const IncFailure *f)
{
	fail_kind = f->kind;
	snprintf(fail_message, sizeof(fail_message), "%s", f->message);
	snprintf(fail_subject, sizeof(fail_subject), "%s", f->subject ? f->subject : "");
	if (unit_fail_observer)
		unit_fail_observer(f);
	if (fail_jump == NULL)
	{
		printf("FAIL unexpected error: %s\n", f->message);
		exit(1);
	}
	longjmp(*fail_jump, 1);
}

/* unit_failure_subject: the subject of the last failure ("" for none). */
const char *
unit_failure_subject(void)
{
	return fail_subject;
}

int
unit_expect_failure(void (*fn) (void *), void *arg, IncErrKind *kind,
					char *message, size_t cap)
{
	jmp_buf		jb;
	jmp_buf    *saved = fail_jump;

	if (setjmp(jb) == 0)
	{
		fail_jump = &jb;
		fn(arg);
		fail_jump = saved;
		unit_failed++;
		printf("FAIL expected an error, got none\n");
		return 0;
	}
	fail_jump = saved;
	if (kind)
		*kind = fail_kind;
	if (message)
		snprintf(message, cap, "%s", fail_message);
	unit_passed++;
	return 1;
}

/* unit_dec_text: d's full text, in a rotating buffer. */
const char *
unit_dec_text(const IncDec *d)
{
	static char bufs[16][INC_NUM_BUF];
	static int	next;
	char	   *b = bufs[next++ % 16];

	inc_dec_format(d, b, INC_NUM_BUF);
	return b;
}

/* unit_read_file: a whole file (malloc'd, NUL-terminated), or NULL. */
char *
unit_read_file(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf = NULL;
	size_t		len = 0;
	size_t		n;
	char		chunk[4096];

	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
	{
		char	   *grown = realloc(buf, len + n + 1);

		if (grown == NULL)
			break;
		buf = grown;
		memcpy(buf + len, chunk, n);
		len += n;
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/*
 * unit_load_offers: the offers of a JSON array file (e.g. a fixture's
 * offers.json), each compiled from its text by inc_offer_parse; at most
 * max into out (arena memory).  Returns how many; a document that does
 * not compile is a recorded failure.
 */
int
unit_load_offers(const char *path, IncOffer **out, int max)
{
	char	   *text = unit_read_file(path);
	struct json_object *arr;
	int			n = 0;
	size_t		i;

	if (text == NULL)
	{
		unit_failed++;
		printf("FAIL cannot read %s (run from the repository root)\n", path);
		return 0;
	}
	arr = json_tokener_parse(text);
	free(text);
	for (i = 0; arr && i < json_object_array_length(arr) && n < max; i++)
	{
		const char *doc = json_object_to_json_string_ext(json_object_array_get_idx(arr, i),
														 JSON_C_TO_STRING_PLAIN);
		IncOfferError err;
		IncOffer   *offer = inc_offer_parse(doc, strlen(doc), &err);

		if (offer == NULL)
		{
			unit_failed++;
			printf("FAIL %s[%zu]: %s\n", path, i, err.message);
			continue;
		}
		out[n++] = offer;
	}
	json_object_put(arr);
	return n;
}

int
main(void)
{
	inc_set_hooks(ArenaAlloc, FailHook);
	test_numeric();
	unit_arena_reset();
	test_offer_parse();
	test_offer_diff();
	test_offer_fields();
	test_names();
	unit_arena_reset();
	test_offer_rules();
	unit_arena_reset();
	test_engine();
	unit_arena_reset();
	test_strategy();
	unit_arena_reset();
	test_rates();
	unit_arena_reset();
	test_fixtures();
	unit_arena_reset();
	test_fixtures_paged();
	unit_arena_reset();
	test_rules();
	unit_arena_reset();
	test_rules_errors();
	test_growth();
	unit_arena_reset();
	test_groups();
	unit_arena_reset();
	test_schedule();
	unit_arena_reset();
	test_select();
	test_currency();
	unit_arena_reset();
	printf("unit: %d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed == 0 ? 0 : 1;
}
