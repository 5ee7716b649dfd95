#!/usr/bin/env bash
# The GPU check (docs/guide/gpu-check.md): the wiring check, the demo and the cost benchmarks on a CUDA machine, each
# step timed and logged under OUT (default ./gpu_check, a new folder; a step that fails or runs past its limit is
# reported and the next one runs).
#
#     bash scripts/gpu_check.sh [OUT]
set -u
out=${1:-gpu_check}
[ -e "$out" ] && { echo "$out exists: give a new folder (nothing is overwritten)" >&2; exit 2; }
mkdir -p "$out"
model=$(lm-eval-contam default-model 2>"$out/default_model.log") || { echo "default model: see $out/default_model.log"; exit 2; }
step() {  # NAME LIMIT_S COMMAND...: one line "NAME rc=... seconds" in steps.txt
    local name=$1 limit=$2 started
    shift 2
    started=$(date +%s)
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    echo "$name rc=$? $(( $(date +%s) - started ))s" | tee -a "$out/steps.txt"
}
step probe 300 lm-eval-contam run --model hf --model_args "pretrained=$model,dtype=bfloat16" --tasks contam_probe \
    --device cuda --apply_chat_template --output_path "$out/probe"
step bench_control_free 600 python scripts/bench_control_free.py --model "$model" --device cuda:0
step demo 1200 lm-eval-contam demo --output_path "$out/demo"
step bench_audit_tasks 1800 python scripts/bench_audit_tasks.py --model "$model" --device cuda:0 --sizes 40,400 \
    --out "$out/bench_audit_tasks"
