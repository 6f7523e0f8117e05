"""python3 -m myattn info | bench [options]"""

import argparse
import sys


def _info(_args):
    from . import info

    i = info()
    print(f"myattn {i['version']}")
    print(f"cpu features:  {i['cpu_features']}")
    print(f"compiled isas: {' '.join(i['compiled_isas'])}")
    print(f"runnable isas: {' '.join(i['runnable_isas'])}")
    print(f"active isa:    {i['isa']} ({i['isa_reason']})")
    print(f"kernels:       {i['kernel_id']}")
    print(f"precisions:    {' '.join(i['precisions'])}")
    for precision, kernel in i["kernel_ids"].items():
        print(f"  {precision + ':':12} {kernel}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m myattn")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="CPU features, ISAs compiled in and runnable, the active one and why")
    bench = commands.add_parser("bench", help="time forward from Python, against PyTorch eager and the C++ loop")
    bench.add_argument(
        "--cases", default="S/1,S/64,T/1024", help="SHAPE/BATCH list; shapes S, T, X (default: %(default)s)"
    )
    bench.add_argument("--isa", default=None, help="one of info()['runnable_isas'] (default: the active one)")
    bench.add_argument("--precision", default=None, help="f32, int8 or bf16 (default: f32)")
    bench.add_argument("--rounds", type=int, default=7, help="rounds; the median round is reported (default: 7)")
    bench.add_argument("--round-ms", type=float, default=50.0, help="target length of a round (default: 50)")
    bench.add_argument(
        "--cpu-time", action="store_true", help="time this thread's CPU time, not the wall clock (pin to one CPU)"
    )
    args = parser.parse_args(argv)
    if args.command == "info":
        return _info(args)
    from ._bench import run

    return run(args)


sys.exit(main())
