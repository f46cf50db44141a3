#!/usr/bin/env python3
"""Checks an ONNX file written by `camelot export` with the reference tools of the format.

    scripts/check-onnx.py MODEL.onnx CHECK.json [MODEL.onnx CHECK.json ...]

For each pair: `onnx.checker` (full check, with shape inference) must pass; the file must have
the promised input and outputs with a symbolic batch axis and the metadata keys; its JSON card
(MODEL.onnx.json) must name it and hash to it; and onnxruntime, run on the check data's positions
(written by `camelot export --check-data`, with burn's outputs), must give the same policy
logits, win/draw/loss probabilities and auxiliary outputs within 1e-4, at batch 1 and at the whole
batch. Needs `pip install onnx onnxruntime numpy`; .ci/run does that in a venv under target/.
"""

import argparse
import hashlib
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

TOLERANCE = 1e-4
METADATA_KEYS = ["variant", "encoding_version", "planes", "grid", "architecture", "actions"]


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def check(model_path, data_path):
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    with open(data_path) as f:
        data = json.load(f)
    expect(data.get("format") == "camelot-zero check data", f"{data_path}: not camelot-zero check data")

    meta = {entry.key: entry.value for entry in model.metadata_props}
    for key in METADATA_KEYS:
        expect(key in meta, f"metadata key {key} missing")
    expect(meta.get("variant") == data["variant"], f"variant {meta.get('variant')} vs check data {data['variant']}")
    batch, planes, ranks, files = data["board_shape"]
    graph = model.graph
    expect([i.name for i in graph.input] == ["board"], f"inputs {[i.name for i in graph.input]}")
    expect(dims(graph.input[0]) == ["batch", planes, ranks, files], f"board shape {dims(graph.input[0])}")
    if "planes" in meta:
        expect(len(json.loads(meta["planes"])) == planes, "metadata planes disagree with the input")
    names = [o.name for o in graph.output]
    wanted = ["policy_logits", "value"] + (["aux"] if data["aux"] else [])
    expect(names == wanted, f"outputs {names}, expected {wanted}")
    for output in graph.output:
        expect(dims(output)[0] == "batch", f"{output.name}: batch axis {dims(output)[0]} is not symbolic")

    card_path = model_path + ".json"
    with open(card_path) as f:
        card = json.load(f)
    with open(model_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    expect(card["file"] == os.path.basename(model_path), f"{card_path}: names {card['file']}")
    expect(card["file_sha256"] == digest, f"{card_path}: SHA-256 differs from the file's")
    expect(card["actions"]["count"] == dims(graph.output[0])[1], f"{card_path}: action count")

    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    board = np.asarray(data["board"], dtype=np.float32).reshape(data["board_shape"])
    expected = {
        "policy_logits": np.asarray(data["policy_logits"], dtype=np.float32).reshape(batch, -1),
        "value": np.asarray(data["value"], dtype=np.float32).reshape(batch, 3),
    }
    if data["aux"]:
        expected["aux"] = np.asarray(data["aux"], dtype=np.float32).reshape(batch, -1)
    worst = 0.0
    for n in sorted({1, batch}):
        outputs = session.run(list(expected), {"board": board[:n]})
        for (name, want), got in zip(expected.items(), outputs):
            difference = float(np.max(np.abs(want[:n] - got)))
            worst = max(worst, difference)
            expect(difference < TOLERANCE, f"batch {n}, {name}: max abs difference {difference:.3g}")
        expect(np.allclose(outputs[1].sum(axis=1), 1.0, atol=1e-5), f"batch {n}: value rows do not sum to 1")
    return failures, worst, batch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", metavar="MODEL.onnx CHECK.json")
    args = parser.parse_args()
    if len(args.files) % 2:
        parser.error("give MODEL.onnx CHECK.json pairs")
    passed = failed = 0
    for model_path, data_path in zip(args.files[::2], args.files[1::2]):
        failures, worst, batch = check(model_path, data_path)
        if failures:
            failed += 1
            print(f"FAIL {model_path}:")
            for failure in failures:
                print(f"  {failure}")
        else:
            passed += 1
            print(
                f"ok   {model_path}: onnx.checker passed; onnxruntime {ort.__version__} matches burn on "
                f"{batch} positions, max abs difference {worst:.2g}"
            )
    print(f"check-onnx: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
