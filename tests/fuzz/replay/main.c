/*
 * replay/main.c - runs a libFuzzer driver without libFuzzer, as part of
 * `make test` (gcc, ASan+UBSan; `make fuzz` needs clang).
 *
 * Usage: DRIVER [-n RUNS] [-t SECONDS] [-T SECONDS] SEED...
 * (RUNS per seed, 2000 by default; -t: SECONDS in all, 60, shared by the
 * seeds; -T: SECONDS one input may take, 10, past which it counts as a
 * hang, like libFuzzer's -timeout)
 * Each seed (a file of tests/fuzz/corpus/DRIVER/) is given to the driver
 * as it is, then RUNS times mutated (bit flips, bytes set to values
 * parsers care about, inserted, deleted or repeated runs, a cut, a piece
 * of another seed spliced in; one to four at a time). The mutations are
 * drawn from a fixed seed, so a run is the same every time; the input a
 * sanitizer dies on (or that aborts, or hangs) is written to
 * $FUZZ_REPLAY_CRASH (default ./replay-crash) to be replayed alone:
 * DRIVER -n 0 FILE. A leak is found per seed (LeakSanitizer after each
 * seed's runs): no single input is written then, the seed is named.
 */
#include <errno.h>
#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Mutated inputs grow to at most this. */
#define REPLAY_MAX_INPUT (64 * 1024)

struct seed {
	const char *path;
	uint8_t *data;
	size_t len;
};

/* The input being run, for the death callback and the signal handlers;
 * the crash file's name, read before any input runs. */
static const uint8_t *volatile cur_data;
static volatile size_t cur_len;
static const char *crash_path = "replay-crash";

static void say(const char *s)
{
	(void)!write(2, s, strlen(s));
}

/* Writes the input being run to crash_path (async-signal-safe: called
 * from the SIGALRM and SIGABRT handlers too). Without one (a leak found
 * at exit, after every input), nothing is written and that is said. */
static void keep_input(const char *what)
{
	const uint8_t *data = cur_data;
	size_t len = cur_len, off = 0;
	int fd;

	say("replay: ");
	say(what);
	if (data == NULL) {
		say(": no input was running (a leak found at exit?); nothing kept\n");
		return;
	}
	fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		say(": the input could not be kept\n");
		return;
	}
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	(void)close(fd);
	say(": the input is in ");
	say(crash_path);
	say("\n");
}

static void on_death(void)
{
	keep_input("a sanitizer stopped the run");
}

/* An input that runs past -T: a hang, which no sanitizer reports and the
 * -t budget (checked between inputs) never ends. */
static void on_alarm(int sig)
{
	(void)sig;
	keep_input("an input ran past its time (a hang)");
	_exit(3);
}

/* abort() (an assert in the code under test): ASan leaves SIGABRT alone
 * by default. The input is kept, then the default action. */
