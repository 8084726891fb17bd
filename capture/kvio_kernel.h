/* kvio_kernel.h — the kernel types nvme_uring_cmd_monitor.bpf.c reads, declared
 * minimally for CO-RE (libbpf relocates every field access against the running
 * kernel's BTF, vmlinux and the nvme_core module). Only the fields used are
 * declared; names and nesting follow the kernel, layouts come from its BTF. */
#ifndef KVIO_KERNEL_H
#define KVIO_KERNEL_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;
typedef __u32 __wsum;
typedef _Bool bool;
typedef __u32 dev_t;
typedef __u8 blk_status_t;
enum { false = 0, true = 1 };

/* uapi linux/bpf.h values the program uses */
enum { BPF_MAP_TYPE_HASH = 1, BPF_MAP_TYPE_RINGBUF = 27 };
enum { BPF_ANY = 0 };

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct inode {
	dev_t i_rdev;
};

struct file {
	struct inode *f_inode;
};

/* 6.1 .. 6.5: the command payload is cmd; 6.6+: sqe (payload at sqe + 48) */
struct io_uring_cmd {
	struct file *file;
	const void *cmd;
	u32 cmd_op;
};

struct io_uring_cmd___new {
	struct file *file;
	const struct io_uring_sqe *sqe;
	u32 cmd_op;
};

struct io_cqe {
	__u64 user_data;
	__s32 res;
};

/* io_uring_cmd is the first member of io_kiocb's leading union */
struct io_kiocb {
	struct io_cqe cqe;
};

struct blk_mq_hw_ctx {
	unsigned int queue_num;
};

struct request {
	struct blk_mq_hw_ctx *mq_hctx;
	void *end_io_data;
};

struct nvme_common_command {
	__u8 opcode;
	__u8 flags;
	__u16 command_id;
};

struct nvme_command {
	union {
		struct nvme_common_command common;
	};
};

struct nvme_request {
	struct nvme_command *cmd;
	__u16 status;
};

#pragma clang attribute pop

/* uapi (stable ABI): linux/nvme_ioctl.h */
struct nvme_uring_cmd {
	__u8 opcode;
	__u8 flags;
	__u16 rsvd1;
	__u32 nsid;
	__u32 cdw2;
	__u32 cdw3;
	__u64 metadata;
	__u64 addr;
	__u32 metadata_len;
	__u32 data_len;
	__u32 cdw10;
	__u32 cdw11;
	__u32 cdw12;
	__u32 cdw13;
	__u32 cdw14;
	__u32 cdw15;
	__u32 timeout_ms;
	__u32 rsvd2;
};

#define SQE_CMD_OFFSET 48 /* offsetof(struct io_uring_sqe, cmd): uapi */

#endif
