#!/bin/sh
# enroot hook, the sh form: put the right /dev/infiniband nodes and NCCL settings into every
# container. Runs after 10-devices.sh (which builds a restricted /dev) and before 99-mellanox.sh.
#
# The default form is hooks.d/90-ibwire.sh as a link to the binary (install.sh, the packages):
# enroot skips a dangling link, and the binary turns its own errors, panics and crashes into
# one warning and exit 0. This form costs a shell per start (about 1 ms: docs/performance.md)
# and covers what the binary cannot: a binary that cannot be run at all, or one killed by
# SIGKILL (the OOM killer; the hook's own last resort, a second after its deadline). Install it
# with IBWIRE_HOOK_FORM=sh ./install.sh, or from /usr/share/ibwire/90-ibwire.sh (packages).
#
# It never fails a container start because of ibwire itself. The binary is run, not exec'd, so
# that this script sees how it ended:
# - binary absent (the package was removed and this file, a config file, kept): silent, exit 0
#   — the node behaves as it did before ibwire, whatever IBWIRE_STRICT says;
# - binary present but unable to run (126/127: wrong architecture, a libc too old, no execute
#   permission) or killed by a signal: one warning, exit 0 (1 under IBWIRE_STRICT);
# - otherwise ibwire's own status: 0, or 1 when strict mode failed the start on purpose.
# Strict here: IBWIRE_STRICT set to anything but empty, 0, n, no, f or false (any case: the same
# rule as ibwire's), or `strict: true` under `hook:` in /etc/ibwire.yaml (read by grep: the
# binary that parses it could not run).
IBWIRE="@IBWIRE@"
[ -e "$IBWIRE" ] || exit 0
"$IBWIRE" hook
rc=$?
case $rc in
    0 | 1) exit $rc ;; # 1: strict mode failed the start on purpose, having said why
esac
strict=1
case "${IBWIRE_STRICT:-}" in
    "" | 0 | [nN] | [nN][oO] | [fF] | [fF][aA][lL][sS][eE])
        strict=0
        grep -Eqs '^[[:space:]]+strict:[[:space:]]*([tT]rue|TRUE|[yY]es|YES|on)[[:space:]]*(#.*)?$' /etc/ibwire.yaml && strict=1
        ;;
esac
case $rc in
    126 | 127) why="cannot be run here (exit $rc: not executable, or built for another architecture or a newer libc)" ;;
    *) if [ "$rc" -gt 128 ]; then why="was killed by signal $((rc - 128))"; else why="ended with status $rc"; fi ;;
esac
if [ "$strict" = 1 ]; then
    echo "ibwire-hook: error: $IBWIRE $why; strict mode: the container does not start" >&2
    exit 1
fi
echo "ibwire-hook: warning: $IBWIRE $why; the container starts without ibwire's settings" >&2
exit 0
