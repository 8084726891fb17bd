/* kvio-load — a load generator that behaves like LMCache's raw_block engine:
 * KV objects in fixed slots of an NVMe namespace (a header block at the slot
 * start, then payload commands of at most --mdts bytes), stored and loaded back
 * with io_uring NVMe passthrough (SQE128/CQE32, IORING_OP_URING_CMD), with
 * user_data = trace_id << 32 | counter, and the schema-2 semantic JSONL.
 *
 *   serialized  one command at a time, each waited for (the QD~1 load bug)
 *   batched     an object's commands submitted together (up to --qd)
 *
 * Prints "RESULT cmds=N errors=E verify=OK|FAIL" on stdout. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static struct {
	const char *dev, *sem;
	unsigned objects, ranks, qd, lba, mdts, slots, header;
	uint64_t object_bytes;
	int batched;
	int stores_only;
} o = {.objects = 8, .ranks = 1, .qd = 32, .lba = 512, .mdts = 131072, .header = 4096,
       .object_bytes = 262144};

static const char doc[] =
	"usage: kvio-load --dev /dev/ngXnY --sem sem.jsonl [--objects N] [--object-bytes B]\n"
	"                 [--mode serialized|batched] [--ranks R] [--qd Q] [--lba-size N] [--mdts B]\n"
	"                 [--slots S]\n\n"
	"Stores N KV objects (per rank) into fixed slots of the namespace and loads them back with\n"
	"io_uring NVMe passthrough, like LMCache's raw_block engine; writes the semantic JSONL.\n\n"
	"  --objects N       objects per rank (default 8)\n"
	"  --object-bytes B  payload bytes per object (default 262144)\n"
	"  --mode M          serialized: one command at a time (QD~1); batched: an object's\n"
	"                    commands together (default serialized)\n"
	"  --ranks R         tensor-parallel ranks storing the same chunks (default 1)\n"
	"  --qd Q            ring depth for batched mode (default 32)\n"
	"  --lba-size N      namespace LBA size (default 512)\n"
	"  --mdts B          largest command, bytes (default 131072)\n"
	"  --slots S         slots before reuse (default: one per object)\n\n"
	"EXAMPLES\n"
	"  kvio-load --dev /dev/ng0n1 --sem sem.jsonl --mode serialized\n"
	"  kvio-load --dev /dev/ng0n1 --sem sem2.jsonl --mode batched --objects 16 --ranks 2\n\n"
	"exit status: 0 every object stored, loaded back and verified; 1 the device, io_uring, the\n"
	"  semantic file or a command failed, or data read back differs; 2 usage error\n";

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct io_uring ring;
static int fd, nsid;
static uint64_t ncmds, nerrors;

/* Prepare one passthrough read/write of len bytes at byte offset off. */
static void prep(struct io_uring_sqe *sqe, int write, uint64_t off, void *buf, uint32_t len, uint64_t ud)
{
	memset(sqe, 0, 2 * sizeof *sqe); /* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	sqe->user_data = ud;
	struct nvme_uring_cmd *c = (struct nvme_uring_cmd *)sqe->cmd;
	uint64_t slba = off / o.lba;
	uint32_t nlb = len / o.lba;
	c->opcode = write ? 0x01 : 0x02;
	c->nsid = (uint32_t)nsid;
	c->addr = (uint64_t)(uintptr_t)buf;
	c->data_len = len;
	c->cdw10 = (uint32_t)slba;
	c->cdw11 = (uint32_t)(slba >> 32);
	c->cdw12 = nlb - 1;
}

/* Reap n completions. */
static int reap(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		int rc = io_uring_wait_cqe(&ring, &cqe);
		if (rc < 0) {
			fprintf(stderr, "kvio-load: waiting for a completion: %s\n", strerror(-rc));
			return -1;
		}
		if (cqe->res != 0) {
			nerrors++;
			if (nerrors <= 5)
				fprintf(stderr, "kvio-load: command %llx failed: res %d\n",
					(unsigned long long)cqe->user_data, cqe->res);
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	return 0;
}

/* One object op: commands (off, len) in order, serialized or batched. */
static int object_io(int write, uint32_t trace_id, uint64_t slot_off, unsigned char *buf, uint64_t bytes)
{
	uint32_t ctr = 0;
	static struct piece { uint64_t off; uint32_t len; unsigned char *p; } cmd[4096];
	unsigned nc = 0;
	if (write)
		cmd[nc++] = (struct piece){slot_off, o.header, buf};
	for (uint64_t done = 0; done < bytes && nc < 4096; done += o.mdts) {
		uint32_t len = bytes - done < o.mdts ? (uint32_t)(bytes - done) : o.mdts;
		cmd[nc++] = (struct piece){slot_off + o.header + done, len, buf + o.header + done};
	}
	for (unsigned i = 0; i < nc;) {
		unsigned batch = o.batched ? (nc - i < o.qd ? nc - i : o.qd) : 1;
		for (unsigned k = 0; k < batch; k++, i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			if (!sqe)
				return -1;
			prep(sqe, write, cmd[i].off, cmd[i].p, cmd[i].len, (uint64_t)trace_id << 32 | ctr++);
		}
		int rc = io_uring_submit(&ring);
		if (rc < 0) {
			fprintf(stderr, "kvio-load: submit: %s\n", strerror(-rc));
			return -1;
		}
		ncmds += batch;
		if (reap(batch))
			return -1;
	}
	return 0;
}

static void fill(unsigned char *p, uint64_t n, uint64_t seed)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131 + seed * 7919) >> 3);
}

