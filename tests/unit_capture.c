/* unit_capture.c — the monitor's JSONL writer and its probe degrade logic,
 * without a kernel: exact lines for hand-made events, and simulated refusals.
 * Prints "ok - ..." / "FAIL - ..." lines (counted by t_60_capture.sh). */
#include "../capture/monitor_out.h"
#include "../capture/probes.h"
#include "../ingest/jsonl.h"
#include <stdio.h>
#include <string.h>

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - capture unit: %s\n", name); \
	else { printf("FAIL - capture unit: %s\n", name); fails++; } } while (0)
#define CHECK_STR(name, want, got) do { if (!strcmp(want, got)) printf("ok - capture unit: %s\n", name); \
	else { printf("FAIL - capture unit: %s\n    want %s    got  %s", name, want, got); fails++; } } while (0)

/* a fake kernel: try() refuses any plan that has a probe in refused[] on */
struct fake { int refused[NPROBES]; int say_name; int attempts; };
static int fake_try(const struct probe_plan *p, void *ctx, int *failed)
{
	struct fake *f = ctx;
	f->attempts++;
	for (int i = 0; i < NPROBES; i++)
		if (p->on[i] && f->refused[i]) {
			*failed = f->say_name ? i : -1;
			return -1;
		}
	return 0;
}

/* The JSONL lines the tracer writes, byte for byte, and read back by kvio's parser. */
static void line_checks(void)
{
	char line[MONITOR_LINE_MAX];
	struct cmd_event c;
	memset(&c, 0, sizeof c);
	c.kind = EV_CMD; c.pid = 77; c.tid = 78; c.cmd_op = 0xc0484e80; c.ts = 123456789;
	c.user_data = 18446744073709551615ull; c.nsid = 1; c.data_len = 131072; c.opcode = 2;
	c.cdw10 = 0x10; c.cdw11 = 0x1; c.cdw12 = 31; c.rdev = 245u << 20;
	memcpy(c.comm, "py\"th\\on\xff\xc3\xa9", 11);
	fmt_cmd(line, &c, 4096, 0);
	/* slba = cdw10 | cdw11 << 32 = 0x100000010; nlb = 31 + 1; bytes = 32 * 4096 */
	CHECK_STR("nvme_cmd line", "{\"event_type\":\"nvme_cmd\",\"pid\":77,\"tid\":78,\"user_data\":18446744073709551615,"
		  "\"nvme_opcode\":2,\"op_name\":\"read\",\"nsid\":1,\"slba\":4294967312,\"nlb\":32,\"bytes\":131072,"
		  "\"data_len\":131072,\"multipath\":0,\"cmd_op\":\"0xc0484e80\",\"rdev\":256901120,"
		  "\"comm\":\"py\\\"th\\\\on\\u00ff\xc3\xa9\",\"ts\":123456789}\n", line);
	{
		struct jline j = {0};
		uint64_t u = 0;
		char comm[64];
		size_t n = strlen(line) - 1;
		CHECK("the line is one JSON object for kvio's reader", jl_parse(&j, line, n) == JL_OK);
		CHECK("user_data reads back exactly", !jl_u64(&j, JL_FIND(&j, "user_data"), &u) && u == c.user_data);
		CHECK("comm reads back (a raw 0xff as U+00FF)",
		      jl_str(&j, JL_FIND(&j, "comm"), comm) >= 0 && !strcmp(comm, "py\"th\\on\xc3\xbf\xc3\xa9"));
		jl_free(&j);
	}
	/* KV: key bytes in cdw2, cdw3, cdw14, cdw15 (little endian), key length in cdw11[7:0] */
	c.opcode = 1; c.cdw2 = 0x64636261; c.cdw3 = 0x68676665; c.cdw14 = 0; c.cdw15 = 0; c.cdw11 = 8;
	c.cdw10 = 4096;
	memcpy(c.comm, "kv\0", 3);
	fmt_cmd(line, &c, 4096, 1);
	CHECK_STR("nvme_cmd KV line", "{\"event_type\":\"nvme_cmd\",\"pid\":77,\"tid\":78,\"user_data\":18446744073709551615,"
		  "\"nvme_opcode\":1,\"op_name\":\"store\",\"nsid\":1,\"key_hex\":\"6162636465666768\",\"key_len\":8,"
		  "\"value_len\":4096,\"data_len\":131072,\"multipath\":0,\"cmd_op\":\"0xc0484e80\",\"rdev\":256901120,"
		  "\"comm\":\"kv\",\"ts\":123456789}\n", line);
	struct cmp_event p = {.kind = EV_CMP, .err = 0, .ts = 200, .user_data = 5, .lat_ns = 100, .hwq = 1, .cid = 12288,
			      .status = 0};
	fmt_cmp(line, &p);
	CHECK_STR("nvme_cmp line", "{\"event_type\":\"nvme_cmp\",\"user_data\":5,\"err\":0,\"status\":0,\"lat_ns\":100,"
		  "\"hwq\":1,\"cid\":12288,\"ts\":200}\n", line);
	struct ovf_event v = {.kind = EV_OVF, .res = -11, .ts = 9, .user_data = 42};
	fmt_ovf(line, &v);
	CHECK_STR("cq_overflow line", "{\"event_type\":\"cq_overflow\",\"user_data\":42,\"res\":-11,\"ts\":9}\n", line);
	fmt_drops(line, 3);
	CHECK_STR("drops line", "{\"event_type\":\"drops\",\"dropped\":3}\n", line);
	fmt_anchor(line, 1, 2);
	CHECK_STR("clock_anchor line", "{\"event_type\":\"clock_anchor\",\"monotonic_ns\":1,\"realtime_ns\":2}\n", line);
}

