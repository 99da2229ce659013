/*
 * fuzz_ttyfilter.c - libFuzzer driver for sandbox/ttyfilter.c, the filter
 * between the command's pty and the user's terminal (it runs outside the
 * sandbox, on bytes the command chose).
 *
 * Invariants, in UTF-8, 8-bit, either, UTF-8-only and tmux's mode: no crash;
 * each call's output within SBX_TTYF_OUT(n); the output the same whether
 * the input comes whole or cut where its first byte says (a sequence
 * split over reads is read as one); no string introducer (DCS, SOS, PM, APC), no OSC but
 * titles and colour queries, no C0 but BEL..CR, SO, SI (and in UTF-8
 * CAN), no C1 (UTF-8: U+0080 to U+009F; 8-bit and either: no byte
 * 0x80-0x9F; UTF-8 only: U+0080 to U+009F, and no such byte but inside
 * a character) comes out; in UTF-8, read by an 8-bit terminal (round 39),
 * each byte of a character that starts a sequence there (0x90, 0x98,
 * 0x9b, 0x9d-0x9f) is cut by a CAN right after the character, and no
 * title holds such a byte (nor 0x9a, DECID, while no keys are read;
 * UTF-8 only: no 8-bit reading, round 40; tmux's mode: text as UTF-8
 * only, a title as UTF-8 but for DECID, whose answer tmux reads: review
 * of round 40);
 * no query (DA, DSR) nor report mode set
 * or turned off (mouse, focus..., the shell's own: bracketed paste,
 * cursor keys, keypad) when its answers are not read; the reset fits
 * its room.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../sandbox/ttyfilter.c"

#define MAX_IN 8192

static unsigned char whole[SBX_TTYF_OUT(MAX_IN)], cut[SBX_TTYF_OUT(MAX_IN) + SBX_TTYF_OUT(1) * 64];

static void check_allowed(const unsigned char *out, size_t o, int cs, bool answers)
{
	for (size_t i = 0; i < o; i++) {
		unsigned char c = out[i], nx = i + 1 < o ? out[i + 1] : 0;

		if (c == 0x1b) {
			if (nx == 'P' || nx == '_' || nx == '^' || nx == 'X' || nx == '%' || nx == ' ')
				abort();
			if (nx == ']' && (i + 2 >= o || out[i + 2] == '\0' || strchr("0124", out[i + 2]) == NULL))
				abort();
			/* no title byte an 8-bit terminal reads as the start
			 * of a sequence, nor DECID while no keys are read
			 * (review of round 39: the others pass; the title
			 * may end there, the rest text) */
			for (size_t j = i + 2; nx == ']' && cs != SBX_TTYF_UTF8_ONLY && j < o && out[j] != 0x07 &&
					       out[j] != 0x1b;
			     j++)
				if (out[j] == 0x90 || out[j] == 0x98 || out[j] == 0x9b || (out[j] >= 0x9d && out[j] <= 0x9f) ||
				    (out[j] == 0x9a && !answers && cs != SBX_TTYF_UTF8_MUX))
					abort();
			if (!answers && nx == '[' && i + 2 < o && out[i + 2] == 'c')
				abort();
			/* no report mode set while no keys are read */
			if (!answers && nx == '[' && i + 2 < o && out[i + 2] == '?') {
				size_t j = i + 3;

				while (j < o && ((out[j] >= '0' && out[j] <= '9') || out[j] == ';'))
					j++;
				/* nor the shell's own turned off (review of
				 * round 38: ?2004l, its bracketed paste) */
				if (j < o && (out[j] == 'h' || out[j] == 'l'))
					for (size_t k = i + 3; k <= j; k++) {
						unsigned w = 0;

						while (k < j && out[k] >= '0' && out[k] <= '9')
							w = w > 100000 ? w : w * 10 + (unsigned)(out[k++] - '0');
						if (report_mode(w))
							abort();
					}
			}
			/* nor what keys send (round 38): the keypad, kitty's
			 * flags pushed or set, XTMODKEYS set or disabled */
			if (!answers && nx == '=')
				abort();
			if (!answers && nx == '[' && i + 2 < o && (out[i + 2] == '>' || out[i + 2] == '=')) {
				size_t j = i + 3;

				while (j < o && ((out[j] >= '0' && out[j] <= '9') || out[j] == ';'))
					j++;
				if (j < o && (out[j] == 'u' || (out[i + 2] == '>' && out[j] == 'n') ||
					      (out[i + 2] == '>' && out[j] == 'm' &&
					       memchr(out + i + 3, ';', j - i - 3) != NULL)))
					abort();
			}
			continue;
		}
		if (c < 0x20 && !(c >= 0x07 && c <= 0x0f) && !(cs == SBX_TTYF_UTF8 && c == 0x18))
			abort();
		/* an 8-bit terminal's sequence started inside a character:
		 * cut by a CAN after it (its other bytes are 0x80-0xbf) */
		if (cs == SBX_TTYF_UTF8 && (c == 0x90 || c == 0x98 || c == 0x9b || (c >= 0x9d && c <= 0x9f)) &&
		    i > 0 && out[i - 1] >= 0x80) {
			size_t j = i + 1;

			while (j < o && out[j] >= 0x80 && out[j] <= 0xbf)
				j++;
			if (j >= o || out[j] != 0x18)
				abort();
		}
		if ((cs == SBX_TTYF_UTF8 || cs == SBX_TTYF_UTF8_ONLY || cs == SBX_TTYF_UTF8_MUX) && c == 0xc2 &&
		    nx >= 0x80 && nx < 0xa0)
			abort();
		if (cs != SBX_TTYF_UTF8 && cs != SBX_TTYF_UTF8_ONLY && cs != SBX_TTYF_UTF8_MUX && c >= 0x80 && c < 0xa0)
			abort();
		/* UTF-8 only (round 40): such a byte inside a character only */
		if ((cs == SBX_TTYF_UTF8_ONLY || cs == SBX_TTYF_UTF8_MUX) && c >= 0x80 && c < 0xa0 && (i == 0 || out[i - 1] < 0x80))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char reset[SBX_TTYF_RESET];

	if (size < 1 || size > MAX_IN)
		return 0;
	for (int mode = 0; mode <= SBX_TTYF_UTF8_MUX; mode++) {
		struct sbx_ttyf f;
		size_t ow, oc = 0, step = 1 + data[0] % 13;

		bool answers = data[0] & 0x80;

		sbx_ttyf_init(&f, mode, answers);
		ow = sbx_ttyf_feed(&f, data, size, whole);
		if (ow > SBX_TTYF_OUT(size))
			abort();
		check_allowed(whole, ow, mode, answers);
		if (sbx_ttyf_reset(&f, data[0] * 9u, reset, sizeof(reset)) > sizeof(reset))
			abort();
		sbx_ttyf_init(&f, mode, answers);
		for (size_t off = 0; off < size; off += step) {
			size_t n = size - off < step ? size - off : step;
			size_t got = sbx_ttyf_feed(&f, data + off, n, cut + oc);

			if (got > SBX_TTYF_OUT(n))
				abort();
			oc += got;
		}
		if (oc != ow || memcmp(cut, whole, ow) != 0)
			abort();
		/* the keys taken away and given back (a stop, bg, fg): each
		 * within its bound, nothing of the kind meanwhile */
		{
			size_t half = size / 2, got;

			sbx_ttyf_init(&f, mode, true);
			got = sbx_ttyf_feed(&f, data, half, whole);
			if (got > SBX_TTYF_OUT(half))
				abort();
			if (sbx_ttyf_withdraw(&f, (data[0] & 1) != 0, whole) > SBX_TTYF_REPLAY)
				abort();
			got = sbx_ttyf_feed(&f, data + half, size - half, whole);
			if (got > SBX_TTYF_OUT(size - half))
				abort();
			check_allowed(whole, got, mode, false);
			f.answers = true;
			if (sbx_ttyf_feed(&f, whole, 0, whole) > SBX_TTYF_OUT(0))
				abort();
		}
	}
	return 0;
}
