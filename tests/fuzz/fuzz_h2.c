/*
 * fuzz_h2.c - libFuzzer driver for proxy/h2.c: a whole HTTP/2 session
 * through the proxy's stream engine, between a scripted client and a
 * fake upstream, both nghttp2 sessions of the driver, over socket pairs
 * on a real connection (conn_new() on one end, conn_h2_begin()).
 *
 * The policy allows api.example.com with GET and POST only and masks
 * PV_FZ_TOK (injectHosts api.example.com, injectIn header and body). The
 * input is a script, one op per byte, each taking its operands from the
 * bytes that follow:
 *
 *   0 HEADERS: method index, flags (END_STREAM, authority choice),
 *     a value string (placeholders below) for x-fz and one for :path
 *   1 DATA on the last stream: a string, flags (END_STREAM)
 *   2 RST_STREAM on the last stream
 *   3 raw bytes (length, bytes) straight into the client's byte stream
 *   4 PING; 5 WINDOW_UPDATE; 6 let the loop run (the upstream answers)
 *
 * In strings, byte 0x01 stands for the sentinel of PV_FZ_TOK and 0x02
 * for its real value. The fake upstream answers each request with the
 * real value in a header, in DATA split across two frames and in a
 * trailer. Invariants (abort on violation):
 *  - no real value reaches the client: not in its raw bytes (DATA), not
 *    in any field the driver's client session decodes;
 *  - the upstream never gets a method other than GET or POST, an
 *    :authority other than api.example.com, or the sentinel in a field
 *    value or DATA (it is injected there).
 *
 * Build with `make fuzz`; run e.g.
 *   build/fuzz/fuzz_h2 build/fuzz/corpus-fuzz_h2 tests/fuzz/corpus/fuzz_h2
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include "../../mask/mask.h"
#include "../../policy/policy.h"
#include "../../proxy/conn_int.h"
#include "../../proxy/h2.h"
#include "../../proxy/log.h"
#include "../../proxy/proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_TOK "ghp_Fz7Hd9Qm2Lp4Vt6Nw8Bc1Zs3Ky5Fj0Gh2Tq"
#define FZ_STR_MAX 512

static proxy_t *fz_px;
static char fz_sent[64];

static void fz_init(void)
{
	static const char doc[] = "network:\n"
				  "  allowedDomains: [api.example.com]\n"
				  "  allowedMethods: {api.example.com: [GET, POST]}\n"
				  "credentials:\n"
				  "  envVars:\n"
				  "    - {name: PV_FZ_TOK, mode: mask, injectHosts: [api.example.com],\n"
				  "       injectIn: [header, body]}\n";
	FILE *diag = fopen("/dev/null", "w");
	unsigned nerr = 0;
	mask_table_t *t;
	policy_t *p;
	char err[256];

	setenv("PV_FZ_TOK", FZ_TOK, 1);
	log_set_level(LOG_LEVEL_QUIET);
	p = policy_load_buffer("fuzz.yaml", doc, sizeof(doc) - 1, diag != NULL ? diag : stderr, &nerr);
	if (diag != NULL)
		fclose(diag);
	if (p == NULL || (t = mask_table_new(p, err, sizeof(err))) == NULL)
		abort();
	for (size_t i = 0; i < mask_table_env_count(t); i++) {
		const char *sent;

		(void)mask_table_env_get(t, i, &sent);
		snprintf(fz_sent, sizeof(fz_sent), "%s", sent);
	}
	fz_px = proxy_new(p, NULL, NULL, "0000000000000000");
	if (fz_px == NULL)
		abort();
	proxy_set_masks(fz_px, t);
}

static bool has(const void *hay, size_t len, const char *needle)
{
	return memmem(hay, len, needle, strlen(needle)) != NULL;
}

/* ---- the fake upstream --------------------------------------------------- */

struct fz_up {
	nghttp2_session *s;
	int32_t last;
	int stage; /* of the answer being sent (data provider) */
};

static int up_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *n, size_t nl, const uint8_t *v,
		     size_t vl, uint8_t fl, void *u)
{
	(void)s;
	(void)f;
	(void)fl;
	(void)u;
	if (nl == 7 && memcmp(n, ":method", 7) == 0 && !(vl == 3 && memcmp(v, "GET", 3) == 0) &&
	    !(vl == 4 && memcmp(v, "POST", 4) == 0))
		abort(); /* a method the policy refuses reached the upstream */
	if (nl == 10 && memcmp(n, ":authority", 10) == 0 && !(vl == 15 && memcmp(v, "api.example.com", 15) == 0))
		abort(); /* another authority reached the upstream */
	if (has(v, vl, fz_sent))
		abort(); /* a sentinel reached the inject host in a field */
	if (getenv("FZ_H2_TRACE") != NULL)
		fprintf(stderr, "upstream got %.*s: %.*s\n", (int)nl, n, (int)vl, v);
	return 0;
}

