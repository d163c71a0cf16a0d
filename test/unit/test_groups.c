/*
 * test_groups.c
 *    Unit tests of participant groups in the engine core
 *    (docs/reference.md, Participant groups): the units and aggregation
 *    keys groups.c makes from the windows, and a unit's calculation
 *    (engine.c, rules.c): the same rows for a member whether the host
 *    wants every participant or that one only, a group's aggregate in its
 *    members' diagnostics (and only the members the host lets show),
 *    properties under the aggregation key, enrollment per member, member
 *    requirements and the error position naming the transaction's own
 *    participant.
 *
 * Offers are written with single quotes and turned into JSON by swapping '
 * for ".  SKU "a" is measured in gal, and there is no conversion: a
 * transaction in drums cannot be calculated where its quantity counts.
 */
#include <stdlib.h>

#include "unit.h"
#include "../../src/core/engine/engine.h"
#include "../../src/core/engine/groups.h"

#define HEAD(key, strategy, calc, aggregation) \
	"{'offer_key':'" key "','strategy_key':'" strategy "','calculator_key':'" calc "'," \
	"'aggregation':'" aggregation "','periods':[{'key':'p','start_date':'2026-01-01','end_date':'2026-12-31'}],"
#define FILTER "{'period_key':'p','sku_keys':['a'],'transaction_type':'buy'}"
/* 3% from 100, 4% from 200 of the aggregated amount */
#define STEPPED(key, aggregation, rest) \
	HEAD(key, "stepped", "percent_of_amount", aggregation) "'incentive':{'filters':[" FILTER "]," \
	"'threshold_definition':{'type':'aggregated_amount','filters':[" FILTER "]}," \
	"'rates':[{'threshold':100,'value':3,'measure':'percent'},{'threshold':200,'value':4,'measure':'percent'}]}" \
	rest "}"

static int32_t
Day(const char *s)
{
	int32_t		d = 0;

	CHECK(inc_date_parse(s, &d));
	return d;
}

static IncDec
Dec(const char *s)
{
	IncDec		d = {0, 0};

	inc_dec_parse(s, strlen(s), &d);
	return d;
}

static IncOffer *
Offer(const char *doc)
{
	char	   *json = strdup(doc);
	char	   *q;
	IncOfferError err;
	IncOffer   *offer;

	for (q = json; *q; q++)
		if (*q == '\'')
			*q = '"';
	offer = inc_offer_parse(json, strlen(json), &err);
	if (offer == NULL)
		printf("FAIL offer: %s\n", err.message);
	CHECK(offer != NULL);
	free(json);
	return offer;
}

/* Add: a window of member in group (end NULL: open ended). */
static void
Add(IncGroups *g, const char *member, const char *group, const char *start, const char *end)
{
	inc_groups_add(g, member, strlen(member), group, strlen(group), Day(start),
				   end ? Day(end) : 0, end == NULL);
}

