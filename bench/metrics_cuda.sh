#!/usr/bin/env bash
# The metric workers' checks on a CUDA machine, in one run: the metric tests on CUDA, then
# bench/metrics.py, bench/metrics_before_after.py and bench/metrics_profile.py (batch-size
# sweep and profile) at 512x288, 1280x720 and 1920x1080. Logs go to $OUT
# (default /tmp/metrics_cuda). docs/admins.md ("Scoring speed") quotes its figures.
#
#   bench/metrics_cuda.sh
#
# For a machine without the ffmpeg command line or git (a bare GPU image), prepare here:
#   - wheels of what it lacks in .whl/ (av, ffmpeg-python, future, siti-tools, plotille),
#   - clips in CLIPS/clips_WxH/ (bench.metrics.make_clips; CLIPS defaults to .devrun),
#   - the tree to compare with in BEFORE (git archive REV media_pipeline | tar -x -C DIR),
# and carry them along. Each step has a time limit so that one slow step leaves the rest.
set -u
OUT=${OUT:-/tmp/metrics_cuda}
CLIPS=${CLIPS:-.devrun}
BEFORE=${BEFORE:-.devrun/before}
PY=${PYTHON:-python3}
SIZES=${SIZES:-512x288 1280x720 1920x1080}
PROFILE_SIZES=${PROFILE_SIZES:-$SIZES}
BEFORE_SIZES=${BEFORE_SIZES:-$SIZES}
BEFORE_ARGS=${BEFORE_ARGS:---repeats 2}  # add --batch to compare score_videos batches
TESTS=${TESTS:-tests/media_pipeline/test_metrics_devices.py}
DEVICE=${DEVICE:-cuda}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" > /dev/null; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
{
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
    nproc
    $PY -c "import torch, av; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'av', av.__version__)"
} 2>&1 | tee "$OUT/env.txt"

step() {  # step SECONDS LOG COMMAND...
    local limit=$1 log=$2
    shift 2
    echo "== $*" | tee -a "$OUT/$log"
    timeout "$limit" "$@" 2>&1 | tee -a "$OUT/$log"
}

step 90 tests.txt $PY -m pytest --noconftest -p no:django -p no:cacheprovider -q -rs $TESTS
for size in $SIZES; do
    clips=()
    [ -d "$CLIPS/clips_$size" ] && clips=(--clips "$CLIPS/clips_$size")
    step 80 bench.txt $PY bench/metrics.py --device "$DEVICE" --size "$size" --repeats 3 "${clips[@]}"
done
if [ -d "$BEFORE/media_pipeline" ]; then
    for size in $BEFORE_SIZES; do
        [ -d "$CLIPS/clips_$size" ] || continue
        step 60 before_after.txt $PY bench/metrics_before_after.py --before "$BEFORE" \
            --clips "$CLIPS/clips_$size" --device "$DEVICE" $BEFORE_ARGS
    done
fi
for size in $PROFILE_SIZES; do
    [ -d "$CLIPS/clips_$size" ] || continue
    step 45 profile.txt $PY bench/metrics_profile.py --device "$DEVICE" --clips "$CLIPS/clips_$size" \
        --batch-sizes "${BATCH_SIZES-8,16,32,64,128}" --repeats 2 --out "$OUT/profile_tables.txt"
done
grep -h "ratio\|passed\|failed" "$OUT"/*.txt | grep -v "^==\|^{" | cut -c1-240