/* The probes' degrade logic and their availability from kallsyms. */
static void probe_checks(void)
{
	int all[NPROBES] = {1, 1, 1, 1, 1};
	struct probe_plan plan;
	struct fake f;
	char d[256];

	memset(&f, 0, sizeof f);
	f.refused[P_HEAD] = 1;
	f.say_name = 1;
	plan_init(&plan, all);
	CHECK("known refusal: only that probe goes", plan_settle(&plan, fake_try, &f, NULL) == 0 &&
	      plan.on[P_SUBMIT] && !plan.on[P_HEAD] && plan.on[P_ENDIO] && plan.on[P_OVF_OLD] && plan.on[P_OVF_NEW] &&
	      f.attempts == 2);

	memset(&f, 0, sizeof f);
	f.refused[P_ENDIO] = 1; /* refusal not attributed: degrade in order */
	plan_init(&plan, all);
	CHECK("unknown refusal: overflow, head, then completion go, in that order",
	      plan_settle(&plan, fake_try, &f, NULL) == 0 && plan.on[P_SUBMIT] && !plan.on[P_ENDIO] &&
	      !plan.on[P_HEAD] && !plan.on[P_OVF_OLD] && !plan.on[P_OVF_NEW] && f.attempts == 5);

	memset(&f, 0, sizeof f);
	f.refused[P_SUBMIT] = 1;
	f.say_name = 1;
	plan_init(&plan, all);
	CHECK("the submission probe refused: give up at once", plan_settle(&plan, fake_try, &f, NULL) == -1 && f.attempts == 1);

	memset(&f, 0, sizeof f);
	f.refused[P_SUBMIT] = 1;
	plan_init(&plan, all);
	CHECK("submission refused, unattributed: give up when nothing is left",
	      plan_settle(&plan, fake_try, &f, NULL) == -1 && f.attempts == 5);

	int some[NPROBES] = {1, 0, 1, 1, 0}; /* a 6.1 kernel without a multipath head */
	plan_init(&plan, some);
	plan_describe(&plan, d, sizeof d);
	CHECK_STR("probes on (from availability)", "nvme_ns_chr_uring_cmd, nvme_uring_cmd_end_io, io_cqring_event_overflow", d);
	CHECK("prog names map to probes", probe_of_prog("end_io") == P_ENDIO && probe_of_prog("nope") == -1);

	FILE *k = fopen("/tmp/kvio-unit-kallsyms", "w");
	fputs("ffffffffc0001000 t nvme_ns_chr_uring_cmd\t[nvme_core]\nffffffff81000000 T io_cqe_overflow\n"
	      "ffffffffc0002000 t nvme_uring_cmd_end_io_meta\t[nvme_core]\n", k);
	fclose(k);
	int av[NPROBES];
	probe_available("/tmp/kvio-unit-kallsyms", av);
	CHECK("kallsyms: exact names only", av[P_SUBMIT] && !av[P_HEAD] && !av[P_ENDIO] && !av[P_OVF_OLD] && av[P_OVF_NEW]);
	remove("/tmp/kvio-unit-kallsyms");
}

int main(void)
{
	line_checks();
	probe_checks();
	return fails != 0;
}
