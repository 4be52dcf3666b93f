#!/usr/bin/env python3
"""NVRTC and nvJitLink time per kernel, no GPU needed: the cuda plugin's two compile stages
(plugins/cuda/nvrtc_compile.cpp) timed over CUDA sources that a cross-compiling run wrote.

    POLYGRAD_DEVICE=emu POLYGRAD_CROSS_COMPILE=cuda:sm_90 POLYGRAD_CROSS_COMPILE_DIR=/tmp/cu \\
      build/release/venv/bin/python some_script.py
    /usr/bin/python3 bench/nvrtc_compile.py /tmp/cu [--rounds 5] [--options "-minimal"]

For each <kernel>-<hash>.cu: NVRTC to PTX for compute_90 with the plugin's options, then
nvJitLink to an sm_90 cubin (-O3), each the median of --rounds runs; with --options, NVRTC once
more with those options added, and whether its PTX is the same. Loads libnvrtc.so.13 and
libnvJitLink.so.13 from CUDA_HOME/lib64 (default /usr/local/cuda).
"""
import argparse
import ctypes
import os
import pathlib
import statistics
import time

PLUGIN_OPTIONS = [b"--std=c++17", b"--fmad=false", b"-minimal"]  # nvrtc_compile.cpp's


def libraries():
    lib = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib64"
    return ctypes.CDLL(str(lib / "libnvrtc.so.13")), ctypes.CDLL(str(lib / "libnvJitLink.so.13"))


def nvrtc_ptx(nvrtc, source, options):
    """(seconds, PTX bytes) of one NVRTC compile; raises with the log on failure."""
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, b"kernel.cu", 0, None, None) != 0:
        raise RuntimeError("nvrtcCreateProgram failed")
    opts = [b"--gpu-architecture=compute_90", *options]
    array = (ctypes.c_char_p * len(opts))(*opts)
    start = time.perf_counter()
    status = nvrtc.nvrtcCompileProgram(prog, len(opts), array)
    seconds = time.perf_counter() - start
    size = ctypes.c_size_t()
    if status != 0:
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(log.value.decode(errors="replace")[:500])
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(prog, ptx)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return seconds, ptx.raw


def link_cubin(jit, ptx):
    """Seconds of one nvJitLink run (PTX to an sm_90 cubin)."""
    opts = [b"-arch=sm_90", b"-O3"]
    array = (ctypes.c_char_p * len(opts))(*opts)
    handle = ctypes.c_void_p()
    start = time.perf_counter()
    # (the header's inline wrappers call these versioned entry points)
    ok = (jit.__nvJitLinkCreate_13_0(ctypes.byref(handle), len(opts), array) == 0 and
          jit.__nvJitLinkAddData_13_0(handle, 2, ptx, len(ptx), b"kernel") == 0 and  # PTX
          jit.__nvJitLinkComplete_13_0(handle) == 0)
    seconds = time.perf_counter() - start
    jit.__nvJitLinkDestroy_13_0(ctypes.byref(handle))
    if not ok:
        raise RuntimeError("nvJitLink failed")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--options", default="", help="NVRTC options to compare, space-separated")
    args = parser.parse_args()
    nvrtc, jit = libraries()
    base = [o for o in PLUGIN_OPTIONS if o.decode() not in args.options.split()]
    extra = [o.encode() for o in args.options.split()]
    print(f"NVRTC options: {b' '.join(base).decode()}" +
          (f"; compared with {args.options} added" if extra else ""))
    print(f"{'kernel':40} {'lines':>6} {'nvrtc ms':>9} {'link ms':>8}" +
          (f" {'with ms':>8}  same PTX" if extra else ""))
    for path in sorted(args.folder.glob("*.cu")):
        source = path.read_bytes()
        runs = [nvrtc_ptx(nvrtc, source, base) for _ in range(args.rounds)]
        ptx = runs[0][1]
        compile_ms = statistics.median(s for s, _ in runs) * 1e3
        link_ms = statistics.median(link_cubin(jit, ptx) for _ in range(args.rounds)) * 1e3
        lines = source.count(b"\n")
        row = f"{path.stem:40} {lines:6d} {compile_ms:9.1f} {link_ms:8.1f}"
        if extra:
            other = [nvrtc_ptx(nvrtc, source, base + extra) for _ in range(args.rounds)]
            other_ms = statistics.median(s for s, _ in other) * 1e3
            row += f" {other_ms:8.1f}  {'yes' if other[0][1] == ptx else 'NO'}"
        print(row)


if __name__ == "__main__":
    main()
