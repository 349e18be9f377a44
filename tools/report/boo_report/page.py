"""boo report: the HTML page. One file: styles inline, figures as data: URIs, no script and nothing fetched,
so it opens from disk anywhere. Every summary number sits in a cell with a data-key attribute
(e.g. data-key="geomean:direction:F1 fwd"), which tests/report reads back."""
import base64
import html

from .summary import dtype_of


STYLE = """
body { font: 14px/1.45 -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; margin: 24px auto;
       max-width: 1240px; color: #1d1d1f; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 16px 0 6px; }
.sub { color: #666; margin: 0 0 14px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border: 1px solid #e0e0e0; padding: 3px 7px; text-align: right; vertical-align: top; }
th { background: #f4f5f7; font-weight: 600; }
td.l, th.l { text-align: left; }
table.meta td, table.meta th { text-align: left; }
code { font: 12px/1.35 'DejaVu Sans Mono', Menlo, monospace; overflow-wrap: anywhere; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 150px; background: #fafbfc; }
.card .v { font-size: 22px; font-weight: 650; } .card .k { color: #555; font-size: 12px; }
.row { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
.good { color: #1e7a46; } .bad { color: #b3261e; }
img { max-width: 100%; border: 1px solid #eee; }
details summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
.note { color: #555; font-size: 13px; }
"""


def esc(text):
    return html.escape(str(text), quote=True)


def fmt_ratio(v, digits=3):
    return "–" if v is None else f"{v:.{digits}f}"


def fmt_us(v):
    return "–" if v is None else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def fmt_tflops(v):
    return "–" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else f"{v:.2f}"


def fmt_pct(v):
    return "–" if v is None else f"{100 * v:.0f}%"


def fmt_err(v):
    return "–" if v is None else f"{v:.2e}"


def cls_ratio(v, lower_is_better=True):
    if v is None or v == 1:
        return ""
    return "good" if (v < 1) == lower_is_better else "bad"


def cell(text, key=None, cls=""):
    attrs = (f' data-key="{esc(key)}"' if key else "") + (f' class="{cls}"' if cls else "")
    return f"<td{attrs}>{esc(text)}</td>"


def table(headers, rows, left=()):
    """rows: lists of ready <td> strings; headers: names (those in left are left-aligned)."""
    head = "".join(f'<th class="l">{esc(h)}</th>' if h in left else f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def image(png, alt):
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def card(value, label, key=None, cls=""):
    attrs = (f' data-key="{esc(key)}"' if key else "") + (f' class="v {cls}"' if cls else ' class="v"')
    return f'<div class="card"><div{attrs}>{esc(value)}</div><div class="k">{esc(label)}</div></div>'


def group_table(stats, title, kind, vendor):
    rows = []
    for g in stats:
        k = f"{kind}:{g.key}"
        rows.append([cell(g.key, cls="l"), cell(g.lines), cell(g.timed),
                     cell(fmt_ratio(g.geomean), "geomean:" + k, cls_ratio(g.geomean)),
                     cell(fmt_ratio(g.median, 2)), cell(fmt_ratio(g.best, 2)), cell(fmt_ratio(g.worst, 2)),
                     cell(f"{g.faster}/{g.timed}", "faster:" + k),
                     cell(fmt_pct(g.boo_roof)), cell(fmt_pct(g.vendor_roof))])
    headers = [title, "lines", "timed", "geomean boo/" + vendor, "median", "best", "worst", "boo faster",
               "boo % roof", vendor + " % roof"]
    return table(headers, rows, left=(title,))


def line_rows(lines, vendor, ceilings, with_source):
    rows = []
    for ln in lines:
        r = [cell(fmt_ratio(ln.ratio, 2), cls=cls_ratio(ln.ratio)), cell(fmt_us(ln.boo_us)), cell(fmt_us(ln.vendor_us)),
             cell(fmt_tflops(ln.tflops("boo"))), cell(fmt_tflops(ln.tflops(vendor))),
             cell(fmt_pct(ln.roof_fraction("boo", ceilings))), cell(ln.group, cls="l")]
        where = f"{ln.source}:{ln.row}" if with_source else str(ln.row)
        r.append(f'<td class="l">{esc(where)}: <code>{esc(ln.command)}</code></td>')
        rows.append(r)
    return rows


def line_table(lines, vendor, ceilings, with_source):
    headers = ["boo/" + vendor, "boo µs", vendor + " µs", "boo TFLOP/s", vendor + " TFLOP/s", "boo % roof", "group",
               "row: command"]
    return table(headers, line_rows(lines, vendor, ceilings, with_source), left=("group", "row: command"))


def metadata(run, ceilings, title_note):
    def listed(values):
        return "; ".join(f"{v} ({src})" for v, src in values) or "not recorded" + title_note
    rows = [("files", run.label), ("device", listed(run.devices)), ("commit", listed(run.commits)),
            ("date", listed(run.dates)), ("backends", ", ".join(run.backends)),
            ("baseline", run.vendor or "none (no vendor backend in the CSV)"), ("lines", str(len(run.lines)))]
    if ceilings:
        rows.append(("roofline", f"{ceilings.peak_tflops:g} TFLOP/s ({ceilings.peak_source}); "
                                 f"{ceilings.bandwidth_tbs:g} TB/s ({ceilings.bandwidth_source})"))
    else:
        rows.append(("roofline", "no ceilings: the device is not known (H100, H200); pass --peak-tflops and "
                                 "--bandwidth-tbs"))
    return '<table class="meta">' + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows) + \
        "</table>"


