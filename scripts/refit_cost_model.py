#!/usr/bin/env python3
"""Refits the tiers' cost models on `boo tune`'s measurements and writes tuning/<device>.cost.json.

    scripts/refit_cost_model.py EXPORT.json [--holdout 0.5 [--holdout-commands F]] [--out FILE] [--device NAME]

EXPORT.json is `boo tune --export`'s array: its "kind": "measurement" objects are every candidate
`boo tune` timed, each with the cost model's terms ("term.<name>", seconds at ArchSpec's hand-set
rates, src/ops/cost_model.hpp) and the measured time. The model predicts a candidate's time as
sum_j scale_j * term_j, one scale per (implementation, term); the hand-set model has every scale 1.
The fit is least squares on the relative error, sum_i (predicted_i / measured_i - 1)^2, which is
linear in the scales (each row divided by its measured time); a scale the fit makes non-positive is
held at its hand-set 1 and the rest refitted, so every written scale is positive.

The report, for the hand-set and the refitted model, on the signatures fitted and (with --holdout F)
on the held-out F of them, chosen by a hash of the signature (deterministic, not random):
  r2_log        R^2 of log(predicted) against log(measured), over every candidate
  rank_accuracy how often the model's cheapest candidate is the measured fastest (ties in time count)
  pick/best     geomean of the model's pick's measured time over the fastest's (1.0: always the best)
  pick/heur     geomean of the model's pick's time over the heuristic's choice's (as timed by boo tune)
Only the candidates boo tune timed can be picked: the report says how the refitted model would rank
them, not what it would choose among configs nobody timed.

The file is a flat JSON object: "format": "boo-cost-model-1", "device", "scale.<impl>.<term>" numbers
and the report's numbers ("holdout.*", "fit.*"). The runtime reads it beside the shipped tunings
(BOO_SHIPPED_TUNING; =0 turns it off too) and `boo explain` names it as the cost model.
"""
import argparse
import hashlib
import json
import math
import pathlib
import re
import sys
from collections import defaultdict

FORMAT = "boo-cost-model-1"
KEY_FIELDS = ("implementation", "problem", "arch", "device", "version")


def file_stem(device):
    """ShippedTunings::file_name without ".json": every character but letters, digits, '.', '-' made '_'."""
    return re.sub(r"[^A-Za-z0-9.\-]", "_", device)


def load_measurements(path, device=None):
    """The export's measurements with terms, grouped by signature: {key: [(config, terms, us, heuristic)]}."""
    objects = json.loads(pathlib.Path(path).read_text())
    if not isinstance(objects, list):
        raise SystemExit(f"{path}: not a boo tune export (a JSON array)")
    groups = defaultdict(list)
    devices = set()
    for o in objects:
        if not isinstance(o, dict) or o.get("kind") != "measurement":
            continue
        if device and o.get("device") != device:
            continue
        terms = {k[len("term."):]: float(v) for k, v in o.items() if k.startswith("term.")}
        us = float(o.get("measured_us", 0))
        if not terms or not us > 0:
            continue  # a tier without a cost model of its configs, or a damaged row
        devices.add(o["device"])
        impl = o["implementation"]
        features = {f"{impl}.{t}": s for t, s in terms.items()}
        groups[tuple(o[f] for f in KEY_FIELDS)].append((o["config"], features, us, bool(o.get("heuristic"))))
    if len(devices) > 1:
        raise SystemExit(f"{path}: measurements of {len(devices)} devices ({', '.join(sorted(devices))}); "
                         "name one with --device")
    return dict(groups), (devices.pop() if devices else None)


