/*
 * formmethod.c - the `_method` a request body names (formmethod.h): one
 * byte state machine per body kind, fed decoded spans in any split.
 */
#include "formmethod.h"
#include "base/hex.h"

#include <string.h>
#include <strings.h>

/* ---- a method, a name ---------------------------------------------------- */

static bool is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

void method_tok_put(struct method_tok *t, unsigned char ch)
{
	bool blank = ch == ' ' || ch == '\t';

	if (t->len == 0 && blank)
		return;
	if (t->len < METHOD_TOK_MAX)
		t->m[t->len] = !is_tchar(ch) ? '?' : ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : (char)ch;
	t->len++;
	if (!blank)
		t->end = t->len;
}

bool method_tok_end(struct method_tok *t, bool *too_long)
{
	size_t end = t->end;

	t->len = 0;
	t->end = 0;
	*too_long = end > METHOD_TOK_MAX;
	if (end == 0)
		return false;
	t->m[*too_long ? METHOD_TOK_MAX : end] = '\0';
	return true;
}

enum { NM_LEAD, NM_MATCH, NM_YES, NM_NO, NM_END };

static void name_reset(struct fm_name *nm, bool php)
{
	nm->n = 0;
	nm->st = php ? NM_LEAD : NM_MATCH;
	nm->php = php;
}

/* One decoded byte of a name: as decide.c's is_method_param() reads a
 * query name (php), or exactly in any case. */
static void name_put(struct fm_name *nm, unsigned char ch)
{
	static const char want[] = "_method";

	if (nm->st == NM_YES || nm->st == NM_NO || nm->st == NM_END)
		return;
	if (nm->st == NM_LEAD) {
		/* leading blanks (PHP), '[' and ']' (Rack 2's normalize_params,
		 * \A[\[\]]*([^\[\]]+)\]*, reads "[_method]" as _method) */
		if (ch == ' ' || ch == '[' || ch == ']')
			return;
		nm->st = NM_MATCH;
	}
	if (nm->php && ch == '\0') {
		nm->st = NM_END;
		return;
	}
	if (ch >= 'A' && ch <= 'Z')
		ch = (unsigned char)(ch - 'A' + 'a');
	if (nm->php && (ch == '.' || ch == ' '))
		ch = '_';
	if (nm->n == sizeof(want) - 1) {
		nm->st = nm->php && (ch == '[' || ch == ']') ? NM_YES : NM_NO;
		return;
	}
	if (ch != (unsigned char)want[nm->n]) {
		nm->st = NM_NO;
		return;
	}
	nm->n++;
}

static bool name_is(const struct fm_name *nm)
{
	return nm->st == NM_YES || ((nm->st == NM_MATCH || nm->st == NM_END) && nm->n == 7);
}

/* ---- judging ------------------------------------------------------------- */

enum { FM_KIND_NONE, FM_KIND_FORM, FM_KIND_MULTIPART, FM_KIND_JSON };

/* The element in fm->tok ends: judged. False when refused. */
static bool judge_tok(struct formmethod *fm)
{
	bool too_long;
	const char *rule = NULL;

	if (!method_tok_end(&fm->tok, &too_long))
		return true;
	if (fm->judge(fm->judge_arg, too_long ? "" : fm->tok.m, &rule))
		return true;
	fm->refused = true;
	fm->rule = rule != NULL ? rule : "allowedMethods";
	(void)snprintf(fm->method, sizeof(fm->method), "%s%s", fm->tok.m, too_long ? "..." : "");
	fm->where = fm->kind == FM_KIND_MULTIPART ? "the body's multipart part _method"
		    : fm->kind == FM_KIND_JSON    ? "the body's JSON key _method"
						  : "the body parameter _method";
	return false;
}

/* A decoded byte of a value: ',' ends an element. False when refused. */
static bool value_put(struct formmethod *fm, unsigned char ch)
{
	if (ch == ',')
		return judge_tok(fm);
	method_tok_put(&fm->tok, ch);
	return true;
}

/* ---- application/x-www-form-urlencoded ----------------------------------- */

enum { FORM_NAME, FORM_VALUE, FORM_SKIP };

/* A decoded byte of the current component. False when refused. */
static bool form_out(struct formmethod *fm, unsigned char ch)
{
	if (fm->st == FORM_NAME) {
		name_put(&fm->name, ch);
		return true;
	}
	return fm->st != FORM_VALUE || value_put(fm, ch);
}

/* The bytes a '%' that was no %XX held, as they were. */
static bool form_flush(struct formmethod *fm)
{
	bool ok = true;

	if (fm->pct >= 1)
		ok = form_out(fm, '%');
	if (ok && fm->pct == 2)
		ok = form_out(fm, fm->pct_hi);
	fm->pct = 0;
	return ok;
}

