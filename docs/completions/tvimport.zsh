#compdef tvimport

__tvimport_complete() {
    local -ar non_empty_completions=("${@:#(|:*)}")
    local -ar empty_completions=("${(M)@:#(|:*)}")
    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''
}

__tvimport_custom_complete() {
    local -a completions
    completions=("${(@f)"$("${command_name}" "${@}" "${command_line[@]}")"}")
    if [[ "${#completions[@]}" -gt 1 ]]; then
        __tvimport_complete "${completions[@]:0:-1}"
    fi
}

__tvimport_cursor_index_in_current_word() {
    if [[ -z "${QIPREFIX}${IPREFIX}${PREFIX}" ]]; then
        printf 0
    else
        printf %s "${#${(z)LBUFFER}[-1]}"
    fi
}

_tvimport() {
    emulate -RL zsh -G
    setopt extendedglob nullglob numericglobsort
    unsetopt aliases banghist

    local -xr SAP_SHELL=zsh
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(builtin emulate zsh -c 'printf %s "${ZSH_VERSION}"')"
    local -r SAP_SHELL_VERSION

    local context state state_descr line
    local -A opt_args

    local -r command_name="${words[1]}"
    local -ar command_line=("${words[@]}")
    local -ir current_word_index="$((CURRENT - 1))"

    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'run:The nightly job: fetch, parse, merge, export, report (the default command).'
            'import:Merge XMLTV files (plain or gzip) or URLs into the database as one source.'
            'export:(Re)write the iCalendar feeds and index.html, and/or the guide as one XMLTV file.'
            'channels:List every channel per source: display names, programmes, canonical id, winning source.'
            'publish:Upload what changed in the feeds to the config'\''s object store (publish.s3).'
            'edit:Set attributes of a stored object (local edits survive imports unless whitelisted).'
            'status:Show what is stored and the last runs.'
            'model:Print the merged entity model: entities, keys, whitelists, delete rules and modules.'
            'apply:Apply a change file (from changes/ of another database) to this database.'
            'undo:Revert this database'\''s newest change (an import, a run or an edit) by applying the inverse of its change file.'
            'changes:Print a change file as RFC 6902 JSON Patch.'
            'serve:Serve the feeds, the guide and the model'\''s pages over HTTP (127.0.0.1:8080).'
            'help:Show subcommand help information.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        run|import|export|channels|publish|edit|status|model|apply|undo|changes|serve|help)
            "_tvimport_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_tvimport_run() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar ___log_format=('text' 'json')
    local -ar arg_specs=(
        '--config[The configuration file (JSON).]:config:'
        '--dry-run[Do everything up to the commit, print what would change, change nothing.]'
        '--format[Report format.]:format:{__tvimport_complete "${___format[@]}"}'
        '--force[Ignore HTTP validators and the safety guard.]'
        '--quiet[Print nothing on success; a failure is one line on stderr.]'
        '--verbose[List every change and every warning with its file and line.]'
        '--wait[Wait for another run to finish instead of exiting 75.]'
        '--log-format[Log lines on stderr as text or JSON (for containers).]:log-format:{__tvimport_complete "${___log_format[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_import() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar arg_specs=(
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--source[The source name (default\: default).]:source:'
        '--priority[The source'\''s priority where sources overlap (higher wins; remembered; default 0).]:priority:'
        '--config[The configuration file (JSON)\: its database, outputs, modules, aliases and whitelists apply.]:config:'
        '--dry-run[Do everything up to the commit, print what would change, change nothing.]'
        '--format[Report format.]:format:{__tvimport_complete "${___format[@]}"}'
        '--force[Ignore HTTP validators and the safety guard.]'
        '--quiet[Print nothing on success; a failure is one line on stderr.]'
        '--verbose[List every change and every warning with its file and line.]'
        '--change-file[Write a change file of this import (for apply and undo).]'
        '--no-change-file[Write a change file of this import (for apply and undo).]'
        '--patch-file[Also write the change file as JSON Patch (changes/<run-id>.patch.json).]'
        '*:files:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_export() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--out[The output directory (default\: the config'\''s output, else ./feeds).]:out:'
        '--xmltv[The XMLTV file to write (gzip when it ends in .gz).]:xmltv:'
        '--playlist[With --xmltv\: write only this M3U playlist'\''s channels, in its order, under its tvg-ids.]:playlist:'
        '--config[A config file for filtered feeds, base URL and windows.]:config:'
        '--past-hours[How many hours of the past the feeds keep (default\: the config'\''s, else 24).]:past-hours:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_channels() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar arg_specs=(
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--config[The configuration file (JSON)\: its database, outputs, modules, aliases and whitelists apply.]:config:'
        '--source[Only this source'\''s channels.]:source:'
        '--unmapped[Suggest aliases for channels that look like another source'\''s.]'
        '--playlist[Show how each entry of this M3U playlist matches the guide'\''s channels.]:playlist:'
        '--format[Output format.]:format:{__tvimport_complete "${___format[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_publish() {
    local -i ret=1
    local -ar ___log_format=('text' 'json')
    local -ar arg_specs=(
        '--config[The configuration file (JSON) with publish.s3.]:config:'
        '--verify[List the bucket and repair any difference with the local feeds.]'
        '--dry-run[Print what would be uploaded and deleted; touch nothing, remote included.]'
        '--log-format[Log lines on stderr as text or JSON (for containers).]:log-format:{__tvimport_complete "${___log_format[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_edit() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--config[The configuration file (JSON)\: its database, outputs, modules, aliases and whitelists apply.]:config:'
        '*--unset[An attribute to clear (repeatable).]:unset:'
        '--force[Also set attributes that the next import overwrites.]'
        ':entity:'
        ':id:'
        '*:assignments:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_status() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar arg_specs=(
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--config[The configuration file (JSON)\: its database, outputs, modules, aliases and whitelists apply.]:config:'
        '--format[Report format.]:format:{__tvimport_complete "${___format[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_model() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar arg_specs=(
        '--config[A config file whose modules are added to the built-in ones.]:config:'
        '--format[Output format.]:format:{__tvimport_complete "${___format[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_apply() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--config[The configuration file (JSON)\: its database, outputs, modules, aliases and whitelists apply.]:config:'
        '--dry-run[Report what would be applied; change nothing.]'
        ':file:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_undo() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--config[The configuration file (JSON)\: its database, outputs, modules, aliases and whitelists apply.]:config:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_changes() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--config[The configuration file (JSON)\: its database, outputs, modules, aliases and whitelists apply.]:config:'
        '--changes[The folder of change files (default\: the config'\''s, else changes/ beside the database).]:changes:'
        '--patch[The run whose change file to print as JSON Patch.]:patch:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_serve() {
    local -i ret=1
    local -ar arg_specs=(
        '--config[The configuration file (JSON)\: database, feed directory, refresh interval, modules, serve key.]:config:'
        '--db[The SQLite database (default\: the config'\''s database, else $TVIMPORT_DB, else ./tvimport.sqlite).]:db:'
        '--feeds[The feed directory (default\: the config'\''s output, else $TVIMPORT_OUTPUT, else ./feeds).]:feeds:'
        '--host[The address to bind (default\: 127.0.0.1).]:host:'
        '--port[The port (default\: 8080).]:port:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_tvimport_help() {
    local -i ret=1
    local -ar arg_specs=(
        '*:subcommands:'
        '--version[Show the version.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

if [[ "${funcstack[1]}" = _tvimport ]]; then
    _tvimport "${@}"
else
    compdef _tvimport tvimport
fi
