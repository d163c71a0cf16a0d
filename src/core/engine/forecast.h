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
 * One forecast row: a participant and an offer whose actual or projected
 * calculation has a row.  Dates are days since 2000-01-01; basis values
 * have scale 6 (absent: has_* false), amounts scale 2; rate keys are the
 * offer's strings (NULL: no tier met, or an offer without tiers).
 */
typedef struct IncForecastRow
{
	const IncOffer *offer;
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
 * inc_engine_forecast: the forecast of one participant as of as_of_date,
 * its rows passed to fn in offer order.  txns are the participant's
 * transactions dated on or before as_of_date (the host reads them as a
 * calculation with that through_date does); the actual calculation is
 * the engine's over them, the projected one the same with
 * inc_engine_set_projection.  The engine's diagnostics must be off; its
 * basis and projection are set here and off again on return (after a
 * failure, inc_engine_clear_position turns them off).
 */
extern void inc_engine_forecast(IncEngine *e, int32_t as_of_date, const char *participant_key,
								const IncTxn *txns, int ntxns,
								IncPropertyFn props, void *props_ctx,
								IncForecastFn fn, void *ctx);

#endif							/* INC_FORECAST_H */
