/*
 * calc.c
 *    The calculation helpers every strategy shares (see calc.h): matching,
 *    unit conversion, base amounts, rate figures, rounding and emission of
 *    rows, property values, index lists and rate listing rows.
 *
 * Rows are rounded only here, from exact figures, half away from zero
 * (docs/reference.md, Rounding); the effective rate comes from the
 * rounded figures.  Quantities are in the SKU's unit and base amounts use
 * the offer's program price when it has one (docs/reference.md,
 * Quantities and base amounts).
 *
 * Each figure has a fast path in 128-bit fractions (fixed.h, the *_q
 * functions) beside the big rationals: a row is computed the fast way when
 * every value fits, else the exact way; the two agree to the last digit.
 *
 * A transaction's amount is read in the currency of the offer being
 * calculated (docs/reference.md, Currencies): multiplied, exactly, by the
 * exchange rate of its matching date when its currency is another.
 *
 * In a forecast's projection (IncCalc.projection) every quantity and
 * amount read here is multiplied by the offer's k on the way out, exactly
 * (on the fast path too): the strategies and rules never see the factor.
 *
 * Data errors (a missing unit conversion, a property that is not a number,
 * a NULL column a figure needs) go through inc_calc_data_error: they fail
 * at once, or, while the program rules defer them (IncCalc.defer), are
 * noted and the figure goes on with a stand-in that no result will show.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "calc.h"
#include "../util/strmap.h"

/* inc_txn_cache_create: an empty cache of pages' slots (calc.h). */
IncTxnCache *
inc_txn_cache_create(const IncTxnPages *pages)
{
	IncTxnCache *cache = inc_alloc(sizeof(IncTxnCache));
	int			s;

	cache->pages = pages;
	cache->txns = inc_alloc(sizeof(IncTxn) * (size_t) pages->nslots * pages->per_page);
	cache->page_of = inc_alloc(sizeof(int) * pages->nslots);
	cache->used = inc_alloc(sizeof(uint64_t) * pages->nslots);
	for (s = 0; s < pages->nslots; s++)
	{
		cache->page_of[s] = -1;
		cache->used[s] = 0;
	}
	cache->clock = 0;
	cache->last = 0;
	return cache;
}

/* inc_txn_cache_load: transaction i from its slot, or its page loaded into the oldest one. */
const IncTxn *
inc_txn_cache_load(IncTxnCache *cache, int i)
{
	const IncTxnPages *pages = cache->pages;
	int			page = i / pages->per_page;
	int			oldest = 0;
	int			s;

	for (s = 0; s < pages->nslots; s++)
	{
		if (cache->page_of[s] == page)
			break;
		if (cache->used[s] < cache->used[oldest])
			oldest = s;
	}
	if (s == pages->nslots)
	{
		s = oldest;
		cache->page_of[s] = -1;
		pages->load(pages->ctx, page, s, &cache->txns[(size_t) s * pages->per_page]);
		cache->page_of[s] = page;
	}
	cache->used[s] = ++cache->clock;
	cache->last = s;
	return &cache->txns[(size_t) s * pages->per_page + i % pages->per_page];
}

/* inc_calc_keep: t, or a copy of it that outlives its page (calc.h). */
const IncTxn *
inc_calc_keep(const IncCalc *c, const IncTxn *t)
{
	const IncTxnCache *cache = c->cache;
	const IncTxnPages *pages;
	IncTxn	   *copy;
	size_t		len;
	char	   *id;

	if (t == NULL || c->txns != NULL || cache == NULL)
		return t;
	pages = cache->pages;
	/* a copy already, or a transaction the host keeps (not in a slot) */
	if ((uintptr_t) t < (uintptr_t) cache->txns ||
		(uintptr_t) t >= (uintptr_t) (cache->txns + (size_t) pages->nslots * pages->per_page))
		return t;
	len = strlen(t->transaction_id) + 1;
	copy = inc_alloc(sizeof(IncTxn));
	*copy = *t;
	id = inc_alloc((size_t) pages->id_prefix + len);
	memcpy(id, t->transaction_id - pages->id_prefix, (size_t) pages->id_prefix + len);
	copy->transaction_id = id + pages->id_prefix;
	/* the optional columns' strings are the page's too */
	if (t->grower_key)
		copy->grower_key = inc_strdup(t->grower_key);
	if (t->currency)
		copy->currency = inc_strdup(t->currency);
	return copy;
}

/* inc_calc_at: record the transaction being worked on (NULL: none). */
void
inc_calc_at(IncCalc *c, const IncTxn *t)
{
	const IncOffer *offer = c->ids ? c->ids->offer : NULL;

	c->position->txn = t;
	/* a group offer's key is the calculation's; else t's untyped group */
	c->position->key = t == NULL ? c->key :
		offer && offer->aggregation == INC_AGGREGATE_GROUP ? c->key : t->aggregation;
}

/*
 * Before: does an error about transaction a (NULL: about the participant)
 * come before one about b?  The participant's first, then by
 * transaction_id, so that the error noted does not depend on the order of
 * the transactions.
 */
static bool
Before(const IncTxn *a, const IncTxn *b)
{
	if (a == NULL || b == NULL)
		return a == NULL && b != NULL;
	return strcmp(a->transaction_id, b->transaction_id) < 0;
}

