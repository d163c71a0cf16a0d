/*
 * test_names.c
 *    Unit tests of the rule behind every suggestion (src/core/util/names.c;
 *    docs/reference.md, Suggestions): the same name but for case,
 *    separators, look-alike digits or a plural s; an abbreviation; a near
 *    name within 1 or 2 edits; the order between them; long names and
 *    candidates; many candidates.
 */
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "../../src/core/util/names.h"

/* Meant: the candidate (NULL-terminated list) the rule picks for name, or "". */
static const char *
Meant(const char *name, const char *const *candidates)
{
	IncNameSearch search;
	int			i;

	inc_name_search_begin(&search, name, strlen(name));
	for (i = 0; candidates[i] != NULL; i++)
		inc_name_search_consider(&search, candidates[i], strlen(candidates[i]));
	return search.best < 0 ? "" : candidates[search.best];
}

static const char *const Skus[] = {
	"trident_herbicide", "trident_herbicide_2.5_gal", "crop_guard_30_l_herbicide_2.5_gal_22654",
	"agri_shield_insecticide_bulk_63374", "book_herbicide_2.5_gal", "AB-12", NULL
};
static const char *const Offers[] = {"pas26.st_bonus", "pas26.early", "vcs26.base_cp", NULL};

static void
TestFits(void)
{
	/* the same name but for case, '-' or ' ' for '_', look-alikes, a plural s */
	CHECK_STR(Meant("TRIDENT_HERBICIDE", Skus), "trident_herbicide");
	CHECK_STR(Meant("trident-herbicide", Skus), "trident_herbicide");
	CHECK_STR(Meant("trident herbicides", Skus), "trident_herbicide");
	CHECK_STR(Meant("cr0p_guard_30_I_herbicide_2.5_gaI_22654", Skus), "crop_guard_30_l_herbicide_2.5_gal_22654");
	CHECK_STR(Meant("b00k_herbicide_2.5_ga1", Skus), "book_herbicide_2.5_gal");
	CHECK_STR(Meant("ab_12", Skus), "AB-12");
	CHECK_STR(Meant("VCS26.BASE_CP", Offers), "vcs26.base_cp");
	/* within 2 edits: a letter dropped, two swapped, one wrong */
	CHECK_STR(Meant("trident_herbicde", Skus), "trident_herbicide");
	CHECK_STR(Meant("pas26.st_bonsu", Offers), "pas26.st_bonus");
	CHECK_STR(Meant("pas26.st_bomus", Offers), "pas26.st_bonus");
	CHECK_STR(Meant("pas26.earlyy", Offers), "pas26.early");
	CHECK_STR(Meant("pas26.erly", Offers), "pas26.early");
	/* 3 edits is too far */
	CHECK_STR(Meant("pas26.st_bxxxs", Offers), "");
	CHECK_STR(Meant("no_such_sku", Skus), "");
	/* an abbreviation of 3 characters or more: the first candidate it starts */
	CHECK_STR(Meant("agri_shield", Skus), "agri_shield_insecticide_bulk_63374");
	CHECK_STR(Meant("vcs26", Offers), "vcs26.base_cp");
	/* ... and the plural of one: products for product_keys */
	{
		static const char *const fields[] = {"period_key", "sku_keys", "product_keys", NULL};

		CHECK_STR(Meant("products", fields), "product_keys");
		CHECK_STR(Meant("skus", fields), "sku_keys");
	}
}

static void
TestOrder(void)
{
	static const char *const near_first[] = {"rat", "rate", NULL};
	static const char *const abbr_first[] = {"keys_extra", "keys", NULL};
	static const char *const nearer_later[] = {"abcdxy", "abcdex", NULL};
	static const char *const ties[] = {"abcdex", "abcdey", NULL};
	static const char *const short_names[] = {"max", "mix", "maxi", NULL};
	static const char *const same_later[] = {"Keys.Base CP", "keys.base_cp", "keys.base_cp2", NULL};
	static const char *const case_later[] = {"OFFER_A", "offer_a", NULL};
	static const char *const near_later[] = {"abc_dx", "abc-dx", NULL};
	static const char *const abbr_later[] = {"TRIDENT-HERBICIDE", "trident_herbicide", NULL};

	/* the same name comes before a near one listed first */
	CHECK_STR(Meant("Rate", near_first), "rate");
	/* ... and before an abbreviation */
	CHECK_STR(Meant("key", abbr_first), "keys");
	/* the nearer of two near ones, wherever it is */
	CHECK_STR(Meant("abcdef", nearer_later), "abcdex");
	/* of two as near, the first */
	CHECK_STR(Meant("abcdef", ties), "abcdex");
	/* ... unless the later one is nearer with letter case set aside */
	CHECK_STR(Meant("KEYS.BASE_CP", same_later), "keys.base_cp");
	CHECK_STR(Meant("abc-de", near_later), "abc-dx");
	CHECK_STR(Meant("offer_c", case_later), "offer_a");
	CHECK_STR(Meant("TRIDENT_H", abbr_later), "trident_herbicide");
	/* names of up to 4 characters: one edit */
	CHECK_STR(Meant("mxa", short_names), "max");
	CHECK_STR(Meant("mzz", short_names), "");
}

static void
TestLimits(void)
{
	char		longer[INC_NAME_MAX + 2];
	const char *candidates[3];
	IncNameSearch search;
	char		sku[32];
	int			i;

	memset(longer, 'a', INC_NAME_MAX + 1);
	longer[INC_NAME_MAX + 1] = '\0';
	candidates[0] = longer;
	candidates[1] = "aaa";
	candidates[2] = NULL;
	/* a name or candidate over INC_NAME_MAX bytes never fits */
	CHECK_STR(Meant(longer, candidates), "");
	CHECK_STR(Meant("aaaa", candidates), "aaa");
	longer[INC_NAME_MAX] = '\0';
	CHECK_STR(Meant(longer, candidates), longer);

	/* thousands of candidates, read in place (no NUL), the one meant last */
	inc_name_search_begin(&search, "SKU-09999", 9);
	for (i = 0; i < 10000; i++)
	{
		snprintf(sku, sizeof(sku), "sku_%05d....", i * 7 % 10000);
		inc_name_search_consider(&search, sku, 9);
	}
	CHECK(search.count == 10000);
	CHECK(search.fit == INC_NAME_SAME);
	CHECK(search.best == 2857);	/* 2857 * 7 = 19999 */
}

/* test_names: the tests of the file header. */
void
test_names(void)
{
	TestFits();
	TestOrder();
	TestLimits();
}
