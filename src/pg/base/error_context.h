/*
 * error_context.h
 *    The CONTEXT of an error a user meets: the caller's own frames and the
 *    extension's notes of what failed, never the frames of the extension's
 *    own routines (docs/reference.md, Error context).
 */
#ifndef INC_PG_ERROR_CONTEXT_H
#define INC_PG_ERROR_CONTEXT_H

#include "postgres.h"

/*
 * pg_error_context_trim: error_context_stack replaced by a copy without
 * the frames of the extension's routines and of the statements they run
 * (palloc'd in the current memory context).  Call it right before
 * ereport(ERROR): whoever catches the error puts the previous stack back
 * (PG_TRY, PL/pgSQL's exception blocks, the top level).  With no frame of
 * the extension's routines on the stack it changes nothing.
 */
extern void pg_error_context_trim(void);

#endif							/* INC_PG_ERROR_CONTEXT_H */
