"""boo report: reading boo-driver CSVs.

A driver CSV has BOO's columns (arguments, then min/max/mean/stddev/num_dispatches per backend, then
the numerics columns with --verify-numerics) and, with --csv-extra, boo's: numerics_reference,
flop_count, min_bytes and error (tools/driver/command_report.cpp). Each data row becomes a Line; the
file's name and any device/commit/date columns give the run's metadata; the device gives the roofline's
ceilings.
"""
import csv
import math
import os
import re
from dataclasses import dataclass, field

# The vendor baseline a boo time is divided by: the first of these backends the CSV has, as the driver's
# own ratio line picks it (cudnn or cublaslt), then what BOO's CSVs name their reference.
VENDOR_PREFERENCE = ("cudnn", "cublaslt", "pytorch", "torch")

CONV_DIRECTIONS = {"0": "all", "1": "fwd", "2": "bwd data", "4": "bwd weight"}
# Short flags by op family (the ops' flag tables in src/ops/): the letters mean different things per family.
CONV_SHORT = {"F": "forw", "I": "in_layout", "f": "fil_layout", "O": "out_layout"}
OTHER_SHORT = {"F": "forw", "L": "layout"}


class ReportError(Exception):
    """Input the report cannot use; the message names the file and what was expected."""


@dataclass(frozen=True)
class Ceilings:
    """The roofline's limits: dense 16-bit tensor-core TFLOP/s and device-memory TB/s, with where each came from."""
    device: str
    peak_tflops: float
    peak_source: str
    bandwidth_tbs: float
    bandwidth_source: str


# Measured rates where boo has them (docs/perf/): a measured ceiling is one a kernel can reach, so the
# fraction of it is a fair grade; spec-sheet peaks are 20-30% above what any kernel sustains.
KNOWN_DEVICES = {
    "H100": Ceilings("H100", 777.0, "bf16 dense GEMM, measured on an H100", 3.0,
                     "device-memory copy, measured on an H100"),
    # Same GH100 SMs and clocks as the H100; only the memory differs.
    "H200": Ceilings("H200", 777.0, "bf16 dense GEMM measured on an H100: same SMs and clocks", 4.1,
                     "device-memory copy, measured on an H200: docs/perf/2026-11-22-norms-torch-h200-65f1750.csv"),
}
_DEVICE_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])(H100|H200)", re.IGNORECASE)


def known_device(text):
    """The KNOWN_DEVICES key a device name or file name mentions ('NVIDIA H100 80GB HBM3', '...-h200x2.csv')."""
    m = _DEVICE_IN_TEXT.search(text or "")
    return m.group(1).upper() if m else None


def number(cell):
    """A timing or count cell as a float; None for the driver's words ('N.A.', 'untimed', 'dry-run',
    'unsupported stat calculation') and for empty cells."""
    try:
        v = float(cell)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def command_words(command):
    """The op and its flags; MIOpenDriver's program name ('./bin/MIOpenDriver') dropped."""
    words = command.split()
    if words and os.path.basename(words[0]) == "MIOpenDriver":
        words = words[1:]
    return words


def _is_flag(word):
    return word.startswith("-") and number(word) is None


def command_flags(words):
    """Flag name (long form) -> value for one command's words after the op."""
    short = CONV_SHORT if words and words[0].startswith("conv") else OTHER_SHORT
    flags = {}
    i = 1
    while i < len(words):
        w = words[i]
        if not _is_flag(w):
            i += 1
            continue
        name = w.lstrip("-")
        name = short.get(name, name) if not w.startswith("--") else name
        has_value = i + 1 < len(words) and not _is_flag(words[i + 1])
        flags[name] = words[i + 1] if has_value else ""
        i += 2 if has_value else 1
    return flags


def direction_of(op, flags):
    """'-F'/'--forw' as a label: conv's faces by name, other ops by their code."""
    value = flags.get("forw")
    if op.startswith("conv"):
        code = value if value is not None else "0"
        return "F" + code + (" " + CONV_DIRECTIONS[code] if code in CONV_DIRECTIONS else "")
    return "F" + value if value is not None else "F default"


