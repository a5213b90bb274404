#!/usr/bin/env python3
"""Makes the traces of an N-rank job from one recorded torch rank: the recorded
trace of testcases/multi/torch_allreduce_2ranks_one_rank_sync.py's rank 1 (an NCCL all-reduce
captured in torch.cuda.graph, and a Tensor.item() inside the capture: sync-during-capture),
copied once per rank with its pid, host and rank rewritten, 8 ranks a node (pids repeat across
nodes, as they do on a real cluster). On the ranks given with --diverged, one more mistake: a
second capture begun at the same line and never ended (capture-never-ended). A report of them
all must give 2 finding groups: one on every rank, one on those ranks only.

  make_rank_traces.py OUT_DIR [--ranks 1024] [--diverged 5,517,1000] [--drop RANK,...]

--drop leaves ranks out (never reported). Prints nothing; writes
OUT_DIR/capguard.<pid>.<host>.trace and .symbols, as the interposer names them."""
import argparse
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "testcases", "recorded", "traces",
                      "torch_allreduce_2ranks_one_rank_sync_outside_torchrun",
                      "capguard.1000.trace")
RANKS_PER_NODE = 8
RECORDED_PID = 0x3e8


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--diverged", default="5,517,1000")
    parser.add_argument("--drop", default="")
    parser.add_argument("--clean", action="store_true",
                        help="from the recorded rank 0 instead, which made no mistake")
    args = parser.parse_args()
    source = SOURCE.replace("capguard.1000.", "capguard.999.") if args.clean else SOURCE
    recorded_pid = 0x3e7 if args.clean else RECORDED_PID
    diverged = {int(r) for r in args.diverged.split(",") if r}
    drop = {int(r) for r in args.drop.split(",") if r}
    with open(source, encoding="utf-8") as f:
        lines = f.read().splitlines()
    with open(source + ".symbols", encoding="utf-8") as f:
        symbols = f.read().splitlines()
    begin = next(l for l in lines if " cudaStreamBeginCapture " in l).split(" ")
    end_at = max(i for i, l in enumerate(lines) if l.startswith("z "))
    last_seq = max(int(l.split(" ")[1], 16) for l in lines if l.startswith("e "))
    last_time = max(int(l.split(" ")[2], 16) for l in lines if l.startswith("e "))
    os.makedirs(args.out, exist_ok=True)
    for rank in range(args.ranks):
        if rank in drop:
            continue
        node, local = divmod(rank, RANKS_PER_NODE)
        host = "node%03d" % node
        pid = 1000 + local
        out = []
        for i, line in enumerate(lines):
            if i == 0:
                out.append("v 0.1.0 8")
                continue
            if line.startswith("p "):
                fields = line.split(" ")
                fields[1] = "%x" % pid
                out.append(" ".join(fields))
                continue
            if i == end_at and rank in diverged:
                # A second capture, begun where the first was (its stack) and never ended.
                fields = list(begin)
                fields[1] = "%x" % (last_seq + 1)
                fields[2] = "%x" % (last_time + 1)
                fields = [("st=7777000" if f.startswith("st=") else "ci=2" if f.startswith("ci=") else f)
                          for f in fields]
                out.append(" ".join(fields))
            out.append(line)
            if line.startswith("c "):
                out.append("h %s RANK=%d LOCAL_RANK=%d WORLD_SIZE=%d CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"
                           % (host, rank, local, args.ranks))
        name = os.path.join(args.out, "capguard.%d.%s.trace" % (pid, host))
        with open(name, "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")
        with open(name + ".symbols", "w", encoding="utf-8") as f:
            for line in symbols:
                if line.startswith("%x\t" % recorded_pid):
                    line = "%x%s" % (pid, line[len("%x" % recorded_pid):])
                f.write(line + "\n")


if __name__ == "__main__":
    main()
