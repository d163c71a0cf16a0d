/*
 * fuzz_rules.c
 *    fuzz_calc's part for the program rules (see fuzz_rules.h;
 *    docs/reference.md, Program rules): enrollment windows, limit twins and
 *    the rules' invariants.
 *
 * The invariants are checked from outside the engine, with as little of
 * its arithmetic as possible: a window test, sums of provided amounts and
 * of quantities that need no conversion, and -- for the limits -- the
 * offer's own rows without them (its twin, calculated in the same run).
 * The twin's rows are rounded, so its exact total U is only known within
 * half a cent per row; where U may lie on either side of a limit, either
 * outcome is accepted, and elsewhere the outcome is certain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/numbers/rational.h"
#include "fuzz_common.h"
#include "fuzz_rules.h"

#define TWIN_SUFFIX "#twin"

static struct
{
	unsigned long limited;		/* offers with limits checked against a twin */
	unsigned long capped;		/* ... paid exactly their maximum */
	unsigned long below_minimum;	/* ... paid nothing below their minimum */
	unsigned long gated;		/* offers certainly failing a requirement */
	unsigned long windowed;		/* rows of "required" offers checked */
}			stats;

/* fuzz_rules_stats: the counts, appended to the harness's statistics. */
void
fuzz_rules_stats(FILE *out)
{
	fprintf(out, "fuzz_calc rules: %lu limited offers (%lu capped, %lu below their minimum), "
			"%lu failing a requirement, %lu rows of enrollment-required offers\n",
			stats.limited, stats.capped, stats.below_minimum, stats.gated, stats.windowed);
}

/* ---- enrollment windows -------------------------------------------------- */

static int
CompareWindows(const void *a, const void *b)
{
	const IncWindow *x = a,
			   *y = b;

	return (x->start_date > y->start_date) - (x->start_date < y->start_date);
}

/* fuzz_gen_windows: windows starting around the offers' period bounds. */
void
fuzz_gen_windows(FuzzDriver *d, const FuzzVocab *v, FuzzWindows *w,
				 const char *const *participants)
{
	int			p,
				i;

	for (p = 0; p < 2; p++)
	{
		w->participants[p] = participants[p];
		w->n[p] = (int) fuzz_take(d, FUZZ_MAX_WINDOWS + 1);
		for (i = 0; i < w->n[p]; i++)
		{
			IncWindow  *win = &w->windows[p][i];
			uint32_t	period = fuzz_take(d, (uint32_t) v->nperiods);

			win->start_date = (fuzz_take(d, 2) ? v->starts[period] : v->ends[period]) +
				(int32_t) fuzz_take(d, 61) - 30;
			win->open_ended = fuzz_take(d, 4) == 0;
			win->end_date = win->open_ended ? 0 : win->start_date + (int32_t) fuzz_take(d, 200);
		}
		qsort(w->windows[p], (size_t) w->n[p], sizeof(IncWindow), CompareWindows);
	}
}

/* fuzz_windows: a participant's windows, the same in every offer. */
int
fuzz_windows(void *ctx, const char *participant_key, const char *offer_key,
			 const IncWindow **windows)
{
	const FuzzWindows *w = ctx;
	int			p;

	(void) offer_key;
	for (p = 0; p < 2; p++)
		if (strcmp(w->participants[p], participant_key) == 0)
		{
			*windows = w->windows[p];
			return w->n[p];
		}
	fuzz_bug("windows asked for an unknown participant", participant_key);
}

/* Windows: how many windows participant has. */
static int
Windows(const FuzzWindows *w, const char *participant)
{
	return w->n[strcmp(w->participants[1], participant) == 0 ? 1 : 0];
}

/* InWindow: is date inside a window of participant? */
static bool
InWindow(const FuzzWindows *w, const char *participant, int32_t date)
{
	int			p = strcmp(w->participants[1], participant) == 0 ? 1 : 0;
	int			i;

	for (i = 0; i < w->n[p]; i++)
	{
		const IncWindow *win = &w->windows[p][i];

		if (date >= win->start_date && (win->open_ended || date <= win->end_date))
			return true;
	}
	return false;
}

