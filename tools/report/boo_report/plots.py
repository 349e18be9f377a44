"""boo report: the figures, drawn with matplotlib (Agg, no display), each returned as PNG bytes."""
import io
import math
import random

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from .summary import dtype_of

FASTER = "#2e8b57"  # boo ahead
SLOWER = "#c0392b"  # boo behind
DTYPE_MARKERS = {"bf16": "o", "fp16": "s", "fp32": "^"}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
           "#d62728"]


def _png(fig):
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def _ratio_ticks(lo, hi):
    """Ticks at powers of two within [lo, hi], and 1.5x steps between them over a range of at most four
    octaves (more would crowd the labels)."""
    ticks = []
    steps = (1.0, 1.5) if math.log2(hi / lo) <= 4 else (1.0,)
    for e in range(math.floor(math.log2(lo)) - 1, math.ceil(math.log2(hi)) + 2):
        for m in steps:
            t = m * 2.0 ** e
            if lo <= t <= hi:
                ticks.append(t)
    return ticks


def _fmt_ratio(v, _pos=None):
    """'2x', '1.5x', '0.75x'; a power of two below 1 as '1/8x'."""
    inverse = 1 / v
    if v < 1 and abs(inverse - round(inverse)) < 1e-9 and inverse > 2:
        return f"1/{round(inverse)}x"
    return f"{v:.3g}x"


def strip_plot(groups, title, xlabel, lower_is_better):
    """One row per group (label, values, geomean), top to bottom: every value as a dot (jittered, seeded so
    the picture is reproducible), the geometric mean as a black bar, 'gm' and the count at the right. The
    x axis is logarithmic around 1 (no change); the side where boo is ahead is shaded green."""
    rng = random.Random(0)
    rows = [g for g in groups if g[1]]
    values = [v for _, vs, _ in rows for v in vs]
    lo, hi = min(values + [1.0]), max(values + [1.0])
    lo, hi = lo / 1.15, hi * 1.15
    fig = Figure(figsize=(11, max(2.4, 0.36 * len(rows) + 1.4)))
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    good_lo, good_hi = (lo, 1.0) if lower_is_better else (1.0, hi)
    ax.axvspan(good_lo, good_hi, color=FASTER, alpha=0.07, lw=0)
    ax.axvline(1.0, color="#555", lw=1)
    for i, (label, vs, gm) in enumerate(rows):
        colors = [FASTER if (v < 1) == lower_is_better and v != 1 else SLOWER for v in vs]
        ys = [i + rng.uniform(-0.28, 0.28) for _ in vs]
        ax.scatter(vs, ys, s=11, c=colors, alpha=0.55, lw=0)
        ax.plot([gm, gm], [i - 0.38, i + 0.38], color="black", lw=2.5)
        ax.annotate(f"gm {gm:.2f}  n={len(vs)}", xy=(1.0, i), xycoords=("axes fraction", "data"),
                    xytext=(6, 0), textcoords="offset points", va="center", fontsize=9)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows], fontsize=9)
    ax.xaxis.set_major_locator(FixedLocator(_ratio_ticks(lo, hi)))
    ax.xaxis.set_major_formatter(FuncFormatter(_fmt_ratio))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.grid(axis="x", color="#ddd", lw=0.6)
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left", fontsize=11)
    # Room on the left for the longest group label (about 0.07 inch a character at 9 points).
    longest = max(len(r[0]) for r in rows)
    fig.subplots_adjust(left=min(0.45, 0.02 + 0.0068 * longest), right=0.88, top=1 - 0.45 / fig.get_figheight(),
                        bottom=0.62 / fig.get_figheight())
    return _png(fig)


def roofline(lines, backends, ceilings):
    """Achieved TFLOP/s against FLOPs per byte, one panel per backend on the same axes; colour = direction,
    marker = dtype; the ceilings min(peak, intensity x bandwidth) when known."""
    pts = {b: [(ln.intensity, ln.tflops(b), ln) for ln in lines if ln.intensity and ln.tflops(b)] for b in backends}
    allx = [x for b in backends for x, _, _ in pts[b]]
    ally = [y for b in backends for _, y, _ in pts[b]]
    directions = sorted({ln.direction for b in backends for _, _, ln in pts[b]})
    color = {d: PALETTE[i % len(PALETTE)] for i, d in enumerate(directions)}
    dtypes = sorted({dtype_of(ln.op) for b in backends for _, _, ln in pts[b]})
    fig = Figure(figsize=(12, 5.2))
    axes = fig.subplots(1, len(backends), sharex=True, sharey=True, squeeze=False)[0]
    if allx:
        xlo, xhi = min(allx) / 1.6, max(allx) * 1.6
        ylo = min(ally) / 1.6
        yhi = max(ally + ([ceilings.peak_tflops] if ceilings else [])) * 1.6
    else:
        xlo, xhi, ylo, yhi = 1, 1000, 1, 1000
    for ax, b in zip(axes, backends):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(xlo, xhi)
        ax.set_ylim(ylo, yhi)
        ax.grid(which="major", color="#ddd", lw=0.6)
        if ceilings:
            n = 200
            xs = [xlo * (xhi / xlo) ** (i / (n - 1)) for i in range(n)]
            ax.plot(xs, [min(ceilings.peak_tflops, x * ceilings.bandwidth_tbs) for x in xs], color="#333", lw=1.4)
            ax.text(xhi / 1.1, ceilings.peak_tflops * 1.12, f"{ceilings.peak_tflops:g} TFLOP/s", ha="right",
                    fontsize=8.5, color="#333")
            ridge = ceilings.peak_tflops / ceilings.bandwidth_tbs
            xm = max(xlo * 1.5, min(ridge / 8, xhi))
            ax.text(xm, xm * ceilings.bandwidth_tbs * 1.25, f"{ceilings.bandwidth_tbs:g} TB/s", fontsize=8.5,
                    color="#333", rotation_mode="anchor")
        for d in directions:
            for t in dtypes:
                sel = [(x, y) for x, y, ln in pts[b] if ln.direction == d and dtype_of(ln.op) == t]
                if sel:
                    ax.scatter([x for x, _ in sel], [y for _, y in sel], s=16, alpha=0.7, c=color[d],
                               marker=DTYPE_MARKERS.get(t, "o"), lw=0)
        ax.set_title(f"{b}: {len(pts[b])} lines", loc="left", fontsize=11)
        ax.set_xlabel("arithmetic intensity (FLOP / minimum bytes)")
    axes[0].set_ylabel("achieved TFLOP/s")
    handles = [Line2D([], [], ls="", marker="o", color=color[d], label=d) for d in directions]
    handles += [Line2D([], [], ls="", marker=DTYPE_MARKERS.get(t, "o"), color="#555", label=t) for t in dtypes]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 8), fontsize=9, frameon=False)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=0.2, wspace=0.06)
    return _png(fig)
