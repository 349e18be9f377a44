"""scripts/refit_cost_model.py on a synthetic boo tune export whose true scales are known.

Run by ctest as: python3 tests/python/test_refit_cost_model.py <repository root>
Every candidate's measured time is the true model's (each term times its true scale) with a 1% wobble;
the hand-set model (every scale 1) weighs compute against memory wrongly, so its pick is often not the
fastest. The fit must recover the true scales, and on the held-out half the refitted model's pick must
be faster than the hand-set model's and the heuristic's.
"""
import json
import math
import pathlib
import random
import subprocess
import sys
import tempfile

DEVICE = "NVIDIA H100 80GB HBM3"
TRUE = {
    "gpu:conv:implicit_gemm.compute_mma_sync": 1.6,
    "gpu:conv:implicit_gemm.splitk_memory": 0.3,
    "gpu:conv:implicit_gemm.launch": 2.5,
    "gpu:conv:wgmma_sm90.compute": 0.7,
    "gpu:conv:wgmma_sm90.splitk_memory": 3.0,
}


def synthetic_export(rng):
    objects = []
    for sig in range(80):
        impl = "gpu:conv:implicit_gemm" if sig % 2 else "gpu:conv:wgmma_sm90"
        problem = f"convbfp16 -n {sig + 1} -c 64 -H 56 -W 56 -k 64 -y 3 -x 3"
        objects.append({"implementation": impl, "problem": problem, "arch": "sm_90a", "device": DEVICE,
                        "version": "v1", "config": "tiles 0", "time_us": 10.0, "heuristic_us": 11.0,
                        "tuned_at": 1764000000})
        cands = []
        for c in range(6):
            if impl == "gpu:conv:implicit_gemm":
                terms = {"compute_mma_sync": rng.uniform(5e-6, 50e-6)}
                if c % 2:
                    terms.update({"splitk_memory": rng.uniform(1e-6, 40e-6), "launch": 2e-6})
            else:
                terms = {"compute": rng.uniform(5e-6, 50e-6)}
                if c % 3 == 0:
                    terms["splitk_memory"] = rng.uniform(1e-6, 10e-6)
            cands.append(terms)
        hand_pick = min(range(len(cands)), key=lambda i: sum(cands[i].values()))
        for i, terms in enumerate(cands):
            true_s = sum(TRUE[f"{impl}.{t}"] * s for t, s in terms.items())
            o = {"kind": "measurement", "implementation": impl, "problem": problem, "arch": "sm_90a",
                 "device": DEVICE, "version": "v1", "config": f"tiles {i}",
                 "predicted_us": sum(terms.values()) * 1e6,
                 "measured_us": true_s * 1e6 * rng.uniform(0.99, 1.01), "heuristic": i == hand_pick}
            o.update({f"term.{t}": s for t, s in terms.items()})
            o["measured_at"] = 1764000000
            objects.append(o)
    return objects


def fail(what, r=None):
    print("FAIL:", what)
    if r is not None:
        print("--- stdout\n" + r.stdout + "\n--- stderr\n" + r.stderr)
    sys.exit(1)


def main():
    root = pathlib.Path(sys.argv[1])
    script = root / "scripts" / "refit_cost_model.py"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="boo_refit_"))
    export = tmp / "export.json"
    export.write_text(json.dumps(synthetic_export(random.Random(25))))
    out = tmp / "model.cost.json"
    held = tmp / "held.txt"
    cmd = [sys.executable, str(script), str(export), "--holdout", "0.5", "--holdout-commands", str(held),
           "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout)
    if r.returncode != 0:
        fail("the refit on a synthetic export", r)
    model = json.loads(out.read_text())
    if model.get("format") != "boo-cost-model-1" or model.get("device") != DEVICE:
        fail(f"the file's format and device: {model}")
    for name, truth in TRUE.items():
        got = model.get(f"scale.{name}")
        if got is None or abs(got / truth - 1) > 0.03:
            fail(f"scale {name}: fitted {got}, true {truth}")
    # The held-out half: the refitted model ranks better than the hand-set one and picks faster configs.
    h = lambda k: model[f"holdout.{k}"]
    if not 20 <= model["holdout.refitted.signatures"] <= 60:
        fail(f"the held-out half has {model['holdout.refitted.signatures']} of 80 signatures")
    if not h("refitted.rank_accuracy") > h("hand_set.rank_accuracy") + 0.1:
        fail(f"rank accuracy held out: refitted {h('refitted.rank_accuracy')}, hand-set {h('hand_set.rank_accuracy')}")
    if not h("refitted.pick_over_best") < 1.01 < h("hand_set.pick_over_best"):
        fail(f"pick/best held out: refitted {h('refitted.pick_over_best')}, hand-set {h('hand_set.pick_over_best')}")
    if not h("refitted.pick_over_heuristic") < 0.99 or not h("heuristic_over_best") > 1.02:
        fail("the refitted pick is not faster than the heuristic's held out")
    if not h("refitted.r2_log") > 0.99 > h("hand_set.r2_log"):
        fail(f"R2 held out: refitted {h('refitted.r2_log')}, hand-set {h('hand_set.r2_log')}")
    for line in ("holdout (", "refitted  R2(log)", "hand-set  R2(log)"):
        if line not in r.stdout:
            fail(f"the report has no '{line}'", r)
    held_lines = held.read_text().splitlines()
    if len(held_lines) != model["holdout.refitted.signatures"] or not all(l.startswith("convbfp16 ") for l in held_lines):
        fail(f"the held-out commands file: {len(held_lines)} lines")
    # Deterministic: the same export splits and fits the same.
    again = tmp / "again.cost.json"
    subprocess.run(cmd[:-1] + [str(again)], check=True, capture_output=True)
    if again.read_text() != out.read_text():
        fail("a second refit of the same export differs")
    # An export without measurements (schema 1's rows only) has nothing to fit: a clear refusal, no file.
    rows_only = tmp / "rows.json"
    rows_only.write_text(json.dumps([o for o in json.loads(export.read_text()) if "kind" not in o]))
    none = tmp / "none.cost.json"
    r = subprocess.run([sys.executable, str(script), str(rows_only), "--out", str(none)], capture_output=True, text=True)
    if r.returncode == 0 or none.exists() or "no measurements" not in r.stderr:
        fail("an export without measurements", r)
    print("PASS")


if __name__ == "__main__":
    main()
