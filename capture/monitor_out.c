/* monitor_out.c — see monitor_out.h. */
#include "monitor_out.h"
#include <stdio.h>
#include <string.h>

const char *nvme_op_name(unsigned opcode, int kv)
{
	if (kv) {
		switch (opcode) {
		case 0x01: return "store";
		case 0x02: return "retrieve";
		case 0x06: return "list";
		case 0x10: return "delete";
		case 0x14: return "exist";
		default: return "other";
		}
	}
	switch (opcode) {
	case 0x00: return "flush";
	case 0x01: return "write";
	case 0x02: return "read";
	case 0x04: return "write_uncor";
	case 0x05: return "compare";
	case 0x08: return "write_zeroes";
	case 0x09: return "dsm";
	default: return "other";
	}
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || len > n || (len == 2 && c < 0xc2))
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

size_t json_comm(char *out, const char *comm, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)comm;
	size_t len = strnlen(comm, n), o = 0;
	for (size_t i = 0; i < len;) {
		unsigned c = p[i];
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)sprintf(out + o, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			out[o++] = (char)c;
			i++;
		} else {
			size_t l = utf8_len(p + i, len - i);
			if (l) {
				memcpy(out + o, p + i, l);
				o += l;
				i += l;
			} else { /* a raw byte: its Latin-1 code point */
				out[o++] = '\\'; out[o++] = 'u'; out[o++] = '0'; out[o++] = '0';
				out[o++] = hex[c >> 4];
				out[o++] = hex[c & 15];
				i++;
			}
		}
	}
	out[o] = 0;
	return o;
}

size_t fmt_cmd(char *buf, const struct cmd_event *e, unsigned lba_size, int kv)
{
	char comm[COMM_LEN * 6 + 1];
	json_comm(comm, e->comm, sizeof e->comm);
	int n;
	if (kv) {
		/* Key-Value command set: 16-byte key in cdw2, cdw3, cdw14, cdw15;
		 * key length in cdw11[7:0]; value (buffer) size in cdw10 */
		unsigned char key[16];
		unsigned w[4] = {e->cdw2, e->cdw3, e->cdw14, e->cdw15};
		memcpy(key, w, 16);
		unsigned klen = e->cdw11 & 0xff;
		if (klen > 16)
			klen = 16;
		char khex[33];
		for (unsigned i = 0; i < klen; i++)
			sprintf(khex + 2 * i, "%02x", key[i]);
		khex[2 * klen] = 0;
		n = snprintf(buf, MONITOR_LINE_MAX,
			     "{\"event_type\":\"nvme_cmd\",\"pid\":%u,\"tid\":%u,\"user_data\":%llu,"
			     "\"nvme_opcode\":%u,\"op_name\":\"%s\",\"nsid\":%u,\"key_hex\":\"%s\",\"key_len\":%u,"
			     "\"value_len\":%u,\"data_len\":%u,\"multipath\":%u,\"cmd_op\":\"0x%x\",\"rdev\":%u,"
			     "\"comm\":\"%s\",\"ts\":%llu}\n",
			     e->pid, e->tid, e->user_data, e->opcode, nvme_op_name(e->opcode, 1), e->nsid, khex, klen,
			     e->cdw10, e->data_len, e->multipath, e->cmd_op, e->rdev, comm, e->ts);
	} else {
		unsigned long long slba = (unsigned long long)e->cdw10 | (unsigned long long)e->cdw11 << 32;
		unsigned long long nlb = (e->cdw12 & 0xffff) + 1ull;
		n = snprintf(buf, MONITOR_LINE_MAX,
			     "{\"event_type\":\"nvme_cmd\",\"pid\":%u,\"tid\":%u,\"user_data\":%llu,"
			     "\"nvme_opcode\":%u,\"op_name\":\"%s\",\"nsid\":%u,\"slba\":%llu,\"nlb\":%llu,"
			     "\"bytes\":%llu,\"data_len\":%u,\"multipath\":%u,\"cmd_op\":\"0x%x\",\"rdev\":%u,"
			     "\"comm\":\"%s\",\"ts\":%llu}\n",
			     e->pid, e->tid, e->user_data, e->opcode, nvme_op_name(e->opcode, 0), e->nsid, slba, nlb,
			     nlb * lba_size, e->data_len, e->multipath, e->cmd_op, e->rdev, comm, e->ts);
	}
	return n < 0 ? 0 : (size_t)n;
}

size_t fmt_cmp(char *buf, const struct cmp_event *e)
{
	int n = snprintf(buf, MONITOR_LINE_MAX,
			 "{\"event_type\":\"nvme_cmp\",\"user_data\":%llu,\"err\":%d,\"status\":%u,\"lat_ns\":%llu,"
			 "\"hwq\":%u,\"cid\":%u,\"ts\":%llu}\n",
			 e->user_data, e->err, e->status, e->lat_ns, e->hwq, e->cid, e->ts);
	return n < 0 ? 0 : (size_t)n;
}

size_t fmt_ovf(char *buf, const struct ovf_event *e)
{
	int n = snprintf(buf, MONITOR_LINE_MAX, "{\"event_type\":\"cq_overflow\",\"user_data\":%llu,\"res\":%d,\"ts\":%llu}\n",
			 e->user_data, e->res, e->ts);
	return n < 0 ? 0 : (size_t)n;
}

size_t fmt_anchor(char *buf, uint64_t mono, uint64_t real)
{
	int n = snprintf(buf, MONITOR_LINE_MAX,
			 "{\"event_type\":\"clock_anchor\",\"monotonic_ns\":%llu,\"realtime_ns\":%llu}\n",
			 (unsigned long long)mono, (unsigned long long)real);
	return n < 0 ? 0 : (size_t)n;
}

size_t fmt_drops(char *buf, uint64_t dropped)
{
	int n = snprintf(buf, MONITOR_LINE_MAX, "{\"event_type\":\"drops\",\"dropped\":%llu}\n",
			 (unsigned long long)dropped);
	return n < 0 ? 0 : (size_t)n;
}