/* Units: members and groups joined by windows; keys in byte order; dates. */
static void
TestUnits(void)
{
	IncGroups  *g = inc_groups_create();
	IncUnit		unit;
	int			index,
				u,
				m;

	CHECK(inc_groups_count(g) == 0);
	Add(g, "r2", "north", "2026-01-01", NULL);
	Add(g, "r1", "north", "2026-01-01", NULL);
	/* a mover: south until March, then east */
	Add(g, "r9", "south", "2025-01-01", "2026-03-31");
	Add(g, "r9", "east", "2026-04-01", NULL);
	Add(g, "r8", "east", "2026-01-01", "2026-01-31");
	inc_groups_prepare(g, NULL);
	CHECK(inc_groups_count(g) == 2);

	u = inc_groups_find(g, "r1", 2, &index);
	unit = inc_groups_unit(g, u);
	CHECK(unit.nkeys == 3);
	CHECK_STR(unit.keys[0], "north");
	CHECK_STR(unit.keys[1], "r1");
	CHECK_STR(unit.keys[2], "r2");
	CHECK(index == 1);
	CHECK(unit.flags[0] == INC_KEY_GROUP && unit.flags[1] == 0);
	CHECK(inc_groups_find(g, "north", 5, &index) == u && index == 0);
	CHECK(inc_groups_find(g, "r3", 2, &index) == -1 && index == -1);

	/* south and east are one unit through r9 */
	u = inc_groups_find(g, "r9", 2, &m);
	CHECK(inc_groups_find(g, "south", 5, &index) == u);
	CHECK(inc_groups_find(g, "r8", 2, &index) == u);
	unit = inc_groups_unit(g, u);
	CHECK(unit.nkeys == 4);
	CHECK_STR(unit.keys[0], "east");
	CHECK_STR(unit.keys[3], "south");
	CHECK(inc_groups_aggregation(g, u, m, Day("2026-03-31"), true, NULL) == 3);
	CHECK(inc_groups_aggregation(g, u, m, Day("2026-04-01"), true, NULL) == 0);
	CHECK(inc_groups_aggregation(g, u, m, Day("2024-12-31"), true, NULL) == m);
	CHECK(inc_groups_aggregation(g, u, m, 0, false, NULL) == m);
	/* r8's window has ended */
	CHECK(inc_groups_aggregation(g, u, index, Day("2026-01-31"), true, NULL) == 0);
	CHECK(inc_groups_aggregation(g, u, index, Day("2026-02-01"), true, NULL) == index);
}

/* The rows and diagnostics a calculation gave. */
typedef struct Got
{
	int			nrows;
	char		rows[32][160];
	int			ndiag;
	char		diag[16][2048];
	char		diag_who[16][64];
} Got;

static void
Row(void *ctx, const IncRow *row)
{
	Got		   *g = ctx;

	if (g->nrows < 32)
		snprintf(g->rows[g->nrows++], sizeof(g->rows[0]), "%s %s %s %s %s %s",
				 row->participant_key, row->offer->offer_key, row->txn->transaction_id,
				 row->rate_key, unit_dec_text(&row->incentive_amount),
				 row->group_key ? row->group_key : "-");
}

static void
Diag(void *ctx, const IncOffer *offer, const char *participant_key, const char *group_key,
	 const char *json)
{
	Got		   *g = ctx;

	if (g->ndiag < 16)
	{
		snprintf(g->diag_who[g->ndiag], sizeof(g->diag_who[0]), "%s %s %s", participant_key,
				 offer->offer_key, group_key ? group_key : "-");
		snprintf(g->diag[g->ndiag++], sizeof(g->diag[0]), "%s", json);
	}
}

/* Props: "plan" is 150 for the group north, 50 for r1, missing elsewhere. */
static IncPropStatus
Props(void *ctx, const char *participant, const char *key, IncDec *value)
{
	(void) ctx;
	if (strcmp(key, "plan") != 0)
		return INC_PROP_MISSING;
	if (strcmp(participant, "north") == 0)
		*value = Dec("150");
	else if (strcmp(participant, "r1") == 0)
		*value = Dec("50");
	else
		return INC_PROP_MISSING;
	return INC_PROP_FOUND;
}

/* Windows: r1 and r2 enrolled from 2026-03-01; r3 not at all. */
static int
Enrolled(void *ctx, const char *participant, const char *offer, const IncWindow **out)
{
	static IncWindow window;

	(void) ctx;
	(void) offer;
	window.start_date = Day("2026-03-01");
	window.open_ended = true;
	*out = &window;
	return strcmp(participant, "r3") == 0 ? 0 : 1;
}

/*
 * The unit north = {r1, r2, r3}: r1 buys 60 and r2 90 in the group, r3 60,
 * half of it (30) in February; unit keys: north, r1, r2, r3.
 */
static const char *const Keys[] = {"north", "r1", "r2", "r3"};

