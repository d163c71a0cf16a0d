/*
 * fuzz_common.h
 *    What both libFuzzer harnesses (fuzz_offer.c, fuzz_calc.c) share: the
 *    arenas behind inc_alloc, reporting a bug, and checks of numbers and
 *    JSON text the core hands out.
 *
 * The arenas mirror the host's memory model: everything a harness
 * allocates through inc_alloc goes to the current arena (fuzz_arena), and
 * an arena is freed whole, as the glue resets a memory context; a pointer
 * kept across a reset is a use after free that AddressSanitizer reports.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/numbers/core.h"

typedef struct FuzzArenaBlock FuzzArenaBlock;

typedef struct FuzzArena
{
	FuzzArenaBlock *blocks;
} FuzzArena;

/* The arena inc_alloc takes from (fuzz_alloc is the hook). */
extern FuzzArena *fuzz_arena;
extern void *fuzz_alloc(size_t size);
extern void fuzz_arena_reset(FuzzArena *a);

/* The harness's name, for messages ("fuzz_calc"). */
extern const char *fuzz_name;

/* fuzz_bug: report what went wrong (and detail, may be NULL) and abort. */
extern void fuzz_bug(const char *what, const char *detail) INC_NORETURN;

#define EXPECT(cond) \
	do { if (!(cond)) fuzz_bug("invariant failed", #cond); } while (0)
#define EXPECT_ROW(cond, text) \
	do { if (!(cond)) fuzz_bug("invariant failed: " #cond, (text)); } while (0)

/* fuzz_hash: FNV-1a of n bytes (never 0). */
extern uint64_t fuzz_hash(const uint8_t *p, size_t n);

/*
 * fuzz_dec_form: is d an IncDec the host can report: exactly scale
 * fraction digits (scale < 0: the shortest form), within 38 digits, and
 * text that inc_dec_format writes and inc_dec_parse reads back unchanged?
 */
extern bool fuzz_dec_form(const IncDec *d, int scale);

/* fuzz_dec_text: d as text in buf (INC_NUM_BUF bytes), for messages. */
extern const char *fuzz_dec_text(const IncDec *d, char *buf);

/*
 * fuzz_json_object: json parsed strictly (as the offer parser does) as a
 * json-c object, or NULL when it is not a JSON object; the caller releases
 * it with fuzz_json_free.
 */
struct json_object;
extern struct json_object *fuzz_json_object(const char *json);
extern void fuzz_json_free(struct json_object *obj);

#endif							/* FUZZ_COMMON_H */
