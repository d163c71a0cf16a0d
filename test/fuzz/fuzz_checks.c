/*
 * fuzz_checks.c
 *    fuzz_calc's checks of what the engine hands out: the figures of an
 *    earning row, and the diagnostics of a participant's offers against
 *    its rows (see fuzz_checks.h).
 */
#include <string.h>

#include <json-c/json.h>

#include "core/numbers/rational.h"
#include "fuzz_checks.h"
#include "fuzz_common.h"

/*
 * fuzz_check_row: the figures of one row: reported scales, a pay rate
 * that follows the rate (for incremental tiers, a blended rate within the
 * tiers' values), the contribution, the effective rate (desc names the
 * row in a failure).
 */
void
fuzz_check_row(const IncRow *row, const char *desc)
{
	const IncOffer *o = row->offer;
	bool		incremental = o->strategy == INC_STEPPED &&
		o->stepped.tier_mode == INC_TIERS_INCREMENTAL;

	EXPECT_ROW(row->rate_measure != NULL &&
			   strcmp(row->rate_measure, o->calculator == INC_PERCENT_OF_AMOUNT ?
					  "percent" : "dollars") == 0, desc);
	EXPECT_ROW(fuzz_dec_form(&row->rate_value, -1), desc);
	EXPECT_ROW(fuzz_dec_form(&row->pay_rate, o->calculator == INC_FIXED_AMOUNT || incremental ?
							 6 : -1), desc);
	EXPECT_ROW(fuzz_dec_form(&row->incentivized_quantity, 6), desc);
	EXPECT_ROW(fuzz_dec_form(&row->incentivized_amount, 2), desc);
	EXPECT_ROW(fuzz_dec_form(&row->incentive_amount, 2), desc);
	EXPECT_ROW(fuzz_dec_form(&row->contribution, 6), desc);

	/* the rate value and a percent or dollars pay rate follow the offer */
	EXPECT_ROW(inc_dec_sign(&row->rate_value) >= 0, desc);
	if (incremental)
	{
		/*
		 * the blended rate is a weighted mean of the tiers' values (of its
		 * date's version; a forecast mixes versions): within [0, the
		 * highest value of any version] (/ 100 for percent), rounded to 6
		 * places
		 */
		IncRat		pay,
					top,
					value,
					hundred;
		int			nversions = o->nschedule > 0 ? o->nschedule : 1;
		int			i,
					v;

		inc_rat_from_int(&top, 0);
		for (v = 0; v < nversions; v++)
		{
			const IncOffer *version = o->nschedule > 0 ? o->schedule[v].offer : o;

			for (i = 0; i < version->stepped.ntiers; i++)
			{
				inc_rat_from_dec(&value, &version->stepped.tiers[i].value);
				if (inc_rat_cmp(&value, &top) > 0)
					top = value;
			}
		}
		inc_rat_from_dec(&pay, &row->pay_rate);
		if (o->calculator == INC_PERCENT_OF_AMOUNT)
		{
			inc_rat_from_int(&hundred, 100);
			inc_rat_mul(&pay, &pay, &hundred);
		}
		inc_rat_round(&top, &top, o->calculator == INC_PERCENT_OF_AMOUNT ? 4 : 6);
		EXPECT_ROW(inc_dec_sign(&row->pay_rate) >= 0 && inc_rat_cmp(&pay, &top) <= 0, desc);
	}
	else if (o->calculator != INC_FIXED_AMOUNT)
	{
		IncRat		rate,
					pay,
					hundred;

		inc_rat_from_dec(&rate, &row->rate_value);
		inc_rat_from_dec(&pay, &row->pay_rate);
		if (o->calculator == INC_PERCENT_OF_AMOUNT)
		{
			inc_rat_from_int(&hundred, 100);
			inc_rat_mul(&pay, &pay, &hundred);
		}
		EXPECT_ROW(inc_rat_cmp(&rate, &pay) == 0, desc);
	}

	/* the transaction's grower_key; none for a grower-matched stacked row */
	EXPECT_ROW((row->grower_key == NULL) == (row->txn->grower_key == NULL) &&
			   (row->grower_key == NULL || strcmp(row->grower_key, row->txn->grower_key) == 0),
			   desc);
	if (o->strategy == INC_STACKED && o->stacked.match == INC_MATCH_GROWER)
		EXPECT_ROW(row->grower_key != NULL, desc);

	/* contribution: 1 outside stacked, within [0, 1] in it */
	if (o->strategy != INC_STACKED)
		EXPECT_ROW(row->contribution.coef == 1000000, desc);
	else
		EXPECT_ROW(row->contribution.coef >= 0 && row->contribution.coef <= 1000000,
				   desc);

	/* effective rate: NULL exactly for a zero amount, else the rounded ratio */
	EXPECT_ROW(row->effective_rate_null == (row->incentivized_amount.coef == 0), desc);
	if (!row->effective_rate_null)
	{
		IncRat		amount,
					incentive;
		IncDec		want;

		EXPECT_ROW(fuzz_dec_form(&row->effective_rate, 4), desc);
		inc_rat_from_dec(&amount, &row->incentivized_amount);
		inc_rat_from_dec(&incentive, &row->incentive_amount);
		inc_rat_div(&incentive, &incentive, &amount);
		want = inc_rat_to_dec(&incentive, 4);
		EXPECT_ROW(want.coef == row->effective_rate.coef &&
				   want.scale == row->effective_rate.scale, desc);
	}
}

