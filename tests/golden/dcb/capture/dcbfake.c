/* LD_PRELOAD shim used only to CAPTURE the netlink bytes that iproute2's `dcb` sends (tests/golden/dcb/).
 *
 * `dcb pfc set` and `dcb ets set` first read the current object (RTM_GETDCB / DCB_CMD_IEEE_GET) and only then
 * send RTM_SETDCB. This machine's kernel has DCB netlink but no device with dcbnl_ops, so the read fails with
 * EOPNOTSUPP and the SET is never sent. This shim answers that one read with an all-zero IEEE ETS and PFC
 * object (pfc_cap 8) so that `dcb` goes on and sends its real SET request to the real kernel, where strace
 * records it. Nothing else is changed: the SET still fails at the kernel (EOPNOTSUPP).
 *
 * Build: gcc -shared -fPIC -o dcbfake.so dcbfake.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

static size_t put_attr(char *p, unsigned short type, const void *data, unsigned short len)
{
	struct nlattr *a = (struct nlattr *)p;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (data)
		memcpy(p + NLA_HDRLEN, data, len);
	else
		memset(p + NLA_HDRLEN, 0, len);
	return NLA_ALIGN(a->nla_len);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, struct msghdr *, int);
	if (!real)
		real = (ssize_t (*)(int, struct msghdr *, int))dlsym(RTLD_NEXT, "recvmsg");
	ssize_t n = real(fd, msg, flags);
	if (n < (ssize_t)(NLMSG_HDRLEN + sizeof(struct nlmsgerr)) || msg->msg_iovlen < 1)
		return n;
	char *buf = msg->msg_iov[0].iov_base;
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	if (nlh->nlmsg_type != NLMSG_ERROR)
		return n;
	struct nlmsgerr *err = NLMSG_DATA(nlh);
	if (err->error == 0 || err->msg.nlmsg_type != RTM_GETDCB)
		return n;
	__u32 seq = nlh->nlmsg_seq, pid = nlh->nlmsg_pid;
	char out[1024];
	memset(out, 0, sizeof(out));
	struct nlmsghdr *r = (struct nlmsghdr *)out;
	r->nlmsg_type = RTM_GETDCB;
	r->nlmsg_seq = seq;
	r->nlmsg_pid = pid;
	struct dcbmsg *d = NLMSG_DATA(r);
	d->cmd = DCB_CMD_IEEE_GET;
	size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*d));
	off += put_attr(out + off, DCB_ATTR_IFNAME, "fake", 5);
	struct nlattr *nest = (struct nlattr *)(out + off);
	size_t nest_start = off;
	off += NLA_HDRLEN;
	struct ieee_ets ets;
	memset(&ets, 0, sizeof(ets));
	struct ieee_pfc pfc;
	memset(&pfc, 0, sizeof(pfc));
	pfc.pfc_cap = 8;
	off += put_attr(out + off, DCB_ATTR_IEEE_ETS, &ets, sizeof(ets));
	off += put_attr(out + off, DCB_ATTR_IEEE_PFC, &pfc, sizeof(pfc));
	nest->nla_type = NLA_F_NESTED | DCB_ATTR_IEEE;
	nest->nla_len = off - nest_start;
	r->nlmsg_len = off;
	if (off > msg->msg_iov[0].iov_len) {
		errno = ENOBUFS;
		return -1;
	}
	memcpy(buf, out, off);
	return off;
}