/* A raw byte of a component: %XX decoded as query_byte() in decide.c
 * does ('%' not followed by two hex digits is itself), '+' a space. */
static bool form_raw(struct formmethod *fm, unsigned char ch)
{
	if (fm->pct == 1 && hex_digit(ch) >= 0) {
		fm->pct = 2;
		fm->pct_hi = ch;
		return true;
	}
	if (fm->pct == 2 && hex_digit(ch) >= 0) {
		fm->pct = 0;
		return form_out(fm, (unsigned char)(hex_digit(fm->pct_hi) << 4 | hex_digit(ch)));
	}
	if (fm->pct != 0 && !form_flush(fm))
		return false;
	if (ch == '%') {
		fm->pct = 1;
		return true;
	}
	return form_out(fm, ch == '+' ? ' ' : ch);
}

static bool form_byte(struct formmethod *fm, unsigned char ch)
{
	if (ch == '&' || ch == ';') {
		bool ok = form_flush(fm) && (fm->st != FORM_VALUE || judge_tok(fm));

		fm->st = FORM_NAME;
		name_reset(&fm->name, true);
		return ok;
	}
	if (fm->st == FORM_NAME && ch == '=') {
		(void)form_flush(fm); /* a name's bytes judge nothing */
		fm->st = name_is(&fm->name) ? FORM_VALUE : FORM_SKIP;
		return true;
	}
	if (fm->st == FORM_SKIP)
		return true;
	return form_raw(fm, ch);
}

/* ---- multipart/form-data ------------------------------------------------- */

/*
 * The body is searched for the delimiter "\n--boundary" (KMP, no byte
 * kept: on a mismatch the bytes let go are the delimiter's own). The
 * CR before it ends the part's value too, so a CR is held until the next
 * byte says whether it is; a bare LF before the boundary (lenient
 * parsers) delimits as well. After a delimiter: the rest of its line,
 * then header lines to an empty one, then the part's body.
 */
enum { MP_BODY, MP_DLINE, MP_HEAD };
/* header line sub-states */
enum { H_NAME, H_TYPE, H_PWS, H_PNAME, H_VWS, H_VTOK, H_VQ, H_VQESC, H_VEND };

static const char cd_name[] = "content-disposition";

static bool part_data(struct formmethod *fm, unsigned char ch)
{
	if (!fm->named)
		return true;
	if (fm->held_cr) {
		fm->held_cr = false;
		if (!value_put(fm, '\r'))
			return false;
	}
	if (ch == '\r') {
		fm->held_cr = true;
		return true;
	}
	return value_put(fm, ch);
}

/* Whether the parameter name read is "name" (the one Content-Disposition
 * names a form field with). */
static bool pname_is_name(const struct formmethod *fm)
{
	return fm->hn == 4 && memcmp(fm->pname, "name", 4) == 0;
}

/* Whether the Content-Disposition parameter just read names the part
 * _method: name= whose value reads _method, or holds an RFC 2047 encoded
 * word ("=?utf-8?q?=5Fmethod?="): Apache Commons FileUpload's and
 * Tomcat's ParameterParser decode every parameter value so
 * (MimeUtility.decodeText()), and Spring's HiddenHttpMethodFilter then
 * reads _method from the part. Not decoded here: taken for a _method, as
 * an RFC 2231 name is (no browser or client library writes one). */
static bool value_names(const struct formmethod *fm)
{
	return pname_is_name(fm) && (name_is(&fm->name) || fm->ew == EW_WORD);
}

/*
 * A byte of a parameter value: into the name, and an encoded word looked
 * for. Every RFC 2047 decoder (MimeUtility, Python's email.header) needs
 * "=?" and, after it, "?B?" or "?Q?" (the encoding, either case); a
 * value holding both so (overlapping too: "=?q?") counts, which any word
 * a decoder reads does, so a name such as "q=?" is no encoded word (no
 * false refusal) and no decoder's way of resuming after a bad word
 * matters.
 */
static void pvalue_put(struct formmethod *fm, unsigned char ch)
{
	bool bq = ch == 'b' || ch == 'B' || ch == 'q' || ch == 'Q';

	switch ((enum fm_ew)fm->ew) {
	case EW_NONE:
	case EW_EQ:
		fm->ew = ch == '=' ? EW_EQ : fm->ew == EW_EQ && ch == '?' ? EW_QM : EW_NONE;
		break;
	case EW_QM:
		fm->ew = bq ? EW_ENC : ch == '?' ? EW_QM : EW_OPEN;
		break;
	case EW_OPEN:
		fm->ew = ch == '?' ? EW_QM : EW_OPEN;
		break;
	case EW_ENC:
		fm->ew = ch == '?' ? EW_WORD : EW_OPEN;
		break;
	case EW_WORD:
		break;
	}
	name_put(&fm->name, ch);
}