/*
 * inc_calc_hidden: is t a transaction of a participant the host may not
 * show (neither INC_KEY_REPORT nor INC_KEY_VISIBLE: a member of a group
 * the caller cannot see)?
 */
bool
inc_calc_hidden(const IncCalc *c, const IncTxn *t)
{
	return t != NULL && c->unit != NULL &&
		!(c->unit->flags[t->participant] & (INC_KEY_REPORT | INC_KEY_VISIBLE));
}

/*
 * inc_calc_data_error: fail, or note the error while deferred (the
 * earliest one).  About a hidden transaction (inc_calc_hidden) it says
 * only that a transaction of another member of the group cannot be
 * calculated (docs/security.md, What a reader can learn).
 */
void
inc_calc_data_error(IncCalc *c, const IncTxn *t, IncErrKind kind, const char *subject,
					const char *fmt,...)
{
	char		buf[2048];
	va_list		ap;

	if (c->defer && c->defer->kind != 0 && !Before(t, c->defer->txn))
		return;
	if (inc_calc_hidden(c, t))
	{
		const IncOffer *offer = c->ids ? c->ids->offer : NULL;

		/* the group: the transaction's aggregation key in the offer */
		snprintf(buf, sizeof(buf),
				 "a transaction of another member of group \"%s\" cannot be calculated",
				 c->unit->keys[offer && offer->aggregation == INC_AGGREGATE_GROUP ?
							   inc_txn_key(c->unit, offer->group_type, t) : t->aggregation]);
		subject = NULL;
	}
	else
	{
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
	}
	if (c->defer == NULL)
		inc_fail_about(kind, subject, "%s", buf);
	c->defer->kind = kind;
	c->defer->subject = subject;
	c->defer->message = inc_strdup(buf);
	c->defer->txn = inc_calc_keep(c, t);
}

/* The transaction columns that may be NULL, in the order they are named. */
static const struct
{
	uint8_t		flag;
	const char *name;
}			NullColumns[] = {
	{INC_TXN_NULL_TYPE, "transaction_type"},
	{INC_TXN_NULL_DATE, "transaction_date"},
	{INC_TXN_NULL_QUANTITY, "quantity"},
	{INC_TXN_NULL_UOM, "uom_key"},
	{INC_TXN_NULL_AMOUNT, "amount"},
};

/* inc_calc_null: the data error of t's first NULL among columns. */
bool
inc_calc_null(IncCalc *c, const IncTxn *t, uint8_t columns)
{
	size_t		i;

	for (i = 0; i < sizeof(NullColumns) / sizeof(NullColumns[0]); i++)
		if (t->nulls & columns & NullColumns[i].flag)
		{
			inc_calc_data_error(c, t, INC_ERR_NULL, NullColumns[i].name,
								"column \"%s\" of transaction \"%s\" of participant \"%s\" is NULL",
								NullColumns[i].name, t->transaction_id, c->participant_key);
			return false;
		}
	return true;
}

/* inc_txn_matches: period (inclusive) and transaction type. */
bool
inc_txn_matches(IncCalc *c, const IncOffer *offer, int period, const char *transaction_type,
				const IncTxn *t)
{
	const IncPeriod *p = &offer->periods[period];

	if (!inc_calc_has(c, t, INC_TXN_NULL_DATE | INC_TXN_NULL_TYPE))
		return false;
	return inc_txn_date(t) >= p->start_date &&
		inc_txn_date(t) <= p->end_date &&
		strcmp(t->transaction_type, transaction_type) == 0;
}

/* NoConversion: the data error of a transaction whose unit does not convert. */
static void
NoConversion(IncCalc *c, const IncTxn *t, const char *to_uom)
{
	inc_calc_data_error(c, t, INC_ERR_NO_CONVERSION, NULL,
						"no unit conversion from \"%s\" to \"%s\" for transaction \"%s\" (sku \"%s\")",
						t->uom_key, to_uom, t->transaction_id, t->sku_key);
}

/* A quantity figure needs the quantity and its unit. */
#define QUANTITY_COLUMNS (INC_TXN_NULL_QUANTITY | INC_TXN_NULL_UOM)

/* ConvertTo: t's quantity in unit id to (>= 1); 0 when deferred. */
static void
ConvertTo(IncCalc *c, const IncTxn *t, int to, IncRat *out)
{
	int			from = t->uom_id ? t->uom_id : inc_units_find(c->units, t->uom_key);

	/* a unit the tables do not know is not to's name either */
	if (from == 0 || !inc_units_convert_ids(c->units, &t->quantity, from, to, out))
	{
		NoConversion(c, t, inc_units_name(c->units, to));
		inc_rat_from_int(out, 0);
	}
}

/* ConvertToQ: ConvertTo on the fast path. */
static bool
ConvertToQ(IncCalc *c, const IncTxn *t, int to, IncQ *out)
{
	int			from = t->uom_id ? t->uom_id : inc_units_find(c->units, t->uom_key);
	const IncDec *f = NULL;
	IncQ		factor;

	switch (from ? inc_units_lookup(c->units, from, to, &f) : INC_CONVERT_NONE)
	{
		case INC_CONVERT_NONE:
			NoConversion(c, t, inc_units_name(c->units, to));
			inc_q_from_int(out, 0);
			return true;
		case INC_CONVERT_SAME:
			return inc_q_from_dec(out, &t->quantity);
		case INC_CONVERT_MUL:
			return inc_q_from_dec(out, &t->quantity) && inc_q_from_dec(&factor, f) &&
				inc_q_mul(out, out, &factor);
		case INC_CONVERT_DIV:
			return inc_q_from_dec(out, &t->quantity) && inc_q_from_dec(&factor, f) &&
				inc_q_div(out, out, &factor);
	}
	return false;
}