/* Member: obj's field name (NULL when absent). */
static struct json_object *
Member(struct json_object *obj, const char *name)
{
	struct json_object *val = NULL;

	return obj && json_object_object_get_ex(obj, name, &val) ? val : NULL;
}

/* RowsOf: how many rows offer o has. */
static int
RowsOf(const FuzzRows *r, const IncOffer *o)
{
	int			i,
				n = 0;

	for (i = 0; i < r->nrows; i++)
		n += r->rows[i].offer == o;
	return n;
}

/* RowsPaid: the sum of the rows of offer o with rate_key, and their count. */
static int
RowsPaid(const FuzzRows *r, const IncOffer *o, const char *rate_key, IncRat *sum)
{
	int			i,
				n = 0;

	inc_rat_from_int(sum, 0);
	for (i = 0; i < r->nrows; i++)
	{
		IncRat		a;

		if (r->rows[i].offer != o || strcmp(r->rows[i].rate_key, rate_key) != 0)
			continue;
		inc_rat_from_dec(&a, &r->rows[i].incentive_amount);
		inc_rat_add(sum, sum, &a);
		n++;
	}
	return n;
}

/*
 * VersionTierKey: the key a row of stepped offer o dated as t reports for
 * the tier keyed selected: that tier in the version of t's date under a
 * rate schedule (docs/lifecycle.md, Prospective rate changes), else
 * selected itself.
 */
static const char *
VersionTierKey(const IncOffer *o, const char *selected, const IncTxn *t)
{
	const IncOffer *v = inc_offer_at(o, t->transaction_date);
	int			j;

	for (j = 0; selected && v != o && j < o->stepped.ntiers; j++)
		if (strcmp(o->stepped.tiers[j].key, selected) == 0)
			return v->stepped.tiers[j].key;
	return selected ? selected : "";
}

/*
 * fuzz_check_diagnostics: each offer's diagnostics JSON (one per offer, in
 * offer order) against the participant's rows: a JSON object; a standard
 * entry's incentive_amount is what its rows pay (unless requirements or
 * limits change the rows) and its transactions at least their count; a stepped offer's rows carry its selected_rate_key;
 * a stack with rows earns.  An offer whose requirements are not met, and
 * whose strategy's figures a data error would spoil, shows only "rules"
 * (with "strategy_error") and has no rows.
 */