def layout_of(op, flags):
    """A conv's layouts (one word when input, filter and output agree, else in/fil/out; a layout not given
    is NCHW, MIOpen's default), a norm's --layout, or 'default'."""
    if op.startswith("conv"):
        given = [flags.get(k, "").upper() for k in ("in_layout", "fil_layout", "out_layout")]
        layouts = [g or "NCHW" for g in given]
        return layouts[0] if len(set(layouts)) == 1 else "/".join(layouts)
    return flags.get("layout", "").upper() or "default"


@dataclass
class Numerics:
    """One line's numerics columns (--verify-numerics); errors are max |difference| to the reference."""
    verdict: str  # PASS, FAIL, or the driver's N.A. for a line that was not judged
    boo_max: float = None
    vendor_max: float = None
    boo_vs_vendor_max: float = None
    reference: str = ""


@dataclass
class Line:
    source: str  # the CSV's file name
    row: int  # the data row, from 1
    command: str
    op: str
    direction: str
    layout: str
    means: dict  # backend -> per-launch mean µs, or None
    vendor: str  # the baseline backend, or None
    flop_count: float = None
    min_bytes: float = None
    error: str = ""
    numerics: Numerics = None

    @property
    def group(self):
        return f"{self.op} {self.layout} {self.direction}"

    @property
    def boo_us(self):
        return self.means.get("boo")

    @property
    def vendor_us(self):
        return self.means.get(self.vendor) if self.vendor else None

    @property
    def ratio(self):
        """boo's time over the vendor's; None unless both ran."""
        b, v = self.boo_us, self.vendor_us
        return b / v if b and v else None

    def tflops(self, backend):
        t = self.means.get(backend)
        return self.flop_count / (t * 1e-6) / 1e12 if t and self.flop_count else None

    @property
    def intensity(self):
        """FLOPs per byte that must move (flop_count / min_bytes)."""
        return self.flop_count / self.min_bytes if self.flop_count and self.min_bytes else None

    def roof_fraction(self, backend, ceilings):
        """Achieved TFLOP/s over the roofline at this intensity: min(peak, intensity x bandwidth)."""
        achieved, ai = self.tflops(backend), self.intensity
        if achieved is None or ai is None or ceilings is None:
            return None
        return achieved / min(ceilings.peak_tflops, ai * ceilings.bandwidth_tbs)


@dataclass
class Run:
    """One or more CSVs read as one list of lines."""
    paths: list
    lines: list
    backends: list
    vendor: str
    has_numerics: bool
    devices: list = field(default_factory=list)  # each as found, with where it was found
    commits: list = field(default_factory=list)
    dates: list = field(default_factory=list)

    @property
    def label(self):
        return ", ".join(os.path.basename(p) for p in self.paths)


_COMMIT_WORD = re.compile(r"^[0-9a-f]{7,40}$")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")


def metadata_from_name(path):
    """(device, commit, date) the file's name gives, each None when it gives none:
    docs/perf's names are DATE-TOPIC-DEVICE-COMMIT.csv."""
    stem = os.path.splitext(os.path.basename(path))[0]
    date = _DATE.search(stem)
    commit = next((w for w in stem.split("-") if _COMMIT_WORD.match(w)), None)
    device = known_device(stem)
    return device, commit, date.group(1) if date else None


def _column_values(rows, name):
    return sorted({r.get(name, "").strip() for r in rows} - {""})


