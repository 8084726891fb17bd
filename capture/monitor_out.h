/* monitor_out.h — the monitor's JSONL lines (docs/formats.md), one function per
 * event. Each writes one whole line ('\n' included) into buf and returns its
 * length; buf must hold MONITOR_LINE_MAX bytes. Kept apart from the BPF glue so
 * tests can check the exact text. */
#ifndef MONITOR_OUT_H
#define MONITOR_OUT_H
#include "nvme_uring_cmd_monitor.h"
#include <stddef.h>
#include <stdint.h>

#define MONITOR_LINE_MAX 1024

size_t fmt_cmd(char *buf, const struct cmd_event *e, unsigned lba_size, int kv);
size_t fmt_cmp(char *buf, const struct cmp_event *e);
size_t fmt_ovf(char *buf, const struct ovf_event *e);
size_t fmt_anchor(char *buf, uint64_t monotonic_ns, uint64_t realtime_ns);
size_t fmt_drops(char *buf, uint64_t dropped);
/* NVM (or, with kv, Key-Value) command set opcode name. */
const char *nvme_op_name(unsigned opcode, int kv);
/* JSON string body of a NUL-padded comm; bytes that are not UTF-8 become \u00XX. */
size_t json_comm(char *out, const char *comm, size_t n);

#endif