def numerics_section(ns, vendor, with_source):
    out = ["<h2>Numerics</h2>"]
    if ns.judged == 0:
        return "".join(out + ['<p class="note">No line was judged (the CSV has numerics columns but every verdict '
                              'is N.A.).</p>'])
    out.append('<div class="cards">' +
               card(f"{ns.passed}/{ns.judged}", "lines passing numerics", "numerics:pass-of-judged",
                    "good" if ns.passed == ns.judged else "bad") +
               card(len(ns.failed), "failing", "numerics:failed", "bad" if ns.failed else "") +
               card(ns.not_judged, "not judged (no result)", "numerics:not-judged") + "</div>")
    if ns.failed:
        rows = [[cell(f"{ln.source}:{ln.row}" if with_source else ln.row, cls="l"), cell(fmt_err(ln.numerics.boo_max)),
                 cell(fmt_err(ln.numerics.vendor_max)), cell(ln.error or "–", cls="l"),
                 f'<td class="l"><code>{esc(ln.command)}</code></td>'] for ln in ns.failed]
        out.append("<h3>Failing lines</h3>" + table(["row", "boo max err", vendor + " max err", "why", "command"], rows,
                                                    left=("row", "why", "command")))
    rows = []
    for ln in ns.worst:
        n = ln.numerics
        rel = n.boo_max / n.vendor_max if n.boo_max is not None and n.vendor_max else None
        rows.append([cell(f"{ln.source}:{ln.row}" if with_source else ln.row, cls="l"), cell(n.verdict),
                     cell(fmt_err(n.boo_max)), cell(fmt_err(n.vendor_max)),
                     cell(fmt_ratio(rel, 2), cls=cls_ratio(rel)), cell(fmt_err(n.boo_vs_vendor_max)),
                     cell(n.reference or "–", cls="l"), f'<td class="l"><code>{esc(ln.command)}</code></td>'])
    out.append("<h3>Largest errors (max |boo - reference|)</h3>" +
               table(["row", "verdict", "boo max err", vendor + " max err", "boo/" + vendor + " err",
                      "max |boo - " + vendor + "|", "reference", "command"], rows,
                     left=("row", "reference", "command")))
    return "".join(out)