/*
 * Projected: is t's volume projected (c->projection: a forecast's offer,
 * t dated, by its own date and its matching date, inside its projected
 * days)?
 */
static inline bool
Projected(const IncCalc *c, const IncTxn *t)
{
	return c->projection != NULL && (t->nulls & INC_TXN_NULL_DATE) == 0 &&
		t->transaction_date >= c->projection->from &&
		t->transaction_date <= c->projection->to &&
		inc_txn_date(t) >= c->projection->from &&
		inc_txn_date(t) <= c->projection->to;
}

/* ProjectQ: v x k when t is projected; false when that does not fit. */
static inline bool
ProjectQ(const IncCalc *c, const IncTxn *t, IncQ *v)
{
	IncQ		k;

	if (!Projected(c, t))
		return true;
	k.num = c->projection->span_days;
	k.den = c->projection->elapsed_days;
	return inc_q_mul(v, v, &k);
}

/* ProjectRat: v x k when t is projected. */
static void
ProjectRat(const IncCalc *c, const IncTxn *t, IncRat *v)
{
	IncRat		k;

	if (!Projected(c, t))
		return;
	inc_rat_from_int(&k, c->projection->span_days);
	inc_rat_mul(v, v, &k);
	inc_rat_from_int(&k, c->projection->elapsed_days);
	inc_rat_div(v, v, &k);
}

/* ConvertQ: t's quantity in to_uom on the fast path, not projected. */
static bool
ConvertQ(IncCalc *c, const IncTxn *t, const char *to_uom, IncQ *out)
{
	int			to;

	if (!inc_calc_has(c, t, QUANTITY_COLUMNS))
	{
		inc_q_from_int(out, 0);
		return true;
	}
	to = inc_units_find(c->units, to_uom);
	if (to != 0)
		return ConvertToQ(c, t, to, out);
	if (strcmp(t->uom_key, to_uom) != 0)
	{
		NoConversion(c, t, to_uom);
		inc_q_from_int(out, 0);
		return true;
	}
	return inc_q_from_dec(out, &t->quantity);
}

/* inc_calc_convert_q: inc_calc_convert on the fast path. */
bool
inc_calc_convert_q(IncCalc *c, const IncTxn *t, int to, IncQ *out)
{
	if (!inc_fast())
		return false;
	if (!inc_calc_has(c, t, QUANTITY_COLUMNS))
		inc_q_from_int(out, 0);
	else if (!ConvertToQ(c, t, to, out))
		return false;
	return ProjectQ(c, t, out);
}

/* SkuQuantityQ: t's quantity in its SKU's unit on the fast path, not projected. */
static inline bool
SkuQuantityQ(IncCalc *c, const IncTxn *t, IncQ *out)
{
	const char *uom;

	if (!inc_calc_has(c, t, QUANTITY_COLUMNS))
	{
		inc_q_from_int(out, 0);
		return true;
	}
	if (t->sku_id)
	{
		int			to = c->sku_uom_ids[t->sku_id];

		return to == 0 ? inc_q_from_dec(out, &t->quantity) : ConvertToQ(c, t, to, out);
	}
	uom = inc_units_sku_uom(c->units, t->sku_key);
	if (uom == NULL)
		return inc_q_from_dec(out, &t->quantity);
	return ConvertQ(c, t, uom, out);
}

/*
 * inc_calc_sku_quantity_q: inc_calc_sku_quantity on the fast path (a
 * calculation without projection takes the first return, which converts
 * the quantity alone).
 */
bool
inc_calc_sku_quantity_q(IncCalc *c, const IncTxn *t, IncQ *out)
{
	if (!inc_fast())
		return false;
	if (c->projection == NULL)
		return SkuQuantityQ(c, t, out);
	return SkuQuantityQ(c, t, out) && ProjectQ(c, t, out);
}

/* NoExchangeRate: the data error of a transaction whose currency has no rate on its date. */
static void
NoExchangeRate(IncCalc *c, const IncTxn *t, const char *to, int32_t date)
{
	char		day[16];

	inc_date_format(date, day, sizeof(day));
	inc_calc_data_error(c, t, INC_ERR_NO_EXCHANGE_RATE, NULL,
						"no exchange rate from \"%s\" to \"%s\" on %s for transaction \"%s\"",
						t->currency, to, day, t->transaction_id);
}

/*
 * inc_calc_exchange: the step of t's matching date in the pair of t's
 * currency, among the offer's pairs (a handful: a linear search), by
 * binary search over its steps.
 */
