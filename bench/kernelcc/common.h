/* Helpers shared by the BPF congestion controls of bench/kernelcc: the
 * kernel's inline accessors, which BPF programs cannot call, written
 * again for struct_ops programs. */
#ifndef KERNELCC_COMMON_H
#define KERNELCC_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* The kernel's own Reno, exported to struct_ops programs as kfuncs. */
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* CONFIG_HZ, read by libbpf from the kernel's configuration at load. */
extern unsigned int CONFIG_HZ __kconfig;

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* tcp_is_cwnd_limited (include/net/tcp.h). */
static __always_inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tcp_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return !!BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

static __always_inline __u32 tcp_jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

/* usecs_to_jiffies for an HZ that divides a million (100, 250, 1000). */
static __always_inline __u32 usecs_to_jiffies(__u32 us)
{
	__u32 per = 1000000 / CONFIG_HZ;

	return (us + per - 1) / per;
}

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

#endif