static int up_data(nghttp2_session *s, uint8_t fl, int32_t id, const uint8_t *d, size_t n, void *u)
{
	(void)s;
	(void)fl;
	(void)id;
	(void)u;
	if (has(d, n, fz_sent))
		abort(); /* a sentinel reached the inject host in a body */
	return 0;
}

/* The body: the real value in two DATA frames, then trailers. */
static ssize_t up_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
		       nghttp2_data_source *src, void *u)
{
	static const char body[] = "{\"token\":\"" FZ_TOK "\"}";
	size_t half = sizeof(body) / 2, n;
	intptr_t stage = (intptr_t)src->ptr;
	nghttp2_nv trl[] = {{(uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, 0},
			    {(uint8_t *)"x-t", (uint8_t *)FZ_TOK, 3, sizeof(FZ_TOK) - 1, 0}};

	(void)u;
	n = stage == 0 ? half : sizeof(body) - 1 - half;
	if (n > len)
		n = len;
	memcpy(buf, body + (stage == 0 ? 0 : half), n);
	src->ptr = (void *)(stage + 1);
	if (stage >= 1) {
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		(void)nghttp2_submit_trailer(s, id, trl, 2);
	}
	return (ssize_t)n;
}

static int up_frame(nghttp2_session *s, const nghttp2_frame *f, void *u)
{
	nghttp2_nv nv[] = {{(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
			   {(uint8_t *)"x-echo", (uint8_t *)FZ_TOK, 6, sizeof(FZ_TOK) - 1, 0}};
	nghttp2_data_provider prd;

	(void)u;
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		prd.source.ptr = (void *)0;
		prd.read_callback = up_read;
		(void)nghttp2_submit_response(s, f->hd.stream_id, nv, 2, &prd);
	}
	return 0;
}

/* ---- the scripted client -------------------------------------------------- */

static int cl_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *n, size_t nl, const uint8_t *v,
		     size_t vl, uint8_t fl, void *u)
{
	(void)s;
	(void)f;
	(void)fl;
	(void)u;
	if (has(v, vl, FZ_TOK) || has(n, nl, FZ_TOK))
		abort(); /* a real value reached the client in a field */
	if (getenv("FZ_H2_TRACE") != NULL) /* to see that a seed goes through */
		fprintf(stderr, "client got %.*s: %.*s\n", (int)nl, n, (int)vl, v);
	return 0;
}

/* A string operand: length byte, then bytes with placeholders expanded. */
static size_t take_str(const uint8_t **p, const uint8_t *end, char *out)
{
	size_t len, o = 0;

	if (*p >= end)
		return 0;
	len = **p % 64;
	(*p)++;
	for (size_t i = 0; i < len && *p < end && o + 64 < FZ_STR_MAX; i++, (*p)++) {
		const char *ins = **p == 1 ? fz_sent : **p == 2 ? FZ_TOK : NULL;

		if (ins != NULL) {
			memcpy(out + o, ins, strlen(ins));
			o += strlen(ins);
		} else {
			out[o++] = (char)**p;
		}
	}
	out[o] = '\0';
	return o;
}

/* Moves what session s wants to send to fd; what fd holds into session r. */
static void pump_out(nghttp2_session *s, int fd)
{
	const uint8_t *p;
	ssize_t n;

	while ((n = nghttp2_session_mem_send(s, &p)) > 0)
		if (write(fd, p, (size_t)n) != n)
			return;
}

static void pump_in(nghttp2_session *s, int fd, bool check_raw)
{
	uint8_t buf[16384];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (check_raw && has(buf, (size_t)n, FZ_TOK))
			abort(); /* a real value reached the client's bytes */
		(void)nghttp2_session_mem_recv(s, buf, (size_t)n);
	}
}

static void settle(int cfd, int ufd, nghttp2_session *cl, struct fz_up *up)
{
	for (int i = 0; i < 6; i++) {
		(void)event_base_loop(proxy_base(fz_px), EVLOOP_NONBLOCK);
		pump_in(up->s, ufd, false);
		pump_out(up->s, ufd);
		(void)event_base_loop(proxy_base(fz_px), EVLOOP_NONBLOCK);
		pump_in(cl, cfd, true);
		pump_out(cl, cfd);
	}
}

static nghttp2_session *session(bool server, void *arg)
{
	nghttp2_session_callbacks *cb;
	nghttp2_session *s = NULL;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		abort();
	if (server) {
		nghttp2_session_callbacks_set_on_header_callback(cb, up_header);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, up_data);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cb, up_frame);
		if (nghttp2_session_server_new(&s, cb, arg) != 0)
			abort();
	} else {
		nghttp2_session_callbacks_set_on_header_callback(cb, cl_header);
		if (nghttp2_session_client_new(&s, cb, arg) != 0)
			abort();
	}
	nghttp2_session_callbacks_del(cb);
	(void)nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0);
	return s;
}

