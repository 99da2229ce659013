/*
 * json.c - the JSON front end of the policy loader, for sandbox-runtime
 * settings files. jansson checks the document strictly (RFC 8259: no
 * comments, trailing commas, single quotes, raw control characters in
 * strings, NaN or leading zeros; JSON_REJECT_DUPLICATES for duplicate
 * keys) and reports a syntax error at its line and column. A valid
 * document then goes through the node tree of nodes.c like YAML, so that
 * every value keeps its position for the semantic errors (jansson keeps
 * none per value): JSON is YAML flow syntax except that libyaml refuses a
 * TAB where a token may start, so those TABs, which strict JSON allows only
 * between tokens, are replaced by spaces in a copy. docs/config.md says
 * why jansson and why this order.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "loader_int.h"

/* Offset of the first significant byte (after a UTF-8 BOM and white
 * space), or len when there is none. */
static size_t json_start(const char *data, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	return i;
}

/*
 * A copy of a JSON document with every TAB outside a string replaced by a
 * space, in *copy; NULL when there is no such TAB. The document is valid
 * JSON already, so a TAB outside a string is white space between tokens
 * and a space there means the same; libyaml counts either as one column,
 * so every position stays right. Returns 0, or -1 on ENOMEM.
 */
static int json_untab(const char *data, size_t len, char **copy)
{
	size_t i;
	bool in_str = false, esc = false, any = false;
	char *c;

	*copy = NULL;
	if (memchr(data, '\t', len) == NULL)
		return 0;
	c = malloc(len + 1);
	if (c == NULL)
		return -1;
	memcpy(c, data, len);
	c[len] = '\0';
	for (i = 0; i < len; i++) {
		if (in_str) {
			if (esc)
				esc = false;
			else if (c[i] == '\\')
				esc = true;
			else if (c[i] == '"' || c[i] == '\n')
				in_str = false;
		} else if (c[i] == '"') {
			in_str = true;
		} else if (c[i] == '\t') {
			c[i] = ' ';
			any = true;
		}
	}
	if (!any) {
		free(c);
		return 0;
	}
	*copy = c;
	return 0;
}

/*
 * Reports each comma followed only by white space and a closing '}' or
 * ']', at the comma's position (columns counted in characters), and
 * returns how many. jansson stops at the first and names the bracket
 * ("unexpected token near ']'"); this names the comma and finds them all,
 * and the loader then goes on with the node tree (libyaml's flow syntax
 * accepts them), so one run still reports every other error too.
 */
static unsigned json_trailing_commas(struct ldr *l, const char *data, size_t len)
{
	size_t i = len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0 ? 3 : 0, j;
	unsigned line = 1, col = 1, found = 0;
	bool in_str = false, esc = false;

	for (; i < len; i++) {
		unsigned char c = (unsigned char)data[i];
		if (c == '\n' || (c == '\r' && (i + 1 == len || data[i + 1] != '\n'))) {
			line++;
			col = 1;
			in_str = false; /* libyaml reports the broken string */
			continue;
		}
		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == ',') {
			for (j = i + 1; j < len && (data[j] == ' ' || data[j] == '\t' ||
						    data[j] == '\n' || data[j] == '\r');
			     j++)
				;
			if (j < len && (data[j] == '}' || data[j] == ']')) {
				ldr_error(l, (struct policy_mark){line, col},
					  "a trailing comma before '%c', expected a value after ',' "
					  "(JSON has no trailing commas)",
					  data[j]);
				found++;
			}
		}
		if ((c & 0xc0) != 0x80 && c != '\r')
			col++;
	}
	return found;
}


/*
 * The position of a jansson syntax error: jansson's column is that of the
 * last character of the token it stopped in, which error.text quotes
 * ("invalid token near 'NaN'"); point at the token's first character
 * instead, where a reader looks. Columns count characters, as libyaml's.
 */
static struct policy_mark json_error_mark(const json_error_t *e)
{
	struct policy_mark m = {e->line > 0 ? (unsigned)e->line : 1,
				e->column > 0 ? (unsigned)e->column : 1};
	const char *near = strstr(e->text, "near '");
	size_t tlen = strlen(e->text), chars = 0;

	if (near == NULL || tlen < 2 || e->text[tlen - 1] != '\'')
		return m;
	for (const char *s = near + 6; s < e->text + tlen - 1; s++)
		chars += ((unsigned char)*s & 0xc0) != 0x80;
	if (chars > 0 && chars <= m.col)
		m.col -= (unsigned)chars - 1;
	return m;
}

/* Contract in loader_int.h. */
int ldr_json_check(struct ldr *l, const char *data, size_t len, char **copy)
{
	size_t start = json_start(data, len);
	json_error_t e;
	json_t *doc;

	*copy = NULL;
	if (start == len || (data[start] != '{' && data[start] != '['))
		return 0; /* YAML */
	if (json_trailing_commas(l, data, len) == 0) {
		/* jansson reads a BOM as an invalid token: skip it (it is
		 * not a character libyaml counts in a column either). */
		size_t bom = data[0] == '\xef' ? 3 : 0;
		doc = json_loadb(data + bom, len - bom, JSON_REJECT_DUPLICATES, &e);
		if (doc == NULL) {
			ldr_error(l, json_error_mark(&e), "%s, expected valid JSON (RFC 8259)", e.text);
			return -1;
		}
		json_decref(doc);
	}
	if (json_untab(data, len, copy) != 0) {
		ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to read the policy");
		return -1;
	}
	return 0;
}
