/*
 * names.h
 *    What a misspelled name was meant to be: the one rule behind every
 *    "did you mean" of the extension (docs/reference.md, Suggestions),
 *    for a field of an offer document, a SKU key, a transaction type and
 *    an offer key alike.
 *
 * A search takes the name, then the candidates one at a time, and keeps
 * the best of them by these fits, in this order:
 *   same          equal to the name but for letter case, '-' or ' ' for
 *                 '_', a look-alike digit (0 for O, 1 for I or l), or a
 *                 plural s at the end of one of them
 *   abbreviated   the name (3 characters or more) is the start of it, or
 *                 the name ends in s and the rest (3 or more) is
 *   near          within 1 edit of the name (names of up to 4 characters)
 *                 or 2 (longer names): insertions, deletions,
 *                 substitutions and swaps of adjacent characters, counted
 *                 after the folding of "same"
 * and, between two candidates of the same fit (and distance), the nearer
 * with letter case alone set aside ("keys.base_cp" before "Keys.Base CP"
 * for "KEYS.BASE_CP"), then the nearer as written ("offer_a" before
 * "OFFER_A" for "offer_c"), then the first.
 * Candidates are read in place (their length given, no NUL needed) and
 * never kept, and nothing is allocated: a host can run thousands through
 * one search.  Names and candidates longer than INC_NAME_MAX bytes never
 * fit.
 */
#ifndef INC_NAMES_H
#define INC_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Longest name or candidate compared, in bytes. */
#define INC_NAME_MAX 128

typedef enum IncNameFit
{
	INC_NAME_SAME = 0,
	INC_NAME_ABBREVIATED,
	INC_NAME_NEAR,
	INC_NAME_NONE
} IncNameFit;

typedef struct IncNameSearch
{
	char		name[INC_NAME_MAX + 1];	/* the name, folded */
	char		lower[INC_NAME_MAX + 1];	/* the name in lower case */
	char		raw[INC_NAME_MAX + 1];	/* the name as written */
	int			len;			/* its length; -1: too long, nothing fits */
	int			limit;			/* the edit distance a near candidate may have */
	IncNameFit	fit;			/* of the best candidate so far */
	int			distance;		/* its edit distance (INC_NAME_NEAR) */
	int			tie;			/* its TieDistance (names.c) */
	long		best;			/* its position among those considered; -1: none */
	long		count;			/* candidates considered */
} IncNameSearch;

/* inc_name_search_begin: start a search for the len bytes at name. */
extern void inc_name_search_begin(IncNameSearch *s, const char *name, size_t len);

/*
 * inc_name_search_consider: the next candidate (len bytes at candidate);
 * true when it is now the best one (s->best is then its position: the
 * number of candidates considered before it).
 */
extern bool inc_name_search_consider(IncNameSearch *s, const char *candidate, size_t len);

#endif							/* INC_NAMES_H */
