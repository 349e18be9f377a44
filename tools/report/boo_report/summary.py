"""boo report: the numbers: geometric means of boo/vendor time ratios per group, the extremes, the
numerics verdicts, and a before/after comparison of two runs of one list."""
import math
from collections import defaultdict
from dataclasses import dataclass


def geomean(values):
    values = [v for v in values if v is not None]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def median(values):
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else 0.5 * (v[mid - 1] + v[mid])


def dtype_of(op):
    """The element type an op token names (convbfp16, layernormfp16, bnormbfp16fp32, conv = fp32)."""
    for suffix, name in (("bfp16", "bf16"), ("fp16", "fp16")):
        if op.endswith(suffix) or op.endswith(suffix + "fp32"):
            return name
    return "fp32"


@dataclass
class GroupStats:
    key: str
    lines: int  # lines in the group
    timed: int  # lines with both times
    geomean: float
    median: float
    best: float
    worst: float
    faster: int  # lines where boo took less time than the vendor
    boo_roof: float  # median fraction of the roofline
    vendor_roof: float


def group_stats(lines, key, ceilings):
    """One GroupStats per value of key(line), in key order."""
    groups = defaultdict(list)
    for line in lines:
        groups[key(line)].append(line)
    out = []
    for k in sorted(groups):
        members = groups[k]
        ratios = [ln.ratio for ln in members if ln.ratio is not None]
        vendor = members[0].vendor
        out.append(GroupStats(
            key=k, lines=len(members), timed=len(ratios), geomean=geomean(ratios), median=median(ratios),
            best=min(ratios) if ratios else None, worst=max(ratios) if ratios else None,
            faster=sum(r < 1 for r in ratios),
            boo_roof=median([ln.roof_fraction("boo", ceilings) for ln in members]),
            vendor_roof=median([ln.roof_fraction(vendor, ceilings) for ln in members]) if vendor else None))
    return out


def extremes(lines, count):
    """(slowest, fastest): the count lines with the largest boo/vendor ratio, largest first, and the count
    with the smallest, smallest first."""
    timed = sorted((ln for ln in lines if ln.ratio is not None), key=lambda ln: ln.ratio)
    return list(reversed(timed[-count:])), timed[:count]


def without_result(lines):
    """Lines with no boo time (the command failed, was unsupported or not timed), with the driver's error."""
    return [ln for ln in lines if ln.boo_us is None]


@dataclass
class NumericsSummary:
    judged: int
    passed: int
    failed: list  # the failing lines
    not_judged: int
    worst: list  # lines by boo's max error, largest first


def numerics_summary(lines, count):
    with_numerics = [ln for ln in lines if ln.numerics is not None]
    judged = [ln for ln in with_numerics if ln.numerics.verdict in ("PASS", "FAIL")]
    errors = sorted((ln for ln in judged if ln.numerics.boo_max is not None),
                    key=lambda ln: ln.numerics.boo_max, reverse=True)
    return NumericsSummary(judged=len(judged), passed=sum(ln.numerics.verdict == "PASS" for ln in judged),
                           failed=[ln for ln in judged if ln.numerics.verdict == "FAIL"],
                           not_judged=len(with_numerics) - len(judged), worst=errors[:count])


@dataclass
class Pair:
    before: object
    after: object

    @property
    def speedup(self):
        """boo's time before over after: above 1 the second run is faster."""
        b, a = self.before.boo_us, self.after.boo_us
        return b / a if b and a else None

    @property
    def vendor_drift(self):
        """The vendor's time before over after: the same library on the same list, so its spread is the
        measurement's (device, clocks, another call)."""
        b, a = self.before.vendor_us, self.after.vendor_us
        return b / a if b and a else None


def pair_lines(before, after):
    """Lines of two runs matched by command (the k-th occurrence with the k-th), with the commands only
    one of them has."""
    def occurrences(lines):
        seen = defaultdict(int)
        out = {}
        for ln in lines:
            out[(ln.command, seen[ln.command])] = ln
            seen[ln.command] += 1
        return out
    b, a = occurrences(before.lines), occurrences(after.lines)
    pairs = [Pair(b[k], a[k]) for k in b if k in a]
    return pairs, [b[k] for k in b if k not in a], [a[k] for k in a if k not in b]


def same_list(before, after):
    """Whether two runs ran the same commands (as multisets)."""
    def bag(run):
        counts = defaultdict(int)
        for ln in run.lines:
            counts[ln.command] += 1
        return counts
    return bag(before) == bag(after)
