"""The Python wheel that scripts/test.sh builds (`pip wheel . -w build/wheels`) and installs:
its files are python/boo's modules, the shipped tunings (tuning/*.json as boo/tuning/), the extension, the PyTorch library with the version it was built
for (boo/_torch_ops.so and boo/_torch_build.py, where PyTorch's C++ headers were found) and the
dist-info, nothing else (no headers, C++ libraries, tools or build-tree files); its version is the
CMake project's; the extension needs no run path and no library of the build, the PyTorch library
no run path and only PyTorch's; the installed package is this wheel's.

    test_wheel.py WHEEL_DIR VERSION SOURCE_DIR
"""
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

# The shared libraries the extension may need: the C runtime's (libstdc++ and libgcc are linked in).
SYSTEM_LIBRARIES = re.compile(r"^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|ld-linux-aarch64)\.so\.[0-9]+$")
# The PyTorch library's: PyTorch's own (loaded before it) and the C++ runtime PyTorch uses.
TORCH_LIBRARIES = re.compile(r"^(libc10|libc10_cuda|libtorch_cpu)\.so$|^(libstdc\+\+|libgcc_s)\.so\.[0-9]+$")
TORCH_FILES = ["boo/_torch_build.py", "boo/_torch_ops.so"]


def fail(message):
    print(f"test_wheel: FAIL: {message}")
    sys.exit(1)


def main():
    wheel_dir, version, source = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
    wheels = sorted(wheel_dir.glob("boo-*.whl")) if wheel_dir.is_dir() else []
    if len(wheels) != 1:
        fail(f"expected one boo wheel in {wheel_dir}, found {[w.name for w in wheels]} "
             "(scripts/test.sh builds it: pip wheel --no-deps -w build/wheels .)")
    wheel = wheels[0]
    name_version = wheel.name.split("-")[1]
    if name_version != version:
        fail(f"{wheel.name}: version {name_version}, the CMake project's is {version}")

    modules = sorted(f"boo/{p.name}" for p in (source / "python" / "boo").glob("*.py"))
    # The shipped tunings (tuning/*.json), beside the extension that finds them.
    tunings = sorted(f"boo/tuning/{p.name}" for p in (source / "tuning").glob("*.json"))
    dist_info = f"boo-{version}.dist-info/"
    with zipfile.ZipFile(wheel) as z:
        names = sorted(z.namelist())
        extensions = [n for n in names if re.fullmatch(r"boo/_C\.[^/]*\.so", n)]
        dist_files = [n for n in names if n.startswith(dist_info)]
        torch_files = [n for n in names if n in TORCH_FILES]
        if torch_files and torch_files != TORCH_FILES:
            fail(f"{wheel.name} holds {torch_files}: the PyTorch library comes with its version file")
        others = sorted(set(names) - set(modules) - set(tunings) - set(extensions) - set(dist_files) - set(torch_files))
        if others:
            fail(f"{wheel.name} holds files that are not the package's: {others}")
        missing = sorted(set(modules) - set(names))
        if missing:
            fail(f"{wheel.name} lacks modules of python/boo: {missing}")
        missing = sorted(set(tunings) - set(names))
        if missing:
            fail(f"{wheel.name} lacks the shipped tunings of tuning/: {missing}")
        if len(extensions) != 1:
            fail(f"{wheel.name}: expected one extension boo/_C.*.so, found {extensions}")
        for required in ("METADATA", "WHEEL", "RECORD", "entry_points.txt"):
            if dist_info + required not in names:
                fail(f"{wheel.name} lacks {dist_info}{required}")
        metadata = z.read(dist_info + "METADATA").decode()
        if f"\nVersion: {version}\n" not in metadata:
            fail(f"METADATA's version is not {version}: {metadata.splitlines()[:4]}")
        if "torch_dynamo_backends" not in z.read(dist_info + "entry_points.txt").decode():
            fail("entry_points.txt lacks the torch.compile backends")
        for n in names:
            if n.endswith(".so"):
                continue
            text = z.read(n).decode(errors="replace")
            if str(source) in text or "build-python" in text:
                fail(f"{n} names the source or build tree")

        with tempfile.TemporaryDirectory() as tmp:
            extension = pathlib.Path(z.extract(extensions[0], tmp))
            dynamic = subprocess.run(["readelf", "-d", str(extension)], check=True, capture_output=True,
                                     text=True).stdout
            if torch_files:
                library = pathlib.Path(z.extract("boo/_torch_ops.so", tmp))
                torch_dynamic = subprocess.run(["readelf", "-d", str(library)], check=True, capture_output=True,
                                               text=True).stdout
                if "RPATH" in torch_dynamic or "RUNPATH" in torch_dynamic:
                    fail("boo/_torch_ops.so has a run path")
                torch_needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", torch_dynamic)
                foreign = [lib for lib in torch_needed
                           if not SYSTEM_LIBRARIES.match(lib) and not TORCH_LIBRARIES.match(lib)]
                if foreign:
                    fail(f"boo/_torch_ops.so needs {foreign}, which are not PyTorch's")
    if "RPATH" in dynamic or "RUNPATH" in dynamic:
        fail(f"{extensions[0]} has a run path: {[l for l in dynamic.splitlines() if 'PATH' in l]}")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    foreign = [lib for lib in needed if not SYSTEM_LIBRARIES.match(lib)]
    if foreign:
        fail(f"{extensions[0]} needs {foreign}: the wheel would not load without them")

    # The installed package is this wheel's (scripts/test.sh installs it), and says the same version.
    import boo
    installed = pathlib.Path(boo.__file__).parent
    if boo.__version__ != version:
        fail(f"the installed boo.__version__ is {boo.__version__}, expected {version}")
    with zipfile.ZipFile(wheel) as z:
        built = z.read(extensions[0])
    if (installed / pathlib.Path(extensions[0]).name).read_bytes() != built:
        fail(f"the installed extension in {installed} is not {wheel.name}'s (reinstall the wheel)")
    print(f"test_wheel: {wheel.name}: {len(modules)} modules, {pathlib.Path(extensions[0]).name}, "
          f"{len(dist_files)} dist-info files; needs {needed}; "
          f"{'with' if torch_files else 'without'} the PyTorch library; boo {boo.__version__} "
          f"(commit {boo.git_commit}) installed from it")


if __name__ == "__main__":
    main()
