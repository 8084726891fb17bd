// SPDX-License-Identifier: GPL-2.0
/* nvme_uring_cmd_monitor — io_uring NVMe passthrough commands and their device
 * completions as JSON Lines (the device stream kvio-ingest reads).
 *
 * One line per command (nvme_cmd) and per completion (nvme_cmp), cq_overflow
 * where the kernel has the probe, clock_anchor at start and every 10 s, and a
 * final drops line with the ring-buffer reserve failures. Output is buffered,
 * flushed every second and on SIGINT/SIGTERM, so the file always ends on a
 * whole line and can be read while it grows. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "monitor_out.h"
#include "nvme_uring_cmd_monitor.h"
#include "nvme_uring_cmd_monitor.skel.h"
#include "probes.h"

static struct env {
	const char *jsonl;   /* --jsonl, default stdout */
	unsigned lba_size;   /* --lba-size, bytes per LBA for "bytes" */
	unsigned pid;        /* --pid, 0 = all */
	int duration;        /* --dur seconds, 0 = until SIGINT/SIGTERM */
	int kv;              /* --kv: NVMe Key-Value command set */
	int stats;           /* --stats: BPF run time per program at exit */
	int verbose;
} env = {
	.lba_size = 512,
};

static const char doc[] =
	"usage: nvme_uring_cmd_monitor [--jsonl FILE] [--lba-size N] [--pid P] [--dur S] [--kv] [--stats]\n\n"
	"Traces io_uring NVMe passthrough (IORING_OP_URING_CMD on /dev/ngXnY): one JSON line per\n"
	"command and per device completion; trace_id = user_data >> 32 joins them to KV objects.\n\n"
	"  --jsonl FILE   write here (default: stdout)\n"
	"  --lba-size N   namespace LBA size in bytes, for the bytes field (default 512)\n"
	"  --pid P        only this process\n"
	"  --dur S        stop after S seconds (default: until SIGINT/SIGTERM)\n"
	"  --kv           NVMe Key-Value namespaces: key_hex/key_len/value_len, op names\n"
	"                 store/retrieve/delete/exist/list\n"
	"  --stats        at exit, print each BPF program's run count and ns per run\n"
	"                 (needs sysctl kernel.bpf_stats_enabled=1)\n"
	"  -v             libbpf debug output\n\n"
	"EXAMPLES\n"
	"  sudo nvme_uring_cmd_monitor --jsonl ebpf.jsonl --lba-size 4096 &\n"
	"  sudo nvme_uring_cmd_monitor --pid 4242 --dur 60 --jsonl ebpf.jsonl\n"
	"  kvio-ingest -o trace.db --sem sem.jsonl --ebpf ebpf.jsonl\n\n"
	"Needs root, BTF for vmlinux and nvme_core, and fentry support.\n\n"
	"exit status: 0 stopped (SIGINT/SIGTERM or --dur), every line written; 1 the output cannot\n"
	"  be opened or written (lines were lost), the probes cannot be loaded or attached, or the\n"
	"  ring buffer failed; 2 usage error\n";

static volatile sig_atomic_t exiting;
static FILE *out;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

/* The program libbpf last complained about ("prog 'NAME': ..."), so the
 * degrade step can switch off exactly that probe. */
static char failed_prog[64];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, args);
	const char *p = strstr(msg, "prog '");
	if (p && level != LIBBPF_DEBUG) {
		p += 6;
		size_t n = strcspn(p, "'");
		if (n < sizeof failed_prog) {
			memcpy(failed_prog, p, n);
			failed_prog[n] = 0;
		}
	}
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	return fputs(msg, stderr);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	char line[MONITOR_LINE_MAX];
	size_t n = 0;
	unsigned kind;
	if (size < sizeof kind)
		return 0;
	memcpy(&kind, data, sizeof kind);
	if (kind == EV_CMD && size >= sizeof(struct cmd_event))
		n = fmt_cmd(line, data, env.lba_size, env.kv);
	else if (kind == EV_CMP && size >= sizeof(struct cmp_event))
		n = fmt_cmp(line, data);
	else if (kind == EV_OVF && size >= sizeof(struct ovf_event))
		n = fmt_ovf(line, data);
	if (n)
		fwrite(line, 1, n, out);
	return 0;
}

