/* kvio-gen — deterministic generator of realistic kvio captures (semantic +
 * device JSONL) for tests and the bench. Not a simulator: a plausible shape.
 *
 *   kvio-gen --sem S --ebpf E [--lines N] [--mode serialized|batched]
 *            [--ranks R] [--seed X] [--no-completions] [--serving V]  (--help)
 *
 * Objects of 256 KiB..32 MiB in fixed slots (header block at the slot start,
 * then 128 KiB payload commands), stored then loaded; serialized loads submit
 * one command after the previous completes (~83 us gaps), batched ones submit
 * an object's commands together. Every 97th object fails, slots are reused,
 * a few untagged metadata reads, completions a few lines early now and then.
 * --faults N: every Nth payload command alternately hits -EAGAIN (a first
 * attempt without completion, then a re-issue) or loses its completion; the
 * counts go to stderr as the ground truth for tests. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static int64_t jitter(int64_t base, int64_t spread) { return base + (int64_t)(rnd() % (uint64_t)(2 * spread + 1)) - spread; }

#define LBA 4096
#define CMD_BYTES (128 * 1024)
#define HDR_BYTES 4096
#define SLOT_BYTES (33ll * 1024 * 1024)
#define NSLOTS 64

struct line { int64_t ts; int kind; char *text; };
static struct line pend[64];
static int npend;
static FILE *fe;
static uint64_t lines_out;

/* device lines pass through a tiny reorder stage so output is nearly sorted,
 * with an occasional completion written before the command before it */
