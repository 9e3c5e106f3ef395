# Sourced by the other scripts: where the machine-wide cache lives.
# The cache is outside the repository so that a fresh clone reuses a ready machine.
REPLAYGROUND_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPLAYGROUND_CACHE=${REPLAYGROUND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/replayground}
export REPLAYGROUND_ROOT REPLAYGROUND_CACHE

# Loads the environment that scripts/setup.sh wrote (toolchain, tools, compilers).
load_replayground_env() {
    # shellcheck disable=SC1091
    . "$REPLAYGROUND_CACHE/env.sh"
}