/* Flush the output; the first failure (a full disk) is said at once, since a
 * capture runs for hours and every line written meanwhile is lost, and makes
 * the exit status 1. Writing goes on: space may come back. */
static int write_failed;
static void flush_out(void)
{
	if (fflush(out) != 0 || ferror(out)) {
		if (!write_failed)
			fprintf(stderr, "nvme_uring_cmd_monitor: writing %s: %s: lines are being lost\n",
				env.jsonl ? env.jsonl : "stdout", strerror(errno ? errno : EIO));
		write_failed = 1;
		clearerr(out);
	}
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void anchor(void)
{
	char line[MONITOR_LINE_MAX];
	fwrite(line, 1, fmt_anchor(line, clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME)), out);
}

static struct bpf_program *prog_of(struct nvme_uring_cmd_monitor_bpf *s, int p)
{
	switch (p) {
	case P_SUBMIT: return s->progs.ns_chr;
	case P_HEAD: return s->progs.ns_head_chr;
	case P_ENDIO: return s->progs.end_io;
	case P_OVF_OLD: return s->progs.ovf_old;
	default: return s->progs.ovf_new;
	}
}

/* Open, load and attach with the probes of plan (plan_settle's try). */
static int try_load(const struct probe_plan *plan, void *ctx, int *failed)
{
	struct nvme_uring_cmd_monitor_bpf **out = ctx;
	struct nvme_uring_cmd_monitor_bpf *s = nvme_uring_cmd_monitor_bpf__open();
	if (!s)
		return -1;
	s->rodata->targ_pid = env.pid;
	for (int p = 0; p < NPROBES; p++)
		bpf_program__set_autoload(prog_of(s, p), plan->on[p]);
	failed_prog[0] = 0;
	if (nvme_uring_cmd_monitor_bpf__load(s) || nvme_uring_cmd_monitor_bpf__attach(s)) {
		nvme_uring_cmd_monitor_bpf__destroy(s);
		*failed = failed_prog[0] ? probe_of_prog(failed_prog) : -1;
		return -1;
	}
	*out = s;
	return 0;
}

static void say_refused(const char *fn)
{
	fprintf(stderr, "nvme_uring_cmd_monitor: %s refused; continuing without it\n", fn);
}

static void print_stats(struct nvme_uring_cmd_monitor_bpf *s, const struct probe_plan *plan)
{
	for (int p = 0; p < NPROBES; p++) {
		if (!plan->on[p])
			continue;
		struct bpf_prog_info info;
		__u32 len = sizeof info;
		memset(&info, 0, sizeof info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog_of(s, p)), &info, &len))
			continue;
		fprintf(stderr, "nvme_uring_cmd_monitor: stats %s run_cnt=%llu run_time_ns=%llu ns_per_run=%.0f\n",
			probe_fn[p], (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
			info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0);
	}
}

/* The options into env. -1 to go on, else the exit status (0 after --help,
 * 2 after a usage error, said). */
static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"jsonl", required_argument, 0, 'j'}, {"lba-size", required_argument, 0, 'l'},
		{"pid", required_argument, 0, 'p'},   {"dur", required_argument, 0, 'd'},
		{"kv", no_argument, 0, 'k'},           {"stats", no_argument, 0, 's'},
		{"help", no_argument, 0, 'h'},         {"verbose", no_argument, 0, 'v'},
		{0, 0, 0, 0},
	};
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
		switch (c) {
		case 'j': env.jsonl = optarg; break;
		case 'l':
			env.lba_size = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !env.lba_size) {
				fprintf(stderr, "nvme_uring_cmd_monitor: --lba-size '%s' is not a positive integer\n", optarg);
				return 2;
			}
			break;
		case 'p':
			env.pid = (unsigned)strtoul(optarg, &end, 10);
			if (*end) {
				fprintf(stderr, "nvme_uring_cmd_monitor: --pid '%s' is not a number\n", optarg);
				return 2;
			}
			break;
		case 'd':
			env.duration = (int)strtol(optarg, &end, 10);
			if (*end || env.duration < 0) {
				fprintf(stderr, "nvme_uring_cmd_monitor: --dur '%s' is not a number of seconds\n", optarg);
				return 2;
			}
			break;
		case 'k': env.kv = 1; break;
		case 's': env.stats = 1; break;
		case 'v': env.verbose = 1; break;
		case 'h': fputs(doc, stdout); return 0;
		default: fputs(doc, stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nvme_uring_cmd_monitor: unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	return -1;
}

