# sourced by bench/run.sh
row "launch --dry-run, story node" "env -u SLURM_JOB_NODELIST $B launch --root $W/story --dry-run -- train.py"