const IncExchangeStep *
inc_calc_exchange(IncCalc *c, const IncTxn *t, bool *missing)
{
	const IncOfferIds *ids = c->ids;
	const char *to;
	int32_t		date;
	int			p;

	*missing = false;
	if (t->currency == NULL || ids == NULL || (to = ids->offer->currency) == NULL ||
		strcmp(t->currency, to) == 0)
		return NULL;
	if (!inc_calc_has(c, t, INC_TXN_NULL_DATE))
	{
		*missing = true;
		return NULL;
	}
	date = inc_txn_date(t);
	for (p = 0; p < ids->npairs; p++)
	{
		const IncExchangePair *pair = &ids->pairs[p];
		int			lo = 0,
					hi = pair->nsteps - 1;

		if (strcmp(pair->from, t->currency) != 0)
			continue;
		/* the last step from on or before date */
		while (lo <= hi)
		{
			int			mid = lo + (hi - lo) / 2;

			if (pair->steps[mid].from <= date)
				lo = mid + 1;
			else
				hi = mid - 1;
		}
		if (hi >= 0)
			return &pair->steps[hi];
		break;
	}
	NoExchangeRate(c, t, to, date);
	*missing = true;
	return NULL;
}

/* inc_calc_exchange_rate: rate, or 1 / rate, exactly. */
void
inc_calc_exchange_rate(const IncExchangeStep *step, IncRat *out)
{
	inc_rat_from_dec(out, &step->rate);
	if (step->inverse)
	{
		IncRat		one;

		inc_rat_from_int(&one, 1);
		inc_rat_div(out, &one, out);
	}
}

/* inc_calc_exchange_reported: exact, or an inverse rounded to 12 places. */
IncDec
inc_calc_exchange_reported(const IncExchangeStep *step)
{
	IncRat		exact,
				back;
	IncDec		d;

	if (!step->inverse)
		return inc_dec_trim(&step->rate);
	inc_calc_exchange_rate(step, &exact);
	d = inc_rat_to_dec(&exact, 12);
	inc_rat_from_dec(&back, &d);
	return inc_rat_cmp(&back, &exact) == 0 ? inc_dec_trim(&d) : d;
}

/*
 * ExchangeQ: v (t's amount) in the offer's currency on the fast path; 0
 * after a missing rate (deferred); false when it does not fit.
 */
static bool
ExchangeQ(IncCalc *c, const IncTxn *t, IncQ *v)
{
	bool		missing;
	const IncExchangeStep *step = inc_calc_exchange(c, t, &missing);

	if (missing)
	{
		inc_q_from_int(v, 0);
		return true;
	}
	if (step == NULL)
		return true;
	return step->fast && inc_q_mul(v, v, &step->q);
}

/*
 * AmountQ: t's provided amount on the fast path (in the offer's currency,
 * projected), once inc_fast() holds.  Without a currency on t it costs
 * what it cost before currencies.
 */
static inline bool
AmountQ(IncCalc *c, const IncTxn *t, IncQ *out)
{
	if (!inc_calc_has(c, t, INC_TXN_NULL_AMOUNT))
	{
		inc_q_from_int(out, 0);
		return true;
	}
	if (!inc_q_from_dec(out, &t->amount))
		return false;
	if (t->currency != NULL && !ExchangeQ(c, t, out))
		return false;
	return c->projection == NULL || ProjectQ(c, t, out);
}

/* inc_calc_amount_q: inc_calc_amount on the fast path. */
bool
inc_calc_amount_q(IncCalc *c, const IncTxn *t, IncQ *out)
{
	return inc_fast() && AmountQ(c, t, out);
}

/*
 * Price: the offer's program price of t's SKU, or NULL: by SKU id when the
 * engine resolved the offer's prices (c->ids), else by name.
 */
static inline const IncDec *
Price(const IncCalc *c, const IncOffer *offer, const IncTxn *t)
{
	if (offer->nprices == 0)
		return NULL;
	if (t->sku_id && c->ids && c->ids->offer == offer)
		return c->ids->prices[t->sku_id];
	return inc_offer_price(offer, t->sku_key);
}

/* inc_calc_base_amount_q: inc_calc_base_amount on the fast path. */
bool
inc_calc_base_amount_q(IncCalc *c, const IncOffer *offer, const IncTxn *t,
					   const IncQ *sku_quantity, IncQ *out)
{
	const IncDec *price = Price(c, offer, t);
	IncQ		p;

	if (price)
		return inc_q_from_dec(&p, price) && inc_q_mul(out, sku_quantity, &p);
	return AmountQ(c, t, out);
}

/* inc_calc_rate_figures_q: inc_calc_rate_figures on the fast path. */
bool
inc_calc_rate_figures_q(IncCalc *c, const IncOffer *offer, const IncTxn *t,
						const IncDec *rate, IncQ *quantity, IncQ *base, IncQ *incentive)
{
	IncQ		r;

	if (!inc_calc_sku_quantity_q(c, t, quantity) ||
		!inc_calc_base_amount_q(c, offer, t, quantity, base) ||
		!inc_q_from_dec(&r, rate))
		return false;
	if (offer->calculator == INC_PERCENT_OF_AMOUNT)
	{
		static const IncQ hundredth = {1, 100};

		return inc_q_mul(incentive, base, &r) && inc_q_mul(incentive, incentive, &hundredth);
	}
	return inc_q_mul(incentive, quantity, &r);
}

/* Convert: t's quantity expressed in to_uom, not projected. */
static void
Convert(IncCalc *c, const IncTxn *t, const char *to_uom, IncRat *out)
{
	int			to;

	if (!inc_calc_has(c, t, QUANTITY_COLUMNS))
	{
		inc_rat_from_int(out, 0);
		return;
	}
	to = inc_units_find(c->units, to_uom);
	if (to != 0)
		ConvertTo(c, t, to, out);
	else if (strcmp(t->uom_key, to_uom) == 0)
		inc_rat_from_dec(out, &t->quantity);	/* a unit no table names */
	else
	{
		NoConversion(c, t, to_uom);
		inc_rat_from_int(out, 0);
	}
}

