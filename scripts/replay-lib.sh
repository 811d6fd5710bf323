# Shared by scripts/bench-replay.sh, scripts/calibration-replay.sh and scripts/map-limits.sh, which source it (it is
# not run on its own): the checks of their arguments, their two folders and BIN-DIR's programs, the temporary folder,
# the replays' extra `inference:` settings, and the run over the bench's venues.

# replay_start NAME USAGE ARG...: the scripts' first step. Exits with USAGE unless ARG... begins with the two folders
# BIN-DIR BENCH-DIR; sets `bin` and `bench` (replay_folders), `jobs` to its default, 2, and `rest` to the arguments
# after the two folders, for the script's own options.
replay_start() {
    local name=$1 usage=$2
    shift 2
    [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
    replay_folders "$name" "$usage" "$1" "$2"
    shift 2
    jobs=2
    rest=("$@")
}

# replay_folders NAME USAGE BIN-DIR BENCH-DIR: sets `bin` and `bench` to the two folders' absolute paths, or exits
# with the usage when either is not a folder.
replay_folders() {
    local name=$1 usage=$2 folder
    for folder in "$3" "$4"; do
        [ -d "$folder" ] || { echo "$name: $folder is not a folder ($usage)" >&2; exit 2; }
    done
    bin=$(cd "$3" && pwd)
    bench=$(cd "$4" && pwd)
}

# replay_prepare NAME [KEY=VALUE...]: exits unless BIN-DIR has beacon-hub and beacon-sim; sets `work`, a temporary
# folder removed on exit, and `inference`, the settings as lines of hub.yaml's `inference:`.
replay_prepare() {
    local name=$1 program setting
    shift
    for program in beacon-hub beacon-sim; do
        if [ ! -x "$bin/$program" ]; then
            echo "$name: $bin/$program is missing: build it (swift build -c release)" >&2
            exit 1
        fi
    done
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    inference=""
    for setting in "$@"; do inference+="  ${setting%%=*}: ${setting#*=}"$'\n'; done
}

# replay_venues NAME JOBS: runs the exported function `venue` on each seed-N folder of the bench, JOBS at a time,
# each into $work/seed-N.json, and prints those lines by seed.
replay_venues() {
    local name=$1 jobs=$2
    if ! compgen -G "$bench/seed-*" >/dev/null; then
        echo "$name: $bench has no seed-N folders: give it the --out folder of beacon-sim bench" >&2
        exit 1
    fi
    find "$bench" -maxdepth 1 -type d -name 'seed-*' | sort -V |
        xargs -P "$jobs" -I{} bash -c 'venue "$1" >"$work/$(basename "$1").json"' _ {}
    cat "$work"/seed-*.json | sort -t: -k2 -n
}
