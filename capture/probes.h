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
/* "submit,end_io" style list of the probes that are on. */
void plan_describe(const struct probe_plan *p, char *buf, unsigned long n);
/* Functions present in a kallsyms text (for tests: any file in that format). */
void probe_available(const char *kallsyms_path, int available[NPROBES]);

#endif
