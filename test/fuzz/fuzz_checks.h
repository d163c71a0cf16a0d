/*
 * fuzz_checks.h
 *    fuzz_calc's checks of the engine's output (fuzz_checks.c): the
 *    figures of each earning row, and the diagnostics of a participant's
 *    offers against the rows they explain.
 */
#ifndef FUZZ_CHECKS_H
#define FUZZ_CHECKS_H

#include "core/engine/engine.h"

#define FUZZ_MAX_OFFERS 6	/* three documents and their limit twins */

/* What one participant's calculation handed out. */
typedef struct FuzzRows
{
	const IncOffer *offers[FUZZ_MAX_OFFERS];
	int			noffers;
	int			nrows;
	const IncRow *rows;			/* copies of the rows, in order */
	int			ndiagnosed;
	const char *diagnostics[FUZZ_MAX_OFFERS];	/* JSON, in offer order */
} FuzzRows;

extern void fuzz_check_row(const IncRow *row, const char *desc);
extern void fuzz_check_diagnostics(const FuzzRows *r);

#endif							/* FUZZ_CHECKS_H */
