"""boo report: from runs to the page's numbers and figures, and the files written."""
import os

from . import plots, summary
from .page import render
from .runs import ceilings_for

PNG_NAMES = {"ratio_png": "ratios.png", "roofline_png": "roofline.png"}
CHANGED = 1.03  # a line counts as faster or slower after beyond 3% (run-to-run spread of one list)


def _strip_groups(lines, value):
    """(label, values, geomean) per group, worst geomean first: what strip_plot draws."""
    groups = {}
    for ln in lines:
        v = value(ln)
        if v is not None:
            groups.setdefault(ln.group, []).append(v)
    rows = [(k, vs, summary.geomean(vs)) for k, vs in groups.items()]
    return sorted(rows, key=lambda g: -g[2])


def compare(before, after, top):
    pairs, only_before, only_after = summary.pair_lines(before, after)
    timed = [p for p in pairs if p.speedup is not None]
    groups = {}
    for p in timed:
        groups.setdefault(p.after.group, []).append(p)
    rows = []
    for k in sorted(groups):
        ps = groups[k]
        rows.append((k, len(ps), summary.geomean([p.speedup for p in ps]),
                     summary.geomean([p.before.ratio for p in ps]), summary.geomean([p.after.ratio for p in ps]),
                     summary.geomean([p.vendor_drift for p in ps])))
    by_speedup = sorted(timed, key=lambda p: p.speedup)
    strip = {}
    for p in timed:
        strip.setdefault(p.after.group, []).append(p.speedup)
    strip_rows = sorted(((k, vs, summary.geomean(vs)) for k, vs in strip.items()), key=lambda g: g[2])
    return {
        "before": before.label, "after": after.label, "paired": len(timed),
        "speedup": summary.geomean([p.speedup for p in timed]),
        "faster": sum(p.speedup > CHANGED for p in timed), "slower": sum(p.speedup < 1 / CHANGED for p in timed),
        "before_ratio": summary.geomean([p.before.ratio for p in timed]),
        "after_ratio": summary.geomean([p.after.ratio for p in timed]),
        "vendor_drift": summary.geomean([p.vendor_drift for p in timed]),
        "groups": rows, "regressions": by_speedup[:top], "improvements": list(reversed(by_speedup[-top:])),
        "only_before": only_before, "only_after": only_after,
        "png": plots.strip_plot(strip_rows, "boo speed-up per line (before / after time), worst group first",
                                "speed-up (above 1: the after run is faster)", lower_is_better=False),
    }


def build(run, args, before=None):
    """Everything the page shows for run (and the comparison with before, when given)."""
    ceilings = ceilings_for(run, args.device, args.peak_tflops, args.bandwidth_tbs)
    lines = run.lines
    vendor = run.vendor
    ratios = [ln.ratio for ln in lines if ln.ratio is not None]
    slowest, fastest = summary.extremes(lines, args.top)
    roof_backends = ["boo"] + ([vendor] if vendor else [])
    has_roofline = any(ln.intensity for ln in lines)
    def stems(r):
        return ", ".join(os.path.splitext(os.path.basename(p))[0] for p in r.paths)
    title = args.title or f"boo vs {vendor or 'nothing'}: {stems(run)}" + (
        f" (before: {stems(before)})" if before is not None else "")
    r = {
        "run": run, "ceilings": ceilings, "title": title,
        "title_note": "" if args.title else " (neither in the CSV nor in its file name)",
        "geomean": summary.geomean(ratios), "worst": max(ratios, default=None), "best": min(ratios, default=None),
        "boo_roof": summary.median([ln.roof_fraction("boo", ceilings) for ln in lines]),
        "vendor_roof": summary.median([ln.roof_fraction(vendor, ceilings) for ln in lines]) if vendor else None,
        "by_direction": summary.group_stats(lines, lambda ln: ln.direction, ceilings),
        "by_op": summary.group_stats(lines, lambda ln: ln.op, ceilings),
        "by_layout": summary.group_stats(lines, lambda ln: ln.layout, ceilings),
        "by_group": sorted(summary.group_stats(lines, lambda ln: ln.group, ceilings),
                           key=lambda g: -(g.geomean or 0)),
        "slowest": slowest, "fastest": fastest,
        "numerics": summary.numerics_summary(lines, args.top) if run.has_numerics else None,
        "without_result": summary.without_result(lines),
        "ratio_png": None if not ratios else plots.strip_plot(_strip_groups(lines, lambda ln: ln.ratio),
                                      f"boo/{vendor} time per line, worst group first",
                                      f"boo time / {vendor} time (below 1: boo is faster)", lower_is_better=True),
        "roofline_png": plots.roofline(lines, roof_backends, ceilings) if has_roofline else None,
        "compare": compare(before, run, args.top) if before is not None else None,
    }
    return r


def write(r, out_path, png_dir):
    page = render(r)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(page)
    written = [out_path]
    if png_dir:
        os.makedirs(png_dir, exist_ok=True)
        pngs = dict(PNG_NAMES)
        if r["compare"]:
            pngs["compare"] = "speedup.png"
        for key, name in pngs.items():
            data = r[key]["png"] if key == "compare" else r[key]
            if data:
                path = os.path.join(png_dir, name)
                with open(path, "wb") as f:
                    f.write(data)
                written.append(path)
    return written