def read_csv(path):
    """Every data row of one driver CSV as a Line, with the file's metadata."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror}") from e
    except (UnicodeDecodeError, csv.Error) as e:
        raise ReportError(f"{path}: not a CSV file: {e}") from e
    if "arguments" not in header:
        raise ReportError(f"{path}: no 'arguments' column: expected a boo-driver CSV (boo-driver --csv FILE)")
    backends = [h[: -len(" mean")] for h in header if h.endswith(" mean")]
    if "boo" not in backends:
        raise ReportError(f"{path}: no 'boo mean' column: expected a run with --backend boo "
                          f"(its backends: {', '.join(backends) or 'none'})")
    vendor = next((b for b in VENDOR_PREFERENCE if b in backends),
                  next((b for b in backends if b not in ("boo", "cpu")), None))
    has_numerics = "numerics_pass" in header
    # The vendor's numerics columns name it as the CSV does: cudnn with --csv-extra, pytorch in BOO's header.
    vendor_err = next((h for h in header if h.endswith("_vs_ref_max") and h != "boo_vs_ref_max"), None)
    vendor_diff = next((h for h in header if h.startswith("boo_vs_") and h.endswith("_max")
                        and h != "boo_vs_ref_max"), None)
    name = os.path.basename(path)
    lines = []
    for i, r in enumerate(rows, 1):
        command = (r.get("arguments") or "").strip()
        if not command:
            continue
        words = command_words(command)
        op = words[0] if words else "?"
        flags = command_flags(words)
        numerics = None
        if has_numerics:
            numerics = Numerics(verdict=(r.get("numerics_pass") or "").strip() or "N.A.",
                                boo_max=number(r.get("boo_vs_ref_max")),
                                vendor_max=number(r.get(vendor_err)) if vendor_err else None,
                                boo_vs_vendor_max=number(r.get(vendor_diff)) if vendor_diff else None,
                                reference=(r.get("numerics_reference") or "").strip())
        lines.append(Line(source=name, row=i, command=command, op=op, direction=direction_of(op, flags),
                          layout=layout_of(op, flags), means={b: number(r.get(b + " mean")) for b in backends},
                          vendor=vendor, flop_count=number(r.get("flop_count")), min_bytes=number(r.get("min_bytes")),
                          error=(r.get("error") or "").strip(), numerics=numerics))
    if not lines:
        raise ReportError(f"{path}: no data rows")
    device, commit, date = metadata_from_name(path)
    run = Run(paths=[path], lines=lines, backends=backends, vendor=vendor, has_numerics=has_numerics)
    for d in _column_values(rows, "device"):
        run.devices.append((d, "CSV"))
    if not run.devices and device:
        run.devices.append((device, "file name"))
    run.commits = [(c, "CSV") for c in _column_values(rows, "commit")] or ([(commit, "file name")] if commit else [])
    run.dates = [(d, "CSV") for d in _column_values(rows, "date")] or ([(date, "file name")] if date else [])
    return run


def merge(runs):
    """Several CSVs as one run (their lines in order; backends and metadata of all)."""
    first = runs[0]
    vendors = {r.vendor for r in runs} - {None}
    if len(vendors) > 1:
        raise ReportError("the CSVs compare boo with different baselines (" + ", ".join(sorted(vendors)) +
                          "): report them separately")
    out = Run(paths=[], lines=[], backends=[], vendor=first.vendor, has_numerics=False)
    for r in runs:
        out.paths += r.paths
        out.lines += r.lines
        out.backends += [b for b in r.backends if b not in out.backends]
        out.has_numerics |= r.has_numerics
        for attr in ("devices", "commits", "dates"):
            seen = getattr(out, attr)
            seen += [v for v in getattr(r, attr) if v not in seen]
    out.vendor = next(iter(vendors), None)
    return out


def ceilings_for(run, device=None, peak_tflops=None, bandwidth_tbs=None):
    """The roofline's limits: the command line's, else the known device's (named by --device, a device column
    or the file name); None when neither gives both."""
    names = [device] if device else [d for d, _ in run.devices]
    known = next((known_device(n) for n in names if known_device(n)), None)
    base = KNOWN_DEVICES.get(known)
    if base is None:
        if peak_tflops is None and bandwidth_tbs is None:
            return None
        if peak_tflops is None or bandwidth_tbs is None:
            raise ReportError("the device is none boo knows (" + ", ".join(KNOWN_DEVICES) + "): give both "
                              "--peak-tflops and --bandwidth-tbs for its roofline")
    return Ceilings(device=base.device if base else (device or "the device"),
                    peak_tflops=peak_tflops if peak_tflops is not None else base.peak_tflops,
                    peak_source="--peak-tflops" if peak_tflops is not None else base.peak_source,
                    bandwidth_tbs=bandwidth_tbs if bandwidth_tbs is not None else base.bandwidth_tbs,
                    bandwidth_source="--bandwidth-tbs" if bandwidth_tbs is not None else base.bandwidth_source)
