# fish completion for capwrap(1). Install as capwrap.fish in
# $PREFIX/share/fish/vendor_completions.d. docs_test.go keeps its flag and
# verb lists in sync with the code.

# The capture IDs in --dir, else $CAPWRAP_DIR, else ./tool-outputs.
function __capwrap_ids
    set -l dir tool-outputs
    set -q CAPWRAP_DIR; and test -n "$CAPWRAP_DIR"; and set dir $CAPWRAP_DIR
    set -l words (commandline -opc)
    for i in (seq 2 (count $words))
        switch $words[$i]
            case --dir
                set -l j (math $i + 1)
                test $j -le (count $words); and set dir $words[$j]
            case '--dir=*'
                set dir (string replace -- --dir= '' $words[$i])
        end
    end
    for d in $dir/2*/
        basename $d
    end
end

# The words from the first one that is neither a global flag nor a flag's
# value on ("--", a verb or the command), one per line; false when there is
# none yet. The one scan of the command line that the functions below share.
function __capwrap_rest
    set -l words (commandline -opc)
    set -e words[1]
    set -l takes_arg --dir --keep --receipt-file --events --background-after --timeout --kill-after --drain-timeout --notice-after \
        --stdout-chars --stderr-chars --preview-bytes --max-capture-bytes --dir-quota \
        --queue-bytes --stall-timeout --redact-env --redact-allow-env --redact-file --redact-pattern --pty --color \
        -c --command
    set -l skip 0
    set -l n 0
    for w in $words
        set n (math $n + 1)
        if test $skip -eq 1
            set skip 0
            continue
        end
        if contains -- $w $takes_arg
            set skip 1
            continue
        end
        string match -q -- '-*' $w; and test "$w" != --; and continue
        printf '%s\n' $words[$n..-1]
        return 0
    end
    return 1
end

# True when a -c STRING came before the first word that is not a flag: the
# words from there on are the shell's $0, $1...
function __capwrap_shell
    set -l words (commandline -opc)
    set -e words[1]
    set -l rest (__capwrap_rest)
    set -l n (math (count $words) - (count $rest))
    test $n -gt 0; or return 1
    for w in $words[1..$n]
        switch $w
            case -c --command '--command=*'
                return 0
        end
    end
    return 1
end

# True while no verb, "--" or command has been typed yet (only flags).
function __capwrap_no_subject
    not __capwrap_rest >/dev/null
end

# True when the verb typed first (after flags) is $argv[1].
function __capwrap_verb
    __capwrap_shell; and return 1
    set -l rest (__capwrap_rest); or return 1
    contains -- $rest[1] list show read export prune wait stop help; and test "$rest[1]" = $argv[1]
end

# The wrapped command's words (after "--" or from the command word on),
# one per line; false when there is none yet.
function __capwrap_command_words
    __capwrap_shell; and return 1
    set -l rest (__capwrap_rest); or return 1
    if test "$rest[1]" = --
        set -e rest[1]
        printf '%s\n' $rest
        return 0
    end
    contains -- $rest[1] list show read export prune wait stop help; and return 1
    printf '%s\n' $rest
end

complete -c capwrap -f

