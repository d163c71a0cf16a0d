/*
 * jsonbuf.h
 *    A growable text buffer for writing JSON (the engine's diagnostics).
 *    Memory comes from inc_alloc; the text is NUL-terminated.
 */
#ifndef INC_JSONBUF_H
#define INC_JSONBUF_H

#include "../numbers/core.h"
#include "../numbers/rational.h"

typedef struct IncJsonBuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
} IncJsonBuf;

extern void inc_json_init(IncJsonBuf *b);
/* Raw text, as is (punctuation, numbers already formatted). */
extern void inc_json_raw(IncJsonBuf *b, const char *s);
/* A JSON string literal with escapes; NULL writes null. */
extern void inc_json_string(IncJsonBuf *b, const char *s);
/* "key": (a string key followed by a colon). */
extern void inc_json_key(IncJsonBuf *b, const char *key);
/* "key":"value" (a string member; NULL value writes null). */
extern void inc_json_key_string(IncJsonBuf *b, const char *key, const char *value);

/*
 * Numbers: an exact rational rounded to scale places, trailing fraction
 * zeros dropped ("1150", "1084.745763"), or null when value is NULL; an
 * exact decimal in its shortest form.
 */
extern void inc_json_rat(IncJsonBuf *b, const IncRat *value, int scale);
extern void inc_json_dec(IncJsonBuf *b, const IncDec *value);

#endif							/* INC_JSONBUF_H */
