#!/usr/bin/env bash
# Writes the bundled example's baseline again, as `baseline update` on the example's main branch
# would: the agent before the change `make example` shows (discount cap 10%, not 5%), in a fresh
# repository with the same paths, so the file holds no fingerprint of this checkout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/repo/examples"
cp -r "$ROOT/examples/customer_service" "$WORK/repo/examples/"
find "$WORK/repo" -name __pycache__ -prune -exec rm -rf {} +
sed -i 's/^MAX_DISCOUNT = 5$/MAX_DISCOUNT = 10/' "$WORK/repo/examples/customer_service/customer_service/tools.py"
git -C "$WORK/repo" init -q -b main
(cd "$WORK/repo/examples/customer_service" && PYTHONPATH="$ROOT/src" "$ROOT/.venv/bin/python" -m agent_eval_action baseline update)
B=evaluation/baselines/datasets/customer_service_golden.json
mkdir -p "$(dirname "$ROOT/examples/customer_service/$B")"
cp "$WORK/repo/examples/customer_service/$B" "$ROOT/examples/customer_service/$B"
echo "wrote examples/customer_service/$B"
