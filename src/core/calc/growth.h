/*
 * growth.h
 *    Growth over a baseline (docs/reference.md, Growth over a baseline),
 *    as the stepped strategy and the requirements compute it: which
 *    transactions make a baseline by dates, the growth percentage
 *    G = (C - B) / B x 100 of a current value C over the baseline B, the
 *    band edges B x (1 + t / 100) of incremental tiers, and the
 *    diagnostics' account of a baseline.
 */
#ifndef INC_GROWTH_H
#define INC_GROWTH_H

#include "calc.h"
#include "../util/jsonbuf.h"

/* Why a growth value is there or not. */
typedef enum IncGrowthStatus
{
	INC_GROWTH_VALUE = 0,		/* B > 0: G is there */
	INC_GROWTH_NO_BASELINE,		/* a baseline property that is missing */
	INC_GROWTH_NOT_POSITIVE		/* B <= 0 */
} IncGrowthStatus;

/* A participant's growth under one growth threshold or requirement. */
typedef struct IncGrowth
{
	IncGrowthStatus status;
	bool		has_baseline;	/* false: INC_GROWTH_NO_BASELINE */
	IncRat		baseline;		/* B */
	IncRat		current;		/* C */
	IncRat		growth;			/* G, when status is INC_GROWTH_VALUE */
} IncGrowth;

/*
 * inc_txn_in_baseline: does t count toward baseline (by dates): its
 * transaction type is transaction_type (a threshold filter's) and its date
 * lies in the baseline's window?  A NULL date or type is a data error
 * (not matched when deferred).
 */
extern bool inc_txn_in_baseline(IncCalc *c, const IncBaseline *baseline,
								const char *transaction_type, const IncTxn *t);

/*
 * inc_growth_evaluate: the growth of current over baseline into *out: B is
 * dates_sum for a baseline by dates, else key's property (the aggregation
 * key's, or a member's for a requirement of scope member; a missing one:
 * no baseline; one that is not a number: the data error of
 * inc_calc_property_of).
 */
extern void inc_growth_evaluate(IncCalc *c, const char *key, const IncBaseline *baseline,
								const IncRat *current, const IncRat *dates_sum,
								IncGrowth *out);

/* inc_growth_edge: the volume at growth threshold t over baseline b: b x (100 + t) / 100. */
extern void inc_growth_edge(const IncRat *b, const IncDec *threshold, IncRat *edge);

/*
 * inc_growth_baseline_json: a baseline as a JSON object,
 * {"start_date", "end_date"} or {"property_key"}.
 */
extern void inc_growth_baseline_json(IncJsonBuf *b, const IncBaseline *baseline);

/*
 * inc_growth_json: the members a diagnostics object gets for a growth
 * type, each after a comma: "baseline" ({"start_date", "end_date"} or
 * {"property_key"}), "baseline_value" (null when missing),
 * "current_value", "no_growth_value" (null, "baseline is missing" or
 * "baseline is not positive").
 */
extern void inc_growth_json(IncJsonBuf *b, const IncBaseline *baseline, const IncGrowth *g);

#endif							/* INC_GROWTH_H */
