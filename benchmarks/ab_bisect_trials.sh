#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs the trials of ab_bisect_example.sh one after another, resuming where a previous
# run stopped: a trial already in WORKDIR/bisect-trials.jsonl is not run again, so a
# series of hours can be stopped (kill by PID) and restarted at any time.
#
# Usage: benchmarks/ab_bisect_trials.sh TREE WORKDIR FIRST LAST
# Environment as for ab_bisect_example.sh (PLANT, SKCIPHER_SPIN, HWCRYPTO, ...).
set -euo pipefail
TREE=$1 WORK=$(realpath -m "$2") FIRST=$3 LAST=$4
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$WORK"
for trial in $(seq "$FIRST" "$LAST"); do
  if [ -f "$WORK/bisect-trials.jsonl" ] &&
     grep -q "\"trial\": $trial," "$WORK/bisect-trials.jsonl"; then
    continue
  fi
  echo "$(date -u +%FT%TZ) trial $trial starts, load $(cut -d' ' -f1-3 /proc/loadavg)"
  bash "$HERE/ab_bisect_example.sh" "$TREE" "$WORK" "$trial"
done