/* Runs one op of the script; returns the bytes after it. */
static const uint8_t *op(const uint8_t *p, const uint8_t *end, nghttp2_session *cl, int cfd, int32_t *last)
{
	static const char *const methods[] = {"GET", "POST", "DELETE", "TRACE", "CONNECT", "PUT"};
	char a[FZ_STR_MAX], b[FZ_STR_MAX];
	uint8_t o = *p++, f;

	switch (o % 7) {
	case 0: {
		const char *m;
		nghttp2_nv nv[5];
		size_t nn = 0, al, bl;

		if (end - p < 2)
			return end;
		m = methods[*p++ % 6];
		f = *p++;
		al = take_str(&p, end, a);
		bl = take_str(&p, end, b + 1);
		b[0] = '/';
#define NV(k, v, l) ((nghttp2_nv){(uint8_t *)(k), (uint8_t *)(v), strlen(k), (l), NGHTTP2_NV_FLAG_NONE})
		nv[nn++] = NV(":method", m, strlen(m));
		nv[nn++] = NV(":scheme", "https", 5);
		nv[nn++] = NV(":path", b, bl + 1);
		nv[nn++] = NV(":authority", (f & 2) ? "evil.example.com" : "api.example.com", (f & 2) ? 16 : 15);
		nv[nn++] = NV("x-fz", a, al);
#undef NV
		/* Without END_STREAM the stream takes DATA ops. */
		*last = nghttp2_submit_headers(cl, (f & 1) ? NGHTTP2_FLAG_END_STREAM : NGHTTP2_FLAG_NONE, -1, NULL, nv,
					       nn, NULL);
		break;
	}
	case 1: {
		size_t l = take_str(&p, end, a);

		f = p < end ? *p++ : 0;
		/* Raw DATA frame for the last stream (nghttp2's client has no
		 * push API for ad hoc DATA without a provider). */
		if (*last > 0) {
			uint8_t hd[9] = {(uint8_t)(l >> 16), (uint8_t)(l >> 8), (uint8_t)l, 0, (uint8_t)(f & 1),
					 (uint8_t)(*last >> 24), (uint8_t)(*last >> 16), (uint8_t)(*last >> 8),
					 (uint8_t)*last};

			pump_out(cl, cfd);
			if (write(cfd, hd, 9) != 9 || write(cfd, a, l) != (ssize_t)l)
				return end;
		}
		break;
	}
	case 2:
		if (*last > 0)
			(void)nghttp2_submit_rst_stream(cl, NGHTTP2_FLAG_NONE, *last, NGHTTP2_CANCEL);
		break;
	case 3: {
		size_t l = p < end ? *p++ : 0;

		if (l > (size_t)(end - p))
			l = (size_t)(end - p);
		pump_out(cl, cfd);
		if (write(cfd, p, l) != (ssize_t)l)
			return end;
		p += l;
		break;
	}
	case 4:
		(void)nghttp2_submit_ping(cl, NGHTTP2_FLAG_NONE, NULL);
		break;
	case 5:
		(void)nghttp2_submit_window_update(cl, NGHTTP2_FLAG_NONE, *last > 0 ? *last : 0, 1 << 16);
		break;
	default:
		return p; /* op 6: the caller lets the loop run */
	}
	return p;
}

static void fz_drive(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_drive(arg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int cs[2], us[2];
	struct sockaddr_storage ss;
	struct bufferevent *ub;
	nghttp2_session *cl;
	struct fz_up up = {0};
	const uint8_t *p = data, *end = data + size;
	int32_t last = -1;
	conn_t *c;

	if (fz_px == NULL)
		fz_init();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, cs) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, us) < 0)
		abort();
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	c = conn_new(fz_px, cs[0], (struct sockaddr *)&ss, sizeof(sa_family_t), true);
	ub = bufferevent_socket_new(proxy_base(fz_px), us[0], BEV_OPT_CLOSE_ON_FREE);
	if (c == NULL || ub == NULL)
		abort();
	if (conn_target_connect(c, "api.example.com:443", 19) != NULL || conn_target_authority(c, 443) < 0)
		abort();
	c->up.bev = ub;
	bufferevent_setcb(ub, fz_drive, fz_drive, conn_up_event_cb, c);
	(void)bufferevent_enable(ub, EV_READ | EV_WRITE);
	if (conn_h2_begin(c) == STEP_CLOSED)
		abort();
	cl = session(false, NULL);
	up.s = session(true, &up);
	pump_out(cl, cs[1]);
	while (p < end) {
		p = op(p, end, cl, cs[1], &last);
		pump_out(cl, cs[1]);
		settle(cs[1], us[1], cl, &up);
	}
	settle(cs[1], us[1], cl, &up);
	conn_close_all(proxy_conn_list(fz_px));
	nghttp2_session_del(cl);
	nghttp2_session_del(up.s);
	close(cs[1]);
	close(us[1]);
	return 0;
}
