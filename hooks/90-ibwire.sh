#!/bin/sh
# enroot hook: put the right /dev/infiniband nodes and NCCL settings into every container.
# Installed into enroot's hooks.d by ibwire's install.sh (which fills in the binary's path).
# Runs after 10-devices.sh (which builds a restricted /dev) and before 99-mellanox.sh.
# It never fails a container start unless IBWIRE_STRICT=1: a missing binary is a warning too.
IBWIRE="@IBWIRE@"
if [ ! -x "$IBWIRE" ]; then
    echo "ibwire-hook: warning: $IBWIRE not found; container starts without ibwire's settings" >&2
    [ "${IBWIRE_STRICT:-}" = 1 ] && exit 1
    exit 0
fi
exec "$IBWIRE" hook
