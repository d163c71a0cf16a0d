/*
 * jsonbuf.c
 *    Writing JSON text into a growable buffer (see jsonbuf.h).
 */
#include <stdio.h>
#include <string.h>

#include "jsonbuf.h"

static void
Reserve(IncJsonBuf *b, size_t more)
{
	if (b->len + more + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap * 2 : 256;
		char	   *data;

		while (cap < b->len + more + 1)
			cap *= 2;
		data = inc_alloc(cap);
		if (b->len)
			memcpy(data, b->data, b->len);
		b->data = data;
		b->cap = cap;
	}
}

/* inc_json_init: an empty buffer. */
void
inc_json_init(IncJsonBuf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
	Reserve(b, 0);
	b->data[0] = '\0';
}

/* inc_json_raw: append s unchanged. */
void
inc_json_raw(IncJsonBuf *b, const char *s)
{
	size_t		n = strlen(s);

	Reserve(b, n);
	memcpy(b->data + b->len, s, n + 1);
	b->len += n;
}

/* inc_json_string: append s as a JSON string literal, or null. */
void
inc_json_string(IncJsonBuf *b, const char *s)
{
	const unsigned char *p;

	if (s == NULL)
	{
		inc_json_raw(b, "null");
		return;
	}
	inc_json_raw(b, "\"");
	for (p = (const unsigned char *) s; *p; p++)
	{
		char		esc[8];

		if (*p == '"' || *p == '\\')
			snprintf(esc, sizeof(esc), "\\%c", *p);
		else if (*p < 0x20)
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
		else
		{
			esc[0] = (char) *p;
			esc[1] = '\0';
		}
		inc_json_raw(b, esc);
	}
	inc_json_raw(b, "\"");
}

/* inc_json_key: append "key": */
void
inc_json_key(IncJsonBuf *b, const char *key)
{
	inc_json_string(b, key);
	inc_json_raw(b, ":");
}

/* inc_json_key_string: "key":"value", or "key":null. */
void
inc_json_key_string(IncJsonBuf *b, const char *key, const char *value)
{
	inc_json_key(b, key);
	inc_json_string(b, value);
}

/* inc_json_rat: value rounded to scale, trailing zeros dropped, or null. */
void
inc_json_rat(IncJsonBuf *b, const IncRat *value, int scale)
{
	char		text[INC_NUM_BUF * 2];
	int			n;

	if (value == NULL)
	{
		inc_json_raw(b, "null");
		return;
	}
	n = inc_rat_format(value, scale, text, sizeof(text));
	if (strchr(text, '.'))
	{
		while (n > 0 && text[n - 1] == '0')
			text[--n] = '\0';
		if (n > 0 && text[n - 1] == '.')
			text[--n] = '\0';
	}
	inc_json_raw(b, text);
}

/* inc_json_dec: value in its shortest plain form. */
void
inc_json_dec(IncJsonBuf *b, const IncDec *value)
{
	char		text[INC_NUM_BUF];

	inc_dec_format_short(value, text, sizeof(text));
	inc_json_raw(b, text);
}
