# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_headroom_global_optspecs
    string join \n json config= q/quiet color= h/help V/version
end

function __fish_headroom_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_headroom_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_headroom_using_subcommand
    set -l cmd (__fish_headroom_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c headroom -n "__fish_headroom_needs_command" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_needs_command" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_needs_command" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_needs_command" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_needs_command" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_needs_command" -s V -l version -d 'Print version'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "probe" -d 'One reading of the current user\'s process slots: usage, level, binding limit, ETA'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "limits" -d 'Every process-slot ceiling: value, where it was read, whether it binds'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "snapshot" -d 'Record the process table, the ceilings and memory totals as JSON'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "reap" -d 'Kill zombie-leaking parents safely and verify their slots came back'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "evidence" -d 'Summarise the evidence log (peaks, lowest free slots, ETA minima, cleanups) and chart it'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "idle-watch" -d 'Audit the liveness guard: poll and show how each parent would be judged. Never signals'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "log-probe" -d 'Show what the session-log reader makes of one log directory, file by file'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "run" -d 'Run a command with a memory limit on its whole process tree'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "top" -d 'One row per process tree you own, largest footprint first'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "park" -d 'Stop one process (SIGSTOP) so its memory can be reclaimed'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "wake" -d 'Continue one stopped process (SIGCONT)'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "park-tree" -d 'Stop a whole process tree, root first'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "wake-tree" -d 'Continue a whole process tree, leaves first'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "calibrate" -d 'Sample memory use and suggest a `run --limit`'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "hangs" -d 'Detect and recover apps that macOS marks "not responding"'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "login-item" -d 'Start headroom watch at login: register, status, unregister'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "watch" -d 'The long-lived guard: probe, reap, hangs and memory guards on a loop'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "config" -d 'Print the effective settings and where each came from'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "doctor" -d 'Check headroom\'s readings against the system\'s own tools (a diagnostic)'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "schema" -d 'Print the JSON Schema of an output (`--json`), or list them'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "mcp" -d 'Serve the toolbox to a coding agent: a Model Context Protocol server on stdio'
complete -c headroom -n "__fish_headroom_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l snapshot -d 'Read a recorded snapshot (`headroom snapshot -o FILE`; `-` reads standard input) instead of the live machine' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l warn -d 'Warning threshold, percent of the effective limit (inclusive) [default: 50]' -r
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l crit -d 'Critical threshold, percent of the effective limit (inclusive) [default: 75]' -r
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l format -d 'Output format (`--json` is the same as `--format json`; with another format it is a usage error, exit 64, as clap\'s conflicting flags are)' -r -f -a "human\t''
json\t''
prometheus\t'node_exporter textfile format'
swiftbar\t'A SwiftBar plugin\'s output: the menu-bar figure, then its menu'
xbar\t'The same for xbar, in the parameters it knows (colour from `XBARDarkMode`)'
tmux\t'One line of tmux styles for `status-right`: `#(headroom probe --format tmux)`'"
complete -c headroom -n "__fish_headroom_using_subcommand probe" -s o -l output -d 'Write the output to FILE atomically instead of stdout (for the node_exporter textfile collector)' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l record -d 'Also record the snapshot this reading was computed from, for a bug report or replay' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l no-history -d 'Neither read nor write the reading history (no trend, no ETA)'
complete -c headroom -n "__fish_headroom_using_subcommand probe" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand probe" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand probe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c headroom -n "__fish_headroom_using_subcommand limits" -l snapshot -d 'Read a recorded snapshot (`headroom snapshot -o FILE`; `-` reads standard input) instead of the live machine' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand limits" -l warn -d 'Warning threshold, percent of the effective limit (inclusive) [default: 50]' -r
complete -c headroom -n "__fish_headroom_using_subcommand limits" -l crit -d 'Critical threshold, percent of the effective limit (inclusive) [default: 75]' -r
complete -c headroom -n "__fish_headroom_using_subcommand limits" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand limits" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand limits" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand limits" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand limits" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand snapshot" -s o -l output -d 'Write to FILE (atomically) instead of stdout' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand snapshot" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand snapshot" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand snapshot" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand snapshot" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand snapshot" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l snapshot -d 'Read a recorded snapshot (`headroom snapshot -o FILE`; `-` reads standard input) instead of the live machine' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l allow -d 'Allow pattern (repeatable; plain case-insensitive substring; with `/` it matches the full path, else the name or the executable\'s file name); replaces the configured allowlist [default: agency]' -r
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l deny -d 'Deny pattern (repeatable; matches name and full path; always wins); added to the configured denylist, never replacing it' -r
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l min-zombies -d 'Zombies a parent must hold to be a candidate [default: 100]' -r
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l grace -d 'Wait between SIGTERM and SIGKILL, 100ms to 60s [default: 2s]' -r
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l max-targets -d 'Most parents terminated in one run [default: 10]' -r
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l idle-threshold -d 'A session idle this long counts as finished [default: 2h]' -r
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand reap" -s n -l dry-run -d 'Show the decision table and stop: signal nothing'
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l no-emergency -d 'Never relax the session guard, even at the wall'
complete -c headroom -n "__fish_headroom_using_subcommand reap" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand reap" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand reap" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l since -d 'Only rows from the last DUR' -r
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l width -d 'Chart width in columns [default: the terminal\'s, else $COLUMNS, else 80]' -r
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l svg -d 'Also write the chart as a self-contained SVG to FILE (`-`: standard output, which then carries the SVG alone). A regular file (or a new one) is replaced atomically; a device, a FIFO or `/dev/stdout` is opened and written, and stays what it is. A symbolic link is written through when it is yours or root\'s, refused otherwise' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l tz -d 'The clock the chart\'s times are in: `utc`, or `local` (the offset is shown)' -r -f -a "utc\t''
local\t''"
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l chart -d 'Draw used slots against the limit before the summary (the default on a terminal; this flag draws it when piped too)'
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l ascii -d 'Draw the chart in plain ASCII (the default under TERM=dumb)'
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand evidence" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -l snapshot -d 'Read a recorded snapshot (`headroom snapshot -o FILE`; `-` reads standard input) instead of the live machine' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -s d -l duration -d 'How long to watch' -r
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -l threshold -d 'Idle threshold to judge against (deliberately short: this mode is watched, not waited out)' -r
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -s i -l interval -d 'Poll interval (alias --every)' -r
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand idle-watch" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand log-probe" -l at -d 'Judge as of this past instant (RFC 3339 with any offset, like `2026-08-29T09:21:47Z` or `2026-08-29T11:21:47+02:00`); lines stamped after it are ignored, to replay an archived directory' -r
complete -c headroom -n "__fish_headroom_using_subcommand log-probe" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand log-probe" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand log-probe" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand log-probe" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand log-probe" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand run" -s l -l limit -d 'Memory limit for the whole tree: MiB, or with a unit (512M, 2G)' -r
complete -c headroom -n "__fish_headroom_using_subcommand run" -s i -l interval -d 'Poll interval' -r
complete -c headroom -n "__fish_headroom_using_subcommand run" -l grace -d 'Wait between SIGTERM and SIGKILL' -r
complete -c headroom -n "__fish_headroom_using_subcommand run" -l enforce -d 'Who holds the limit: the kernel (a cgroup with memory.max, Linux), polling, or the kernel where it can and polling where not' -r -f -a "auto\t'The kernel where headroom may make a cgroup with the memory controller, else polling'
kernel\t'The kernel, or refuse to run (exit 125) saying why it cannot'
poll\t'headroom\'s polling watchdog only'"
complete -c headroom -n "__fish_headroom_using_subcommand run" -l warn -d 'Warn once when the tree reaches this percentage of the limit (again only after it dropped 5 points below); 100 turns it off [default: [memory] warn_pct, else 90]' -r
complete -c headroom -n "__fish_headroom_using_subcommand run" -l timeout -d 'End the tree once this long has passed (SIGTERM, --grace, SIGKILL), like `90s` or `2h`' -r
complete -c headroom -n "__fish_headroom_using_subcommand run" -l records-fd -d 'Write headroom\'s own lines (the records with --json) to this inherited file descriptor, open for writing, instead of stderr: stdout and stderr are then the command\'s alone. The command does not inherit it' -r
complete -c headroom -n "__fish_headroom_using_subcommand run" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand run" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand run" -l die-with-parent -d 'End the tree when the process that started headroom exits'
complete -c headroom -n "__fish_headroom_using_subcommand run" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand run" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c headroom -n "__fish_headroom_using_subcommand top" -l snapshot -d 'Read a recorded snapshot (`headroom snapshot -o FILE`; `-` reads standard input) instead of the live machine' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand top" -l pid -d 'Only the tree rooted at PID' -r
complete -c headroom -n "__fish_headroom_using_subcommand top" -l park-min-mb -d 'Footprint from which an idle tree is a park candidate, MiB' -r
complete -c headroom -n "__fish_headroom_using_subcommand top" -s i -l interval -d 'Time between refreshes with --watch [default: 2s]' -r
complete -c headroom -n "__fish_headroom_using_subcommand top" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand top" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand top" -l watch -d 'Keep refreshing until SIGINT or SIGTERM: a live view on a terminal, one table a round when piped, JSON Lines with --json'
complete -c headroom -n "__fish_headroom_using_subcommand top" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand top" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand top" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand park" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand park" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand park" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand park" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand park" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand wake" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand wake" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand wake" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand wake" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand wake" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand park-tree" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand park-tree" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand park-tree" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand park-tree" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand park-tree" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand wake-tree" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand wake-tree" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand wake-tree" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand wake-tree" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand wake-tree" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand calibrate" -s d -l duration -d 'How long to sample' -r
complete -c headroom -n "__fish_headroom_using_subcommand calibrate" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand calibrate" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand calibrate" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand calibrate" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand calibrate" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -s i -l interval -d 'Interval between rounds with --watch (1s to 10m; alias --every) [default: 15s]' -r
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -l since -d 'With --events: only the last DUR' -r
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -l observations -d 'Drive the monitor from recorded rounds instead of the live system (any OS; `-` reads standard input)' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -s n -l dry-run -d 'Decide, but act on nothing: no signal, no restart, no notification, no state or event written'
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -l watch -d 'Keep running check rounds (JSON Lines with --json) until SIGINT or SIGTERM'
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -l events -d 'List the event history (detected, restarted, restart-failed, blocked) instead of checking'
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -l record-events -d 'With --observations: append the replay\'s events to the event history (by default a replay writes nothing, so running it twice does not duplicate history)'
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand hangs" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand login-item" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand login-item" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand login-item" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand login-item" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand login-item" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l snapshot -d 'Read a recorded snapshot (`headroom snapshot -o FILE`; `-` reads standard input) instead of the live machine' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l warn -d 'Warning threshold, percent of the effective limit (inclusive) [default: 50]' -r
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l crit -d 'Critical threshold, percent of the effective limit (inclusive) [default: 75]' -r
complete -c headroom -n "__fish_headroom_using_subcommand watch" -s i -l interval -d 'Time between rounds [default: 60s]' -r
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l table-every -d 'Read the whole process table at least this often [default: 4m]. Between such rounds, while every task on the machine together is below 80 % of the warning threshold of the effective limit (so the user\'s own slots are too), a round reads only that count and the ceilings, and prints and records nothing; every round reads the table once the count nears the threshold, while a reading is above normal, and with memory guards. `0s`: every round reads the table' -r
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l once -d 'Run one round and exit with probe\'s exit code (memory guards do not park in it: the exit would wake them at once; a tree over its guard goes straight to SIGTERM)'
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l no-auto-reap -d 'Never reap automatically. (The automatic cleanup runs beside the rounds: readings and memory guards go on while its escalation waits out the grace.)'
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l no-hangs -d 'Skip the hangs round'
complete -c headroom -n "__fish_headroom_using_subcommand watch" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand watch" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand watch" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand config" -l warn -d 'Warning threshold, percent of the effective limit (inclusive) [default: 50]' -r
complete -c headroom -n "__fish_headroom_using_subcommand config" -l crit -d 'Critical threshold, percent of the effective limit (inclusive) [default: 75]' -r
complete -c headroom -n "__fish_headroom_using_subcommand config" -s i -l interval -d 'As for `watch --interval`' -r
complete -c headroom -n "__fish_headroom_using_subcommand config" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand config" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand config" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand config" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand config" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand doctor" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand doctor" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand doctor" -l no-exec -d 'Start no process: skip the checks that ask another tool (`ps`, a login shell\'s `ulimit -u`, `sysctl`, `launchctl`, `systemctl`, the notification helper) or burn CPU in a child'
complete -c headroom -n "__fish_headroom_using_subcommand doctor" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand doctor" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand schema" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand schema" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand schema" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand schema" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand schema" -s h -l help -d 'Print help'
complete -c headroom -n "__fish_headroom_using_subcommand mcp" -l tools -d 'The groups of tools to offer, comma-separated [default: `[mcp] tools`, else read,act,run]' -r -f -a "read\t'The tools that read: probe, limits, top, evidence, log_probe, hangs_events, hangs_check (macOS in a GUI session), doctor, explain_reap'
act\t'The tools that signal processes under the safety rules: reap, park, wake, park_tree, wake_tree'
run\t'run_limited and its task form (run_start, run_status, run_terminate, run_list): start any program the user could (within `[mcp] run_allow`)'"
complete -c headroom -n "__fish_headroom_using_subcommand mcp" -l config -d 'Read settings from FILE instead of the default config file' -r -F
complete -c headroom -n "__fish_headroom_using_subcommand mcp" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c headroom -n "__fish_headroom_using_subcommand mcp" -l read-only -d 'Offer only the read tools (`--tools read`): nothing the agent calls can signal or start a process'
complete -c headroom -n "__fish_headroom_using_subcommand mcp" -l json -d 'Print JSON: one object for one-shot commands, JSON Lines for streaming ones'
complete -c headroom -n "__fish_headroom_using_subcommand mcp" -s q -l quiet -d 'Print nothing on stdout but what was asked for in a machine format; keep the exit code'
complete -c headroom -n "__fish_headroom_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "probe" -d 'One reading of the current user\'s process slots: usage, level, binding limit, ETA'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "limits" -d 'Every process-slot ceiling: value, where it was read, whether it binds'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "snapshot" -d 'Record the process table, the ceilings and memory totals as JSON'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "reap" -d 'Kill zombie-leaking parents safely and verify their slots came back'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "evidence" -d 'Summarise the evidence log (peaks, lowest free slots, ETA minima, cleanups) and chart it'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "idle-watch" -d 'Audit the liveness guard: poll and show how each parent would be judged. Never signals'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "log-probe" -d 'Show what the session-log reader makes of one log directory, file by file'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "run" -d 'Run a command with a memory limit on its whole process tree'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "top" -d 'One row per process tree you own, largest footprint first'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "park" -d 'Stop one process (SIGSTOP) so its memory can be reclaimed'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "wake" -d 'Continue one stopped process (SIGCONT)'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "park-tree" -d 'Stop a whole process tree, root first'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "wake-tree" -d 'Continue a whole process tree, leaves first'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "calibrate" -d 'Sample memory use and suggest a `run --limit`'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "hangs" -d 'Detect and recover apps that macOS marks "not responding"'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "login-item" -d 'Start headroom watch at login: register, status, unregister'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "watch" -d 'The long-lived guard: probe, reap, hangs and memory guards on a loop'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "config" -d 'Print the effective settings and where each came from'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "doctor" -d 'Check headroom\'s readings against the system\'s own tools (a diagnostic)'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "schema" -d 'Print the JSON Schema of an output (`--json`), or list them'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "mcp" -d 'Serve the toolbox to a coding agent: a Model Context Protocol server on stdio'
complete -c headroom -n "__fish_headroom_using_subcommand help; and not __fish_seen_subcommand_from probe limits snapshot reap evidence idle-watch log-probe run top park wake park-tree wake-tree calibrate hangs login-item watch config doctor schema mcp help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