/* inc_calc_convert: t's quantity expressed in unit id to. */
void
inc_calc_convert(IncCalc *c, const IncTxn *t, int to, IncRat *out)
{
	if (!inc_calc_has(c, t, QUANTITY_COLUMNS))
		inc_rat_from_int(out, 0);
	else
		ConvertTo(c, t, to, out);
	ProjectRat(c, t, out);
}

/* SkuQuantity: t's quantity in its SKU's unit of measure, not projected. */
static void
SkuQuantity(IncCalc *c, const IncTxn *t, IncRat *out)
{
	const char *uom;

	if (!inc_calc_has(c, t, QUANTITY_COLUMNS))
	{
		inc_rat_from_int(out, 0);
		return;
	}
	if (t->sku_id)
	{
		int			to = c->sku_uom_ids[t->sku_id];

		if (to == 0)
			inc_rat_from_dec(out, &t->quantity);
		else
			ConvertTo(c, t, to, out);
		return;
	}
	uom = inc_units_sku_uom(c->units, t->sku_key);
	if (uom == NULL)
		inc_rat_from_dec(out, &t->quantity);
	else
		Convert(c, t, uom, out);
}

/* inc_calc_sku_quantity: t's quantity in its SKU's unit of measure. */
void
inc_calc_sku_quantity(IncCalc *c, const IncTxn *t, IncRat *out)
{
	SkuQuantity(c, t, out);
	ProjectRat(c, t, out);
}

/*
 * inc_calc_amount: t's provided amount in the offer's currency (0 for a
 * NULL one or a missing exchange rate, when deferred).
 */
void
inc_calc_amount(IncCalc *c, const IncTxn *t, IncRat *out)
{
	if (!inc_calc_has(c, t, INC_TXN_NULL_AMOUNT))
	{
		inc_rat_from_int(out, 0);
		return;
	}
	inc_rat_from_dec(out, &t->amount);
	if (t->currency != NULL)
	{
		bool		missing;
		const IncExchangeStep *step = inc_calc_exchange(c, t, &missing);

		if (missing)
		{
			inc_rat_from_int(out, 0);
			return;
		}
		if (step)
		{
			IncRat		rate;

			inc_rat_from_dec(&rate, &step->rate);
			if (step->inverse)
				inc_rat_div(out, out, &rate);
			else
				inc_rat_mul(out, out, &rate);
		}
	}
	ProjectRat(c, t, out);
}

/* inc_calc_add_volume: t's quantity in its SKU's unit, or its amount, into sum. */
void
inc_calc_add_volume(IncCalc *c, const IncTxn *t, bool quantity, IncSum *sum)
{
	IncRat		value;
	IncQ		q;

	if (quantity ? inc_calc_sku_quantity_q(c, t, &q) : inc_fast() && AmountQ(c, t, &q))
		inc_sum_add_q(sum, &q);
	else
	{
		if (quantity)
			inc_calc_sku_quantity(c, t, &value);
		else
			inc_calc_amount(c, t, &value);
		inc_sum_add_rat(sum, &value);
	}
}

/* inc_calc_base_amount: quantity x price when the offer prices the SKU, else amount. */
void
inc_calc_base_amount(IncCalc *c, const IncOffer *offer, const IncTxn *t,
					 const IncRat *sku_quantity, IncRat *out)
{
	const IncDec *price = Price(c, offer, t);

	if (price)
	{
		IncRat		p;

		inc_rat_from_dec(&p, price);
		inc_rat_mul(out, sku_quantity, &p);
	}
	else
		inc_calc_amount(c, t, out);
}

/*
 * EffectiveRate: the row's effective rate from its reported (rounded)
 * figures: incentive_amount / incentivized_amount to 4 places, NULL when
 * incentivized_amount is 0.  Both are at scale 2, so the rate is the ratio
 * of their coefficients (the fast path), or the same with big rationals.
 */
static void
EffectiveRate(IncRow *row)
{
	row->effective_rate_null = row->incentivized_amount.coef == 0;
	row->effective_rate.coef = 0;
	row->effective_rate.scale = 4;
	if (!row->effective_rate_null)
	{
		IncQ		q;

		q.num = row->incentive_amount.coef;
		q.den = row->incentivized_amount.coef;
		if (q.den < 0)
		{
			q.num = -q.num;
			q.den = -q.den;
		}
		if (!inc_fast() || !inc_q_round(&q, 4, &row->effective_rate))
		{
			IncRat		amount,
						incentive;

			inc_rat_from_dec(&amount, &row->incentivized_amount);
			inc_rat_from_dec(&incentive, &row->incentive_amount);
			inc_rat_div(&incentive, &incentive, &amount);
			row->effective_rate = inc_rat_to_dec(&incentive, 4);
		}
	}
}

/*
 * Emit: a row of rounded figures, with its effective rate, to the host --
 * or, while an offer's program rules hold its rows, to c->hold with its
 * exact incentive amount.  Returns the reported incentive_amount.
 */
