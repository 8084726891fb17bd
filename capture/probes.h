/* probes.h — which of the monitor's probes to load, and how to degrade when the
 * kernel refuses one: the completion, multipath and overflow probes are
 * optional; the submission probe is not. */
#ifndef PROBES_H
#define PROBES_H

enum probe { P_SUBMIT, P_HEAD, P_ENDIO, P_OVF_OLD, P_OVF_NEW, NPROBES };
extern const char *const probe_fn[NPROBES]; /* the kernel functions */

struct probe_plan {
	int on[NPROBES];
};

/* Start from what the kernel has (available[i] = the function is in kallsyms). */
void plan_init(struct probe_plan *p, const int available[NPROBES]);
/* After a failed load/attach: switch off the next optional probe, in the order
 * overflow, multipath head, completion. Returns the probe switched off, or -1
 * when only the submission probe is left (give up). */
int plan_degrade(struct probe_plan *p);
/* Switch off probe p (an optional one). Returns p, or -1 for the submission
 * probe or one already off. */
int plan_drop(struct probe_plan *p, int probe);
/* Load until the kernel accepts the plan: try(plan, ctx) returns 0 on success,
 * else -1 and sets *failed to the refused probe when it is known (or -1). A
 * known optional probe is dropped, else plan_degrade's order applies; say()
 * reports each step. Returns 0 with the accepted plan, -1 when the submission
 * probe is refused (known, or alone left). */
int plan_settle(struct probe_plan *p, int (*try)(const struct probe_plan *, void *ctx, int *failed), void *ctx,
		void (*say)(const char *fn));
/* The probe whose BPF program is named prog ("ns_chr", ...), or -1. */
int probe_of_prog(const char *prog);
/* "submit,end_io" style list of the probes that are on. */
void plan_describe(const struct probe_plan *p, char *buf, unsigned long n);
/* Functions present in a kallsyms text (for tests: any file in that format). */
void probe_available(const char *kallsyms_path, int available[NPROBES]);

#endif