def comparison_section(cmp, vendor):
    """cmp: the dict report.compare() makes."""
    out = ["<h2>Before / after</h2>",
           f'<p class="note">Before: {esc(cmp["before"])}; after: {esc(cmp["after"])}. Speed-up = boo time before / '
           f"after (above 1: the after run is faster). The {esc(vendor)} drift is the same ratio for the "
           f"vendor's time: it ran the same library on the same lines, so its spread is the measurement's.</p>",
           '<div class="cards">' +
           card(fmt_ratio(cmp["speedup"]), "geomean boo speed-up", "compare:speedup", cls_ratio(cmp["speedup"], False)) +
           card(f'{cmp["faster"]}/{cmp["paired"]}', "lines faster after (>3%)", "compare:faster") +
           card(f'{cmp["slower"]}/{cmp["paired"]}', "lines slower after (>3%)", "compare:slower") +
           card(fmt_ratio(cmp["before_ratio"]) + " → " + fmt_ratio(cmp["after_ratio"]),
                f"geomean boo/{vendor}, before → after", "compare:ratio") +
           card(fmt_ratio(cmp["vendor_drift"]), f"{vendor} drift (geomean)", "compare:vendor-drift") + "</div>"]
    rows = [[cell(k, cls="l"), cell(n), cell(fmt_ratio(s), "compare:speedup:" + k, cls_ratio(s, False)),
             cell(fmt_ratio(rb)), cell(fmt_ratio(ra)), cell(fmt_ratio(d))] for k, n, s, rb, ra, d in cmp["groups"]]
    out.append(table(["group", "lines", "geomean speed-up", f"boo/{vendor} before", f"boo/{vendor} after",
                      f"{vendor} drift"], rows, left=("group",)))
    out.append(image(cmp["png"], "boo speed-up per line, by group"))
    for title, pairs in (("Largest regressions", cmp["regressions"]), ("Largest improvements", cmp["improvements"])):
        rows = [[cell(fmt_ratio(p.speedup, 2), cls=cls_ratio(p.speedup, False)), cell(fmt_us(p.before.boo_us)),
                 cell(fmt_us(p.after.boo_us)), cell(fmt_ratio(p.vendor_drift, 2)), cell(p.after.group, cls="l"),
                 f'<td class="l">{p.after.row}: <code>{esc(p.after.command)}</code></td>'] for p in pairs]
        out.append(f"<h3>{title}</h3>" + table(["speed-up", "boo µs before", "boo µs after", vendor + " drift", "group",
                                                "row: command"], rows, left=("group", "row: command")))
    for title, lines in (("Only in the before run", cmp["only_before"]), ("Only in the after run", cmp["only_after"])):
        if lines:
            out.append(f"<h3>{title}: {len(lines)}</h3><ul>" +
                       "".join(f"<li><code>{esc(ln.command)}</code></li>" for ln in lines[:50]) + "</ul>")
    return "".join(out)