static void on_abort(int sig)
{
	keep_input("the driver aborted");
	(void)signal(sig, SIG_DFL);
	(void)raise(sig);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static size_t below(size_t n)
{
	return n == 0 ? 0 : (size_t)(rnd() % n);
}

static int read_seed(const char *path, struct seed *s)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t off = 0;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > REPLAY_MAX_INPUT) {
		fprintf(stderr, "replay: %s: %s\n", path,
			fd < 0 ? strerror(errno) : "not a regular file of at most 64 KiB");
		if (fd >= 0)
			(void)close(fd);
		return -1;
	}
	s->path = path;
	s->len = (size_t)st.st_size;
	s->data = malloc(s->len + 1);
	if (s->data == NULL) {
		(void)close(fd);
		return -1;
	}
	while (off < s->len) {
		ssize_t n = read(fd, s->data + off, s->len - off);
		if (n <= 0) {
			fprintf(stderr, "replay: %s: short read\n", path);
			free(s->data);
			s->data = NULL;
			(void)close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	(void)close(fd);
	return 0;
}

/* One mutation of buf[0..*len) in place (capacity REPLAY_MAX_INPUT). */
static void mutate_once(uint8_t *buf, size_t *len, const struct seed *seeds, size_t nseeds)
{
	static const uint8_t special[] = {0, 0xff, 0x7f, 0x80, '\r', '\n', ':', ' ', '%', '"', '\\',
					  '/', '.', '[', ']', '0', '9', 'A', '=', '-', ';', '\t'};
	size_t n = *len, at = below(n + 1), k;

	switch (rnd() % 8) {
	case 0: /* flip a bit */
		if (n > 0)
			buf[below(n)] ^= (uint8_t)(1u << (rnd() % 8));
		break;
	case 1: /* a byte set to a value parsers care about */
		if (n > 0)
			buf[below(n)] = special[below(sizeof(special))];
		break;
	case 2: /* insert a byte */
		if (n < REPLAY_MAX_INPUT) {
			memmove(buf + at + 1, buf + at, n - at);
			buf[at] = rnd() % 2 ? special[below(sizeof(special))] : (uint8_t)rnd();
			*len = n + 1;
		}
		break;
	case 3: /* delete a run */
		k = below(n - at + 1);
		if (k > 16)
			k = 16;
		memmove(buf + at, buf + at + k, n - at - k);
		*len = n - k;
		break;
	case 4: /* repeat a run */
		k = below(n - at + 1);
		if (k > 64)
			k = 64;
		if (n + k <= REPLAY_MAX_INPUT) {
			memmove(buf + at + k, buf + at, n - at);
			*len = n + k;
		}
		break;
	case 5: /* cut */
		*len = at;
		break;
	case 6: { /* a piece of another seed, spliced in */
		const struct seed *o = &seeds[below(nseeds)];
		size_t from = below(o->len + 1), m = below(o->len - from + 1);
		if (n + m <= REPLAY_MAX_INPUT) {
			memmove(buf + at + m, buf + at, n - at);
			memcpy(buf + at, o->data + from, m);
			*len = n + m;
		}
		break;
	}
	default: /* a run of a byte made longer or shorter: a size field */
		if (n > 0) {
			size_t p = below(n);
			buf[p] = (uint8_t)(buf[p] + (rnd() % 2 ? 1 : -1));
		}
		break;
	}
}

static unsigned input_seconds = 10;

/* Milliseconds on the monotonic clock. */
static long long now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void run_one(const uint8_t *data, size_t len)
{
	/* A copy of the exact size, so ASan sees a read past the end. */
	uint8_t *copy = malloc(len ? len : 1);

	if (copy == NULL)
		abort();
	memcpy(copy, data, len);
	cur_len = len;
	cur_data = copy;
	(void)alarm(input_seconds);
	(void)LLVMFuzzerTestOneInput(copy, len);
	(void)alarm(0);
	cur_data = NULL;
	free(copy);
}

int main(int argc, char **argv)
{
	long runs = 2000, seconds = 60;
	struct seed *seeds;
	size_t nseeds = 0, total = 0, cut = 0;
	uint8_t *buf;
	time_t start = time(NULL);
	int opt;

	long per_input = 10;

	while ((opt = getopt(argc, argv, "n:t:T:")) != -1) {
		if (opt == 'n')
			runs = strtol(optarg, NULL, 10);
		else if (opt == 't')
			seconds = strtol(optarg, NULL, 10);
		else if (opt == 'T')
			per_input = strtol(optarg, NULL, 10);
		else
			return 2;
	}
	if (optind >= argc || runs < 0 || seconds <= 0 || per_input <= 0 || per_input > 86400) {
		fprintf(stderr, "usage: %s [-n RUNS] [-t SECONDS] [-T SECONDS] SEED...\n", argv[0]);
		return 2;
	}
	input_seconds = (unsigned)per_input;
	if (getenv("FUZZ_REPLAY_CRASH") != NULL)
		crash_path = getenv("FUZZ_REPLAY_CRASH");
	(void)signal(SIGALRM, on_alarm);
	(void)signal(SIGABRT, on_abort);
	if (LLVMFuzzerInitialize != NULL && LLVMFuzzerInitialize(&argc, &argv) != 0)
		return 1;
	__sanitizer_set_death_callback(on_death);
	seeds = calloc((size_t)(argc - optind), sizeof(*seeds));
	buf = malloc(REPLAY_MAX_INPUT);
	if (seeds == NULL || buf == NULL)
		return 1;
	for (int i = optind; i < argc; i++) {
		if (read_seed(argv[i], &seeds[nseeds]) != 0) {
			/* A shell leaves an empty corpus's glob as it is
			 * ("corpus/DRIVER/" and a star): said, and nothing leaked (the
			 * leak report buried the reason). */
			if (strchr(argv[i], '*') != NULL)
				fprintf(stderr, "replay: %s: an empty corpus? every driver needs a seed\n", argv[i]);
			for (size_t k = 0; k < nseeds; k++)
				free(seeds[k].data);
			free(seeds);
			free(buf);
			return 1;
		}
		nseeds++;
	}
	for (size_t s = 0; s < nseeds; s++) {
		/* Each seed gets its share of the time, in milliseconds: in
		 * whole seconds, 7 seeds of a 20 s budget had 2 s each, of
		 * which the first tick of time() took anything up to one. */
		long long until = now_ms() + seconds * 1000 / (long)nseeds;

		run_one(seeds[s].data, seeds[s].len);
		total++;
		rng_state = 0x9e3779b97f4a7c15ull ^ (uint64_t)(s + 1) * 0xbf58476d1ce4e5b9ull;
		for (long r = 0; r < runs; r++) {
			size_t len = seeds[s].len;
			unsigned stack = 1 + (unsigned)(rnd() % 4);

			memcpy(buf, seeds[s].data, len);
			for (unsigned m = 0; m < stack; m++)
				mutate_once(buf, &len, seeds, nseeds);
			run_one(buf, len);
			total++;
			if ((r & 63) == 63 && now_ms() >= until) {
				/* A slow machine runs fewer: said, so a run that
				 * passed here is not taken for the whole. */
				cut++;
				break;
			}
		}
		/* A leak is only found at exit otherwise, with no input to
		 * name: checked after each seed's runs, the seed is named. */
		if (__lsan_do_recoverable_leak_check() != 0) {
			fprintf(stderr, "replay: a leak in the runs of seed %s (no single input is kept)\n",
				seeds[s].path);
			return 1;
		}
	}
	printf("%zu inputs from %zu seeds in %ld s", total, nseeds, (long)(time(NULL) - start));
	if (cut > 0)
		printf(" (%zu seeds cut short by the time limit: fewer than %ld mutations each)", cut, runs);
	printf("\n");
	(void)fflush(stdout);
	for (size_t s = 0; s < nseeds; s++)
		free(seeds[s].data);
	free(seeds);
	free(buf);
	return 0;
}