# Flags, before the verb or command.
complete -c capwrap -n __capwrap_no_subject -l dir -r -a '(__fish_complete_directories)' -d 'tool-outputs directory'
complete -c capwrap -n __capwrap_no_subject -l keep -x -a 'auto always never' -d 'keep the capture'
complete -c capwrap -n __capwrap_no_subject -l tee -d 'stream the output live, then a summary'
complete -c capwrap -n __capwrap_no_subject -l preview -d 'print a bounded preview and the receipt'
complete -c capwrap -n __capwrap_no_subject -l quiet -d 'print only the receipt line'
complete -c capwrap -n __capwrap_no_subject -l receipt-file -r -F -d 'also write the receipt to this path'
complete -c capwrap -n __capwrap_no_subject -l events -r -F -d 'write live updates as JSON lines to this file, FIFO or fd:N'
complete -c capwrap -n __capwrap_no_subject -l background -d 'run the command as a background job'
complete -c capwrap -n __capwrap_no_subject -l background-after -x -d 'hand the command back as a job after this long'
complete -c capwrap -n __capwrap_no_subject -l timeout -x -d 'SIGTERM the command after this long'
complete -c capwrap -n __capwrap_no_subject -l kill-after -x -d 'then SIGKILL after this long'
complete -c capwrap -n __capwrap_no_subject -l drain-timeout -x -d 'wait for end of output after exit'
complete -c capwrap -n __capwrap_no_subject -l notice-after -x -d 'preview mode: name the capture if it still runs after this long'
complete -c capwrap -n __capwrap_no_subject -l stdout-chars -x -d 'preview budget for stdout'
complete -c capwrap -n __capwrap_no_subject -l stderr-chars -x -d 'preview budget for stderr'
complete -c capwrap -n __capwrap_no_subject -l preview-bytes -x -d 'ceiling on the whole preview'
complete -c capwrap -n __capwrap_no_subject -l max-capture-bytes -x -d 'bytes kept per capture'
complete -c capwrap -n __capwrap_no_subject -l dir-quota -x -d 'bytes kept by all captures'
complete -c capwrap -n __capwrap_no_subject -l queue-bytes -x -d 'write queue size'
complete -c capwrap -n __capwrap_no_subject -l stall-timeout -x -d 'stop persisting after no progress'
complete -c capwrap -n __capwrap_no_subject -l strict -d 'exit 125 when capwrap itself failed'
complete -c capwrap -n __capwrap_no_subject -l leave-descendants -d 'leave running the processes the command left behind'
complete -c capwrap -n __capwrap_no_subject -l no-redact -d 'write output unsanitized'
complete -c capwrap -n __capwrap_no_subject -l redact-env -x -a '(set -n)' -d 'also mask this variable'
complete -c capwrap -n __capwrap_no_subject -l redact-allow-env -x -a '(set -n)' -d 'do not mask this variable'
complete -c capwrap -n __capwrap_no_subject -l redact-file -r -F -d 'also mask the values in this file'
complete -c capwrap -n __capwrap_no_subject -l redact-pattern -x -d 'also mask matches of this regex'
complete -c capwrap -n __capwrap_no_subject -l no-label -d 'leave the command out of the receipt'
complete -c capwrap -n __capwrap_no_subject -l pty -x -a 'auto always never' -d 'give the command terminals'
complete -c capwrap -n __capwrap_no_subject -l color -x -a 'auto always never' -d 'colour the summary'
complete -c capwrap -n __capwrap_no_subject -s c -l command -x -d 'run this string with a POSIX shell'
complete -c capwrap -n __capwrap_no_subject -s h -l help -d 'show help'
complete -c capwrap -n __capwrap_no_subject -l version -d 'print the version'

# Verbs, or a command to run (after -c STRING: the shell's arguments, files).
complete -c capwrap -n __capwrap_shell -F
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a list -d 'list captures'
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a show -d 'print a capture'"'"'s receipt'
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a read -d 'read a capture'"'"'s stream'
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a export -d 'copy captures out'
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a prune -d 'delete captures'
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a wait -d 'wait for a background job'
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a stop -d 'stop a background job'
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a help -d 'help on a flag or verb'
complete -c capwrap -n 'not __capwrap_shell; and __capwrap_no_subject' -a '(__fish_complete_command)'

# The verbs' own flags and capture IDs. Every verb takes --help and --dir
# after its name; wait and stop the preview budgets too (verbGlobals in
# env.go).
for v in list show read export prune wait stop
    complete -c capwrap -n "__capwrap_verb $v" -s h -l help -d 'show the verb'"'"'s help'
    complete -c capwrap -n "__capwrap_verb $v" -l dir -r -a '(__fish_complete_directories)' -d 'tool-outputs directory'
end
for v in wait stop
    complete -c capwrap -n "__capwrap_verb $v" -l stdout-chars -x -d 'preview budget for stdout'
    complete -c capwrap -n "__capwrap_verb $v" -l stderr-chars -x -d 'preview budget for stderr'
    complete -c capwrap -n "__capwrap_verb $v" -l preview-bytes -x -d 'ceiling on the whole preview'
