/*
 * ttyfilter.c - what the command writes to its terminal, as the user's
 * terminal may see it.
 *
 * The command's terminal is a pseudo-terminal of passavant's (ttyrelay.c);
 * what it writes there reaches the user's terminal through this filter.
 * A terminal does more than draw: OSC 52 sets (and reads) the clipboard
 * the user pastes from next, OSC 1337/5113 and kitty's APC graphics write
 * or read files on the host, DCS passes through tmux to the terminal
 * behind it, a title report (CSI 21 t) or DECRQSS types text the command
 * chose into whatever reads the terminal next, ESC % @ and S8C1T change
 * how later bytes are read, KAM locks the keyboard and SRM echoes keys
 * as the terminal reads them (round 32 of the
 * attack, "Not closed"; docs/run.md "Terminal").
 *
 * The rule is an allowlist, built so that the user's terminal can never
 * read our output other than we do: it only ever receives
 *   - text: printable ASCII, and (UTF-8) well-formed characters from
 *     U+00A0 up; a malformed byte becomes '?', a C1 control (U+0080 to
 *     U+009F, or a byte 0x80-0x9F in 8-bit mode) is read as the 7-bit
 *     sequence it stands for; when the terminal may read either (no
 *     locale), no byte 0x80-0x9F is sent: a character holding one is '?';
 *     when TERM names a terminal that reads UTF-8 only (kitty, tmux, ...:
 *     SBX_TTYF_UTF8_ONLY), such a character passes whole, in text and
 *     in a title, no CAN after it (round 40); under tmux
 *     (SBX_TTYF_UTF8_MUX) whole in text, but in a title '?' as in UTF-8
 *     mode: tmux's set-titles passes the title on, as it is, to a
 *     terminal TERM does not name (review of round 40);
 *   - BEL, BS, HT, LF, VT, FF, CR, SO, SI; in UTF-8, CAN after a
 *     character holding a byte a terminal in 8-bit mode reads as the
 *     start of a sequence (utf8_c1(): the locale may not be the
 *     terminal's);
 *   - whole escape sequences from a short list, each re-emitted only once
 *     complete: the screen's own (cursor, erase, scroll, SGR, modes),
 *     the window title (OSC 0/1/2, printable), the colour
 *     queries (OSC 4/10-19 with "?"), charset designations of ASCII, DEC
 *     graphics and UK; modes only those we know (modes_known()), queries,
 *     report modes and what keys send (the keypad, kitty's flags,
 *     XTMODKEYS: key_mode()) only while their answers reach the command
 *     (f->answers; report and key modes set before are sent once it is
 *     set, and sbx_ttyf_withdraw() turns them off when the keys are no
 *     longer read).
 * Everything else, whole sequences included, is dropped: a sequence is
 * never sent in part, so the terminal is in its ground state between any
 * two things we send, whatever the command wrote (an unterminated string,
 * a stray ESC, a sequence split over reads).
 *
 * What the command changed on the screen's modes (the alternate screen,
 * mouse and focus reports, bracketed paste, a hidden cursor, the keypad,
 * a scroll region, kitty's keyboard flags, the charsets and SO, tab
 * stops, insert mode; what a saved cursor would restore) is noted, and
 * sbx_ttyf_reset() gives the bytes that put it back when the command has
 * ended, as `reset` would, without clearing the screen;
 * the user's window title is pushed before the command's first and
 * popped at the end.
 *
 * Pure code: no allocation, no system call (the relay runs in a process
 * cloned from a threaded parent).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sandbox/sbx_int.h"

enum ttyf_state {
	TTYF_GROUND,
	TTYF_ESC,     /* after ESC: intermediates, a final or an introducer */
	TTYF_CSI,     /* ESC [ ... collecting to the final byte */
	TTYF_OSC,     /* ESC ] ... to BEL or ST */
	TTYF_OSC_ESC, /* ESC inside an OSC: ST if '\' follows */
	TTYF_STR,     /* DCS, SOS, PM, APC: dropped to ST */
	TTYF_STR_ESC, /* ESC inside one of those */
};

/* The DEC private modes whose change outlasts the command (the bit each
 * gets in f->dec_set / f->dec_val: 64 at most), and their defaults.
 * sbx_ttyf_reset() puts them back from the last to the first: the
 * alternate screen (1049) before the modes listed ahead of it. These, and
 * the few in dec_plain[], are the only DEC modes a command may set or
 * reset: any other (DECCOLM's 132 columns, xterm's logging to a file
 * (46), the backarrow key's code (67), the Tektronix screen (38), ...)
 * drops the sequence it is in. The modes that change what the terminal
 * sends (the reports: mouse, focus, colour scheme and resize, 9,
 * 1000-1004, 2031, 2048; alternate scroll, 1007; bracketed paste, 2004;
 * what keys send: the cursor keys, 1, the keypad, 66, Meta and Delete,
 * 1034, 1036, 1037, 1039) pass only while the relay reads the keys, as
 * queries do, and are put back at the end: what they send goes to the
 * command. Set while the relay reads no keys (output only, a run in the
 * background, a pipeline), they are noted but withheld (report_mode()):
 * before (round 37), a click or a change of focus was typed into the
 * user's shell meanwhile, read as keys (ESC [ I, ESC [ M and three
 * bytes), and the shell's or the pager's keys came in the command's
 * encoding; the ones on are sent when the relay takes the keys (a run
 * brought to the foreground). */
static const struct {
	unsigned mode;
	bool on; /* the terminal's default */
} dec_modes[] = {
	{9, false},    {69, false},   {2026, false}, {8, true},     {2031, false}, {2048, false},
	{1, false},    {5, false},    {6, false},    {7, true},     {25, true},    {47, false},
	{66, false},   {1000, false}, {1001, false}, {1002, false}, {1003, false}, {1004, false},
	{1005, false}, {1006, false}, {1015, false}, {1016, false}, {1047, false}, {1049, false},
	{2004, false}, {1034, false}, {1036, false}, {1037, false}, {1039, false}, {1007, false},
};
#define N_DEC_MODES (sizeof(dec_modes) / sizeof(dec_modes[0]))

/* Whether DEC mode v makes the terminal send input the user did not
 * type (a report, or keys for the wheel), or changes what a paste or a
 * key sends: withheld while no keys are read. */
static bool report_mode(unsigned v)
{
	return v == 1 || v == 9 || v == 66 || (v >= 1000 && v <= 1004) || v == 1007 || v == 1034 ||
	       v == 1036 || v == 1037 || v == 1039 || v == 2004 || v == 2031 || v == 2048;
}

/* Whether DEC mode v has the terminal send what the user did not type
 * (mouse, focus, the wheel's keys, colour scheme, resize): one in flight
 * may come after the command's end. */
static bool reports(unsigned v)
{
	return v == 9 || (v >= 1000 && v <= 1004) || v == 1007 || v == 2031 || v == 2048;
}

/*
 * Unless told before (a SIGTSTP, sbx_tty_pause()), the relay sees the
 * keys lost only after the shell has taken the terminal, and often after
 * its prompt has set its own modes: bracketed
 * paste (readline, zsh, fish), the cursor keys' and keypad's application
 * mode (zsh's and readline's keypad_xmit). Those are left as they are (a
 * `?2004 l` now would turn off the shell's own, and a multi-line paste
 * would run line by line); the shell reads its keys in either form, and
 * they are sent again at fg with the rest. What a shell does not set,
 * and does not read (mouse, focus and the other reports, Meta and Delete,
 * kitty's flags, modifyOtherKeys), goes off.
 */
static bool shell_sets(unsigned mode)
{
	return mode == 1 || mode == 66 || mode == 2004;
}

/* DEC modes passed unnoted: what the screen looks like only (smooth
 * scroll, a blinking cursor, scroll to the bottom on output or on a key),
 * the cursor saved (1048), VT52 left (2, set only: csi_allowed()). */
static const unsigned dec_plain[] = {2, 4, 12, 1010, 1011, 1048};
#define N_DEC_PLAIN (sizeof(dec_plain) / sizeof(dec_plain[0]))

