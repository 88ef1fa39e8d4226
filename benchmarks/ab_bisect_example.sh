#!/bin/bash
# SPDX-License-Identifier: MIT
# The worked `git bisect run hwcrypto bisect-run` example on a real kernel tree (issue 33).
#
# Needs a Linux 6.1 tree configured for UML and built once, e.g. from Debian's
# linux-source-6.1 (docs: ../shared/DESIGN.md section 7; 216-495 s on two cores):
#   tar xaf /usr/src/linux-source-6.1.tar.xz && cd linux-source-6.1 && make ARCH=um defconfig
#   scripts/config --enable CRYPTO_USER_API_SKCIPHER --enable CRYPTO_USER_API_HASH \
#     --enable CRYPTO_USER --enable CRYPTO_CBC --enable CRYPTO_XTS --enable CRYPTO_AES_TI
#   make ARCH=um olddefconfig && make ARCH=um -j2 linux
#
# Usage: benchmarks/ab_bisect_example.sh TREE WORKDIR [TRIAL]
# It makes TREE's crypto/ directory a git repository (only crypto/ is tracked, so a
# checkout rebuilds seconds of objects), commits 32 changes on top of the tree as it is --
# 31 harmless (a comment in a crypto source file compiled into the kernel) and one, at a
# position drawn from TRIAL, that adds work to aes-generic's block function (PLANT=aes-generic,
# the default; SLOW_ROUNDS spins per block) or to every skcipher's walk (PLANT=skcipher:
# SKCIPHER_SPIN spins per 64 bytes in skcipher_walk_done: 6 took aes-generic -1.5 % at 64 KiB
# on UML, benchmarks/ab-bisect.md; issue 48's small-drop bisection) -- then:
# builds the good (first) and slow (last) kernels, `hwcrypto ab` between them, and
# `git bisect run hwcrypto bisect-run` over the 32 commits, and `hwcrypto bisect-confirm`
# (the culprit's parent against the culprit, in pairs; each candidate when skipped steps
# left git several). One line of JSON per trial is appended to
# WORKDIR/bisect-trials.jsonl: the planted culprit, the one git named ("bisected", empty
# when it named several), the one found after bisect-confirm, steps, whether the A/B
# confirmed it, times.
# Set HWCRYPTO to how to run the command (default: hwcrypto).
set -euo pipefail
TREE=$(realpath "$1")
WORK=$(realpath -m "$2")
TRIAL=${3:-0}
HWCRYPTO=${HWCRYPTO:-hwcrypto}
COMMITS=32
SLOW_ROUNDS=${SLOW_ROUNDS:-60}
PLANT=${PLANT:-aes-generic}
SKCIPHER_SPIN=${SKCIPHER_SPIN:-20}
ALGORITHM=${ALGORITHM:-cbc(aes)}
# The good-vs-slow A/B's max drop, which the bisection inherits: it must sit well below the
# planted drop, or that A/B can only say "could not tell" (spin 20 is about 4.5 %).
if [ "$PLANT" = skcipher ]; then MAX_DROP=${MAX_DROP:-2%}; else MAX_DROP=${MAX_DROP:-5%}; fi
case "$PLANT" in aes-generic|skcipher) ;; *) echo "PLANT must be aes-generic or skcipher" >&2; exit 2;; esac
mkdir -p "$WORK"
cd "$TREE"
export GIT_AUTHOR_NAME=hwcrypto GIT_AUTHOR_EMAIL=hwcrypto@localhost
export GIT_COMMITTER_NAME=hwcrypto GIT_COMMITTER_EMAIL=hwcrypto@localhost

# Harmless changes go into files that are compiled into this kernel.
FILES=(crypto/cbc.c crypto/ecb.c crypto/xts.c crypto/ctr.c crypto/skcipher.c crypto/api.c
       crypto/algapi.c crypto/cipher.c)
CULPRIT=$(( (TRIAL * 7919 + 11) % COMMITS + 1 ))   # 1..32, spread over trials

if [ -d .git ]; then
  git bisect reset >/dev/null 2>&1 || true
  git checkout -q "$(git rev-list --max-parents=0 HEAD | tail -1)" -- crypto  # back to base
fi
rm -rf .git
git init -q -b main .
# Debian's tree ignores everything at its top level (.gitignore "/*"): add the sources by name
find crypto \( -name '*.[ch]' -o -name Makefile -o -name Kconfig \) -print0 | xargs -0 git add -f
git commit -q -m "base: crypto/ as built"
BASE=$(git rev-parse HEAD)
for i in $(seq 1 $COMMITS); do
  if [ "$i" -eq "$CULPRIT" ] && [ "$PLANT" = skcipher ]; then
    # a real code change that slows every skcipher alike: work per byte in the walk that
    # every template (ecb, cbc, xts, ctr) steps through
    python3 - "$SKCIPHER_SPIN" <<'EOF'
import sys
from pathlib import Path
path = Path("crypto/skcipher.c")
text = path.read_text()
anchor = "\t\tnbytes = walk->total - n;\n\t}\n"
at = text.index(anchor) + len(anchor)
spin = ("\t{\n\t\tvolatile unsigned long sink = 0;\n\t\tunsigned long k;\n\n"
        f"\t\tfor (k = 0; k < (unsigned long)n * {sys.argv[1]} / 64; k++)\n\t\t\tsink += k;\n\t}}\n")
