#!/usr/bin/env bash
# A character-level gpt on English text that no one here wrote: Debian's fortunes databases (package
# fortunes, about 2.5 MB) as one file (examples/fortunes_to_text.py), read with text: (bytes as tokens,
# vocabulary 256). 4 blocks, 4 heads, 128 wide, windows of 128 bytes; AdamW (weight decay 0.1, gradients
# clipped to norm 1, as nanoGPT trains) with a linear warm-up and a
# cosine decay, on 2 workers. The converter prints the text's unigram entropy (4.79 bits per byte): the
# loss of a model that knows only the byte frequencies; the run's test loss / ln 2 is its bits per byte.
# Usage: examples/char-gpt.sh [train flags...]   (STEPS, OUT, RUN_DIR, BALANCENET: see common.sh)
set -euo pipefail
source "$(dirname "$0")/common.sh"
STEPS=${STEPS:-300}  # about 3 minutes of training on 2 cores (docs/data.md has the measurement)
[ -f "$OUT/fortunes.txt" ] || "$PYTHON" "$ROOT/examples/fortunes_to_text.py" "$OUT/fortunes.txt"
"$BALANCENET" train --data "text:$OUT/fortunes.txt" --model gpt --context 128 --layers 4 --heads 4 --embed 128 \
  --workers 2 --global-batch 32 --optimizer adamw --weight-decay 0.1 --clip-grad-norm 1 --lr 0.002 --warmup-steps 100 --lr-decay cosine --lr-min 0.0002 \
  --steps "$STEPS" --eval-every 100 --run-dir "$RUN_DIR" "$@"