static int
Txns(IncTxn *t, const char *uom)
{
	static const struct
	{
		const char *id;
		int			participant;
		const char *date;
		const char *amount;
	}			rows[] = {
		{"T1", 1, "2026-03-05", "60"},
		{"T2", 2, "2026-04-01", "90"},
		{"T3", 3, "2026-02-10", "30"},
		{"T4", 3, "2026-05-10", "30"},
	};
	int			i;

	for (i = 0; i < 4; i++)
	{
		memset(&t[i], 0, sizeof(IncTxn));
		t[i].transaction_id = rows[i].id;
		t[i].transaction_type = "buy";
		t[i].transaction_date = Day(rows[i].date);
		t[i].sku_key = "a";
		t[i].quantity = Dec("1");
		t[i].uom_key = i == 3 ? uom : "gal";
		t[i].amount = Dec(rows[i].amount);
		t[i].participant = rows[i].participant;
		t[i].aggregation = 0;	/* every window is open: north */
	}
	return 4;
}

static void
Run(IncOffer **offers, int noffers, const uint8_t *flags, bool diagnostics, Got *got,
	const char *uom)
{
	IncEngine  *e = inc_engine_create();
	IncTxn		t[4];
	IncUnit		unit = {0};
	uint8_t		f[4];
	int			i;

	for (i = 0; i < noffers; i++)
		inc_engine_add_offer(e, offers[i]);
	inc_engine_set_sku_uom(e, "a", "gal");
	inc_engine_set_enrollments(e, Enrolled, NULL);
	if (diagnostics)
		inc_engine_set_diagnostics(e, Diag, got);
	inc_engine_prepare(e);
	for (i = 0; i < 4; i++)
		f[i] = flags[i] | (i == 0 ? INC_KEY_GROUP : 0);
	unit.nkeys = 4;
	unit.pages = NULL;
	unit.keys = Keys;
	unit.flags = f;
	memset(got, 0, sizeof(*got));
	inc_engine_calculate_unit(e, &unit, t, Txns(t, uom), Props, NULL, Row, got);
}

static int
CompareRows(const void *a, const void *b)
{
	return strcmp((const char *) a, (const char *) b);
}

/* Has: does got have this row? */
static bool
Has(const Got *got, const char *row)
{
	int			i;

	for (i = 0; i < got->nrows; i++)
		if (strcmp(got->rows[i], row) == 0)
			return true;
	return false;
}

/* every participant wanted (the group itself has no transactions) */
static const uint8_t Everyone[4] = {INC_KEY_VISIBLE, INC_KEY_REPORT | INC_KEY_VISIBLE,
INC_KEY_REPORT | INC_KEY_VISIBLE, INC_KEY_REPORT | INC_KEY_VISIBLE};

/* A group offer beside a participant offer; one member wanted alone. */
static void
TestUnitRows(void)
{
	IncOffer   *o[2];
	static Got	all,
				one;
	static const uint8_t only_r2[4] = {0, INC_KEY_VISIBLE, INC_KEY_REPORT | INC_KEY_VISIBLE, 0};
	int			i,
				mine = 0;

	o[0] = Offer(STEPPED("g", "group", ""));
	o[1] = Offer(STEPPED("solo", "participant", ""));
	Run(o, 2, Everyone, false, &all, "gal");
	/* the group's 210 reaches 4% for everyone; nobody reaches 100 alone */
	CHECK(all.nrows == 4);
	CHECK(Has(&all, "r1 g T1 4_percent_greater_than_or_equal_to_200 2.40 north"));
	CHECK(Has(&all, "r2 g T2 4_percent_greater_than_or_equal_to_200 3.60 north"));
	CHECK(Has(&all, "r3 g T3 4_percent_greater_than_or_equal_to_200 1.20 north"));
	CHECK(Has(&all, "r3 g T4 4_percent_greater_than_or_equal_to_200 1.20 north"));

	Run(o, 2, only_r2, false, &one, "gal");
	for (i = 0; i < all.nrows; i++)
		if (strncmp(all.rows[i], "r2 ", 3) == 0)
			mine++;
	CHECK(one.nrows == mine && one.nrows == 1);
	qsort(one.rows, (size_t) one.nrows, sizeof(one.rows[0]), CompareRows);
	CHECK_STR(one.rows[0], "r2 g T2 4_percent_greater_than_or_equal_to_200 3.60 north");

	/* r3's unconvertible return is no concern of r2's participant offer ... */
	o[0] = Offer(HEAD("u", "stepped", "dollars_per_unit", "participant")
				 "'incentive':{'filters':[" FILTER "],'threshold_definition':{'type':'aggregated_quantity','filters':["
				 FILTER "]},'rates':[{'threshold':0,'value':1,'measure':'dollars'}]}}");
	Run(o, 1, only_r2, false, &one, "drum");
	CHECK(one.nrows == 1);
}