static IncDec
Emit(IncCalc *c, const IncOffer *offer, const IncTxn *t, const IncRowValues *v,
	 const IncRat *exact)
{
	IncRow		row;

	if (c->tick)
		c->tick();
	/* the row shows them (deferred: the rules never let it out) */
	(void) inc_calc_has(c, t, QUANTITY_COLUMNS | INC_TXN_NULL_AMOUNT);

	row.offer = offer;
	row.txn = t;
	row.participant_key = inc_calc_member(c, t);
	row.group_key = offer->aggregation == INC_AGGREGATE_GROUP ? c->group_key : NULL;
	row.product_key = c->product_key;
	row.grower_key = t->grower_key;
	row.currency = offer->currency;
	row.has_exchange_rate = false;
	row.exchange_rate.coef = 0;
	row.exchange_rate.scale = 0;
	if (t->currency != NULL)
	{
		/* a priced row too: its rate is reported, and must exist */
		bool		missing;
		const IncExchangeStep *step = inc_calc_exchange(c, t, &missing);

		row.has_exchange_rate = step != NULL || missing;
		if (step)
			row.exchange_rate = step->reported_ok ? step->reported :
				inc_calc_exchange_reported(step);
	}
	row.group_index = c->key;
	row.rate_key = v->rate_key;
	row.rate_measure = v->rate_measure;
	row.rate_value = inc_dec_trim(v->rate_value);
	row.pay_rate = v->pay_rate;
	row.incentivized_quantity = v->incentivized_quantity;
	row.incentivized_amount = v->incentivized_amount;
	row.incentive_amount = v->incentive_amount;
	if (v->contribution)
		row.contribution = *v->contribution;
	else
	{
		row.contribution.coef = 1000000;
		row.contribution.scale = 6;
	}
	EffectiveRate(&row);
	if (c->hold)
	{
		row.txn = inc_calc_keep(c, t);
		row.grower_key = row.txn->grower_key;
		c->hold(c->hold_ctx, &row, exact);
	}
	else
	{
		row.grower_key = t->grower_key;
		c->emit(c->emit_ctx, &row);
	}
	return row.incentive_amount;
}

/* inc_calc_emit: round a row's figures and hand it over; its incentive_amount. */
IncDec
inc_calc_emit(IncCalc *c, const IncOffer *offer, const IncTxn *t, const IncRowFigures *f)
{
	IncRowValues v;
	IncDec		contribution;

	v.rate_key = f->rate_key;
	v.rate_measure = f->rate_measure;
	v.rate_value = f->rate_value;
	v.pay_rate = f->pay_rate;
	v.incentivized_quantity = inc_rat_to_dec(f->incentivized_quantity, 6);
	v.incentivized_amount = inc_rat_to_dec(f->incentivized_amount, 2);
	v.incentive_amount = inc_rat_to_dec(f->incentive_amount, 2);
	v.contribution = NULL;
	if (f->contribution)
	{
		contribution = inc_rat_to_dec(f->contribution, 6);
		v.contribution = &contribution;
	}
	return Emit(c, offer, t, &v, f->incentive_amount);
}

/* inc_calc_emit_values: a row of rounded figures; exact as a big rational when held. */
IncDec
inc_calc_emit_values(IncCalc *c, const IncOffer *offer, const IncTxn *t, const IncRowValues *v,
					 const IncQ *exact)
{
	IncRat		r;

	if (c->hold == NULL)
		return Emit(c, offer, t, v, NULL);
	inc_q_to_rat(&r, exact);
	return Emit(c, offer, t, v, &r);
}

/* inc_calc_emit_held: a held row with its final incentive_amount, to the host. */
void
inc_calc_emit_held(IncCalc *c, IncRow *row, const IncDec *incentive_amount)
{
	if (c->tick)
		c->tick();
	row->incentive_amount = *incentive_amount;
	EffectiveRate(row);
	c->emit(c->emit_ctx, row);
}

/* inc_calc_rate_figures: quantity, base and incentive of a rate for t. */
void
inc_calc_rate_figures(IncCalc *c, const IncOffer *offer, const IncTxn *t,
					  const IncDec *rate, IncRat *quantity, IncRat *base, IncRat *incentive)
{
	IncRat		r;

	inc_rat_from_dec(&r, rate);
	inc_calc_rate_figures_rat(c, offer, t, &r, quantity, base, incentive);
}

/*
 * inc_calc_rate_figures_rat: base x rate / 100 (percent_of_amount) or
 * quantity x rate (dollars_per_unit), for an exact rate.
 */
void
inc_calc_rate_figures_rat(IncCalc *c, const IncOffer *offer, const IncTxn *t,
						  const IncRat *rate, IncRat *quantity, IncRat *base,
						  IncRat *incentive)
{
	inc_calc_sku_quantity(c, t, quantity);
	inc_calc_base_amount(c, offer, t, quantity, base);
	if (offer->calculator == INC_PERCENT_OF_AMOUNT)
	{
		IncRat		hundred;

		inc_rat_from_int(&hundred, 100);
		inc_rat_mul(incentive, base, rate);
		inc_rat_div(incentive, incentive, &hundred);
	}
	else
		inc_rat_mul(incentive, quantity, rate);
}

/*
 * inc_calc_emit_rate_row: the row of a percent_of_amount or
 * dollars_per_unit rate: base x rate / 100, or quantity x rate.
 */
