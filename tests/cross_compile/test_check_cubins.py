#!/usr/bin/env python3
"""check_cubins.py passes a good cubin and fails a spilling one, a non-ELF file and a cubin that
lacks its kernel, on cubins nvcc makes here. Exits 77 (ctest's skip) without nvcc."""
import os
import pathlib
import subprocess
import sys
import tempfile

NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
CHECKER = pathlib.Path(__file__).with_name("check_cubins.py")

GOOD = 'extern "C" __global__ void E_4(float* a, const float* b) { a[threadIdx.x] = 2.0f * b[threadIdx.x]; }\n'
# 64 accumulators live at once, every index a constant after unrolling: no local array, so
# any stack is spilled registers (ptxas -v: 368 bytes stack frame at 24 registers).
SPILL = """extern "C" __global__ void r_64(float* out, const float* in, int n) {
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = in[threadIdx.x * 64 + i];
  for (int k = 0; k < n; ++k) {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = acc[i] * acc[63 - i] + in[k];
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; ++i) s += acc[i] * (float)i;
  out[threadIdx.x] = s;
}
"""


def nvcc(tmp, name, source, *flags):
    cu = tmp / (name + ".cu")
    cu.write_text(source)
    out = tmp / (name + ".cubin")
    subprocess.run([NVCC, "-cubin", "-arch=sm_90", *flags, str(cu), "-o", str(out)], check=True)
    return out.read_bytes()


def check(tmp, files, *args):
    """Runs the checker on a fresh folder holding `files` (name -> bytes)."""
    d = tmp / ("case%d" % len(list(tmp.glob("case*"))))
    d.mkdir()
    for name, data in files.items():
        (d / name).write_bytes(data)
    r = subprocess.run([sys.executable, str(CHECKER), str(d), *args], capture_output=True, text=True)
    return r.returncode, r.stdout


def expect(cond, what, output):
    if not cond:
        print("FAILED: " + what + "\n" + output)
        sys.exit(1)


def main():
    if not os.path.exists(NVCC):
        print("skipped: no nvcc at " + NVCC)
        return 77
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        good = nvcc(tmp, "good", GOOD)
        spill = nvcc(tmp, "spill", SPILL, "-maxrregcount=24")
        roomy = nvcc(tmp, "roomy", SPILL)  # the same kernel with all registers: no spill

        rc, out = check(tmp, {"E_4-0123abcd.cubin": good, "r_64-89abcdef.cubin": roomy}, "--arch", "sm_90")
        expect(rc == 0 and "2 cubins, 2 passed, 0 failed" in out, "good cubins pass", out)

        rc, out = check(tmp, {"E_4-0123abcd.cubin": good, "r_64-89abcdef.cubin": spill})
        expect(rc == 1 and "r_64-89abcdef.cubin: r_64 uses" in out and "STACK:" in out
               and "1 failed" in out, "a spilling cubin fails", out)
        rc, out = check(tmp, {"E_4-0123abcd.cubin": good, "r_64-89abcdef.cubin": spill},
                        "--stack-ok")
        expect(rc == 0 and "0 failed; 1 with a stack frame" in out,
               "--stack-ok reports a frame without failing", out)

        rc, out = check(tmp, {"E_4-0123abcd.cubin": b"E_4 is not ELF"})
        expect(rc == 1 and "not an ELF file" in out, "a non-ELF file fails", out)

        rc, out = check(tmp, {"E_8-0123abcd.cubin": good})
        expect(rc == 1 and "no function symbol 'E_8'" in out, "a cubin without its kernel fails", out)

        rc, out = check(tmp, {"E_4-0123abcd.cubin": good}, "--arch", "sm_80")
        expect(rc == 1 and "built for sm_90, not sm_80" in out, "a cubin for another arch fails", out)

        rc, out = check(tmp, {"E_4-0123abcd.cu": GOOD.encode()})
        expect(rc == 1 and "no .cubin" in out, "a folder without cubins fails", out)
    print("check_cubins: all 6 cases behave")
    return 0


if __name__ == "__main__":
    sys.exit(main())
