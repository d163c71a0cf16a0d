/*
 * fuzz_world.h
 *    The generator behind fuzz_calc (fuzz_world.c): a driver that turns
 *    the fuzzer's bytes (then a seeded xorshift) into choices, the
 *    vocabulary of the accepted offers (SKUs, transaction types, periods,
 *    units), fuzzed decimals, built-in offers for inputs that hold none,
 *    the transactions, and the "small world" test that tells whether an
 *    out-of-range error is possible at all.
 */
#ifndef FUZZ_WORLD_H
#define FUZZ_WORLD_H

#include "core/engine/engine.h"
#include "core/util/strmap.h"

#define FUZZ_MAX_TXNS	24
#define FUZZ_MAX_VOCAB	48

/* Choices: the input bytes first, then a generator seeded from the input. */
typedef struct FuzzDriver
{
	const uint8_t *p;
	size_t		n;
	size_t		pos;
	uint64_t	state;			/* xorshift64 once the bytes run out */
	bool		tame;			/* fuzz_gen_dec: small non-negative values only */
} FuzzDriver;

extern uint32_t fuzz_take(FuzzDriver *d, uint32_t bound);

/* What the accepted offers talk about. */
typedef struct FuzzVocab
{
	int			nskus;
	const char *skus[FUZZ_MAX_VOCAB];
	const char *sku_from[FUZZ_MAX_VOCAB];	/* a stacked conversion's unit, or NULL */
	int			ntypes;
	const char *types[FUZZ_MAX_VOCAB];
	int			nuoms;
	const char *uoms[FUZZ_MAX_VOCAB];
	int			nperiods;
	int32_t		starts[FUZZ_MAX_VOCAB];
	int32_t		ends[FUZZ_MAX_VOCAB];
} FuzzVocab;

extern void fuzz_vocab_offer(FuzzVocab *v, const IncOffer *o);

extern IncDec fuzz_gen_dec(FuzzDriver *d, bool positive);

/*
 * fuzz_small_dec / fuzz_small_offer: numbers that cannot overflow (see
 * fuzz_world.c, the small world).
 */
extern bool fuzz_small_dec(const IncDec *d, bool divisor, bool nonneg);
extern bool fuzz_small_offer(const IncOffer *o);

/*
 * fuzz_gen_schedule: give offer o (not fixed_amount) a rate schedule
 * (docs/lifecycle.md, Prospective rate changes) of two or three versions,
 * as a host hands them to inc_engine_add_offer_schedule: copies of o that
 * differ only in rate values (each the current value or a small decimal;
 * the last version the current values), with ascending effective dates
 * drawn inside its span.  Sets o->nschedule and o->schedule; the versions
 * have no schedule of their own.
 */
extern void fuzz_gen_schedule(FuzzDriver *d, IncOffer *o);

/* Offers covering every strategy and calculator, sharing SKUs a, b, c. */
extern const char *const fuzz_builtin_offers[];
extern const int fuzz_nbuiltin;

/* fuzz_pick_uom: a common unit or one of the offers' conversion units. */
extern const char *fuzz_pick_uom(FuzzDriver *d, const FuzzVocab *v);

/*
 * fuzz_gen_txns: up to FUZZ_MAX_TXNS transactions of one participant,
 * sorted by transaction_id; sku_uom is the SKU catalog handed to the
 * engine (so most transactions come in a unit that converts); one in 16
 * has some columns NULL (IncTxn.nulls).
 */
extern IncTxn *fuzz_gen_txns(FuzzDriver *d, const FuzzVocab *v, IncStrMap *sku_uom,
							 int *ntxns);

#endif							/* FUZZ_WORLD_H */