/* The options into o. -1 to go on, else the exit status (0 after --help,
 * 2 after a usage error, said). */
static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dev", 1, 0, 'D'}, {"sem", 1, 0, 'S'}, {"objects", 1, 0, 'n'}, {"object-bytes", 1, 0, 'b'},
		{"mode", 1, 0, 'm'}, {"ranks", 1, 0, 'r'}, {"qd", 1, 0, 'q'}, {"lba-size", 1, 0, 'l'},
		{"mdts", 1, 0, 't'}, {"slots", 1, 0, 's'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *end = NULL;
		unsigned long long v = optarg ? strtoull(optarg, &end, 10) : 0;
		if (optarg && c != 'D' && c != 'S' && c != 'm' && (*end || !v)) {
			fprintf(stderr, "kvio-load: '%s' is not a positive integer\n", optarg);
			return 2;
		}
		switch (c) {
		case 'D': o.dev = optarg; break;
		case 'S': o.sem = optarg; break;
		case 'n': o.objects = (unsigned)v; break;
		case 'b': o.object_bytes = v; break;
		case 'r': o.ranks = (unsigned)v; break;
		case 'q': o.qd = (unsigned)v; break;
		case 'l': o.lba = (unsigned)v; break;
		case 't': o.mdts = (unsigned)v; break;
		case 's': o.slots = (unsigned)v; break;
		case 'm':
			if (!strcmp(optarg, "batched")) o.batched = 1;
			else if (!strcmp(optarg, "serialized")) o.batched = 0;
			else { fprintf(stderr, "kvio-load: --mode is serialized or batched\n"); return 2; }
			break;
		case 'h': fputs(doc, stdout); return 0;
		default: fputs(doc, stderr); return 2;
		}
	}
	if (!o.dev || !o.sem) {
		fprintf(stderr, "kvio-load: need --dev and --sem (see --help)\n");
		return 2;
	}
	if (o.object_bytes % o.lba || o.mdts % o.lba || o.header % o.lba || o.ranks > 255 || o.qd > 4096) {
		fprintf(stderr, "kvio-load: sizes must be multiples of --lba-size %u (ranks <= 255)\n", o.lba);
		return 2;
	}
	return -1;
}

/* Object obj (rank r of object k) stored (write) or loaded at its slot as
 * trace_id, its semantic record written to sem; a load is verified against
 * what its store wrote (*verify_ok cleared on a mismatch). -1 on an IO error. */
