/*
 * growth.c
 *    Growth over a baseline (see growth.h; docs/reference.md, Growth over
 *    a baseline).
 *
 * A baseline by dates is the same sum as the current value (the threshold
 * filters' SKUs and transaction types) over the transactions dated in the
 * baseline's window instead of the filters' periods; the caller sums it
 * with inc_calc_add_volume, as it sums the current value.  A baseline by
 * property is read as a stepped property threshold is.  With B > 0 the
 * growth G = (C - B) / B x 100 is exact; with B <= 0 or missing there is
 * no growth value, and nothing that needs one is paid or met.
 */
#include <string.h>

#include "growth.h"

/* inc_txn_in_baseline: transaction type and a date inside the window. */
bool
inc_txn_in_baseline(IncCalc *c, const IncBaseline *baseline, const char *transaction_type,
					const IncTxn *t)
{
	if (!inc_calc_has(c, t, INC_TXN_NULL_DATE | INC_TXN_NULL_TYPE))
		return false;
	return inc_txn_date(t) >= baseline->start_date &&
		inc_txn_date(t) <= baseline->end_date &&
		strcmp(t->transaction_type, transaction_type) == 0;
}

/* inc_growth_evaluate: B, C and, when B > 0, G = (C - B) / B x 100. */
void
inc_growth_evaluate(IncCalc *c, const char *key, const IncBaseline *baseline,
					const IncRat *current, const IncRat *dates_sum, IncGrowth *out)
{
	IncRat		hundred;

	out->current = *current;
	if (baseline->kind == INC_BASELINE_PROPERTY)
		out->has_baseline = inc_calc_property_of(c, key, baseline->property_key,
												  &out->baseline);
	else
	{
		out->baseline = *dates_sum;
		out->has_baseline = true;
	}
	if (!out->has_baseline)
	{
		out->status = INC_GROWTH_NO_BASELINE;
		return;
	}
	if (inc_rat_sign(&out->baseline) <= 0)
	{
		out->status = INC_GROWTH_NOT_POSITIVE;
		return;
	}
	out->status = INC_GROWTH_VALUE;
	inc_rat_from_int(&hundred, 100);
	inc_rat_sub(&out->growth, current, &out->baseline);
	inc_rat_mul(&out->growth, &out->growth, &hundred);
	inc_rat_div(&out->growth, &out->growth, &out->baseline);
}

/* inc_growth_edge: b x (100 + t) / 100. */
void
inc_growth_edge(const IncRat *b, const IncDec *threshold, IncRat *edge)
{
	IncRat		hundred;

	inc_rat_from_dec(edge, threshold);
	inc_rat_from_int(&hundred, 100);
	inc_rat_add(edge, edge, &hundred);
	inc_rat_mul(edge, edge, b);
	inc_rat_div(edge, edge, &hundred);
}

/* Date: a day number as a JSON string. */
static void
Date(IncJsonBuf *b, int32_t days)
{
	char		text[16];

	inc_date_format(days, text, sizeof(text));
	inc_json_string(b, text);
}

/* inc_growth_baseline_json: {"start_date", "end_date"} or {"property_key"}. */
void
inc_growth_baseline_json(IncJsonBuf *b, const IncBaseline *baseline)
{
	inc_json_raw(b, "{");
	if (baseline->kind == INC_BASELINE_PROPERTY)
		inc_json_key_string(b, "property_key", baseline->property_key);
	else
	{
		inc_json_key(b, "start_date");
		Date(b, baseline->start_date);
		inc_json_raw(b, ",");
		inc_json_key(b, "end_date");
		Date(b, baseline->end_date);
	}
	inc_json_raw(b, "}");
}

/* inc_growth_json: the baseline, B, C and why there is no growth value. */
void
inc_growth_json(IncJsonBuf *b, const IncBaseline *baseline, const IncGrowth *g)
{
	static const char *const reasons[] = {
		[INC_GROWTH_VALUE] = NULL,
		[INC_GROWTH_NO_BASELINE] = "baseline is missing",
		[INC_GROWTH_NOT_POSITIVE] = "baseline is not positive",
	};

	inc_json_raw(b, ",\"baseline\":");
	inc_growth_baseline_json(b, baseline);
	inc_json_raw(b, ",\"baseline_value\":");
	inc_json_rat(b, g->has_baseline ? &g->baseline : NULL, 6);
	inc_json_raw(b, ",\"current_value\":");
	inc_json_rat(b, &g->current, 6);
	inc_json_raw(b, ",");
	inc_json_key_string(b, "no_growth_value", reasons[g->status]);
}