/* Fail data for TestPosition. */
typedef struct Failing
{
	IncOffer   *offer;
	const uint8_t *flags;
} Failing;

static char failed_participant[64];
static char failed_txn[64];
static const IncEngine *failing_engine;

static void
ObservePosition(const IncFailure *f)
{
	const char *p,
			   *t;

	(void) f;
	if (inc_engine_position(failing_engine, &p, &t))
	{
		snprintf(failed_participant, sizeof(failed_participant), "%s", p);
		snprintf(failed_txn, sizeof(failed_txn), "%s", t ? t : "-");
	}
}

static void
RunFailing(void *arg)
{
	Failing    *f = arg;
	IncEngine  *e = inc_engine_create();
	IncTxn		t[4];
	IncUnit		unit = {0};
	static Got	got;

	inc_engine_add_offer(e, f->offer);
	inc_engine_set_sku_uom(e, "a", "gal");
	inc_engine_prepare(e);
	failing_engine = e;
	unit.nkeys = 4;
	unit.pages = NULL;
	unit.keys = Keys;
	unit.flags = f->flags;
	inc_engine_calculate_unit(e, &unit, t, Txns(t, "drum"), Props, NULL, Row, &got);
}

/*
 * A group offer needs every member's figures: r2's call fails on r3's
 * unconvertible transaction.  When r3 may be shown, the message and the
 * position name r3's transaction; when it is hidden, both name only the
 * group.
 */
static void
TestPosition(void)
{
	static const uint8_t r3_visible[4] = {INC_KEY_GROUP, 0, INC_KEY_REPORT, INC_KEY_VISIBLE};
	static const uint8_t r3_hidden[4] = {INC_KEY_GROUP, 0, INC_KEY_REPORT, 0};
	Failing		f;
	IncErrKind	kind;
	char		message[512];

	f.offer = Offer(HEAD("q", "stepped", "dollars_per_unit", "group")
					"'incentive':{'filters':[" FILTER "],'threshold_definition':{'type':'aggregated_quantity','filters':["
					FILTER "]},'rates':[{'threshold':0,'value':1,'measure':'dollars'}]}}");
	f.flags = r3_visible;
	failed_participant[0] = failed_txn[0] = '\0';
	unit_fail_observer = ObservePosition;
	if (unit_expect_failure(RunFailing, &f, &kind, message, sizeof(message)))
	{
		CHECK(kind == INC_ERR_NO_CONVERSION);
		CHECK(strstr(message, "\"T4\"") != NULL);
		CHECK_STR(failed_participant, "r3");
		CHECK_STR(failed_txn, "T4");
	}

	f.flags = r3_hidden;
	failed_participant[0] = failed_txn[0] = '\0';
	if (unit_expect_failure(RunFailing, &f, &kind, message, sizeof(message)))
	{
		CHECK(kind == INC_ERR_NO_CONVERSION);
		CHECK_STR(message, "a transaction of another member of group \"north\" cannot be calculated");
		CHECK_STR(failed_participant, "north");
		CHECK_STR(failed_txn, "-");
	}
	unit_fail_observer = NULL;
}

/*
 * Properties under the aggregation key: north's 150 for every member; the
 * diagnostics show the group's figures, its members, and only those the
 * host lets show.
 */
