#!/usr/bin/env bash
# device-check.sh - the GPU checks of the CUDA target on a lent machine.
#
# Part of the qtrain project.
#
# Run from the repository root on a machine with an NVIDIA GPU, with a
# prebuilt build/bin (qtrain-cuda-check, qtrain-run) carried along:
#
#   BUNDLES='device-bundles/*.qtb' OUT=/tmp/out scripts/device-check.sh
#
# For each bundle: qtrain-cuda-check BUNDLE (the kernels' numerics against
# CPU references, their timings against cuBLASLt), then qtrain-run BUNDLE
# --device=cuda --stop-at=1 (everything a GPU run checks before it trains;
# until the step runs on the GPU it stops with "training on the GPU is not
# built yet", which counts as passing). Everything goes to
# ${OUT:-.}/device-check.log. Each command has a time limit so the whole
# script stays under 8 minutes (CHECK_TIMEOUT, RUN_TIMEOUT, TOTAL_BUDGET
# in seconds). The exit status is the worst of the checks: 0 all passed,
# 1 a check failed, 2 a check could not run (no driver, no device, no
# bundles, a missing binary), 124 a check ran out of time.

set -u
set -o pipefail

BIN=${BIN:-build/bin}
OUT=${OUT:-.}
BUNDLES=${BUNDLES:-device-bundles/*.qtb}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-150}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
TOTAL_BUDGET=${TOTAL_BUDGET:-450}

mkdir -p "$OUT"
LOG="$OUT/device-check.log"
: >"$LOG"
START=$SECONDS
WORST=0

log() { printf '%s\n' "$*" | tee -a "$LOG"; }

# The worst status so far: a timeout (124) ranks above a failed check (1),
# and "cannot run" (2) above a failure.
note() {
  local rc=$1
  if ((rc == 124 || rc == 137)); then
    rc=124
  fi
  if ((rc > WORST)); then
    WORST=$rc
  fi
}

# Runs "$@" with at most $1 seconds (less when the total budget is nearly
# spent), logging it; sets RC.
run() {
  local limit=$1
  shift
  local left=$((TOTAL_BUDGET - (SECONDS - START)))
  if ((left < 10)); then
    log "== skipped (time budget spent): $*"
    RC=124
    return
  fi
  ((limit > left)) && limit=$left
  log "== $* (limit ${limit}s)"
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$LOG"
  RC=${PIPESTATUS[0]}
  log "== exit $RC after $((SECONDS - START))s in all"
}

log "device-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi -L 2>&1 | tee -a "$LOG"
else
  log "nvidia-smi: not found"
fi

for tool in qtrain-cuda-check qtrain-run; do
  if [[ ! -x "$BIN/$tool" ]]; then
    log "device-check: error: $BIN/$tool is missing (build it first)"
    exit 2
  fi
done

shopt -s nullglob
# shellcheck disable=SC2206  # the pattern is meant to expand
bundles=($BUNDLES)
shopt -u nullglob
if ((${#bundles[@]} == 0)); then
  log "device-check: error: no bundles match '$BUNDLES'"
  exit 2
fi

for bundle in "${bundles[@]}"; do
  log ""
  log "=== $bundle"
  run "$CHECK_TIMEOUT" "$BIN/qtrain-cuda-check" "$bundle"
  note "$RC"
  run "$RUN_TIMEOUT" "$BIN/qtrain-run" "$bundle" --device=cuda --stop-at=1 \
    --epochs=1 --progress=lines --out="$OUT/run-$(basename "$bundle")" \
    --overwrite
  # Until the training step runs on the GPU, the expected outcome is the
  # stop after every check passed.
  if ((RC == 1)) && grep -q "training on the GPU is not built yet" \
    <(tail -n 5 "$LOG"); then
    log "== (expected: the kernels load; GPU training is not built yet)"
    RC=0
  fi
  note "$RC"
done

log ""
log "device-check: worst exit status $WORST after $((SECONDS - START))s"
exit "$WORST"