/* A byte of a header line (CR dropped; LF ended it before). */
static void head_byte(struct formmethod *fm, unsigned char ch)
{
	switch (fm->sub) {
	case H_NAME:
		/* "Content-Disposition" and ':' anywhere in the line: Rack
		 * matches it unanchored in the part's head (its 'c' occurs
		 * only first, so a mismatch restarts at 0 or 1) */
		if (fm->hn == sizeof(cd_name) - 1 && (ch == ' ' || ch == '\t'))
			return;
		if (fm->hn == sizeof(cd_name) - 1 && ch == ':') {
			fm->sub = H_TYPE;
			return;
		}
		if (fm->hn < sizeof(cd_name) - 1 && (unsigned char)cd_name[fm->hn] == (ch | 0x20))
			fm->hn++;
		else
			fm->hn = (ch | 0x20) == 'c' ? 1 : 0;
		return;
	case H_TYPE:
		if (ch == ';')
			fm->sub = H_PWS;
		return;
	case H_PWS:
	case H_PNAME:
		if (ch == ' ' || ch == '\t')
			return;
		if (ch == ';') {
			fm->sub = H_PWS;
			return;
		}
		if (fm->sub == H_PWS) {
			fm->sub = H_PNAME;
			fm->hn = 0;
		}
		if (ch == '=') {
			/* An RFC 2231 name (name*=utf-8''%5Fmethod, name*0=_met;
			 * name*1=hod): Go's Part.FormName() decodes and joins
			 * it (mime.ParseMediaType), over a plain name= too. Not
			 * decoded here: the part is taken for a _method (no
			 * browser or client library writes one). */
			if (fm->hn >= 5 && memcmp(fm->pname, "name*", 5) == 0)
				fm->named = true;
			fm->sub = H_VWS;
			fm->ew = EW_NONE;
			name_reset(&fm->name, true);
			return;
		}
		if (fm->hn < sizeof(fm->pname))
			fm->pname[fm->hn] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
		if (fm->hn < UINT8_MAX)
			fm->hn++;
		return;
	case H_VWS:
		if (ch == ' ' || ch == '\t')
			return;
		if (ch == '"') {
			fm->sub = H_VQ;
			return;
		}
		fm->sub = H_VTOK;
		/* fall through */
	case H_VTOK:
		if (ch == ';' || ch == ' ' || ch == '\t') {
			if (value_names(fm))
				fm->named = true;
			fm->sub = ch == ';' ? H_PWS : H_VEND;
			return;
		}
		pvalue_put(fm, ch);
		return;
	case H_VQ:
		if (ch == '\\') {
			fm->sub = H_VQESC;
			return;
		}
		if (ch == '"') {
			if (value_names(fm))
				fm->named = true;
			fm->sub = H_VEND;
			return;
		}
		pvalue_put(fm, ch);
		return;
	case H_VQESC:
		pvalue_put(fm, ch);
		fm->sub = H_VQ;
		return;
	case H_VEND:
		if (ch == ';')
			fm->sub = H_PWS;
		return;
	default:
		return;
	}
}

/* A header line ended (its LF). A Content-Disposition may go on in a
 * folded line (one that starts with a blank: Rack reads it so). */
static void head_line_end(struct formmethod *fm)
{
	if (fm->sub == H_VTOK) {
		if (value_names(fm))
			fm->named = true;
		fm->sub = H_VEND;
	}
	fm->fold = fm->sub != H_NAME;
	if (!fm->fold)
		fm->hn = 0;
}

/* The first byte of a header line: a fold goes on, else a new field. */
static void head_line_start(struct formmethod *fm, unsigned char ch)
{
	if (fm->fold && (ch == ' ' || ch == '\t'))
		return;
	fm->sub = H_NAME;
	fm->hn = 0;
}

/*
 * The part's head read raw (CR and LF too) as Rack reads a part's name
 * with regular expressions: Rack 2's `Content-Disposition:[^:]*;\s*name=
 * ("..."|token)` takes the last `; name=` before a ':', inside another
 * parameter's quotes or in a line that is no field (`X; name=_method`);
 * every Rack takes `Content-ID:\s*(...)` (Rack 2's \s crosses a line
 * end) as the name of a part it finds none for. Each occurrence is read
 * (a superset: a head that names _method in any of them is the part
 * _method); a new one found while a value is read starts over (a value
 * holding another "name=" or "content-id:" reads no _method).
 */