/* ---- twins --------------------------------------------------------------- */

/* fuzz_add_twins: each offer with limits, once more without them. */
int
fuzz_add_twins(const IncOffer **offers, int n, int max)
{
	int			count = n;
	int			i;

	for (i = 0; i < n && count < max; i++)
	{
		const IncOffer *o = offers[i];
		IncOffer   *twin;
		size_t		len;

		if (!o->rules.limits.has_minimum && !o->rules.limits.has_maximum)
			continue;
		twin = inc_alloc(sizeof(IncOffer));
		*twin = *o;
		memset(&twin->rules.limits, 0, sizeof(twin->rules.limits));
		twin->rules.any = o->rules.enrollment == INC_ENROLLMENT_REQUIRED ||
			o->rules.nrequirements > 0;
		len = strlen(o->offer_key);
		twin->offer_key = inc_alloc(len + sizeof(TWIN_SUFFIX));
		memcpy(twin->offer_key, o->offer_key, len);
		memcpy(twin->offer_key + len, TWIN_SUFFIX, sizeof(TWIN_SUFFIX));
		offers[count++] = twin;
	}
	return count;
}

/* Twin: the twin of offer o among r's offers, or NULL. */
static const IncOffer *
Twin(const FuzzRows *r, const IncOffer *o)
{
	size_t		len = strlen(o->offer_key);
	int			k;

	for (k = 0; k < r->noffers; k++)
	{
		const char *key = r->offers[k]->offer_key;

		if (strncmp(key, o->offer_key, len) == 0 && strcmp(key + len, TWIN_SUFFIX) == 0)
			return r->offers[k];
	}
	return NULL;
}

/* ---- requirements -------------------------------------------------------- */

/*
 * Matches: does t match one of the filters (period, type, SKU, not
 * excluded)?  A
 * transaction of a filter's SKU with a NULL date or type: *known false.
 */
static bool
Matches(const IncOffer *o, const IncFilter *filters, int n, const IncTxn *t, bool *known)
{
	int			i,
				k;

	for (i = 0; i < n; i++)
	{
		const IncPeriod *p = &o->periods[filters[i].period];
		bool		sku = false;

		for (k = 0; k < filters[i].nskus; k++)
			sku |= strcmp(filters[i].sku_keys[k], t->sku_key) == 0;
		/* an excluded SKU never matches (no product is in the catalog here) */
		for (k = 0; k < filters[i].nexclude_skus; k++)
			sku &= strcmp(filters[i].exclude_sku_keys[k], t->sku_key) != 0;
		if (!sku)
			continue;
		if (t->nulls & (INC_TXN_NULL_DATE | INC_TXN_NULL_TYPE))
		{
			*known = false;
			return false;
		}
		if (t->transaction_date >= p->start_date && t->transaction_date <= p->end_date &&
			strcmp(t->transaction_type, filters[i].transaction_type) == 0)
			return true;
	}
	return false;
}

/*
 * fuzz_certainly_unmet: see fuzz_rules.h.  Aggregated values are summed
 * here over the transactions that exist for the offer; a quantity is
 * summed only when no transaction needs a unit conversion, and nothing is
 * certain about a value a NULL (or a property that is not a number) would
 * spoil.
 */