IncDec
inc_calc_emit_rate_row(IncCalc *c, const IncOffer *offer, const IncTxn *t,
					   const char *rate_key, const char *rate_measure,
					   const IncDec *rate, const IncDec *pay_rate)
{
	IncRat		quantity,
				base,
				incentive;
	IncRowFigures f;
	IncQ		q,
				b,
				i;
	IncRowValues v;

	if (inc_calc_rate_figures_q(c, offer, t, rate, &q, &b, &i) &&
		inc_q_round(&q, 6, &v.incentivized_quantity) &&
		inc_q_round(&b, 2, &v.incentivized_amount) &&
		inc_q_round(&i, 2, &v.incentive_amount))
	{
		v.rate_key = rate_key;
		v.rate_measure = rate_measure;
		v.rate_value = rate;
		v.pay_rate = *pay_rate;
		v.contribution = NULL;
		return inc_calc_emit_values(c, offer, t, &v, &i);
	}
	inc_calc_rate_figures(c, offer, t, rate, &quantity, &base, &incentive);
	f.rate_key = rate_key;
	f.rate_measure = rate_measure;
	f.rate_value = rate;
	f.pay_rate = *pay_rate;
	f.incentivized_quantity = &quantity;
	f.incentivized_amount = &base;
	f.incentive_amount = &incentive;
	f.contribution = NULL;
	return inc_calc_emit(c, offer, t, &f);
}

/* inc_calc_version_index: the schedule version of t's date (the last for a NULL date). */
int
inc_calc_version_index(const IncOffer *offer, const IncTxn *t)
{
	if (offer->nschedule == 0)
		return 0;
	if (t->nulls & INC_TXN_NULL_DATE)
		return offer->nschedule - 1;
	return inc_offer_version(offer, inc_txn_date(t));
}

/* inc_calc_version: the version whose rates apply to t. */
const IncOffer *
inc_calc_version(const IncOffer *offer, const IncTxn *t)
{
	if (offer->nschedule == 0)
		return offer;
	return offer->schedule[inc_calc_version_index(offer, t)].offer;
}

/* inc_calc_schedule_projecting: a schedule, and days left to project over. */
bool
inc_calc_schedule_projecting(const IncCalc *c, const IncOffer *offer)
{
	return offer->nschedule > 0 && c->projection != NULL &&
		c->projection->to < c->projection->end &&
		c->projection->span_days > c->projection->elapsed_days;
}

/* inc_calc_schedule_projected: the same for t, which is projected. */
bool
inc_calc_schedule_projected(const IncCalc *c, const IncOffer *offer, const IncTxn *t)
{
	return inc_calc_schedule_projecting(c, offer) && Projected(c, t);
}

/*
 * inc_calc_schedule_mean: version s applies from its effective_from to
 * the day before the next one's (the last: open ended); its days among
 * to + 1 .. end weigh its rate.
 */
void
inc_calc_schedule_mean(const IncCalc *c, const IncOffer *offer, const IncRat *rates,
					   IncRat *mean)
{
	int64_t		first = (int64_t) c->projection->to + 1;
	int64_t		last = c->projection->end;
	IncRat		term,
				days;
	int			s;

	inc_rat_from_int(mean, 0);
	for (s = 0; s < offer->nschedule; s++)
	{
		int64_t		from = offer->schedule[s].effective_from;
		int64_t		to = s + 1 < offer->nschedule ?
			(int64_t) offer->schedule[s + 1].effective_from - 1 : last;

		if (s == 0 || from < first)
			from = first;
		if (to > last)
			to = last;
		if (to < from)
			continue;
		inc_rat_from_int(&days, to - from + 1);
		inc_rat_mul(&term, &rates[s], &days);
		inc_rat_add(mean, mean, &term);
	}
	inc_rat_from_int(&days, last - first + 1);
	inc_rat_div(mean, mean, &days);
}

/* inc_calc_schedule_rate: (own + (k - 1) x mean) / k for a projected t, else own. */
void
inc_calc_schedule_rate(const IncCalc *c, const IncOffer *offer, const IncTxn *t,
					   const IncRat *own, const IncRat *mean, IncRat *out)
{
	IncRat		rest,
				days,
				projected;

	if (!inc_calc_schedule_projected(c, offer, t))
	{
		*out = *own;
		return;
	}
	/* k = span / elapsed: (own x elapsed + mean x (span - elapsed)) / span */
	inc_rat_from_int(&rest, (int64_t) c->projection->span_days - c->projection->elapsed_days);
	inc_rat_mul(&projected, mean, &rest);
	inc_rat_from_int(&days, c->projection->elapsed_days);
	inc_rat_mul(out, own, &days);
	inc_rat_add(out, out, &projected);
	inc_rat_from_int(&days, c->projection->span_days);
	inc_rat_div(out, out, &days);
}

/* inc_calc_emit_rate_row_rat: the row of a rate row at an exact rate. */
IncDec
inc_calc_emit_rate_row_rat(IncCalc *c, const IncOffer *offer, const IncTxn *t,
						   const char *rate_key, const char *rate_measure,
						   const IncDec *rate_value, const IncDec *pay_rate,
						   const IncRat *rate)
{
	IncRat		quantity,
				base,
				incentive;
	IncRowFigures f;

	inc_calc_rate_figures_rat(c, offer, t, rate, &quantity, &base, &incentive);
	f.rate_key = rate_key;
	f.rate_measure = rate_measure;
	f.rate_value = rate_value;
	f.pay_rate = *pay_rate;
	f.incentivized_quantity = &quantity;
	f.incentivized_amount = &base;
	f.incentive_amount = &incentive;
	f.contribution = NULL;
	return inc_calc_emit(c, offer, t, &f);
}

