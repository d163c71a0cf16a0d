/*
 * offer.c
 *    Small services of the offer model: strategy, calculator, threshold
 *    type, tier mode, enrollment, aggregation, scope, match and pays_on names, an
 *    offer's span, program price lookup, and ISO dates as PostgreSQL day
 *    numbers, and the version of a rate schedule on a date.
 *
 * Dates are days since 2000-01-01 (PostgreSQL's DateADT), computed with
 * integer arithmetic on the proleptic Gregorian calendar, so the engine
 * compares them with transaction dates read from PostgreSQL directly.
 */
#include <stdio.h>
#include <string.h>

#include "offer.h"

const char *const inc_strategy_names[INC_NSTRATEGIES] = {
	[INC_STANDARD] = "standard",
	[INC_STEPPED] = "stepped",
	[INC_STACKED] = "stacked",
};

const char *const inc_calculator_names[INC_NCALCULATORS] = {
	[INC_PERCENT_OF_AMOUNT] = "percent_of_amount",
	[INC_DOLLARS_PER_UNIT] = "dollars_per_unit",
	[INC_FIXED_AMOUNT] = "fixed_amount",
	[INC_DOLLARS_PER_COVERAGE_UNIT] = "dollars_per_coverage_unit",
};

const char *const inc_threshold_type_names[INC_NTHRESHOLD_TYPES] = {
	[INC_THRESHOLD_AMOUNT] = "aggregated_amount",
	[INC_THRESHOLD_QUANTITY] = "aggregated_quantity",
	[INC_THRESHOLD_PROPERTY] = "property",
	[INC_THRESHOLD_GROWTH_AMOUNT] = "growth_amount",
	[INC_THRESHOLD_GROWTH_QUANTITY] = "growth_quantity",
	[INC_THRESHOLD_DISTINCT_PRODUCTS] = "distinct_products",
};

const char *const inc_pays_on_names[INC_NPAYS_ON] = {
	[INC_PAYS_ON_ALL_VOLUME] = "all_volume",
	[INC_PAYS_ON_GROWTH] = "growth",
};

const char *const inc_tier_mode_names[INC_NTIER_MODES] = {
	[INC_TIERS_ALL_VOLUME] = "all_volume",
	[INC_TIERS_INCREMENTAL] = "incremental",
};

const char *const inc_enrollment_names[INC_NENROLLMENTS] = {
	[INC_ENROLLMENT_OPEN] = "open",
	[INC_ENROLLMENT_REQUIRED] = "required",
};

const char *const inc_aggregation_names[INC_NAGGREGATIONS] = {
	[INC_AGGREGATE_PARTICIPANT] = "participant",
	[INC_AGGREGATE_GROUP] = "group",
};

const char *const inc_scope_names[INC_NSCOPES] = {
	[INC_SCOPE_GROUP] = "group",
	[INC_SCOPE_MEMBER] = "member",
	[INC_SCOPE_GROWER] = "grower",
};

const char *const inc_match_names[INC_NMATCHES] = {
	[INC_MATCH_PARTICIPANT] = "participant",
	[INC_MATCH_GROWER] = "grower",
};

/*
 * The name of each enum value for the messages and responses: the entry of
 * its names table, or "unknown" for a value out of range.
 */
#define NAME_FUNCTION(fn, type, names, n) \
const char * \
fn(type v) \
{ \
	return (unsigned) v < (n) ? (names)[v] : "unknown"; \
}

NAME_FUNCTION(inc_strategy_name, IncStrategy, inc_strategy_names, INC_NSTRATEGIES)
NAME_FUNCTION(inc_calculator_name, IncCalculator, inc_calculator_names, INC_NCALCULATORS)
NAME_FUNCTION(inc_threshold_type_name, IncThresholdType, inc_threshold_type_names, INC_NTHRESHOLD_TYPES)
NAME_FUNCTION(inc_tier_mode_name, IncTierMode, inc_tier_mode_names, INC_NTIER_MODES)
NAME_FUNCTION(inc_enrollment_name, IncEnrollment, inc_enrollment_names, INC_NENROLLMENTS)
NAME_FUNCTION(inc_aggregation_name, IncAggregation, inc_aggregation_names, INC_NAGGREGATIONS)
NAME_FUNCTION(inc_scope_name, IncScope, inc_scope_names, INC_NSCOPES)
NAME_FUNCTION(inc_match_name, IncMatch, inc_match_names, INC_NMATCHES)
NAME_FUNCTION(inc_pays_on_name, IncPaysOn, inc_pays_on_names, INC_NPAYS_ON)

/* inc_offer_span: the earliest period start and the latest period end. */
void
inc_offer_span(const IncOffer *offer, int32_t *start, int32_t *end)
{
	int			i;

	*start = offer->periods[0].start_date;
	*end = offer->periods[0].end_date;
	for (i = 1; i < offer->nperiods; i++)
	{
		if (offer->periods[i].start_date < *start)
			*start = offer->periods[i].start_date;
		if (offer->periods[i].end_date > *end)
			*end = offer->periods[i].end_date;
	}
}

/* inc_offer_span_days: end - start + 1, and min(as_of_date, end) - start + 1. */
void
inc_offer_span_days(const IncOffer *offer, int32_t as_of_date, int32_t *span_days,
					int32_t *elapsed_days)
{
	int32_t		start,
				end;

	inc_offer_span(offer, &start, &end);
	*span_days = end - start + 1;
	*elapsed_days = (as_of_date < end ? as_of_date : end) - start + 1;
}

