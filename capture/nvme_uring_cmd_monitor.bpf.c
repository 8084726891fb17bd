// SPDX-License-Identifier: GPL-2.0
/* nvme_uring_cmd_monitor.bpf.c — io_uring NVMe passthrough, per command and per
 * device completion. Probes (each optional but the first; user space turns off
 * what this kernel lacks):
 *   fentry/nvme_ns_chr_uring_cmd       submission on /dev/ngXnY
 *   fentry/nvme_ns_head_chr_uring_cmd  submission on the multipath head
 *   fentry/nvme_uring_cmd_end_io       device completion (immune to CQ overflow)
 *   fentry/io_cqring_event_overflow    CQE overflow (6.8 .. 6.15)
 *   fentry/io_cqe_overflow             CQE overflow (6.16+)
 * user_data is read from the io_kiocb that embeds the io_uring_cmd (right at
 * submit, at completion, and for IOSQE_ASYNC punts, unlike the SQE copy). */
#include "kvio_kernel.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "nvme_uring_cmd_monitor.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 targ_pid = 0; /* 0 = every process */

/* ring-buffer reserve failures: the capture's final drops line */
__u64 dropped = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

struct inflight {
	__u64 ts, user_data;
};

/* keyed by the io_uring_cmd pointer; a re-issue (-EAGAIN) refreshes it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct inflight);
} inflight SEC(".maps");

static __always_inline __u64 cmd_user_data(struct io_uring_cmd *ioucmd)
{
	struct io_kiocb *req = (struct io_kiocb *)ioucmd;
	return BPF_CORE_READ(req, cqe.user_data);
}

static __always_inline const void *cmd_payload(struct io_uring_cmd *ioucmd)
{
	if (bpf_core_field_exists(struct io_uring_cmd___new, sqe)) {
		const void *sqe = BPF_CORE_READ((struct io_uring_cmd___new *)ioucmd, sqe);
		return sqe ? (const char *)sqe + SQE_CMD_OFFSET : 0;
	}
	return BPF_CORE_READ(ioucmd, cmd);
}

static __always_inline int on_submit(struct io_uring_cmd *ioucmd, int multipath)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	if (targ_pid && pid != targ_pid)
		return 0;
	struct nvme_uring_cmd c = {};
	const void *payload = cmd_payload(ioucmd);
	if (!payload || bpf_probe_read_kernel(&c, sizeof c, payload))
		return 0;
	__u64 ts = bpf_ktime_get_ns();
	__u64 ud = cmd_user_data(ioucmd);
	struct inflight in = {.ts = ts, .user_data = ud};
	__u64 key = (__u64)ioucmd;
	bpf_map_update_elem(&inflight, &key, &in, BPF_ANY);

	struct cmd_event *e = bpf_ringbuf_reserve(&events, sizeof *e, 0);
	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	e->kind = EV_CMD;
	e->pid = pid;
	e->tid = (__u32)id;
	e->cmd_op = BPF_CORE_READ(ioucmd, cmd_op);
	e->ts = ts;
	e->user_data = ud;
	e->nsid = c.nsid;
	e->data_len = c.data_len;
	e->cdw2 = c.cdw2;
	e->cdw3 = c.cdw3;
	e->cdw10 = c.cdw10;
	e->cdw11 = c.cdw11;
	e->cdw12 = c.cdw12;
	e->cdw13 = c.cdw13;
	e->cdw14 = c.cdw14;
	e->cdw15 = c.cdw15;
	e->rdev = BPF_CORE_READ(ioucmd, file, f_inode, i_rdev);
	e->opcode = c.opcode;
	e->multipath = multipath;
	e->pad[0] = e->pad[1] = 0;
	bpf_get_current_comm(e->comm, sizeof e->comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("fentry/nvme_ns_chr_uring_cmd")
int BPF_PROG(ns_chr, struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	return on_submit(ioucmd, 0);
}

SEC("fentry/nvme_ns_head_chr_uring_cmd")
int BPF_PROG(ns_head_chr, struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	return on_submit(ioucmd, 1);
}

SEC("fentry/nvme_uring_cmd_end_io")
int BPF_PROG(end_io, struct request *req, blk_status_t err)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 key = (__u64)BPF_CORE_READ(req, end_io_data);
	struct inflight *in = bpf_map_lookup_elem(&inflight, &key);
	if (!in)
		return 0; /* not submitted while we watched (or another pid) */
	struct cmp_event *e = bpf_ringbuf_reserve(&events, sizeof *e, 0);
	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		bpf_map_delete_elem(&inflight, &key);
		return 0;
	}
	e->kind = EV_CMP;
	e->err = err;
	e->ts = ts;
	e->user_data = in->user_data;
	e->lat_ns = ts - in->ts;
	e->hwq = BPF_CORE_READ(req, mq_hctx, queue_num);
	struct nvme_request *nr = (struct nvme_request *)((char *)req + bpf_core_type_size(struct request));
	e->cid = BPF_CORE_READ(nr, cmd, common.command_id);
	e->status = BPF_CORE_READ(nr, status);
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
	bpf_map_delete_elem(&inflight, &key);
	return 0;
}

static __always_inline int on_overflow(__u64 user_data, __s32 res)
{
	struct ovf_event *e = bpf_ringbuf_reserve(&events, sizeof *e, 0);
	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	e->kind = EV_OVF;
	e->res = res;
	e->ts = bpf_ktime_get_ns();
	e->user_data = user_data;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("fentry/io_cqring_event_overflow")
int BPF_PROG(ovf_old, void *ring, __u64 user_data, __s32 res)
{
	return on_overflow(user_data, res);
}

SEC("fentry/io_cqe_overflow")
int BPF_PROG(ovf_new, void *ring, struct io_cqe *cqe)
{
	return on_overflow(BPF_CORE_READ(cqe, user_data), BPF_CORE_READ(cqe, res));
}