/* inc_calc_property: the key's property value; false when missing. */
bool
inc_calc_property(IncCalc *c, const char *property_key, IncRat *value)
{
	return inc_calc_property_of(c, c->participant_key, property_key, value);
}

/* inc_calc_property_of: key's property value; false when missing. */
bool
inc_calc_property_of(IncCalc *c, const char *key, const char *property_key, IncRat *value)
{
	IncDec		prop;
	IncPropStatus status;

	status = c->props ? c->props(c->props_ctx, key, property_key, &prop)
		: INC_PROP_MISSING;
	if (status == INC_PROP_NOT_NUMBER)
	{
		inc_calc_data_error(c, NULL, INC_ERR_PROPERTY_NOT_NUMBER, property_key,
							"property \"%s\" of participant \"%s\" is not a number",
							property_key, key);
		return false;
	}
	if (status == INC_PROP_MISSING)
		return false;
	inc_rat_from_dec(value, &prop);
	return true;
}

/* inc_row_order: (transaction_id, incentive_rate_key) in byte order. */
int
inc_row_order(const IncRow *a, const IncRow *b)
{
	int			cmp = strcmp(a->txn->transaction_id, b->txn->transaction_id);

	return cmp ? cmp : strcmp(a->rate_key, b->rate_key);
}

/* inc_running_init: re-rounding by running sums with the factor num / den. */
void
inc_running_init(IncRunning *r, const IncRat *num, const IncRat *den)
{
	r->num = *num;
	r->den = *den;
	inc_rat_from_int(&r->sum, 0);
	inc_rat_from_int(&r->previous, 0);
}

/* inc_running_next: round(S(i), 2) - round(S(i-1), 2) for the next row. */
IncDec
inc_running_next(IncRunning *r, const IncRat *exact, IncRat *scaled)
{
	IncRat		share,
				rounded;

	inc_rat_add(&r->sum, &r->sum, exact);
	inc_rat_mul(&share, &r->sum, &r->num);
	inc_rat_div(&share, &share, &r->den);
	inc_rat_round(&rounded, &share, 2);
	inc_rat_sub(&share, &rounded, &r->previous);
	r->previous = rounded;
	if (scaled)
	{
		inc_rat_mul(scaled, exact, &r->num);
		inc_rat_div(scaled, scaled, &r->den);
	}
	return inc_rat_to_dec(&share, 2);
}

/* inc_growers_init: an empty numbering of growers. */
void
inc_growers_init(IncGrowers *g)
{
	g->map = inc_strmap_create();
	g->n = 0;
	g->cap = 0;
	g->keys = NULL;
}

/* inc_growers_add: key's index, a copy of key numbered when new. */
int
inc_growers_add(IncGrowers *g, const char *key)
{
	void	   *found = inc_strmap_get(g->map, key);
	char	   *copy;

	if (found != NULL)
		return (int) ((intptr_t) found - 1);
	copy = inc_strdup(key);
	if (g->n == g->cap)
		g->keys = inc_grow(g->keys, g->n, &g->cap, sizeof(char *), 8);
	g->keys[g->n] = copy;
	*inc_strmap_slot(g->map, copy) = (void *) (intptr_t) (g->n + 1);
	return g->n++;
}

/* inc_growers_find: key's index, or -1. */
int
inc_growers_find(const IncGrowers *g, const char *key)
{
	void	   *found = inc_strmap_get(g->map, key);

	return found ? (int) ((intptr_t) found - 1) : -1;
}

/* inc_index_list_push: append value, growing the list. */
void
inc_index_list_push(IncIndexList *l, int value)
{
	if (l->n == l->cap)
		l->items = inc_grow_list(l->items, l->n, &l->cap, sizeof(int), 8);
	l->items[l->n++] = value;
}

/* inc_rate_row: the fields every strategy's rates rows fill. */
IncRateRow
inc_rate_row(const IncOffer *offer, const char *rate_key, const IncDec *value,
			 const char *measure, const IncPeriod *period, const char *transaction_type)
{
	IncRateRow	row = {0};

	row.offer = offer;
	row.rate_key = rate_key;
	row.rate_value = *value;
	row.measure = measure;
	row.period = period;
	row.transaction_type = transaction_type;
	return row;
}

/* inc_rate_row_emit: shortest-form numbers and the SKU's price, then fn. */
void
inc_rate_row_emit(IncRateRow *row, IncRateFn fn, void *ctx)
{
	IncDec		threshold,
				price,
				coverage_rate;
	const IncDec *p = row->sku_key ? inc_offer_price(row->offer, row->sku_key) : NULL;

	row->rate_value = inc_dec_trim(&row->rate_value);
	if (row->threshold)
	{
		threshold = inc_dec_trim(row->threshold);
		row->threshold = &threshold;
	}
	row->price = NULL;
	if (p)
	{
		price = inc_dec_trim(p);
		row->price = &price;
	}
	if (row->coverage_rate)
	{
		coverage_rate = inc_dec_trim(row->coverage_rate);
		row->coverage_rate = &coverage_rate;
	}
	fn(ctx, row);
}
