/* probes.c — see probes.h. */
#include "probes.h"
#include <stdio.h>
#include <string.h>

const char *const probe_fn[NPROBES] = {"nvme_ns_chr_uring_cmd", "nvme_ns_head_chr_uring_cmd",
				       "nvme_uring_cmd_end_io", "io_cqring_event_overflow", "io_cqe_overflow"};

void plan_init(struct probe_plan *p, const int available[NPROBES])
{
	for (int i = 0; i < NPROBES; i++)
		p->on[i] = available[i];
	p->on[P_SUBMIT] = 1; /* required: if it is missing, loading says why */
}

int plan_degrade(struct probe_plan *p)
{
	static const enum probe order[] = {P_OVF_NEW, P_OVF_OLD, P_HEAD, P_ENDIO};
	for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++)
		if (p->on[order[i]]) {
			p->on[order[i]] = 0;
			return order[i];
		}
	return -1;
}

int plan_drop(struct probe_plan *p, int probe)
{
	if (probe <= P_SUBMIT || probe >= NPROBES || !p->on[probe])
		return -1;
	p->on[probe] = 0;
	return probe;
}

int plan_settle(struct probe_plan *p, int (*try)(const struct probe_plan *, void *ctx, int *failed), void *ctx,
		void (*say)(const char *fn))
{
	for (;;) {
		int failed = -1;
		if (try(p, ctx, &failed) == 0)
			return 0;
		if (failed == P_SUBMIT)
			return -1; /* the required probe itself: nothing to drop helps */
		int off = plan_drop(p, failed);
		if (off < 0)
			off = plan_degrade(p);
		if (off < 0)
			return -1;
		if (say)
			say(probe_fn[off]);
	}
}

int probe_of_prog(const char *prog)
{
	static const char *const progs[NPROBES] = {"ns_chr", "ns_head_chr", "end_io", "ovf_old", "ovf_new"};
	for (int i = 0; i < NPROBES; i++)
		if (!strcmp(prog, progs[i]))
			return i;
	return -1;
}

void plan_describe(const struct probe_plan *p, char *buf, unsigned long n)
{
	buf[0] = 0;
	for (int i = 0; i < NPROBES; i++)
		if (p->on[i]) {
			if (buf[0])
				strncat(buf, ", ", n - strlen(buf) - 1);
			strncat(buf, probe_fn[i], n - strlen(buf) - 1);
		}
}

void probe_available(const char *path, int available[NPROBES])
{
	for (int i = 0; i < NPROBES; i++)
		available[i] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		/* "ffffffffc0a1b2c3 t name [module]" */
		char *name = strchr(line, ' ');
		if (!name || !(name = strchr(name + 1, ' ')))
			continue;
		name++;
		size_t l = strcspn(name, " \t\n");
		for (int i = 0; i < NPROBES; i++)
			if (strlen(probe_fn[i]) == l && !strncmp(name, probe_fn[i], l))
				available[i] = 1;
	}
	fclose(f);
}