static void
TestPropertiesAndDiagnostics(void)
{
	IncOffer   *o[1];
	static Got	got;
	static const uint8_t r1_sees_r2[4] = {0, INC_KEY_REPORT | INC_KEY_VISIBLE, INC_KEY_VISIBLE, 0};

	o[0] = Offer(HEAD("bp", "stepped", "percent_of_amount", "group")
				 "'incentive':{'filters':[" FILTER "],'threshold_definition':{'type':'property','property':{'key':'plan'}},"
				 "'rates':[{'threshold':100,'value':2,'measure':'percent'}]}}");
	Run(o, 1, Everyone, false, &got, "gal");
	CHECK(got.nrows == 4);
	CHECK(Has(&got, "r1 bp T1 2_percent_greater_than_or_equal_to_100 1.20 north"));

	o[0] = Offer(STEPPED("g", "group", ""));
	Run(o, 1, r1_sees_r2, true, &got, "gal");
	CHECK(got.nrows == 1);
	CHECK(got.ndiag == 1);
	CHECK_STR(got.diag_who[0], "r1 g north");
	CHECK(strstr(got.diag[0], "\"threshold_value\":210") != NULL);
	CHECK(strstr(got.diag[0], "\"aggregation\":{\"key\":\"north\",\"group_key\":\"north\",\"members\":["
				 "{\"participant_key\":\"r1\",\"transactions\":1,\"incentive_amount\":2.4},"
				 "{\"participant_key\":\"r2\",\"transactions\":1,\"incentive_amount\":3.6}]}") != NULL);
	if (strstr(got.diag[0], "\"members\":[{\"participant_key\":\"r1\"") == NULL)
		printf("     diagnostics: %s\n", got.diag[0]);
}

/*
 * Enrollment per member (r3 is not enrolled: its 60 does not count, the
 * group's 150 earns 3%), and a member requirement (at least 70 of one's
 * own: r1's 60 fails it and loses its row, its 60 still counted).
 */
static void
TestMemberRules(void)
{
	IncOffer   *o[1];
	static Got	got;

	o[0] = Offer(STEPPED("e", "group", ",'enrollment':'required'"));
	Run(o, 1, Everyone, true, &got, "gal");
	CHECK(got.nrows == 2);
	CHECK(Has(&got, "r1 e T1 3_percent_greater_than_or_equal_to_100 1.80 north"));
	CHECK(Has(&got, "r2 e T2 3_percent_greater_than_or_equal_to_100 2.70 north"));

	o[0] = Offer(STEPPED("m", "group", ",'enrollment':'required','requirements':[{'key':'own','type':'aggregated_amount',"
						 "'scope':'member','minimum':70,'filters':[" FILTER "]}]"));
	Run(o, 1, Everyone, true, &got, "gal");
	CHECK(got.nrows == 1);
	CHECK(Has(&got, "r2 m T2 3_percent_greater_than_or_equal_to_100 2.70 north"));
	CHECK(got.ndiag == 3);
	CHECK(strstr(got.diag[0], "\"scope\":\"member\",\"value\":null,\"met\":null,\"gap\":null,\"members\":["
				 "{\"participant_key\":\"r1\",\"value\":60,\"met\":false,\"gap\":10},"
				 "{\"participant_key\":\"r2\",\"value\":90,\"met\":true,\"gap\":0},"
				 "{\"participant_key\":\"r3\",\"value\":0,\"met\":false,\"gap\":70}]") != NULL);
	CHECK(strstr(got.diag[0], "\"windows\":[{\"participant_key\":\"r1\",\"start_date\":\"2026-03-01\"") != NULL);
	if (strstr(got.diag[0], "\"members\":[{\"participant_key\":\"r1\",\"value\"") == NULL)
		printf("     diagnostics: %s\n", got.diag[0]);
}

/*
 * TestHierarchy: groups of groups (docs/reference.md, Participant
 * hierarchies): one unit for the connected hierarchy; the untyped key (a
 * group's own key on any date, else the immediate group on the date);
 * the typed key (the first of the key and its ancestors on the date of
 * the type); a cycle stored without the table's check ends the walk.
 */
