# bash completion for capwrap(1). Install as
#   $PREFIX/share/bash-completion/completions/capwrap
# or source it from ~/.bashrc. docs_test.go keeps its flag and verb lists in
# sync with the code.

# _capwrap_ids prints the capture IDs in the tool-outputs directory: --dir
# on the command line, else $CAPWRAP_DIR, else ./tool-outputs.
_capwrap_ids() {
    local dir=${CAPWRAP_DIR:-tool-outputs} i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        --dir) dir=${COMP_WORDS[i + 1]} ;;
        --dir=*) dir=${COMP_WORDS[i]#--dir=} ;;
        esac
    done
    dir=${dir/#\~/$HOME}
    local d
    for d in "$dir"/2*/; do
        [[ -d $d ]] || continue
        d=${d%/}
        printf '%s\n' "${d##*/}"
    done
}

_capwrap() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local flags="--dir --keep --tee --preview --quiet --receipt-file --events --background
        --background-after --timeout --kill-after --drain-timeout --notice-after --stdout-chars --stderr-chars --preview-bytes
        --max-capture-bytes --dir-quota --queue-bytes --stall-timeout --strict --leave-descendants
        --no-redact --redact-env --redact-allow-env --redact-file --redact-pattern --no-label --pty
        --color --command --help --version"
    local verbs="list show read export prune wait stop help"
    COMPREPLY=()

    # Find the first word that is not a flag (or its argument): "--", a verb
    # or the command. With -c STRING (shell=1) the words after the flags are
    # the shell's $0, $1...: file names (shell=2 once one is typed).
    local i w verb="" cmd_at=0 shell=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
        --)
            if ((shell)); then shell=2; else cmd_at=$((i + 1)); fi
            break ;;
        -c | --command) ((i++)); shell=1 ;;
        --command=*) shell=1 ;;
        --dir | --keep | --receipt-file | --events | --background-after | --timeout | --kill-after | \
            --drain-timeout | --notice-after | --stdout-chars | --stderr-chars | --preview-bytes | --max-capture-bytes | \
            --dir-quota | --queue-bytes | --stall-timeout | --redact-env | --redact-allow-env | --redact-file | \
            --redact-pattern | --pty | --color)
            ((i++)) ;;
        -*) ;;
        *)
            if ((shell)); then
                shell=2
            else
                case $w in
                list | show | read | export | prune | wait | stop | help) verb=$w ;;
                *) cmd_at=$i ;;
                esac
            fi
            break ;;
        esac
    done

    # The shell's arguments after -c STRING.
    if ((shell == 2)); then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
    fi

    # After "--" or once a command started: that command's own completion.
    if ((cmd_at > 0)); then
        if declare -F _command_offset >/dev/null; then
            _command_offset "$cmd_at"
        elif ((COMP_CWORD == cmd_at)); then
            mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
        else
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return
    fi

    if [[ -n $verb ]]; then
        # Every verb takes --help and --dir after its name; wait and stop
        # the preview budgets too (verbGlobals in env.go).
        local vflags="--help --dir" budgets="--stdout-chars --stderr-chars --preview-bytes"
        case $prev in
        --dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
        --stdout-chars | --stderr-chars | --preview-bytes) return ;;
        esac
        case $verb in
        list)
            [[ $prev == --limit ]] && return
            mapfile -t COMPREPLY < <(compgen -W "--json --running --limit $vflags" -- "$cur") ;;
        show)
            if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "$vflags" -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -W "$(_capwrap_ids)" -- "$cur")
            fi ;;
        read)
            case $prev in
            --stream) mapfile -t COMPREPLY < <(compgen -W "stdout stderr" -- "$cur"); return ;;
            --offset | --limit | --lines | --grep | --max | --context | --after-context | \
                --before-context | -C | -A | -B | --timeout | --until | --cursor) return ;;
            esac
            if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "--stream --offset --limit --lines --grep --max --context --after-context --before-context --follow --timeout --until --interleaved --new --cursor $vflags" -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -W "$(_capwrap_ids)" -- "$cur")
            fi ;;
        export)
            if [[ $prev == --to ]]; then
                mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return
            fi
            if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "--to $vflags" -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -W "$(_capwrap_ids)" -- "$cur")
            fi ;;
        wait)
            [[ $prev == --timeout || $prev == --cursor ]] && return
            if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "--timeout --notify --cursor --raise $vflags $budgets" -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -W "$(_capwrap_ids)" -- "$cur")
            fi ;;
        stop)
            case $prev in
            --signal) mapfile -t COMPREPLY < <(compgen -W "TERM INT HUP QUIT KILL USR1 USR2" -- "$cur"); return ;;
            --kill-after) return ;;
            esac
            if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "--signal --kill-after --raise $vflags $budgets" -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -W "$(_capwrap_ids)" -- "$cur")
            fi ;;
        prune)
            case $prev in
            --id) mapfile -t COMPREPLY < <(compgen -W "$(_capwrap_ids)" -- "$cur"); return ;;
            --older-than | --keep-last) return ;;
            esac
            mapfile -t COMPREPLY < <(compgen -W "--older-than --keep-last --id --dry-run $vflags" -- "$cur") ;;
        help)
            mapfile -t COMPREPLY < <(compgen -W "flags env ${verbs% help} ${flags//--/}" -- "$cur") ;;
        esac
        return
    fi

    case $prev in
    --keep | --pty | --color)
        mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur"); return ;;
    --dir)
        mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
    --receipt-file | --events | --redact-file)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    --redact-env | --redact-allow-env)
        mapfile -t COMPREPLY < <(compgen -e -- "$cur"); return ;;
    --background-after | --timeout | --kill-after | --drain-timeout | --notice-after | --stall-timeout | --stdout-chars | \
        --stderr-chars | --preview-bytes | --max-capture-bytes | --dir-quota | \
        --queue-bytes | --redact-pattern | -c | --command)
        return ;;
    esac
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$flags --" -- "$cur")
    elif ((shell)); then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -W "$verbs" -- "$cur"; compgen -c -- "$cur" | sort -u)
    fi
}

complete -F _capwrap -o bashdefault -o default capwrap