/* Poll rb until a signal, --dur or an error: a clock anchor every 10 s, the
 * output flushed every second. 0, or 1 after a polling error (said). */
static int poll_loop(struct ring_buffer *rb)
{
	int err = 0;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), last_anchor = t0, last_flush = t0;
	while (!exiting) {
		int n = ring_buffer__poll(rb, 100);
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "nvme_uring_cmd_monitor: polling the ring buffer: %s\n", strerror(-n));
			err = 1;
			break;
		}
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		if (now - last_anchor >= 10000000000ull) {
			anchor();
			last_anchor = now;
		}
		if (now - last_flush >= 1000000000ull) {
			flush_out();
			last_flush = now;
		}
		if (env.duration && now - t0 >= (uint64_t)env.duration * 1000000000ull)
			break;
	}
	return err;
}

int main(int argc, char **argv)
{
	int prc = parse_args(argc, argv);
	if (prc >= 0)
		return prc;
	struct nvme_uring_cmd_monitor_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	int err = 0;
	static char obuf[1 << 20];
	libbpf_set_print(libbpf_print);
	out = stdout;
	if (env.jsonl && !(out = fopen(env.jsonl, "w"))) {
		fprintf(stderr, "nvme_uring_cmd_monitor: %s: %s\n", env.jsonl, strerror(errno));
		return 1;
	}
	setvbuf(out, obuf, _IOFBF, sizeof obuf);

	/* which probes: what kallsyms has, then degrade on refusal */
	int avail[NPROBES];
	struct probe_plan plan;
	probe_available("/proc/kallsyms", avail);
	plan_init(&plan, avail);
	if (!avail[P_SUBMIT] && !access("/proc/kallsyms", R_OK))
		fprintf(stderr, "nvme_uring_cmd_monitor: %s is not in /proc/kallsyms (is the nvme module loaded?)\n",
			probe_fn[P_SUBMIT]);
	if (plan_settle(&plan, try_load, &skel, say_refused)) {
		fprintf(stderr, "nvme_uring_cmd_monitor: cannot load or attach %s (need root, fentry, and BTF "
				"for vmlinux and nvme_core; is the nvme module loaded?)\n", probe_fn[P_SUBMIT]);
		err = 1;
		goto cleanup;
	}
	char desc[256];
	plan_describe(&plan, desc, sizeof desc);
	fprintf(stderr, "nvme_uring_cmd_monitor: probes on: %s\n", desc);
	if (!plan.on[P_ENDIO])
		fprintf(stderr, "nvme_uring_cmd_monitor: no completion probe: no nvme_cmp lines, durations will be nominal\n");

	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), handle_event, NULL, NULL);
	if (!rb) {
		fprintf(stderr, "nvme_uring_cmd_monitor: cannot create the ring buffer\n");
		err = 1;
		goto cleanup;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "nvme_uring_cmd_monitor: attached (pid=%u, lba=%u%s)\n", env.pid, env.lba_size,
		env.kv ? ", kv" : "");
	anchor();
	fflush(out);
	err = poll_loop(rb);
	/* what is still in the ring buffer, then the drop count */
	ring_buffer__consume(rb);
	{
		char line[MONITOR_LINE_MAX];
		fwrite(line, 1, fmt_drops(line, skel->bss->dropped), out);
	}
	if (env.stats)
		print_stats(skel, &plan);
cleanup:
	ring_buffer__free(rb);
	nvme_uring_cmd_monitor_bpf__destroy(skel);
	if (out) {
		flush_out();
		if (write_failed)
			err = 1;
	}
	if (out && out != stdout)
		fclose(out);
	fprintf(stderr, "nvme_uring_cmd_monitor: done\n");
	return err;
}
