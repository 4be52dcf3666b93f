#!/usr/bin/env python3
"""Checks the cubins that POLYGRAD_CROSS_COMPILE_DIR collected (docs/compiler.md).

    python3 tests/cross_compile/check_cubins.py DIR [--arch sm_90]

Every DIR/<kernel>-<hash>.cubin must be an ELF64 little-endian file for EM_CUDA (190), built
for --arch when given, whose symbol table defines the function <kernel>, and whose functions
use no stack: what `cuobjdump -res-usage` shows as STACK, read here from the cubin itself (the
.nv.info attributes EIATTR_FRAME_SIZE, EIATTR_MIN_STACK_SIZE and EIATTR_MAX_STACK_SIZE, which
`ptxas -v` reports as "bytes stack frame"), so no CUDA tool is needed. Under the ABI that every
sm_90 build uses, a function's local memory (cuobjdump's LOCAL is module-scope .local, which
ptxas refuses there) lives in that frame, and the codegen indexes register arrays with constants
only, so a frame means ptxas spilled registers.
With --stack-ok, a frame is reported, not a failure: CUDA's own library code has one (sinf's
slow path for large arguments keeps a table on the stack; 64-bit division is a call), so the
compile-only tier of `make test` leaves spills to ptxas's own count, which the cuda plugin
turns into a compile error under POLYGRAD_CUDA_SPILLS=error, and checks the rest here.
Prints one line per failure and a summary; exits 1 on any failure or when DIR holds no cubin.
"""
import argparse
import pathlib
import struct
import sys

EM_CUDA = 190
STT_FUNC = 2
SHT_SYMTAB = 2
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4
# .nv.info attributes that hold a function's stack use: (symbol index, bytes) pairs.
STACK_ATTRS = {0x11, 0x12, 0x23}  # frame size, min and max stack size
EIATTR_REGCOUNT = 0x2F


class BadCubin(Exception):
    pass


def read_sections(data):
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise BadCubin("not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise BadCubin("not ELF64 little-endian (class %d, data %d)" % (data[4], data[5]))
    machine = struct.unpack_from("<H", data, 18)[0]
    if machine != EM_CUDA:
        raise BadCubin("e_machine is %d, not EM_CUDA (%d)" % (machine, EM_CUDA))
    flags = struct.unpack_from("<I", data, 0x30)[0]
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize != 64 or shoff + shnum * 64 > len(data) or shstrndx >= shnum:
        raise BadCubin("truncated or malformed section headers")
    sections = []
    for i in range(shnum):
        name, kind, _, _, off, size, link, _, _, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * 64)
        sections.append({"name": name, "type": kind, "off": off, "size": size, "link": link,
                         "entsize": entsize})
    strtab = sections[shstrndx]

    def string(table, offset):
        start = table["off"] + offset
        end = data.find(b"\0", start, table["off"] + table["size"])
        if end < 0:
            raise BadCubin("a name runs past its string table")
        return data[start:end].decode("utf-8", "replace")

    for s in sections:
        s["name"] = string(strtab, s["name"])
        if s["type"] != 8 and s["off"] + s["size"] > len(data):  # 8: SHT_NOBITS
            raise BadCubin("section %s runs past the end of the file" % s["name"])
    return flags, sections, string


def read_symbols(data, sections, string):
    symtabs = [s for s in sections if s["type"] == SHT_SYMTAB]
    if not symtabs:
        raise BadCubin("no symbol table")
    tab = symtabs[0]
    names = []
    for off in range(tab["off"], tab["off"] + tab["size"], 24):
        name, info, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", data, off)
        names.append((string(sections[tab["link"]], name), info & 0xF, shndx))
    return names


def read_info(data, section):
    """The (attribute, value bytes or int) records of one .nv.info section."""
    records, p, end = [], section["off"], section["off"] + section["size"]
    while p + 2 <= end:
        fmt, attr = data[p], data[p + 1]
        if fmt == EIFMT_SVAL:
            size = struct.unpack_from("<H", data, p + 2)[0]
            records.append((attr, data[p + 4:p + 4 + size]))
            p += 4 + size
        elif fmt in (EIFMT_BVAL, EIFMT_HVAL):
            records.append((attr, struct.unpack_from("<H", data, p + 2)[0]))
            p += 4
        elif fmt == EIFMT_NVAL:
            records.append((attr, None))
            p += 2
        else:
            raise BadCubin("unknown record format %d in %s" % (fmt, section["name"]))
    return records


def check_cubin(path, arch=None, stack_ok=False):
    """Problems with one cubin (empty when it passes), and its functions' register counts."""
    data = path.read_bytes()
    kernel = path.stem.rsplit("-", 1)[0]
    try:
        flags, sections, string = read_sections(data)
        symbols = read_symbols(data, sections, string)
    except (BadCubin, struct.error) as e:
        return ["%s: %s" % (path.name, e)], {}, 0
    problems = []
    if arch is not None:
        built = "sm_%d" % ((flags >> 8) & 0xFF)
        if built != arch:
            problems.append("%s: built for %s, not %s" % (path.name, built, arch))
    functions = {i: name for i, (name, kind, _) in enumerate(symbols) if kind == STT_FUNC}
    if kernel not in functions.values():
        problems.append("%s: no function symbol '%s' (has: %s)" %
                        (path.name, kernel, ", ".join(sorted(functions.values())) or "none"))
    registers, stack = {}, {}
    try:
        for s in sections:
            if s["name"] != ".nv.info" and not s["name"].startswith(".nv.info."):
                continue
            for attr, value in read_info(data, s):
                if not isinstance(value, bytes) or len(value) != 8:
                    continue
                symbol, amount = struct.unpack("<II", value)
                function = functions.get(symbol, "symbol %d" % symbol)
                if attr == EIATTR_REGCOUNT:
                    registers[function] = amount
                elif attr in STACK_ATTRS:
                    stack[function] = max(stack.get(function, 0), amount)
    except (BadCubin, struct.error) as e:
        problems.append("%s: %s" % (path.name, e))
    if kernel in functions.values() and kernel not in registers:
        problems.append("%s: no resource usage (EIATTR_REGCOUNT) for '%s'" % (path.name, kernel))
    for function, amount in sorted(stack.items()):
        if amount > 0 and not stack_ok:
            problems.append("%s: %s uses %d bytes of stack (STACK:%d): registers spilled" %
                            (path.name, function, amount, amount))
    return problems, registers, max(stack.values(), default=0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", type=pathlib.Path, help="POLYGRAD_CROSS_COMPILE_DIR of a run")
    parser.add_argument("--arch", help="the architecture every cubin must be built for (sm_90)")
    parser.add_argument("--stack-ok", action="store_true",
                        help="report stack frames instead of failing on them")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each function's registers")
    args = parser.parse_args(argv)
    cubins = sorted(args.dir.glob("*.cubin")) if args.dir.is_dir() else []
    failures = []
    with_stack = 0
    for path in cubins:
        problems, registers, frame = check_cubin(path, args.arch, args.stack_ok)
        with_stack += frame > 0
        failures += problems
        if args.verbose:
            for function, count in sorted(registers.items()):
                print("%s: %s REG:%d" % (path.name, function, count))
    for line in failures:
        print("FAIL " + line)
    if not cubins:
        print("check_cubins: no .cubin in %s" % args.dir)
        return 1
    failed = len({line.split(":", 1)[0] for line in failures})
    print("check_cubins: %d cubins, %d passed, %d failed; %d with a stack frame" %
          (len(cubins), len(cubins) - failed, failed, with_stack))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
