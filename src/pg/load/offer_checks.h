/*
 * offer_checks.h
 *    The checks of an offer document being written, and its findings
 *    (offer_checks.c; docs/reference.md, Strict offers and Offer warnings).
 */
#ifndef INC_PG_OFFER_CHECKS_H
#define INC_PG_OFFER_CHECKS_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/jsonb.h"

#include "core/offer/offer.h"

/* One finding of a document: its JSON path, code, message and value. */
typedef struct PgOfferFinding
{
	char	   *path;
	char	   *code;
	char	   *message;
	char	   *value;			/* the value at path, as JSON text */
} PgOfferFinding;

/* _PG_init: define incentives.unknown_offer_fields. */
extern void pg_offer_checks_init(void);

/*
 * pg_offer_write_error: NULL when document may be written over stored
 * (the row's old document; NULL: the offer's latest stored version,
 * read when needed), else the error's message (22023); with warn, the
 * document's findings are raised as WARNINGs.
 */
extern char *pg_offer_write_error(Jsonb *document, Jsonb *stored, bool warn);

/*
 * pg_offer_findings: the PgOfferFinding list of a stored document, read
 * leniently; *valid false (err filled) when it is not a valid offer.
 */
extern List *pg_offer_findings(Jsonb *document, IncOfferError *err, bool *valid);

#endif							/* INC_PG_OFFER_CHECKS_H */