bool
fuzz_certainly_unmet(const IncOffer *o, const IncTxn *txns, int ntxns, const char *participant,
					 const FuzzWindows *w, const IncStrMap *sku_uom,
					 IncPropertyFn props, void *props_ctx)
{
	int			q,
				i;

	for (q = 0; q < o->rules.nrequirements; q++)
	{
		const IncRequirement *req = &o->rules.requirements[q];
		IncRat		value,
					minimum,
					x;
		bool		known = true;

		inc_rat_from_dec(&minimum, &req->minimum);
		if (inc_threshold_growth(req->type))
			continue;			/* a growth over a baseline: not summed here */
		if (req->type == INC_THRESHOLD_PROPERTY)
		{
			IncDec		d;
			IncPropStatus s = props(props_ctx, participant, req->property_key, &d);

			if (s == INC_PROP_MISSING)
				return true;
			if (s != INC_PROP_FOUND)
				continue;
			inc_rat_from_dec(&value, &d);
		}
		else
		{
			inc_rat_from_int(&value, 0);
			for (i = 0; i < ntxns && known; i++)
			{
				const IncTxn *t = &txns[i];
				const char *uom;

				if (o->rules.enrollment == INC_ENROLLMENT_REQUIRED &&
					(Windows(w, participant) == 0 ||
					 (!(t->nulls & INC_TXN_NULL_DATE) &&
					  !InWindow(w, participant, t->transaction_date))))
					continue;	/* no window, or outside every one */
				if (o->rules.enrollment == INC_ENROLLMENT_REQUIRED &&
					(t->nulls & INC_TXN_NULL_DATE))
				{
					/* its existence is unknown: so is the sum, if it is the filters' */
					Matches(o, req->filters, req->nfilters, t, &known);
					continue;
				}
				if (!Matches(o, req->filters, req->nfilters, t, &known))
					continue;
				if (req->type == INC_THRESHOLD_QUANTITY)
				{
					uom = inc_strmap_get(sku_uom, t->sku_key);
					known = !(t->nulls & (INC_TXN_NULL_QUANTITY | INC_TXN_NULL_UOM)) &&
						(uom == NULL || strcmp(uom, t->uom_key) == 0);
					inc_rat_from_dec(&x, &t->quantity);
				}
				else
				{
					/* an amount in another currency: its rate is the engine's */
					known = !(t->nulls & INC_TXN_NULL_AMOUNT) &&
						(o->currency == NULL || t->currency == NULL ||
						 strcmp(o->currency, t->currency) == 0);
					inc_rat_from_dec(&x, &t->amount);
				}
				inc_rat_add(&value, &value, &x);
			}
			if (!known)
				continue;
		}
		if (inc_rat_cmp(&value, &minimum) < 0)
			return true;
	}
	return false;
}

/* ---- limits -------------------------------------------------------------- */

/* The rows of one offer, in (transaction_id, rate key) order. */
typedef struct OfferRows
{
	int			n;
	const IncRow **rows;
	IncRat		sum;
} OfferRows;

static int
CompareRows(const void *a, const void *b)
{
	const IncRow *x = *(const IncRow *const *) a;
	const IncRow *y = *(const IncRow *const *) b;
	int			cmp = strcmp(x->txn->transaction_id, y->txn->transaction_id);

	return cmp ? cmp : strcmp(x->rate_key, y->rate_key);
}

static void
RowsOf(const FuzzRows *r, const IncOffer *o, OfferRows *out)
{
	int			i;

	out->n = 0;
	out->rows = inc_alloc(sizeof(IncRow *) * (size_t) (r->nrows + 1));
	inc_rat_from_int(&out->sum, 0);
	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].offer == o)
		{
			IncRat		a;

			out->rows[out->n++] = &r->rows[i];
			inc_rat_from_dec(&a, &r->rows[i].incentive_amount);
			inc_rat_add(&out->sum, &out->sum, &a);
		}
	qsort(out->rows, (size_t) out->n, sizeof(IncRow *), CompareRows);
}

static bool
DecEq(const IncDec *a, const IncDec *b)
{
	return inc_dec_cmp(a, b) == 0 && a->scale == b->scale;
}

/*
 * CheckLimits: o's rows against its twin's (see the file header): U lies
 * within twin total +- rows / 200.
 */