/*
 * inc_offer_version: the latest schedule entry whose effective_from <=
 * date, found by binary search (entry 0 applies before every other).
 */
int
inc_offer_version(const IncOffer *offer, int32_t date)
{
	int			lo = 0,
				hi = offer->nschedule - 1;

	if (offer->nschedule == 0)
		return 0;
	/* invariant: schedule[lo] applies on date or lo == 0 */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;

		if (offer->schedule[mid].effective_from <= date)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* inc_offer_at: the schedule's version on date, or offer itself without a schedule. */
const IncOffer *
inc_offer_at(const IncOffer *offer, int32_t date)
{
	if (offer->nschedule == 0)
		return offer;
	return offer->schedule[inc_offer_version(offer, date)].offer;
}

/* inc_offer_pay_rate: rate / 100 for percent, the rate for dollars, exactly. */
IncDec
inc_offer_pay_rate(IncCalculator calc, const IncDec *rate)
{
	IncDec		d = *rate;

	if (calc == INC_PERCENT_OF_AMOUNT)
		d = inc_dec_div_pow10(rate, 2);
	return inc_dec_trim(&d);
}

/*
 * inc_offer_price: the program price of sku_key, or NULL when not priced
 * (a binary search: the parser sorts prices by sku_key).
 */
const IncDec *
inc_offer_price(const IncOffer *offer, const char *sku_key)
{
	int			lo = 0,
				hi = offer->nprices - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			cmp = strcmp(offer->prices[mid].sku_key, sku_key);

		if (cmp == 0)
			return &offer->prices[mid].price;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* inc_currency_code: three upper-case ASCII letters. */
bool
inc_currency_code(const char *s)
{
	int			i;

	for (i = 0; i < 3; i++)
		if (s[i] < 'A' || s[i] > 'Z')
			return false;
	return s[3] == '\0';
}

/* Value of n ASCII digits at s, or -1 when one is not a digit. */
static int
Digits(const char *s, int n)
{
	int			v = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static bool
IsLeapYear(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/*
 * A proleptic Gregorian date as days since 2000-01-01 (H. Hinnant's
 * days_from_civil, counting eras of 400 years from 0000-03-01; y >= 1, so
 * no era is negative).
 */
static int32_t
DaysFromCivil(int y, int m, int d)
{
	int			yoe;
	int			era;
	int			doy;
	int			doe;

	y -= (m <= 2);
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	/* 730425: days from 0000-03-01 to 2000-01-01 */
	return (int32_t) (era * 146097 + doe - 730425);
}

static const int MonthDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
static const char *const MonthNames[12] = {
	"January", "February", "March", "April", "May", "June", "July", "August",
	"September", "October", "November", "December"
};

/*
 * inc_date_problem: NULL when s is "YYYY-MM-DD" exactly naming a real
 * calendar day of years 1..9999 (*days set to days since 2000-01-01),
 * else what is wrong with it, into buf (cap bytes, 96 are enough).
 */
const char *
inc_date_problem(const char *s, int32_t *days, char *buf, size_t cap)
{
	int			y;
	int			m;
	int			d;
	int			dim;

	if (s == NULL || strlen(s) != 10 || s[4] != '-' || s[7] != '-' ||
		(y = Digits(s, 4)) < 0 || (m = Digits(s + 5, 2)) < 0 || (d = Digits(s + 8, 2)) < 0)
	{
		snprintf(buf, cap, "must be a date (YYYY-MM-DD)");
		return buf;
	}
	if (y < 1)
	{
		snprintf(buf, cap, "\"%s\" is not a valid calendar date (years run from 0001 to 9999)", s);
		return buf;
	}
	if (m < 1 || m > 12)
	{
		snprintf(buf, cap, "\"%s\" is not a valid calendar date (months run from 01 to 12)", s);
		return buf;
	}
	dim = MonthDays[m - 1] + (m == 2 && IsLeapYear(y) ? 1 : 0);
	if (d < 1 || d > dim)
	{
		snprintf(buf, cap, "\"%s\" is not a valid calendar date (%s %04d has %d days)",
				 s, MonthNames[m - 1], y, dim);
		return buf;
	}
	*days = DaysFromCivil(y, m, d);
	return NULL;
}

/* inc_date_parse: inc_date_problem without the problem. */
bool
inc_date_parse(const char *s, int32_t *days)
{
	char		buf[96];

	return inc_date_problem(s, days, buf, sizeof(buf)) == NULL;
}

/*
 * inc_date_format: the "YYYY-MM-DD" text of a day number (H. Hinnant's
 * civil_from_days, the inverse of DaysFromCivil).
 */
void
inc_date_format(int32_t days, char *buf, size_t cap)
{
	int64_t		z = (int64_t) days + 730425;	/* days since 0000-03-01 */
	int64_t		era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t		doe = z - era * 146097;
	int64_t		yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t		doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t		mp = (5 * doy + 2) / 153;
	int			d = (int) (doy - (153 * mp + 2) / 5 + 1);
	int			m = (int) (mp < 10 ? mp + 3 : mp - 9);
	int			y = (int) (yoe + era * 400 + (m <= 2));

	snprintf(buf, cap, "%04d-%02d-%02d", y, m, d);
}