static void
TestHierarchy(void)
{
	IncGroups  *g = inc_groups_create();
	IncTxn		t;
	IncUnit		unit;
	int			u,
				loc,
				chain,
				region,
				hq,
				index;

	Add(g, "loc", "chain", "2025-01-01", NULL);
	Add(g, "chain", "region", "2026-01-01", NULL);
	Add(g, "other", "hq", "2026-06-01", NULL);
	Add(g, "hq", "region", "2025-01-01", NULL);
	Add(g, "x", "y", "2025-01-01", NULL);
	Add(g, "y", "x", "2025-01-01", NULL);	/* a cycle the table refuses */
	inc_groups_set_type(g, "chain", 5, "chain", 5);
	inc_groups_set_type(g, "region", 6, "region", 6);
	inc_groups_set_type(g, "nowhere", 7, "region", 6);	/* no window: ignored */
	inc_groups_set_type(g, "x", 1, "loop", 4);
	inc_groups_prepare(g, NULL);
	CHECK(inc_groups_count(g) == 2);
	CHECK(inc_groups_find(g, "nowhere", 7, &index) == -1);

	u = inc_groups_find(g, "loc", 3, &loc);
	CHECK(inc_groups_find(g, "chain", 5, &chain) == u);
	CHECK(inc_groups_find(g, "region", 6, &region) == u);
	CHECK(inc_groups_find(g, "hq", 2, &hq) == u);
	CHECK(inc_groups_unit(g, u).nkeys == 5);

	/* untyped: the immediate group; a group's own key, even before members */
	CHECK(inc_groups_aggregation(g, u, loc, Day("2026-03-01"), true, NULL) == chain);
	CHECK(inc_groups_aggregation(g, u, chain, Day("2026-03-01"), true, NULL) == chain);
	CHECK(inc_groups_aggregation(g, u, hq, Day("2026-02-01"), true, NULL) == hq);
	/* typed: up the ancestors on the date */
	CHECK(inc_groups_aggregation(g, u, loc, Day("2026-03-01"), true, "region") == region);
	CHECK(inc_groups_aggregation(g, u, loc, Day("2025-12-31"), true, "region") == loc);
	CHECK(inc_groups_aggregation(g, u, loc, Day("2025-12-31"), true, "chain") == chain);
	CHECK(inc_groups_aggregation(g, u, chain, Day("2026-03-01"), true, "chain") == chain);
	CHECK(inc_groups_aggregation(g, u, hq, Day("2026-02-01"), true, "region") == region);
	CHECK(inc_groups_aggregation(g, u, loc, Day("2026-03-01"), true, "district") == loc);
	CHECK(inc_groups_aggregation(g, u, loc, 0, false, "region") == loc);

	/* the unit answers for an offer with a group_type */
	unit = inc_groups_unit(g, u);
	memset(&t, 0, sizeof(t));
	t.participant = loc;
	t.aggregation = chain;
	t.transaction_date = Day("2026-03-01");
	CHECK(inc_txn_key(&unit, NULL, &t) == chain);
	CHECK(inc_txn_key(&unit, "region", &t) == region);
	t.nulls = INC_TXN_NULL_DATE;
	CHECK(inc_txn_key(&unit, "region", &t) == loc);

	/* a stored cycle: the walk ends, the key is its own */
	u = inc_groups_find(g, "y", 1, &index);
	CHECK(inc_groups_aggregation(g, u, index, Day("2026-03-01"), true, "none") == index);
	CHECK(inc_groups_aggregation(g, u, index, Day("2026-03-01"), true, "loop") != index);
}

/* Same: do keys a and b share a unit of g? */
static bool
Same(const IncGroups *g, const char *a, const char *b)
{
	int			ia,
				ib;

	return inc_groups_find(g, a, strlen(a), &ia) == inc_groups_find(g, b, strlen(b), &ib);
}

/* Rank: key's inc_groups_nest_order rank in its unit. */
static int
Rank(const IncGroups *g, const char *key)
{
	int			index;
	int			u = inc_groups_find(g, key, strlen(key), &index);

	return inc_groups_nest_order(g, u)[index];
}

