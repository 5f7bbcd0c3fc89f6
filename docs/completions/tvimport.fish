function __tvimport_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __tvimport_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __tvimport_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __tvimport_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __tvimport_parse_tokens -S
    set -l unparsed_tokens (__tvimport_tokens -pc)
    switch $unparsed_tokens[1]
    case 'tvimport'
        __tvimport_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'run'
            __tvimport_parse_subcommand 0 'config=' 'dry-run' 'format=' 'force' 'quiet' 'verbose' 'wait' 'log-format=' 'version' 'h/help'
        case 'import'
            __tvimport_parse_subcommand -r 1 'db=' 'source=' 'priority=' 'config=' 'dry-run' 'format=' 'force' 'quiet' 'verbose' 'change-file' 'no-change-file' 'patch-file' 'version' 'h/help'
        case 'export'
            __tvimport_parse_subcommand 0 'db=' 'out=' 'xmltv=' 'playlist=' 'config=' 'past-hours=' 'version' 'h/help'
        case 'channels'
            __tvimport_parse_subcommand 0 'db=' 'config=' 'source=' 'unmapped' 'playlist=' 'format=' 'version' 'h/help'
        case 'publish'
            __tvimport_parse_subcommand 0 'config=' 'verify' 'dry-run' 'log-format=' 'version' 'h/help'
        case 'edit'
            __tvimport_parse_subcommand -r 3 'db=' 'config=' 'unset=+' 'force' 'version' 'h/help'
        case 'status'
            __tvimport_parse_subcommand 0 'db=' 'config=' 'format=' 'version' 'h/help'
        case 'model'
            __tvimport_parse_subcommand 0 'config=' 'format=' 'version' 'h/help'
        case 'apply'
            __tvimport_parse_subcommand 1 'db=' 'config=' 'dry-run' 'version' 'h/help'
        case 'undo'
            __tvimport_parse_subcommand 0 'db=' 'config=' 'version' 'h/help'
        case 'changes'
            __tvimport_parse_subcommand 0 'db=' 'config=' 'changes=' 'patch=' 'version' 'h/help'
        case 'serve'
            __tvimport_parse_subcommand 0 'config=' 'db=' 'feeds=' 'host=' 'port=' 'version' 'h/help'
        case 'help'
            __tvimport_parse_subcommand -r 1 'version'
        end
    end
end

