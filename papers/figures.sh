#!/usr/bin/env bash
# Redraws every figure the papers' pages ship (docs/img, papers/deepcc's
# figures) from this checkout's build, each with the command its page
# names, and copies it into place, so that the figures say what the
# tables beside them say.
#
#   papers/figures.sh            redraw and copy; git diff shows what moved
#   papers/figures.sh --check    redraw into a temporary folder and list
#                                the shipped figures that differ (exit 1);
#                                CI runs this (about 2 minutes on 2 cores)
#   papers/figures.sh --emu      also the emulator's figures (root): the
#                                kernel's BBR beside the simulator's in the
#                                data-centre paper's probes. Kernel runs
#                                differ from run to run, so --check does
#                                not take it.
#
# Every simulated figure is deterministic: the same build gives the same
# SVG bytes. Not redrawn here: the learning curves (docs/img/marlin-
# training.png, marlin-compact-training.png, papers/deepcc/policy/figures/
# learning_curve_seed1.svg), which come from the training runs that made
# the shipped policies (hours; each page gives the command), and
# docs/examples (synthetic data; go test ./analysis/report -run
# TestExampleReport -update-example).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

check=0
emu=0
for a in "$@"; do
  case "$a" in
  --check) check=1 ;;
  --emu) emu=1 ;;
  *)
    echo "papers/figures.sh: unknown argument $a (accepted: --check, --emu)" >&2
    exit 2
    ;;
  esac
done
if [ "$emu" = 1 ] && [ "$check" = 1 ]; then
  echo "papers/figures.sh: --emu redraws with fresh kernel runs, which --check cannot compare; use one or the other" >&2
  exit 2
fi
if [ "$emu" = 1 ] && [ "$(id -u)" != 0 ]; then
  echo "papers/figures.sh: --emu runs the emulator, which needs root" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/cclab" ./cmd/cclab
cclab="$work/cclab"
dc=papers/datacenter/policy
dcc=papers/deepcc/policy/figures

# Each job: a name (its output folder), then the command's arguments.
# Each figure: the job, the file it writes, where the docs ship it.
jobs=(
  "rtt-probe|run bbr-rtt-probe"
  "bw-probe|run bbr-bw-probe"
  "marlin-background|marlin background"
  "dc-eval|dc eval --compare A2C=$dc/a2c.policy --compare DQN=$dc/dqn.policy --runs 12 --grid-runs 10"
  "nc-study|nc study"
  "nc-window|nc window"
  "nc-sharing|nc sharing"
  "nc-hops|nc hops"
  "deepcc-eval|deepcc eval"
  "deepcc-coexist|deepcc study coexist"
  "deepcc-convergence|deepcc study convergence"
  "deepcc-loss|deepcc study loss"
  "deepcc-intervals|deepcc study intervals"
)
figures=(
  "rtt-probe bbr_estimates.svg docs/img/dc_fig2a_rtt_probe.svg"
  "bw-probe bbr_estimates.svg docs/img/dc_fig2b_bw_probe.svg"
  "marlin-background background.svg docs/img/marlin_fig2_background.svg"
  "dc-eval cdf_rtprop_sq_err.svg docs/img/dc_fig3b_rtprop_sq_err_cdf.svg"
  "dc-eval cdf_goodput.svg docs/img/dc_fig3d_goodput_cdf.svg"
  "nc-study loss_sweep.svg docs/img/tcpnc_loss_sweep.svg"
  "nc-study redundancy_sweep.svg docs/img/tcpnc_redundancy_sweep.svg"
  "nc-window window.svg docs/img/tcpnc_window.svg"
  "nc-sharing sharing.svg docs/img/tcpnc_sharing.svg"
  "nc-hops hops.svg docs/img/tcpnc_hops.svg"
  "deepcc-eval pantheon_TMobile-LTE-short_down.svg $dcc/pantheon_TMobile-LTE-short_down.svg"
  "deepcc-eval pantheon_Verizon-LTE-short_down.svg $dcc/pantheon_Verizon-LTE-short_down.svg"
  "deepcc-eval pantheon_ATT-LTE-driving-2016_down.svg $dcc/pantheon_ATT-LTE-driving-2016_down.svg"
  "deepcc-eval tcr.svg $dcc/tcr.svg"
  "deepcc-eval tuner_Verizon-LTE-short_down.svg $dcc/tuner_Verizon-LTE-short_down.svg"
  "deepcc-coexist coexist_1.svg $dcc/study/coexist_1.svg"
  "deepcc-coexist coexist_4.svg $dcc/study/coexist_4.svg"
  "deepcc-coexist coexist_5.svg $dcc/study/coexist_5.svg"
  "deepcc-coexist coexist_6.svg $dcc/study/coexist_6.svg"
  "deepcc-coexist coexist_7.svg $dcc/study/coexist_7.svg"
  "deepcc-convergence convergence_1.svg $dcc/study/convergence_1.svg"
  "deepcc-convergence convergence_4.svg $dcc/study/convergence_4.svg"
  "deepcc-convergence convergence_5.svg $dcc/study/convergence_5.svg"
  "deepcc-loss loss.svg $dcc/study/loss.svg"
  "deepcc-intervals intervals_decision.svg $dcc/study/intervals_decision.svg"
  "deepcc-intervals intervals_tuning.svg $dcc/study/intervals_tuning.svg"
)
if [ "$emu" = 1 ]; then
  jobs+=(
    "rtt-probe-linux|compare bbr-rtt-probe"
    "rtt-probe-linux-opt|compare bbr-rtt-probe --sim-set flows.0.cc.linux=1"
    "bw-probe-linux|compare bbr-bw-probe"
  )
  figures+=(
    "rtt-probe-linux bbr_estimates.svg docs/img/dc_fig2a_rtt_probe_linux.svg"
    "rtt-probe-linux-opt bbr_estimates.svg docs/img/dc_fig2a_rtt_probe_linux_opt.svg"
    "bw-probe-linux bbr_estimates.svg docs/img/dc_fig2b_bw_probe_linux.svg"
  )
fi

for j in "${jobs[@]}"; do
  name=${j%%|*}
  # The arguments hold no spaces of their own, so word splitting is the
  # parse.
  read -r -a args <<<"${j#*|}"
  echo "cclab ${args[*]} --out DIR"
  if ! "$cclab" "${args[@]}" --out "$work/$name" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log" >&2
    echo "papers/figures.sh: cclab ${args[*]} failed" >&2
    exit 1
  fi
done

differ=0
for f in "${figures[@]}"; do
  read -r name file dest <<<"$f"
  src="$work/$name/$file"
  if [ ! -f "$src" ]; then
    echo "papers/figures.sh: $name wrote no $file (for $dest)" >&2
    exit 1
  fi
  if [ "$check" = 1 ]; then
    if ! cmp -s "$src" "$dest"; then
      echo "differs from this build's: $dest"
      differ=1
    fi
  else
    cp "$src" "$dest"
  fi
done
if [ "$check" = 1 ] && [ "$differ" = 1 ]; then
  echo "papers/figures.sh: shipped figures are not this build's; run papers/figures.sh and commit them" >&2
  exit 1
fi
if [ "$check" = 1 ]; then
  echo "every simulated figure is this build's"
else
  git status --short -- docs/img "$dcc"
fi