enum { RV_NONE, RV_START, RV_TOK, RV_Q, RV_QESC, RV_CID_LEAD, RV_CID };

static const char cid_name[] = "content-id:";

/* A byte of Rack's token ([^\s()<>,;:\\"/\[\]?=]). */
static bool rack_token(unsigned char ch)
{
	return ch > ' ' && ch != 0x7f && strchr("()<>,;:\\\"/[]?=", ch) == NULL;
}

static void raw_value_end(struct formmethod *fm)
{
	if (name_is(&fm->rname))
		fm->named = true;
	fm->rv = RV_NONE;
}

static void raw_value_byte(struct formmethod *fm, unsigned char ch)
{
	switch (fm->rv) {
	case RV_START:
		if (ch == '"') {
			fm->rv = RV_Q;
			return;
		}
		if (!rack_token(ch)) {
			fm->rv = RV_NONE;
			return;
		}
		fm->rv = RV_TOK;
		/* fall through */
	case RV_TOK:
		if (rack_token(ch))
			name_put(&fm->rname, ch);
		else
			raw_value_end(fm);
		return;
	case RV_Q:
		if (ch == '\\')
			fm->rv = RV_QESC;
		else if (ch == '"')
			raw_value_end(fm);
		else
			name_put(&fm->rname, ch);
		return;
	case RV_QESC:
		name_put(&fm->rname, ch);
		fm->rv = RV_Q;
		return;
	case RV_CID_LEAD:
		if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')
			return;
		fm->rv = RV_CID;
		/* fall through */
	case RV_CID:
		if (ch == '\r' || ch == '\n')
			raw_value_end(fm);
		else
			name_put(&fm->rname, ch);
		return;
	default:
		return;
	}
}

static void raw_head_byte(struct formmethod *fm, unsigned char ch)
{
	unsigned char lc = ch >= 'A' && ch <= 'Z' ? (unsigned char)(ch - 'A' + 'a') : ch;

	raw_value_byte(fm, ch);
	/* `; name=` */
	if (ch == ';') {
		fm->rsep = 1;
		fm->rn = 0;
	} else if (fm->rsep == 1 && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')) {
		/* \s* */
	} else if (fm->rsep != 0 && lc == (unsigned char)"name="[fm->rn]) {
		fm->rsep = 2;
		if (++fm->rn == 5) {
			fm->rsep = 0;
			fm->rn = 0;
			fm->rv = RV_START;
			name_reset(&fm->rname, true);
		}
	} else {
		fm->rsep = 0;
		fm->rn = 0;
	}
	/* `Content-ID:`, anywhere (its 'c' occurs only first) */
	if (lc == (unsigned char)cid_name[fm->ri]) {
		if (++fm->ri == sizeof(cid_name) - 1) {
			fm->ri = 0;
			fm->rv = RV_CID_LEAD;
			name_reset(&fm->rname, true);
		}
	} else {
		fm->ri = lc == 'c' ? 1 : 0;
	}
}

static bool mp_delimiter(struct formmethod *fm)
{
	bool ok = true;

	if (fm->named) {
		fm->held_cr = false; /* the delimiter's */
		ok = judge_tok(fm);
	}
	fm->named = false;
	fm->st = MP_DLINE;
	return ok;
}

static bool mp_byte(struct formmethod *fm, unsigned char ch)
{
	if (fm->st == MP_DLINE) {
		if (ch == '\n') {
			fm->st = MP_HEAD;
			fm->sub = H_NAME;
			fm->hn = 0;
			fm->fold = false;
			fm->u = 0; /* bytes of the header line */
			fm->rsep = fm->rn = fm->ri = 0;
			fm->rv = RV_NONE;
		}
		return true;
	}
	if (fm->st == MP_HEAD) {
		raw_head_byte(fm, ch);
		if (ch == '\r')
			return true;
		if (ch == '\n') {
			if (fm->u == 0) {
				fm->st = MP_BODY;
				fm->j = 0;
				fm->tok.len = fm->tok.end = 0;
				return true;
			}
			head_line_end(fm);
			fm->u = 0;
			return true;
		}
		if (fm->u == 0)
			head_line_start(fm, ch);
		fm->fold = false;
		fm->u = 1;
		head_byte(fm, ch);
		return true;
	}
	/* MP_BODY: the delimiter, or the part's data */
	while (fm->j > 0 && (unsigned char)fm->delim[fm->j] != ch) {
		uint8_t k = fm->fail[fm->j - 1];

		for (uint8_t i = 0; i < fm->j - k; i++)
			if (!part_data(fm, (unsigned char)fm->delim[i]))
				return false;
		fm->j = k;
	}
	if ((unsigned char)fm->delim[fm->j] == ch) {
		if (++fm->j == fm->plen) {
			fm->j = 0;
			return mp_delimiter(fm);
		}
		return true;
	}
	return part_data(fm, ch);
}

