/*
 * names.c
 *    What a misspelled name was meant to be, among candidates read one at
 *    a time (names.h; docs/reference.md, Suggestions).
 *
 * The name and each candidate are folded first (letter case, '-' and ' '
 * for '_', the look-alike digits), so every fit compares folded bytes.  A
 * candidate whose length differs from the name's by more than the edit
 * distance still allowed is never compared character by character, and
 * the distance is computed in three rows that stop as soon as it is
 * certain to be too large, so a search over thousands of SKU keys costs
 * little more than reading them.
 */
#include <string.h>

#include "names.h"

/* Lower: c in lower case (ASCII letters). */
static char
Lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

/* Fold: c as names are compared: lower case, '_' for '-' and ' ', 0 for o, 1 for i and l. */
static char
Fold(char c)
{
	c = Lower(c);
	switch (c)
	{
		case '-':
		case ' ':
			return '_';
		case 'o':
			return '0';
		case 'i':
		case 'l':
			return '1';
		default:
			return c;
	}
}

/* Same: a and b (folded) equal, or equal but for a plural s at the end of one of them. */
static bool
Same(const char *a, int la, const char *b, int lb)
{
	if (la == lb)
		return memcmp(a, b, (size_t) la) == 0;
	if (la + 1 == lb)
		return b[la] == 's' && memcmp(a, b, (size_t) la) == 0;
	if (lb + 1 == la)
		return a[lb] == 's' && memcmp(a, b, (size_t) lb) == 0;
	return false;
}

/*
 * Distance: the optimal string alignment distance of a (la bytes) and b
 * (lb bytes), both at most INC_NAME_MAX long: insertions, deletions,
 * substitutions and swaps of adjacent characters.  Any result above limit
 * means only "more than limit": the rows stop once two in a row are all
 * above it, since every later cell comes from one of them plus 0 or more.
 */
static int
Distance(const char *a, int la, const char *b, int lb, int limit)
{
	int			rows[3][INC_NAME_MAX + 1];
	int		   *before = rows[0];	/* row i - 2 */
	int		   *prev = rows[1];	/* row i - 1 */
	int		   *cur = rows[2];	/* row i */
	int		   *spare;
	int			prev_min = 0;
	int			i,
				j;

	if (la - lb > limit || lb - la > limit)
		return limit + 1;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++)
	{
		int			row_min = i;

		cur[0] = i;
		for (j = 1; j <= lb; j++)
		{
			int			cost = a[i - 1] == b[j - 1] ? 0 : 1;
			int			best = prev[j] + 1;

			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (prev[j - 1] + cost < best)
				best = prev[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
				before[j - 2] + 1 < best)
				best = before[j - 2] + 1;
			cur[j] = best;
			if (best < row_min)
				row_min = best;
		}
		if (row_min > limit && prev_min > limit)
			return limit + 1;
		prev_min = row_min;
		spare = before;
		before = prev;
		prev = cur;
		cur = spare;
	}
	return prev[lb];
}

/*
 * TieDistance: how near candidate (len bytes) is to s's name when it fits
 * as well as another: the edit distance of the two in lower case (nothing
 * else folded), then, for two as near, that of their bytes as written,
 * as one number (the first times INC_NAME_MAX + 1, plus the second).
 */
static int
TieDistance(const IncNameSearch *s, const char *candidate, int len)
{
	char		lower[INC_NAME_MAX];
	int			i;

	for (i = 0; i < len; i++)
		lower[i] = Lower(candidate[i]);
	return Distance(s->lower, s->len, lower, len, INC_NAME_MAX) * (INC_NAME_MAX + 1) +
		Distance(s->raw, s->len, candidate, len, INC_NAME_MAX);
}

void
inc_name_search_begin(IncNameSearch *s, const char *name, size_t len)
{
	size_t		i;

	s->fit = INC_NAME_NONE;
	s->distance = 0;
	s->tie = 0;
	s->best = -1;
	s->count = 0;
	if (len > INC_NAME_MAX)
	{
		s->name[0] = '\0';
		s->lower[0] = '\0';
		s->raw[0] = '\0';
		s->len = -1;
		s->limit = 0;
		return;
	}
	for (i = 0; i < len; i++)
	{
		s->name[i] = Fold(name[i]);
		s->lower[i] = Lower(name[i]);
		s->raw[i] = name[i];
	}
	s->name[len] = '\0';
	s->lower[len] = '\0';
	s->raw[len] = '\0';
	s->len = (int) len;
	s->limit = len <= 4 ? 1 : 2;
}

bool
inc_name_search_consider(IncNameSearch *s, const char *candidate, size_t len)
{
	char		folded[INC_NAME_MAX] = {0};
	long		position = s->count++;
	int			lc = (int) len;
	IncNameFit	fit;
	int			distance = 0;
	int			tie;
	int			i;

	if (s->len < 0 || len > INC_NAME_MAX)
		return false;
	for (i = 0; i < lc; i++)
		folded[i] = Fold(candidate[i]);
	/* its fit, when it can be as good as the best so far */
	if (Same(s->name, s->len, folded, lc))
		fit = INC_NAME_SAME;
	else if (s->fit == INC_NAME_SAME)
		return false;
	else if (s->len >= 3 && lc > s->len && memcmp(folded, s->name, (size_t) s->len) == 0)
		fit = INC_NAME_ABBREVIATED;
	else if (s->len >= 4 && s->name[s->len - 1] == 's' && lc >= s->len &&
			 memcmp(folded, s->name, (size_t) (s->len - 1)) == 0)
		fit = INC_NAME_ABBREVIATED; /* the plural of an abbreviation */
	else if (s->fit == INC_NAME_ABBREVIATED)
		return false;
	else
	{
		int			limit = s->fit == INC_NAME_NEAR ? s->distance : s->limit;

		distance = Distance(s->name, s->len, folded, lc, limit);
		if (distance > limit)
			return false;
		fit = INC_NAME_NEAR;
	}
	tie = TieDistance(s, candidate, lc);
	/* as good: only if nearer with letter case set aside, or as written */
	if (fit == s->fit && distance == s->distance && tie >= s->tie)
		return false;
	s->fit = fit;
	s->distance = distance;
	s->tie = tie;
	s->best = position;
	return true;
}