static void
CheckLimits(const FuzzRows *r, const IncOffer *o, const IncOffer *twin)
{
	const IncLimits *l = &o->rules.limits;
	OfferRows	got,
				base;
	IncRat		eps,
				low,
				high,
				bound;
	bool		maybe_below = false,
				surely_below = false,
				maybe_above = false,
				surely_above = false,
				same = true;
	int			i;

	RowsOf(r, o, &got);
	RowsOf(r, twin, &base);
	inc_rat_from_int(&eps, base.n);
	inc_rat_from_int(&bound, 200);
	inc_rat_div(&eps, &eps, &bound);
	inc_rat_sub(&low, &base.sum, &eps);
	inc_rat_add(&high, &base.sum, &eps);
	if (l->has_minimum)
	{
		inc_rat_from_dec(&bound, &l->minimum);
		maybe_below = inc_rat_cmp(&low, &bound) < 0;
		surely_below = inc_rat_cmp(&high, &bound) < 0;
	}
	if (l->has_maximum)
	{
		inc_rat_from_dec(&bound, &l->maximum);
		maybe_above = inc_rat_cmp(&high, &bound) > 0;
		surely_above = inc_rat_cmp(&low, &bound) > 0;
	}
	stats.limited++;

	if (got.n == 0)
	{
		EXPECT_ROW(base.n == 0 || maybe_below, o->offer_key);
		if (base.n > 0)
			stats.below_minimum++;
		return;
	}
	EXPECT_ROW(!surely_below, o->offer_key);
	EXPECT_ROW(got.n == base.n, o->offer_key);
	for (i = 0; i < got.n; i++)
	{
		const IncRow *a = got.rows[i],
				   *b = base.rows[i];

		EXPECT_ROW(a->txn == b->txn && strcmp(a->rate_key, b->rate_key) == 0, o->offer_key);
		/* nominal pay rates, the same figures but the amount */
		EXPECT_ROW(DecEq(&a->pay_rate, &b->pay_rate) && DecEq(&a->rate_value, &b->rate_value) &&
				   DecEq(&a->incentivized_quantity, &b->incentivized_quantity) &&
				   DecEq(&a->incentivized_amount, &b->incentivized_amount) &&
				   DecEq(&a->contribution, &b->contribution), o->offer_key);
		same &= DecEq(&a->incentive_amount, &b->incentive_amount);
	}
	if (same)
		EXPECT_ROW(!surely_above, o->offer_key);
	else
	{
		/* capped: the rows add up to the maximum (in cents, as a pool) exactly */
		EXPECT_ROW(maybe_above, o->offer_key);
		inc_rat_from_dec(&bound, &l->maximum);
		inc_rat_round(&bound, &bound, 2);
		EXPECT_ROW(inc_rat_cmp(&got.sum, &bound) == 0, o->offer_key);
		stats.capped++;
	}
}

/* fuzz_check_rules: see fuzz_rules.h. */
void
fuzz_check_rules(const FuzzRows *r, const IncTxn *txns, int ntxns,
				 const char *participant, const FuzzWindows *w,
				 const IncStrMap *sku_uom, IncPropertyFn props, void *props_ctx)
{
	int			k,
				i;

	for (k = 0; k < r->noffers; k++)
	{
		const IncOffer *o = r->offers[k];
		const IncOffer *twin;

		if (o->rules.enrollment == INC_ENROLLMENT_REQUIRED)
			for (i = 0; i < r->nrows; i++)
				if (r->rows[i].offer == o)
				{
					EXPECT_ROW(InWindow(w, participant, r->rows[i].txn->transaction_date),
							   r->rows[i].txn->transaction_id);
					stats.windowed++;
				}
		if (o->rules.nrequirements > 0 &&
			fuzz_certainly_unmet(o, txns, ntxns, participant, w, sku_uom, props, props_ctx))
		{
			for (i = 0; i < r->nrows; i++)
				EXPECT_ROW(r->rows[i].offer != o, o->offer_key);
			stats.gated++;
		}
		if ((o->rules.limits.has_minimum || o->rules.limits.has_maximum) &&
			(twin = Twin(r, o)) != NULL)
			CheckLimits(r, o, twin);
	}
}

/* ---- diagnostics --------------------------------------------------------- */

static struct json_object *
Member(struct json_object *obj, const char *name)
{
	struct json_object *val = NULL;

	return obj && json_object_object_get_ex(obj, name, &val) ? val : NULL;
}

