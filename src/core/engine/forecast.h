/*
 * forecast.h
 *    A participant's forecast (docs/reference.md, Forecast): per offer,
 *    what it has earned by a date, what it would earn by the end of the
 *    offer's span at the same pace, and the straight-line share of that
 *    which has accrued.
 */
#ifndef INC_FORECAST_H
#define INC_FORECAST_H

#include "engine.h"

/*
 * One forecast row: a participant and an offer (in an offer aggregated by
 * group, and the group its transactions counted in) whose actual or
 * projected calculation has a row.  Dates are days since 2000-01-01;
 * basis values have scale 6 (absent: has_* false), amounts scale 2; rate
 * keys are the offer's strings (NULL: no tier met, or an offer without
 * tiers).  participant and group are indexes among the unit's keys
 * (group -1 when group_key is NULL).
 */
typedef struct IncForecastRow
{
	const IncOffer *offer;
	int			participant;
	const char *participant_key;
	int			group;
	const char *group_key;		/* the group whose volume the basis is of */
	int32_t		span_start;
	int32_t		span_end;
	int32_t		elapsed_days;
	int32_t		span_days;
	bool		has_basis_to_date;
	IncDec		basis_to_date;
	bool		has_projected_basis;
	IncDec		projected_basis;
	const char *rate_key_to_date;
	const char *projected_rate_key;
	IncDec		earned_to_date;
	IncDec		projected_earnings;
	IncDec		accrual_to_date;
} IncForecastRow;

typedef void (*IncForecastFn) (void *ctx, const IncForecastRow *row);

/*
 * inc_engine_forecast_unit: the forecast of a calculation unit (one
 * participant, or a group with its members) as of as_of_date, its rows
 * passed to fn in offer order, then participant and group key order, for
 * the participants the host wants (INC_KEY_REPORT).  txns are the unit's
 * transactions dated on or before as_of_date (the host reads them as a
 * calculation with that through_date does); the actual calculation is
 * the engine's over them, the projected one the same with
 * inc_engine_set_projection.  The engine's diagnostics must be off; its
 * basis and projection are set here and off again on return (after a
 * failure, inc_engine_clear_position turns them off).
 */
extern void inc_engine_forecast_unit(IncEngine *e, int32_t as_of_date, const IncUnit *unit,
									 const IncTxn *txns, int ntxns,
									 IncPropertyFn props, void *props_ctx,
									 IncForecastFn fn, void *ctx);

/* inc_engine_forecast: the same for one participant (a unit of one key). */
extern void inc_engine_forecast(IncEngine *e, int32_t as_of_date, const char *participant_key,
								const IncTxn *txns, int ntxns,
								IncPropertyFn props, void *props_ctx,
								IncForecastFn fn, void *ctx);

#endif							/* INC_FORECAST_H */