/* Tiers: locations in two chains, each in its region, both regions in a national group. */
static IncGroups *
Tiers(const IncGroupLevels *levels)
{
	IncGroups  *g = inc_groups_create();

	Add(g, "loc1", "chain1", "2025-01-01", NULL);
	Add(g, "loc2", "chain2", "2025-01-01", NULL);
	Add(g, "chain1", "region1", "2025-01-01", NULL);
	Add(g, "chain2", "region2", "2025-01-01", NULL);
	Add(g, "region1", "national", "2025-01-01", NULL);
	Add(g, "region2", "national", "2025-01-01", NULL);
	/* a location that moves from chain2 into region1 directly */
	Add(g, "loc3", "chain2", "2025-01-01", "2025-12-31");
	Add(g, "loc3", "region1", "2026-01-01", NULL);
	inc_groups_set_type(g, "chain1", 6, "chain", 5);
	inc_groups_set_type(g, "chain2", 6, "chain", 5);
	inc_groups_set_type(g, "region1", 7, "region", 6);
	inc_groups_set_type(g, "region2", 7, "region", 6);
	inc_groups_set_type(g, "national", 8, "national", 8);
	inc_groups_prepare(g, levels);
	return g;
}

/*
 * Levels: a unit ties together what the offers' levels can aggregate
 * together, no more: the national group joins nothing when no offer
 * aggregates at its level.
 */
static void
TestLevels(void)
{
	const char *region[] = {"region"};
	const char *national[] = {"national"};
	const char *chain_and_region[] = {"chain", "region"};
	IncGroupLevels untyped = {true, 0, NULL};
	IncGroupLevels regions = {false, 1, region};
	IncGroupLevels nation = {false, 1, national};
	IncGroupLevels both = {false, 2, chain_and_region};
	IncGroups  *g;

	/* every level: the whole hierarchy */
	g = Tiers(NULL);
	CHECK(inc_groups_count(g) == 1);
	/* nested: each group, then its members' subtrees in key order */
	CHECK(Rank(g, "national") == 0 && Rank(g, "region1") == 1 && Rank(g, "chain1") == 2);
	CHECK(Rank(g, "loc1") == 3 && Rank(g, "region2") == 4 && Rank(g, "chain2") == 5);
	CHECK(Rank(g, "loc2") == 6 && Rank(g, "loc3") == 7);

	/* the immediate group: a chain with its locations; loc3 joins both */
	g = Tiers(&untyped);
	CHECK(Same(g, "loc1", "chain1"));
	CHECK(Same(g, "loc2", "chain2"));
	CHECK(Same(g, "loc3", "chain2") && Same(g, "loc3", "region1"));
	CHECK(!Same(g, "loc1", "loc2"));
	CHECK(!Same(g, "chain1", "region1"));
	CHECK(!Same(g, "region2", "national"));

	/* a unit of its own: rank 0 */
	CHECK(Rank(g, "national") == 0);

	/* regions: each region with its chains and locations, not the nation */
	g = Tiers(&regions);
	CHECK(Same(g, "loc1", "region1") && Same(g, "chain1", "region1"));
	CHECK(Same(g, "loc2", "region2") && Same(g, "chain2", "region2"));
	/* loc3 went from a chain of region2 to region1: both regions */
	CHECK(Same(g, "region1", "region2"));
	CHECK(!Same(g, "region1", "national"));

	/* the nation: everything */
	g = Tiers(&nation);
	CHECK(Same(g, "loc1", "national") && Same(g, "loc2", "national"));

	/* chains and regions: a region stops the walk of neither */
	g = Tiers(&both);
	CHECK(Same(g, "loc1", "region1") && Same(g, "loc2", "chain2"));
	CHECK(!Same(g, "national", "region1"));
}

/* test_groups: see the file header. */
void
test_groups(void)
{
	TestUnits();
	TestHierarchy();
	TestLevels();
	TestUnitRows();
	TestPosition();
	TestPropertiesAndDiagnostics();
	TestMemberRules();
}
