/*
 * engine_internal.h
 *    What the engine (engine.c) shares with the strategy files
 *    (strategy_standard.c, strategy_stepped.c, strategy_stacked.c) and the
 *    pool allocation (allocate.c).  Not part of the host API.
 *
 * The engine indexes offers by SKU: each SKU maps to its hooks, one per
 * place an offer mentions it.  For every transaction it visits only its
 * SKU's hooks and hands each to the offer's strategy ("observe"); after
 * the participant's last transaction each touched offer's strategy
 * "finishes", computing what needs totals (tiers, pools, overlaps).
 */
#ifndef INC_ENGINE_INTERNAL_H
#define INC_ENGINE_INTERNAL_H

#include "engine.h"
#include "rational.h"
#include "strmap.h"

typedef enum IncHookKind
{
	HOOK_STANDARD_RATE,			/* a: entry, b: rate within entry */
	HOOK_STEPPED_EARN,			/* a: earning filter */
	HOOK_STEPPED_THRESHOLD,		/* a: threshold filter */
	HOOK_STACKED_SET			/* a: sku set, b: conversion within set */
} IncHookKind;

typedef struct IncHook
{
	int			offer;			/* index into IncEngine.offers */
	IncHookKind kind;
	int			a;
	int			b;
} IncHook;

typedef struct IncHookList
{
	int			n;
	int			cap;
	IncHook    *hooks;
} IncHookList;

struct IncEngine
{
	int			noffers;
	int			offers_cap;
	const IncOffer **offers;
	IncStrMap  *sku_uom;		/* sku_key -> char * uom_key */
	IncStrMap  *conversions;	/* "from\037to" -> IncDec * factor */
	IncStrMap  *index;			/* sku_key -> IncHookList * */
	const char **sku_keys;
	int			nsku_keys;
	const char **property_keys;
	int			nproperty_keys;
	IncTickFn	tick;
	IncDiagnosticsFn diagnostics;
	void	   *diagnostics_ctx;
	/* per-participant state, valid while state_gen[i] == gen */
	uint64_t	gen;
	uint64_t   *state_gen;
	void	  **state;
};

/* One participant's calculation in progress. */
typedef struct IncCalc
{
	IncEngine  *engine;
	const char *participant_key;
	const IncTxn *txns;
	int			ntxns;
	IncPropertyFn props;
	void	   *props_ctx;
	IncEmitFn	emit;
	void	   *emit_ctx;
	int			ntouched;		/* offers touched, in order of first touch */
	int		   *touched;
} IncCalc;

/*
 * The transaction and participant being calculated, for error context;
 * the host's fail hook may report them (NULL outside a calculation).
 */
extern const IncTxn *inc_current_txn;
extern const char *inc_current_participant;

/* True when t matches the offer period, the transaction type. */
extern bool inc_txn_matches(const IncOffer *offer, int period,
							const char *transaction_type, const IncTxn *t);

/* t's quantity in to_uom (SPEC 1.3); fails naming t when no conversion. */
extern void inc_calc_convert(IncCalc *c, const IncTxn *t, const char *to_uom, IncRat *out);

/* Incentivized quantity: t's quantity in its SKU's unit (SPEC 3.2). */
extern void inc_calc_sku_quantity(IncCalc *c, const IncTxn *t, IncRat *out);

/* Base amount (SPEC 3.2): quantity x program price, else the amount. */
extern void inc_calc_base_amount(IncCalc *c, const IncOffer *offer, const IncTxn *t,
								 const IncRat *sku_quantity, IncRat *out);

/* The figures of one row before formatting. */
typedef struct IncRowFigures
{
	const char *rate_key;
	const char *rate_measure;
	const IncDec *rate_value;
	IncDec		pay_rate;		/* as reported */
	const IncRat *incentivized_quantity;
	const IncRat *incentivized_amount;
	const IncRat *incentive_amount;
	const IncRat *contribution; /* NULL means 1 */
} IncRowFigures;

/* inc_calc_emit: format a row (SPEC 3.1) and pass it to the host. */
extern void inc_calc_emit(IncCalc *c, const IncOffer *offer, const IncTxn *t,
						  const IncRowFigures *f);

/*
 * The figures of a percent_of_amount or dollars_per_unit rate for t:
 * incentivized quantity, base amount and incentive (SPEC 3.3).
 */
extern void inc_calc_rate_figures(IncCalc *c, const IncOffer *offer, const IncTxn *t,
								  const IncDec *rate, IncRat *quantity, IncRat *base,
								  IncRat *incentive);

/* The row of a percent_of_amount or dollars_per_unit rate for t. */
extern void inc_calc_emit_rate_row(IncCalc *c, const IncOffer *offer, const IncTxn *t,
								   const char *rate_key, const char *rate_measure,
								   const IncDec *rate, const IncDec *pay_rate);

/* A pay rate: exact for percent (rate / 100) and dollars (rate), shortest form. */
extern IncDec inc_pay_rate(IncCalculator calc, const IncDec *rate);

/* A growable array of transaction indexes. */
typedef struct IncIndexList
{
	int			n;
	int			cap;
	int		   *items;
} IncIndexList;

extern void inc_index_list_push(IncIndexList *l, int value);

/*
 * Fixed pools (SPEC 3.4): share pool over txns (indexes, in transaction_id
 * order) in proportion to their base amounts; emits one row each with the
 * given rate key and rate value; no rows when the bases sum to <= 0.
 */
extern void inc_allocate_pool(IncCalc *c, const IncOffer *offer, const IncIndexList *txns,
							  const IncDec *pool, const char *rate_key,
							  const char *rate_measure);

/* Strategies: observe one hook for transaction txn, finish a participant. */
extern void *inc_standard_begin(IncCalc *c, const IncOffer *offer);
extern void inc_standard_observe(IncCalc *c, const IncOffer *offer, void *state,
								 const IncHook *hook, int txn);
extern void inc_standard_finish(IncCalc *c, const IncOffer *offer, void *state);

extern void *inc_stepped_begin(IncCalc *c, const IncOffer *offer);
extern void inc_stepped_observe(IncCalc *c, const IncOffer *offer, void *state,
								const IncHook *hook, int txn);
extern void inc_stepped_finish(IncCalc *c, const IncOffer *offer, void *state);

extern void *inc_stacked_begin(IncCalc *c, const IncOffer *offer);
extern void inc_stacked_observe(IncCalc *c, const IncOffer *offer, void *state,
								const IncHook *hook, int txn);
extern void inc_stacked_finish(IncCalc *c, const IncOffer *offer, void *state);

#endif							/* INC_ENGINE_INTERNAL_H */