end
complete -c capwrap -n '__capwrap_verb list' -l json -d 'print JSON'
complete -c capwrap -n '__capwrap_verb list' -l running -d 'only captures whose command still runs'
complete -c capwrap -n '__capwrap_verb list' -l limit -x -d 'at most this many, the newest'
complete -c capwrap -n '__capwrap_verb show' -a '(__capwrap_ids)' -d capture
complete -c capwrap -n '__capwrap_verb read' -a '(__capwrap_ids)' -d capture
complete -c capwrap -n '__capwrap_verb export' -a '(__capwrap_ids)' -d capture
complete -c capwrap -n '__capwrap_verb export' -l to -r -F -d 'a new or empty directory, or FILE.tar.gz'
complete -c capwrap -n '__capwrap_verb read' -l stream -x -a 'stdout stderr' -d 'the stream'
complete -c capwrap -n '__capwrap_verb read' -l offset -x -d 'start at this byte'
complete -c capwrap -n '__capwrap_verb read' -l limit -x -d 'print at most this many bytes'
complete -c capwrap -n '__capwrap_verb read' -l lines -x -d 'line range A:B'
complete -c capwrap -n '__capwrap_verb read' -l grep -x -d 'only lines that match'
complete -c capwrap -n '__capwrap_verb read' -l max -x -d 'at most this many matches'
complete -c capwrap -n '__capwrap_verb read' -s C -l context -x -d 'with --grep: lines around each match'
complete -c capwrap -n '__capwrap_verb read' -s A -l after-context -x -d 'with --grep: lines after each match'
complete -c capwrap -n '__capwrap_verb read' -s B -l before-context -x -d 'with --grep: lines before each match'
complete -c capwrap -n '__capwrap_verb read' -l follow -d 'follow a running capture'
complete -c capwrap -n '__capwrap_verb read' -l timeout -x -d 'with --follow: stop waiting after this long'
complete -c capwrap -n '__capwrap_verb read' -l until -x -d 'with --follow: stop at a line matching this regex'
complete -c capwrap -n '__capwrap_verb read' -l interleaved -d 'both streams in order of arrival'
complete -c capwrap -n '__capwrap_verb read' -l new -d 'what this consumer has not read yet'
complete -c capwrap -n '__capwrap_verb read' -l cursor -x -d 'with --new: the consumer name'
complete -c capwrap -n '__capwrap_verb wait' -a '(__capwrap_ids)' -d capture
complete -c capwrap -n '__capwrap_verb wait' -l timeout -x -d 'hand a job back (exit 75) after this long'
complete -c capwrap -n '__capwrap_verb wait' -l notify -d 'report each job end once to this consumer'
complete -c capwrap -n '__capwrap_verb wait' -l cursor -x -d 'with --notify: the consumer name'
complete -c capwrap -n '__capwrap_verb wait' -l raise -d 're-raise the signal that ended the job, not exit 128+N'
complete -c capwrap -n '__capwrap_verb stop' -a '(__capwrap_ids)' -d capture
complete -c capwrap -n '__capwrap_verb stop' -l signal -x -a 'TERM INT HUP QUIT KILL USR1 USR2' -d 'the signal to send first'
complete -c capwrap -n '__capwrap_verb stop' -l kill-after -x -d 'then SIGKILL after this long (default: the job own)'
complete -c capwrap -n '__capwrap_verb stop' -l raise -d 're-raise the signal that ended the job, not exit 0'
complete -c capwrap -n '__capwrap_verb prune' -l older-than -x -d 'captures older than this'
complete -c capwrap -n '__capwrap_verb prune' -l keep-last -x -d 'keep the N newest captures'
complete -c capwrap -n '__capwrap_verb prune' -l id -x -a '(__capwrap_ids)' -d 'this capture'
complete -c capwrap -n '__capwrap_verb prune' -l dry-run -d 'delete nothing'
complete -c capwrap -n '__capwrap_verb help' -a 'flags env list show read export prune wait stop dir keep tee preview quiet receipt-file events background background-after timeout kill-after drain-timeout notice-after stdout-chars stderr-chars preview-bytes max-capture-bytes dir-quota queue-bytes stall-timeout strict leave-descendants no-redact redact-env redact-allow-env redact-file redact-pattern no-label pty color command version'

# After "--" or the command word: the wrapped command's own completion.
complete -c capwrap -n '__capwrap_command_words >/dev/null' -a '(__fish_complete_subcommand --commandline (string join " " -- (__capwrap_command_words) (commandline -ct)))'
