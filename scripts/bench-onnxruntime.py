#!/usr/bin/env python3
"""onnxruntime's inference rate on an ONNX file from `camelot export`, one line per batch size in
the shape of `camelot bench net` (`batch N: P positions/s, ...`), for
scripts/bench-vs-onnxruntime.sh.

    python3 scripts/bench-onnxruntime.py MODEL.onnx --batch 32,128 --seconds 2 --threads 1

Inputs are random 0/1 planes of the graph's input shape (a convolution's cost does not depend on
the values).
"""
import argparse
import sys
import time

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:
    sys.exit(f"{e.name} is missing: pip install onnxruntime numpy")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--batch", default="32,128")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    board = session.get_inputs()[0]
    planes, ranks, files = board.shape[1:]
    print(f"onnxruntime {ort.__version__}, {args.threads} thread(s), input {board.name} [batch, {planes}, {ranks}, {files}]")
    rng = np.random.default_rng(1)
    for batch in [int(b) for b in args.batch.split(",")]:
        x = (rng.random((batch, planes, ranks, files)) < 0.2).astype(np.float32)
        session.run(None, {board.name: x})
        runs = 0
        start = time.perf_counter()
        while time.perf_counter() - start < args.seconds:
            session.run(None, {board.name: x})
            runs += 1
        seconds = time.perf_counter() - start
        print(f"batch {batch}: {runs * batch / seconds:.0f} positions/s, {1e3 * seconds / runs:.2f} ms per batch")


if __name__ == "__main__":
    main()