function __tvimport_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __tvimport_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __tvimport_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __tvimport_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__tvimport_tokens -p)
    if test -z "$(__tvimport_tokens -t)"
        set -l index (count (__tvimport_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'tvimport' -f
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'run' -d 'The nightly job: fetch, parse, merge, export, report (the default command).'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'import' -d 'Merge XMLTV files (plain or gzip) or URLs into the database as one source.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'export' -d '(Re)write the iCalendar feeds and index.html, and/or the guide as one XMLTV file.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'channels' -d 'List every channel per source: display names, programmes, canonical id, winning source.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'publish' -d 'Upload what changed in the feeds to the config\'s object store (publish.s3).'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'edit' -d 'Set attributes of a stored object (local edits survive imports unless whitelisted).'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'status' -d 'Show what is stored and the last runs.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'model' -d 'Print the merged entity model: entities, keys, whitelists, delete rules and modules.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'apply' -d 'Apply a change file (from changes/ of another database) to this database.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'undo' -d 'Revert this database\'s newest change (an import, a run or an edit) by applying the inverse of its change file.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'changes' -d 'Print a change file as RFC 6902 JSON Patch.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'serve' -d 'Serve the feeds, the guide and the model\'s pages over HTTP (127.0.0.1:8080).'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_positional "tvimport" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" config' -l 'config' -d 'The configuration file (JSON).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" dry-run' -l 'dry-run' -d 'Do everything up to the commit, print what would change, change nothing.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" format' -l 'format' -d 'Report format.' -rfka 'text json'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" force' -l 'force' -d 'Ignore HTTP validators and the safety guard.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" quiet' -l 'quiet' -d 'Print nothing on success; a failure is one line on stderr.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" verbose' -l 'verbose' -d 'List every change and every warning with its file and line.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" wait' -l 'wait' -d 'Wait for another run to finish instead of exiting 75.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" log-format' -l 'log-format' -d 'Log lines on stderr as text or JSON (for containers).' -rfka 'text json'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport run" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" source' -l 'source' -d 'The source name (default: default).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" priority' -l 'priority' -d 'The source\'s priority where sources overlap (higher wins; remembered; default 0).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" config' -l 'config' -d 'The configuration file (JSON): its database, outputs, modules, aliases and whitelists apply.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" dry-run' -l 'dry-run' -d 'Do everything up to the commit, print what would change, change nothing.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" format' -l 'format' -d 'Report format.' -rfka 'text json'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" force' -l 'force' -d 'Ignore HTTP validators and the safety guard.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" quiet' -l 'quiet' -d 'Print nothing on success; a failure is one line on stderr.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" verbose' -l 'verbose' -d 'List every change and every warning with its file and line.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" change-file' -l 'change-file' -d 'Write a change file of this import (for apply and undo).'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" no-change-file' -l 'no-change-file' -d 'Write a change file of this import (for apply and undo).'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" patch-file' -l 'patch-file' -d 'Also write the change file as JSON Patch (changes/<run-id>.patch.json).'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport import" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport export" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport export" out' -l 'out' -d 'The output directory (default: the config\'s output, else ./feeds).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport export" xmltv' -l 'xmltv' -d 'The XMLTV file to write (gzip when it ends in .gz).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport export" playlist' -l 'playlist' -d 'With --xmltv: write only this M3U playlist\'s channels, in its order, under its tvg-ids.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport export" config' -l 'config' -d 'A config file for filtered feeds, base URL and windows.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport export" past-hours' -l 'past-hours' -d 'How many hours of the past the feeds keep (default: the config\'s, else 24).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport export" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport export" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport channels" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport channels" config' -l 'config' -d 'The configuration file (JSON): its database, outputs, modules, aliases and whitelists apply.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport channels" source' -l 'source' -d 'Only this source\'s channels.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport channels" unmapped' -l 'unmapped' -d 'Suggest aliases for channels that look like another source\'s.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport channels" playlist' -l 'playlist' -d 'Show how each entry of this M3U playlist matches the guide\'s channels.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport channels" format' -l 'format' -d 'Output format.' -rfka 'text json'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport channels" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport channels" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport publish" config' -l 'config' -d 'The configuration file (JSON) with publish.s3.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport publish" verify' -l 'verify' -d 'List the bucket and repair any difference with the local feeds.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport publish" dry-run' -l 'dry-run' -d 'Print what would be uploaded and deleted; touch nothing, remote included.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport publish" log-format' -l 'log-format' -d 'Log lines on stderr as text or JSON (for containers).' -rfka 'text json'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport publish" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport publish" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport edit" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport edit" config' -l 'config' -d 'The configuration file (JSON): its database, outputs, modules, aliases and whitelists apply.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport edit"' -l 'unset' -d 'An attribute to clear (repeatable).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport edit" force' -l 'force' -d 'Also set attributes that the next import overwrites.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport edit" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport edit" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport status" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport status" config' -l 'config' -d 'The configuration file (JSON): its database, outputs, modules, aliases and whitelists apply.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport status" format' -l 'format' -d 'Report format.' -rfka 'text json'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport status" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport model" config' -l 'config' -d 'A config file whose modules are added to the built-in ones.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport model" format' -l 'format' -d 'Output format.' -rfka 'text json'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport model" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport model" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport apply" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport apply" config' -l 'config' -d 'The configuration file (JSON): its database, outputs, modules, aliases and whitelists apply.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport apply" dry-run' -l 'dry-run' -d 'Report what would be applied; change nothing.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport apply" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport apply" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport undo" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport undo" config' -l 'config' -d 'The configuration file (JSON): its database, outputs, modules, aliases and whitelists apply.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport undo" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport undo" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport changes" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport changes" config' -l 'config' -d 'The configuration file (JSON): its database, outputs, modules, aliases and whitelists apply.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport changes" changes' -l 'changes' -d 'The folder of change files (default: the config\'s, else changes/ beside the database).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport changes" patch' -l 'patch' -d 'The run whose change file to print as JSON Patch.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport changes" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport changes" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport serve" config' -l 'config' -d 'The configuration file (JSON): database, feed directory, refresh interval, modules, serve key.' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport serve" db' -l 'db' -d 'The SQLite database (default: the config\'s database, else $TVIMPORT_DB, else ./tvimport.sqlite).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport serve" feeds' -l 'feeds' -d 'The feed directory (default: the config\'s output, else $TVIMPORT_OUTPUT, else ./feeds).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport serve" host' -l 'host' -d 'The address to bind (default: 127.0.0.1).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport serve" port' -l 'port' -d 'The port (default: 8080).' -rfka ''
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport serve" version' -l 'version' -d 'Show the version.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport serve" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tvimport' -n '__tvimport_should_offer_completions_for_flags_or_options "tvimport help" version' -l 'version' -d 'Show the version.'
