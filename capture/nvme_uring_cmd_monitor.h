/* nvme_uring_cmd_monitor.h — the events the BPF side sends to user space. */
#ifndef NVME_URING_CMD_MONITOR_H
#define NVME_URING_CMD_MONITOR_H

#define EV_CMD 1 /* a passthrough command reached the driver */
#define EV_CMP 2 /* the device completed it (nvme_uring_cmd_end_io) */
#define EV_OVF 3 /* a CQE went to the overflow list */

#define COMM_LEN 16

struct cmd_event {
	unsigned int kind;
	unsigned int pid, tid;
	unsigned int cmd_op;
	unsigned long long ts, user_data;
	unsigned int nsid, data_len;
	unsigned int cdw2, cdw3, cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
	unsigned int rdev; /* kernel dev_t: major << 20 | minor */
	unsigned char opcode, multipath, pad[2];
	char comm[COMM_LEN];
};

struct cmp_event {
	unsigned int kind;
	int err;           /* blk_status_t of end_io (0 = ok) */
	unsigned long long ts, user_data, lat_ns;
	unsigned int hwq, cid;
	unsigned int status; /* NVMe status of the completion */
	unsigned int pad;
};

struct ovf_event {
	unsigned int kind;
	int res;
	unsigned long long ts, user_data;
};

#endif