def render(r):
    """r: the dict report.build() makes."""
    run, vendor, ceil = r["run"], r["run"].vendor or "vendor", r["ceilings"]
    with_source = len(run.paths) > 1
    lines = run.lines
    timed = [ln for ln in lines if ln.ratio is not None]
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(r['title'])}</title>"
             f"<style>{STYLE}</style></head><body>",
             f"<h1>{esc(r['title'])}</h1><p class=\"sub\">boo report of {esc(run.label)}</p>",
             metadata(run, ceil, r["title_note"])]
    cards = [card(fmt_ratio(r["geomean"]), f"geomean boo/{vendor} time ({len(timed)} lines)", "geomean:all",
                  cls_ratio(r["geomean"])),
             card(f"{sum(ln.ratio < 1 for ln in timed)}/{len(timed)}", "lines where boo is faster", "faster:all"),
             card(fmt_ratio(r["worst"], 2), "worst ratio", "worst:all", cls_ratio(r["worst"])),
             card(fmt_ratio(r["best"], 2), "best ratio", "best:all", cls_ratio(r["best"]))]
    worst_group = r["by_group"][0] if r["by_group"] and r["by_group"][0].geomean is not None else None
    if worst_group:
        cards.append(card(fmt_ratio(worst_group.geomean, 2), f"worst group: {worst_group.key}", "worst-group",
                          cls_ratio(worst_group.geomean)))
    if ceil:
        cards.append(card(fmt_pct(r["boo_roof"]), "boo median % of roofline", "roof:boo"))
        cards.append(card(fmt_pct(r["vendor_roof"]), f"{vendor} median % of roofline", "roof:vendor"))
    if run.has_numerics:
        ns = r["numerics"]
        cards.append(card(f"{ns.passed}/{ns.judged}", "numerics pass", "numerics:pass-of-judged-card",
                          "good" if ns.passed == ns.judged else "bad"))
    cards.append(card(len(r["without_result"]), "lines without a result", "lines:without-result",
                      "bad" if r["without_result"] else ""))
    parts.append('<div class="cards">' + "".join(cards) + "</div>")
    if r.get("compare"):
        parts.append(comparison_section(r["compare"], vendor))
    parts.append(f"<h2>Time ratio boo/{esc(vendor)}</h2><p class=\"note\">Per-launch mean time of boo over "
                 f"{esc(vendor)}'s on the same line: below 1 boo is faster. Geomeans over the lines where both ran; "
                 f"% roof = achieved TFLOP/s over min(peak, intensity x bandwidth), the median of the group.</p>")
    parts.append('<div class="row">' + "".join(
        f"<div>{group_table(stats, title, kind, vendor)}</div>"
        for title, kind, stats in (("direction", "direction", r["by_direction"]), ("op (dtype)", "op", r["by_op"]),
                                   ("layout", "layout", r["by_layout"]))) + "</div>")
    if r["ratio_png"]:
        parts.append(image(r["ratio_png"], "boo/vendor time ratio per line, by group"))
    else:
        parts.append(f'<p class="note">No line has both a boo time and a {esc(vendor)} time.</p>')
    parts.append("<h3>By group (op, layout, direction), worst geomean first</h3>" +
                 group_table(r["by_group"], "group", "group", vendor))
    parts.append("<h2>Roofline</h2>")
    if ceil:
        parts.append(f'<p class="note">Ceilings of the {esc(ceil.device)}: {ceil.peak_tflops:g} TFLOP/s '
                     f"({esc(ceil.peak_source)}) and {ceil.bandwidth_tbs:g} TB/s ({esc(ceil.bandwidth_source)}). "
                     "Intensity = the driver's flop_count over min_bytes (each input read once, each output written "
                     "once)." + (" fp32 lines are drawn under the same 16-bit tensor-core ceiling."
                                 if any(dtype_of(ln.op) == "fp32" for ln in lines) else "") + "</p>")
    if r["roofline_png"]:
        parts.append(image(r["roofline_png"], "roofline: achieved TFLOP/s against arithmetic intensity"))
    else:
        parts.append('<p class="note">No line has flop_count and min_bytes (run the driver with --csv-extra).</p>')
    parts.append(f"<h2>Slowest lines (largest boo/{esc(vendor)})</h2>" +
                 line_table(r["slowest"], vendor, ceil, with_source))
    parts.append(f"<h2>Fastest lines (smallest boo/{esc(vendor)})</h2>" +
                 line_table(r["fastest"], vendor, ceil, with_source))
    if run.has_numerics:
        parts.append(numerics_section(r["numerics"], vendor, with_source))
    if r["without_result"]:
        rows = [[cell(f"{ln.source}:{ln.row}" if with_source else ln.row, cls="l"), cell(ln.error or "no time", cls="l"),
                 f'<td class="l"><code>{esc(ln.command)}</code></td>'] for ln in r["without_result"][:100]]
        parts.append(f"<h2>Lines without a result: {len(r['without_result'])}</h2>" +
                     table(["row", "error", "command"], rows, left=("row", "error", "command")))
    parts.append(f"<details><summary>All {len(lines)} lines</summary>" +
                 line_table(lines, vendor, ceil, with_source) + "</details>")
    parts.append("</body></html>\n")
    return "".join(parts)