static void flush_pend(int all)
{
	while (npend > (all ? 0 : 32)) {
		int m = 0;
		for (int i = 1; i < npend; i++)
			if (pend[i].ts < pend[m].ts)
				m = i;
		fputs(pend[m].text, fe);
		free(pend[m].text);
		pend[m] = pend[--npend];
		lines_out++;
	}
}
static void dev_line(int64_t ts, int early, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static void dev_line(int64_t ts, int early, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	pend[npend].ts = early ? ts - 5000 : ts; /* sort key only */
	pend[npend].text = strdup(buf);
	npend++;
	flush_pend(0);
}

static int64_t base_ts = 5000000000000ll; /* ~83 min of uptime */
static uint64_t n_cmds;
static int kv_mode;       /* --kv: the tracer's NVMe KV lines (key_hex, no slba) */
static char cur_key[33];  /* --kv: the 16-byte key of the object being written, as hex */

static void cmd(int64_t ts, uint64_t ud, int write, uint64_t slba, uint32_t len)
{
	n_cmds++;
	if (kv_mode) { /* capture/monitor_out.c's --kv format; the metadata read has key 0 */
		dev_line(ts, 0,
			 "{\"event_type\":\"nvme_cmd\",\"pid\":4242,\"tid\":%d,\"user_data\":%" PRIu64
			 ",\"nvme_opcode\":%d,\"op_name\":\"%s\",\"nsid\":1,\"key_hex\":\"%s\",\"key_len\":16,"
			 "\"value_len\":%u,\"data_len\":%u,\"multipath\":0,\"cmd_op\":\"0xc0484e80\",\"rdev\":256901120,"
			 "\"comm\":\"python3\",\"ts\":%" PRId64 "}\n",
			 4300 + (int)(ud % 7), ud, write ? 1 : 2, write ? "store" : "retrieve",
			 ud >> 32 ? cur_key : "00000000000000000000000000000000", len, len, ts);
		(void)slba;
		return;
	}
	dev_line(ts, 0,
		 "{\"event_type\":\"nvme_cmd\",\"pid\":4242,\"tid\":%d,\"user_data\":%" PRIu64
		 ",\"nvme_opcode\":%d,\"op_name\":\"%s\",\"nsid\":1,\"slba\":%" PRIu64 ",\"nlb\":%u,"
		 "\"bytes\":%u,\"data_len\":%u,\"multipath\":0,\"cmd_op\":\"0xc0484e80\",\"rdev\":256901120,"
		 "\"comm\":\"python3\",\"ts\":%" PRId64 "}\n",
		 4300 + (int)(ud % 7), ud, write ? 1 : 2, write ? "write" : "read", slba, len / LBA, len, len, ts);
}
/* the tracer's own line formats (capture/monitor_out.c: fmt_cmd, fmt_cmp) */
static void cmp(int64_t ts, int64_t lat, uint64_t ud, int early)
{
	dev_line(ts, early,
		 "{\"event_type\":\"nvme_cmp\",\"user_data\":%" PRIu64 ",\"err\":0,\"status\":0,\"lat_ns\":%" PRId64
		 ",\"hwq\":%d,\"cid\":%d,\"ts\":%" PRId64 "}\n",
		 ud, lat, (int)(ud % 4), (int)(ud % 1024), ts);
}

static int completions = 1;
static uint64_t faults_every;             /* --faults N: every Nth payload command misbehaves */
static uint64_t read_slower_ns;           /* --read-slower-us N: every payload read N us slower */
static uint64_t n_eagain, n_lost, n_payload;

/* one object op; returns the op-end time */
static int64_t object_io(int64_t t, uint32_t tid, int write, int64_t slot, int64_t bytes, int serialized)
{
	uint32_t ctr = 0;
	int64_t last_end = t;
	uint64_t slba = slot / LBA;
	if (write) { /* header block first */
		uint64_t ud = (uint64_t)tid << 32 | ctr++;
		int64_t lat = jitter(30000, 5000);
		cmd(t, ud, 1, slba, HDR_BYTES);
		if (completions) cmp(t + lat, lat, ud, rnd() % 50 == 0);
		t += serialized ? lat + 3000 : 1000;
		last_end = t + lat;
	}
	slba += HDR_BYTES / LBA;
	int64_t ncmds = (bytes + CMD_BYTES - 1) / CMD_BYTES;
	for (int64_t k = 0; k < ncmds; k++) {
		uint64_t ud = (uint64_t)tid << 32 | ctr++;
		int64_t lat = serialized ? jitter(80000, 4000) : jitter(90000 + 15000 * (k % 8), 5000);
		if (!write)
			lat += (int64_t)read_slower_ns; /* a known shift for --compare's tests (no draw added) */
		n_payload++;
		if (faults_every && n_payload % faults_every == 0 && (n_payload / faults_every) % 2 == 1) {
			/* -EAGAIN: the first attempt never completes; the re-issue (same
			 * user_data, 2 us later) takes the completion */
			cmd(t, ud, write, slba, CMD_BYTES);
			n_eagain++;
			t += 2000;
		}
		cmd(t, ud, write, slba, CMD_BYTES);
		if (faults_every && n_payload % faults_every == 0 && (n_payload / faults_every) % 2 == 0)
			n_lost++; /* a completion the tracer never saw */
		else if (completions)
			cmp(t + lat, lat, ud, rnd() % 50 == 0);
		if (t + lat > last_end) last_end = t + lat;
		slba += CMD_BYTES / LBA;
		t += serialized ? lat + 3000 : jitter(1500, 500);
	}
	return (last_end > t ? last_end : t) + 40000;
}

static const char help[] =
	"usage: kvio-gen --sem S --ebpf E [--serving V] [--lines N] [--mode serialized|batched]\n"
	"                [--ranks R] [--seed X] [--no-completions] [--faults N] [--kv] [--read-slower-us N]\n\n"
	"Writes a deterministic, realistic capture (LMCache's semantic JSONL and the\n"
	"monitor's device JSONL) for trying kvio without an NVMe device, and for the\n"
	"tests and the bench. The same options give the same bytes.\n\n"
	"options:\n"
	"  --sem FILE            the semantic JSONL to write\n"
	"  --ebpf FILE           the device JSONL to write\n"
	"  --serving FILE        also write serving-layer request spans\n"
	"  --lines N             about N device lines (default 100000)\n"
	"  --mode M              serialized (loads at queue depth 1, the QD~1 bug; the\n"
	"                        default) or batched (an object's commands together)\n"
	"  --ranks R             tensor-parallel ranks, 1..8 (default 1)\n"
	"  --seed X              another deterministic capture (unsigned integer)\n"
	"  --no-completions      no nvme_cmp lines (a tracer without its completion probe)\n"
	"  --faults N            every Nth payload command alternately hits -EAGAIN or loses\n"
	"                        its completion; the counts go to stderr\n"
	"  --read-slower-us N    every payload read N us slower (the same draws otherwise:\n"
	"                        a known shift for comparing captures)\n"
	"  --kv                  NVMe Key-Value lines (the monitor's --kv: key_hex, key_len,\n"
	"                        value_len, store/retrieve) and key_hex on the semantic\n"
	"                        records, for kvio-ingest --join-by-key\n"
	"  -h, --help            this text\n\n"
	"EXAMPLES\n"
	"  kvio-gen --sem sem.jsonl --ebpf ebpf.jsonl --lines 200000\n"
	"  kvio-ingest -o trace.db --sem sem.jsonl --ebpf ebpf.jsonl && kvio-report trace.db\n\n"
	"exit status: 0 ok, 2 usage or I/O error\n";

/* A whole unsigned decimal of argument opt into *v; a usage error (printed)
 * and -1 otherwise. */
static int arg_u64(const char *opt, const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-') {
		fprintf(stderr, "kvio-gen: %s: '%s' is not an unsigned integer (see --help)\n", opt, s);
		return -1;
	}
	*v = x;
	return 0;
}

