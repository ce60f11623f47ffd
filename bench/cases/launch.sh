# sourced by bench/run.sh
# A job's Slurm variables would make launch resolve the node list: the rows run outside a job
# (unset here, not with an `env -u` wrapper whose own exec would be counted).
saved_nodelist=${SLURM_JOB_NODELIST-}; unset SLURM_JOB_NODELIST
row "launch --dry-run, story node" "$B launch --root $W/story --dry-run -- train.py"
# Launch overhead up to torchrun's exit, with a torchrun that exits at once: the watch (child
# process, signal forwarding, log directory) against a plain exec (--expect-net socket).
mkdir -p "$W/bin"; printf '#!/bin/sh\nexit 0\n' > "$W/bin/torchrun"; chmod +x "$W/bin/torchrun"
L="env PATH=$W/bin:/usr/bin:/bin TMPDIR=$W $B launch --root $W/story --nnodes 2 --master-addr 198.21.151.17"
pair "launch to torchrun's exit: watched vs exec'd (--expect-net socket), one interleaved run" "$L -- t.py" "$L --expect-net socket -- t.py"
if [ -n "$saved_nodelist" ]; then export SLURM_JOB_NODELIST=$saved_nodelist; fi