void
fuzz_check_diagnostics(const FuzzRows *r)
{
	int			k;
	size_t		i;

	EXPECT(r->ndiagnosed == r->noffers);
	for (k = 0; k < r->noffers; k++)
	{
		const IncOffer *o = r->offers[k];
		struct json_object *d = fuzz_json_object(r->diagnostics[k]);
		struct json_object *list;
		const char *amount;
		IncRat		paid;

		EXPECT_ROW(d != NULL, r->diagnostics[k]);
		if (Member(Member(d, "rules"), "strategy_error") != NULL)
		{
			/* "rules" only (and a group offer's "aggregation") */
			EXPECT_ROW(json_object_object_length(d) ==
					   (o->aggregation == INC_AGGREGATE_GROUP ? 2 : 1) &&
					   !json_object_get_boolean(Member(Member(d, "rules"), "qualified")) &&
					   RowsOf(r, o) == 0, r->diagnostics[k]);
			fuzz_json_free(d);
			continue;
		}
		switch (o->strategy)
		{
			case INC_STANDARD:
				list = Member(d, "entries");
				EXPECT_ROW(json_object_is_type(list, json_type_array) &&
						   (int) json_object_array_length(list) == o->nentries,
						   r->diagnostics[k]);
				/*
				 * json-c clamps integers beyond 64 bits, so the amounts are
				 * read from the text: a key in quotes never occurs inside a
				 * JSON string (its quotes would be escaped).
				 */
				amount = r->diagnostics[k];
				for (i = 0; i < json_object_array_length(list); i++)
				{
					struct json_object *e = json_object_array_get_idx(list, i);
					int			rows = RowsPaid(r, o, o->entries[i].key, &paid);
					IncDec		a;
					IncRat		got;
					size_t		len;

					amount = strstr(amount, "\"incentive_amount\":");
					EXPECT_ROW(amount != NULL, r->diagnostics[k]);
					amount += strlen("\"incentive_amount\":");
					len = strcspn(amount, ",}");
					EXPECT_ROW(inc_dec_parse(amount, len, &a) == INC_DEC_OK, r->diagnostics[k]);
					inc_rat_from_dec(&got, &a);
					/* what the entry pays before requirements and limits */
					if (o->rules.nrequirements == 0 && !o->rules.limits.has_minimum &&
						!o->rules.limits.has_maximum)
						EXPECT_ROW(inc_rat_cmp(&got, &paid) == 0, r->diagnostics[k]);
					EXPECT_ROW(json_object_get_int(Member(e, "transactions")) >= rows,
							   r->diagnostics[k]);
				}
				break;
			case INC_STEPPED:
				EXPECT_ROW(json_object_is_type(Member(d, "tiers"), json_type_array),
						   r->diagnostics[k]);
				for (i = 0; i < (size_t) r->nrows; i++)
				{
					const char *selected = json_object_get_string(Member(d, "selected_rate_key"));

					if (r->rows[i].offer == o)
						EXPECT_ROW(selected &&
								   strcmp(VersionTierKey(o, selected, r->rows[i].txn),
										  r->rows[i].rate_key) == 0,
								   r->diagnostics[k]);
				}
				break;
			case INC_STACKED:
				list = Member(d, "stacks");
				EXPECT_ROW(json_object_is_type(list, json_type_array) &&
						   (int) json_object_array_length(list) == o->stacked.nstacks &&
						   json_object_is_type(Member(d, "sets"), json_type_array),
						   r->diagnostics[k]);
				for (i = 0; i < json_object_array_length(list); i++)
				{
					struct json_object *s = json_object_array_get_idx(list, i);

					if (RowsPaid(r, o, o->stacked.stacks[i].key, &paid) > 0)
						EXPECT_ROW(json_object_get_boolean(Member(s, "earns")),
								   r->diagnostics[k]);
				}
				break;
		}
		fuzz_json_free(d);
	}
}