/* A byte RFC 2046 allows in a boundary (bchars), but ',' (PHP and Rack
 * end the boundary there) and a blank outside quotes (PHP and Rack keep
 * it, up to the ';'). */
static bool is_bchar(unsigned char ch, bool quoted)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch != '\0' && strchr("'()+_-./:=?", ch) != NULL) || (quoted && ch == ' ');
}

/*
 * The boundary parameter of a multipart Content-Type ct[0..len) (its
 * parameters from i) into fm->delim (after "\n--"). False when there is
 * none, it is too long, or the frameworks could read it differently:
 * PHP takes the first "boundary" in the value (in that case, else in any
 * case) and the next '=', Rack the last "boundary=" in any case
 * (`.*boundary=`); both end the value at ',' or ';' (Rack at '"' too)
 * and keep blanks. So the parameter must be the one both find, its
 * value right after the '=', of bchars only (quoted: blanks too),
 * followed by the end or a ';'. And there must be no RFC 2231 one
 * (boundary*=utf-8''B, boundary*0=B): Go's mime.ParseMediaType reads it
 * over a plain boundary= (the one PHP and Rack read), so Go's
 * r.FormValue("_method") found the parts of another boundary.
 */
static bool mp_boundary(struct formmethod *fm, const char *ct, size_t len, size_t i)
{
	size_t n = 0, php = len, php_any = len, rack = 0;

	for (size_t k = 0; k + 8 <= len; k++) {
		if (strncasecmp(ct + k, "boundary", 8) != 0)
			continue;
		if (k + 8 < len && ct[k + 8] == '*')
			return false;
		if (php == len && memcmp(ct + k, "boundary", 8) == 0)
			php = k;
		if (php_any == len)
			php_any = k;
		if (k + 8 < len && ct[k + 8] == '=')
			rack++;
	}
	if (php == len)
		php = php_any;
	if (rack != 1)
		return false;
	while (i < len) {
		size_t from;
		bool quoted;

		while (i < len && ct[i] != ';')
			i++;
		if (i++ >= len)
			return false;
		while (i < len && (ct[i] == ' ' || ct[i] == '\t'))
			i++;
		from = i;
		while (i < len && ct[i] != '=' && ct[i] != ';')
			i++;
		if (i >= len || ct[i] != '=' || i - from != 8 || strncasecmp(ct + from, "boundary", 8) != 0)
			continue;
		if (from != php)
			return false;
		i++;
		quoted = i < len && ct[i] == '"';
		for (i += quoted; i < len && !(quoted ? ct[i] == '"' : ct[i] == ';'); i++) {
			if (n == FM_BOUNDARY_MAX || !is_bchar((unsigned char)ct[i], quoted))
				return false;
			fm->delim[3 + n++] = ct[i];
		}
		if (quoted) {
			if (i++ >= len)
				return false; /* no closing quote */
			while (i < len && (ct[i] == ' ' || ct[i] == '\t'))
				i++;
			if (i < len && ct[i] != ';')
				return false;
		}
		if (n == 0)
			return false;
		memcpy(fm->delim, "\n--", 3);
		fm->plen = (uint8_t)(3 + n);
		/* KMP failure table: fail[q] is the longest proper prefix of
		 * delim[0..q] that is also its suffix. */
		fm->fail[0] = 0;
		for (uint8_t q = 1, k = 0; q < fm->plen; q++) {
			while (k > 0 && fm->delim[q] != fm->delim[k])
				k = fm->fail[k - 1];
			if (fm->delim[q] == fm->delim[k])
				k++;
			fm->fail[q] = k;
		}
		return true;
	}
	return false;
}

/* ---- JSON ---------------------------------------------------------------- */

/*
 * No stack: a string is a key when the next byte that is no blank after
 * it is ':'. A key that reads _method makes the value after the ':' the
 * one judged: a string, or the strings of an array (directly in it).
 */
enum { J_OUT, J_STR, J_AFTER_KEY, J_VALUE };
/* string sub-states */
enum { JS_CHAR, JS_ESC, JS_U };