/* The ANSI modes that outlast the command: IRM (4: insert), LNM (20: LF
 * as CR LF); off by default. KAM and SRM are never set (csi_allowed()). */
static const unsigned ansi_modes[] = {4, 20};
#define N_ANSI_MODES (sizeof(ansi_modes) / sizeof(ansi_modes[0]))

void sbx_ttyf_init(struct sbx_ttyf *f, int cs, bool answers)
{
	memset(f, 0, sizeof(*f));
	f->cs = cs;
	f->answers = answers;
	f->state = TTYF_GROUND;
}

static void put(unsigned char *out, size_t *o, const void *p, size_t n)
{
	memcpy(out + *o, p, n);
	*o += n;
}

/* Appends c to the sequence being held; past the bound it is dropped
 * whole when it ends. */
static void hold(struct sbx_ttyf *f, unsigned char c)
{
	if (f->n_seq < sizeof(f->seq))
		f->seq[f->n_seq++] = c;
	else
		f->over = true;
}

static void to_ground(struct sbx_ttyf *f)
{
	f->state = TTYF_GROUND;
	f->n_seq = 0;
	f->over = false;
	f->bad = false;
	f->inter = false;
}

/* A new escape sequence (ESC, or a C1 control standing for one). */
static void start_esc(struct sbx_ttyf *f)
{
	to_ground(f);
	f->state = TTYF_ESC;
	hold(f, 0x1b);
}

/* The numbers of a CSI's parameters (digits and ';'), one by one: the
 * next into *v, false at the end. ':' sub-parameters are skipped. */
static bool next_param(const unsigned char **p, const unsigned char *end, unsigned *v)
{
	unsigned n = 0;

	if (*p > end)
		return false;
	while (*p < end && **p >= '0' && **p <= '9') {
		if (n < 100000)
			n = n * 10 + (unsigned)(**p - '0');
		(*p)++;
	}
	while (*p < end && **p != ';')
		(*p)++;
	(*p)++; /* past ';', or past the end: the last */
	*v = n;
	return true;
}

/* A mode set or reset (CSI [?] Pm h/l): noted for sbx_ttyf_reset(). */
static void note_modes(struct sbx_ttyf *f, bool dec, const unsigned char *p, const unsigned char *end, bool on)
{
	unsigned v;

	while (next_param(&p, end, &v)) {
		if (dec) {
			/* the alternate screen: kitty's keyboard flags are
			 * the other stack's from here */
			if (v == 47 || v == 1047 || v == 1049)
				f->alt = on;
			for (size_t i = 0; i < N_DEC_MODES; i++)
				if (dec_modes[i].mode == v) {
					f->dec_set |= UINT64_C(1) << i;
					f->dec_val = on ? f->dec_val | UINT64_C(1) << i
							: f->dec_val & ~(UINT64_C(1) << i);
				}
		} else {
			for (size_t i = 0; i < N_ANSI_MODES; i++)
				if (ansi_modes[i] == v) {
					f->ansi_set |= 1u << i;
					f->ansi_val = on ? f->ansi_val | 1u << i : f->ansi_val & ~(1u << i);
				}
		}
	}
}

/* Where mode is in dec_modes[] (N_DEC_MODES: not there). */
static size_t dec_index(unsigned mode)
{
	size_t i = 0;

	while (i < N_DEC_MODES && dec_modes[i].mode != mode)
		i++;
	return i;
}

/* Whether the DEC mode at index i of dec_modes[] is on now, as far as
 * the command's output tells. */
static bool dec_on(const struct sbx_ttyf *f, size_t i)
{
	return (f->dec_set >> i & 1u) ? (bool)(f->dec_val >> i & 1u) : dec_modes[i].on;
}

/*
 * The cursor saved (DECSC, SCOSC, ? 1048 h, ? 1049 h): the terminal keeps
 * G0, origin mode (and, in some, autowrap) with it, and a later restore
 * (DECRC, SCORC, ? 1048 l, ? 1049 l) puts them back without a sequence
 * note_modes() or esc_allowed() sees: "ESC ( 0, ESC 7, ESC ( B, ESC 8"
 * left line drawing in G0 after the run, every letter of the shell's
 * prompt a box piece. What was saved is noted, and undone by
 * sbx_ttyf_reset() whether restored or not (round 36 review).
 */
static void note_save(struct sbx_ttyf *f)
{
	f->saved_g0 |= f->g0 || f->g123 || f->shifted; /* all the charsets */
	f->saved_origin |= dec_on(f, dec_index(6));
	f->saved_nowrap |= !dec_on(f, dec_index(7));
}

/* Whether every mode of a set or reset (CSI [?] Pm h/l) is one a command
 * may change: the DEC modes of dec_modes[] and dec_plain[], the ANSI
 * modes of ansi_modes[]. Others outlast the run unseen by the reset (CRM
 * shows the controls as glyphs, DECBKM changes what the backarrow key
 * sends...), or are worse (KAM locks the keyboard, SRM echoes the keys). */
static bool modes_known(bool dec, const unsigned char *p, const unsigned char *end)
{
	unsigned v;

	while (next_param(&p, end, &v)) {
		bool known = false;

		for (size_t i = 0; dec && i < N_DEC_MODES && !known; i++)
			known = dec_modes[i].mode == v;
		for (size_t i = 0; dec && i < N_DEC_PLAIN && !known; i++)
			known = dec_plain[i] == v;
		for (size_t i = 0; !dec && i < N_ANSI_MODES && !known; i++)
			known = ansi_modes[i] == v;
		if (!known)
			return false;
	}
	return true;
}

/* Whether the terminal answers the CSI held (ending in final): device
 * attributes (c), status and cursor position reports (n, ? n), a mode's
 * state (DECRQM, $ p), the terminal's version (> q), kitty's keyboard
 * flags (? u), terminal parameters (x), presentation and state reports
 * ($ w, $ u, & u), modify*Keys (? m), graphics attributes (? S), the
 * displayed extent (" v). */
static bool csi_query(unsigned char final, unsigned char priv, unsigned char inter)
{
	if (inter == 0)
		return final == 'c' || final == 'x' || (final == 'n' && (priv == 0 || priv == '?')) ||
		       (priv == '>' && final == 'q') ||
		       (priv == '?' && (final == 'u' || final == 'm' || final == 'S'));
	return (inter == '$' && (final == 'p' || final == 'w' || final == 'u')) || (inter == '&' && final == 'u') ||
	       (inter == '"' && final == 'v');
}

/* Whether the parameters p to end are plain numbers, each one digit or
 * more, ';' between them (or none at all): no empty field, no ':' */
static bool plain_params(const unsigned char *p, const unsigned char *end)
{
	bool none = p == end, digit = false;

	for (; p < end; p++) {
		if (*p >= '0' && *p <= '9')
			digit = true;
		else if (*p == ';' && digit)
			digit = false;
		else
			return false;
	}
	return none || digit;
}

/*
 * What a key sends, beyond the DEC modes (report_mode()): kitty's keyboard
 * flags (CSI > f u pushes, CSI < n u pops, CSI = f ; m u sets: 1 all, 2
 * the bits on, 3 the bits off) and xterm's XTMODKEYS (CSI > Pp ; Pv m
 * sets resource Pp, modifyOtherKeys is 4; CSI > Pp m puts it back, CSI >
 * m all of them; CSI > Pp n disables it). With kitty's flags of 8 or
 * modifyOtherKeys 2, every key, a letter or Enter, is an escape sequence
 * to whatever reads it: set while the relay read no keys (a run in the
 * background, a pipeline), they passed (before, round 38) and the user's
 * shell read its own keys as garbage until the run ended. Whether the CSI
 * held (no intermediate) is one: 0 not, 1 one, -1 one refused; if one,
 * it is noted in the command's view (kitty's stack of the screen it is
 * on, at most SBX_TTYF_KITTY deep, the oldest evicted as kitty does),
 * and when the keys are read (f->answers) it passes and is noted as sent
 * (f->kitty_push, kitty_set, modkeys_sent: what sbx_ttyf_reset() and
 * sbx_ttyf_withdraw() undo); else it is withheld, and send_withheld()
 * sends the command's view once the keys are read. Refused (round 39):
 * parameters in any spelling but plain numbers (`CSI > 4 : 2 m` was read
 * here as `CSI > 4 m`, modifyOtherKeys put back, and by a terminal that
 * takes ':' for ';' as modifyOtherKeys 2, never withdrawn; an empty
 * field is a default each terminal picks for itself), and an XTMODKEYS
 * resource past SBX_TTYF_MODKEYS (xterm has none; it was not kept, so
 * neither withdrawn nor put back).
 */