/* The command line. */
struct gen_args {
	const char *sem, *ebpf, *serving;
	uint64_t target, ranks, seed;
	int serialized;
};

/* The options into g (--seed also seeds rng, --kv, --no-completions and
 * --faults set their globals). -1 to go on, else the exit status (0 after
 * --help, 2 after a usage error, said). */
static int parse_args(int argc, char **argv, struct gen_args *g)
{
	*g = (struct gen_args){.target = 100000, .ranks = 1, .serialized = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(help, stdout);
			return 0;
		}
		if (!strcmp(a, "--no-completions")) {
			completions = 0;
			continue;
		}
		if (!strcmp(a, "--kv")) {
			kv_mode = 1;
			continue;
		}
		static const char *const with_value[] = {"--sem", "--ebpf", "--serving", "--lines", "--ranks",
							 "--seed", "--mode", "--faults", "--read-slower-us"};
		int known = 0;
		for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
			known |= !strcmp(a, with_value[k]);
		if (!known) {
			fprintf(stderr, "kvio-gen: unknown option '%s' (see --help)\n", a);
			return 2;
		}
		if (!v) {
			fprintf(stderr, "kvio-gen: %s needs a value (see --help)\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--sem")) g->sem = v;
		else if (!strcmp(a, "--ebpf")) g->ebpf = v;
		else if (!strcmp(a, "--serving")) g->serving = v;
		else if (!strcmp(a, "--lines")) { if (arg_u64(a, v, &g->target)) return 2; }
		else if (!strcmp(a, "--ranks")) { if (arg_u64(a, v, &g->ranks)) return 2; }
		else if (!strcmp(a, "--seed")) { if (arg_u64(a, v, &g->seed)) return 2; rng ^= g->seed * 0x2545f4914f6cdd1dull; }
		else if (!strcmp(a, "--faults")) { if (arg_u64(a, v, &faults_every)) return 2; }
		else if (!strcmp(a, "--read-slower-us")) { if (arg_u64(a, v, &read_slower_ns)) return 2; read_slower_ns *= 1000; }
		else if (!strcmp(v, "serialized") || !strcmp(v, "batched")) g->serialized = !strcmp(v, "serialized");
		else {
			fprintf(stderr, "kvio-gen: --mode: '%s' is neither serialized nor batched\n", v);
			return 2;
		}
	}
	if (!g->sem || !g->ebpf) {
		fprintf(stderr, "kvio-gen: need --sem FILE and --ebpf FILE (see --help)\n");
		return 2;
	}
	if (g->ranks < 1 || g->ranks > 8) {
		fprintf(stderr, "kvio-gen: --ranks: %llu is not in 1..8\n", (unsigned long long)g->ranks);
		return 2;
	}
	return -1;
}

/* Rank r of object obj (chunk `chunk`, bytes long) stored (write) or loaded as
 * trace_id tid from t0: its device commands, and its semantic record on fs.
 * Returns the time its op ended. */
static int64_t one_rank(FILE *fs, int64_t t0, uint32_t tid, int write, uint64_t obj, uint64_t chunk, int r,
			int ranks, int64_t bytes, int serialized)
{
	int64_t slot = ((obj + r) % NSLOTS) * SLOT_BYTES;
	int64_t ts_start = t0 + r * jitter(30000, 20000);
	int64_t pre = jitter(150000, 50000);
	int failed = (obj + r) % 97 == 13 && !write;
	snprintf(cur_key, sizeof cur_key, "%016" PRIx64 "%016" PRIx64, (uint64_t)chunk, (uint64_t)r + 1);
	int64_t end = object_io(ts_start + pre, tid, write, slot, bytes, serialized && !write);
	char key[160];
	if (ranks > 1)
		snprintf(key, sizeof key, "llama-8b@0x%08x@0@%016" PRIx64 "%016" PRIx64,
			 ranks << 24 | r << 16 | ranks << 8 | r, (uint64_t)(chunk * 0x9e3779b97f4a7c15ull), chunk);
	else
		snprintf(key, sizeof key, "vllm@llama-8b@1@0@%016" PRIx64 "%016" PRIx64,
			 (uint64_t)(chunk * 0x9e3779b97f4a7c15ull), chunk);
	fprintf(fs, "{\"trace_id\":%u,\"op\":\"%s\",\"key\":\"%s\",\"object_id\":%" PRIu64
		    ",\"part\":\"kv\",\"bytes\":%" PRId64 ",\"slot_offset\":%" PRId64
		    ",\"ts_start\":%.9f,\"ts\":%.9f,\"pid\":4242,\"instance\":\"i0\"%s%s%s%s}\n",
		tid, write ? "store" : "load", key, obj + r, bytes, slot, ts_start / 1e9,
		end / 1e9, failed ? ",\"error\":\"EIO\"" : "", kv_mode ? ",\"key_hex\":\"" : "",
		kv_mode ? cur_key : "", kv_mode ? "\"" : "");
	return end;
}

