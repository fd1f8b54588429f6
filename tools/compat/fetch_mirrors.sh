#!/bin/sh
# Lay out the compatibility corpus's repositories as plain directories for run.py --mirrors.
#
#   tools/compat/fetch_mirrors.sh SNAPSHOTS OUT [GLOB]
#
# SNAPSHOTS holds bare git directories as <owner>+<name>/repo (what the search tool's `fetch`
# brings onto the machine, e.g. /work/.mirror); OUT gets <owner>+<name>/ with the files of the
# commit that corpus.py records for it (only the <owner>+<name> matching GLOB when given, e.g.
# 'openai+*', to add a repository without rewriting the others). Snapshots may lack big files (data, images): those are
# skipped, so only text the programs need is written. Nothing here is committed to ember.
#
# pytorch/tutorials is too big for a snapshot; its few files are listed in corpus.py with their
# commit and are read one by one through the search tool's read_file (see docs/COMPAT.md).
# Repositories in corpus.WHEELS (too big for a snapshot too) are laid out from their release
# wheel, fetched with `pip download --no-deps` (the package directory and the licence).
set -eu
SNAP=${1:?usage: fetch_mirrors.sh SNAPSHOTS OUT}
OUT=${2:?usage: fetch_mirrors.sh SNAPSHOTS OUT}
ONLY=${3:-*}
HERE=$(cd "$(dirname "$0")" && pwd)
python3 "$HERE/corpus.py" --commits | while read -r repo commit; do
    case "$repo" in $ONLY) ;; *) continue ;; esac
    gitdir="$SNAP/$repo/repo"
    [ -d "$gitdir/.git" ] && gitdir="$gitdir/.git"
    [ -d "$gitdir" ] || { echo "skip $repo: no snapshot at $gitdir"; continue; }
    dest="$OUT/$repo"
    mkdir -p "$dest"
    git --git-dir="$gitdir" ls-tree -r "$commit" | while read -r mode type sha path; do
        [ "$type" = blob ] || continue
        case "$path" in
            *.py|*.md|*.txt|*.json|*.ipynb|*.toml|*.cfg|*.yaml|*.yml|LICENSE*|*/LICENSE*) ;;
            *.tiktoken|*.npz) ;;   # whisper's tokenizer tables and mel filters
            *.txt.gz) ;;           # CLIP's BPE merges
            */test_output/*.out) ;;  # torchinfo's recorded summaries
            *) continue ;;
        esac
        git --git-dir="$gitdir" cat-file -e "$sha" 2>/dev/null || continue
        mkdir -p "$dest/$(dirname "$path")"
        if [ "$mode" = 120000 ]; then   # a symlink: its blob is the target path
            ln -sfn "$(git --git-dir="$gitdir" cat-file blob "$sha")" "$dest/$path"
            continue
        fi
        git --git-dir="$gitdir" cat-file blob "$sha" > "$dest/$path"
    done
    echo "$repo $commit -> $dest"
done
python3 "$HERE/corpus.py" --wheels | while read -r repo requirement; do
    case "$repo" in $ONLY) ;; *) continue ;; esac
    dest="$OUT/$repo"
    tmp=$(mktemp -d)
    pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$requirement"
    mkdir -p "$dest"
    python3 -m zipfile -e "$tmp"/*.whl "$dest"
    rm -rf "$tmp"
    echo "$repo $requirement -> $dest"
done