static int key_mode(struct sbx_ttyf *f, unsigned char final, unsigned char priv, const unsigned char *p,
		    const unsigned char *end)
{
	const unsigned char *q = p;
	unsigned a = 0, b = 0, s = f->alt;
	bool has_a = p < end, has_b;

	if (!((final == 'u' && (priv == '>' || priv == '<' || priv == '=')) ||
	      ((final == 'm' || final == 'n') && priv == '>')))
		return 0;
	if (!plain_params(p, end))
		return -1;
	(void)next_param(&q, end, &a);
	has_b = q < end;
	if (has_b)
		(void)next_param(&q, end, &b);
	if ((final == 'm' || final == 'n') && has_a && a >= SBX_TTYF_MODKEYS)
		return -1;
	if (final == 'u' && priv == '>') {
		if (f->kitty_depth[s] == SBX_TTYF_KITTY)
			memmove(f->kitty_flags[s] + 1, f->kitty_flags[s] + 2,
				(SBX_TTYF_KITTY - 1) * sizeof(f->kitty_flags[s][0]));
		else
			f->kitty_depth[s]++;
		f->kitty_flags[s][f->kitty_depth[s]] = (uint16_t)a;
		if (f->answers && f->kitty_push[s] < 65535)
			f->kitty_push[s]++;
	} else if (final == 'u' && priv == '<') {
		unsigned n = a == 0 ? 1 : a;

		if (n > f->kitty_depth[s]) {
			/* past the command's own: the stack emptied, the
			 * flags 0 (kitty's reading) */
			f->kitty_base[s] = true;
			f->kitty_flags[s][0] = 0;
		}
		f->kitty_depth[s] = n > f->kitty_depth[s] ? 0 : f->kitty_depth[s] - n;
		if (f->answers)
			f->kitty_push[s] = f->kitty_push[s] > n ? f->kitty_push[s] - n : 0;
	} else if (final == 'u') {
		uint16_t *cur = &f->kitty_flags[s][f->kitty_depth[s]];

		if (!has_b || b == 1)
			*cur = (uint16_t)a;
		else if (b == 2)
			*cur |= (uint16_t)a;
		else if (b == 3)
			*cur &= (uint16_t)~a;
		f->kitty_base[s] |= f->kitty_depth[s] == 0;
		f->kitty_set[s] |= f->answers;
	} else {
		/* XTMODKEYS */
		if (!has_a && final == 'n')
			a = 2; /* xterm: "If the parameter is omitted,
				* modifyFunctionKeys is disabled" (before,
				* review of round 38: noted as resource 0, and
				* withdrawn and sent again as that) */
		if (!has_a && final == 'm') {
			f->modkeys_set = 0;
		} else {
			f->modkeys_set = (uint8_t)(final == 'm' && !has_b ? f->modkeys_set & ~(1u << a)
									  : f->modkeys_set | 1u << a);
			f->modkeys_val[a] = final == 'n' ? -1 : (int32_t)b;
			if (f->answers)
				f->modkeys_sent |= (uint8_t)(1u << a);
		}
	}
	if (!f->answers)
		f->withheld = true;
	return 1;
}

/* CSIs with an intermediate refused, as {intermediate, final}: DECSCL
 * (" p), DECRQCRA (* y), XTREPORTSGR (# |), DECSCPP and DECSNLS ($ |,
 * * |), DEC locator reports on and their requests (' z, ' {, ' |, ' w:
 * reports typed into the shell after the run), the status line shown or
 * written to ($ ~, $ }: the shell's output sent there after the run),
 * the margin bell's volume, the keyboard's language and variant ( u,
 * }, ~, r), xterm's colour stack and its report (# P, # Q, # R), a
 * secure reset and its report (+ p). */
static const unsigned char dropped[][2] = {
	{'"', 'p'}, {'*', 'y'}, {'#', '|'}, {'$', '|'}, {'*', '|'}, {'\'', 'z'}, {'\'', '{'},
	{'\'', '|'}, {'\'', 'w'}, {'$', '~'}, {'$', '}'}, {' ', 'u'}, {' ', '}'}, {' ', '~'},
	{' ', 'r'}, {'#', 'P'}, {'#', 'Q'}, {'#', 'R'}, {'+', 'p'},
};

/*
 * Whether the CSI held (ESC [ params intermediates, final) may reach the
 * terminal, noting what it changes. Refused: window operations and
 * reports (CSI t), the title stack's included (the user's title is
 * pushed and popped by us alone: title_push(); a push of the command's
 * own title, or a pop too many, left its title after the run), KAM and
 * SRM set, media copy (CSI i: printer controller modes send what follows
 * to a printer command), DECSCL (CSI " p: its 8-bit form makes the
 * terminal answer in C1, the shell's next reads garbled), XTRESTORE (CSI
 * ? Pm r: it sets the modes saved, unseen by note_modes(), mouse reports
 * left on after the run), DECRQCRA (CSI ... * y: the checksum of a
 * rectangle of the screen, one cell at a time the user's screen read
 * back), the rest of dropped[], XTSMPOINTER, the keyboard emulations (CSI ? 1050-1053, 1060,
 * 1061 h: what the function keys send, after the run), any mode we do
 * not know (modes_known()), DEC locator reports, a query nothing reads
 * the answer of, and a parameter past 65535 (terminals read it capped,
 * or wrapped: CSI ? 66536 h is mouse reports in one that wraps at 16
 * bits).
 */