int main(int argc, char **argv)
{
	struct gen_args g;
	int prc = parse_args(argc, argv, &g);
	if (prc >= 0)
		return prc;
	const char *sem = g.sem, *ebpf = g.ebpf, *serving = g.serving;
	uint64_t target = g.target;
	int serialized = g.serialized;
	int ranks = (int)g.ranks;
	FILE *fs = fopen(sem, "w");
	fe = fopen(ebpf, "w");
	FILE *fv = serving ? fopen(serving, "w") : NULL;
	const char *bad = !fs ? sem : !fe ? ebpf : serving && !fv ? serving : NULL;
	if (bad) {
		fprintf(stderr, "kvio-gen: %s: cannot create: %s\n", bad, strerror(errno));
		return 2;
	}
	static char fsbuf[1 << 20], febuf[1 << 20];
	setvbuf(fs, fsbuf, _IOFBF, sizeof fsbuf);
	setvbuf(fe, febuf, _IOFBF, sizeof febuf);
	int64_t t = base_ts;
	fprintf(fe, "{\"event_type\":\"clock_anchor\",\"monotonic_ns\":%" PRId64 ",\"realtime_ns\":1764500000000000000}\n", t - 1000000);
	fprintf(fs, "{\"event_type\":\"kvio_meta\",\"kvio_schema\":2,\"pid\":4242,\"instance\":\"i0\","
		    "\"hostname\":\"gen\",\"device_path\":\"/dev/ng0n1\",\"io_engine\":\"raw_block\","
		    "\"use_uring_cmd\":true,\"block_align\":4096,\"header_bytes\":%d,\"slot_bytes\":%lld,"
		    "\"slot_count\":%d,\"max_data_transfer_size\":%d,\"ts_monotonic\":%.9f,\"ts_realtime\":1764500000.0}\n",
		    HDR_BYTES, SLOT_BYTES, NSLOTS, CMD_BYTES, (t - 2000000) / 1e9);
	static const int64_t sizes[] = {256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 32 << 20};
	uint32_t tid = 1;
	uint64_t obj = 0, chunk = 0;
	while (lines_out + npend < target) {
		int64_t bytes = sizes[rnd() % 6];
		chunk++;
		/* store the chunk on every rank, then load it back */
		for (int phase = 0; phase < 2; phase++) {
			int write = phase == 0;
			int64_t rank_end[8];
			int64_t t0 = t;
			for (int r = 0; r < ranks; r++) {
				int64_t end = one_rank(fs, t0, tid, write, obj, chunk, r, ranks, bytes, serialized);
				rank_end[r] = end;
				tid++;
				if (ranks == 1)
					t = end + jitter(100000, 30000);
			}
			if (ranks > 1) {
				int64_t mx = t0;
				for (int r = 0; r < ranks; r++) if (rank_end[r] > mx) mx = rank_end[r];
				t = mx + jitter(100000, 30000);
			}
			if (fv && !write)
				fprintf(fv, "{\"op\":\"load_ttft\",\"ts_start\":%.9f,\"ts\":%.9f,\"tokens\":%d,\"request_id\":\"r%" PRIu64 "\"}\n",
					t0 / 1e9, t / 1e9, 256 * (int)(bytes >> 20) + 16, chunk);
		}
		obj += ranks;
		if (chunk % 50 == 0) { /* untagged metadata read */
			uint64_t ud = 7;
			cmd(t, ud, 0, 0, 4096);
			if (completions) cmp(t + 20000, 20000, ud, 0);
			t += 40000;
		}
	}
	flush_pend(1);
	fprintf(fe, "{\"event_type\":\"drops\",\"dropped\":0}\n");
	fclose(fs);
	fclose(fe);
	if (fv) fclose(fv);
	/* the ground truth a test can hold the join against */
	fprintf(stderr, "kvio-gen: cmds=%llu eagain=%llu lost=%llu\n", (unsigned long long)n_cmds,
		(unsigned long long)n_eagain, (unsigned long long)n_lost);
	return 0;
}
