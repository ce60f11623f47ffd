#!/bin/sh
# A site TaskProlog that already exists: keep it, and add ibwire's lines to its output.
# slurmstepd reads every `export NAME=value` line this prints (no shell: no quotes).
echo "export SITE_SCRATCH=/scratch/$SLURM_JOB_USER"
exec /usr/bin/ibwire taskprolog