static bool csi_allowed(struct sbx_ttyf *f, unsigned char final)
{
	const unsigned char *p = f->seq + 2, *end = f->seq + f->n_seq, *ip = p, *q;
	unsigned char priv = 0, inter = 0;
	unsigned v;

	while (ip < end && *ip >= 0x30 && *ip <= 0x3f)
		ip++;
	if (ip < end)
		inter = *ip; /* the first intermediate */
	if (p < ip && *p >= 0x3c && *p <= 0x3f)
		priv = *p++;
	for (q = p; next_param(&q, ip, &v);)
		if (v > 65535)
			return false;
	/* parameters as every terminal reads them alike (round 39): a
	 * sub-parameter (':') only in SGR, where it has its meaning (a
	 * colour, an underline style); elsewhere read here as skipped, and
	 * by some terminals as ';' (`CSI ? 1000 : 1 h`, `CSI > 4 : 2 m`); a
	 * private marker only first; a private CSI with an intermediate
	 * none of ours knows */
	for (q = p; q < ip; q++)
		if ((*q == ':' && !(final == 'm' && priv == 0 && inter == 0)) || (*q >= 0x3c && *q <= 0x3f))
			return false;
	if (inter != 0 && (priv == '<' || priv == '=' || priv == '>'))
		return false;
	if (final == 'i' || final == 't')
		return false;
	if (final == 'r' && priv == '?')
		return false;
	if (final == 'p' && priv == '>')
		return false; /* XTSMPOINTER: the mouse pointer hidden, after */
	for (size_t i = 0; inter != 0 && i < sizeof(dropped) / sizeof(dropped[0]); i++)
		if (dropped[i][0] == inter && dropped[i][1] == final)
			return false;
	if ((final == 'h' || final == 'l') && inter == 0 && (priv == 0 || priv == '?') &&
	    !modes_known(priv == '?', p, ip))
		return false;
	/* a query: its answer is typed as keys, which reach the command
	 * only while the relay reads them (else the shell's next line);
	 * DSR 5 is the relay's own, to know the answers have all come
	 * (ttyrelay.c drain_answers()) */
	if (csi_query(final, priv, inter)) {
		if (!f->answers)
			return false;
		if (final == 'n' && priv == 0)
			for (q = p; next_param(&q, ip, &v);)
				if (v == 5)
					return false;
		f->queried = true;
		f->asked++;
	}
	/* DECANM reset (CSI ? 2 l): the terminal reads VT52 from then on,
	 * our reset at the end included, and its cursor keys send VT52's
	 * ESC A: after the run too */
	if (final == 'l' && inter == 0 && priv == '?')
		for (q = p; next_param(&q, ip, &v);)
			if (v == 2)
				return false;
	/* what keys send (kitty's flags, XTMODKEYS): noted, withheld while
	 * no keys are read */
	if (inter == 0) {
		int k = key_mode(f, final, priv, p, ip);

		if (k != 0)
			return k > 0 && f->answers;
	}
	if ((final == 'h' || final == 'l') && inter == 0 && (priv == 0 || priv == '?')) {
		/* a report mode on: what it reports may come after the
		 * command's end, as a query's answer may (the relay reads
		 * it away the same way: drain_answers()) */
		for (q = p; priv == '?' && final == 'h' && f->answers && next_param(&q, ip, &v);)
			f->queried |= reports(v);
		/* the modes that change what the terminal sends: passed
		 * only with the keys read (withhold_reports()), turned off
		 * (withdrawn, at the end) only if so */
		for (q = p; priv == '?' && f->answers && next_param(&q, ip, &v);)
			if (shell_sets(v) || (report_mode(v) && final == 'h'))
				f->mode_sent |= UINT64_C(1) << dec_index(v);
			else if (report_mode(v))
				f->mode_sent &= ~(UINT64_C(1) << dec_index(v));
		note_modes(f, priv == '?', p, ip, final == 'h');
		for (q = p; priv == '?' && final == 'h' && next_param(&q, ip, &v);)
			if (v == 1048 || v == 1049)
				note_save(f);
	} else if (final == 's' && inter == 0 && priv == 0)
		note_save(f); /* SCOSC (DECSLRM with ? 69 h: noted the same) */
	else if (final == 'm' && inter == 0 && priv == 0)
		f->sgr = true;
	else if (final == 'r' && inter == 0 && priv == 0)
		f->margins = true;
	else if (final == 'q' && inter == ' ' && priv == 0)
		f->cursor_style = true;
	else if (final == 'q' && inter == '"' && priv == 0)
		f->protect = true; /* DECSCA: the text after it protected */
	else if (final == 'x' && inter == '*' && priv == 0)
		f->sace = true; /* DECSACE: how rectangles are changed */
	/* tab stops: TBC (g), CTC (W), DECST8C (? 5 W) */
	else if ((final == 'g' || final == 'W') && inter == 0)
		f->tabs = true;
	return true;
}

/* A DEC mode set held (CSI ? Pm h, allowed and noted) that turns on a
 * report mode while no keys are read, or a reset (CSI ? Pm l) that turns
 * one off: sent without those, the other modes in one set, and true (the
 * caller sends nothing more); those wait for the keys (sbx_ttyf_feed(),
 * send_withheld()). false: send it as it is. Before (review of round
 * 38), a `CSI ? 2004 l` of a run in the background, or of one stopped,
 * passed while the shell had the keys: its bracketed paste off until its
 * next prompt, a multi-line paste ran line by line; and (round 39) the
 * same for the reports: a background run's `CSI ? 1000 l` (a TUI's
 * cleanup, `tput reset`) turned off the mouse of the program in the
 * foreground (vim, htop, mc, a tmux session) in the middle of its use.
 * The set sent is never longer than the one held (each value written
 * in at most the digits it was read from), so SBX_TTYF_OUT() holds:
 * each mode in a set of its own made "7;" five bytes (review of round
 * 37: a read of such sets overran the relay's buffer). */
static bool withhold_reports(struct sbx_ttyf *f, unsigned char final, unsigned char *out, size_t *o)
{
	const unsigned char *p = f->seq + 3, *end = f->seq + f->n_seq, *q;
	bool any = false, (*held)(unsigned) = report_mode;
	size_t start;
	unsigned v;

	if (f->answers || (final != 'h' && final != 'l') || f->n_seq < 3 || f->seq[2] != '?')
		return false;
	for (q = p; q < end; q++)
		if (*q < 0x30 || *q > 0x3f)
			return false; /* an intermediate: no mode set */
	for (q = p; next_param(&q, end, &v);)
		any |= held(v);
	if (!any)
		return false;
	f->withheld = true;
	start = *o;
	put(out, o, (const unsigned char *)"\x1b[?", 3);
	for (q = p; next_param(&q, end, &v);)
		if (!held(v))
			*o += (size_t)snprintf((char *)out + *o, 16, "%u;", v);
	if (*o == start + 3)
		*o = start; /* withheld modes only */
	else
		out[*o - 1] = final;
	return true;
}

/*
 * kitty keeps a keyboard flags stack for each screen, the main and the
 * alternate (kitty/screen.c: the pointer to the one in use moves with
 * the screen, ? 47, ? 1047, ? 1049, neither is cleared): a push on the
 * alternate screen stays on its stack after the command leaves it, for
 * the next program there (less, vim: every key an escape sequence), and
 * (before, round 39) our pops at the end were sent on the main screen,
 * where they took the shell's own. The other screen's stack is reached
 * by visiting it: the cursor saved, ? 47 (no clearing, no cursor of its
 * own), what is to be sent, ? 47 back, the cursor restored (kitty moves
 * it home on entering). A terminal with one stack, or none switching
 * screens, gets the same pops in all.
 */
static void visit(const struct sbx_ttyf *f, bool there, unsigned char *out, size_t *o)
{
	if (there)
		put(out, o, f->alt ? "\x1b" "7\x1b[?47l" : "\x1b" "7\x1b[?47h", 8);
	else
		put(out, o, f->alt ? "\x1b[?47h\x1b" "8" : "\x1b[?47l\x1b" "8", 8);
}

/* Screen s's kitty flags as the command left them: its own pushes sent
 * popped, then its view pushed. */