path.write_text(text[:at] + spin + text[at:])
EOF
    git commit -q -am "crypto: skcipher: change $i"
  elif [ "$i" -eq "$CULPRIT" ]; then
    # a real code change that slows one driver: extra work in aes-generic's block function
    python3 - "$SLOW_ROUNDS" <<'EOF'
import sys
from pathlib import Path
path = Path("crypto/aes_generic.c")
text = path.read_text()
head = "static void crypto_aes_encrypt(struct crypto_tfm *tfm, u8 *out, const u8 *in)\n{\n"
at = text.index(head)
body = text.index("\n\n", at) + 1
spin = ("\t{\n\t\tvolatile unsigned long sink = 0;\n\t\tunsigned long n;\n\n"
        f"\t\tfor (n = 0; n < {sys.argv[1]}; n++)\n\t\t\tsink += n;\n\t}}\n")
path.write_text(text[:body] + spin + text[body:])
EOF
    git commit -q -am "crypto: aes-generic: change $i"
  else
    f=${FILES[$(( i % ${#FILES[@]} ))]}
    echo "/* bisect example change $i */" >> "$f"
    git commit -q -am "crypto: ${f#crypto/}: change $i"
  fi
done
SLOW=$(git rev-parse HEAD)
PLANTED=$(git rev-list --reverse "$BASE..$SLOW" | sed -n "${CULPRIT}p")

build() { make ARCH=um -j2 linux >"$WORK/build.log" 2>&1; }
git checkout -q "$BASE" && build && cp linux "$WORK/good.uml"
git checkout -q "$SLOW" && build
started=$(date +%s)
rm -f "$WORK/ab-good-slow.json"
# --alpha 0.05 (the trials of benchmarks/ab-bisect.md ran so; the default is 0.01): the
# bisection takes its level from this file, and a step only sorts a commit between two
# levels already known apart -- bisect-confirm measures the answer again.
$HWCRYPTO ab --kernel "$WORK/good.uml" --kernel "$TREE/linux" --algorithm "$ALGORITHM" \
  --block-sizes 65536 --first-pairs 8 --max-pairs 16 --max-drop "$MAX_DROP" --alpha 0.05 \
  --out "$WORK/ab-good-slow.json" > "$WORK/ab-good-slow.txt" 2>&1 || true
ab_seconds=$(( $(date +%s) - started ))

started=$(date +%s)
git bisect start --term-old fast --term-new slow "$SLOW" "$BASE" >/dev/null
git bisect run $HWCRYPTO bisect-run --good "$WORK/ab-good-slow.json" --first-pairs 8 \
  --max-pairs 32 --workdir "$WORK/steps" -- make ARCH=um -j2 linux > "$WORK/bisect-$TRIAL.log" 2>&1 || true
bisect_seconds=$(( $(date +%s) - started ))
BISECTED=$(grep -oE '^[0-9a-f]{40} is the first slow commit' "$WORK/bisect-$TRIAL.log" | cut -c1-40 || true)
STEPS=$(grep -c 'hwcrypto bisect-run: .*: \(fast\|slow\|skip\)' "$WORK/bisect-$TRIAL.log" || true)
# The culprit confirmed: its parent and itself built and measured in pairs; when skipped
# steps left git with several candidates, each against its parent, and the one confirmed
# is the answer.
started=$(date +%s)
CONFIRMED=false
FOUND=$BISECTED
if $HWCRYPTO bisect-confirm --good "$WORK/ab-good-slow.json" --first-pairs 8 \
    --max-pairs 32 --workdir "$WORK/steps" -- make ARCH=um -j2 linux > "$WORK/confirm-$TRIAL.log" 2>&1; then
  CONFIRMED=true
  [ -n "$FOUND" ] || FOUND=$(grep -oE '[0-9a-f]{40} is the culprit' "$WORK/confirm-$TRIAL.log" | cut -c1-40 || true)
fi
confirm_seconds=$(( $(date +%s) - started ))
git bisect reset >/dev/null 2>&1 || true
git checkout -q "$BASE"   # the tree as it came: the next trial starts from it again
python3 - "$WORK/bisect-trials.jsonl" <<EOF
import json, sys

def plant_changes(path):
    try:
        series = json.load(open(path))["verdict"]["series"]
    except (OSError, ValueError, KeyError):
        return []
    return [{"driver": s["driver"], "pairs": s["pairs"], "change": round(s["change"], 4),
             "low": round(s["change_low"], 4), "high": round(s["change_high"], 4),
             "verdict": s["verdict"]} for s in series]

entry = {"trial": $TRIAL, "plant": "$PLANT", "planted": "$PLANTED", "position": $CULPRIT, "found": "$FOUND",
         "bisected": "$BISECTED",
         "right": "$FOUND" == "$PLANTED", "steps": int("${STEPS:-0}" or 0),
         "confirmed": "$CONFIRMED" == "true", "confirm_seconds": $confirm_seconds,
         "ab_seconds": $ab_seconds, "bisect_seconds": $bisect_seconds,
         "load": open("/proc/loadavg").read().split()[:3],
         # what the planted commit did, as the good-vs-slow A/B of this trial measured it
         "plant_changes": plant_changes("$WORK/ab-good-slow.json")}
open(sys.argv[1], "a").write(json.dumps(entry) + "\n")
print(json.dumps(entry))
EOF
