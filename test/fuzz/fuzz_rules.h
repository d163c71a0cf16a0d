/*
 * fuzz_rules.h
 *    fuzz_calc's part for the program rules (fuzz_rules.c): the
 *    participants' enrollment windows the harness plays the host for, the
 *    "twin" of each offer with limits (the same offer without them, so the
 *    limits can be checked against what the offer pays unlimited), and the
 *    rules' invariants, checked on every calculated participant.
 */
#ifndef FUZZ_RULES_H
#define FUZZ_RULES_H

#include "core/util/strmap.h"
#include "fuzz_checks.h"
#include "fuzz_world.h"

#define FUZZ_MAX_WINDOWS 4

/* The windows of the two participants (the same in every offer). */
typedef struct FuzzWindows
{
	const char *participants[2];
	int			n[2];
	IncWindow	windows[2][FUZZ_MAX_WINDOWS];	/* by start_date */
} FuzzWindows;

/* fuzz_gen_windows: 0 to FUZZ_MAX_WINDOWS windows per participant, around the periods. */
extern void fuzz_gen_windows(FuzzDriver *d, const FuzzVocab *v, FuzzWindows *w,
							 const char *const *participants);

/* fuzz_windows: the IncEnrollmentFn over a FuzzWindows. */
extern int	fuzz_windows(void *ctx, const char *participant_key, const char *offer_key,
						 const IncWindow **windows);

/*
 * fuzz_add_twins: after the offers[0..n), a twin of each offer that has
 * limits (a copy without them, offer_key + "#twin"), while there is room
 * for max; returns the new count.
 */
extern int	fuzz_add_twins(const IncOffer **offers, int n, int max);

/*
 * fuzz_certainly_unmet: is a requirement of offer o certainly unmet for
 * participant (a missing or lower property, an amount or a quantity in the
 * SKU's own unit summed here, over the transactions that exist for the
 * offer, none of them NULL where the sum needs it)?  Such an offer pays
 * nothing and never raises a data error (docs/reference.md, Program
 * rules).
 */
extern bool fuzz_certainly_unmet(const IncOffer *o, const IncTxn *txns, int ntxns,
								 const char *participant, const FuzzWindows *w,
								 const IncStrMap *sku_uom, IncPropertyFn props,
								 void *props_ctx);

/*
 * fuzz_check_rules: one participant's rows against the rules of its
 * offers: a "required" offer's rows lie inside a window; an offer whose
 * requirement is certainly unmet (a missing or lower property, an amount
 * or a quantity in the SKU's own unit summed here) has no rows; an offer
 * with limits pays what its twin pays, or nothing (when the twin's total
 * may be below the minimum), or -- when the twin's total may exceed the
 * maximum -- exactly the maximum (rounded to cents, as a pool), over the
 * same rows with the same nominal pay rates.
 */
extern void fuzz_check_rules(const FuzzRows *r, const IncTxn *txns, int ntxns,
							 const char *participant, const FuzzWindows *w,
							 const IncStrMap *sku_uom, IncPropertyFn props, void *props_ctx);

/*
 * fuzz_check_rules_diagnostics: the "rules" of each offer's diagnostics:
 * present exactly for offers with rules; qualified when every requirement
 * is met; a met requirement's value reaches its minimum; the limit applied
 * and the amount paid agree with the rows.
 */
extern void fuzz_check_rules_diagnostics(const FuzzRows *r);

/* fuzz_rules_stats: what the rules did, for the harness's statistics line. */
extern void fuzz_rules_stats(FILE *out);

#endif							/* FUZZ_RULES_H */