static void kitty_replay(struct sbx_ttyf *f, unsigned s, unsigned char *out, size_t *o)
{
	if (f->kitty_push[s] > 0)
		*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[<%uu", f->kitty_push[s]);
	if (f->kitty_base[s]) {
		*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[=%u;1u", f->kitty_flags[s][0]);
		f->kitty_set[s] = true;
	}
	for (unsigned i = 1; i <= f->kitty_depth[s]; i++)
		*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[>%uu", f->kitty_flags[s][i]);
	f->kitty_push[s] = f->kitty_depth[s];
}

/* Screen s's kitty flags taken off the terminal as far as we sent them. */
static void kitty_off(struct sbx_ttyf *f, unsigned s, unsigned char *out, size_t *o)
{
	if (f->kitty_push[s] > 0)
		*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[<%uu", f->kitty_push[s]);
	if (f->kitty_set[s])
		put(out, o, "\x1b[=0;1u", 8);
	f->kitty_push[s] = 0;
	f->kitty_set[s] = false;
}

/* The report modes on now (as the command left them), sent once the
 * keys are read after they were withheld. */
static void send_withheld(struct sbx_ttyf *f, unsigned char *out, size_t *o)
{
	if (!f->answers || !f->withheld)
		return;
	f->withheld = false;
	for (size_t i = 0; i < N_DEC_MODES; i++)
		if (report_mode(dec_modes[i].mode) && dec_on(f, i)) {
			*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[?%uh", dec_modes[i].mode);
			f->queried |= reports(dec_modes[i].mode);
			f->mode_sent |= UINT64_C(1) << i;
		} else if (report_mode(dec_modes[i].mode) && (f->mode_sent >> i & 1u) &&
			   !shell_sets(dec_modes[i].mode)) {
			/* on from us, and the command turned it off while
			 * withheld (the keys lost without the shell taking
			 * them) */
			*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[?%ul", dec_modes[i].mode);
			f->mode_sent &= ~(UINT64_C(1) << i);
		} else if (shell_sets(dec_modes[i].mode) && (f->dec_set >> i & 1u)) {
			/* one the shell sets for itself (bracketed paste, the
			 * cursor keys, the keypad: left on the terminal by
			 * sbx_ttyf_withdraw()) and the command turned off:
			 * off for the command again (before, review of round
			 * 38, the shell's or the command's earlier ?2004h
			 * stayed, and the command got a paste in brackets it
			 * had turned off) */
			*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[?%ul", dec_modes[i].mode);
			f->mode_sent |= UINT64_C(1) << i;
		}
	/* what keys send (key_mode(), esc_allowed()): the command's view,
	 * its own pushes taken off first (none after sbx_ttyf_withdraw()),
	 * so that the terminal holds each once; kitty's for each screen,
	 * the other one visited (round 39) */
	if (f->keypad_on)
		put(out, o, "\x1b=", 2);
	else if (f->keypad)
		put(out, o, "\x1b>", 2); /* the same: the shell's ESC = off */
	f->keypad_sent |= f->keypad;
	kitty_replay(f, f->alt, out, o);
	if (f->kitty_push[!f->alt] > 0 || f->kitty_base[!f->alt] || f->kitty_depth[!f->alt] > 0) {
		visit(f, true, out, o);
		kitty_replay(f, !f->alt, out, o);
		visit(f, false, out, o);
	}
	for (unsigned r = 0; r < SBX_TTYF_MODKEYS; r++)
		if (f->modkeys_set >> r & 1u) {
			if (f->modkeys_val[r] < 0)
				*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[>%un", r);
			else
				*o += (size_t)snprintf((char *)out + *o, 16, "\x1b[>%u;%um", r,
						       (unsigned)f->modkeys_val[r]);
			f->modkeys_sent |= (uint8_t)(1u << r);
		}
}

size_t sbx_ttyf_withdraw(struct sbx_ttyf *f, bool before, unsigned char *out)
{
	size_t o = 0;
	bool any = f->keypad_on;

	if (before && f->keypad_on)
		put(out, &o, "\x1b>", 2);
	/* as far as the terminal got them from us (round 39: a mode set
	 * while withheld was turned off here too, over a foreground
	 * program's own) */
	for (size_t i = 0; i < N_DEC_MODES; i++)
		if (!report_mode(dec_modes[i].mode)) {
			continue;
		} else if (!shell_sets(dec_modes[i].mode)) {
			if (f->mode_sent >> i & 1u)
				o += (size_t)snprintf((char *)out + o, 16, "\x1b[?%ul", dec_modes[i].mode);
			any |= dec_on(f, i);
		} else if (dec_on(f, i) != dec_modes[i].on) {
			if (before && (f->mode_sent >> i & 1u))
				o += (size_t)snprintf((char *)out + o, 16, "\x1b[?%u%c", dec_modes[i].mode,
						      dec_modes[i].on ? 'h' : 'l');
			any = true;
		}
	kitty_off(f, f->alt, out, &o);
	if (f->kitty_push[!f->alt] > 0 || f->kitty_set[!f->alt]) {
		visit(f, true, out, &o);
		kitty_off(f, !f->alt, out, &o);
		visit(f, false, out, &o);
	}
	any |= f->kitty_base[0] || f->kitty_depth[0] > 0 || f->kitty_base[1] || f->kitty_depth[1] > 0;
	for (unsigned r = 0; r < SBX_TTYF_MODKEYS; r++) {
		if (f->modkeys_sent >> r & 1u)
			o += (size_t)snprintf((char *)out + o, 16, "\x1b[>%um", r);
		any |= (f->modkeys_set >> r & 1u) != 0;
	}
	f->modkeys_sent = 0;
	/* the shell's own modes are the shell's now: put back before
	 * (all off), or left as its prompt set them; not ours to put back
	 * at the end (sbx_ttyf_reset()) unless sent again */
	f->mode_sent = 0;
	f->keypad_sent = false;
	f->withheld |= any;
	f->answers = false;
	return o;
}

/* The number of the OSC held (ESC ] Ps ; ...), as the terminal reads it
 * (leading zeros too: "00;t" is a title), with *body past its ';'; -1
 * when there is none. */
static long osc_ps(const struct sbx_ttyf *f, const unsigned char **body)
{
	const unsigned char *p = f->seq + 2, *end = f->seq + f->n_seq;
	long ps = 0;
	size_t digits = 0;

	while (p < end && *p >= '0' && *p <= '9' && digits < 6) {
		ps = ps * 10 + (*p++ - '0');
		digits++;
	}
	if (digits == 0 || p == end || *p++ != ';')
		return -1;
	*body = p;
	return ps;
}

/* The OSC held (ESC ] body): allowed are the title (0, 1, 2; printable)
 * and the colour queries ("4;N;?", "10;?" to "19;?"). */
static bool osc_allowed(const struct sbx_ttyf *f)
{
	const unsigned char *p = NULL, *end = f->seq + f->n_seq;
	long ps = osc_ps(f, &p);

	if (ps < 0)
		return false;
	if (ps <= 2) {
		for (const unsigned char *q = p; q < end; q++)
			if (*q < 0x20 || *q == 0x7f)
				return false;
		return true;
	}
	if (ps >= 10 && ps <= 19)
		return end - p == 1 && *p == '?';
	if (ps == 4) {
		size_t d = 0;

		while (p < end && *p >= '0' && *p <= '9' && d < 4) {
			p++;
			d++;
		}
		return d > 0 && end - p == 2 && p[0] == ';' && p[1] == '?';
	}
	return false;
}

/* Before the first title the command sets: the user's title pushed on
 * the terminal's title stack (CSI 22;0 t), popped by sbx_ttyf_reset():
 * the title is the user's again after the run, and a host program that
 * later asks the terminal for it does not get the command's text. */
static void title_push(struct sbx_ttyf *f, unsigned char *out, size_t *o, bool query)
{
	if (f->title || query)
		return;
	put(out, o, "\x1b[22;0t", 7);
	f->title = true;
}

/* An OSC ended by term (BEL or ST): sent whole when allowed, the
 * user's title pushed before the command's first. */
static void osc_end(struct sbx_ttyf *f, const char *term, size_t tlen, unsigned char *out, size_t *o)
{
	const unsigned char *body;
	/* by its number: "00;t" and "01;t" are titles to the terminal
	 * (on 4bb937e, taken for queries by their second byte, they passed
	 * without the user's title pushed, and stayed after the run) */
	bool query = osc_ps(f, &body) > 2;

	if (f->over || !osc_allowed(f) || (query && !f->answers))
		return;
	f->queried |= query;
	f->asked += query;
	title_push(f, out, o, query);
	put(out, o, f->seq, f->n_seq);
	put(out, o, term, tlen);
}

/* The ESC sequence held, ending in final: the cursor's save and restore,
 * the keypad modes, index, next line, tab set, reverse index, RIS, and
 * G0-G3 designated as ASCII, UK or DEC graphics (put back at the end).
 * Not the single shifts (SS2, SS3: ESC N, O) nor the locking shifts of
 * G2 and G3 (LS2, LS3, LS1R-LS3R: ESC n o ~ } |), nor the line
 * attributes (double height and width: ESC # 3-6). */
static bool esc_allowed(struct sbx_ttyf *f, unsigned char final)
{
	if (f->n_seq == 1) {
		/* the keypad's application mode: what its keys send, withheld
		 * while no keys are read, as the DEC modes of report_mode()
		 * are (before, round 38, ESC = passed: the user's shell got
		 * the keypad's keys as ESC O sequences); noted for the reset
		 * whether sent or not */
		if (final == '=' || final == '>') {
			f->keypad = true;
			f->keypad_on = final == '=';
			if (!f->answers) {
				f->withheld = true;
				return false;
			}
			f->keypad_sent = true;
			return true;
		}
		if (final == 'H')
			f->tabs = true;
		if (final == '7')
			note_save(f);
		return strchr("78=>DEHMc", final) != NULL;
	}
	if (f->n_seq == 2 && strchr("()*+", f->seq[1]) != NULL && strchr("0AB", final) != NULL) {
		if (f->seq[1] == '(')
			f->g0 = final != 'B';
		else
			f->g123 = true;
		return true;
	}
	return false;
}

/* One character (a code point; raw, n bytes, is how the command wrote a
 * text character) through the state machine. */
static void step(struct sbx_ttyf *f, uint32_t cp, const unsigned char *raw, size_t n, unsigned char *out,
		 size_t *o)
{
	/* CAN and SUB end any sequence, dropped. */
	if (cp == 0x18 || cp == 0x1a) {
		to_ground(f);
		return;
	}
	/* C1: ST ends a string; any other stands for ESC and a letter,
	 * and cuts what was held (the terminal would too). */
	if (cp >= 0x80 && cp <= 0x9f) {
		if (cp == 0x9c) {
			if (f->state == TTYF_OSC || f->state == TTYF_OSC_ESC)
				osc_end(f, "\x1b\\", 2, out, o);
			to_ground(f);
			return;
		}
		start_esc(f);
		step(f, cp - 0x40, NULL, 0, out, o);
		return;
	}
	switch ((enum ttyf_state)f->state) {
	case TTYF_GROUND:
		if (cp == 0x1b)
			start_esc(f);
		else if ((cp >= 0x20 && cp < 0x7f) || cp >= 0xa0)
			put(out, o, raw, n);
		else if (cp >= 0x07 && cp <= 0x0d)
			put(out, o, raw, n);
		else if (cp == 0x0e || cp == 0x0f) {
			/* SO, SI: G1 or G0 drawn (line drawing under
			 * TERM=screen or vt100); SI at the end */
			f->shifted |= cp == 0x0e;
			put(out, o, raw, n);
		}
		return; /* other C0 and DEL: dropped */
	case TTYF_ESC:
		if (cp == 0x1b) {
			start_esc(f);
		} else if (cp >= 0x20 && cp <= 0x2f) {
			hold(f, (unsigned char)cp);
			f->inter = true;
		} else if (!f->inter && cp == '[') {
			hold(f, '[');
			f->state = TTYF_CSI;
		} else if (!f->inter && cp == ']') {
			hold(f, ']');
			f->state = TTYF_OSC;
		} else if (!f->inter && (cp == 'P' || cp == 'X' || cp == '^' || cp == '_')) {
			f->state = TTYF_STR;
		} else if (cp >= 0x30 && cp <= 0x7e) {
			if (!f->over && esc_allowed(f, (unsigned char)cp)) {
				put(out, o, f->seq, f->n_seq);
				out[(*o)++] = (unsigned char)cp;
			}
			to_ground(f);
		} else if (cp >= 0xa0) {
			to_ground(f); /* not a sequence: dropped with it */
		}
		return; /* C0, DEL: ignored inside */
	case TTYF_CSI:
		if (cp == 0x1b) {
			start_esc(f);
		} else if (cp >= 0x30 && cp <= 0x3f) {
			if (f->inter)
				f->bad = true; /* a parameter after an intermediate */
			hold(f, (unsigned char)cp);
		} else if (cp >= 0x20 && cp <= 0x2f) {
			f->inter = true;
			hold(f, (unsigned char)cp);
		} else if (cp >= 0x40 && cp <= 0x7e) {
			if (!f->over && !f->bad && f->n_seq <= SBX_TTYF_CSI_MAX && csi_allowed(f, (unsigned char)cp) &&
			    !withhold_reports(f, (unsigned char)cp, out, o)) {
				put(out, o, f->seq, f->n_seq);
				out[(*o)++] = (unsigned char)cp;
			}
			to_ground(f);
		} else if (cp >= 0xa0) {
			f->bad = true;
		}
		return;
	case TTYF_OSC:
		if (cp == 0x07) {
			osc_end(f, "\x07", 1, out, o);
			to_ground(f);
		} else if (cp == 0x1b) {
			f->state = TTYF_OSC_ESC;
		} else if (cp >= 0x20 && cp != 0x7f) {
			for (size_t i = 0; i < n; i++)
				hold(f, raw != NULL ? raw[i] : (unsigned char)cp);
			if (n == 0 && raw == NULL) /* a C1 control's letter */
				hold(f, (unsigned char)cp);
		}
		return; /* other C0: ignored inside */
	case TTYF_OSC_ESC:
		if (cp == '\\') {
			osc_end(f, "\x1b\\", 2, out, o);
			to_ground(f);
			return;
		}
		/* ESC and something else: the OSC is cut (dropped), and a
		 * new sequence starts with that ESC. */
		start_esc(f);
		step(f, cp, raw, n, out, o);
		return;
	case TTYF_STR:
		if (cp == 0x1b)
			f->state = TTYF_STR_ESC;
		return;
	case TTYF_STR_ESC:
		if (cp == '\\') {
			to_ground(f);
			return;
		}
		start_esc(f);
		step(f, cp, raw, n, out, o);
		return;
	}
}

/* The length of a UTF-8 sequence starting with lead byte b (0: not a
 * lead byte), and the range its second byte must be in (no overlong
 * forms, no surrogates, nothing past U+10FFFF). */
static size_t u8_len(unsigned char b, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (b >= 0xc2 && b <= 0xdf)
		return 2;
	if (b >= 0xe0 && b <= 0xef) {
		if (b == 0xe0)
			*lo = 0xa0;
		if (b == 0xed)
			*hi = 0x9f;
		return 3;
	}
	if (b >= 0xf0 && b <= 0xf4) {
		if (b == 0xf0)
			*lo = 0x90;
		if (b == 0xf4)
			*hi = 0x8f;
		return 4;
	}
	return 0;
}

static uint32_t u8_decode(const unsigned char *s, size_t n)
{
	uint32_t cp = n == 2 ? s[0] & 0x1fu : n == 3 ? s[0] & 0x0fu : s[0] & 0x07u;

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3fu);
	return cp;
}

/* Whether a UTF-8 character has a byte a terminal in 8-bit mode reads as
 * a C1 control (0x80-0x9f): U+00DD is C3 9D, an OSC introducer there,
 * and U+00DC (C3 9C) its end, so that "Ý52;c;...Ü" set the clipboard of
 * a terminal in 8-bit mode while the locale said nothing. */
static bool c1_inside(const unsigned char *s, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (s[i] <= 0x9f)
			return true;
	return false;
}

/*
 * A terminal in 8-bit mode under a UTF-8 locale (an old PuTTY or xterm
 * set to Latin-1, ssh'd into a host whose default is C.UTF-8) reads each
 * byte 0x80-0x9f inside a well-formed character as a C1 control: before
 * (round 39), "\xc3\x9d" "52;c;..." BEL (U+00DD, then text) set its
 * clipboard, and a title holding U+00DC (C3 9C, an ST there) ended early,
 * the rest of it read as sequences. What such a byte does there, for
 * sbx_ttyf_feed() in UTF-8 mode:
 *   C1_CUT   DCS, SOS, CSI, OSC, PM, APC start a sequence: a CAN after
 *            the character cuts it (nothing to a UTF-8 terminal; the
 *            character's other bytes, 0x80-0xbf, are never a final);
 *   C1_ID    DECID: the terminal answers as to DA, typed as keys: the
 *            character is '?' (its columns) while no keys are read, else
 *            an answer may come after the end (f->queried);
 *   C1_TAB   HTS sets a tab stop: put back at the end (f->tabs);
 *   C1_GUARD SPA, EPA: text protected from erasing (f->protect).
 * Others move the cursor (IND, NEL, RI) or shift one character (SS2,
 * SS3): the text misdrawn, as it is anyway in such a terminal.
 */
enum { C1_CUT = 1, C1_ID = 2, C1_TAB = 4, C1_GUARD = 8 };

static unsigned cp_width(uint32_t cp);

static unsigned c1_effects(const unsigned char *s, size_t n)
{
	unsigned e = 0;

	for (size_t i = 1; i < n; i++)
		if (s[i] == 0x90 || s[i] == 0x98 || s[i] == 0x9b || (s[i] >= 0x9d && s[i] <= 0x9f))
			e |= C1_CUT;
		else if (s[i] == 0x9a)
			e |= C1_ID;
		else if (s[i] == 0x88)
			e |= C1_TAB;
		else if (s[i] == 0x96 || s[i] == 0x97)
			e |= C1_GUARD;
	return e;
}

/*
 * A character of UTF-8 mode (cp from u8, n bytes) that holds a byte
 * 0x80-0x9f (c1_inside()), as an 8-bit terminal may read it too
 * (c1_effects()): in text as above; in a title '?' when it would start a
 * sequence there, or ask DECID while no keys are read (a string is not
 * cut by a CAN without being cut for a UTF-8 terminal too). Any other
 * passes whole (review of round 39: every character with a byte
 * 0x80-0x9f was '?', a third of a Russian title's letters, three in four
 * of a Chinese or Japanese one's, the accented capitals, U+2014): an
 * 8-bit terminal may end the title at its byte (ST, 0x9c; or one it
 * executes, IND, NEL, HTS..., as DEC's parser does) and show the rest as
 * text, in which no character starts a sequence or asks DECID then; the
 * tab stops and guarded text it may set are put back as in text.
 */
static void utf8_c1(struct sbx_ttyf *f, uint32_t cp, const unsigned char *u8, size_t n, unsigned char *out,
		    size_t *o)
{
	unsigned e = c1_effects(u8, n);
	bool ground = f->state == TTYF_GROUND;

	if (f->state == TTYF_OSC) {
		if ((e & C1_CUT) || ((e & C1_ID) && !f->answers)) {
			step(f, 0xfffd, (const unsigned char *)"?", 1, out, o);
			return;
		}
		step(f, cp, u8, n, out, o);
		f->queried |= (e & C1_ID) != 0;
		f->tabs |= (e & C1_TAB) != 0;
		f->protect |= (e & C1_GUARD) != 0;
		return;
	}
	if (ground && (e & C1_ID) && !f->answers) {
		unsigned char a[2];

		a[0] = a[1] = '?';
		step(f, 0xfffd, a, cp_width(cp), out, o);
		return;
	}
	step(f, cp, u8, n, out, o);
	if (!ground)
		return; /* in a sequence: dropped with it */
	if (e & C1_CUT)
		out[(*o)++] = 0x18;
	f->queried |= (e & C1_ID) != 0;
	f->tabs |= (e & C1_TAB) != 0;
	f->protect |= (e & C1_GUARD) != 0;
}

/*
 * What stands for a character c1_inside() keeps from a terminal that may
 * be 8-bit: ASCII, as text (never a byte a sequence is made of: the
 * caller steps it as U+FFFD). The box drawing characters (every one of
 * them has a byte 0x94-0x96) as '-', '|' and '+', the block elements as
 * '#': tables, trees and frames (rich, npm, tree, pstree) stay readable
 * with no locale; anything else '?'.
 */
static unsigned char either_ascii(uint32_t cp)
{
	static const uint16_t across[] = {0x00, 0x01, 0x04, 0x05, 0x08, 0x09, 0x4c, 0x4d,
					  0x50, 0x74, 0x76, 0x78, 0x7a, 0x7c, 0x7e};
	static const uint16_t down[] = {0x02, 0x03, 0x06, 0x07, 0x0a, 0x0b, 0x4e, 0x4f,
					0x51, 0x75, 0x77, 0x79, 0x7b, 0x7d, 0x7f};

	if (cp >= 0x2580 && cp <= 0x259f)
		return '#';
	if (cp < 0x2500 || cp > 0x257f)
		return '?';
	for (size_t i = 0; i < sizeof(across) / sizeof(across[0]); i++) {
		if (cp - 0x2500 == across[i])
			return '-';
		if (cp - 0x2500 == down[i])
			return '|';
	}
	return '+';
}

/* Whether cp is in one of the n ranges of r (sorted {first, last}). */
static bool in_ranges(uint32_t cp, const uint32_t (*r)[2], size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp > r[mid][1])
			lo = mid + 1;
		else if (cp < r[mid][0])
			hi = mid;
		else
			return true;
	}
	return false;
}

/*
 * How many columns a program that writes cp counts for it (wcwidth() as
 * the common tables have it: 0 for combining marks, joiners and variation
 * selectors, 2 for East Asian wide and full-width characters and emoji),
 * for the ASCII that stands for it with no locale (either_text()): a
 * table, a progress bar or an editor's line drawn with emoji or CJK by a
 * program that counts them as 2 columns (its own tables, as rich and
 * string-width have) kept its columns only if the '?' did too (before,
 * round 37: one '?' for each, every cell after it drawn a column left,
 * and a '?' for each combining accent, one column right).
 */
static unsigned cp_width(uint32_t cp)
{
	static const uint32_t zero[][2] = {
		{0x0300, 0x036f},   {0x0483, 0x0489},   {0x0591, 0x05bd},   {0x05bf, 0x05bf},
		{0x05c1, 0x05c2},   {0x05c4, 0x05c5},   {0x05c7, 0x05c7},   {0x0610, 0x061a},
		{0x064b, 0x065f},   {0x0670, 0x0670},   {0x06d6, 0x06dc},   {0x06df, 0x06e4},
		{0x06e7, 0x06e8},   {0x06ea, 0x06ed},   {0x0e31, 0x0e31},   {0x0e34, 0x0e3a},
		{0x0e47, 0x0e4e},   {0x1ab0, 0x1aff},   {0x1dc0, 0x1dff},   {0x200b, 0x200f},
		{0x202a, 0x202e},   {0x2060, 0x2064},   {0x20d0, 0x20ff},   {0xfe00, 0xfe0f},
		{0xfe20, 0xfe2f},   {0xfeff, 0xfeff},   {0xe0001, 0xe007f}, {0xe0100, 0xe01ef},
	};
	static const uint32_t wide[][2] = {
		{0x1100, 0x115f},   {0x231a, 0x231b},   {0x2329, 0x232a},   {0x23e9, 0x23ec},
		{0x23f0, 0x23f0},   {0x23f3, 0x23f3},   {0x25fd, 0x25fe},   {0x2614, 0x2615},
		{0x2648, 0x2653},   {0x267f, 0x267f},   {0x2693, 0x2693},   {0x26a1, 0x26a1},
		{0x26aa, 0x26ab},   {0x26bd, 0x26be},   {0x26c4, 0x26c5},   {0x26ce, 0x26ce},
		{0x26d4, 0x26d4},   {0x26ea, 0x26ea},   {0x26f2, 0x26f3},   {0x26f5, 0x26f5},
		{0x26fa, 0x26fa},   {0x26fd, 0x26fd},   {0x2705, 0x2705},   {0x270a, 0x270b},
		{0x2728, 0x2728},   {0x274c, 0x274c},   {0x274e, 0x274e},   {0x2753, 0x2755},
		{0x2757, 0x2757},   {0x2795, 0x2797},   {0x27b0, 0x27b0},   {0x27bf, 0x27bf},
		{0x2b1b, 0x2b1c},   {0x2b50, 0x2b50},   {0x2b55, 0x2b55},   {0x2e80, 0x303e},
		{0x3041, 0x33ff},   {0x3400, 0x4dbf},   {0x4e00, 0x9fff},   {0xa000, 0xa4cf},
		{0xa960, 0xa97f},   {0xac00, 0xd7a3},   {0xf900, 0xfaff},   {0xfe10, 0xfe19},
		{0xfe30, 0xfe6f},   {0xff00, 0xff60},   {0xffe0, 0xffe6},   {0x16fe0, 0x16fe4},
		{0x17000, 0x18aff}, {0x1b000, 0x1b2ff}, {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf},
		{0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251}, {0x1f300, 0x1f64f},
		 {0x1f680, 0x1f6ff}, {0x1f7e0, 0x1f7eb}, {0x1f90c, 0x1f9ff},
		{0x1fa70, 0x1faff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
	};

	if (in_ranges(cp, zero, sizeof(zero) / sizeof(zero[0])))
		return 0;
	return in_ranges(cp, wide, sizeof(wide) / sizeof(wide[0])) ? 2 : 1;
}

/* The ASCII that stands for cp with no locale (c1_inside()), into a: as
 * many columns as cp takes (cp_width()): "??" for a wide one, nothing for
 * a combining mark, a box drawing or block character as either_ascii()
 * has it, else '?'. Its length. */
static size_t either_text(uint32_t cp, unsigned char a[2])
{
	unsigned w = cp_width(cp);

	a[0] = a[1] = '?';
	if (w == 1)
		a[0] = either_ascii(cp);
	return w;
}

size_t sbx_ttyf_feed(struct sbx_ttyf *f, const unsigned char *in, size_t n, unsigned char *out)
{
	size_t o = 0;

	send_withheld(f, out, &o);
	for (size_t i = 0; i < n; i++) {
		unsigned char b = in[i], lo, hi;

		if (f->cs == SBX_TTYF_8BIT || b < 0x80) {
			if (f->n_u8 > 0) {
				/* a character cut short */
				f->n_u8 = 0;
				step(f, 0xfffd, (const unsigned char *)"?", 1, out, &o);
			}
			step(f, b, &b, 1, out, &o);
			continue;
		}
		if (f->n_u8 > 0) {
			size_t want = u8_len(f->u8[0], &lo, &hi);

			if (f->n_u8 == 1 ? b >= lo && b <= hi : b >= 0x80 && b <= 0xbf) {
				f->u8[f->n_u8++] = b;
				if (f->n_u8 == want) {
					uint32_t cp = u8_decode(f->u8, want);

					f->n_u8 = 0;
					if (f->cs == SBX_TTYF_EITHER && cp >= 0xa0 && c1_inside(f->u8, want)) {
						unsigned char a[2];
						size_t an = either_text(cp, a);

						step(f, 0xfffd, a, an, out, &o);
					} else if (f->cs == SBX_TTYF_UTF8 && cp >= 0xa0 && c1_inside(f->u8, want))
						utf8_c1(f, cp, f->u8, want, out, &o);
					else if (f->cs == SBX_TTYF_UTF8_MUX && f->state == TTYF_OSC && cp >= 0xa0 &&
						 (c1_effects(f->u8, want) & C1_CUT))
						/* a title tmux passes on (set-titles)
						 * to a terminal that may be 8-bit: as
						 * in UTF-8 mode (utf8_c1()); its DA
						 * answers tmux reads itself */
						step(f, 0xfffd, (const unsigned char *)"?", 1, out, &o);
					else /* SBX_TTYF_UTF8_ONLY, _MUX: whole */
						step(f, cp, f->u8, want, out, &o);
				}
				continue;
			}
			f->n_u8 = 0;
			step(f, 0xfffd, (const unsigned char *)"?", 1, out, &o);
		}
		if (u8_len(b, &lo, &hi) == 0) {
			step(f, 0xfffd, (const unsigned char *)"?", 1, out, &o);
			continue;
		}
		f->u8[f->n_u8++] = b;
	}
	return o;
}

size_t sbx_ttyf_reset(const struct sbx_ttyf *f, unsigned cols, unsigned char *out, size_t room)
{
	char buf[SBX_TTYF_RESET];
	uint64_t set = f->dec_set, val = f->dec_val;
	size_t o = 0;
	int w;

#define ADD(...)                                                                                   \
	do {                                                                                       \
		w = snprintf(buf + o, sizeof(buf) - o, __VA_ARGS__);                               \
		if (w < 0 || (size_t)w >= sizeof(buf) - o)                                         \
			return 0;                                                                  \
		o += (size_t)w;                                                                    \
	} while (0)
	/* The alternate screen first: leaving it restores the cursor the
	 * command saved on entering, on the user's screen. */
	/* what a saved cursor holds, as if restored (note_save()) */
	if (f->saved_origin) {
		set |= UINT64_C(1) << dec_index(6);
		val |= UINT64_C(1) << dec_index(6);
	}
	if (f->saved_nowrap) {
		set |= UINT64_C(1) << dec_index(7);
		val &= ~(UINT64_C(1) << dec_index(7));
	}
	/* kitty's flags pushed on the alternate screen, popped there
	 * before leaving it (visit()) */
	if (f->alt && (f->kitty_push[1] > 0 || f->kitty_set[1])) {
		if (f->kitty_push[1] > 0)
			ADD("\x1b[<%uu", f->kitty_push[1]);
		if (f->kitty_set[1])
			ADD("\x1b[=0;1u");
	}
	/* the modes the user's shell sets for itself (bracketed paste, the
	 * cursor keys, the keypad) only as far as the terminal got them
	 * from us: a run in the background that set them (withheld), or
	 * whose keys the shell took back, left them the shell's, and its
	 * end turned off the shell's bracketed paste (before, review of
	 * round 38: a multi-line paste at its prompt ran line by line);
	 * the reports the same (round 39: a background run's end turned
	 * off the mouse of the program in the foreground) */
	for (size_t i = N_DEC_MODES; i-- > 0;)
		if (report_mode(dec_modes[i].mode) ? (f->mode_sent >> i & 1u) != 0
						   : (set >> i & 1u) && (bool)(val >> i & 1u) != dec_modes[i].on)
			ADD("\x1b[?%u%c", dec_modes[i].mode, dec_modes[i].on ? 'h' : 'l');
	for (size_t i = 0; i < N_ANSI_MODES; i++)
		if ((f->ansi_set >> i & 1u) && (f->ansi_val >> i & 1u))
			ADD("\x1b[%ul", ansi_modes[i]);
	if (f->margins)
		ADD("\x1b" "7\x1b[r\x1b" "8");
	if (f->kitty_push[0] > 0)
		ADD("\x1b[<%uu", f->kitty_push[0]);
	if (f->kitty_set[0])
		ADD("\x1b[=0;1u");
	/* the alternate screen's, left there when the command left it */
	if (!f->alt && (f->kitty_push[1] > 0 || f->kitty_set[1])) {
		ADD("\x1b" "7\x1b[?47h");
		if (f->kitty_push[1] > 0)
			ADD("\x1b[<%uu", f->kitty_push[1]);
		if (f->kitty_set[1])
			ADD("\x1b[=0;1u");
		ADD("\x1b[?47l\x1b" "8");
	}
	/* each XTMODKEYS resource the terminal got from us back to its
	 * initial value (xterm's modifyKeypadKeys 3 and later ones too:
	 * review of round 38); only those (round 39: a background run's
	 * end put back the modifyOtherKeys of vim in the foreground) */
	for (unsigned r = 0; r < SBX_TTYF_MODKEYS; r++)
		if (f->modkeys_sent >> r & 1u)
			ADD("\x1b[>%um", r);
	if (f->keypad_sent)
		ADD("\x1b>");
	if (f->cursor_style)
		ADD("\x1b[0 q");
	if (f->g0 || f->saved_g0)
		ADD("\x1b(B");
	if (f->g123) /* as xterm's reset leaves them: ASCII */
		ADD("\x1b)B\x1b*B\x1b+B");
	if (f->shifted)
		ADD("\x0f");
	if (f->protect)
		ADD("\x1b[0\"q");
	if (f->sace)
		ADD("\x1b[0*x");
	if (f->tabs) {
		/* every 8 columns, as a new terminal has them (DECST8C, CSI
		 * ? 5 W, is not in every terminal): all cleared, then one
		 * set every 8 columns along the cursor's line, the cursor
		 * saved and restored around */
		ADD("\x1b" "7\x1b[3g\x1b[1G");
		cols = cols == 0 ? 256 : cols > SBX_TTYF_COLS ? SBX_TTYF_COLS : cols;
		for (unsigned c = 9; c <= cols; c += 8)
			ADD("\x1b[8C\x1bH");
		ADD("\x1b" "8");
	}
	if (f->sgr)
		ADD("\x1b[0m");
	if (f->title)
		ADD("\x1b[23;0t");
	/* the terminal's saved cursor is ours now: a restore after the run
	 * (a program's DECRC without its own DECSC) gets the state put back
	 * above, not the command's charset or origin mode */
	if (f->saved_g0 || f->saved_origin || f->saved_nowrap)
		ADD("\x1b" "7");
#undef ADD
	if (o > room)
		return 0;
	memcpy(out, buf, o);
	return o;
}