static bool json_blank(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* A decoded byte of a string. */
static bool json_str_out(struct formmethod *fm, unsigned char ch)
{
	name_put(&fm->name, ch);
	return !fm->judging || value_put(fm, ch);
}

static bool json_out_byte(struct formmethod *fm, unsigned char ch);
static bool json_unreadable(struct formmethod *fm, const char *where);

static bool json_byte(struct formmethod *fm, unsigned char ch)
{
	/* A NUL byte: JSON in UTF-8 holds none (a control byte is escaped
	 * in a string, and none may stand outside one), and UTF-16 or
	 * UTF-32 of any ASCII character holds one. Jackson and Python's
	 * json.loads() of bytes (Flask's get_json()) guess those from the
	 * body's first bytes, with no charset: "_\0m\0..." is their _method. */
	if (ch == '\0')
		return json_unreadable(fm, "the body's JSON in UTF-16 or UTF-32 (a NUL byte: its encoding guessed from its "
					   "first bytes, as Jackson and Python's json read it)");
	switch (fm->st) {
	case J_STR:
		if (fm->sub == JS_ESC) {
			static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
			const char *p = ch != '\0' ? strchr(from, ch) : NULL;

			if (ch == 'u') {
				fm->sub = JS_U;
				fm->u = 0;
				fm->un = 0;
				return true;
			}
			fm->sub = JS_CHAR;
			return json_str_out(fm, p != NULL ? (unsigned char)to[p - from] : ch);
		}
		if (fm->sub == JS_U) {
			int h = hex_digit(ch);

			if (h < 0) { /* malformed: what came read as it is */
				fm->sub = JS_CHAR;
				return json_str_out(fm, '?') && json_byte(fm, ch);
			}
			fm->u = fm->u << 4 | (uint32_t)h;
			if (++fm->un < 4)
				return true;
			fm->sub = JS_CHAR;
			/* beyond ASCII no method byte, and never a name's */
			return json_str_out(fm, fm->u < 0x80 ? (unsigned char)fm->u : 0x80);
		}
		if (ch == '\\') {
			fm->sub = JS_ESC;
			return true;
		}
		if (ch != '"')
			return json_str_out(fm, ch);
		/* the string ends */
		if (fm->judging && !judge_tok(fm))
			return false;
		fm->judging = false;
		fm->st = name_is(&fm->name) ? J_AFTER_KEY : J_OUT;
		return true;
	case J_AFTER_KEY:
		if (json_blank(ch))
			return true;
		if (ch == ':') {
			/* a _method key inside a _method array's object keeps
			 * the array's depth (a reset lost the strings after it) */
			fm->st = J_VALUE;
			return true;
		}
		fm->st = J_OUT;
		return json_out_byte(fm, ch);
	case J_VALUE:
		if (json_blank(ch))
			return true;
		if (ch == '[' && fm->depth == 0) {
			fm->depth = 1;
			fm->st = J_OUT;
			return true;
		}
		fm->st = J_OUT;
		if (ch == '"') {
			fm->st = J_STR;
			fm->sub = JS_CHAR;
			fm->judging = true;
			fm->tok.len = fm->tok.end = 0;
			name_reset(&fm->name, false);
			return true;
		}
		return json_out_byte(fm, ch);
	default:
		return json_out_byte(fm, ch);
	}
}

/* A JSON body the reader cannot follow as the server will (where says
 * how): judged as a method too long for any rule, so refused where a
 * method list applies. */
static bool json_unreadable(struct formmethod *fm, const char *where)
{
	const char *rule = NULL;

	if (fm->judge(fm->judge_arg, "", &rule))
		return true;
	fm->refused = true;
	fm->rule = rule != NULL ? rule : "allowedMethods";
	(void)snprintf(fm->method, sizeof(fm->method), "%s", "?");
	fm->where = where;
	return false;
}

/*
 * A _method array value nested deeper than fm->depth counts: where it
 * ends is lost, and a string after it in the array (which a framework
 * taking an array's last element reads) would go unjudged, so it is
 * refused, judged as a method too long for any rule.
 */
static bool json_too_deep(struct formmethod *fm)
{
	return json_unreadable(fm, "the body's JSON key _method (an array value nested deeper than the proxy follows)");
}

/* A byte outside any string (fm->depth > 0: inside a _method key's
 * array value, depth its nesting). Every string in that value is
 * judged, nested ones and object keys too (a _method array holds method
 * names; a framework taking one element may take any). */
static bool json_out_byte(struct formmethod *fm, unsigned char ch)
{
	if (ch == '"') {
		fm->st = J_STR;
		fm->sub = JS_CHAR;
		fm->judging = fm->depth > 0;
		fm->tok.len = fm->tok.end = 0;
		name_reset(&fm->name, false);
		return true;
	}
	if (fm->depth > 0) {
		if (ch == '[' || ch == '{') {
			if (fm->depth == UINT8_MAX)
				return json_too_deep(fm);
			fm->depth++;
		} else if (ch == ']' || ch == '}') {
			fm->depth--;
		}
	}
	return true;
}

/* ---- the body ------------------------------------------------------------ */

/* Whether the Content-Type ct[0..n) names JSON as Laravel's isJson()
 * tells it: the whole value (parameters too) holds "/json" or "+json". */
static bool is_json_type(const char *mt, size_t n)
{
	for (size_t i = 0; i + 5 <= n; i++)
		if ((mt[i] == '/' || mt[i] == '+') && strncasecmp(mt + i + 1, "json", 4) == 0)
			return true;
	return false;
}

/* Charsets whose bytes 0x20-0x7e are ASCII's wherever a name can start
 * (single bytes, or multibyte ones whose ASCII bytes stand for
 * themselves); '*': digits follow. The names servers write too (an
 * inject host's answer is refused in any other, exchange.c): libmagic's
 * "binary" (PHP's finfo, `file -i`: bytes as they are), Java's
 * "ISO8859_1" and "MS932", Python's "latin-1" and "cp932", glibc's
 * "ANSI_X3.4-1968" (the C locale's), the Thai and Korean Windows ones. */
static const char *const ascii_charsets[] = {
	"utf-8",       "utf8",       "us-ascii",   "ascii",          "iso-8859-*", "iso8859-*",      "iso_8859-*",
	"iso8859_*",   "latin1",     "latin-1",    "windows-125*",   "cp125*",     "shift_jis",      "windows-31j",
	"ms932",       "cp932",      "euc-jp",     "euc-kr",         "cp949",      "ks_c_5601-1987", "gbk",
	"gb2312",      "gb18030",    "big5",       "koi8-r",         "koi8-u",     "windows-874",    "tis-620",
	"binary",      "ansi_x3.4-1968",
};

static bool ascii_charset(const char *v, size_t n)
{
	for (size_t i = 0; i < sizeof(ascii_charsets) / sizeof(ascii_charsets[0]); i++) {
		size_t k = strlen(ascii_charsets[i]);
		bool prefix = ascii_charsets[i][k - 1] == '*'; /* then digits */

		k -= prefix;

		if ((prefix ? n > k : n == k) && strncasecmp(v, ascii_charsets[i], k) == 0) {
			for (size_t j = k; j < n; j++)
				if (v[j] < '0' || v[j] > '9')
					return false;
			return true;
		}
	}
	return false;
}

/*
 * Whether every charset ct[0..len) names is one of ascii_charsets: each
 * "charset" (any case, anywhere: Tomcat's older reading looks for
 * "charset=" in the whole value) followed by '=' (blanks around it), its
 * value quoted or to ';', ',' or a blank; and no RFC 2231 "charset*"
 * (Django reads one as the charset). Tomcat decodes a form's and a
 * multipart head's bytes with it, Express's body-parser a JSON body's:
 * in UTF-16, EBCDIC or ISO-2022-JP the bytes of "_method" are not
 * ASCII's, and the reader would not see it.
 */
static bool charsets_ascii(const char *ct, size_t len)
{
	for (size_t k = 0; k + 7 <= len; k++) {
		size_t i = k + 7, from;

		if (strncasecmp(ct + k, "charset", 7) != 0)
			continue;
		/* an RFC 2231 one (charset*=utf-8''utf-16, charset*0=):
		 * Django's parse_header_parameters() reads it as charset and
		 * decodes the form with it; not decoded here, so refused */
		if (i < len && ct[i] == '*')
			return false;
		while (i < len && (ct[i] == ' ' || ct[i] == '\t'))
			i++;
		if (i >= len || ct[i] != '=')
			continue;
		i++;
		while (i < len && (ct[i] == ' ' || ct[i] == '\t' || ct[i] == '"'))
			i++;
		from = i;
		while (i < len && ct[i] != ';' && ct[i] != ',' && ct[i] != ' ' && ct[i] != '\t' && ct[i] != '"')
			i++;
		if (!ascii_charset(ct + from, i - from))
			return false;
	}
	return true;
}

bool formmethod_charsets_ascii(const char *ct, size_t len)
{
	return charsets_ascii(ct, len);
}

size_t formmethod_accept_narrow(const char *v, size_t len, char *out)
{
	size_t i = 0, o = 0;

	while (i < len) {
		/* a segment: v[i] (the start, or a ';' or ',') and what
		 * follows to the next ';' or ',' outside a quoted string */
		size_t j = i + 1;
		bool q = v[i] == '"', esc = false;

		for (; j < len; j++) {
			if (q) {
				if (esc)
					esc = false;
				else if (v[j] == '\\')
					esc = true;
				else if (v[j] == '"')
					q = false;
			} else if (v[j] == '"') {
				q = true;
			} else if (v[j] == ';' || v[j] == ',') {
				break;
			}
		}
		if (!(v[i] == ';' && !charsets_ascii(v + i, j - i))) {
			memmove(out + o, v + i, j - i);
			o += j - i;
		}
		i = j;
	}
	return o;
}

enum fm_begin formmethod_begin(struct formmethod *fm, const char *ct, size_t ctlen, fm_judge_fn judge,
			       const void *judge_arg)
{
	size_t from = 0, to;

	memset(fm, 0, sizeof(*fm));
	fm->judge = judge;
	fm->judge_arg = judge_arg;
	if (ct != NULL) {
		while (from < ctlen && (ct[from] == ' ' || ct[from] == '\t'))
			from++;
		to = from;
		/* the media type ends as PHP's SAPI and Rack's media_type end
		 * it: at ';', ',' or a blank */
		while (to < ctlen && ct[to] != ';' && ct[to] != ',' && ct[to] != ' ' && ct[to] != '\t')
			to++;
	}
	/* a media type that begins so is a form too: Undertow (Spring Boot's,
	 * WildFly's, Quarkus') and Vert.x take a form by a prefix of the
	 * Content-Type (startsWith), so application/x-www-form-urlencodedX
	 * is one to them */
	if (ct == NULL || to == from ||
	    (to - from >= 33 && strncasecmp(ct + from, "application/x-www-form-urlencoded", 33) == 0)) {
		if (ct != NULL && !charsets_ascii(ct, ctlen))
			return FM_CHARSET;
		fm->kind = FM_KIND_FORM;
		fm->st = FORM_NAME;
		name_reset(&fm->name, true);
		return FM_ON;
	}
	/* every multipart type: Rack reads multipart/mixed and
	 * multipart/related for a _method as well (parseable_data?), and
	 * Spring's multipart resolver takes any multipart/ */
	if (to - from > 10 && strncasecmp(ct + from, "multipart/", 10) == 0) {
		if (!charsets_ascii(ct, ctlen))
			return FM_CHARSET;
		if (!mp_boundary(fm, ct, ctlen, to))
			return FM_UNREADABLE;
		fm->kind = FM_KIND_MULTIPART;
		fm->st = MP_BODY;
		fm->j = 1; /* a body may begin with the boundary line: its "\n" is taken as read */
		return FM_ON;
	}
	/* a JSON body in UTF-16 or UTF-32 (charset=utf-16le): Express's
	 * body-parser decodes any utf-* charset before JSON.parse, so a
	 * method-override reading req.body._method finds a key whose bytes
	 * are not "_method"'s */
	if (is_json_type(ct, ctlen)) {
		if (!charsets_ascii(ct, ctlen))
			return FM_CHARSET;
		fm->kind = FM_KIND_JSON;
		fm->st = J_OUT;
		return FM_ON;
	}
	return FM_OFF;
}

void formmethod_off(struct formmethod *fm)
{
	fm->kind = FM_KIND_NONE;
	fm->refused = false;
}

bool formmethod_on(const struct formmethod *fm)
{
	return fm->kind != FM_KIND_NONE;
}

bool formmethod_feed(struct formmethod *fm, const char *data, size_t len)
{
	const unsigned char *p = (const unsigned char *)data;
	size_t i;

	if (fm->refused)
		return false;
	switch (fm->kind) {
	case FM_KIND_FORM:
		for (i = 0; i < len; i++)
			if (!form_byte(fm, p[i]))
				return false;
		return true;
	case FM_KIND_MULTIPART:
		for (i = 0; i < len; i++)
			if (!mp_byte(fm, p[i]))
				return false;
		return true;
	case FM_KIND_JSON:
		for (i = 0; i < len; i++)
			if (!json_byte(fm, p[i]))
				return false;
		return true;
	default:
		return true;
	}
}

int formmethod_sink(void *arg, const char *data, size_t len)
{
	(void)formmethod_feed(arg, data, len);
	return 0;
}

bool formmethod_end(struct formmethod *fm)
{
	if (fm->refused)
		return false;
	/* A form's last value ends with the body. A multipart part or a
	 * JSON string cut short has no value a parser would take. */
	if (fm->kind == FM_KIND_FORM && fm->st == FORM_VALUE)
		return form_flush(fm) && judge_tok(fm);
	return true;
}

const char *formmethod_refused(const struct formmethod *fm, const char **rule, const char **where)
{
	if (!fm->refused)
		return NULL;
	*rule = fm->rule;
	*where = fm->where;
	return fm->method;
}