static int one_object(FILE *sem, int write, uint32_t trace_id, unsigned k, unsigned r, unsigned char *wbuf,
		      unsigned char *rbuf, uint64_t slot_bytes, int pid, int *verify_ok)
{
	unsigned obj = k * o.ranks + r;
	uint64_t slot_off = (uint64_t)(obj % o.slots) * slot_bytes;
	char key[128];
	if (o.ranks > 1)
		snprintf(key, sizeof key, "kvio-load@0x%08x@%016llx", o.ranks << 24 | r << 16 | o.ranks << 8 | r,
			 (unsigned long long)k * 0x9e3779b97f4a7c15ull);
	else
		snprintf(key, sizeof key, "kvio@kvio-load@1@0@%016llx",
			 (unsigned long long)k * 0x9e3779b97f4a7c15ull);
	if (write)
		fill(wbuf, slot_bytes, obj);
	double t0 = mono_s();
	if (object_io(write, trace_id, slot_off, write ? wbuf : rbuf, o.object_bytes) < 0)
		return -1;
	double t1 = mono_s();
	if (!write) {
		fill(wbuf, slot_bytes, obj);
		if (o.slots >= o.objects * o.ranks &&
		    memcmp(rbuf + o.header, wbuf + o.header, o.object_bytes))
			*verify_ok = 0;
	}
	fprintf(sem, "{\"trace_id\":%u,\"op\":\"%s\",\"key\":\"%s\",\"object_id\":%u,\"part\":\"kv\","
		     "\"bytes\":%llu,\"slot_offset\":%llu,\"ts_start\":%.9f,\"ts\":%.9f,\"pid\":%d,"
		     "\"instance\":\"kvio-load\"}\n",
		trace_id, write ? "store" : "load", key, obj, (unsigned long long)o.object_bytes,
		(unsigned long long)slot_off, t0, t1, pid);
	return 0;
}

int main(int argc, char **argv)
{
	int prc = parse_args(argc, argv);
	if (prc >= 0)
		return prc;
	if (!o.slots)
		o.slots = o.objects * o.ranks;
	fd = open(o.dev, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "kvio-load: %s: %s\n", o.dev, strerror(errno));
		return 1;
	}
	nsid = ioctl(fd, NVME_IOCTL_ID);
	if (nsid <= 0) {
		fprintf(stderr, "kvio-load: %s: NVME_IOCTL_ID: %s (not an NVMe namespace char device?)\n", o.dev,
			strerror(errno));
		return 1;
	}
	int rc = io_uring_queue_init(o.qd < 8 ? 8 : o.qd, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (rc < 0) {
		fprintf(stderr, "kvio-load: io_uring_queue_init: %s\n", strerror(-rc));
		return 1;
	}
	FILE *sem = fopen(o.sem, "w");
	if (!sem) {
		fprintf(stderr, "kvio-load: %s: %s\n", o.sem, strerror(errno));
		return 1;
	}
	uint64_t slot_bytes = o.header + o.object_bytes;
	unsigned char *wbuf, *rbuf;
	if (posix_memalign((void **)&wbuf, 4096, slot_bytes) || posix_memalign((void **)&rbuf, 4096, slot_bytes)) {
		fprintf(stderr, "kvio-load: out of memory\n");
		return 1;
	}
	int pid = (int)getpid();
	fprintf(sem, "{\"event_type\":\"kvio_meta\",\"kvio_schema\":2,\"pid\":%d,\"instance\":\"kvio-load\","
		     "\"hostname\":\"vm\",\"device_path\":\"%s\",\"io_engine\":\"kvio-load\",\"use_uring_cmd\":true,"
		     "\"block_align\":%u,\"header_bytes\":%u,\"slot_bytes\":%llu,\"slot_count\":%u,"
		     "\"max_data_transfer_size\":%u,\"ts_monotonic\":%.9f,\"ts_realtime\":%.9f}\n",
		pid, o.dev, o.lba, o.header, (unsigned long long)slot_bytes, o.slots, o.mdts, mono_s(),
		(double)time(NULL));
	uint32_t trace_id = 1;
	int verify_ok = 1;
	for (int phase = 0; phase < 2; phase++) /* the stores, then the loads */
		for (unsigned k = 0; k < o.objects; k++)
			for (unsigned r = 0; r < o.ranks; r++)
				if (one_object(sem, phase == 0, trace_id++, k, r, wbuf, rbuf, slot_bytes, pid, &verify_ok) < 0)
					return 1;
	if (fclose(sem) != 0) {
		fprintf(stderr, "kvio-load: %s: write error\n", o.sem);
		return 1;
	}
	io_uring_queue_exit(&ring);
	printf("RESULT cmds=%llu errors=%llu verify=%s\n", (unsigned long long)ncmds, (unsigned long long)nerrors,
	       verify_ok ? "OK" : "FAIL");
	return nerrors || !verify_ok;
}