def in_holdout(key, fraction):
    """Whether a signature is held out: its hash's position in [0, 1) below `fraction`."""
    digest = hashlib.sha256("\0".join(key).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def predict(features, scales):
    return sum(scales.get(name, 1.0) * s for name, s in features.items())


def solve(matrix, rhs):
    """Solves the small dense system matrix x = rhs (Gaussian elimination, partial pivoting); None if singular."""
    n = len(rhs)
    a = [row[:] + [rhs[i]] for i, row in enumerate(matrix)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        if abs(a[p][c]) < 1e-12 * max(1.0, max(abs(v) for row in a for v in row[:n])):
            return None
        a[c], a[p] = a[p], a[c]
        for r in range(n):
            if r != c:
                f = a[r][c] / a[c][c]
                for k in range(c, n + 1):
                    a[r][k] -= f * a[c][k]
    return [a[i][n] / a[i][i] for i in range(n)]


def fit(groups, min_rows=3):
    """The scales minimising the squared relative error over every measured candidate of `groups`."""
    rows = [(f, us * 1e-6) for cands in groups.values() for (_, f, us, _) in cands]
    counts = defaultdict(int)
    for f, _ in rows:
        for name, s in f.items():
            if s > 0:
                counts[name] += 1
    free = sorted(n for n, c in counts.items() if c >= min_rows)
    held = {}  # names kept at 1: too few rows, or the fit made them non-positive
    while free:
        # Row i: sum_j scale_j f_ij / t_i = 1 - (held terms' share); normal equations of the free scales.
        index = {n: j for j, n in enumerate(free)}
        ata = [[0.0] * len(free) for _ in free]
        atb = [0.0] * len(free)
        for f, t in rows:
            x = [0.0] * len(free)
            rest = 0.0
            for name, s in f.items():
                if name in index:
                    x[index[name]] = s / t
                else:
                    rest += held.get(name, 1.0) * s / t
            for j in range(len(free)):
                if x[j]:
                    atb[j] += x[j] * (1.0 - rest)
                    for k in range(len(free)):
                        ata[j][k] += x[j] * x[k]
        # A feature whose column is all zero (or collinear with another) cannot be told apart: kept at 1.
        sol = solve(ata, atb)
        if sol is None:
            held[free.pop()] = 1.0
            continue
        bad = [n for n, v in zip(free, sol) if not v > 0]
        if not bad:
            return dict(zip(free, sol)), sorted(held)
        for n in bad:
            free.remove(n)
            held[n] = 1.0
    return {}, sorted(held)


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(groups, scales):
    """Fit quality of `scales` over `groups` (see the module's docstring)."""
    logs_p, logs_m = [], []
    hits, pick_best, pick_heur = 0, [], []
    for cands in groups.values():
        for (_, f, us, _) in cands:
            logs_p.append(math.log(predict(f, scales) * 1e6))
            logs_m.append(math.log(us))
        pick = min(cands, key=lambda c: predict(c[1], scales))
        best = min(c[2] for c in cands)
        heuristic = [c for c in cands if c[3]]
        hits += pick[2] <= best
        pick_best.append(pick[2] / best)
        if heuristic:
            pick_heur.append(pick[2] / heuristic[0][2])
    mean = sum(logs_m) / len(logs_m) if logs_m else 0.0
    ss_tot = sum((m - mean) ** 2 for m in logs_m)
    ss_res = sum((m - p) ** 2 for m, p in zip(logs_m, logs_p))
    return {
        "signatures": len(groups),
        "candidates": len(logs_m),
        "r2_log": 1 - ss_res / ss_tot if ss_tot > 0 else float("nan"),
        "rank_accuracy": hits / len(groups) if groups else float("nan"),
        "pick_over_best": geomean(pick_best),
        "pick_over_heuristic": geomean(pick_heur),
    }


def heuristic_report(groups):
    """The heuristic's own choice (boo tune's candidate 0) over the fastest."""
    ratios = [next(c[2] for c in cands if c[3]) / min(c[2] for c in cands)
              for cands in groups.values() if any(c[3] for c in cands)]
    return {"heuristic_over_best": geomean(ratios)}


def describe(name, r):
    return (f"  {name:9s} R2(log) {r['r2_log']:.3f}, rank accuracy {r['rank_accuracy']:.3f}, "
            f"pick/best {r['pick_over_best']:.4f}, pick/heuristic {r['pick_over_heuristic']:.4f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("export", help="boo tune --export's JSON")
    ap.add_argument("--holdout", type=float, default=0.0,
                    help="fraction of signatures held out of the fit and reported on (0: fit and report on all)")
    ap.add_argument("--device", help="the device whose measurements to fit (needed where the export has several)")
    ap.add_argument("--out", help="the cost file (default: tuning/<device>.cost.json in the repository)")
    ap.add_argument("--holdout-commands", help="write the held-out signatures' commands here, one a line "
                    "(a boo-driver --commands-file: time the refitted heuristic on shapes it was not fitted on)")
    ap.add_argument("--min-rows", type=int, default=3, help="measurements a term needs to be fitted (else 1)")
    a = ap.parse_args(argv)
    if not 0 <= a.holdout < 1:
        ap.error("--holdout takes a fraction in [0, 1)")
    groups, device = load_measurements(a.export, a.device)
    if not groups:
        raise SystemExit(f"{a.export}: no measurements with cost-model terms (boo tune records them)")
    held = {k: v for k, v in groups.items() if a.holdout > 0 and in_holdout(k, a.holdout)}
    train = {k: v for k, v in groups.items() if k not in held}
    if not train:
        raise SystemExit("every signature fell in the held-out part: lower --holdout")
    if a.holdout_commands:
        pathlib.Path(a.holdout_commands).write_text("".join(sorted({k[1] + "\n" for k in held})))
    scales, kept = fit(train, a.min_rows)
    print(f"{device}: {len(train)} signatures fitted, {len(held)} held out; "
          f"{sum(len(v) for v in groups.values())} measured candidates")
    for name in sorted(scales):
        print(f"  scale {name} = {scales[name]:.4g}")
    for name in kept:
        print(f"  scale {name} = 1 (hand-set: too few measurements, or not separable)")
    out = {"format": FORMAT, "device": device}
    for name, v in sorted(scales.items()):
        out[f"scale.{name}"] = v
    for part, data in (("fit", train), ("holdout", held)):
        if not data:
            continue
        hand, refit = report(data, {}), report(data, scales)
        print(f"{part} ({len(data)} signatures): heuristic/best {heuristic_report(data)['heuristic_over_best']:.4f}")
        print(describe("hand-set", hand))
        print(describe("refitted", refit))
        out[f"{part}.heuristic_over_best"] = heuristic_report(data)["heuristic_over_best"]
        for model, r in (("hand_set", hand), ("refitted", refit)):
            for k, v in r.items():
                if isinstance(v, float) and not math.isfinite(v):
                    continue
                out[f"{part}.{model}.{k}"] = v
    if not scales:
        raise SystemExit("no scale could be fitted: nothing written")
    path = pathlib.Path(a.out) if a.out else \
        pathlib.Path(__file__).resolve().parent.parent / "tuning" / f"{file_stem(device)}.cost.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
