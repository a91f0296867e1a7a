// SPDX-License-Identifier: GPL-2.0
/* TCP Hybla for kernels built without CONFIG_TCP_CONG_HYBLA, as a BPF
 * struct_ops congestion control named "hybla": the algorithm of Linux's
 * net/ipv4/tcp_hybla.c (Caini and Firrincieli 2004), written for BPF so
 * that cclab's emulator can run the kernel's TCP with it and compare the
 * simulator's cc/hybla. One difference the BPF interface imposes:
 * snd_cwnd_clamp is not writable, so hybla_init's clamp of 65535 segments
 * is applied where Hybla grows the window. */
#include "common.h"

char _license[] SEC("license") = "GPL";

/* The reference RTT, milliseconds (the module parameter rtt0). */
const volatile __u32 rtt0 = 25;

struct hybla {
	bool hybla_en;
	__u32 snd_cwnd_cents; /* growth below a segment, in 1/128ths */
	__u32 rho;            /* rho, integer part */
	__u32 rho2;           /* rho^2, integer part */
	__u32 rho_3ls;        /* rho in eighths */
	__u32 rho2_7ls;       /* rho^2 in 1/128ths */
	__u32 minrtt_us;      /* smallest srtt_us seen */
};

static __always_inline void hybla_recalc_param(struct sock *sk)
{
	struct hybla *ca = inet_csk_ca(sk);

	ca->rho_3ls = max(tcp_sk(sk)->srtt_us / (rtt0 * 1000), 8U);
	ca->rho = ca->rho_3ls >> 3;
	ca->rho2_7ls = (ca->rho_3ls * ca->rho_3ls) << 1;
	ca->rho2 = ca->rho2_7ls >> 7;
}

SEC("struct_ops")
void BPF_PROG(hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hybla *ca = inet_csk_ca(sk);

	ca->rho = 0;
	ca->rho2 = 0;
	ca->rho_3ls = 0;
	ca->rho2_7ls = 0;
	ca->snd_cwnd_cents = 0;
	ca->hybla_en = true;
	tp->snd_cwnd = 2;
	hybla_recalc_param(sk);
	ca->minrtt_us = tp->srtt_us;
	tp->snd_cwnd = ca->rho;
}

SEC("struct_ops")
void BPF_PROG(hybla_state, struct sock *sk, __u8 ca_state)
{
	struct hybla *ca = inet_csk_ca(sk);

	ca->hybla_en = ca_state == TCP_CA_Open;
}

static __always_inline __u32 hybla_fraction(__u32 odds)
{
	switch (odds) {
	case 1: return 139;
	case 2: return 152;
	case 3: return 165;
	case 4: return 181;
	case 5: return 197;
	case 6: return 215;
	case 7: return 234;
	default: return 128;
	}
}

SEC("struct_ops")
void BPF_PROG(hybla_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hybla *ca = inet_csk_ca(sk);
	__u32 increment, odd, rho_fractions, cwnd;
	int is_slowstart = 0;

	if (tp->srtt_us < ca->minrtt_us) {
		hybla_recalc_param(sk);
		ca->minrtt_us = tp->srtt_us;
	}
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (!ca->hybla_en) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (ca->rho == 0)
		hybla_recalc_param(sk);

	rho_fractions = ca->rho_3ls - (ca->rho << 3);
	cwnd = tp->snd_cwnd;
	if (tcp_in_slow_start(tp)) {
		is_slowstart = 1;
		increment = ((1U << min(ca->rho, 16U)) * hybla_fraction(rho_fractions)) - 128;
	} else {
		increment = ca->rho2_7ls / (cwnd ? cwnd : 1);
		if (increment < 128)
			tp->snd_cwnd_cnt++;
	}
	odd = increment % 128;
	cwnd += increment >> 7;
	ca->snd_cwnd_cents += odd;
	/* At most 7 carries: increment % 128 < 128 each ACK. */
	if (ca->snd_cwnd_cents >= 128) {
		cwnd += ca->snd_cwnd_cents >> 7;
		ca->snd_cwnd_cents &= 127;
		tp->snd_cwnd_cnt = 0;
	}
	if (increment == 0 && odd == 0 && tp->snd_cwnd_cnt >= cwnd) {
		cwnd++;
		tp->snd_cwnd_cnt = 0;
	}
	if (is_slowstart)
		cwnd = min(cwnd, tp->snd_ssthresh);
	tp->snd_cwnd = min(cwnd, 65535U);
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops hybla = {
	.init = (void *)hybla_init,
	.ssthresh = (void *)hybla_ssthresh,
	.undo_cwnd = (void *)hybla_undo_cwnd,
	.cong_avoid = (void *)hybla_cong_avoid,
	.set_state = (void *)hybla_state,
	.name = "hybla",
};