/* fuzz_check_rules_diagnostics: see fuzz_rules.h. */
void
fuzz_check_rules_diagnostics(const FuzzRows *r)
{
	int			k;
	size_t		i;

	for (k = 0; k < r->ndiagnosed; k++)
	{
		const IncOffer *o = r->offers[k];
		struct json_object *d = fuzz_json_object(r->diagnostics[k]);
		struct json_object *rules = Member(d, "rules");
		struct json_object *reqs = Member(rules, "requirements");
		const char *applied = json_object_get_string(Member(Member(rules, "limits"), "applied"));
		const char *paid;
		bool		all_met = true;
		bool		member_ok = true;	/* every member gate passes */
		bool		member_fails = false;	/* ... one certainly fails */
		bool		seen = false;
		OfferRows	rows;

		EXPECT_ROW(d != NULL && (rules != NULL) == o->rules.any, r->diagnostics[k]);
		if (rules == NULL)
		{
			fuzz_json_free(d);
			continue;
		}
		EXPECT_ROW(json_object_is_type(reqs, json_type_array) &&
				   (int) json_object_array_length(reqs) == o->rules.nrequirements,
				   r->diagnostics[k]);
		/* a group offer: did its one member's transactions reach it? */
		{
			struct json_object *ms = Member(Member(d, "aggregation"), "members");

			seen = ms && json_object_array_length(ms) > 0 &&
				json_object_get_int(Member(json_object_array_get_idx(ms, 0), "transactions")) > 0;
		}
		for (i = 0; i < json_object_array_length(reqs); i++)
		{
			struct json_object *q = json_object_array_get_idx(reqs, i);
			struct json_object *members = Member(q, "members");
			bool		met = json_object_get_boolean(Member(q, "met"));
			size_t		m;

			if (o->rules.requirements[i].scope == INC_SCOPE_MEMBER)
			{
				/* a member gate: the participant is its unit's only member */
				EXPECT_ROW(json_object_is_type(members, json_type_array) &&
						   json_object_array_length(members) <= 1, r->diagnostics[k]);
				for (m = 0; m < json_object_array_length(members); m++)
				{
					struct json_object *e = json_object_array_get_idx(members, m);
					bool		known = Member(e, "error") == NULL;

					member_ok &= known && json_object_get_boolean(Member(e, "met"));
					/* only a member with transactions of the offer can fail it */
					member_fails |= known && !json_object_get_boolean(Member(e, "met")) && seen;
				}
				continue;
			}
			EXPECT_ROW(!met || Member(q, "value") != NULL, r->diagnostics[k]);
			all_met &= met;
		}
		/* a unit of one participant: its own gate failing, nobody is paid */
		EXPECT_ROW(json_object_get_boolean(Member(rules, "qualified")) == (all_met && !member_fails),
				   r->diagnostics[k]);

		/* what the rules say was paid, against the rows (read as text) */
		RowsOf(r, o, &rows);
		EXPECT_ROW((all_met && member_ok) || rows.n == 0, r->diagnostics[k]);
		paid = strstr(r->diagnostics[k], "\"rules\":{");
		paid = paid ? strstr(paid, "\"incentive_amount\":") : NULL;
		EXPECT_ROW(paid != NULL, r->diagnostics[k]);
		paid += strlen("\"incentive_amount\":");
		if (strncmp(paid, "null", 4) == 0)
			EXPECT_ROW(o->rules.nrequirements == 0 && !o->rules.limits.has_minimum &&
					   !o->rules.limits.has_maximum, r->diagnostics[k]);
		else
		{
			IncDec		a;
			IncRat		got;

			EXPECT_ROW(inc_dec_parse(paid, strcspn(paid, ",}"), &a) == INC_DEC_OK,
					   r->diagnostics[k]);
			inc_rat_from_dec(&got, &a);
			EXPECT_ROW(inc_rat_cmp(&got, &rows.sum) == 0, r->diagnostics[k]);
		}
		if (applied && strcmp(applied, "minimum") == 0)
			EXPECT_ROW(rows.n == 0, r->diagnostics[k]);
		if (applied && strcmp(applied, "maximum") == 0 && member_ok)
		{
			IncRat		maximum;

			inc_rat_from_dec(&maximum, &o->rules.limits.maximum);
			inc_rat_round(&maximum, &maximum, 2);
			EXPECT_ROW(inc_rat_cmp(&maximum, &rows.sum) == 0, r->diagnostics[k]);
		}
		fuzz_json_free(d);
	}
}
