// SPDX-License-Identifier: GPL-2.0
/* TCP Westwood+ for kernels built without CONFIG_TCP_CONG_WESTWOOD, as a
 * BPF struct_ops congestion control named "westwood": the algorithm of
 * Linux's net/ipv4/tcp_westwood.c (Mascolo et al. 2001), written for BPF
 * so that cclab's emulator can run the kernel's TCP with it and compare
 * the simulator's cc/westwood. */
#include "common.h"

char _license[] SEC("license") = "GPL";

struct westwood {
	__u32 bw_ns_est;  /* first, less smoothed, bandwidth estimate */
	__u32 bw_est;     /* bandwidth estimate, bytes per jiffy */
	__u32 rtt_win_sx; /* start of the current window, jiffies */
	__u32 bk;         /* bytes acknowledged in the window */
	__u32 snd_una;
	__u32 cumul_ack;
	__u32 accounted;
	__u32 rtt;
	__u32 rtt_min;
	__u8 first_ack;
	__u8 reset_rtt_min;
};

SEC("struct_ops")
void BPF_PROG(westwood_init, struct sock *sk)
{
	struct westwood *w = inet_csk_ca(sk);

	w->bk = 0;
	w->bw_ns_est = 0;
	w->bw_est = 0;
	w->accounted = 0;
	w->cumul_ack = 0;
	w->reset_rtt_min = 1;
	w->rtt_min = w->rtt = 20 * CONFIG_HZ; /* TCP_WESTWOOD_INIT_RTT */
	w->rtt_win_sx = tcp_jiffies32();
	w->snd_una = tcp_sk(sk)->snd_una;
	w->first_ack = 1;
#ifdef KERNELCC_DEBUG
	bpf_printk("ww init j=%u state=%d", w->rtt_win_sx, sk->__sk_common.skc_state);
#endif
}

static __always_inline __u32 westwood_do_filter(__u32 a, __u32 b)
{
	return ((7 * a) + b) >> 3;
}

static __always_inline void westwood_update_window(struct sock *sk)
{
	struct westwood *w = inet_csk_ca(sk);
	__s32 delta = tcp_jiffies32() - w->rtt_win_sx;

#ifdef KERNELCC_DEBUG
	bpf_printk("ww ack j=%u delta=%d rtt=%u", tcp_jiffies32(), delta, w->rtt);
	bpf_printk("ww    una=%u wuna=%u bk=%u", tcp_sk(sk)->snd_una, w->snd_una, w->bk);
#endif
	if (w->first_ack) {
		w->snd_una = tcp_sk(sk)->snd_una;
		w->first_ack = 0;
	}
	/* Windows shorter than TCP_WESTWOOD_RTT_MIN (HZ/20) keep building. */
	if (w->rtt && delta > (__s32)max(w->rtt, CONFIG_HZ / 20)) {
		__u32 sample = w->bk / (__u32)delta;
#ifdef KERNELCC_DEBUG
		bpf_printk("ww window j=%u delta=%d bk=%u", tcp_jiffies32(), delta, w->bk);
		bpf_printk("ww   sample=%u est=%u rtt=%u", sample, w->bw_est, w->rtt);
#endif

		if (w->bw_ns_est == 0 && w->bw_est == 0) {
			w->bw_ns_est = sample;
			w->bw_est = sample;
		} else {
			w->bw_ns_est = westwood_do_filter(w->bw_ns_est, sample);
			w->bw_est = westwood_do_filter(w->bw_est, w->bw_ns_est);
		}
		w->bk = 0;
		w->rtt_win_sx = tcp_jiffies32();
	}
}

static __always_inline void update_rtt_min(struct westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else {
		w->rtt_min = min(w->rtt, w->rtt_min);
	}
}

/* westwood_acked_count: duplicate ACKs count a segment each, taken back
 * from the next cumulative ACK. */
static __always_inline __u32 westwood_acked_count(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = inet_csk_ca(sk);

	w->cumul_ack = tp->snd_una - w->snd_una;
	if (!w->cumul_ack) {
		w->accounted += tp->mss_cache;
		w->cumul_ack = tp->mss_cache;
	}
	if (w->cumul_ack > tp->mss_cache) {
		if (w->accounted >= w->cumul_ack) {
			w->accounted -= w->cumul_ack;
			w->cumul_ack = tp->mss_cache;
		} else {
			w->cumul_ack -= w->accounted;
			w->accounted = 0;
		}
	}
	w->snd_una = tp->snd_una;
	return w->cumul_ack;
}

static __always_inline __u32 westwood_bw_rttmin(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct westwood *w = inet_csk_ca(sk);

	return max((w->bw_est * w->rtt_min) / tp->mss_cache, 2U);
}

SEC("struct_ops")
void BPF_PROG(westwood_ack, struct sock *sk, __u32 ack_flags)
{
	struct westwood *w = inet_csk_ca(sk);

	if (ack_flags & CA_ACK_SLOWPATH) {
		westwood_update_window(sk);
		w->bk += westwood_acked_count(sk);
		update_rtt_min(w);
		return;
	}
	/* westwood_fast_bw */
	westwood_update_window(sk);
	w->bk += tcp_sk(sk)->snd_una - w->snd_una;
	w->snd_una = tcp_sk(sk)->snd_una;
	update_rtt_min(w);
}

SEC("struct_ops")
void BPF_PROG(westwood_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = inet_csk_ca(sk);

	switch (event) {
	case CA_EVENT_COMPLETE_CWR:
#ifdef KERNELCC_DEBUG
		bpf_printk("ww complete_cwr j=%u est=%u rtt_min=%u", tcp_jiffies32(), w->bw_est, w->rtt_min);
#endif
		tp->snd_ssthresh = westwood_bw_rttmin(sk);
		tp->snd_cwnd = tp->snd_ssthresh;
		break;
	case CA_EVENT_LOSS:
		tp->snd_ssthresh = westwood_bw_rttmin(sk);
		w->reset_rtt_min = 1;
		break;
	default:
		break;
	}
}

SEC("struct_ops")
void BPF_PROG(westwood_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct westwood *w = inet_csk_ca(sk);

	if (sample->rtt_us > 0)
		w->rtt = usecs_to_jiffies(sample->rtt_us);
}

SEC("struct_ops")
__u32 BPF_PROG(westwood_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(westwood_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(westwood_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops westwood = {
	.init = (void *)westwood_init,
	.ssthresh = (void *)westwood_ssthresh,
	.cong_avoid = (void *)westwood_cong_avoid,
	.undo_cwnd = (void *)westwood_undo_cwnd,
	.cwnd_event = (void *)westwood_event,
	.in_ack_event = (void *)westwood_ack,
	.pkts_acked = (void *)westwood_pkts_acked,
	.name = "westwood",
};
